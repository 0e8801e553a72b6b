//! `--backend auto|gpu|cpu` → an [`Engine`], an open GPU when the engine
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
//!   all the occupied lanes' work at the device's peak; both rates are
//!   measured by the peak stage on this adapter (one workgroup, and a full
//!   dispatch). With `--gpu-layout auto` the faster layout's estimate counts.
//! - **CPU**: a fixed-step solver's work is counted the same way, at the
//!   rate of one core measured here, spread over the cores; the adaptive
//!   reference solver's work cannot be counted ahead, so one of the job's
//!   own simulations is timed and the rest scaled by their element counts.
//!
//! Measuring costs time, so it happens only where a decision is open: with
//! no adapter, or only a CPU emulation (lavapipe runs its invocations on
//! these same cores, so it cannot beat the CPU solvers), or a CPU-only
//! solver, the CPU is chosen without measuring.

use std::time::Instant;

use super::{Backend, Engine, gpu_scheme};
use crate::gpu::cost::{self, GpuLayout, LayoutRequest};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::scenario::SolverSettings;
use crate::solver::{FixedStepScheme, SolverKind};

/// What a job asks for.
#[derive(Debug, Clone, Copy)]
pub struct EngineRequest<'a> {
    pub backend: Backend,
    /// `--adapter`: index or part of the name.
    pub adapter: Option<&'a str>,
    /// The GPU's precision (the CPU is f64).
    pub precision: Precision,
    /// `--solver`, if given.
    pub solver: Option<SolverKind>,
    /// The CPU engine's settings when the CPU runs the job (its solver kind
    /// is `solver`, else the job's default).
    pub cpu: SolverSettings,
    /// How many simulations the job runs.
    pub simulations: usize,
    /// `--gpu-layout`.
    pub layout: LayoutRequest,
}

/// The work of a job, counted before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// What the job is, for the reason line: "735 drops".
    pub label: String,
    /// Per simulation: (elements n, steps on the fixed-step scheme).
    pub simulations: Vec<(usize, u64)>,
}

impl Workload {
    /// Σ steps × n.
    pub fn element_steps(&self) -> u64 {
        self.simulations.iter().map(|&(n, s)| n as u64 * s).sum()
    }

    /// The longest simulation's steps × n: one invocation's serial chain.
    pub fn longest_element_steps(&self) -> u64 {
        self.simulations
            .iter()
            .map(|&(n, s)| n as u64 * s)
            .max()
            .unwrap_or(0)
    }

    pub fn elements(&self) -> u64 {
        self.simulations.iter().map(|&(n, _)| n as u64).sum()
    }
}

pub use crate::gpu::cost::GpuRates;

/// How the CPU's time is estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuRate {
    /// A fixed-step solver: counted flops at one core's measured rate.
    CoreGflops(f64),
    /// The reference solver: one of the job's simulations timed, seconds per
    /// element of it.
    SecondsPerElement(f64),
}

/// Estimated wall time [s] of `work` on the GPU engine with `scheme`, and
/// the layout it assumes: the one asked for, or the faster (`gpu::cost`).
pub fn gpu_seconds(
    work: &Workload,
    scheme: FixedStepScheme,
    layout: LayoutRequest,
    rates: GpuRates,
) -> (f64, GpuLayout) {
    match layout.fixed() {
        Some(layout) => (
            cost::layout_seconds(&work.simulations, scheme, layout, rates),
            layout,
        ),
        None => {
            let (layout, thread, workgroup) =
                cost::fastest_layout(&work.simulations, scheme, rates);
            (thread.min(workgroup), layout)
        }
    }
}

/// Estimated wall time [s] of `work` on `threads` CPU cores.
pub fn cpu_seconds(work: &Workload, scheme: FixedStepScheme, rate: CpuRate, threads: usize) -> f64 {
    let threads = threads.max(1) as f64;
    match rate {
        CpuRate::CoreGflops(gflops) => {
            let flops = crate::gpu::flops::per_element_step(scheme) as f64;
            let total = work.element_steps() as f64 * flops / (gflops * 1e9);
            // No core can share one simulation: the longest is a floor.
            let longest = work.longest_element_steps() as f64 * flops / (gflops * 1e9);
            (total / threads).max(longest)
        }
        CpuRate::SecondsPerElement(s) => {
            let longest = work.simulations.iter().map(|&(n, _)| n).max().unwrap_or(0) as f64 * s;
            (work.elements() as f64 * s / threads).max(longest)
        }
    }
}

/// The decision: the engine, the GPU it runs on (if any), and a line for the
/// user (None when the flags named the backend).
pub struct Choice {
    pub engine: Engine,
    pub gpu: Option<Gpu>,
    pub reason: Option<String>,
}

impl Choice {
    /// The open adapter's name, when the GPU runs.
    pub fn adapter_name(&self) -> Option<&str> {
        self.gpu.as_ref().map(|g| g.adapter.name.as_str())
    }
}

/// Why a choice failed: the GPU was asked for and cannot be had, or a
/// measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    #[error(
        "--solver reference runs on the CPU only (the GPU engine runs the explicit and semi-implicit schemes): use --backend cpu, or --solver explicit or semi-implicit"
    )]
    ReferenceOnGpu,
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("estimating the job's work: {0}")]
    Estimate(String),
}

/// Decides where the job runs. `workload(scheme)` counts the job's work on
/// a fixed-step scheme; `probe(settings)` times one of the job's own
/// simulations on the CPU and returns seconds per element. Both are called
/// only when `auto` has a hardware GPU to weigh against the CPU.
pub fn choose(
    request: EngineRequest<'_>,
    workload: impl Fn(FixedStepScheme) -> Result<Workload, String>,
    probe: impl FnOnce(&SolverSettings) -> Result<f64, String>,
) -> Result<Choice, ChoiceError> {
    let cpu_engine = Engine::Cpu(request.cpu);
    let scheme = gpu_scheme(request.solver);
    let gpu_engine = Engine::gpu(request.precision, scheme).with_layout(request.layout);
    let cpu_only = request.solver == Some(SolverKind::Reference);
    match request.backend {
        Backend::Cpu => Ok(Choice {
            engine: cpu_engine,
            gpu: None,
            reason: None,
        }),
        Backend::Gpu if cpu_only => Err(ChoiceError::ReferenceOnGpu),
        Backend::Gpu => Ok(Choice {
            engine: gpu_engine,
            gpu: Some(Gpu::open(request.adapter)?),
            reason: None,
        }),
        Backend::Auto => {
            let cpu = |reason: String| Choice {
                engine: cpu_engine,
                gpu: None,
                reason: Some(format!("backend auto: CPU ({reason})")),
            };
            if cpu_only {
                return Ok(cpu("the reference solver runs on the CPU only".into()));
            }
            if request.simulations <= 1 {
                // The thread layout runs a simulation on one invocation:
                // alone, it leaves every other lane of the device idle.
                return Ok(cpu(
                    "one simulation: the GPU would run it on a single invocation".into(),
                ));
            }
            let gpu = match Gpu::open(request.adapter) {
                Ok(gpu) => gpu,
                Err(GpuError::NoAdapter) => return Ok(cpu("no GPU adapter".into())),
                Err(e) if request.adapter.is_none() => {
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
            if request.precision == Precision::F64 && !gpu.adapter.shader_f64 {
                return Ok(cpu(format!("{} has no f64", gpu.adapter.name)));
            }
            let work = workload(scheme).map_err(ChoiceError::Estimate)?;
            let rates = gpu.rates(request.precision)?;
            let (gpu_s, layout) = gpu_seconds(&work, scheme, request.layout, rates);
            let cpu_scheme = request.cpu.kind.fixed_step_scheme();
            let (cpu_rate, cpu_work) = match cpu_scheme {
                Some(s) => (
                    CpuRate::CoreGflops(measure_cpu_core_gflops()),
                    workload(s).map_err(ChoiceError::Estimate)?,
                ),
                None => (
                    CpuRate::SecondsPerElement(probe(&request.cpu).map_err(ChoiceError::Estimate)?),
                    work.clone(),
                ),
            };
            let threads = rayon::current_num_threads();
            let cpu_s = cpu_seconds(&cpu_work, cpu_scheme.unwrap_or(scheme), cpu_rate, threads);
            let estimates = format!(
                "{}: GPU {}, {} layout ≈ {gpu_s:.2} s (longest chain at {:.2} GFLOP/s per invocation, all work at {:.0} GFLOP/s), CPU {} solver on {threads} threads ≈ {cpu_s:.2} s",
                work.label,
                gpu.adapter.name,
                layout.name(),
                rates.invocation_gflops,
                rates.device_gflops,
                request.cpu.kind.name()
            );
            if gpu_s < cpu_s {
                Ok(Choice {
                    engine: gpu_engine,
                    gpu: Some(gpu),
                    reason: Some(format!("backend auto: GPU ({estimates})")),
                })
            } else {
                Ok(cpu(estimates))
            }
        }
    }
}

/// One core's f64 multiply-add rate [GFLOP/s], in about 20 ms: eight
/// independent chains, as the peak stage runs them.
pub fn measure_cpu_core_gflops() -> f64 {
    const ROUNDS: usize = 1 << 20;
    let mut acc = [1.0f64, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7];
    let (a, b) = (
        std::hint::black_box(0.999_999_9),
        std::hint::black_box(1e-9),
    );
    let started = Instant::now();
    for _ in 0..ROUNDS {
        for x in acc.iter_mut() {
            *x = *x * a + b;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    (ROUNDS * 8 * 2) as f64 / seconds.max(1e-9) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(simulations: Vec<(usize, u64)>) -> Workload {
        Workload {
            label: "test".into(),
            simulations,
        }
    }

    #[test]
    fn the_gpu_estimate_is_the_longest_chain_or_the_whole_work() {
        let flops = crate::gpu::flops::per_element_step(FixedStepScheme::SemiImplicit) as f64;
        let rates = GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 1000.0,
        };
        // Few simulations: one invocation's chain sets the time.
        let few = work(vec![(10, 1000), (50, 1000)]);
        let thread = LayoutRequest::Thread;
        let (t, _) = gpu_seconds(&few, FixedStepScheme::SemiImplicit, thread, rates);
        assert!((t - 50_000.0 * flops / 1e9).abs() < 1e-12 * t, "{t}");
        // The workgroup layout shortens that chain; auto takes the shorter.
        let (auto, layout) = gpu_seconds(
            &few,
            FixedStepScheme::SemiImplicit,
            LayoutRequest::Auto,
            rates,
        );
        assert_eq!(layout, GpuLayout::Workgroup);
        assert!(auto < t / 3.0, "{auto} vs {t}");
        // Very many equal ones: the device's throughput does.
        let many = work(vec![(10, 1000); 100_000]);
        let (t, _) = gpu_seconds(&many, FixedStepScheme::SemiImplicit, thread, rates);
        assert!((t - 1e9 * flops / 1e12).abs() < 1e-9 * t, "{t}");
    }

    #[test]
    fn the_cpu_estimate_spreads_over_threads_but_not_one_simulation() {
        let w = work(vec![(10, 0), (10, 0), (20, 0), (40, 0)]);
        let probe = CpuRate::SecondsPerElement(0.01);
        // 80 elements × 0.01 s over 2 threads.
        assert!((cpu_seconds(&w, FixedStepScheme::Explicit, probe, 2) - 0.4).abs() < 1e-12);
        // 16 threads: the n = 40 simulation alone takes 0.4 s.
        assert!((cpu_seconds(&w, FixedStepScheme::Explicit, probe, 16) - 0.4).abs() < 1e-12);
        let counted = work(vec![(10, 100), (10, 100)]);
        let flops = crate::gpu::flops::per_element_step(FixedStepScheme::Explicit) as f64;
        let t = cpu_seconds(
            &counted,
            FixedStepScheme::Explicit,
            CpuRate::CoreGflops(1.0),
            1,
        );
        assert!((t - 2000.0 * flops / 1e9).abs() < 1e-12 * t);
    }

    #[test]
    fn cpu_and_reference_requests_never_open_a_gpu() {
        let request = |backend, solver| EngineRequest {
            backend,
            adapter: None,
            precision: Precision::F32,
            solver,
            cpu: SolverSettings::reference(),
            simulations: 100,
            layout: LayoutRequest::Auto,
        };
        let never = |_: FixedStepScheme| -> Result<Workload, String> {
            panic!("nothing to count for a decided backend")
        };
        let no_probe = |_: &SolverSettings| -> Result<f64, String> { panic!("no probe") };
        let c = choose(request(Backend::Cpu, None), never, no_probe).unwrap();
        assert!(c.gpu.is_none() && c.reason.is_none());
        assert_eq!(c.engine, Engine::Cpu(SolverSettings::reference()));
        let c = choose(
            request(Backend::Auto, Some(SolverKind::Reference)),
            never,
            no_probe,
        )
        .unwrap();
        assert!(c.gpu.is_none());
        assert!(
            c.reason
                .unwrap()
                .contains("reference solver runs on the CPU only")
        );
        assert!(matches!(
            choose(
                request(Backend::Gpu, Some(SolverKind::Reference)),
                never,
                no_probe
            ),
            Err(ChoiceError::ReferenceOnGpu)
        ));
    }

    #[test]
    fn a_core_rate_is_measured() {
        let gflops = measure_cpu_core_gflops();
        assert!(gflops.is_finite() && gflops > 0.01, "{gflops}");
    }
}
