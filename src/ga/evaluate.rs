//! Scoring chromosomes: each becomes a swing-up (docs/model.md §4.2) with its winch
//! periods, simulated on the CPU solvers (all cores) or as one GPU batch.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use super::{Evaluation, GeneCoding};
use crate::engine::Engine;
use crate::error::InputError;
use crate::gpu::{BatchOptions, Gpu, GpuError, GpuLayout, OutcomeStatus, run_batch};
use crate::model::TetherParams;
use crate::scenario::batch::{BatchError, StepCache, gpu_simulation};
use crate::scenario::{RunStatus, Scenario, ScenarioKind, SolverSettings, simulate};
use crate::solver::{FixedStepScheme, SolverError};

/// The design problem: a tether, a swing-up scenario whose winch periods the
/// chromosome sets, and the chromosome's coding.
#[derive(Debug, Clone, PartialEq)]
pub struct SwingupProblem {
    pub params: TetherParams,
    /// The swing-up scenario; its winch waypoints are kept, its periods
    /// replaced by each chromosome's.
    pub scenario: Scenario,
    pub coding: GeneCoding,
}

impl SwingupProblem {
    pub fn validate(&self) -> Result<(), InputError> {
        self.params.validate()?;
        self.coding.validate()?;
        if self.scenario.kind != ScenarioKind::Swingup {
            return Err(InputError::new(
                "scenario",
                format!("{:?}", self.scenario.kind),
                "swingup",
            ));
        }
        if self.scenario.winch.waypoints_m.len() != super::coding::GENES + 1 {
            return Err(InputError::new(
                "waypoints_m",
                format!("{} waypoints", self.scenario.winch.waypoints_m.len()),
                "4 waypoints (one per chromosome gene, plus the start)",
            ));
        }
        self.scenario_for(0).validate(self.params.length_m)
    }

    /// The swing-up that `chromosome` encodes.
    pub fn scenario_for(&self, chromosome: u32) -> Scenario {
        let mut s = self.scenario.clone();
        s.winch.periods_s = self.coding.periods_s(chromosome).to_vec();
        s
    }
}

/// A progress callback: (chromosomes scored, chromosomes in the batch).
pub type Progress<'a> = dyn Fn(u64, u64) + Sync + 'a;

/// Scores chromosomes on an engine: the CPU solvers, one simulation per
/// core at a time, or the GPU engine, a generation as one batch.
pub struct Evaluator<'a> {
    pub engine: Engine,
    gpu: Option<&'a Gpu>,
    /// Once set, simulations not yet finished come back cancelled.
    pub cancel: Option<&'a AtomicBool>,
    steps: StepCache,
    /// How many simulations ran in each GPU layout so far.
    layouts_ran: Mutex<BTreeMap<GpuLayout, u64>>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator on `engine`; a GPU engine needs the open `gpu`.
    pub fn new(engine: Engine, gpu: Option<&'a Gpu>) -> Result<Self, GpuError> {
        if engine.is_gpu() && gpu.is_none() {
            return Err(GpuError::NoAdapter);
        }
        Ok(Self {
            engine,
            gpu,
            cancel: None,
            steps: StepCache::default(),
            layouts_ran: Mutex::new(BTreeMap::new()),
        })
    }

    /// How many simulations ran in each GPU layout so far, by its name.
    pub fn layouts_ran(&self) -> BTreeMap<&'static str, u64> {
        self.layouts_ran
            .lock()
            .expect("layout count lock")
            .iter()
            .map(|(l, n)| (l.name(), *n))
            .collect()
    }

    /// Scores `chromosomes` in one batch, in their order. `progress` is
    /// called with (chromosomes scored, chromosomes in the batch) on either
    /// engine (on the GPU, in proportion to the element-steps done).
    pub fn evaluate(
        &self,
        problem: &SwingupProblem,
        chromosomes: &[u32],
        progress: Option<&Progress<'_>>,
    ) -> Result<Vec<Evaluation>, BatchError> {
        match (&self.engine, self.gpu) {
            (Engine::Cpu(settings), _) => {
                Ok(self.evaluate_cpu(problem, chromosomes, settings, progress))
            }
            (
                Engine::Gpu {
                    precision,
                    scheme,
                    layout,
                },
                Some(gpu),
            ) => {
                // The GPU counts element-steps; the caller counts chromosomes.
                let count = chromosomes.len() as u64;
                let in_chromosomes = |done: u64, of: u64| {
                    if let Some(report) = progress {
                        let scored = count as u128 * done as u128 / of.max(1) as u128;
                        report(scored as u64, count);
                    }
                };
                let options = BatchOptions {
                    precision: *precision,
                    layout: *layout,
                    cancel: self.cancel,
                    progress: progress.map(|_| &in_chromosomes as &Progress<'_>),
                    ..Default::default()
                };
                self.evaluate_gpu(problem, chromosomes, gpu, *scheme, &options)
            }
            (Engine::Gpu { .. }, None) => unreachable!("Evaluator::new checks the GPU"),
        }
    }

    fn evaluate_cpu(
        &self,
        problem: &SwingupProblem,
        chromosomes: &[u32],
        settings: &SolverSettings,
        progress: Option<&Progress<'_>>,
    ) -> Vec<Evaluation> {
        let done = AtomicU64::new(0);
        let total = chromosomes.len() as u64;
        chromosomes
            .par_iter()
            .map(|&c| {
                // Between simulations is the CPU's only stopping point.
                if self.cancel.is_some_and(|f| f.load(Ordering::Relaxed)) {
                    return cancelled();
                }
                let result = simulate(&problem.scenario_for(c), &problem.params, settings);
                if let Some(report) = progress {
                    report(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                }
                match result {
                    Ok(out) => {
                        let objective = out.swingup.expect("a swing-up reports J_a");
                        Evaluation {
                            j_a_min_m: Some(objective.j_a_min),
                            t_at_min_s: Some(objective.t_at_min_s),
                            status: RunStatus::Ok,
                        }
                    }
                    Err(SolverError::Cancelled) => cancelled(),
                    Err(e) => Evaluation {
                        j_a_min_m: None,
                        t_at_min_s: None,
                        status: RunStatus::Diverged(e.to_string()),
                    },
                }
            })
            .collect()
    }

    fn evaluate_gpu(
        &self,
        problem: &SwingupProblem,
        chromosomes: &[u32],
        gpu: &Gpu,
        scheme: FixedStepScheme,
        options: &BatchOptions,
    ) -> Result<Vec<Evaluation>, BatchError> {
        let sims = chromosomes
            .par_iter()
            .map(|&c| {
                let scenario = problem.scenario_for(c);
                gpu_simulation(&scenario, &problem.params, scheme, None, &self.steps)
            })
            .collect::<Result<Vec<_>, SolverError>>()?;
        let outcomes = run_batch(gpu, &sims, None, options)?;
        {
            let mut ran = self.layouts_ran.lock().expect("layout count lock");
            for o in outcomes
                .iter()
                .filter(|o| o.status != OutcomeStatus::Cancelled)
            {
                *ran.entry(o.layout).or_default() += 1;
            }
        }
        Ok(outcomes
            .iter()
            .map(|o| match o.status {
                OutcomeStatus::Completed => Evaluation {
                    j_a_min_m: Some(o.swingup_min_m),
                    t_at_min_s: Some(o.swingup_time_s),
                    status: RunStatus::Ok,
                },
                OutcomeStatus::Diverged { time_s } => Evaluation {
                    j_a_min_m: None,
                    t_at_min_s: None,
                    status: RunStatus::Diverged(format!(
                        "state exploded on the GPU ({}) at t = {time_s} s",
                        options.precision.name()
                    )),
                },
                OutcomeStatus::Cancelled => cancelled(),
            })
            .collect())
    }
}

fn cancelled() -> Evaluation {
    Evaluation {
        j_a_min_m: None,
        t_at_min_s: None,
        status: RunStatus::Cancelled,
    }
}

/// Every chromosome of the space scored: the ground truth a GA run is
/// measured against.
#[derive(Debug, Clone, PartialEq)]
pub struct Landscape {
    /// evaluations\[chromosome\]
    pub evaluations: Vec<Evaluation>,
}

impl Landscape {
    pub fn compute(
        problem: &SwingupProblem,
        evaluator: &Evaluator,
        progress: Option<&Progress<'_>>,
    ) -> Result<Self, BatchError> {
        let all: Vec<u32> = (0..problem.coding.space_size() as u32).collect();
        Ok(Self {
            evaluations: evaluator.evaluate(problem, &all, progress)?,
        })
    }

    /// The fittest chromosome (ties: the smaller).
    pub fn optimum(&self) -> Option<u32> {
        (0..self.evaluations.len())
            .filter(|&c| self.evaluations[c].j_a_min_m.is_some())
            .min_by(|&a, &b| {
                self.evaluations[a]
                    .fitness()
                    .total_cmp(&self.evaluations[b].fitness())
            })
            .map(|c| c as u32)
    }

    /// 1-based rank of `chromosome` among all by fitness: 1 + the number of
    /// chromosomes strictly fitter (ties share a rank).
    pub fn rank(&self, chromosome: u32) -> usize {
        let f = self.evaluations[chromosome as usize].fitness();
        1 + self.evaluations.iter().filter(|e| e.fitness() < f).count()
    }

    pub fn cancelled(&self) -> usize {
        self.evaluations
            .iter()
            .filter(|e| e.status == RunStatus::Cancelled)
            .count()
    }
}
