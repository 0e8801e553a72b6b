//! Running a batch: chunks sized from the adapter's limits, time stepping
//! split across dispatches so that no invocation exceeds Mesa's loop limit,
//! per-simulation progress counters read back and checked after every
//! submission, and the objectives (and tracks, when asked) read back at the
//! end of each chunk.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wgpu::util::DeviceExt;

use super::abi::{
    DispatchParams, Real, STATE_PLANES, STATUS_ABANDONED, STATUS_DIVERGED, STATUS_DONE,
    STATUS_RUNNING, SimObjectives, SimProgress,
};
use super::batch::{
    ChunkData, GpuOutcome, GpuSimulation, chunk_data, exploded, steps_per_dispatch,
    workgroup_extra_iterations_per_step,
};
use super::buffers::{
    check_measured, initial_objectives, largest_track_bytes, per_binding, read_back, storage,
    submit_passes,
};

use super::layout::{GpuLayout, LayoutRequest};
use super::placement::{assign_layouts, spread_workgroups};
use super::readback::staging;
use super::{Gpu, GpuError, Precision};
use crate::scheme::FixedStepScheme;
use crate::status::RunStatus;

/// Mesa's llvmpipe/lavapipe ends every loop of a shader invocation once the
/// invocation has run 65,535 loop iterations in total, silently
/// (LP_MAX_TGSI_LOOP_ITERATIONS).
pub const MESA_LOOP_LIMIT: u64 = 65_535;
/// The loop iterations one dispatch may use per invocation, with a margin
/// below the limit for the loops the count leaves out.
pub const LOOP_BUDGET: u64 = 60_000;
/// GPU memory one chunk may take unless the adapter's limits say less.
pub const CHUNK_MEMORY_BYTES: u64 = 1 << 30;
/// A submission should take about this long: long enough that its fixed
/// cost does not matter, short enough for a live progress bar and prompt
/// cancellation.
pub(super) const SUBMISSION_TARGET: Duration = Duration::from_millis(250);
pub(super) const MAX_DISPATCHES_PER_SUBMISSION: u32 = 4096;

/// How to run a batch.
pub struct BatchOptions<'a> {
    pub precision: Precision,
    /// At most this many simulations per chunk (besides the adapter's limits).
    pub max_chunk: Option<usize>,
    /// Loop iterations per invocation and dispatch (see [`LOOP_BUDGET`]).
    pub loop_budget: u64,
    /// Checked between submissions: once set, the simulations that have not
    /// finished come back as `Cancelled`, the finished ones with their results.
    pub cancel: Option<&'a AtomicBool>,
    /// Called with (element-steps done, element-steps in the batch).
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    /// The layout, or `Auto` for the cost model's choice per scheme
    /// ([`cost`](super::cost)).
    pub layout: LayoutRequest,
    /// At most this many simulations per workgroup in the workgroup layout
    /// (besides its shape's own limits): for tests and tuning.
    pub max_group_sims: Option<u32>,
}

impl Default for BatchOptions<'_> {
    fn default() -> Self {
        Self {
            precision: Precision::F32,
            max_chunk: None,
            loop_budget: LOOP_BUDGET,
            cancel: None,
            progress: None,
            layout: LayoutRequest::Auto,
            max_group_sims: None,
        }
    }
}

/// Runs every simulation of `sims` on `gpu`. `measured` holds the measured
/// marker positions of the compared frames (frame-major) for the
/// simulations that compare against it; each starts at its
/// `measured_first_frame`.
pub fn run_batch(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    measured: Option<&[[f64; 2]]>,
    options: &BatchOptions,
) -> Result<Vec<GpuOutcome>, GpuError> {
    match options.precision {
        Precision::F32 => run_typed::<f32>(gpu, sims, measured, options),
        Precision::F64 => run_typed::<f64>(gpu, sims, measured, options),
    }
}

fn cancelled(options: &BatchOptions) -> bool {
    options.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

fn chunk_capacity(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    options: &BatchOptions,
) -> Result<usize, GpuError> {
    let rb = options.precision.real_bytes();
    let node_slots = sims
        .iter()
        .map(|s| s.params.elements + 1)
        .max()
        .unwrap_or(1) as u64;
    let state = STATE_PLANES as u64 * node_slots * 4 * rb;
    let track = largest_track_bytes(sims, rb);
    let by_buffer = per_binding(gpu, state.max(track))?;
    let by_memory = (CHUNK_MEMORY_BYTES / (state + track)).max(1);
    let by_dispatch =
        gpu.limits.max_compute_workgroups_per_dimension as u64 * gpu.workgroup_size as u64;
    let mut capacity = by_buffer.min(by_memory).min(by_dispatch) as usize;
    if let Some(max) = options.max_chunk {
        capacity = capacity.min(max.max(1));
    }
    Ok(capacity)
}

/// Compiles the pipeline of every simulation's layout, or fails.
fn compile_pipelines(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    layouts: &[GpuLayout],
    options: &BatchOptions,
) -> Result<(), GpuError> {
    for (i, sim) in sims.iter().enumerate() {
        match layouts[i] {
            GpuLayout::Thread => {
                gpu.step_pipeline(options.precision, sim.params.elements, sim.scheme)?;
            }
            GpuLayout::Workgroup => {
                gpu.step_workgroup_pipeline(
                    options.precision,
                    sim.params.elements,
                    sim.scheme,
                    options.max_group_sims,
                )?;
            }
        }
    }
    Ok(())
}

/// The pipeline and shape a chunk of `layout` and `scheme` with at most
/// `elements` elements runs on.
fn chunk_dispatch(
    gpu: &Gpu,
    layout: GpuLayout,
    elements: usize,
    scheme: FixedStepScheme,
    options: &BatchOptions,
) -> Result<ChunkDispatch, GpuError> {
    Ok(match layout {
        GpuLayout::Thread => ChunkDispatch {
            pipeline: gpu.step_pipeline(options.precision, elements, scheme)?,
            sims_per_group: gpu.workgroup_size,
            extra_per_step: 0,
            layout,
        },
        GpuLayout::Workgroup => {
            let (pipeline, shape) = gpu.step_workgroup_pipeline(
                options.precision,
                elements,
                scheme,
                options.max_group_sims,
            )?;
            ChunkDispatch {
                pipeline,
                sims_per_group: shape.sims,
                extra_per_step: workgroup_extra_iterations_per_step(elements, shape.lanes),
                layout,
            }
        }
    })
}

fn run_typed<R: Real>(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    measured: Option<&[[f64; 2]]>,
    options: &BatchOptions,
) -> Result<Vec<GpuOutcome>, GpuError> {
    check_measured(sims, measured)?;
    if sims.is_empty() {
        return Ok(Vec::new());
    }
    let layouts = assign_layouts(gpu, sims, options.layout, options.precision)?;
    // Every pipeline the batch needs, or a failure (no f64, too many
    // elements for the precision, scheme and layout), before any work.
    compile_pipelines(gpu, sims, &layouts, options)?;
    // A chunk runs one scheme in one layout (its pipeline's), and in the
    // workgroup layout one n. Similar simulations side by side: the
    // invocations of a SIMD group run in lockstep, as long as the largest n
    // and the most steps among them.
    let mut order: Vec<usize> = (0..sims.len()).collect();
    order.sort_by_key(|&i| {
        let s = &sims[i];
        (s.scheme, layouts[i], s.params.elements, s.total_steps)
    });
    let capacity = chunk_capacity(gpu, sims, options)?;
    let workgroup = gpu.workgroup_size as usize;
    let same_pipeline = |&i: &usize, &j: &usize| {
        sims[i].scheme == sims[j].scheme
            && layouts[i] == layouts[j]
            && (layouts[i] == GpuLayout::Thread
                || sims[i].params.elements == sims[j].params.elements)
    };
    let chunks = order
        .chunk_by(same_pipeline)
        .flat_map(|group| group.chunks(capacity))
        .map(|chunk| match layouts[chunk[0]] {
            GpuLayout::Thread => spread_workgroups(chunk, workgroup),
            GpuLayout::Workgroup => chunk.to_vec(),
        });
    let total_work: u64 = sims
        .iter()
        .map(|s| s.total_steps * s.params.elements as u64)
        .sum();
    let mut work_done = 0u64;
    let measured_r: Vec<[R; 2]> = measured
        .unwrap_or(&[])
        .iter()
        .map(|p| p.map(R::from_f64))
        .collect();
    let mut outcomes: Vec<Option<GpuOutcome>> = vec![None; sims.len()];
    for chunk in chunks {
        let chunk = &chunk[..];
        let layout = layouts[chunk[0]];
        if cancelled(options) {
            for &i in chunk {
                outcomes[i] = Some(GpuOutcome::cancelled(layout));
            }
            continue;
        }
        let members: Vec<&GpuSimulation> = chunk.iter().map(|&i| &sims[i]).collect();
        let chunk_elements = members.iter().map(|s| s.params.elements).max().unwrap_or(1);
        let scheme = members[0].scheme;
        let dispatch = chunk_dispatch(gpu, layout, chunk_elements, scheme, options)?;
        let data = chunk_data(&members)?;
        let results = run_chunk::<R>(
            gpu,
            &dispatch,
            &members,
            &data,
            &measured_r,
            options,
            &mut |chunk_work| {
                if let Some(p) = options.progress {
                    p(work_done + chunk_work, total_work);
                }
            },
        )?;
        work_done += members
            .iter()
            .map(|s| s.total_steps * s.params.elements as u64)
            .sum::<u64>();
        for (&i, r) in chunk.iter().zip(results) {
            outcomes[i] = Some(r);
        }
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.expect("every simulation ran"))
        .collect())
}

/// How a chunk is dispatched: its pipeline, the simulations one workgroup
/// holds, and the loop iterations its busiest lane adds per step.
struct ChunkDispatch {
    pipeline: std::sync::Arc<wgpu::ComputePipeline>,
    sims_per_group: u32,
    extra_per_step: u64,
    layout: GpuLayout,
}

/// The uniform of a chunk's dispatches: its size and the steps each
/// dispatch may take within Mesa's loop budget.
fn dispatch_params(
    sims: &[&GpuSimulation],
    data: &ChunkData,
    dispatch: &ChunkDispatch,
    options: &BatchOptions,
) -> DispatchParams {
    let count = sims.len();
    let max_elements = sims.iter().map(|s| s.params.elements).max().unwrap_or(1);
    let max_markers = sims
        .iter()
        .map(|s| s.marker_arc_lengths_m.len())
        .max()
        .unwrap_or(0);
    let frame_spacing = sims
        .iter()
        .map(|s| s.frame_spacing())
        .fold((u64::MAX, 0), |(a, b), (c, d)| (a.min(c), b.max(d)));
    let min_steps_per_sample = sims.iter().map(|s| s.steps_per_sample).min().unwrap_or(1);
    let per_dispatch = steps_per_dispatch(
        max_elements,
        max_markers,
        frame_spacing,
        min_steps_per_sample,
        dispatch.extra_per_step,
        options.loop_budget,
    );
    DispatchParams {
        simulations: count as u32,
        steps_per_dispatch: per_dispatch,
        node_slots: data.node_slots as u32,
        _pad: 0,
    }
}

/// A chunk's buffers that are read back, and the bind group of them all.
struct ChunkBuffers {
    progress: wgpu::Buffer,
    objectives: wgpu::Buffer,
    track: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The progress uploaded: every simulation running, no step done.
    progress0: Vec<SimProgress>,
}

/// Uploads a chunk's arrays in `R` and binds them to the step pipeline.
fn chunk_buffers<R: Real>(
    gpu: &Gpu,
    dispatch: &ChunkDispatch,
    sims: &[&GpuSimulation],
    data: &ChunkData,
    measured: &[[R; 2]],
    params: &DispatchParams,
) -> ChunkBuffers {
    let count = sims.len();
    let device = &gpu.device;
    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("dispatch params"),
        contents: bytemuck::bytes_of(params),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let physics: Vec<_> = data.physics.iter().map(|p| p.convert::<R>()).collect();
    let mesh: Vec<[R; 4]> = data.mesh.iter().map(|v| v.map(R::from_f64)).collect();
    let state: Vec<[R; 4]> = data.state.iter().map(|v| v.map(R::from_f64)).collect();
    let progress0 = vec![
        SimProgress {
            steps_done: 0,
            status: STATUS_RUNNING,
            frames_done: 0,
            _pad: 0
        };
        count
    ];
    let objectives0 = initial_objectives::<R>(sims.iter().copied());
    let none = wgpu::BufferUsages::empty();
    let copy = wgpu::BufferUsages::COPY_SRC;
    let controls_buf = storage(gpu, "controls", &data.controls, none);
    let physics_buf = storage(gpu, "physics", &physics, none);
    let mesh_buf = storage(gpu, "mesh", &mesh, none);
    let measured_buf = storage(gpu, "measured", measured, none);
    let state_buf = storage(gpu, "state", &state, none);
    let progress_buf = storage(gpu, "progress", &progress0, copy);
    let objectives_buf = storage(gpu, "objectives", &objectives0, copy);
    let track_buf = storage(
        gpu,
        "track",
        &vec![[R::from_f64(0.0); 2]; data.track_len],
        copy,
    );
    let frame_steps_buf = storage(gpu, "frame steps", &data.frame_steps, none);
    let frame_back: Vec<R> = data.frame_back_s.iter().map(|&b| R::from_f64(b)).collect();
    let frame_back_buf = storage(gpu, "frame back", &frame_back, none);
    let pipeline = &*dispatch.pipeline;
    let layout = pipeline.get_bind_group_layout(0);
    let buffers = [
        &uniform,
        &controls_buf,
        &physics_buf,
        &mesh_buf,
        &measured_buf,
        &state_buf,
        &progress_buf,
        &objectives_buf,
        &track_buf,
        &frame_steps_buf,
        &frame_back_buf,
    ];
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("step"),
        layout: &layout,
        entries: &entries,
    });
    ChunkBuffers {
        progress: progress_buf,
        objectives: objectives_buf,
        track: track_buf,
        bind_group,
        progress0,
    }
}

/// Checks that every running or finished simulation took exactly the
/// steps its dispatches allowed (`expected`, advanced here by `window`):
/// Mesa silently skips loop iterations beyond its cap.
fn check_progress(
    progress: &[SimProgress],
    sims: &[&GpuSimulation],
    expected: &mut [u64],
    window: u64,
) -> Result<(), GpuError> {
    for (i, (p, sim)) in progress.iter().zip(sims).enumerate() {
        if p.status == STATUS_RUNNING || p.status == STATUS_DONE {
            if expected[i] < sim.total_steps {
                expected[i] = (expected[i] + window).min(sim.total_steps);
            }
            let complete = expected[i] == sim.total_steps;
            if p.steps_done as u64 != expected[i] || (p.status == STATUS_DONE) != complete {
                return Err(GpuError::Truncated {
                    simulation: i,
                    expected: expected[i],
                    got: p.steps_done as u64,
                });
            }
        } else if p.status != STATUS_DIVERGED && p.status != STATUS_ABANDONED {
            return Err(GpuError::Device(format!(
                "simulation {i} reports unknown status {}",
                p.status
            )));
        }
    }
    Ok(())
}

/// The chunk's outcomes from what it read back.
fn outcomes<R: Real>(
    sims: &[&GpuSimulation],
    progress: &[SimProgress],
    objectives: &[SimObjectives<R>],
    track: &[[R; 2]],
    data: &ChunkData,
    layout: GpuLayout,
) -> Vec<GpuOutcome> {
    sims.iter()
        .zip(progress.iter().zip(objectives))
        .enumerate()
        .map(|(i, (sim, (p, o)))| {
            let status = match p.status {
                STATUS_DIVERGED => exploded(p.steps_done as f64 * sim.step_s, R::PRECISION),
                STATUS_DONE => RunStatus::Ok,
                STATUS_ABANDONED => RunStatus::Abandoned {
                    time_s: sim.frame_time_s((p.frames_done as usize).saturating_sub(1)),
                },
                _ => RunStatus::Cancelled,
            };
            let track_m = (sim.record_track && status.is_ok()).then(|| {
                let offset = data.controls[i].track_offset as usize;
                let len = sim.frames() as usize * sim.marker_arc_lengths_m.len();
                track[offset..offset + len]
                    .iter()
                    .map(|p| p.map(R::to_f64))
                    .collect()
            });
            let pin_force_n = (sim.record_pin_force && status.is_ok()).then(|| {
                let offset = data.controls[i].pin_force_offset as usize;
                track[offset..offset + sim.frames() as usize]
                    .iter()
                    .map(|p| p.map(R::to_f64))
                    .collect()
            });
            GpuOutcome {
                status,
                layout,
                steps: p.steps_done as u64,
                identification_error_m2: o.identification_error_m2.to_f64(),
                swingup_min_m: o.swingup_min_m.to_f64(),
                swingup_time_s: o.swingup_time_s.to_f64(),
                track_m,
                pin_force_n,
            }
        })
        .collect()
}

/// The chunk's element-steps done, a simulation that ended early
/// (diverged, abandoned) counted whole.
fn element_steps_done(progress: &[SimProgress], sims: &[&GpuSimulation]) -> u64 {
    progress
        .iter()
        .zip(sims)
        .map(|(p, s)| {
            let steps = match p.status {
                STATUS_RUNNING => p.steps_done as u64,
                _ => s.total_steps,
            };
            steps * s.params.elements as u64
        })
        .sum()
}

#[allow(clippy::too_many_arguments)]
fn run_chunk<R: Real>(
    gpu: &Gpu,
    dispatch: &ChunkDispatch,
    sims: &[&GpuSimulation],
    data: &ChunkData,
    measured: &[[R; 2]],
    options: &BatchOptions,
    report: &mut dyn FnMut(u64),
) -> Result<Vec<GpuOutcome>, GpuError> {
    let count = sims.len();
    let params = dispatch_params(sims, data, dispatch, options);
    let per_dispatch = params.steps_per_dispatch;
    // A device lost earlier makes every new buffer invalid (and wgpu's
    // buffer initialisation panic): say why instead.
    gpu.check()?;
    let device = &gpu.device;
    let mut clock = gpu.chunk_clock(dispatch.layout.stage_name());
    let upload = Instant::now();
    let ChunkBuffers {
        progress: progress_buf,
        objectives: objectives_buf,
        track: track_buf,
        bind_group,
        progress0,
    } = chunk_buffers::<R>(gpu, dispatch, sims, data, measured, &params);
    if let Some(c) = clock.as_mut() {
        c.uploaded(upload);
    }
    let pipeline = &*dispatch.pipeline;
    let progress_staging = staging(device, "progress readback", progress_buf.size());
    let workgroups = (count as u32).div_ceil(dispatch.sims_per_group);
    let mut expected: Vec<u64> = vec![0; count];
    let mut progress = progress0;
    let mut dispatches: u32 = 1;
    loop {
        if progress.iter().all(|p| p.status != STATUS_RUNNING) {
            break;
        }
        if cancelled(options) {
            break;
        }
        let started = Instant::now();
        progress = submit_passes(
            gpu,
            (pipeline, &bind_group, workgroups),
            dispatches,
            (&progress_buf, &progress_staging),
            clock.as_mut(),
        )?;
        let window = dispatches as u64 * per_dispatch as u64;
        check_progress(&progress, sims, &mut expected, window)?;
        report(element_steps_done(&progress, sims));
        if started.elapsed() < SUBMISSION_TARGET / 2 {
            dispatches = (dispatches * 2).min(MAX_DISPATCHES_PER_SUBMISSION);
        }
    }
    let reading = Instant::now();
    let objectives: Vec<SimObjectives<R>> = read_back(gpu, &objectives_buf)?;
    let track: Vec<[R; 2]> = if data.track_len > 0 {
        read_back(gpu, &track_buf)?
    } else {
        Vec::new()
    };
    if let Some(c) = clock.as_mut() {
        c.read_back(reading);
    }
    Ok(outcomes(
        sims,
        &progress,
        &objectives,
        &track,
        data,
        dispatch.layout,
    ))
}
