//! Throughput of the engines on batches of drops (the `bench` command):
//! the GPU engine's explicit and semi-implicit schemes in f32 and f64, and
//! the CPU explicit, semi-implicit and
//! reference solvers on all cores. A batch of size B spreads D over
//! 0–10000 Pa·s and C_D over 0.6–0.9, so its simulations need very
//! different step counts, as in a real identification grid.

use std::time::Instant;

use serde::Serialize;

use crate::engine::{Engine, EngineKind, Outcome, RunHooks, Simulation};
use crate::gpu::timing::StageTime;
use crate::gpu::{self, Gpu, GpuLayout, Precision};
use crate::model::TetherParams;
use crate::scenario::batch::BatchError;
use crate::scenario::{Scenario, ScenarioKind};
use crate::scheme::FixedStepScheme;
use crate::solver::SolverKind;

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct BenchRow {
    pub engine: EngineKind,
    pub device: String,
    pub elements: usize,
    pub batch: usize,
    /// The fastest of `repeats` timed runs.
    pub wall_s: f64,
    pub repeats: usize,
    /// Σ steps × n over the batch (the reference solver's implicit steps
    /// are far costlier and fewer; its count is not comparable).
    pub element_steps: u64,
    pub simulations_per_s: f64,
    pub element_steps_per_s: f64,
    /// From `gpu::flops::per_element_step`: the explicit engines and the
    /// GPU's semi-implicit one (the CPU semi-implicit solver assembles and
    /// factors a banded matrix instead; its work is not that count); for
    /// the GPU's adaptive scheme, from each simulation's attempted steps,
    /// Newton iterations and factorizations (`gpu::cost::adaptive_work_flops`).
    pub gflops: Option<f64>,
    /// The measured multiply-add peak of the device that ran it, and the
    /// fraction of it reached.
    pub peak_gflops: Option<f64>,
    pub peak_fraction: Option<f64>,
    /// GPU engines: host time to prepare the batch before the timed run
    /// (each simulation's step from a modal analysis, mesh factors). The
    /// CPU solvers do the same inside their timed run.
    pub setup_s: Option<f64>,
    /// GPU engines: the layout and its shape, with the model's numbers.
    pub layout: Option<LayoutFacts>,
    /// GPU engines: where the fastest run's time went (`gpu::timing`).
    pub stages: Option<StageTime>,
}

/// What a GPU row's layout was, and what the cost model counts for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LayoutFacts {
    pub layout: GpuLayout,
    /// Simulations per workgroup (S) and invocations per simulation (T):
    /// the adapter's workgroup size and 1 in the thread layout.
    pub sims_per_workgroup: u32,
    pub lanes: u32,
    /// Workgroup memory per simulation \[bytes\] (0 in the thread layout,
    /// whose state is in private memory).
    pub workgroup_bytes_per_sim: u64,
    /// Flops on one step's serial chain (`gpu::cost`); for the adaptive
    /// stage, the batch's mean per accepted step (its rejected attempts,
    /// Newton iterations and factorizations included).
    pub chain_flops_per_step: u64,
    /// Simulations the device runs at once by the model: its filled rate
    /// over one invocation's (both measured), over the lanes a simulation
    /// takes.
    pub resident_sims: Option<f64>,
}

/// Distinct damping values in a batch. Each needs its own explicit step,
/// from a modal analysis of the tether on the host, so larger batches cycle
/// through these: with 32,768 distinct values the H100 machine's bench
/// spent 90 s outside its timed region, against 15 s inside.
pub const DAMPING_LEVELS: usize = 64;

/// The (D, C_D) of simulation i of a batch of `size`: D over 0–10000 Pa·s
/// in up to [`DAMPING_LEVELS`] levels, C_D over 0.6–0.9.
pub fn batch_parameters(i: usize, size: usize) -> (f64, f64) {
    if size == 1 {
        return (2000.0, 0.8);
    }
    let levels = size.min(DAMPING_LEVELS);
    let damping = 10000.0 * (i % levels) as f64 / (levels - 1) as f64;
    (damping, 0.6 + 0.3 * i as f64 / (size - 1) as f64)
}

fn batch_params(elements: usize, size: usize) -> Vec<TetherParams> {
    (0..size)
        .map(|i| {
            let (d, cd) = batch_parameters(i, size);
            TetherParams {
                elements,
                damping_pa_s: d,
                drag_coefficient: cd,
                ..Default::default()
            }
        })
        .collect()
}

/// What a timed run did: Σ steps × n, and for the GPU's adaptive scheme
/// its counted work (`adaptive` the batch's flops, and the chain flops per
/// accepted step at its lanes).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Work {
    element_steps: u64,
    adaptive_flops: Option<f64>,
    adaptive_chain_per_step: Option<f64>,
    /// Where a GPU run's time went (`gpu::timing`), its stages summed.
    stages: Option<StageTime>,
}

impl Work {
    /// A diverged run is counted as no work: its counts are lost with the
    /// error, and the explicit step here is stable anyway. `lanes`: the
    /// adaptive stage's a simulation.
    fn of(outcomes: &[Outcome], elements: usize, lanes: u32) -> Self {
        let (mut flops, mut chain, mut steps, mut adaptive) = (0.0, 0.0, 0u64, false);
        for o in outcomes {
            if let Some(crate::scenario::SolverReport::GpuAdaptive {
                precision,
                steps: accepted,
                rejected_steps,
                newton_iterations,
                factorizations,
                ..
            }) = o.report
            {
                let work = gpu::cost::AdaptiveWork::counted(
                    elements,
                    (accepted, rejected_steps),
                    newton_iterations,
                    factorizations,
                );
                flops += gpu::cost::adaptive_work_flops(&work, precision);
                chain += gpu::cost::adaptive_chain_flops(&work, lanes, precision);
                steps += accepted;
                adaptive = true;
            }
        }
        Self {
            element_steps: outcomes.iter().map(|o| o.steps * elements as u64).sum(),
            adaptive_flops: adaptive.then_some(flops),
            adaptive_chain_per_step: adaptive.then(|| chain / steps.max(1) as f64),
            stages: None,
        }
    }
}

/// The fastest of `repeats` (at least one) runs of `run`, which returns
/// the work it did, and that work.
fn fastest<E>(repeats: usize, mut run: impl FnMut() -> Result<Work, E>) -> Result<(f64, Work), E> {
    let mut best: Option<(f64, Work)> = None;
    for _ in 0..repeats {
        let started = Instant::now();
        let work = run()?;
        let wall_s = started.elapsed().as_secs_f64();
        if best.is_none_or(|(fastest_s, _)| wall_s < fastest_s) {
            best = Some((wall_s, work));
        }
    }
    Ok(best.expect("at least one run"))
}

fn row(
    engine: EngineKind,
    device: &str,
    elements: usize,
    batch: usize,
    (wall_s, work): (f64, Work),
    repeats: usize,
    peak: Option<f64>,
) -> BenchRow {
    let element_steps = work.element_steps;
    // The CPU semi-implicit solver assembles and factors a banded matrix,
    // and the reference solver's steps are implicit: neither is that count.
    let counted = match engine {
        EngineKind::Cpu(s) if s.kind == SolverKind::Explicit => Some(FixedStepScheme::Explicit),
        EngineKind::Cpu(_) | EngineKind::GpuAdaptive { .. } => None,
        EngineKind::Gpu { scheme, .. } => Some(scheme),
    };
    let flops = match counted {
        Some(scheme) => Some(element_steps as f64 * gpu::flops::per_element_step(scheme) as f64),
        None => work.adaptive_flops,
    };
    let gflops = flops.map(|f| f / wall_s / 1e9);
    BenchRow {
        engine,
        device: device.to_string(),
        elements,
        batch,
        wall_s,
        repeats,
        element_steps,
        simulations_per_s: batch as f64 / wall_s,
        element_steps_per_s: element_steps as f64 / wall_s,
        gflops,
        peak_gflops: peak.filter(|_| gflops.is_some()),
        peak_fraction: gflops.zip(peak).map(|(g, p)| g / p),
        setup_s: None,
        layout: None,
        stages: work.stages,
    }
}

/// The layout facts of a GPU batch of n = `elements` that ran in `layout`.
fn layout_facts(
    gpu: &Gpu,
    layout: GpuLayout,
    elements: usize,
    precision: Precision,
    scheme: FixedStepScheme,
) -> Result<LayoutFacts, gpu::GpuError> {
    let (sims, lanes, bytes, chain) = match layout {
        GpuLayout::Thread => (
            gpu.workgroup_size,
            1,
            0,
            elements as u64 * gpu::flops::per_element_step(scheme),
        ),
        GpuLayout::Workgroup => {
            let (_, shape) = gpu.step_workgroup_pipeline(precision, elements, scheme, None)?;
            (
                shape.sims,
                shape.lanes,
                gpu::layout::slot_bytes(shape.nodes, precision, scheme),
                gpu::cost::workgroup_chain_flops(elements, shape.lanes, scheme),
            )
        }
    };
    let rates = gpu.rates(precision)?;
    Ok(LayoutFacts {
        layout,
        sims_per_workgroup: sims,
        lanes,
        workgroup_bytes_per_sim: bytes,
        chain_flops_per_step: chain,
        resident_sims: Some(rates.device_gflops / rates.invocation_gflops / lanes as f64),
    })
}

/// The adaptive stage's facts for a batch run in `shape`: the shape (the
/// state in storage buffers, none in workgroup memory) and the run's chain
/// per accepted step.
fn adaptive_facts(
    gpu: &Gpu,
    shape: gpu::shape::AdaptiveShape,
    precision: Precision,
    work: &Work,
) -> Result<LayoutFacts, gpu::GpuError> {
    let rates = gpu.rates(precision)?;
    Ok(LayoutFacts {
        layout: GpuLayout::Workgroup,
        sims_per_workgroup: shape.sims,
        lanes: shape.lanes,
        workgroup_bytes_per_sim: 0,
        chain_flops_per_step: work.adaptive_chain_per_step.unwrap_or(0.0).round() as u64,
        resident_sims: Some(rates.device_gflops / rates.invocation_gflops / shape.lanes as f64),
    })
}

/// Runs one engine on one batch of drops of `elements` elements, `repeats`
/// times, and keeps the fastest run (a shared machine's neighbours only
/// ever slow a run down).
pub fn run(
    engine: &Engine,
    scenario: &Scenario,
    (elements, batch): (usize, usize),
    repeats: usize,
    peaks: &Peaks,
) -> Result<BenchRow, BatchError> {
    let repeats = repeats.max(1);
    let simulations: Vec<Simulation> = batch_params(elements, batch)
        .into_iter()
        .map(|params| Simulation {
            scenario: scenario.clone(),
            params,
            keep_track: false,
            abandon_above_m2: None,
        })
        .collect();
    let kind = engine.kind();
    let Some(gpu) = engine.gpu() else {
        let timed = fastest(repeats, || {
            let outcomes = engine.run(&simulations, None, RunHooks::default())?;
            Ok::<Work, BatchError>(Work::of(&outcomes, elements, 1))
        })?;
        return Ok(row(
            kind,
            &engine.device_name(),
            elements,
            batch,
            timed,
            repeats,
            peaks.cpu_f64,
        ));
    };
    let setup = Instant::now();
    let prepared = engine.prepare(&simulations, None)?;
    let setup_s = setup.elapsed().as_secs_f64();
    // The batch's layout (auto picks per batch, not per simulation), then
    // a compile (lavapipe compiles at the first dispatch) outside the
    // timing.
    let ran = engine
        .layout_of(&prepared)?
        .expect("a GPU engine runs in a layout");
    let engine = engine.clone().with_layout(ran.into());
    let precision = kind.precision();
    // The adaptive stage's shape, and so its pipeline, depends on the
    // batch's size: its compile needs the whole batch.
    let shape = match kind.gpu_scheme() {
        Some(_) => {
            engine.run(&simulations[..1], None, RunHooks::default())?;
            None
        }
        None => {
            engine.execute(&prepared, RunHooks::default())?;
            engine.adaptive_shape_of(&prepared)?
        }
    };
    let lanes = shape.map_or(1, |s| s.lanes);
    let timed = fastest(repeats, || {
        gpu.time_stages();
        let outcomes = engine.execute(&prepared, RunHooks::default())?;
        let stages = gpu.stage_times().unwrap_or_default();
        Ok::<Work, BatchError>(Work {
            stages: StageTime::sum(stages.values()),
            ..Work::of(&outcomes, elements, lanes)
        })
    })?;
    let peak = match precision {
        Precision::F32 => peaks.gpu_f32,
        Precision::F64 => peaks.gpu_f64,
    };
    let layout = match (kind.gpu_scheme(), shape) {
        (Some(scheme), _) => Some(layout_facts(gpu, ran, elements, precision, scheme)?),
        (None, Some(shape)) => Some(adaptive_facts(gpu, shape, precision, &timed.1)?),
        (None, None) => None,
    };
    Ok(BenchRow {
        setup_s: Some(setup_s),
        layout,
        ..row(
            kind,
            &gpu.adapter.name,
            elements,
            batch,
            timed,
            repeats,
            peak,
        )
    })
}

/// Measured multiply-add peaks [GFLOP/s].
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Peaks {
    pub gpu_f32: Option<f64>,
    pub gpu_f64: Option<f64>,
    /// The CPU's f64 peak: measured by the peak stage when the adapter is a
    /// CPU emulation (lavapipe compiles it for these same cores), else unknown.
    pub cpu_f64: Option<f64>,
}

impl Peaks {
    pub fn measure(gpu: Option<&Gpu>) -> Result<Self, gpu::GpuError> {
        let Some(gpu) = gpu else {
            return Ok(Self::default());
        };
        let f32 = gpu::rates::measure_peak_gflops(gpu, Precision::F32, 3)?;
        let f64 = if gpu.adapter.shader_f64 {
            Some(gpu::rates::measure_peak_gflops(gpu, Precision::F64, 3)?)
        } else {
            None
        };
        Ok(Self {
            gpu_f32: Some(f32),
            gpu_f64: f64,
            cpu_f64: if gpu.adapter.hardware { None } else { f64 },
        })
    }

    /// How much higher `later`'s largest peak is than this one's, as a
    /// fraction (0 when not higher). A peak measured while a shared machine
    /// was slow makes every fraction of it look better than it was.
    pub fn shortfall_against(&self, later: &Peaks) -> f64 {
        [(self.gpu_f32, later.gpu_f32), (self.gpu_f64, later.gpu_f64)]
            .into_iter()
            .filter_map(|(first, again)| Some(again? / first? - 1.0))
            .fold(0.0, f64::max)
    }
}

/// The drop scenario of the benchmark, shortened to `duration_s`.
pub fn scenario(duration_s: f64) -> Scenario {
    Scenario::new(ScenarioKind::Drop, TetherParams::default().length_m).with_duration_s(duration_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_spread_damping_over_its_range_in_a_bounded_number_of_levels() {
        assert_eq!(batch_parameters(0, 1), (2000.0, 0.8));
        // Small batches: every drop its own D, both ends reached.
        let small: Vec<_> = (0..8).map(|i| batch_parameters(i, 8)).collect();
        assert_eq!(small[0], (0.0, 0.6));
        assert!((small[7].0 - 10000.0).abs() < 1e-9 && (small[7].1 - 0.9).abs() < 1e-12);
        // Large batches: DAMPING_LEVELS distinct D, C_D still spread.
        let large: Vec<_> = (0..1000).map(|i| batch_parameters(i, 1000)).collect();
        let mut levels: Vec<u64> = large.iter().map(|p| p.0.to_bits()).collect();
        levels.sort_unstable();
        levels.dedup();
        assert_eq!(levels.len(), DAMPING_LEVELS);
        assert!(large.iter().all(|p| (0.0..=10000.0).contains(&p.0)));
        assert!((large[999].1 - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_peak_measured_higher_later_is_reported_as_a_shortfall() {
        let peaks = |f32, f64| Peaks {
            gpu_f32: Some(f32),
            gpu_f64: f64,
            cpu_f64: None,
        };
        let first = peaks(100.0, Some(50.0));
        assert_eq!(first.shortfall_against(&peaks(100.0, Some(50.0))), 0.0);
        assert_eq!(first.shortfall_against(&peaks(90.0, Some(40.0))), 0.0);
        let s = first.shortfall_against(&peaks(110.0, Some(60.0)));
        assert!((s - 0.2).abs() < 1e-12, "{s}");
        // A precision measured only once counts for nothing.
        assert_eq!(
            peaks(100.0, None).shortfall_against(&peaks(100.0, Some(60.0))),
            0.0
        );
        assert_eq!(Peaks::default().shortfall_against(&first), 0.0);
    }
}
