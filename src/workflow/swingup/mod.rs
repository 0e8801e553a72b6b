//! The swing-up design: the genetic algorithm of docs/model.md §7 over the winch
//! periods, scored by J_a,min, optionally after scoring every chromosome
//! (the exhaustive landscape) to rank the GA's answer; the best individual
//! replayed with its track; tables and figures. Its inputs as either door
//! gives them: `inputs`, each named and described in `keywords`.

mod inputs;
mod keywords;

pub use inputs::SwingupInputs;
pub use keywords::KEYWORDS;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{WorkflowError, batch, claim_output};
use crate::engine::choice::Choice;
use crate::engine::request::EngineRequest;
use crate::engine::{Engine, EngineKind, EngineOptions, Progress};
use crate::ga::confirm::{
    CONFIRMATION_METHOD, CONFIRMATION_TOLERANCE_M, SwingupConfirmation, confirm,
    confirmation_settings,
};
use crate::ga::evaluate::Landscape;
use crate::ga::{
    self, Evaluation, Evaluator, GaRun, GaSettings, Generation, Individual, SwingupProblem,
};
use crate::io::PendingFile;
use crate::io::swingup::{write_generations, write_landscape, write_motion};
use crate::io::track::{track_batch, write_batch};
use crate::metadata::{self, Metadata, json};
use crate::scenario::{Frames, Scenario, SimulationOutput, SolverSettings};
use crate::solver::{ReferenceOptions, SolverKind};
use crate::status::RunStatus;

/// Interval of the best individual's recorded track: fine enough to draw
/// the swing, a whole number of J_a samples.
const REPLAY_FRAME_INTERVAL_S: f64 = 0.01;

/// A swing-up design, as the user asked for it.
#[derive(Debug, Clone)]
pub struct SwingupRequest {
    pub problem: SwingupProblem,
    pub settings: GaSettings,
    /// Also score every chromosome and rank the GA's answer.
    pub exhaustive: bool,
    /// Where and how the swing-ups run.
    pub engine: EngineOptions,
    /// The reference solver's local error tolerance \[m\].
    pub tolerance_m: f64,
    pub out: PathBuf,
    pub force: bool,
}

/// Called after each generation with its wall time \[s\].
pub type OnGeneration<'a> = dyn FnMut(&Generation, f64) + 'a;

/// What a swing-up design may be told while it runs.
#[derive(Default)]
pub struct SwingupHooks<'a> {
    /// After each generation, with its wall time \[s\].
    pub on_generation: Option<&'a mut OnGeneration<'a>>,
    /// The exhaustive landscape's progress.
    pub landscape_progress: Option<&'a Progress<'a>>,
    pub cancel: Option<&'a AtomicBool>,
}

/// A checked swing-up design with its engine chosen.
pub struct PreparedSwingup {
    request: SwingupRequest,
    choice: Choice,
    generations_path: PathBuf,
}

/// The exhaustive landscape and its wall time.
#[derive(Debug, Clone)]
pub struct LandscapeReport {
    pub landscape: Landscape,
    pub wall_s: f64,
    pub path: PathBuf,
}

/// What the design found and wrote.
#[derive(Debug, Clone)]
pub struct SwingupReport {
    pub run: GaRun,
    /// The GA's answer, confirmed at a tight tolerance.
    pub answer: Answer,
    pub landscape: Option<LandscapeReport>,
    pub ga_wall_s: f64,
    pub generations_path: PathBuf,
    /// Whether the best individual was replayed (its track and motion written).
    pub replayed: bool,
    pub figures: Vec<String>,
    pub wall_s: f64,
    /// Simulations per GPU layout they ran in (empty on the CPU).
    pub gpu_layouts: std::collections::BTreeMap<&'static str, u64>,
}

pub fn prepare(request: SwingupRequest) -> Result<PreparedSwingup, WorkflowError> {
    request.problem.validate()?;
    request.settings.validate()?;
    crate::solver::reference::check_tolerance_m("tolerance_m", request.tolerance_m)?;
    let generations_path = claim_output(&request.out, "generations.parquet", request.force)?;
    let problem = &request.problem;
    // The simulations of one evaluation: every chromosome for the
    // landscape, a generation for the GA alone.
    let chromosomes: Vec<u32> = if request.exhaustive {
        (0..problem.coding.space_size() as u32).collect()
    } else {
        (0..request.settings.population as u32)
            .map(|i| {
                (i as u64 * problem.coding.space_size() / request.settings.population as u64) as u32
            })
            .collect()
    };
    let simulations: Vec<_> = chromosomes
        .iter()
        .map(|&c| (problem.scenario_for(c), problem.params.clone()))
        .collect();
    let label = if request.exhaustive {
        format!(
            "the landscape's {}",
            super::count(simulations.len(), "swing-up")
        )
    } else {
        format!(
            "a generation of {}",
            super::count(simulations.len(), "swing-up")
        )
    };
    let choice = super::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: cpu_settings(&request),
            simulations: simulations.len(),
            scouting: false,
        },
        &label,
        &simulations,
        usize::MAX,
        &Default::default(),
    )?;
    Ok(PreparedSwingup {
        request,
        choice,
        generations_path,
    })
}

fn cpu_settings(request: &SwingupRequest) -> SolverSettings {
    SolverSettings {
        kind: request.engine.solver.unwrap_or(SolverKind::Reference),
        reference: ReferenceOptions {
            tolerance_m: request.tolerance_m,
            ..Default::default()
        },
        ..Default::default()
    }
}

impl PreparedSwingup {
    /// The engine chosen, the GPU it runs on and why.
    pub fn choice(&self) -> &Choice {
        &self.choice
    }

    fn metadata(&self) -> Metadata {
        let request = &self.request;
        let problem = &request.problem;
        let engine = self.choice.engine.kind();
        let mut m = metadata::base();
        m.insert(metadata::TETHER.into(), json(&problem.params));
        m.insert(metadata::SCENARIO.into(), problem.scenario.record());
        m.insert(metadata::CODING.into(), json(&problem.coding));
        m.insert(metadata::GA.into(), json(&request.settings));
        super::record_engine(&mut m, &self.request.engine, &self.choice);
        // The GA's record also gives the CPU solver's settings.
        let cpu = match engine {
            EngineKind::Cpu(settings) => Some(settings),
            EngineKind::Gpu { .. } | EngineKind::GpuAdaptive { .. } => None,
        };
        m.insert(
            metadata::ENGINE.into(),
            serde_json::json!({
                "backend": engine.backend_name(),
                "precision": engine.precision().name(),
                "solver": engine.solver().name(),
                "cpu_solver_settings": cpu,
            })
            .to_string(),
        );
        m.insert(
            metadata::UNITS.into(),
            r#"{"t1_s":"s","t2_s":"s","t3_s":"s","j_a_min_m":"m","t_at_min_s":"s"}"#.into(),
        );
        m
    }

    /// Runs the landscape (if asked), the GA, the confirmation of its
    /// answer and the replay, and writes.
    pub fn run(self, hooks: SwingupHooks<'_>) -> Result<SwingupReport, WorkflowError> {
        let started = Instant::now();
        let request = &self.request;
        let coding = request.problem.coding;
        let mut evaluator = Evaluator::new(self.choice.engine.clone());
        evaluator.cancel = hooks.cancel;
        let mut metadata = self.metadata();

        let landscape = if request.exhaustive {
            Some(self.exhaustive(&evaluator, &metadata, hooks.landscape_progress)?)
        } else {
            None
        };
        let ga_started = Instant::now();
        let run = self.search(
            &evaluator,
            landscape.as_ref().map(|l| &l.0),
            hooks.on_generation,
        )?;
        let ga_wall_s = ga_started.elapsed().as_secs_f64();
        let scored = |i: &crate::ga::Individual| i.evaluation.j_a_min_m.is_some();
        if !run.cancelled
            && !run
                .generations
                .iter()
                .any(|g| g.individuals.iter().any(scored))
        {
            return Err(WorkflowError::NothingSimulated(format!(
                "every chromosome of {} generations diverged or failed: no J_a to rank, nothing written. Check the tether's parameters, the controller's ranges and the step",
                run.generations.len()
            )));
        }
        metadata.insert(metadata::GA_WALL_S.into(), format!("{ga_wall_s:.3}"));
        let gpu_layouts = evaluator.layouts_ran();
        if !gpu_layouts.is_empty() {
            metadata.insert(metadata::GPU_LAYOUTS_RAN.into(), json(&gpu_layouts));
        }
        let answer = if run.cancelled {
            Answer::unconfirmed(&run)
        } else {
            self.answer(
                &run,
                landscape.as_ref().map(|l| &l.0.landscape),
                hooks.cancel,
            )?
        };
        let summary = summary_json(&run, &answer, &coding);
        metadata.insert(metadata::SUMMARY.into(), summary.to_string());
        write_generations(
            &self.generations_path,
            &run,
            &coding,
            &answer.confirmed,
            &metadata,
        )?;
        if let Some((l, landscape_metadata)) = &landscape {
            let mut m = landscape_metadata.clone();
            m.insert(metadata::SUMMARY.into(), summary.to_string());
            write_landscape(&l.path, &l.landscape, &coding, &answer.confirmed, &m)?;
        }
        self.answer_stands(&run, &answer)?;
        let (replay, best_scenario) = self.replay(&answer)?;
        if let Some(out) = &replay {
            write_replay(&request.out, &best_scenario, out, &metadata)?;
        }
        let figures = crate::plot::swingup::save_all(
            &request.out,
            &run,
            &answer.best,
            &best_scenario,
            replay.as_ref().map(|o| &o.track),
            landscape.as_ref().map(|(l, _)| {
                let optimum = answer
                    .global
                    .as_ref()
                    .map_or(answer.best.chromosome, |g| g.best.chromosome);
                (&l.landscape, &coding, optimum)
            }),
        )?;
        Ok(SwingupReport {
            run,
            answer,
            landscape: landscape.map(|l| l.0),
            ga_wall_s,
            generations_path: self.generations_path.clone(),
            replayed: replay.is_some(),
            figures,
            wall_s: started.elapsed().as_secs_f64(),
            gpu_layouts,
        })
    }

    /// An error where the run was interrupted, in the search or its
    /// confirmation, or where every chromosome re-run failed at the
    /// confirmation tolerance: the tables are written by then.
    fn answer_stands(&self, run: &GaRun, answer: &Answer) -> Result<(), WorkflowError> {
        let generations = self.generations_path.display();
        if run.cancelled {
            return Err(WorkflowError::Interrupted(format!(
                "interrupted in generation {}: it and the generations before it are in {generations} (unfinished individuals have status = cancelled)",
                run.generations.len() - 1,
            )));
        }
        let cancelled = answer
            .confirmed
            .values()
            .any(|e| e.status == RunStatus::Cancelled);
        if cancelled {
            return Err(WorkflowError::Interrupted(format!(
                "interrupted while confirming the GA's answer on {CONFIRMATION_METHOD} at {CONFIRMATION_TOLERANCE_M:e} m: the generations are in {generations}"
            )));
        }
        match &answer.confirmation {
            Some(c) if c.best.is_none() => Err(WorkflowError::Failed(format!(
                "the GA's {} fittest chromosomes finished in the search but failed on the reference solver's {} at {:e} m (their j_a_min_confirmed_m is null in {generations}): the search's scores cannot be trusted",
                c.rerun, c.method, c.tolerance_m
            ))),
            _ => Ok(()),
        }
    }

    /// The GA, scoring each generation on `evaluator`, or looking its
    /// chromosomes up in `landscape` where it was scored.
    fn search(
        &self,
        evaluator: &Evaluator,
        landscape: Option<&LandscapeReport>,
        mut on_generation: Option<&mut OnGeneration<'_>>,
    ) -> Result<GaRun, WorkflowError> {
        let problem = &self.request.problem;
        let mut generation_started = Instant::now();
        ga::run(
            &problem.coding,
            &self.request.settings,
            |chromosomes: &[u32]| -> Result<Vec<Evaluation>, WorkflowError> {
                Ok(match landscape {
                    Some(l) => chromosomes
                        .iter()
                        .map(|&c| l.landscape.evaluations[c as usize].clone())
                        .collect(),
                    None => evaluator
                        .evaluate(problem, chromosomes, None)
                        .map_err(batch("evaluating a generation"))?,
                })
            },
            |g| {
                if let Some(f) = on_generation.as_mut() {
                    f(g, generation_started.elapsed().as_secs_f64());
                }
                generation_started = Instant::now();
            },
        )
    }

    /// The GA's answer and the landscape's optimum, the fittest confirmed
    /// on the CPU's reference solver, Radau IIA at the confirmation
    /// tolerance (`ga::confirm`). The search never runs that solver (its
    /// reference solver is generalized-α, on the CPU or the GPU), so its
    /// answer is always confirmed.
    fn answer(
        &self,
        run: &GaRun,
        landscape: Option<&Landscape>,
        cancel: Option<&AtomicBool>,
    ) -> Result<Answer, WorkflowError> {
        let mut answer = Answer::unconfirmed(run);
        let mut evaluator = Evaluator::new(Engine::cpu(confirmation_settings()));
        evaluator.cancel = cancel;
        let problem = &self.request.problem;
        let mut rerun = |chromosomes: &[u32]| evaluator.evaluate(problem, chromosomes, None);
        let scored = run.scored();
        let confirmation = confirm(&scored, &mut answer.confirmed, &mut rerun)
            .map_err(batch("confirming the GA's answer"))?;
        let global = match landscape {
            Some(l) => confirm(&l.individuals(), &mut answer.confirmed, &mut rerun)
                .map_err(batch("confirming the landscape's optimum"))?,
            None => None,
        };
        answer.confirm(run, &scored, confirmation);
        answer.global = match (landscape, global) {
            (Some(l), Some(g)) => GlobalOptimum::confirmed(l, g, &answer),
            (Some(l), None) => GlobalOptimum::unconfirmed(l, &answer.best),
            _ => None,
        };
        Ok(answer)
    }

    /// The answer again with its track, on the solver that confirmed it
    /// (`ga::confirm::confirmation_settings`) or, where nothing was
    /// confirmed, the search's engine; None when the answer did not
    /// finish.
    fn replay(
        &self,
        answer: &Answer,
    ) -> Result<(Option<SimulationOutput>, Scenario), WorkflowError> {
        let scenario = self.request.problem.scenario_for(answer.best.chromosome);
        let duration_s = scenario.duration_s();
        let scenario = scenario.with_frames(Frames::every(REPLAY_FRAME_INTERVAL_S, duration_s));
        if answer.best.evaluation.status != RunStatus::Ok {
            return Ok((None, scenario));
        }
        let params = &self.request.problem.params;
        let output = match answer.confirmation {
            Some(_) => Engine::cpu(confirmation_settings()).simulate(&scenario, params),
            None => self.choice.engine.simulate(&scenario, params),
        }
        .map_err(batch("replaying the best individual"))?;
        Ok((Some(output), scenario))
    }

    /// Scores every chromosome: the landscape, with its file's metadata
    /// (landscape.parquet is written with the confirmation's scores, after
    /// the GA; here only when interrupted).
    fn exhaustive(
        &self,
        evaluator: &Evaluator,
        metadata: &Metadata,
        progress: Option<&Progress<'_>>,
    ) -> Result<(LandscapeReport, Metadata), WorkflowError> {
        let coding = &self.request.problem.coding;
        let started = Instant::now();
        let landscape = Landscape::compute(&self.request.problem, evaluator, progress)
            .map_err(batch("exhaustive evaluation failed"))?;
        let wall_s = started.elapsed().as_secs_f64();
        let mut metadata = metadata.clone();
        metadata.insert(metadata::LANDSCAPE_WALL_S.into(), format!("{wall_s:.3}"));
        let gpu_layouts = evaluator.layouts_ran();
        if !gpu_layouts.is_empty() {
            metadata.insert(metadata::GPU_LAYOUTS_RAN.into(), json(&gpu_layouts));
        }
        let path = self.request.out.join("landscape.parquet");
        let cancelled = landscape.cancelled();
        if cancelled > 0 {
            write_landscape(&path, &landscape, coding, &BTreeMap::new(), &metadata)?;
            return Err(WorkflowError::Interrupted(format!(
                "interrupted: {} were not scored (status = cancelled in {})",
                super::count(cancelled, "chromosome"),
                path.display()
            )));
        }
        Ok((
            LandscapeReport {
                landscape,
                wall_s,
                path,
            },
            metadata,
        ))
    }
}

/// The GA's answer: the fittest chromosome it scored, confirmed on Radau
/// IIA at a tight tolerance (`ga::confirm`).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The chromosome, with its confirmed score (or the search's, where the
    /// search was interrupted or no chromosome finished).
    pub best: Individual,
    /// Its score in the search.
    pub search: Evaluation,
    /// The first generation it appeared in.
    pub found_in: usize,
    /// None: the search was interrupted, or no chromosome finished in it.
    pub confirmation: Option<SwingupConfirmation>,
    /// With --exhaustive: the landscape's optimum.
    pub global: Option<GlobalOptimum>,
    /// Every chromosome re-run at the confirmation tolerance.
    pub confirmed: BTreeMap<u32, Evaluation>,
}

/// The landscape's optimum, confirmed as the GA's answer is, and the GA's
/// answer's place among all chromosomes.
#[derive(Debug, Clone)]
pub struct GlobalOptimum {
    pub best: Individual,
    pub confirmation: Option<SwingupConfirmation>,
    /// 1 + the chromosomes fitter than the GA's answer, each by its
    /// confirmed score where it was re-run, else the search's.
    pub ga_rank: usize,
}

impl Answer {
    /// The search's fittest, as the search scored it.
    fn unconfirmed(run: &GaRun) -> Self {
        Self {
            best: run.best.clone(),
            search: run.best.evaluation.clone(),
            found_in: run.best_found_in,
            confirmation: None,
            global: None,
            confirmed: BTreeMap::new(),
        }
    }

    /// The confirmation's fittest in place of the search's, where a
    /// re-run finished (`PreparedSwingup::answer_stands` refuses the rest).
    fn confirm(
        &mut self,
        run: &GaRun,
        scored: &[Individual],
        confirmation: Option<SwingupConfirmation>,
    ) {
        let Some(confirmation) = confirmation else {
            // No chromosome finished in the search: nothing to confirm.
            return;
        };
        if let Some(best) = confirmation.best.clone() {
            self.search = scored
                .iter()
                .find(|i| i.chromosome == best.chromosome)
                .expect("the answer was scored in the search")
                .evaluation
                .clone();
            self.found_in = run
                .found_in(best.chromosome)
                .expect("the answer comes from a generation");
            self.best = best;
        }
        self.confirmation = Some(confirmation);
    }

    /// A chromosome's score for ranking: confirmed where it was re-run.
    fn score(&self, chromosome: u32, search: &Evaluation) -> f64 {
        self.confirmed
            .get(&chromosome)
            .map_or(search.fitness(), Evaluation::fitness)
    }
}

impl GlobalOptimum {
    fn confirmed(
        landscape: &Landscape,
        confirmation: SwingupConfirmation,
        answer: &Answer,
    ) -> Option<Self> {
        let best = confirmation.best.clone()?;
        let ga = answer.best.evaluation.fitness();
        let ga_rank = 1
            + (0..landscape.evaluations.len())
                .filter(|&c| answer.score(c as u32, &landscape.evaluations[c]) < ga)
                .count();
        Some(Self {
            best,
            confirmation: Some(confirmation),
            ga_rank,
        })
    }

    fn unconfirmed(landscape: &Landscape, answer: &Individual) -> Option<Self> {
        let optimum = landscape.optimum()?;
        Some(Self {
            best: Individual {
                chromosome: optimum,
                evaluation: landscape.evaluations[optimum as usize].clone(),
            },
            confirmation: None,
            ga_rank: landscape.rank(answer.chromosome),
        })
    }
}

fn write_replay(
    dir: &std::path::Path,
    scenario: &Scenario,
    out: &SimulationOutput,
    metadata: &Metadata,
) -> Result<(), WorkflowError> {
    let mut track_metadata = crate::io::track_metadata();
    track_metadata.extend(
        metadata
            .iter()
            .filter(|(k, _)| k.as_str() != metadata::UNITS)
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    track_metadata.insert(metadata::BEST_SCENARIO.into(), json(scenario));
    if let Some(obj) = &out.swingup {
        track_metadata.insert(metadata::SWINGUP_OBJECTIVE.into(), json(obj));
    }
    let path = dir.join("best_track.parquet");
    let mut pending = PendingFile::create(&path)?;
    write_batch(
        &mut pending,
        &track_batch(&out.track, &track_metadata),
        &track_metadata,
    )?;
    pending.commit()?;
    let mut motion_metadata = metadata.clone();
    motion_metadata.insert(metadata::BEST_SCENARIO.into(), json(scenario));
    motion_metadata.insert(
        metadata::UNITS.into(),
        r#"{"t":"s","winch_x_m":"m","winch_y_m":"m","winch_velocity_m_s":"m/s","winch_acceleration_m_s2":"m/s^2","tip_x_m":"m","tip_y_m":"m"}"#.into(),
    );
    write_motion(
        &dir.join("best_motion.parquet"),
        scenario,
        &out.track,
        &motion_metadata,
    )?;
    Ok(())
}

fn summary_json(run: &GaRun, answer: &Answer, coding: &ga::GeneCoding) -> serde_json::Value {
    let best = &answer.best;
    let mut summary = serde_json::json!({
        "best_chromosome": best.chromosome,
        "best_bits": coding.bit_string(best.chromosome),
        "best_periods_s": coding.periods_s(best.chromosome),
        "j_a_min_m": best.evaluation.j_a_min_m,
        "t_at_min_s": best.evaluation.t_at_min_s,
        "search_j_a_min_m": answer.search.j_a_min_m,
        "confirmation": answer.confirmation,
        "found_in_generation": answer.found_in,
        "generations": run.generations.len(),
        "distinct_evaluations": run.evaluations,
        "periods_at_bounds": periods_at_bounds(coding, best.chromosome),
    });
    if let Some(g) = &answer.global {
        summary["global_optimum_chromosome"] = g.best.chromosome.into();
        summary["global_optimum_j_a_min_m"] = g.best.evaluation.j_a_min_m.into();
        summary["global_optimum_confirmation"] = serde_json::json!(g.confirmation);
        summary["ga_rank"] = g.ga_rank.into();
    }
    summary
}

/// The genes (T1, T2, T3 as 1, 2, 3) of `chromosome` whose period sits on
/// `--period-min` or `--period-max`: an optimum there may lie beyond the
/// range searched, as a grid edge does for identify.
pub fn periods_at_bounds(coding: &ga::GeneCoding, chromosome: u32) -> Vec<usize> {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    coding
        .periods_s(chromosome)
        .iter()
        .enumerate()
        .filter(|&(_, &t)| close(t, coding.period_min_s) || close(t, coding.period_max_s))
        .map(|(gene, _)| gene + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_on_the_searched_range_bounds_are_flagged() {
        let coding = ga::GeneCoding {
            bits_per_gene: 2,
            period_min_s: 0.25,
            period_max_s: 1.0,
        };
        let inside = (0..coding.space_size() as u32)
            .find(|&c| coding.periods_s(c).iter().all(|&t| t > 0.25 && t < 1.0))
            .unwrap();
        assert!(periods_at_bounds(&coding, inside).is_empty());
        let at = |c: u32| {
            let t = coding.periods_s(c);
            (1..=3)
                .filter(|&g| t[g - 1] == 0.25 || t[g - 1] == 1.0)
                .collect::<Vec<usize>>()
        };
        for c in 0..coding.space_size() as u32 {
            assert_eq!(periods_at_bounds(&coding, c), at(c), "chromosome {c}");
        }
        assert_eq!(periods_at_bounds(&coding, 0), vec![1, 2, 3]);
    }
}
