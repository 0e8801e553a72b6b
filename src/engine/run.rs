//! The engine runs a job's simulations: one [`Engine`] value, an
//! [`EngineKind`] with its open device, takes a batch of [`Simulation`]s
//! and returns one [`Outcome`] each, on the CPU's cores or on the GPU. The
//! workflows (sweep, GA, bench, simulate, validation) hand it their batches
//! and never unpack the kind to call a solver or the GPU themselves.
//!
//! A batch either keeps each simulation's marker track or scores it: J_e
//! against a measured track (docs/model.md §5), J_a for a swing-up (§7).
//! Scoring is what lets the GPU keep tracks on the device; both engines
//! score the same frames, so their J_e agree to the arithmetic's precision.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use super::EngineKind;
use crate::error::InputError;
use crate::gpu::GpuOutcome;
use crate::gpu::adaptive::{
    AdaptiveBatch, AdaptiveOutcome, AdaptiveRun, Landings, run_adaptive_batch,
};
use crate::gpu::shape::AdaptiveShape;
use crate::gpu::{self, BatchOptions, Gpu, GpuLayout, GpuSimulation, LayoutRequest};
use crate::gpu::{GpuError, MISSING_SAMPLE_M, Precision};
use crate::model::{Tether, TetherParams};
use crate::objective::{SwingupObjective, frame_error, identification_error};
use crate::scenario::batch::{
    BatchError, StepCache, adaptive_as_gpu_outcome, adaptive_landings, adaptive_options,
    adaptive_report, first_frame_simulated, gpu_output, gpu_simulation,
};
use crate::scenario::{
    NodalStates, Scenario, SimulationOutput, SolverReport, SolverSettings, simulate,
    simulate_watched, simulate_with_states,
};
use crate::scheme::FixedStepScheme;
use crate::solver::{ImplicitMethod, ReferenceOptions, SolverError, SolverKind};
use crate::status::RunStatus;
use crate::track::MeasuredTrack;

/// A kind of engine with what it runs on: the CPU's cores, or an open GPU.
/// Cloning shares the device.
#[derive(Clone)]
pub struct Engine {
    on: On,
    /// Fixed steps chosen before (while counting the job's work), reused.
    steps: Arc<StepCache>,
}

#[derive(Clone)]
enum On {
    Cpu(SolverSettings),
    Gpu { gpu: Arc<Gpu>, run: GpuRun },
}

/// How the GPU runs a batch.
#[derive(Debug, Clone, Copy)]
struct GpuRun {
    precision: Precision,
    scheme: FixedStepScheme,
    layout: LayoutRequest,
    /// A fixed step asked for [s]; None: the model's.
    step_s: Option<f64>,
    /// The adaptive implicit scheme's settings (`gpu::adaptive`) instead
    /// of the fixed-step scheme. The simulations are still planned as the
    /// fixed-step stages upload them (`scheme`), on a step of one sample
    /// interval that the adaptive stage ignores: the model's step would
    /// cost a modal analysis per simulation on the host, for nothing.
    adaptive: Option<ReferenceOptions>,
    /// The adaptive scheme's lanes a simulation; None: the cost model's
    /// per batch (`gpu::shape::AdaptiveShape::for_batch`).
    adaptive_lanes: Option<u32>,
}

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
    fn stopped(status: RunStatus) -> Self {
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

/// A batch made ready to run ([`Engine::prepare`]): on the GPU, every
/// simulation's initial state, step and frames worked out on the CPU, so
/// that running it again (the bench's repeats) times the device alone.
pub struct PreparedBatch<'a> {
    simulations: &'a [Simulation],
    measured: Option<&'a MeasuredTrack>,
    gpu: Option<GpuBatch>,
}

struct GpuBatch {
    simulations: Vec<GpuSimulation>,
    /// J_e of each scored simulation's compared frames that the model shows
    /// still held (scored on the host from the initial shape).
    held_m2: Vec<f64>,
    /// The measured samples of the compared frames, frame-major.
    measured_frames: Option<Vec<[f64; 2]>>,
}

impl Engine {
    /// The CPU running `settings` on all cores.
    pub fn cpu(settings: SolverSettings) -> Self {
        Self {
            on: On::Cpu(settings),
            steps: Arc::default(),
        }
    }

    /// `kind` on `gpu`, or on the CPU when `kind` is a CPU engine.
    pub fn new(kind: EngineKind, gpu: Arc<Gpu>) -> Self {
        let on = match kind {
            EngineKind::Cpu(settings) => On::Cpu(settings),
            EngineKind::Gpu {
                precision,
                scheme,
                layout,
            } => On::Gpu {
                gpu,
                run: GpuRun {
                    precision,
                    scheme,
                    layout,
                    step_s: None,
                    adaptive: None,
                    adaptive_lanes: None,
                },
            },
            EngineKind::GpuAdaptive {
                precision,
                reference,
            } => On::Gpu {
                gpu,
                run: GpuRun {
                    precision,
                    // Its step taken as given, with no stability limit
                    // to check (see `adaptive`).
                    scheme: FixedStepScheme::Explicit,
                    layout: LayoutRequest::Workgroup,
                    step_s: None,
                    adaptive: Some(reference),
                    adaptive_lanes: None,
                },
            },
        };
        Self {
            on,
            steps: Arc::default(),
        }
    }

    /// `kind` on `gpu` where it is a GPU engine, which then needs one.
    pub fn open(kind: EngineKind, gpu: Option<&Arc<Gpu>>) -> Result<Self, GpuError> {
        match (kind, gpu) {
            (EngineKind::Cpu(settings), _) => Ok(Self::cpu(settings)),
            (_, Some(gpu)) => Ok(Self::new(kind, Arc::clone(gpu))),
            (_, None) => Err(GpuError::NoAdapter),
        }
    }

    /// The same engine on a fixed step of `step_s` (None: the model's), as
    /// `simulate --step` asks; the adaptive reference solver ignores it.
    pub fn with_step(self, step_s: Option<f64>) -> Self {
        let on = match self.on {
            On::Cpu(settings) => On::Cpu(SolverSettings { step_s, ..settings }),
            On::Gpu { gpu, run } => On::Gpu {
                gpu,
                run: GpuRun { step_s, ..run },
            },
        };
        Self { on, ..self }
    }

    /// The same engine reusing the fixed steps in `steps`.
    pub fn with_steps(self, steps: Arc<StepCache>) -> Self {
        Self { steps, ..self }
    }

    /// The same engine in GPU layout `layout` (no change on the CPU).
    pub fn with_layout(self, layout: LayoutRequest) -> Self {
        let on = match self.on {
            On::Gpu { gpu, run } => On::Gpu {
                gpu,
                run: GpuRun { layout, ..run },
            },
            cpu => cpu,
        };
        Self { on, ..self }
    }

    /// The same engine with the adaptive scheme's lanes a simulation fixed
    /// at `lanes` (None: the cost model's per batch); no change to the
    /// other engines.
    pub fn with_adaptive_lanes(self, lanes: Option<u32>) -> Self {
        let on = match self.on {
            On::Gpu { gpu, run } if run.adaptive.is_some() => On::Gpu {
                gpu,
                run: GpuRun {
                    adaptive_lanes: lanes,
                    ..run
                },
            },
            other => other,
        };
        Self { on, ..self }
    }

    pub fn kind(&self) -> EngineKind {
        match &self.on {
            On::Cpu(settings) => EngineKind::Cpu(*settings),
            On::Gpu { run, .. } => match run.adaptive {
                Some(reference) => EngineKind::GpuAdaptive {
                    precision: run.precision,
                    reference,
                },
                None => EngineKind::Gpu {
                    precision: run.precision,
                    scheme: run.scheme,
                    layout: run.layout,
                },
            },
        }
    }

    /// The reference solver's options, when it is the engine's solver (on
    /// the GPU, the adaptive stage's).
    pub fn reference(&self) -> Option<ReferenceOptions> {
        match &self.on {
            On::Cpu(settings) if settings.kind == SolverKind::Reference => Some(settings.reference),
            On::Gpu { run, .. } => run.adaptive,
            _ => None,
        }
    }

    /// The reference solver's local error tolerance \[m\], when it is the
    /// engine's solver.
    pub fn tolerance_m(&self) -> Option<f64> {
        self.reference().map(|r| r.tolerance_m)
    }

    /// The reference solver's implicit method, when it is the engine's
    /// solver.
    pub fn implicit_method(&self) -> Option<ImplicitMethod> {
        self.reference().map(|r| r.method)
    }

    /// The open GPU, for what the engine's device is (its name, limits).
    pub fn gpu(&self) -> Option<&Gpu> {
        match &self.on {
            On::Gpu { gpu, .. } => Some(gpu),
            On::Cpu(_) => None,
        }
    }

    /// The open adapter's name, on the GPU.
    pub fn adapter_name(&self) -> Option<&str> {
        self.gpu().map(|g| g.adapter.name.as_str())
    }

    /// The device as a terminal or a table names it: the adapter, or
    /// `CPU, 2 threads`.
    pub fn device_name(&self) -> String {
        self.adapter_name()
            .map_or_else(EngineKind::cpu_device_name, str::to_string)
    }

    /// Runs one simulation with its track kept; a run that blows up is an
    /// error.
    pub fn simulate(
        &self,
        scenario: &Scenario,
        params: &TetherParams,
    ) -> Result<SimulationOutput, BatchError> {
        match &self.on {
            On::Gpu { gpu, run } => {
                let simulation = Simulation {
                    scenario: scenario.clone(),
                    params: params.clone(),
                    keep_track: true,
                    abandon_above_m2: None,
                };
                let batch = self.gpu_batch(run, std::slice::from_ref(&simulation), None)?;
                let sim = &batch.simulations[0];
                if let Some(reference) = run.adaptive {
                    let adaptive = run_adaptive(gpu, run, reference, &batch, &[scenario], None)?;
                    let outcome = adaptive_as_gpu_outcome(&adaptive[0]);
                    let mut output = gpu_output(scenario, sim, &outcome, run.precision)?;
                    output.report =
                        adaptive_report(&adaptive[0], run.precision, reference.tolerance_m);
                    return Ok(output);
                }
                let outcome = gpu::run_batch(gpu, &batch.simulations, None, &run.options())?;
                Ok(gpu_output(scenario, sim, &outcome[0], run.precision)?)
            }
            On::Cpu(settings) => Ok(simulate(scenario, params, settings)?),
        }
    }

    /// [`Self::simulate`] with the nodal state at every frame kept, on
    /// the CPU; None on the GPU, whose engine reads back markers only.
    pub fn simulate_with_states(
        &self,
        scenario: &Scenario,
        params: &TetherParams,
    ) -> Option<Result<(SimulationOutput, NodalStates), BatchError>> {
        match &self.on {
            On::Cpu(settings) => {
                Some(simulate_with_states(scenario, params, settings).map_err(Into::into))
            }
            On::Gpu { .. } => None,
        }
    }

    /// Runs GPU simulations a workflow built itself, where no scenario
    /// describes the run (the arm carrying the tether: its pin on the
    /// arm's line), on this engine's fixed-step GPU scheme, precision and
    /// layout; outcomes in their order. A CPU or adaptive engine refuses.
    pub fn run_built(&self, sims: &[GpuSimulation]) -> Result<Vec<GpuOutcome>, GpuError> {
        match &self.on {
            On::Gpu { gpu, run } if run.adaptive.is_none() => {
                if let Some(other) = sims.iter().find(|s| s.scheme != run.scheme) {
                    return Err(InputError::new(
                        "scheme",
                        other.scheme.name(),
                        format!("{}, the engine's", run.scheme.name()),
                    )
                    .into());
                }
                gpu::run_batch(gpu, sims, None, &run.options())
            }
            _ => Err(InputError::new(
                "engine",
                self.device_name(),
                "the GPU engine with a fixed-step scheme",
            )
            .into()),
        }
    }

    /// Runs `simulations`, scoring those that do not keep their track
    /// against `measured` (J_e) when given; outcomes in their order.
    pub fn run(
        &self,
        simulations: &[Simulation],
        measured: Option<&MeasuredTrack>,
        hooks: RunHooks<'_>,
    ) -> Result<Vec<Outcome>, BatchError> {
        self.execute(&self.prepare(simulations, measured)?, hooks)
    }

    /// Works out what a run of `simulations` needs before it starts.
    pub fn prepare<'a>(
        &self,
        simulations: &'a [Simulation],
        measured: Option<&'a MeasuredTrack>,
    ) -> Result<PreparedBatch<'a>, BatchError> {
        let gpu = match self.on {
            On::Gpu { run, .. } => Some(self.gpu_batch(&run, simulations, measured)?),
            On::Cpu(_) => None,
        };
        Ok(PreparedBatch {
            simulations,
            measured,
            gpu,
        })
    }

    /// Runs a prepared batch.
    pub fn execute(
        &self,
        prepared: &PreparedBatch<'_>,
        hooks: RunHooks<'_>,
    ) -> Result<Vec<Outcome>, BatchError> {
        match (&self.on, &prepared.gpu) {
            (On::Cpu(settings), _) => {
                execute_cpu(settings, prepared.simulations, prepared.measured, hooks)
            }
            (On::Gpu { gpu, run }, Some(batch)) => execute_gpu(gpu, run, prepared, batch, hooks),
            (On::Gpu { run, .. }, None) => {
                let batch = self.gpu_batch(run, prepared.simulations, prepared.measured)?;
                self.execute(
                    &PreparedBatch {
                        gpu: Some(batch),
                        ..*prepared
                    },
                    hooks,
                )
            }
        }
    }

    /// The GPU layout a prepared batch runs in (`--gpu-layout auto` picks
    /// per batch); None on the CPU.
    pub fn layout_of(&self, prepared: &PreparedBatch<'_>) -> Result<Option<GpuLayout>, BatchError> {
        match (&self.on, &prepared.gpu) {
            // The adaptive stage has one layout: simulations of a workgroup
            // sharing its lanes.
            (On::Gpu { run, .. }, Some(_)) if run.adaptive.is_some() => {
                Ok(Some(GpuLayout::Workgroup))
            }
            (On::Gpu { gpu, run }, Some(batch)) if !batch.simulations.is_empty() => Ok(Some(
                gpu::dispatch::assign_layouts(gpu, &batch.simulations, &run.options())?[0],
            )),
            _ => Ok(None),
        }
    }

    /// The adaptive stage's shape a prepared batch runs in; None on the
    /// other engines.
    pub fn adaptive_shape_of(
        &self,
        prepared: &PreparedBatch<'_>,
    ) -> Result<Option<AdaptiveShape>, BatchError> {
        match (&self.on, &prepared.gpu) {
            (On::Gpu { gpu, run }, Some(batch)) if run.adaptive.is_some() => {
                Ok(Some(adaptive_shape(gpu, run, batch)?))
            }
            _ => Ok(None),
        }
    }

    fn gpu_batch(
        &self,
        run: &GpuRun,
        simulations: &[Simulation],
        measured: Option<&MeasuredTrack>,
    ) -> Result<GpuBatch, BatchError> {
        let scheme = run.scheme;
        let planned = simulations
            .par_iter()
            .map(|s| {
                let step_s = match run.adaptive {
                    Some(_) => Some(s.scenario.sample_interval_s()),
                    None => run.step_s,
                };
                let mut sim = gpu_simulation(&s.scenario, &s.params, scheme, step_s, &self.steps)?;
                let held = match measured {
                    Some(m) if !s.keep_track => {
                        sim.compare_measured = true;
                        // J_e compares every frame but the film's first.
                        if first_frame_simulated(&s.scenario) {
                            sim.frames.remove(0);
                        }
                        let held = held_error_m2(m, &s.scenario, &sim)?;
                        // The shader sums the frames it simulates.
                        sim.abandon_above_m2 = s.abandon_above_m2.map(|b| b - held);
                        held
                    }
                    _ => 0.0,
                };
                sim.record_track = s.keep_track;
                Ok((sim, held))
            })
            .collect::<Result<Vec<_>, SolverError>>()?;
        let (simulations_gpu, held_m2) = planned.into_iter().unzip();
        let measured_frames = match measured {
            Some(m) => measured_frames(m, simulations)?,
            None => None,
        };
        Ok(GpuBatch {
            simulations: simulations_gpu,
            held_m2,
            measured_frames,
        })
    }
}

impl GpuRun {
    fn options(&self) -> BatchOptions<'static> {
        BatchOptions {
            precision: self.precision,
            layout: self.layout,
            ..Default::default()
        }
    }
}

/// The GPU's adaptive scheme on a planned batch (`scenarios` in its
/// order): each simulation landing on its frames and samples, at the
/// reference solver's settings, in `run`'s precision and lanes.
fn run_adaptive(
    gpu: &Gpu,
    run: &GpuRun,
    reference: ReferenceOptions,
    batch: &GpuBatch,
    scenarios: &[&Scenario],
    cancel: Option<&AtomicBool>,
) -> Result<Vec<AdaptiveOutcome>, GpuError> {
    let landings: Vec<Landings> = scenarios
        .iter()
        .zip(&batch.simulations)
        .map(|(scenario, sim)| adaptive_landings(scenario, sim))
        .collect();
    crate::gpu::adaptive::check_method(reference.method)?;
    let options = vec![adaptive_options(&reference); landings.len()];
    run_adaptive_batch(
        gpu,
        &AdaptiveBatch {
            sims: &batch.simulations,
            landings: &landings,
            options: &options,
            measured: batch.measured_frames.as_deref(),
        },
        &AdaptiveRun {
            precision: run.precision,
            shape: Some(adaptive_shape(gpu, run, batch)?),
            cancel,
            ..Default::default()
        },
    )
}

/// The adaptive stage's shape for a planned batch: the lanes `run` fixes,
/// else the stage's choice for the batch ([`AdaptiveShape::for_batch`]).
fn adaptive_shape(gpu: &Gpu, run: &GpuRun, batch: &GpuBatch) -> Result<AdaptiveShape, GpuError> {
    match run.adaptive_lanes {
        Some(lanes) => Ok(AdaptiveShape::with_lanes(lanes)),
        None => {
            let elements: Vec<usize> = batch
                .simulations
                .iter()
                .map(|s| s.params.elements)
                .collect();
            AdaptiveShape::for_batch(gpu, run.precision, &elements)
        }
    }
}

/// The GPU's run of a prepared batch, its outcomes in the engine's terms.
fn execute_gpu(
    gpu: &Gpu,
    run: &GpuRun,
    prepared: &PreparedBatch<'_>,
    batch: &GpuBatch,
    hooks: RunHooks<'_>,
) -> Result<Vec<Outcome>, BatchError> {
    let precision = run.precision;
    let count = batch.simulations.len() as u64;
    // The GPU counts element-steps; the caller counts simulations.
    let in_simulations = |done: u64, of: u64| {
        if let Some(report) = hooks.progress {
            let ran = count as u128 * done as u128 / of.max(1) as u128;
            report(ran as u64, count);
        }
    };
    let options = BatchOptions {
        cancel: hooks.cancel,
        progress: hooks
            .progress
            .map(|_| &in_simulations as &(dyn Fn(u64, u64) + Sync)),
        ..run.options()
    };
    // The adaptive scheme's own reports, for the tracks kept.
    let mut reports: Vec<Option<SolverReport>> = vec![None; batch.simulations.len()];
    let outcomes: Vec<GpuOutcome> = match run.adaptive {
        Some(reference) => {
            let scenarios: Vec<&Scenario> =
                prepared.simulations.iter().map(|s| &s.scenario).collect();
            let adaptive = run_adaptive(gpu, run, reference, batch, &scenarios, hooks.cancel)?;
            for (report, a) in reports.iter_mut().zip(&adaptive) {
                *report = Some(adaptive_report(a, precision, reference.tolerance_m));
            }
            adaptive.iter().map(adaptive_as_gpu_outcome).collect()
        }
        None => gpu::run_batch(
            gpu,
            &batch.simulations,
            batch.measured_frames.as_deref(),
            &options,
        )?,
    };
    prepared
        .simulations
        .iter()
        .zip(&batch.simulations)
        .zip(&batch.held_m2)
        .zip(outcomes.into_iter().zip(reports))
        .map(|(((s, sim), held), (out, report))| {
            // A GPU run that did not finish reads as the CPU's solver error.
            let status = on_file_clock(out.status.clone(), &s.scenario);
            let ok = status.is_ok();
            let output = match ok && s.keep_track {
                true => {
                    let mut output = gpu_output(&s.scenario, sim, &out, precision)?;
                    if let Some(report) = report {
                        output.report = report;
                    }
                    Some(output)
                }
                false => None,
            };
            let scored = (ok || status.abandoned_at().is_some())
                && !s.keep_track
                && prepared.measured.is_some();
            let swingup = s
                .scenario
                .as_swingup()
                .filter(|_| ok)
                .map(|swingup| SwingupObjective {
                    weights: swingup.objective_weights,
                    j_a_min: out.swingup_min_m,
                    t_at_min_s: out.swingup_time_s,
                });
            Ok(Outcome {
                status,
                output,
                j_e_m2: scored.then(|| out.identification_error_m2 + held),
                swingup,
                step_s: run.adaptive.is_none().then_some(sim.step_s),
                steps: out.steps,
                layout: Some(out.layout),
                report,
            })
        })
        .collect()
}

/// A GPU simulation's status with an abandon's time on the file's clock,
/// as the CPU reports it (the frame's time in the measured track): the
/// stages count it from the release.
fn on_file_clock(status: RunStatus, scenario: &Scenario) -> RunStatus {
    match status {
        RunStatus::Abandoned { time_s } => {
            let since_release = |t: f64| (scenario.model_time_s(t) - time_s).abs();
            let frame = scenario
                .frame_times_s()
                .into_iter()
                .min_by(|a, b| since_release(*a).total_cmp(&since_release(*b)));
            RunStatus::Abandoned {
                time_s: frame.unwrap_or(time_s),
            }
        }
        other => other,
    }
}

/// The CPU's run: every simulation on its own core, cancelled between
/// simulations (the CPU's only stopping point). A simulation whose solver
/// fails is reported as diverged; one the input makes impossible fails the
/// batch, as on the GPU, where such input stops its set-up.
fn execute_cpu(
    settings: &SolverSettings,
    simulations: &[Simulation],
    measured: Option<&MeasuredTrack>,
    hooks: RunHooks<'_>,
) -> Result<Vec<Outcome>, BatchError> {
    let done = AtomicU64::new(0);
    let total = simulations.len() as u64;
    simulations
        .par_iter()
        .map(|s| {
            if hooks.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Ok(Outcome::stopped(RunStatus::Cancelled));
            }
            let scored = measured.filter(|_| !s.keep_track);
            let result = match (scored, s.abandon_above_m2) {
                (Some(m), Some(bound)) => simulate_bounded(s, settings, m, bound),
                _ => simulate(&s.scenario, &s.params, settings).map(|out| (out, None)),
            };
            if let Some(report) = hooks.progress {
                report(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            }
            match result {
                Ok((out, abandoned)) => {
                    let (step_s, steps) = solver_steps(&out.report);
                    let report = Some(out.report);
                    let (status, j_e_m2) = match abandoned {
                        Some((time_s, partial_m2)) => {
                            (RunStatus::Abandoned { time_s }, Some(partial_m2))
                        }
                        // The whole film's sum, as an unbounded run's.
                        None => (
                            RunStatus::Ok,
                            scored.map(|m| identification_error(m, &out.track)),
                        ),
                    };
                    Ok(Outcome {
                        status,
                        swingup: out.swingup,
                        output: s.keep_track.then_some(out),
                        j_e_m2,
                        step_s,
                        steps,
                        layout: None,
                        report,
                    })
                }
                Err(SolverError::Cancelled) => Ok(Outcome::stopped(RunStatus::Cancelled)),
                Err(e @ SolverError::Input(_)) => Err(e.into()),
                Err(e) => Ok(Outcome::stopped(e.status())),
            }
        })
        .collect()
}

/// A scored CPU run that stops at the first frame where its J_e so far
/// passes `bound_m2`, with that frame's time and the partial J_e (summed
/// as [`identification_error`] sums, frame by frame from the second); a
/// run that passes it at its last frame or never ends as an unbounded
/// one.
fn simulate_bounded(
    s: &Simulation,
    settings: &SolverSettings,
    measured: &MeasuredTrack,
    bound_m2: f64,
) -> Result<(SimulationOutput, Option<(f64, f64)>), SolverError> {
    let mut partial_m2 = -0.0;
    let mut first = true;
    let mut stop = |t: f64, positions: &[[f64; 2]]| {
        if std::mem::take(&mut first) {
            return false;
        }
        partial_m2 += frame_error(measured, t, positions);
        partial_m2 > bound_m2
    };
    let (out, stopped) = simulate_watched(&s.scenario, &s.params, settings, &mut stop)?;
    // Past the bound only at its last frame, it finished: its whole sum.
    let finished = out.track.times_s.len() == s.scenario.frame_times_s().len();
    let at =
        (stopped && !finished).then(|| (*out.track.times_s.last().expect("a frame"), partial_m2));
    Ok((out, at))
}

/// A run's step (None for the adaptive reference solver) and step count.
fn solver_steps(report: &SolverReport) -> (Option<f64>, u64) {
    match *report {
        SolverReport::FixedStep { step_s, steps, .. } | SolverReport::Gpu { step_s, steps, .. } => {
            (Some(step_s), steps)
        }
        SolverReport::Reference(s) => (None, s.steps),
        SolverReport::GpuAdaptive { steps, .. } => (None, steps),
    }
}

/// The measured samples the GPU compares, frame-major, for the scored
/// simulations of a batch: they share the film's frames and markers (the
/// shader indexes them by frame), so a batch mixing films is refused.
fn measured_frames(
    measured: &MeasuredTrack,
    simulations: &[Simulation],
) -> Result<Option<Vec<[f64; 2]>>, BatchError> {
    let mut scored = simulations.iter().filter(|s| !s.keep_track);
    let Some(first) = scored.next() else {
        return Ok(None);
    };
    let times = first.scenario.compared_frame_times_s();
    let markers = first.scenario.marker_arc_lengths_m.len();
    if let Some(other) = scored.find(|s| {
        s.scenario.compared_frame_times_s() != times
            || s.scenario.marker_arc_lengths_m.len() != markers
    }) {
        return Err(BatchError::MixedFilms(format!(
            "{} frames of {markers} markers against {} of {}",
            times.len(),
            other.scenario.compared_frame_times_s().len(),
            other.scenario.marker_arc_lengths_m.len()
        )));
    }
    let mut frames = Vec::with_capacity(times.len() * markers);
    for &t in &times {
        // A sample the measurement lacks: the shader skips it.
        frames.extend((0..markers).map(|j| measured.get(t, j).unwrap_or([MISSING_SAMPLE_M; 2])));
    }
    Ok(Some(frames))
}

/// J_e over the compared frames at which the model is still held (at or
/// before the release), which the host scores from the initial shape.
fn held_error_m2(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    sim: &GpuSimulation,
) -> Result<f64, SolverError> {
    let held: Vec<f64> = scenario
        .compared_frame_times_s()
        .into_iter()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
        .collect();
    if held.is_empty() {
        return Ok(0.0);
    }
    let tether = Tether::new(sim.params.clone())?;
    let shape: Vec<[f64; 2]> = scenario
        .marker_arc_lengths_m
        .iter()
        .map(|&s| tether.point(&sim.initial_q, s))
        .collect();
    Ok(held.iter().map(|&t| frame_error(measured, t, &shape)).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::MeasuredTrack;

    fn drop(duration_s: f64) -> Scenario {
        Scenario::new(
            crate::scenario::ScenarioKind::Drop,
            TetherParams::default().length_m,
        )
        .with_duration_s(duration_s)
    }

    fn tether(elements: usize) -> TetherParams {
        TetherParams {
            elements,
            ..TetherParams::default()
        }
    }

    /// The CPU scores a drop against its own track as zero and keeps the
    /// track where asked; a simulation the input makes impossible fails
    /// the batch instead of passing as a diverged candidate.
    #[test]
    fn the_cpu_scores_keeps_and_refuses_what_cannot_run() {
        let engine = Engine::cpu(SolverSettings::reference());
        let scenario = drop(0.12);
        let truth = engine.simulate(&scenario, &tether(4)).unwrap();
        let measured = MeasuredTrack::from_track(&truth.track);
        let simulations = [true, false].map(|keep_track| Simulation {
            scenario: scenario.clone(),
            params: tether(4),
            keep_track,
            abandon_above_m2: None,
        });
        let outcomes = engine
            .run(&simulations, Some(&measured), RunHooks::default())
            .unwrap();
        assert!(outcomes[0].output.is_some() && outcomes[0].j_e_m2.is_none());
        assert_eq!(outcomes[1].j_e_m2, Some(0.0));
        let impossible = Simulation {
            scenario: drop(-1.0),
            ..simulations[1].clone()
        };
        let refused = engine.run(&[impossible], Some(&measured), RunHooks::default());
        assert!(
            matches!(refused, Err(BatchError::Solver(SolverError::Input(_)))),
            "{refused:?}"
        );
    }
}
