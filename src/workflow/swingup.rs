//! The swing-up design: the genetic algorithm of docs/model.md §7 over the winch
//! periods, scored by J_a,min, optionally after scoring every chromosome
//! (the exhaustive landscape) to rank the GA's answer; the best individual
//! replayed with its track; tables and figures.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{Progress, WorkflowError, batch, claim_output};
use crate::engine::EngineKind;
use crate::engine::EngineOptions;
use crate::engine::choice::{Choice, EngineRequest};
use crate::ga::evaluate::Landscape;
use crate::ga::{self, Evaluation, Evaluator, GaRun, GaSettings, Generation, SwingupProblem};
use crate::io::PendingFile;
use crate::io::swingup::{write_generations, write_landscape, write_motion};
use crate::io::track::{track_batch, write_batch};
use crate::metadata::{self, Metadata, json};
use crate::scenario::{Frames, RunStatus, Scenario, SimulationOutput, SolverSettings};
use crate::solver::{ReferenceOptions, SolverKind};

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
pub struct Prepared {
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

pub fn prepare(request: SwingupRequest) -> Result<Prepared, WorkflowError> {
    request.problem.validate()?;
    request.settings.validate()?;
    if !(request.tolerance_m > 0.0 && request.tolerance_m <= 1e-3) {
        return Err(crate::error::InputError::new(
            "tolerance_m",
            request.tolerance_m,
            "a length in (0, 1e-3] m",
        )
        .into());
    }
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
    Ok(Prepared {
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

impl Prepared {
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

    /// Runs the landscape (if asked), the GA and the replay, and writes.
    pub fn run(self, hooks: SwingupHooks<'_>) -> Result<SwingupReport, WorkflowError> {
        let started = Instant::now();
        let request = &self.request;
        let problem = &request.problem;
        let coding = problem.coding;
        let mut evaluator = Evaluator::new(self.choice.engine.clone());
        evaluator.cancel = hooks.cancel;
        let mut metadata = self.metadata();

        let landscape = if request.exhaustive {
            Some(self.exhaustive(&evaluator, &metadata, hooks.landscape_progress)?)
        } else {
            None
        };
        let ga_started = Instant::now();
        let mut generation_started = Instant::now();
        let mut on_generation = hooks.on_generation;
        let run = ga::run(
            &coding,
            &request.settings,
            |chromosomes: &[u32]| -> Result<Vec<Evaluation>, WorkflowError> {
                Ok(match &landscape {
                    // The landscape already scored every chromosome on this engine.
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
        )?;
        let ga_wall_s = ga_started.elapsed().as_secs_f64();
        metadata.insert(metadata::GA_WALL_S.into(), format!("{ga_wall_s:.3}"));
        let gpu_layouts = evaluator.layouts_ran();
        if !gpu_layouts.is_empty() {
            metadata.insert(metadata::GPU_LAYOUTS_RAN.into(), json(&gpu_layouts));
        }
        let summary = summary_json(&run, &coding, landscape.as_ref().map(|l| &l.landscape));
        metadata.insert(metadata::SUMMARY.into(), summary.to_string());
        write_generations(&self.generations_path, &run, &coding, &metadata)?;
        if run.cancelled {
            return Err(WorkflowError::Interrupted(format!(
                "interrupted in generation {}: it and the generations before it are in {} (unfinished individuals have status = cancelled)",
                run.generations.len() - 1,
                self.generations_path.display()
            )));
        }

        // The best individual again, on the same engine, with its track.
        let best = &run.best;
        let best_scenario = problem.scenario_for(best.chromosome);
        let duration_s = best_scenario.duration_s();
        let best_scenario =
            best_scenario.with_frames(Frames::every(REPLAY_FRAME_INTERVAL_S, duration_s));
        let replay = if best.evaluation.status == RunStatus::Ok {
            Some(self.replay(&best_scenario)?)
        } else {
            None
        };
        if let Some(out) = &replay {
            write_replay(&request.out, &best_scenario, out, &metadata)?;
        }
        let figures = crate::plot::swingup::save_all(
            &request.out,
            &run,
            &best_scenario,
            replay.as_ref().map(|o| &o.track),
            landscape.as_ref().map(|l| {
                (
                    &l.landscape,
                    &coding,
                    l.landscape.optimum().unwrap_or(best.chromosome),
                )
            }),
        )?;
        Ok(SwingupReport {
            run,
            landscape,
            ga_wall_s,
            generations_path: self.generations_path.clone(),
            replayed: replay.is_some(),
            figures,
            wall_s: started.elapsed().as_secs_f64(),
            gpu_layouts,
        })
    }

    fn replay(&self, scenario: &Scenario) -> Result<SimulationOutput, WorkflowError> {
        self.choice
            .engine
            .simulate(scenario, &self.request.problem.params)
            .map_err(batch("replaying the best individual"))
    }

    /// Scores every chromosome and writes landscape.parquet.
    fn exhaustive(
        &self,
        evaluator: &Evaluator,
        metadata: &Metadata,
        progress: Option<&Progress<'_>>,
    ) -> Result<LandscapeReport, WorkflowError> {
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
        write_landscape(&path, &landscape, coding, &metadata)?;
        let cancelled = landscape.cancelled();
        if cancelled > 0 {
            return Err(WorkflowError::Interrupted(format!(
                "interrupted: {} were not scored (status = cancelled in {})",
                super::count(cancelled, "chromosome"),
                path.display()
            )));
        }
        Ok(LandscapeReport {
            landscape,
            wall_s,
            path,
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

fn summary_json(
    run: &GaRun,
    coding: &ga::GeneCoding,
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
        "periods_at_bounds": periods_at_bounds(coding, best.chromosome),
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
