//! `tether-sweep swingup`: GA design of the winch trajectory (SPEC §7), with
//! the exhaustive landscape on request.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use super::{EngineArgs, Interrupted, UsageError, claim_output, interrupt_flag, usage};
use tether_sweep::ga::evaluate::{Engine, Landscape};
use tether_sweep::ga::{
    self, Evaluation, Evaluator, GaRun, GaSettings, GeneCoding, SwingupProblem,
};
use tether_sweep::gpu::Precision;
use tether_sweep::io::PendingFile;
use tether_sweep::io::swingup::{write_generations, write_landscape, write_motion};
use tether_sweep::io::track::{track_batch, write_batch};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::winch::WinchMotion;
use tether_sweep::scenario::{
    RunStatus, SWINGUP_TIP_MASS_KG, Scenario, ScenarioKind, SimulationOutput, SolverSettings,
    simulate,
};
use tether_sweep::solver::{ReferenceOptions, SolverKind};

#[derive(Debug, Args)]
pub struct SwingupArgs {
    /// Number of ANCF elements n (1..=1024; ≤ 128 on the GPU).
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub elements: usize,
    /// Kelvin–Voigt damping D [Pa·s], ≥ 0 (the identified value).
    #[arg(long, value_name = "D", default_value_t = 2000.0)]
    pub damping: f64,
    /// Drag coefficient C_D, ≥ 0 (the identified value).
    #[arg(long, value_name = "CD", default_value_t = 0.8)]
    pub drag_coefficient: f64,
    /// Tip mass [kg], ≥ 0.
    #[arg(long, value_name = "KG", default_value_t = SWINGUP_TIP_MASS_KG)]
    pub tip_mass: f64,
    /// Winch amplitude A [m]: waypoints 0, −A, +A, 0.
    #[arg(long, value_name = "M", default_value_t = 0.2)]
    pub winch_amplitude: f64,
    /// Winch waypoints w0,w1,w2,w3 [m] (overrides --winch-amplitude).
    #[arg(long, value_name = "W0,W1,W2,W3", value_delimiter = ',')]
    pub waypoints: Option<Vec<f64>>,
    /// Simulated horizon [s] over which J_a is minimised; a multiple of 0.04 s.
    #[arg(long, value_name = "S", default_value_t = 3.0)]
    pub duration: f64,
    /// Bits per gene b (1..=10): T_i = T_min + (T_max − T_min) x_i/(2^b − 1).
    #[arg(long, value_name = "B", default_value_t = 5)]
    pub bits_per_gene: u32,
    /// Shortest winch move T_min [s], in [0.01, 100].
    #[arg(long, value_name = "S", default_value_t = 0.25)]
    pub period_min: f64,
    /// Longest winch move T_max [s], in [0.01, 100] and > T_min.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub period_max: f64,
    /// Individuals per generation, ≥ 2.
    #[arg(long, value_name = "P", default_value_t = 10)]
    pub population: usize,
    /// Generations, ≥ 1 (generation 0 is the random start).
    #[arg(long, value_name = "G", default_value_t = 30)]
    pub generations: usize,
    /// Seed of the GA's generator (ChaCha8): same seed, same run.
    #[arg(long, default_value_t = 2010)]
    pub seed: u64,
    /// Individuals per selection tournament, ≥ 1.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub tournament_size: usize,
    /// Probability of one-point crossover, in [0, 1].
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    pub crossover_rate: f64,
    /// Per-bit mutation probability, in [0, 1]. [default: 1/bits]
    #[arg(long, value_name = "P")]
    pub mutation_rate: Option<f64>,
    /// Also score every chromosome (2^(3b)) and rank the GA's answer.
    #[arg(long)]
    pub exhaustive: bool,
    /// Solver. On the CPU the reference solver is the faster one here at
    /// n = 40 (its step is not limited by D·n²); the GPU runs `explicit` or
    /// `semi-implicit` (`reference` there is refused).
    /// [default: reference on the CPU, semi-implicit on the GPU]
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
    /// Reference solver's local error tolerance [m], in (0, 1e-3]. 1e-7 m
    /// moves J_a,min by 1e-6 m against 1e-9 m at the defaults, 3.5× faster.
    #[arg(long, value_name = "M", default_value_t = 1e-7)]
    pub tolerance: f64,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output directory: generations.parquet, landscape.parquet (with
    /// --exhaustive), best_track.parquet, best_motion.parquet and figures.
    #[arg(long, value_name = "DIR", default_value = "swingup-results")]
    pub out: PathBuf,
    /// Replace the results of an earlier run in DIR.
    #[arg(long)]
    pub force: bool,
}

/// Interval of the best individual's recorded track: fine enough to draw
/// the swing, a whole number of J_a samples.
const REPLAY_FRAME_INTERVAL_S: f64 = 0.01;

impl SwingupArgs {
    fn problem(&self) -> Result<SwingupProblem, UsageError> {
        let params = TetherParams {
            elements: self.elements,
            damping_pa_s: self.damping,
            drag_coefficient: self.drag_coefficient,
            tip_mass_kg: self.tip_mass,
            ..TetherParams::default()
        };
        let mut scenario = Scenario::new(ScenarioKind::Swingup, params.length_m);
        scenario.duration_s = self.duration;
        scenario.winch = WinchMotion {
            waypoints_m: self
                .waypoints
                .clone()
                .unwrap_or_else(|| WinchMotion::spec_waypoints(self.winch_amplitude)),
            ..scenario.winch
        };
        let problem = SwingupProblem {
            params,
            scenario,
            coding: GeneCoding {
                bits_per_gene: self.bits_per_gene,
                period_min_s: self.period_min,
                period_max_s: self.period_max,
            },
        };
        problem.validate().map_err(usage)?;
        Ok(problem)
    }

    fn settings(&self) -> GaSettings {
        GaSettings {
            population: self.population,
            generations: self.generations,
            seed: self.seed,
            tournament_size: self.tournament_size,
            crossover_rate: self.crossover_rate,
            mutation_rate: self.mutation_rate,
        }
    }
}

fn periods_text(t: &[f64]) -> String {
    format!("T = {:.3}, {:.3}, {:.3} s", t[0], t[1], t[2])
}

fn fitness_text(e: &Evaluation) -> String {
    match (e.j_a_min_m, e.t_at_min_s) {
        (Some(j), Some(t)) => format!("J_a,min = {j:.6} m at t = {t:.3} s"),
        _ => e.status.name().to_string(),
    }
}

pub fn run(args: SwingupArgs) -> Result<()> {
    let problem = args.problem()?;
    let settings = args.settings();
    settings.validate().map_err(usage)?;
    if !(args.tolerance > 0.0 && args.tolerance <= 1e-3) {
        Err(UsageError(format!(
            "invalid tolerance = {}: must be a length in (0, 1e-3] m",
            args.tolerance
        )))?;
    }
    let coding = problem.coding;
    args.engine.check_solver(args.solver)?;
    let generations_path = claim_output(&args.out, "generations.parquet", args.force)?;

    // A GA generation is a handful of simulations, each a single GPU thread;
    // the landscape is tens of thousands, which the GPU runs side by side.
    let gpu = if args.exhaustive && args.solver != Some(SolverKind::Reference) {
        args.engine.open()?
    } else {
        args.engine
            .open_unless_auto("a GA generation is too few simulations to fill a GPU")?
    };
    let cpu_settings = SolverSettings {
        kind: args.solver.unwrap_or(SolverKind::Reference),
        reference: ReferenceOptions {
            tolerance_m: args.tolerance,
            ..Default::default()
        },
        ..Default::default()
    };
    let gpu_scheme = EngineArgs::gpu_scheme(args.solver);
    let (engine, backend, precision, solver) = match &gpu {
        Some(g) => (
            Engine::Gpu {
                gpu: g,
                precision: args.engine.precision,
                scheme: gpu_scheme,
            },
            "gpu",
            args.engine.precision,
            SolverKind::from(gpu_scheme),
        ),
        None => (
            Engine::Cpu(cpu_settings),
            "cpu",
            Precision::F64,
            cpu_settings.kind,
        ),
    };
    let mut evaluator = Evaluator::new(engine);
    evaluator.cancel = Some(interrupt_flag());
    let p = &problem.params;
    println!(
        "swingup: n = {}, D = {} Pa·s, C_D = {}, tip mass = {} kg | waypoints {:?} m | {} bits ({} chromosomes), T in [{}, {}] s | {:.2} s horizon | {}, {} solver, {}",
        p.elements,
        p.damping_pa_s,
        p.drag_coefficient,
        p.tip_mass_kg,
        problem.scenario.winch.waypoints_m,
        coding.bits(),
        coding.space_size(),
        coding.period_min_s,
        coding.period_max_s,
        problem.scenario.duration_s,
        match &gpu {
            Some(g) => format!("GPU {}", g.adapter.name),
            None => format!("CPU, {} threads", rayon::current_num_threads()),
        },
        solver.name(),
        precision.name()
    );

    let mut metadata = tether_sweep::io::base_metadata();
    metadata.insert("tether_sweep.tether".into(), json(&problem.params));
    metadata.insert("tether_sweep.scenario".into(), json(&problem.scenario));
    metadata.insert("tether_sweep.coding".into(), json(&coding));
    metadata.insert("tether_sweep.ga".into(), json(&settings));
    metadata.insert(
        "tether_sweep.engine".into(),
        serde_json::json!({
            "backend": backend,
            "precision": precision.name(),
            "solver": solver.name(),
            "cpu_solver_settings": (backend == "cpu").then_some(cpu_settings),
        })
        .to_string(),
    );
    if let Some(g) = &gpu {
        metadata.insert("tether_sweep.adapter".into(), json(&g.adapter));
    }
    metadata.insert(
        "tether_sweep.units".into(),
        r#"{"t1_s":"s","t2_s":"s","t3_s":"s","j_a_min_m":"m","t_at_min_s":"s"}"#.into(),
    );

    let started = Instant::now();
    let landscape = if args.exhaustive {
        Some(exhaustive(&problem, &evaluator, &args, &metadata)?)
    } else {
        None
    };

    let ga_started = Instant::now();
    let mut generation_started = Instant::now();
    let run = ga::run(
        &coding,
        &settings,
        |chromosomes: &[u32]| -> Result<Vec<Evaluation>> {
            Ok(match &landscape {
                // The landscape already scored every chromosome on this engine.
                Some(l) => chromosomes
                    .iter()
                    .map(|&c| l.evaluations[c as usize].clone())
                    .collect(),
                None => evaluator
                    .evaluate(&problem, chromosomes, None)
                    .context("evaluating a generation")?,
            })
        },
        |g| {
            let best = g.best();
            println!(
                "generation {:>3}: best {} {} ({}), mean {}, {} new, {:.1} s",
                g.index,
                coding.bit_string(best.chromosome),
                periods_text(&coding.periods_s(best.chromosome)),
                fitness_text(&best.evaluation),
                g.mean_fitness().map_or("-".into(), |m| format!("{m:.4} m")),
                g.new_evaluations,
                generation_started.elapsed().as_secs_f64()
            );
            generation_started = Instant::now();
        },
    )?;
    let ga_wall = ga_started.elapsed().as_secs_f64();
    metadata.insert("tether_sweep.ga_wall_s".into(), format!("{ga_wall:.3}"));
    let summary = summary_json(&run, &coding, landscape.as_ref());
    metadata.insert("tether_sweep.summary".into(), summary.to_string());
    write_generations(&generations_path, &run, &coding, &metadata)?;
    if run.cancelled {
        Err(Interrupted(format!(
            "interrupted in generation {}: it and the generations before it are in {} (unfinished individuals have status = cancelled)",
            run.generations.len() - 1,
            generations_path.display()
        )))?;
    }

    // The best individual again, on the same engine, with its track.
    let best = &run.best;
    let mut best_scenario = problem.scenario_for(best.chromosome);
    best_scenario.frame_interval_s = REPLAY_FRAME_INTERVAL_S;
    let replay = match (&gpu, best.evaluation.status == RunStatus::Ok) {
        (_, false) => None,
        (Some(g), true) => Some(
            tether_sweep::scenario::batch::simulate_gpu(
                g,
                &best_scenario,
                &problem.params,
                gpu_scheme,
                None,
                precision,
            )
            .context("replaying the best individual")?,
        ),
        (None, true) => Some(
            simulate(&best_scenario, &problem.params, &cpu_settings)
                .context("replaying the best individual")?,
        ),
    };
    if let Some(out) = &replay {
        write_replay(&args, &best_scenario, out, &metadata)?;
    }
    let figures = tether_sweep::plot::swingup::save_all(
        &args.out,
        &run,
        &best_scenario,
        replay.as_ref().map(|o| &o.track),
        landscape
            .as_ref()
            .map(|l| (l, &coding, l.optimum().unwrap_or(best.chromosome))),
    )?;

    println!(
        "best: {} {} — {}",
        coding.bit_string(best.chromosome),
        periods_text(&coding.periods_s(best.chromosome)),
        fitness_text(&best.evaluation)
    );
    println!(
        "found in generation {} (generations 0–{}); {} distinct chromosomes {} in {ga_wall:.1} s",
        run.best_found_in,
        run.generations.len() - 1,
        run.evaluations,
        if landscape.is_some() {
            "looked up in the landscape"
        } else {
            "simulated"
        }
    );
    if let Some(l) = &landscape {
        if let Some(opt) = l.optimum() {
            let e = &l.evaluations[opt as usize];
            println!(
                "global optimum ({} chromosomes): {} {} — {}",
                coding.space_size(),
                coding.bit_string(opt),
                periods_text(&coding.periods_s(opt)),
                fitness_text(e)
            );
            println!(
                "the GA's answer ranks {} of {}{}",
                l.rank(best.chromosome),
                coding.space_size(),
                if best.chromosome == opt {
                    ": it is the global optimum"
                } else {
                    ""
                }
            );
        }
    }
    println!(
        "wrote {} (and {}{}.svg/.png) in {:.1} s",
        generations_path.display(),
        if replay.is_some() {
            "best_track.parquet, best_motion.parquet, "
        } else {
            ""
        },
        figures.join(".svg/.png, "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Scores every chromosome, writes landscape.parquet, and reports.
fn exhaustive(
    problem: &SwingupProblem,
    evaluator: &Evaluator,
    args: &SwingupArgs,
    metadata: &BTreeMap<String, String>,
) -> Result<Landscape> {
    let coding = &problem.coding;
    println!(
        "exhaustive: scoring all {} chromosomes",
        coding.space_size()
    );
    let progress = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {percent}%, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template"),
    );
    let report = |done: u64, total: u64| {
        progress.set_length(total);
        progress.set_position(done);
    };
    let started = Instant::now();
    let landscape = Landscape::compute(problem, evaluator, Some(&report));
    progress.finish_and_clear();
    let landscape = landscape.context("exhaustive evaluation failed")?;
    let wall = started.elapsed().as_secs_f64();
    let mut metadata = metadata.clone();
    metadata.insert("tether_sweep.landscape_wall_s".into(), format!("{wall:.3}"));
    let path = args.out.join("landscape.parquet");
    write_landscape(&path, &landscape, coding, &metadata)?;
    let cancelled = landscape.cancelled();
    println!(
        "exhaustive: {} simulations in {wall:.1} s ({:.1}/s), wrote {}",
        coding.space_size(),
        coding.space_size() as f64 / wall,
        path.display()
    );
    if cancelled > 0 {
        Err(Interrupted(format!(
            "interrupted: {cancelled} chromosomes were not scored (status = cancelled in {})",
            path.display()
        )))?;
    }
    Ok(landscape)
}

fn write_replay(
    args: &SwingupArgs,
    scenario: &Scenario,
    out: &SimulationOutput,
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    let mut track_metadata = tether_sweep::io::track_metadata();
    track_metadata.extend(
        metadata
            .iter()
            .filter(|(k, _)| k.as_str() != "tether_sweep.units")
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    track_metadata.insert(
        "tether_sweep.best_scenario".into(),
        serde_json::to_string(scenario)?,
    );
    if let Some(obj) = &out.swingup {
        track_metadata.insert(
            "tether_sweep.swingup_objective".into(),
            serde_json::to_string(obj)?,
        );
    }
    let path = args.out.join("best_track.parquet");
    let mut pending = PendingFile::create(&path)?;
    write_batch(
        &mut pending,
        &track_batch(&out.track, &track_metadata),
        &track_metadata,
    )?;
    pending.commit()?;
    let mut motion_metadata = metadata.clone();
    motion_metadata.insert(
        "tether_sweep.best_scenario".into(),
        serde_json::to_string(scenario)?,
    );
    motion_metadata.insert(
        "tether_sweep.units".into(),
        r#"{"t":"s","winch_x_m":"m","winch_y_m":"m","winch_velocity_m_s":"m/s","winch_acceleration_m_s2":"m/s^2","tip_x_m":"m","tip_y_m":"m"}"#.into(),
    );
    write_motion(
        &args.out.join("best_motion.parquet"),
        scenario,
        &out.track,
        &motion_metadata,
    )?;
    Ok(())
}

fn summary_json(
    run: &GaRun,
    coding: &GeneCoding,
    landscape: Option<&Landscape>,
) -> serde_json::Value {
    let best = &run.best;
    let mut summary = serde_json::json!({
        "best_chromosome": best.chromosome,
        "best_bits": coding.bit_string(best.chromosome),
        "best_periods_s": coding.periods_s(best.chromosome),
        "j_a_min_m": best.evaluation.j_a_min_m,
        "t_at_min_s": best.evaluation.t_at_min_s,
        "found_in_generation": run.best_found_in,
        "generations": run.generations.len(),
        "distinct_evaluations": run.evaluations,
    });
    if let Some(l) = landscape {
        if let Some(opt) = l.optimum() {
            summary["global_optimum_chromosome"] = opt.into();
            summary["global_optimum_j_a_min_m"] = l.evaluations[opt as usize].j_a_min_m.into();
            summary["ga_rank"] = l.rank(best.chromosome).into();
        }
    }
    summary
}

/// Metadata values are JSON.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes")
}
