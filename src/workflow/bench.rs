//! The `bench` job: throughput of every engine this machine has on batches
//! of drops, against the device's measured multiply-add peak, written as a
//! Parquet table. The engines and batches themselves are `crate::throughput`.

use std::path::PathBuf;
use std::sync::Arc;

use super::{WorkflowError, refuse_to_replace};
use crate::engine::{Engine, EngineKind, LayoutRequest};
use crate::error::InputError;
use crate::gpu::{Gpu, GpuError};
use crate::io::table::{Column, write_columns};
use crate::metadata::{self, json};
use crate::model::params::MAX_ELEMENTS;
use crate::scenario::Scenario;
use crate::throughput::{self, BenchRow, Peaks};

/// A benchmark, as the user asked for it.
#[derive(Debug, Clone)]
pub struct BenchRequest {
    pub elements: Vec<usize>,
    pub batch: Vec<usize>,
    /// Simulated time per drop \[s\].
    pub duration_s: f64,
    /// Timed runs per configuration; the fastest is kept.
    pub repeats: usize,
    /// None: every engine this machine has.
    pub engines: Option<Vec<EngineKind>>,
    /// The GPU engines run once in each of these layouts.
    pub gpu_layouts: Vec<LayoutRequest>,
    /// The GPU's reference solver runs once with each of these lanes a
    /// simulation (None: the cost model's choice per batch).
    pub adaptive_lanes: Vec<Option<u32>>,
    pub adapter: Option<String>,
    pub out: PathBuf,
    pub force: bool,
}

/// One configuration: measured, or skipped with the reason.
#[derive(Debug, Clone)]
pub enum BenchOutcome {
    Measured(Box<BenchRow>),
    Skipped {
        engine: EngineKind,
        elements: usize,
        batch: usize,
        reason: String,
    },
}

/// A prepared benchmark: checked, its GPU open and its peaks measured.
pub struct PreparedBench {
    request: BenchRequest,
    scenario: Scenario,
    gpu: Option<Arc<Gpu>>,
    pub engines: Vec<EngineKind>,
    pub peaks: Peaks,
    /// Why there are no GPU engines, when the machine has no usable GPU and
    /// none was named.
    pub no_gpu: Option<String>,
}

/// What the benchmark measured and wrote.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub rows: Vec<BenchRow>,
    pub peaks_after: Peaks,
    /// How much higher the peak measured after the runs (a fraction).
    pub shortfall: f64,
}

pub fn prepare(request: BenchRequest) -> Result<PreparedBench, WorkflowError> {
    for &n in &request.elements {
        if !(1..=MAX_ELEMENTS).contains(&n) {
            return Err(InputError::new(
                crate::model::TetherParams::ELEMENTS,
                n,
                format!("1..={MAX_ELEMENTS}"),
            )
            .into());
        }
    }
    if request.batch.contains(&0) {
        return Err(InputError::new("batch", 0, "a batch size ≥ 1").into());
    }
    if !(1..=100).contains(&request.repeats) {
        return Err(InputError::new("repeats", request.repeats, "1–100 runs").into());
    }
    check_adaptive_lanes(&request.adaptive_lanes)?;
    let scenario = throughput::scenario(request.duration_s);
    scenario.validate(crate::model::TetherParams::default().length_m)?;
    super::output_format(&request.out)?;
    refuse_to_replace(&request.out, request.force)?;
    let wants_gpu = request
        .engines
        .as_ref()
        .is_none_or(|e| e.iter().any(EngineKind::is_gpu));
    let (gpu, no_gpu) = if wants_gpu {
        match Gpu::open(request.adapter.as_deref()) {
            Ok(gpu) => (Some(Arc::new(gpu)), None),
            Err(e) if request.engines.is_none() => (None, Some(e.to_string())),
            Err(e) => return Err(e.into()),
        }
    } else {
        (None, None)
    };
    let engines = request.engines.clone().unwrap_or_else(|| {
        EngineKind::BENCH
            .iter()
            .map(|(_, e)| *e)
            .filter(|e| match (e, &gpu) {
                (EngineKind::Cpu(_), _) => true,
                (EngineKind::Gpu { precision, .. }, Some(g)) => {
                    *precision == crate::gpu::Precision::F32 || g.adapter.shader_f64
                }
                (EngineKind::Gpu { .. }, None) => false,
                // Slow on a CPU emulation: by name only there.
                (EngineKind::GpuAdaptive { precision, .. }, Some(g)) => {
                    g.adapter.hardware
                        && (*precision == crate::gpu::Precision::F32 || g.adapter.shader_f64)
                }
                (EngineKind::GpuAdaptive { .. }, None) => false,
            })
            .collect()
    });
    if engines.iter().any(EngineKind::is_gpu) && gpu.is_none() {
        return Err(GpuError::NoAdapter.into());
    }
    if request.gpu_layouts.is_empty() {
        return Err(InputError::new("gpu_layouts", "none", "at least one layout").into());
    }
    // Each GPU engine once per layout, the CPU engines once.
    let engines: Vec<EngineKind> = engines
        .into_iter()
        .flat_map(|e| match e {
            EngineKind::Gpu { .. } => request
                .gpu_layouts
                .iter()
                .map(|&layout| e.with_layout(layout))
                .collect::<Vec<_>>(),
            cpu => vec![cpu],
        })
        .collect();
    let peaks = Peaks::measure(gpu.as_deref())?;
    Ok(PreparedBench {
        request,
        scenario,
        gpu,
        engines,
        peaks,
        no_gpu,
    })
}

impl PreparedBench {
    /// The adapter and its workgroup size, when a GPU runs.
    pub fn gpu_label(&self) -> Option<String> {
        self.gpu
            .as_ref()
            .map(|g| format!("{} (workgroup {})", g.adapter, g.workgroup_size))
    }

    /// Runs every configuration, calling `each` as it finishes, then
    /// measures the peak again and writes the table.
    pub fn run(&self, mut each: impl FnMut(&BenchOutcome)) -> Result<BenchReport, WorkflowError> {
        let request = &self.request;
        let mut rows = Vec::new();
        for &n in &request.elements {
            for &b in &request.batch {
                for (engine, lanes) in self.runs() {
                    if let Some(reason) = self.beyond_limits(engine, n) {
                        each(&BenchOutcome::Skipped {
                            engine,
                            elements: n,
                            batch: b,
                            reason,
                        });
                        continue;
                    }
                    let row = throughput::run(
                        &Engine::open(engine, self.gpu.as_ref())?.with_adaptive_lanes(lanes),
                        &self.scenario,
                        (n, b),
                        request.repeats,
                        &self.peaks,
                    )
                    .map_err(|e| {
                        WorkflowError::Failed(format!(
                            "{} n={n} batch={b}: {e}",
                            engine.bench_name()
                        ))
                    })?;
                    each(&BenchOutcome::Measured(Box::new(row.clone())));
                    rows.push(row);
                }
            }
        }
        // The peak again, after the runs: the fractions above are against
        // the first measurement, and a noisy neighbour then would flatter them.
        let peaks_after = Peaks::measure(self.gpu.as_deref())?;
        let shortfall = self.peaks.shortfall_against(&peaks_after);
        self.write(&rows, &peaks_after)?;
        Ok(BenchReport {
            rows,
            peaks_after,
            shortfall,
        })
    }

    /// Each engine with the GPU reference solver's lanes it runs with:
    /// every lane count asked for the adaptive engines, None for the rest.
    fn runs(&self) -> Vec<(EngineKind, Option<u32>)> {
        self.engines
            .iter()
            .flat_map(|&engine| match engine {
                EngineKind::GpuAdaptive { .. } => self
                    .request
                    .adaptive_lanes
                    .iter()
                    .map(|&lanes| (engine, lanes))
                    .collect::<Vec<_>>(),
                other => vec![(other, None)],
            })
            .collect()
    }

    /// Why `engine` cannot run n elements here, if it cannot: the thread
    /// layout's private arrays, the workgroup layout's workgroup memory.
    fn beyond_limits(&self, engine: EngineKind, elements: usize) -> Option<String> {
        let EngineKind::Gpu {
            precision,
            scheme,
            layout,
        } = engine
        else {
            return None;
        };
        let gpu = self.gpu.as_ref()?;
        let thread = crate::gpu::abi::max_gpu_elements(precision.real_bytes(), scheme);
        let workgroup =
            crate::gpu::layout::workgroup_shape(elements, precision, scheme, &gpu.limits).is_some();
        match layout {
            LayoutRequest::Thread if elements > thread => {
                Some(format!("the thread layout takes n ≤ {thread}"))
            }
            LayoutRequest::Workgroup if !workgroup => Some(format!(
                "n = {elements} needs more workgroup memory than the adapter's {} bytes",
                gpu.limits.max_compute_workgroup_storage_size
            )),
            LayoutRequest::Auto if elements > thread && !workgroup => {
                Some("neither layout holds it".into())
            }
            _ => None,
        }
    }

    fn write(&self, rows: &[BenchRow], peaks_after: &Peaks) -> Result<(), WorkflowError> {
        let mut metadata = metadata::base();
        metadata.insert(metadata::SCENARIO.into(), self.scenario.record());
        metadata.insert(metadata::PEAKS_GFLOPS.into(), json(&self.peaks));
        metadata.insert(metadata::PEAKS_AFTER_RUNS_GFLOPS.into(), json(peaks_after));
        metadata.insert(
            metadata::FLOPS_PER_ELEMENT_STEP.into(),
            serde_json::json!({
                "explicit": crate::gpu::flops::PER_ELEMENT_STEP,
                "semi-implicit (GPU)": crate::gpu::flops::SEMI_IMPLICIT_PER_ELEMENT_STEP,
            })
            .to_string(),
        );
        if let Some(g) = &self.gpu {
            metadata.insert(metadata::ADAPTER.into(), json(&g.adapter));
        }
        let f64s = |f: fn(&BenchRow) -> f64| rows.iter().map(f).collect::<Vec<_>>();
        let optional = |f: fn(&BenchRow) -> Option<f64>| rows.iter().map(f).collect::<Vec<_>>();
        let facts = |f: fn(&crate::throughput::LayoutFacts) -> f64| {
            rows.iter()
                .map(|r| r.layout.as_ref().map(f))
                .collect::<Vec<_>>()
        };
        write_columns(
            &self.request.out,
            [
                Column::text(
                    "engine",
                    rows.iter()
                        .map(|r| r.engine.bench_name().to_string())
                        .collect(),
                ),
                Column::text("device", rows.iter().map(|r| r.device.clone()).collect()),
                Column::i32(
                    crate::model::TetherParams::ELEMENTS,
                    rows.iter().map(|r| r.elements as i32).collect(),
                ),
                Column::i32("batch", rows.iter().map(|r| r.batch as i32).collect()),
                Column::f64("wall_s", "s", f64s(|r| r.wall_s)),
                Column::i32("repeats", rows.iter().map(|r| r.repeats as i32).collect()),
                Column::i64(
                    "element_steps",
                    rows.iter().map(|r| r.element_steps as i64).collect(),
                ),
                Column::f64("simulations_per_s", "1/s", f64s(|r| r.simulations_per_s)),
                Column::f64(
                    "element_steps_per_s",
                    "1/s",
                    f64s(|r| r.element_steps_per_s),
                ),
                Column::optional_f64("gflops", "GFLOP/s", optional(|r| r.gflops)),
                Column::optional_f64("peak_gflops", "GFLOP/s", optional(|r| r.peak_gflops)),
                Column::optional_f64("peak_fraction", "1", optional(|r| r.peak_fraction)),
                Column::optional_f64("setup_s", "s", optional(|r| r.setup_s)),
                Column::optional_text(
                    "gpu_layout",
                    rows.iter()
                        .map(|r| r.layout.map(|l| l.layout.name()))
                        .collect(),
                ),
                Column::optional_f64(
                    "sims_per_workgroup",
                    "1",
                    facts(|l| l.sims_per_workgroup as f64),
                ),
                Column::optional_f64("lanes_per_sim", "1", facts(|l| l.lanes as f64)),
                Column::optional_f64(
                    "workgroup_bytes_per_sim",
                    "B",
                    facts(|l| l.workgroup_bytes_per_sim as f64),
                ),
                Column::optional_f64(
                    "chain_flops_per_step",
                    "flop",
                    facts(|l| l.chain_flops_per_step as f64),
                ),
                Column::optional_f64(
                    "resident_sims_model",
                    "1",
                    rows.iter()
                        .map(|r| r.layout.and_then(|l| l.resident_sims))
                        .collect(),
                ),
            ]
            .into_iter()
            .chain(stage_columns(rows))
            .collect(),
            &metadata,
        )?;
        Ok(())
    }
}

/// Where each GPU row's time went (`gpu::timing`); null for the CPU's.
fn stage_columns(rows: &[BenchRow]) -> [Column; 6] {
    let stage = |f: fn(&crate::gpu::timing::StageTime) -> Option<f64>| {
        rows.iter()
            .map(|r| r.stages.as_ref().and_then(f))
            .collect::<Vec<_>>()
    };
    [
        Column::optional_f64("device_s", "s", stage(|s| s.device_s)),
        Column::optional_f64("submissions_s", "s", stage(|s| Some(s.submissions_s))),
        Column::optional_f64("upload_s", "s", stage(|s| Some(s.upload_s))),
        Column::optional_f64("readback_s", "s", stage(|s| Some(s.readback_s))),
        Column::optional_f64("submissions", "1", stage(|s| Some(s.submissions as f64))),
        Column::optional_f64("dispatches", "1", stage(|s| Some(s.dispatches as f64))),
    ]
}

/// The lanes a simulation `bench` may fix for the GPU's reference solver:
/// powers of two up to the most a simulation takes.
fn check_adaptive_lanes(lanes: &[Option<u32>]) -> Result<(), InputError> {
    let most = crate::gpu::layout::TARGET_INVOCATIONS;
    if lanes.is_empty() {
        return Err(InputError::new(
            "adaptive_lanes",
            "none",
            "at least one value or auto",
        ));
    }
    for &l in lanes.iter().flatten() {
        if !l.is_power_of_two() || l > most {
            return Err(InputError::new(
                "adaptive_lanes",
                l,
                format!("a power of two from 1 to {most}, or auto"),
            ));
        }
    }
    Ok(())
}

/// The engines `bench --engines` accepts, for its help.
pub fn engine_names() -> Vec<&'static str> {
    EngineKind::BENCH.iter().map(|(name, _)| *name).collect()
}
