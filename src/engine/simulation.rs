//! One simulation of an engine's batch, what the engine reports of it,
//! and the batch's progress and cancellation hooks: the types the engine's
//! run (`run.rs`) and its CPU and GPU sides share.

use std::sync::atomic::AtomicBool;

use crate::gpu::GpuLayout;
use crate::model::TetherParams;
use crate::objective::SwingupObjective;
use crate::scenario::{Scenario, SimulationOutput, SolverReport};
use crate::status::RunStatus;

/// One simulation of a batch.
#[derive(Debug, Clone)]
pub struct Simulation {
    pub scenario: Scenario,
    pub params: TetherParams,
    /// Keep the marker track ([`Outcome::output`]) instead of scoring it
    /// against the batch's measured track.
    pub keep_track: bool,
    /// A scored simulation stops, [`RunStatus::Abandoned`], once its J_e
    /// summed over the frames so far passes this bound \[m²\]; its
    /// outcome's J_e is then that partial sum, a lower bound of the whole
    /// film's. It passing the bound only at the last frame finishes the
    /// run (`ok`, the whole sum). None: scored to the end. Every engine
    /// stops so, each in its own arithmetic (the GPU's in its precision).
    pub abandon_above_m2: Option<f64>,
}

/// What the engine reports of one simulation.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: RunStatus,
    /// The run with its track, when kept and completed.
    pub output: Option<SimulationOutput>,
    /// J_e \[m²\] against the batch's measured track, when scored and
    /// completed.
    pub j_e_m2: Option<f64>,
    /// J_a of a completed swing-up.
    pub swingup: Option<SwingupObjective>,
    /// The fixed step; None for the adaptive reference solver.
    pub step_s: Option<f64>,
    pub steps: u64,
    /// The GPU layout it ran in; None on the CPU.
    pub layout: Option<GpuLayout>,
    /// What the solver reports of a run that ended (its steps, and the
    /// reference solver's Newton iterations and factorizations, on the CPU
    /// or the GPU); None for the GPU's fixed-step schemes.
    pub report: Option<SolverReport>,
}

impl Outcome {
    pub(super) fn stopped(status: RunStatus) -> Self {
        Self {
            status,
            output: None,
            j_e_m2: None,
            swingup: None,
            step_s: None,
            steps: 0,
            layout: None,
            report: None,
        }
    }
}

/// A progress callback: (done, of), in whatever the job counts
/// (simulations, candidates, chromosomes). One type for every job, so
/// that a caller's callback serves any of them.
pub type Progress<'a> = dyn Fn(u64, u64) + Sync + 'a;

/// Progress and cancellation of a batch.
#[derive(Clone, Copy, Default)]
pub struct RunHooks<'a> {
    /// Called with (simulations done, simulations in the batch); on the
    /// GPU, in proportion to the element-steps done.
    pub progress: Option<&'a Progress<'a>>,
    /// Once set, what has not finished comes back cancelled.
    pub cancel: Option<&'a AtomicBool>,
}
