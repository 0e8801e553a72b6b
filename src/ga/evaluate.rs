//! Scoring chromosomes: each becomes a swing-up (docs/model.md §4.2) with its winch
//! periods, simulated on the CPU solvers (all cores) or as one GPU batch.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use super::{Evaluation, GeneCoding, Individual};
use crate::engine::{Engine, Progress, RunHooks, Simulation};
use crate::error::InputError;
use crate::gpu::GpuLayout;
use crate::model::TetherParams;
use crate::scenario::Scenario;
use crate::scenario::batch::BatchError;
use crate::status::RunStatus;

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
        let Some(swingup) = self.scenario.as_swingup() else {
            return Err(InputError::new(
                "scenario",
                format!("{:?}", self.scenario.kind()),
                "swingup",
            ));
        };
        if swingup.winch.waypoints_m.len() != super::coding::GENES + 1 {
            return Err(InputError::new(
                "waypoints_m",
                format!("{} waypoints", swingup.winch.waypoints_m.len()),
                "4 waypoints (one per chromosome gene, plus the start)",
            ));
        }
        let scenario = self.scenario_for(0);
        scenario.validate(self.params.length_m)?;
        scenario.check_track_memory()
    }

    /// The swing-up that `chromosome` encodes.
    pub fn scenario_for(&self, chromosome: u32) -> Scenario {
        let mut s = self.scenario.clone();
        if let Some(swingup) = s.as_swingup_mut() {
            swingup.winch.periods_s = self.coding.periods_s(chromosome).to_vec();
        }
        s
    }
}

/// Scores chromosomes on an engine: the CPU solvers, one simulation per
/// core at a time, or the GPU engine, a generation as one batch.
pub struct Evaluator<'a> {
    pub engine: Engine,
    /// Once set, simulations not yet finished come back cancelled.
    pub cancel: Option<&'a AtomicBool>,
    /// How many simulations ran in each GPU layout so far.
    layouts_ran: Mutex<BTreeMap<GpuLayout, u64>>,
}

impl Evaluator<'_> {
    /// An evaluator on `engine`.
    pub fn new(engine: Engine) -> Self {
        Self {
            engine,
            cancel: None,
            layouts_ran: Mutex::new(BTreeMap::new()),
        }
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
        let simulations: Vec<Simulation> = chromosomes
            .par_iter()
            .map(|&c| Simulation {
                scenario: problem.scenario_for(c),
                params: problem.params.clone(),
                keep_track: false,
                abandon_above_m2: None,
            })
            .collect();
        let hooks = RunHooks {
            progress: progress.map(|p| p as &(dyn Fn(u64, u64) + Sync)),
            cancel: self.cancel,
        };
        let outcomes = self.engine.run(&simulations, None, hooks)?;
        let mut ran = self.layouts_ran.lock().expect("layout count lock");
        for outcome in outcomes.iter().filter(|o| o.status != RunStatus::Cancelled) {
            if let Some(layout) = outcome.layout {
                *ran.entry(layout).or_default() += 1;
            }
        }
        Ok(outcomes
            .into_iter()
            .map(|o| Evaluation {
                j_a_min_m: o.swingup.map(|s| s.j_a_min),
                t_at_min_s: o.swingup.map(|s| s.t_at_min_s),
                status: o.status,
            })
            .collect())
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

    /// Every chromosome with its score, in chromosome order.
    pub fn individuals(&self) -> Vec<Individual> {
        self.evaluations
            .iter()
            .enumerate()
            .map(|(c, e)| Individual {
                chromosome: c as u32,
                evaluation: e.clone(),
            })
            .collect()
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
