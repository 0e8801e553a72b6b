//! `tether-sweep swingup`: GA design of the winch trajectory (docs/model.md §7), with
//! the exhaustive landscape on request (the work is
//! `tether_sweep::workflow::swingup`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::{EngineArgs, name_flags, number, numbers};
use super::progress::{ProgressBar, interrupt_flag};
use tether_sweep::ga::confirm::SwingupConfirmation;
use tether_sweep::ga::{
    Evaluation, GaSettings, GeneCoding, Generation, Individual, SwingupProblem,
};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::winch::WinchMotion;
use tether_sweep::scenario::{SWINGUP_TIP_MASS_KG, Scenario, ScenarioKind};
use tether_sweep::solver::SolverKind;
use tether_sweep::sweep::{Axis, Parameter};
use tether_sweep::workflow::swingup::{
    Answer, GlobalOptimum, SwingupHooks, SwingupReport, SwingupRequest, periods_at_bounds, prepare,
};

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
    /// n = 40 (its step is not limited by D·n²); on the GPU `reference`
    /// runs the same adaptive scheme in the workgroup layout (docs/gpu.md).
    /// [default: reference on the CPU; on a hardware GPU the faster of
    /// `semi-implicit` and `reference` by the cost model, where it weighs
    /// `reference` (docs/gpu.md), on a CPU emulation `semi-implicit`]
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
    /// The search's reference solver tolerance [m], in (0, 1e-3]. At 1e-7 m
    /// the fittest chromosomes' J_a,min move by about 2e-5 m (2.6× faster
    /// than 1e-9 m), so the fittest are re-run at 1e-10 m and the answer is
    /// printed at that tolerance (docs/swingup.md).
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

/// The flags of the values `swingup` checks, by the library's field names.
const FLAGS: [(&str, &str); 15] = [
    Axis::Elements.column_and_flag(),
    Axis::Damping.column_and_flag(),
    Axis::Drag.column_and_flag(),
    Axis::Parameter(Parameter::TipMassKg).column_and_flag(),
    ("waypoints_m", "--waypoints"),
    ("duration_s", "--duration"),
    ("bits_per_gene", "--bits-per-gene"),
    ("period_min_s", "--period-min"),
    ("period_max_s", "--period-max"),
    ("population", "--population"),
    ("generations", "--generations"),
    ("tournament_size", "--tournament-size"),
    ("crossover_rate", "--crossover-rate"),
    ("mutation_rate", "--mutation-rate"),
    ("tolerance_m", "--tolerance"),
];

impl SwingupArgs {
    fn problem(&self) -> SwingupProblem {
        let params = TetherParams {
            elements: self.elements,
            damping_pa_s: self.damping,
            drag_coefficient: self.drag_coefficient,
            tip_mass_kg: self.tip_mass,
            ..TetherParams::default()
        };
        let mut scenario =
            Scenario::new(ScenarioKind::Swingup, params.length_m).with_duration_s(self.duration);
        if let Some(swingup) = scenario.as_swingup_mut() {
            swingup.winch.waypoints_m = self
                .waypoints
                .clone()
                .unwrap_or_else(|| WinchMotion::spec_waypoints(self.winch_amplitude));
        }
        SwingupProblem {
            params,
            scenario,
            coding: GeneCoding {
                bits_per_gene: self.bits_per_gene,
                period_min_s: self.period_min,
                period_max_s: self.period_max,
            },
        }
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
    let request = SwingupRequest {
        problem: args.problem(),
        settings: args.settings(),
        exhaustive: args.exhaustive,
        engine: args.engine.options(args.solver),
        tolerance_m: args.tolerance,
        out: args.out.clone(),
        force: args.force,
    };
    let prepared = prepare(request.clone()).map_err(|e| name_flags(e, &FLAGS))?;
    if let Some(reason) = prepared.choice().reason.as_deref() {
        eprintln!("{reason}");
    }
    print_header(&request, &prepared);
    let coding = request.problem.coding;
    let mut on_generation = |g: &Generation, wall_s: f64| {
        let best = g.best();
        println!(
            "generation {:>3}: best {} {} ({}), mean {}, {} new, {wall_s:.1} s",
            g.index,
            coding.bit_string(best.chromosome),
            periods_text(&coding.periods_s(best.chromosome)),
            fitness_text(&best.evaluation),
            g.mean_fitness().map_or("-".into(), |m| format!("{m:.4} m")),
            g.new_evaluations,
        );
    };
    if request.exhaustive {
        println!(
            "exhaustive: scoring all {} chromosomes",
            coding.space_size()
        );
    }
    let progress = ProgressBar::new("chromosomes");
    let report_progress = |done: u64, total: u64| progress.report(done, total);
    let result = prepared.run(SwingupHooks {
        on_generation: Some(&mut on_generation),
        landscape_progress: Some(&report_progress),
        cancel: Some(interrupt_flag()),
    });
    progress.finish();
    print_report(&request, &result?);
    Ok(())
}

fn print_header(
    request: &SwingupRequest,
    prepared: &tether_sweep::workflow::swingup::PreparedSwingup,
) {
    let problem = &request.problem;
    let coding = &problem.coding;
    let p = &problem.params;
    let engine = prepared.choice().engine.kind();
    println!(
        "swingup: n = {}, D = {} Pa·s, C_D = {}, tip mass = {} kg | waypoints {} m | {} bits ({} chromosomes), T in [{}, {}] s | {:.2} s horizon | {}, {} solver, {}",
        p.elements,
        number(p.damping_pa_s),
        number(p.drag_coefficient),
        number(p.tip_mass_kg),
        numbers(
            problem
                .scenario
                .as_swingup()
                .map_or(&[][..], |s| &s.winch.waypoints_m[..]),
        ),
        coding.bits(),
        coding.space_size(),
        coding.period_min_s,
        coding.period_max_s,
        problem.scenario.duration_s(),
        match prepared.choice().engine.adapter_name() {
            Some(name) => format!("GPU {name}"),
            None => tether_sweep::engine::EngineKind::cpu_device_name(),
        },
        engine.solver().name(),
        engine.precision().name()
    );
}

/// The answer, how it was confirmed, and whether its periods sit on the
/// searched range's bounds.
fn print_answer(coding: &GeneCoding, searched_best: &Individual, answer: &Answer) {
    let best = &answer.best;
    println!(
        "best: {} {} — {}",
        coding.bit_string(best.chromosome),
        periods_text(&coding.periods_s(best.chromosome)),
        fitness_text(&best.evaluation)
    );
    if let Some(c) = &answer.confirmation {
        println!("  {}", confirmation_text(c, &answer.search));
        if best.chromosome != searched_best.chromosome {
            println!(
                "  the search ranked {} first ({}); at {:e} m this one is fitter",
                coding.bit_string(searched_best.chromosome),
                fitness_text(&searched_best.evaluation),
                c.tolerance_m
            );
        }
    }
    let at_bounds = periods_at_bounds(coding, best.chromosome);
    if !at_bounds.is_empty() {
        let genes: Vec<String> = at_bounds.iter().map(|g| format!("T{g}")).collect();
        println!(
            "  ← {} on the bound of [--period-min, --period-max] = [{}, {}] s: the optimum may lie beyond the range searched",
            genes.join(", "),
            coding.period_min_s,
            coding.period_max_s
        );
    }
}

/// The landscape's optimum and the GA answer's rank among all.
fn print_global(coding: &GeneCoding, best: &Individual, g: &GlobalOptimum) {
    println!(
        "global optimum ({} chromosomes): {} {} — {}",
        coding.space_size(),
        coding.bit_string(g.best.chromosome),
        periods_text(&coding.periods_s(g.best.chromosome)),
        fitness_text(&g.best.evaluation)
    );
    println!(
        "the GA's answer ranks {} of {}{}",
        g.ga_rank,
        coding.space_size(),
        if best.chromosome == g.best.chromosome {
            ": it is the global optimum"
        } else {
            ""
        }
    );
}

/// How the answer was confirmed, beside the search's score.
fn confirmation_text(c: &SwingupConfirmation, search: &Evaluation) -> String {
    format!(
        "confirmed at {:e} m on the reference solver: the {} fittest re-run ({} round{}), largest change {:.1e} m; the search gave J_a,min = {}",
        c.tolerance_m,
        c.rerun,
        c.rounds,
        if c.rounds == 1 { "" } else { "s" },
        c.largest_shift_m,
        search
            .j_a_min_m
            .map_or("none".to_string(), |j| format!("{j:.6} m"))
    )
}

fn print_report(request: &SwingupRequest, report: &SwingupReport) {
    let coding = &request.problem.coding;
    let run = &report.run;
    let answer = &report.answer;
    let best = &answer.best;
    if let Some(l) = &report.landscape {
        println!(
            "exhaustive: {} simulations in {:.1} s ({:.1}/s), wrote {}",
            coding.space_size(),
            l.wall_s,
            coding.space_size() as f64 / l.wall_s,
            l.path.display()
        );
    }
    print_answer(coding, &run.best, answer);
    println!(
        "found in generation {} (generations 0–{}); {} distinct chromosomes {} in {:.1} s",
        answer.found_in,
        run.generations.len() - 1,
        run.evaluations,
        if report.landscape.is_some() {
            "looked up in the landscape"
        } else {
            "simulated"
        },
        report.ga_wall_s
    );
    if let Some(layouts) = super::args::layouts_text(&report.gpu_layouts) {
        println!("GPU simulations, {layouts}");
    }
    if let Some(g) = &answer.global {
        print_global(coding, best, g);
    }
    println!(
        "wrote {} (and {}{}.svg/.png) in {:.1} s",
        report.generations_path.display(),
        if report.replayed {
            "best_track.parquet, best_motion.parquet, "
        } else {
            ""
        },
        report.figures.join(".svg/.png, "),
        report.wall_s
    );
}
