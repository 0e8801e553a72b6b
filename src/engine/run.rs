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

use rayon::prelude::*;

use super::EngineKind;
use super::cpu_run::execute_cpu;
use super::gpu_run::{
    GpuBatch, GpuRun, adaptive_shape, execute_gpu, held_error_m2, measured_frames, run_adaptive,
};
pub use super::simulation::{Outcome, Progress, RunHooks, Simulation};
use crate::error::InputError;
use crate::gpu::GpuError;
use crate::gpu::GpuOutcome;
use crate::gpu::shape::AdaptiveShape;
use crate::gpu::{self, Gpu, GpuLayout, GpuSimulation, LayoutRequest};
use crate::model::TetherParams;
use crate::scenario::batch::{
    BatchError, StepCache, adaptive_as_gpu_outcome, adaptive_report, first_frame_simulated,
    gpu_output, gpu_simulation,
};
use crate::scenario::{
    NodalStates, Scenario, SimulationOutput, SolverSettings, simulate, simulate_with_states,
};
use crate::scheme::FixedStepScheme;
use crate::solver::{ImplicitMethod, ReferenceOptions, SolverError, SolverKind};
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

/// A batch made ready to run ([`Engine::prepare`]): on the GPU, every
/// simulation's initial state, step and frames worked out on the CPU, so
/// that running it again (the bench's repeats) times the device alone.
pub struct PreparedBatch<'a> {
    simulations: &'a [Simulation],
    measured: Option<&'a MeasuredTrack>,
    gpu: Option<GpuBatch>,
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
            (On::Gpu { gpu, run }, Some(batch)) => execute_gpu(
                gpu,
                run,
                (prepared.simulations, prepared.measured),
                batch,
                hooks,
            ),
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
                gpu::placement::assign_layouts(gpu, &batch.simulations, run.layout, run.precision)?
                    [0],
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
