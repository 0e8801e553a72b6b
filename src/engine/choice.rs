//! `--backend auto|gpu|cpu` → an [`EngineKind`], an open GPU when the engine
//! needs one, and the reason to print. The one place that decides.
//!
//! `auto` compares two estimates of the job's wall time, made from what
//! this run can count and measure, never from a timing typed into the code:
//!
//! - **GPU**: every simulation's steps on the GPU scheme are counted from
//!   the model (its step and duration), and `gpu::cost` turns them into the
//!   serial chain and the occupancy of each layout (thread: a simulation per
//!   invocation; workgroup: its elements spread over lanes). The job takes
//!   at least its longest chain at the rate of one invocation, and at least
//!   all the occupied lanes' work at the device's rate filled. Both rates
//!   are measured on this adapter, per layout, on the step pipeline itself
//!   ([`calibrate_layouts`](crate::engine::calibrate::calibrate_layouts): short drops of the job's largest n, one alone
//!   and as many as the job runs at once), because the peak stage's
//!   multiply-add chains ran 4× faster than a workgroup step's chain and
//!   the whole device 10–40× faster than either layout fills it (H100,
//!   2026-11-24). With `--gpu-layout auto` the faster layout's estimate
//!   counts, and the engine's own layout choice uses the same rates.
//! - **CPU**: a fixed-step solver's work is counted the same way, at the
//!   rate of one core measured here, spread over the cores; the adaptive
//!   reference solver's work cannot be counted ahead, so a few of the job's
//!   own simulations are timed ([`CpuProbe`]) and the rest scaled by their
//!   element counts.
//! - **GPU, adaptive** (the reference solver's scheme, `gpu::adaptive`):
//!   what those timed simulations did (attempted steps, Newton iterations,
//!   factorizations) is what the stage does, since it takes the solver's
//!   steps; each of the job's simulations is given their mean, and
//!   `gpu::cost::adaptive_seconds` turns that into a chain and an
//!   occupancy at rates measured on the stage ([`calibrate_adaptive`](crate::engine::calibrate::calibrate_adaptive)).
//!   Weighed where the job's solver is the reference solver's, except in
//!   the thread layout and in f32 below its floor (`adaptive_refusal`).
//!
//! `auto` takes the fastest of the three; `--backend gpu` without
//! `--solver` the faster GPU scheme (on a hardware adapter; on an emulation
//! the semi-implicit one, unmeasured).
//!
//! Both GPU calibrations are saved per adapter, driver and build
//! ([`super::calibration`]) and reused by later runs on the machine.
//!
//! Measuring costs time, so it happens only where a decision is open: with
//! no adapter, or only a CPU emulation (lavapipe runs its invocations on
//! these same cores, so it cannot beat the CPU solvers), or a CPU-only
//! solver, the CPU is chosen without measuring.
//!
//! The decision is here; what it weighs is estimated in
//! [`super::estimate`] from rates measured by [`super::calibrate`].

use std::sync::Arc;

use super::estimate::{CpuProbe, Estimates, Workload};
use super::request::{ChoiceError, EngineRequest, adaptive_reference, adaptive_refusal};
use super::{Backend, Engine, EngineKind, gpu_scheme};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::scenario::SolverSettings;
use crate::scheme::FixedStepScheme;
use crate::solver::SolverKind;

/// The decision: the engine, with the GPU it runs on (if any), and a line
/// for the user (None when the flags named the backend).
pub struct Choice {
    pub engine: Engine,
    pub reason: Option<String>,
}

/// The reference solver's scheme on the GPU (gpu::adaptive), at the job's
/// reference settings ([`adaptive_reference`]): `--backend gpu --solver
/// reference`.
pub(super) fn reference_on_gpu(
    request: &EngineRequest<'_>,
    largest: usize,
) -> Result<Choice, ChoiceError> {
    let options = request.options;
    let reference = adaptive_reference(request, largest);
    crate::gpu::adaptive::check_tolerance(options.precision, reference.tolerance_m)
        .map_err(GpuError::from)?;
    crate::gpu::adaptive::check_method(reference.method).map_err(GpuError::from)?;
    let engine = EngineKind::GpuAdaptive {
        precision: options.precision,
        reference,
    };
    let gpu = Gpu::open(options.adapter.as_deref())?;
    Ok(Choice {
        engine: Engine::new(engine, Arc::new(gpu)),
        reason: None,
    })
}

/// Decides where the job runs. `workload(scheme)` counts the job's work on
/// a fixed-step scheme; `probe(settings)` times a few of the job's own
/// simulations on the CPU's reference solver ([`CpuProbe`]). Both are
/// called only when there is a hardware GPU to weigh.
pub fn choose(
    request: EngineRequest<'_>,
    workload: impl Fn(FixedStepScheme) -> Result<Workload, String>,
    probe: impl FnOnce(&SolverSettings) -> Result<CpuProbe, String>,
) -> Result<Choice, ChoiceError> {
    let options = request.options;
    let scheme = gpu_scheme(options.solver);
    let gpu_engine = EngineKind::gpu(options.precision, scheme).with_layout(options.gpu_layout);
    match options.backend {
        Backend::Cpu => Ok(Choice {
            engine: Engine::cpu(request.cpu),
            reason: None,
        }),
        Backend::Gpu if options.solver == Some(SolverKind::Reference) => {
            let work = workload(scheme).map_err(ChoiceError::Estimate)?;
            reference_on_gpu(&request, work.largest_n())
        }
        Backend::Gpu => {
            let gpu = Gpu::open(options.adapter.as_deref())?;
            let fixed = |gpu: Gpu| Choice {
                engine: Engine::new(gpu_engine, Arc::new(gpu)),
                reason: None,
            };
            if options.solver.is_some() || !gpu.adapter.hardware || request.simulations <= 1 {
                return Ok(fixed(gpu));
            }
            let work = workload(scheme).map_err(ChoiceError::Estimate)?;
            if adaptive_refusal(&request, work.largest_n()).is_some() {
                return Ok(fixed(gpu));
            }
            let estimates = Estimates::measure(&gpu, &request, work, (&workload, probe), false)?;
            Ok(estimates.choice(gpu, "solver on the GPU"))
        }
        Backend::Auto => auto(request, workload, probe),
    }
}

/// `--backend auto`: the fastest of the engines the job may run on.
pub(super) fn auto(
    request: EngineRequest<'_>,
    workload: impl Fn(FixedStepScheme) -> Result<Workload, String>,
    probe: impl FnOnce(&SolverSettings) -> Result<CpuProbe, String>,
) -> Result<Choice, ChoiceError> {
    let options = request.options;
    let adapter = options.adapter.as_deref();
    let cpu = |reason: String| Choice {
        engine: Engine::cpu(request.cpu),
        reason: Some(format!("backend auto: CPU ({reason})")),
    };
    if request.simulations <= 1 {
        // The thread layout runs a simulation on one invocation, the
        // workgroup layouts on one workgroup: alone, it leaves the rest of
        // the device idle.
        return Ok(cpu(
            "one simulation: the GPU would run it on a single invocation or workgroup".into(),
        ));
    }
    let gpu = match Gpu::open(adapter) {
        Ok(gpu) => gpu,
        Err(GpuError::NoAdapter) => return Ok(cpu("no GPU adapter".into())),
        Err(e) if adapter.is_none() => {
            return Ok(cpu(format!("the GPU is unusable: {e}")));
        }
        Err(e) => return Err(e.into()),
    };
    if !gpu.adapter.hardware {
        return Ok(cpu(format!(
            "the only GPU adapter, {}, is a CPU emulation on these same cores; --backend gpu runs it",
            gpu.adapter.name
        )));
    }
    if options.precision == Precision::F64 && !gpu.adapter.shader_f64 {
        return Ok(cpu(format!("{} has no f64", gpu.adapter.name)));
    }
    let work = workload(gpu_scheme(options.solver)).map_err(ChoiceError::Estimate)?;
    let estimates = Estimates::measure(&gpu, &request, work, (&workload, probe), true)?;
    Ok(estimates.choice(gpu, "backend auto"))
}

impl Estimates {
    /// The fastest, with the line that says why.
    pub(super) fn choice(self, gpu: Gpu, what: &str) -> Choice {
        let fastest = self.fastest();
        let mut weighed: Vec<String> = self
            .all
            .iter()
            .map(|e| format!("{} ≈ {:.2} s", e.how, e.seconds))
            .collect();
        if let Some(why) = &self.left_out {
            weighed.push(format!("GPU reference solver not weighed: {why}"));
        }
        let engine = fastest.engine;
        let on = match engine {
            EngineKind::Cpu(_) => EngineKind::cpu_device_name(),
            _ => gpu.adapter.name.clone(),
        };
        let reason = format!(
            "{what}: {} on {on} ({}: {})",
            engine.describe(),
            self.label,
            weighed.join("; ")
        );
        let engine = match engine {
            EngineKind::Cpu(settings) => Engine::cpu(settings),
            kind => Engine::new(kind, Arc::new(gpu)),
        };
        Choice {
            engine,
            reason: Some(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;

    #[test]
    fn cpu_requests_never_open_a_gpu() {
        let options = EngineOptions {
            backend: Backend::Cpu,
            ..EngineOptions::default()
        };
        let request = EngineRequest {
            options: &options,
            cpu: SolverSettings::reference(),
            simulations: 100,
            scouting: false,
        };
        let never = |_: FixedStepScheme| -> Result<Workload, String> {
            panic!("nothing to count for a decided backend")
        };
        let no_probe = |_: &SolverSettings| -> Result<CpuProbe, String> { panic!("no probe") };
        let c = choose(request, never, no_probe).unwrap();
        assert!(c.engine.gpu().is_none() && c.reason.is_none());
        assert_eq!(
            c.engine.kind(),
            EngineKind::Cpu(SolverSettings::reference())
        );
    }
}
