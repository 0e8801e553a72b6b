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
//!   ([`calibrate_layouts`]: short drops of the job's largest n, one alone
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
//!   occupancy at rates measured on the stage ([`calibrate_adaptive`]).
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

use std::sync::Arc;
use std::time::Instant;

use super::calibration;
use super::{Backend, Engine, EngineKind, EngineOptions, gpu_scheme};
use crate::gpu::adaptive::{AdaptiveBatch, AdaptiveRun, run_adaptive_batch};
use crate::gpu::adaptive::{check_tolerance, f32_first_pass_tolerance_m};
use crate::gpu::cost::{self, LayoutRates};
use crate::gpu::dispatch::layout_holds;
use crate::gpu::layout::{GpuLayout, LayoutRequest};
use crate::gpu::shape::{AdaptiveShape, ShapeBounds};
use crate::gpu::{BatchOptions, Gpu, GpuError, Precision, run_batch};
use crate::model::TetherParams;
use crate::scenario::batch::{StepCache, adaptive_landings, adaptive_options, gpu_simulation};
use crate::scenario::{Frames, Scenario, ScenarioKind, SolverSettings};
use crate::scheme::FixedStepScheme;
use crate::solver::{ReferenceOptions, ReferenceStats, SolverKind};

/// What a job asks for: its options, and what the choice weighs.
#[derive(Debug, Clone, Copy)]
pub struct EngineRequest<'a> {
    pub options: &'a EngineOptions,
    /// The CPU engine's settings when the CPU runs the job (its solver kind
    /// is `options.solver`, else the job's default).
    pub cpu: SolverSettings,
    /// How many simulations the job runs.
    pub simulations: usize,
    /// Whether the reference solver's tolerance is a first pass's
    /// (identify's scouting, `sweep::accuracy`): its candidates near the
    /// best are re-run at the data's tolerance, with a margin grown from
    /// the shifts measured, so a looser first pass decides nothing and only
    /// re-runs more of them. The GPU's adaptive scheme in f32 then runs at
    /// f32's first-pass tolerance for the job's n where that is looser
    /// ([`adaptive_reference`]).
    pub scouting: bool,
}

/// The work of a job, counted before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// What the job is, for the reason line: "735 drops".
    pub label: String,
    /// Per simulation, in the order the job runs them: (elements n, steps
    /// on the fixed-step scheme).
    pub simulations: Vec<(usize, u64)>,
    /// How many simulations the job runs: more than `simulations` when
    /// those are an even sample of a job too large to count whole (the
    /// estimates scale by the ratio).
    pub stands_for: usize,
    /// How many simulations the job hands the engine at once (its chunks,
    /// run one after another); `usize::MAX`: all.
    pub chunk: usize,
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

    /// The largest n (1 for an empty job).
    pub fn largest_n(&self) -> usize {
        self.simulations.iter().map(|s| s.0).max().unwrap_or(1)
    }

    /// The smallest n (1 for an empty job).
    pub fn smallest_n(&self) -> usize {
        self.simulations.iter().map(|s| s.0).min().unwrap_or(1)
    }

    pub fn elements(&self) -> u64 {
        self.simulations.iter().map(|&(n, _)| n as u64).sum()
    }

    /// How many of the job's simulations each counted one stands for.
    pub fn scale(&self) -> f64 {
        self.stands_for.max(self.simulations.len()) as f64 / self.simulations.len().max(1) as f64
    }
}

pub use crate::gpu::cost::{AdaptiveRates, AdaptiveWork, GpuRates};

/// How the CPU's time is estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuRate {
    /// A fixed-step solver: counted flops at one core's measured rate.
    CoreGflops(f64),
    /// The reference solver: one of the job's simulations timed, seconds per
    /// element of it.
    SecondsPerElement(f64),
}

/// Estimated wall time \[s\] of `work` on the GPU engine with `scheme`, and
/// the layout it assumes: the one asked for, or the faster (`gpu::cost`).
pub fn gpu_seconds(
    work: &Workload,
    scheme: FixedStepScheme,
    layout: LayoutRequest,
    rates: LayoutRates,
) -> (f64, GpuLayout) {
    let chunks = || work.simulations.chunks(work.chunk.max(1));
    let in_layout = |layout: GpuLayout| -> f64 {
        chunks()
            .map(|chunk| cost::layout_seconds(chunk, scheme, layout, rates.get(layout)))
            .sum()
    };
    let (seconds, layout) = match layout.fixed() {
        Some(layout) => (in_layout(layout), layout),
        None => {
            // The engine chooses per chunk, as here.
            let (mut seconds, mut workgroup_chunks) = (0.0, 0);
            for chunk in chunks() {
                let (layout, thread, workgroup) = cost::fastest_layout(chunk, scheme, rates);
                seconds += thread.min(workgroup);
                workgroup_chunks += usize::from(layout == GpuLayout::Workgroup);
            }
            let most = if 2 * workgroup_chunks >= chunks().count() {
                GpuLayout::Workgroup
            } else {
                GpuLayout::Thread
            };
            (seconds, most)
        }
    };
    (seconds * work.scale(), layout)
}

/// Estimated wall time \[s\] of `work` on `threads` CPU cores.
pub fn cpu_seconds(work: &Workload, scheme: FixedStepScheme, rate: CpuRate, threads: usize) -> f64 {
    let threads = threads.max(1) as f64;
    match rate {
        CpuRate::CoreGflops(gflops) => {
            let flops = crate::gpu::flops::per_element_step(scheme) as f64;
            let total = work.element_steps() as f64 * work.scale() * flops / (gflops * 1e9);
            // No core can share one simulation: the longest is a floor.
            let longest = work.longest_element_steps() as f64 * flops / (gflops * 1e9);
            (total / threads).max(longest)
        }
        CpuRate::SecondsPerElement(s) => {
            let longest = work.simulations.iter().map(|&(n, _)| n).max().unwrap_or(0) as f64 * s;
            (work.elements() as f64 * work.scale() * s / threads).max(longest)
        }
    }
}

/// The decision: the engine, with the GPU it runs on (if any), and a line
/// for the user (None when the flags named the backend).
pub struct Choice {
    pub engine: Engine,
    pub reason: Option<String>,
}

/// Why a choice failed: the GPU was asked for and cannot be had, or a
/// measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("estimating the job's work: {0}")]
    Estimate(String),
}

/// The reference solver's scheme on the GPU (gpu::adaptive), at the job's
/// reference settings ([`adaptive_reference`]): `--backend gpu --solver
/// reference`.
fn reference_on_gpu(request: &EngineRequest<'_>, largest: usize) -> Result<Choice, ChoiceError> {
    let options = request.options;
    let reference = adaptive_reference(request, largest);
    crate::gpu::adaptive::check_tolerance(options.precision, reference.tolerance_m)
        .map_err(GpuError::from)?;
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

/// What `probe` answers: the CPU reference solver's seconds per element,
/// timed on a few of the job's own simulations, and what each of them did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuProbe {
    pub seconds_per_element: f64,
    /// The timed simulations' attempted steps, Newton iterations and
    /// factorizations: the GPU's adaptive scheme does the same (it takes
    /// the reference solver's steps).
    pub counted: Vec<AdaptiveWork>,
}

/// What a reference-solver run of `elements` elements did, as the
/// adaptive stage's cost model counts it.
pub fn counted_work(elements: usize, stats: &ReferenceStats) -> AdaptiveWork {
    AdaptiveWork::counted(
        elements,
        (stats.steps, stats.rejected_steps),
        stats.newton_iterations,
        stats.factorizations,
    )
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

/// Why the GPU's adaptive scheme is not weighed for this job, if it is not:
/// another solver asked for, the thread layout asked for, or a tolerance
/// the stage refuses in its precision ([`check_tolerance`]: in f32 one
/// below its floor).
fn adaptive_refusal(request: &EngineRequest<'_>, largest: usize) -> Option<String> {
    let options = request.options;
    if request.cpu.kind != SolverKind::Reference {
        return Some(format!("--solver {}", request.cpu.kind.name()));
    }
    if options.gpu_layout == LayoutRequest::Thread {
        return Some("--gpu-layout thread".into());
    }
    let tolerance_m = adaptive_reference(request, largest).tolerance_m;
    check_tolerance(options.precision, tolerance_m)
        .err()
        .map(|e| {
            format!(
                "its tolerance {tolerance_m:e} m is not one it takes: {}",
                e.allowed
            )
        })
}

/// The reference settings the GPU's adaptive scheme runs the job at: the
/// job's, and for a scouting first pass in f32 no tighter than f32's
/// first-pass tolerance at the job's largest n
/// ([`f32_first_pass_tolerance_m`]: a first pass at 1e-6 m instead of
/// 1e-7 m re-runs 81 candidates of the default grid instead of 50, with
/// the same best, region and refined values, BENCHMARKS.md).
pub fn adaptive_reference(request: &EngineRequest<'_>, largest: usize) -> ReferenceOptions {
    let mut reference = request.cpu.reference;
    if request.scouting && request.options.precision == Precision::F32 {
        reference.tolerance_m = reference
            .tolerance_m
            .max(f32_first_pass_tolerance_m(largest));
    }
    reference
}

/// `--backend auto`: the fastest of the engines the job may run on.
fn auto(
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

/// One engine's estimate: the engine, its wall time \[s\] and how it was
/// made, for the reason line.
#[derive(Debug, Clone)]
pub struct EngineEstimate {
    pub engine: EngineKind,
    pub seconds: f64,
    pub how: String,
}

/// The estimates a choice weighs, measured on this adapter and these cores.
#[derive(Debug, Clone)]
pub struct Estimates {
    pub label: String,
    pub all: Vec<EngineEstimate>,
    /// Why the adaptive scheme was not weighed, if it was not.
    pub left_out: Option<String>,
}

impl Estimates {
    /// The GPU's fixed-step scheme (unless the reference solver was asked
    /// for), its adaptive scheme (where `adaptive_refusal` allows) and,
    /// `with_cpu`, the CPU, for `work`, the job counted on the GPU's
    /// fixed-step scheme (`workload` counts it on the CPU's where that
    /// differs). `auto` measures only on a hardware adapter; this measures
    /// on any.
    pub fn measure(
        gpu: &Gpu,
        request: &EngineRequest<'_>,
        work: Workload,
        (workload, probe): (
            &impl Fn(FixedStepScheme) -> Result<Workload, String>,
            impl FnOnce(&SolverSettings) -> Result<CpuProbe, String>,
        ),
        with_cpu: bool,
    ) -> Result<Self, ChoiceError> {
        let options = request.options;
        let scheme = gpu_scheme(options.solver);
        let largest = work.largest_n();
        let batch = work
            .simulations
            .len()
            .min(work.chunk)
            .clamp(1, PROBE_BATCH_MAX);
        let mut all = Vec::new();
        if options.solver != Some(SolverKind::Reference) {
            all.push(fixed_step_estimate(gpu, options, &work, (largest, batch))?);
        }
        let left_out = adaptive_refusal(request, largest);
        let cpu_scheme = request.cpu.kind.fixed_step_scheme();
        let probed = match cpu_scheme {
            None if with_cpu || left_out.is_none() => {
                Some(probe(&request.cpu).map_err(ChoiceError::Estimate)?)
            }
            _ => None,
        };
        if let (None, Some(probed)) = (&left_out, &probed) {
            all.push(adaptive_estimate(gpu, request, &work, probed, batch)?);
        }
        if with_cpu {
            let threads = rayon::current_num_threads();
            let (rate, cpu_work) = match (cpu_scheme, &probed) {
                (Some(s), _) => (
                    CpuRate::CoreGflops(measure_cpu_core_gflops()),
                    workload(s).map_err(ChoiceError::Estimate)?,
                ),
                (None, probed) => (
                    CpuRate::SecondsPerElement(
                        probed.as_ref().map_or(0.0, |p| p.seconds_per_element),
                    ),
                    work.clone(),
                ),
            };
            all.push(EngineEstimate {
                engine: EngineKind::Cpu(request.cpu),
                seconds: cpu_seconds(&cpu_work, cpu_scheme.unwrap_or(scheme), rate, threads),
                how: format!(
                    "CPU {} solver on {threads} threads",
                    request.cpu.kind.name()
                ),
            });
        }
        Ok(Self {
            label: work.label,
            all,
            left_out,
        })
    }

    /// The engine estimated fastest.
    pub fn fastest(&self) -> &EngineEstimate {
        self.all
            .iter()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .expect("at least one engine is weighed")
    }

    /// The fastest, with the line that says why.
    fn choice(self, gpu: Gpu, what: &str) -> Choice {
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

/// Where `gpu`'s calibrations are kept: a hardware adapter's only. An
/// emulation is calibrated by tests alone (`auto` never weighs it), which
/// leave no file behind.
fn saved_calibrations(gpu: &Gpu) -> Option<std::path::PathBuf> {
    calibration::default_path().filter(|_| gpu.adapter.hardware)
}

/// The GPU's fixed-step scheme on `work`, its layouts' rates measured on
/// drops of the job's largest n, `batch` at once (`(largest, batch)`).
fn fixed_step_estimate(
    gpu: &Gpu,
    options: &EngineOptions,
    work: &Workload,
    (largest, batch): (usize, usize),
) -> Result<EngineEstimate, ChoiceError> {
    let scheme = gpu_scheme(options.solver);
    let measurement = format!(
        "step layouts, {} {}, n = {largest}, {batch} at once",
        options.precision.name(),
        scheme.name()
    );
    let (all_rates, source) = calibration::saved_or_measured(
        saved_calibrations(gpu).as_deref(),
        gpu,
        &measurement,
        || calibrate_layouts(gpu, options.precision, scheme, largest, batch),
    )?;
    gpu.set_layout_rates(options.precision, scheme, all_rates);
    let (seconds, layout) = gpu_seconds(work, scheme, options.gpu_layout, all_rates);
    let rates = all_rates.get(layout);
    Ok(EngineEstimate {
        engine: EngineKind::gpu(options.precision, scheme).with_layout(options.gpu_layout),
        seconds,
        how: format!(
            "GPU {} {}, {} layout (its step measured at n = {largest}: a chain at {:.2} GFLOP/s, {batch} at once at {:.0} GFLOP/s; {source})",
            scheme.name(),
            options.precision.name(),
            layout.name(),
            rates.invocation_gflops,
            rates.device_gflops,
        ),
    })
}

/// The GPU's adaptive scheme on `work`: each simulation doing what the
/// probe's did on average, at rates measured on the stage itself.
fn adaptive_estimate(
    gpu: &Gpu,
    request: &EngineRequest<'_>,
    work: &Workload,
    probed: &CpuProbe,
    batch: usize,
) -> Result<EngineEstimate, ChoiceError> {
    let precision = request.options.precision;
    let largest = work.largest_n();
    let smallest = work.smallest_n();
    // The probe counted the reference solver at the job's tolerance; at a
    // looser scouting one the stage takes fewer steps than counted.
    let reference = adaptive_reference(request, largest);
    let measurement = format!(
        "adaptive stage, {} {reference:?}, n = {smallest} to {largest}, {batch} at once",
        precision.name()
    );
    let (rates, source) = calibration::saved_or_measured(
        saved_calibrations(gpu).as_deref(),
        gpu,
        &measurement,
        || calibrate_adaptive(gpu, precision, &reference, (smallest, largest), batch),
    )?;
    gpu.set_adaptive_rates(precision, rates);
    Ok(EngineEstimate {
        engine: EngineKind::GpuAdaptive {
            precision,
            reference,
        },
        seconds: adaptive_gpu_seconds(work, &probed.counted, rates, ShapeBounds::of(gpu)),
        how: format!(
            "GPU reference solver {} at {:e} m (its attempt measured at n = {smallest} and {largest}: a chain at {:.2} GFLOP/s and {:.2} µs a barrier, {batch} at once at {:.0} GFLOP/s; {source})",
            precision.name(),
            reference.tolerance_m,
            rates.flops.invocation_gflops,
            rates.barrier_lone_s * 1e6,
            rates.flops.device_gflops,
        ),
    })
}

/// Estimated wall time \[s\] of `work` on the GPU's adaptive scheme, chunk
/// after chunk, each in the shape the stage would run it in on a device
/// with `bounds` ([`AdaptiveShape::choose`]): each simulation does what the
/// `counted` ones did on average (the reference solver's steps depend on
/// the damping and the tolerance far more than on n), and none less than
/// the longest of them.
pub fn adaptive_gpu_seconds(
    work: &Workload,
    counted: &[AdaptiveWork],
    rates: AdaptiveRates,
    bounds: ShapeBounds,
) -> f64 {
    let Some(mean) = AdaptiveWork::mean(counted) else {
        return 0.0;
    };
    let seconds: f64 = work
        .simulations
        .chunks(work.chunk.max(1))
        .map(|chunk| {
            let sims: Vec<AdaptiveWork> = chunk
                .iter()
                .map(|&(elements, _)| AdaptiveWork { elements, ..mean })
                .collect();
            let elements: Vec<usize> = chunk.iter().map(|s| s.0).collect();
            let lanes = AdaptiveShape::choose_at(&elements, bounds, rates).lanes;
            let longest = counted
                .iter()
                .map(|w| rates.lone_s(w, lanes))
                .fold(0.0, f64::max);
            cost::adaptive_seconds_at(&sims, rates, lanes).max(longest)
        })
        .sum();
    seconds * work.scale()
}

/// The calibration drops' duration and frame interval [s]: 163
/// semi-implicit steps at n = 50, so that measuring costs a small part of
/// a job, and enough that a submission's fixed cost is a few per cent of a
/// lone drop's time.
const PROBE_DURATION_S: f64 = 0.004;
/// How often the longer calibration drop may double (to 32 times the
/// short one's duration: 5,200 steps at n = 50).
const PROBE_DOUBLINGS: u32 = 5;

/// The most drops in the filled measurement, the landscape's count: an
/// H100 fills better the more it is given (thread layout at n = 40: 2.2 %
/// of its peak with 1,024 drops, 7.7 % with 8,192); a job with fewer is
/// measured at its own count.
pub const PROBE_BATCH_MAX: usize = 32_768;

/// The calibration drops' tether: the identification's typical candidate.
fn calibration_tether(elements: usize) -> TetherParams {
    TetherParams {
        elements,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        ..TetherParams::default()
    }
}

/// A calibration drop of `duration_s`, a frame every [`PROBE_DURATION_S`].
fn calibration_drop(duration_s: f64) -> Scenario {
    Scenario::new(ScenarioKind::Drop, TetherParams::default().length_m)
        .with_frames(Frames::every(PROBE_DURATION_S, duration_s))
}

/// The cost model's rates of each layout that can run drops of `elements`
/// elements on `gpu`, measured on the step pipeline itself: one drop alone
/// gives the chain's rate (a step's counted chain over a step's wall time),
/// `batch` drops at once the device's (their counted lanes × chains over a
/// step's wall time). A step's wall time is the difference between drops
/// of two durations. A layout that cannot hold the drop keeps the peak
/// stage's rates. They are kept in `gpu` for the engine's own layout
/// choice.
pub fn calibrate_layouts(
    gpu: &Gpu,
    precision: Precision,
    scheme: FixedStepScheme,
    elements: usize,
    batch: usize,
) -> Result<LayoutRates, ChoiceError> {
    // Its step, like every drop's on the semi-implicit scheme, is set by
    // elasticity.
    let params = calibration_tether(elements);
    let steps = StepCache::default();
    let calibration = |duration_s: f64| {
        gpu_simulation(&calibration_drop(duration_s), &params, scheme, None, &steps)
            .map_err(|e| ChoiceError::Estimate(format!("a calibration drop: {e}")))
    };
    let short = calibration(PROBE_DURATION_S)?;
    let longer = (1..=PROBE_DOUBLINGS)
        .map(|k| calibration(PROBE_DURATION_S * (1u32 << k) as f64))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rates = LayoutRates::same(gpu.rates(precision)?);
    for layout in GpuLayout::ALL {
        if !layout_holds(gpu, layout, &short, precision) {
            continue;
        }
        let options = BatchOptions {
            precision,
            layout: layout.into(),
            ..Default::default()
        };
        // The first run compiles the pipeline.
        run_batch(gpu, std::slice::from_ref(&short), None, &options)?;
        let timed = |sim: &crate::gpu::GpuSimulation, count: usize| -> Result<f64, ChoiceError> {
            let sims = vec![sim.clone(); count];
            let started = Instant::now();
            run_batch(gpu, &sims, None, &options)?;
            Ok(started.elapsed().as_secs_f64())
        };
        // A step's time is the difference between two durations, without a
        // batch's fixed cost (buffers, uploads, read back), which made the
        // landscape's estimate 18 times its measured time. The longer
        // doubles until its steps take at least as long as the short run in
        // all (a difference within the timing's noise gave rates a
        // million times too high); at the last doubling, the longer run's
        // whole time per step, fixed cost included, bounds it.
        let per_step = |count: usize| -> Result<f64, ChoiceError> {
            let short_s = timed(&short, count)?;
            let mut last = (short_s, &short);
            for long in &longer {
                let long_s = timed(long, count)?;
                if long_s >= 2.0 * short_s {
                    let extra = long.total_steps.saturating_sub(short.total_steps).max(1);
                    return Ok((long_s - short_s) / extra as f64);
                }
                last = (long_s, long);
            }
            let (long_s, long) = last;
            Ok(long_s / long.total_steps.max(1) as f64)
        };
        let lone_s = per_step(1)?;
        let many_s = per_step(batch)?;
        let (chain, _) = cost::chain_and_occupancy(&[(elements, 1)], scheme, layout);
        let (_, occupancy) = cost::chain_and_occupancy(&vec![(elements, 1); batch], scheme, layout);
        rates.set(
            layout,
            GpuRates {
                invocation_gflops: chain / lone_s / 1e9,
                device_gflops: occupancy / many_s / 1e9,
            },
        );
    }
    gpu.set_layout_rates(precision, scheme, rates);
    Ok(rates)
}

/// The cost model's rates of the adaptive stage on `gpu`, measured on the
/// stage itself as [`calibrate_layouts`] measures the fixed-step layouts:
/// drops at the job's `reference` settings, one alone (the chain's costs)
/// and `batch` at once (the device's), in the shape of the job's largest n,
/// an attempt's time the difference between two durations, its flops and
/// barriers counted from what the runs did ([`cost::adaptive_chain_flops`],
/// [`cost::adaptive_barriers`]). Drops of the job's smallest and largest n
/// (`elements`) give the two costs, a flop's and a barrier's; one n, or a
/// fit that leaves either negative (noise), gives flops alone.
pub fn calibrate_adaptive(
    gpu: &Gpu,
    precision: Precision,
    reference: &ReferenceOptions,
    (smallest, largest): (usize, usize),
    batch: usize,
) -> Result<AdaptiveRates, ChoiceError> {
    let shape = AdaptiveShape::most_for(gpu, largest);
    let increment = |elements: usize, count: usize, doublings: u32| {
        adaptive_increment(
            gpu,
            (precision, reference),
            shape,
            (elements, count),
            doublings,
        )
    };
    // The first run compiles the pipeline, which every size shares.
    increment(smallest, 1, 0)?;
    let lone = (
        increment(largest, 1, PROBE_DOUBLINGS)?,
        increment(smallest, 1, PROBE_DOUBLINGS)?,
    );
    let filled = (
        increment(largest, batch, PROBE_DOUBLINGS)?,
        increment(smallest, batch, PROBE_DOUBLINGS)?,
    );
    // Per lane filled: the batch's time shared by its lanes, against
    // the lane-flops a simulation holds filled.
    let lanes = (batch * shape.lanes as usize) as f64;
    let per_lane = |i: Increment| Increment {
        seconds: i.seconds / lanes,
        flops: i.filled_flops / shape.lanes as f64,
        ..i
    };
    let (flop_lone, barrier_lone) = fit_costs(lone.0, lone.1, smallest == largest);
    let (flop_filled, barrier_filled) =
        fit_costs(per_lane(filled.0), per_lane(filled.1), smallest == largest);
    let rates = AdaptiveRates {
        flops: GpuRates {
            invocation_gflops: 1.0 / flop_lone / 1e9,
            device_gflops: 1.0 / flop_filled / 1e9,
        },
        barrier_lone_s: barrier_lone,
        barrier_filled_s: barrier_filled,
        subgroup_width: gpu.adapter.subgroup_width,
        precision,
    };
    gpu.set_adaptive_rates(precision, rates);
    Ok(rates)
}

/// What the longer of two calibration drops added: seconds, and the chain
/// flops, filled lane-flops ([`cost::adaptive_filled_flops`]) and barriers
/// of one of its simulations.
#[derive(Debug, Clone, Copy)]
struct Increment {
    seconds: f64,
    flops: f64,
    filled_flops: f64,
    barriers: f64,
}

/// Seconds per flop and per barrier from two sizes' increments; flops
/// alone where the sizes are one or the fit is not physical.
fn fit_costs(large: Increment, small: Increment, one_size: bool) -> (f64, f64) {
    let flops_only = (large.seconds / large.flops.max(1.0), 0.0);
    if one_size {
        return flops_only;
    }
    let det = large.flops * small.barriers - small.flops * large.barriers;
    if det.abs() <= 1e-9 * (large.flops * small.barriers).abs() {
        return flops_only;
    }
    let per_flop = (large.seconds * small.barriers - small.seconds * large.barriers) / det;
    let per_barrier = (large.flops * small.seconds - small.flops * large.seconds) / det;
    if per_flop > 0.0 && per_barrier >= 0.0 {
        (per_flop, per_barrier)
    } else {
        flops_only
    }
}

/// The increment of `count` drops of `elements` elements in `shape`: the
/// longer drop doubles, as in [`calibrate_layouts`], up to `doublings`
/// times until its extra work stands out of the timing's noise (at the
/// last doubling, the longer run's whole; with none, the short run's).
fn adaptive_increment(
    gpu: &Gpu,
    (precision, reference): (Precision, &ReferenceOptions),
    shape: AdaptiveShape,
    (elements, count): (usize, usize),
    doublings: u32,
) -> Result<Increment, ChoiceError> {
    let params = calibration_tether(elements);
    let steps = StepCache::default();
    let options = adaptive_options(reference);
    let timed = |duration_s: f64| -> Result<Increment, ChoiceError> {
        let scenario = calibration_drop(duration_s);
        let sim = gpu_simulation(
            &scenario,
            &params,
            FixedStepScheme::Explicit,
            Some(scenario.sample_interval_s()),
            &steps,
        )
        .map_err(|e| ChoiceError::Estimate(format!("a calibration drop: {e}")))?;
        let landings = adaptive_landings(&scenario, &sim);
        let sims = vec![sim; count];
        let batch = AdaptiveBatch {
            sims: &sims,
            landings: &vec![landings; count],
            options: &vec![options; count],
            measured: None,
        };
        let run = AdaptiveRun {
            precision,
            shape: Some(shape),
            ..Default::default()
        };
        let started = Instant::now();
        let outcomes = run_adaptive_batch(gpu, &batch, &run)?;
        let seconds = started.elapsed().as_secs_f64();
        let s = outcomes[0].stats;
        let work = AdaptiveWork::counted(
            elements,
            (s.steps, s.rejected_steps),
            s.newton_iterations,
            s.factorizations,
        );
        Ok(Increment {
            seconds,
            flops: cost::adaptive_chain_flops(&work, shape.lanes, precision),
            filled_flops: cost::adaptive_filled_flops(
                &work,
                shape.lanes,
                gpu.adapter.subgroup_width,
                precision,
            ),
            barriers: cost::adaptive_barriers(&work),
        })
    };
    let short = timed(PROBE_DURATION_S)?;
    let mut last = short;
    for k in 1..=doublings {
        let long = timed(PROBE_DURATION_S * (1u32 << k) as f64)?;
        if long.seconds >= 2.0 * short.seconds {
            return Ok(Increment {
                seconds: long.seconds - short.seconds,
                flops: long.flops - short.flops,
                filled_flops: long.filled_flops - short.filled_flops,
                barriers: long.barriers - short.barriers,
            });
        }
        last = long;
    }
    Ok(last)
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
            stands_for: simulations.len(),
            simulations,
            chunk: usize::MAX,
        }
    }

    #[test]
    fn the_gpu_estimate_is_the_longest_chain_or_the_whole_work() {
        let flops = crate::gpu::flops::per_element_step(FixedStepScheme::SemiImplicit) as f64;
        let rates = LayoutRates::same(GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 1000.0,
        });
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
    fn a_jobs_chunks_run_one_after_another() {
        let rates = LayoutRates::same(GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 1e9,
        });
        let whole = work(vec![(50, 1000); 4]);
        let (once, _) = gpu_seconds(
            &whole,
            FixedStepScheme::SemiImplicit,
            LayoutRequest::Thread,
            rates,
        );
        let halves = Workload { chunk: 2, ..whole };
        let (twice, _) = gpu_seconds(
            &halves,
            FixedStepScheme::SemiImplicit,
            LayoutRequest::Thread,
            rates,
        );
        assert!(
            (twice - 2.0 * once).abs() < 1e-12 * twice,
            "{twice} vs {once}"
        );
    }

    #[test]
    fn a_sample_of_the_job_stands_for_all_of_it() {
        let rates = LayoutRates::same(GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 1e3,
        });
        let scheme = FixedStepScheme::SemiImplicit;
        let all = Workload {
            chunk: 64,
            ..work([(10, 1000), (30, 1000)].repeat(512))
        };
        let sample = Workload {
            simulations: all.simulations[..128].to_vec(),
            stands_for: all.simulations.len(),
            ..all.clone()
        };
        let (whole, _) = gpu_seconds(&all, scheme, LayoutRequest::Thread, rates);
        let (sampled, _) = gpu_seconds(&sample, scheme, LayoutRequest::Thread, rates);
        assert!(
            (sampled - whole).abs() < 1e-9 * whole,
            "{sampled} vs {whole}"
        );
        let probe = CpuRate::SecondsPerElement(0.01);
        let (a, b) = (
            cpu_seconds(&all, scheme, probe, 4),
            cpu_seconds(&sample, scheme, probe, 4),
        );
        assert!((a - b).abs() < 1e-9 * a, "{a} vs {b}");
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

    #[test]
    fn the_adaptive_scheme_is_weighed_where_it_can_run_as_counted() {
        let request = |options: &EngineOptions, kind: SolverKind, tolerance_m: f64| {
            let mut cpu = SolverSettings::reference_at(tolerance_m);
            cpu.kind = kind;
            adaptive_refusal(
                &EngineRequest {
                    options,
                    cpu,
                    simulations: 100,
                    scouting: false,
                },
                40,
            )
        };
        let f32 = EngineOptions::default();
        let f64 = EngineOptions {
            precision: Precision::F64,
            ..EngineOptions::default()
        };
        assert_eq!(request(&f64, SolverKind::Reference, 1e-9), None);
        assert_eq!(request(&f32, SolverKind::Reference, 1e-6), None);
        // f32 down to its floor (there in about f64's steps), not below.
        assert_eq!(request(&f32, SolverKind::Reference, 1e-7), None);
        let why = request(&f32, SolverKind::Reference, 5e-8).unwrap();
        assert!(
            why.contains("--precision f64") && why.contains("at least 1e-7 m"),
            "{why}"
        );
        let why = request(&f64, SolverKind::SemiImplicit, 1e-9).unwrap();
        assert!(why.contains("--solver semi-implicit"), "{why}");
        let thread = EngineOptions {
            gpu_layout: LayoutRequest::Thread,
            ..f64
        };
        let why = request(&thread, SolverKind::Reference, 1e-9).unwrap();
        assert!(why.contains("--gpu-layout thread"), "{why}");
    }

    #[test]
    fn only_a_scouting_first_pass_in_f32_is_loosened() {
        let f32 = EngineOptions::default();
        let f64 = EngineOptions {
            precision: Precision::F64,
            ..EngineOptions::default()
        };
        let tolerance = |options: &EngineOptions, scouting: bool, largest: usize| {
            let request = EngineRequest {
                options,
                cpu: SolverSettings::reference_at(1e-7),
                simulations: 100,
                scouting,
            };
            adaptive_reference(&request, largest).tolerance_m
        };
        assert_eq!(tolerance(&f32, true, 40), 1e-6);
        assert_eq!(tolerance(&f32, true, 10), 1e-7);
        assert_eq!(tolerance(&f32, false, 40), 1e-7);
        assert_eq!(tolerance(&f64, true, 40), 1e-7);
    }

    #[test]
    fn the_adaptive_estimate_counts_the_probes_mean_chunk_by_chunk() {
        let rates = GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 1e3,
        };
        let counted = [
            AdaptiveWork {
                elements: 20,
                attempts: 100.0,
                newton_iterations: 300.0,
                factorizations: 20.0,
            },
            AdaptiveWork {
                elements: 20,
                attempts: 300.0,
                newton_iterations: 700.0,
                factorizations: 60.0,
            },
        ];
        let mean = AdaptiveWork {
            elements: 20,
            attempts: 200.0,
            newton_iterations: 500.0,
            factorizations: 40.0,
        };
        let rates = AdaptiveRates::flops_only(rates, 32, Precision::F64);
        let job = work(vec![(20, 0); 4096]);
        let estimate = adaptive_gpu_seconds(&job, &counted, rates, ShapeBounds::HARDWARE);
        let direct = cost::adaptive_seconds(&vec![mean; 4096], rates);
        assert!(
            (estimate - direct).abs() < 1e-12 * direct,
            "{estimate} vs {direct}"
        );
        // Few simulations: the longest counted chain, not the mean's.
        let few = work(vec![(20, 0); 2]);
        let lanes = crate::gpu::layout::adaptive_lanes_for(20);
        let longest = cost::adaptive_chain_flops(&counted[1], lanes, Precision::F64) / 1e9;
        let t = adaptive_gpu_seconds(&few, &counted, rates, ShapeBounds::HARDWARE);
        assert!((t - longest).abs() < 1e-12 * t, "{t} vs {longest}");
        // Chunks run one after another: the few one at a time take twice
        // the longest chain; two halves of the many each take a half's
        // estimate at the lanes chosen for a half, no less than the whole.
        let singles = Workload { chunk: 1, ..few };
        let twice = adaptive_gpu_seconds(&singles, &counted, rates, ShapeBounds::HARDWARE);
        assert!((twice - 2.0 * t).abs() < 1e-12 * twice, "{twice} vs {t}");
        let halves = Workload { chunk: 2048, ..job };
        let split = adaptive_gpu_seconds(&halves, &counted, rates, ShapeBounds::HARDWARE);
        let lanes = cost::adaptive_lanes(&[20; 2048], rates);
        let half = cost::adaptive_seconds_at(&vec![mean; 2048], rates, lanes)
            .max(rates.lone_s(&counted[1], lanes));
        assert!(
            (split - 2.0 * half).abs() < 1e-9 * split,
            "{split} vs {half}"
        );
        assert!(split >= estimate * (1.0 - 1e-9), "{split} vs {estimate}");
        // An emulation of 8-wide subgroups: the few run at 8 lanes, not a
        // lane per element; three workgroups' worth on three threads in
        // three workgroups, though the model alone would pack them in one.
        let emulation = ShapeBounds {
            most_lanes: 8,
            threads: 3,
        };
        let t8 = adaptive_gpu_seconds(&work(vec![(20, 0); 2]), &counted, rates, emulation);
        let longest8 = cost::adaptive_chain_flops(&counted[1], 8, Precision::F64) / 1e9;
        assert!((t8 - longest8).abs() < 1e-12 * t8, "{t8} vs {longest8}");
        let filled = AdaptiveRates {
            barrier_filled_s: 1.0,
            ..rates
        };
        let threes = work(vec![(20, 0); 3 * 8]);
        assert_eq!(
            cost::adaptive_lanes(&[20; 24], filled),
            crate::gpu::layout::MIN_ADAPTIVE_LANES
        );
        let t = adaptive_gpu_seconds(&threes, &counted, filled, emulation);
        let at8 = cost::adaptive_seconds_at(&vec![mean; 24], filled, 8)
            .max(filled.lone_s(&counted[1], 8));
        assert!((t - at8).abs() < 1e-12 * t, "{t} vs {at8}");
    }

    #[test]
    fn two_sizes_give_a_flops_and_a_barriers_cost() {
        let increment = |flops: f64, barriers: f64| Increment {
            seconds: flops * 1e-9 + barriers * 2e-6,
            flops,
            filled_flops: flops,
            barriers,
        };
        let (large, small) = (increment(5e6, 1e3), increment(1e6, 1e3));
        let (per_flop, per_barrier) = fit_costs(large, small, false);
        assert!((per_flop / 1e-9 - 1.0).abs() < 1e-9, "{per_flop}");
        assert!((per_barrier / 2e-6 - 1.0).abs() < 1e-9, "{per_barrier}");
        // One size, or noise that makes a cost negative: flops alone.
        assert_eq!(fit_costs(large, small, true), (large.seconds / 5e6, 0.0));
        let noisy = Increment {
            seconds: small.seconds * 3.0,
            ..small
        };
        assert_eq!(fit_costs(large, noisy, false), (large.seconds / 5e6, 0.0));
    }

    #[test]
    fn a_core_rate_is_measured() {
        let gflops = measure_cpu_core_gflops();
        assert!(gflops.is_finite() && gflops > 0.01, "{gflops}");
    }
}
