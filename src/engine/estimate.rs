//! A job's wall time on each engine, estimated before it runs: its work
//! counted on a fixed-step scheme ([`Workload`]) or timed on a few of its
//! own simulations ([`CpuProbe`]), at rates measured on this adapter and
//! these cores ([`super::calibrate`]). [`super::choice`] decides from them.

use super::calibrate::{
    PROBE_BATCH_MAX, calibrate_adaptive, calibrate_layouts, measure_cpu_core_gflops,
};
use super::calibration;
use super::request::{ChoiceError, EngineRequest, adaptive_reference, adaptive_refusal};
use super::{EngineKind, EngineOptions, gpu_scheme};
use crate::gpu::Gpu;
use crate::gpu::cost::{self, LayoutRates};
use crate::gpu::layout::{GpuLayout, LayoutRequest};
use crate::gpu::shape::{AdaptiveShape, ShapeBounds};
use crate::scenario::SolverSettings;
use crate::scheme::FixedStepScheme;
use crate::solver::{ReferenceStats, SolverKind};

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

/// Where `gpu`'s calibrations are kept: a hardware adapter's only. An
/// emulation is calibrated by tests alone (`auto` never weighs it), which
/// leave no file behind.
pub(super) fn saved_calibrations(gpu: &Gpu) -> Option<std::path::PathBuf> {
    calibration::default_path().filter(|_| gpu.adapter.hardware)
}

/// The GPU's fixed-step scheme on `work`, its layouts' rates measured on
/// drops of the job's largest n, `batch` at once (`(largest, batch)`).
pub(super) fn fixed_step_estimate(
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
pub(super) fn adaptive_estimate(
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Precision;

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
}
