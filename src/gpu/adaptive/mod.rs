//! The adaptive implicit scheme on the GPU (shaders/step_adaptive.wgsl):
//! the reference solver's generalized-α with Newton's method and local
//! error control, each simulation with its own step sequence, landing
//! exactly on its frames and J_a samples. Its arithmetic is fixed by the
//! CPU mirror ([`super::mirror::adaptive`]), which reproduces the reference
//! solver's steps; `tests/gpu_adaptive.rs` holds the stage to the mirror.
//!
//! Simulations of any n share a dispatch: a workgroup holds `sims`
//! simulations with `lanes` invocations each (the lanes chosen per batch by
//! the cost model, [`AdaptiveShape::for_batch`]), the state stays in storage
//! buffers, and a simulation that finished, diverged, failed or waits on
//! a rejected step shares its neighbours' barriers, never their values.
//! Each dispatch makes a fixed number of attempted steps per simulation,
//! within Mesa's loop budget; the attempts every simulation made are read
//! back and checked after each submission.
//!
//! The engine runs it for `--backend gpu --solver reference`
//! (`EngineKind::GpuAdaptive`), and `--backend auto` weighs it on a
//! hardware adapter (`gpu::cost::adaptive_seconds`, `engine::choice`). A
//! batch too large for the adapter's buffers runs in chunks, one after
//! another.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::abi::{
    ADAPTIVE_FACTOR_VEC4_PER_NODE, ADAPTIVE_PLANES, AdaptiveProgress, AdaptiveSettings,
    DispatchParams, Real, STATE_PLANES, STATUS_ABANDONED, STATUS_DIVERGED, STATUS_DONE,
    STATUS_NEWTON_FAILED, STATUS_RUNNING, SimObjectives,
};
use super::batch::{ChunkData, GpuSimulation, chunk_data, exploded};
use super::buffers::{
    check_measured, initial_objectives, largest_track_bytes, per_binding, read_back, storage,
    submit_passes,
};
use super::device::Stage;
use super::dispatch::{
    CHUNK_MEMORY_BYTES, LOOP_BUDGET, MAX_DISPATCHES_PER_SUBMISSION, SUBMISSION_TARGET,
};
use super::readback::staging;
use super::shape::AdaptiveShape;
use super::timing::ChunkClock;
use super::{Gpu, GpuError, Precision};
use crate::error::InputError;
use crate::scheme::implicit_control::UNMEASURED_NEWTON_ETA;
use crate::status::RunStatus;

mod settings;

pub use settings::{
    AdaptiveOptions, AdaptiveOutcome, AdaptiveStats, F32_TOLERANCE_FLOOR_M, Landings, check_method,
    check_tolerance, f32_first_pass_tolerance_m, frames_per_landing, same_landing,
};

/// Loop iterations the busiest lane may be charged for one attempted
/// step (every loop's exit check counted, as Mesa counts it): sixteen
/// Newton rounds, each with a tangent and a force pass over the elements,
/// the factorization's and the solve's three passes from the
/// ends (in a slot of one lane, lane 0 runs both sides of each: n nodes,
/// two exit checks and its loop over the sides, three), two node passes
/// and the slot's reduction; then the prediction, error, acceptance and
/// fold passes and the frames of a landing.
pub fn loop_iterations_per_attempt(
    max_elements: usize,
    lanes: u32,
    max_markers: usize,
    frames_per_landing: u64,
) -> u64 {
    let n = max_elements as u64;
    let t = lanes.max(1) as u64;
    let nodes = (n + 1).div_ceil(t) + 1;
    let pass = n.div_ceil(t) + 1;
    let round = 3 * (n + 5) + 8 + 2 * pass + 2 * nodes + t;
    let rounds = 2 * crate::scheme::implicit_control::MAX_NEWTON_ITERATIONS as u64;
    rounds * round
        + rounds
        + 4 * nodes
        + 2 * (t + 1)
        + frames_per_landing * (max_markers as u64 + 2)
        + 8
}

/// A batch for the adaptive stage: each simulation with its landings and
/// settings (all with one ρ∞, a constant of the pipeline), and the
/// measured track as for [`super::run_batch`].
pub struct AdaptiveBatch<'a> {
    pub sims: &'a [GpuSimulation],
    pub landings: &'a [Landings],
    pub options: &'a [AdaptiveOptions],
    pub measured: Option<&'a [[f64; 2]]>,
}

/// How to run it.
#[derive(Debug, Clone, Copy)]
pub struct AdaptiveRun<'a> {
    pub precision: Precision,
    /// None: [`AdaptiveShape::for_batch`].
    pub shape: Option<AdaptiveShape>,
    /// Loop iterations per invocation and dispatch (see [`LOOP_BUDGET`]).
    pub loop_budget: u64,
    /// Checked between submissions: once set, the simulations that have
    /// not finished come back as `Cancelled`, the finished ones with their
    /// results.
    pub cancel: Option<&'a AtomicBool>,
    /// At most this many simulations per chunk (besides the adapter's
    /// limits): for tests.
    pub max_chunk: Option<usize>,
}

impl Default for AdaptiveRun<'_> {
    fn default() -> Self {
        Self {
            precision: Precision::F64,
            shape: None,
            loop_budget: LOOP_BUDGET,
            cancel: None,
            max_chunk: None,
        }
    }
}

/// Runs `batch` with the adaptive scheme as `run` says, in one chunk.
pub fn run_adaptive_batch(
    gpu: &Gpu,
    batch: &AdaptiveBatch,
    run: &AdaptiveRun,
) -> Result<Vec<AdaptiveOutcome>, GpuError> {
    let AdaptiveBatch {
        sims,
        landings,
        options,
        measured,
    } = *batch;
    if sims.is_empty() {
        return Ok(Vec::new());
    }
    for (name, len) in [("landings", landings.len()), ("options", options.len())] {
        if len != sims.len() {
            return Err(
                InputError::new(name, len, format!("one per simulation ({})", sims.len())).into(),
            );
        }
    }
    let spectral_radius = options[0].spectral_radius;
    if let Some(other) = options
        .iter()
        .find(|o| o.spectral_radius != spectral_radius)
    {
        return Err(InputError::new(
            "spectral_radius",
            other.spectral_radius,
            format!(
                "{spectral_radius}, as the batch's first simulation (a constant of the pipeline)"
            ),
        )
        .into());
    }
    for o in options {
        check_tolerance(run.precision, o.tolerance_m)?;
    }
    for (sim, l) in sims.iter().zip(landings) {
        sim.validate()?;
        if sim.record_pin_force {
            return Err(InputError::new(
                "record_pin_force",
                true,
                "a fixed-step scheme: the adaptive stage records no pin force",
            )
            .into());
        }
        if l.frame_times_s.len() != sim.frames.len() {
            return Err(InputError::new(
                "frame_times_s",
                l.frame_times_s.len(),
                format!("the simulation's {} frames", sim.frames.len()),
            )
            .into());
        }
    }
    check_measured(sims, measured)?;
    let shape = match run.shape {
        Some(shape) => shape,
        None => {
            let elements: Vec<usize> = sims.iter().map(|s| s.params.elements).collect();
            AdaptiveShape::for_batch(gpu, run.precision, &elements)?
        }
    };
    let stage = Stage::StepAdaptive {
        sims: shape.sims,
        lanes: shape.lanes,
        spectral_radius_bits: spectral_radius.to_bits(),
    };
    let pipeline = gpu.pipeline(stage, run.precision)?;
    let capacity = chunk_capacity(gpu, sims, shape, run)?;
    let mut outcomes = Vec::with_capacity(sims.len());
    for start in (0..sims.len()).step_by(capacity) {
        let range = start..(start + capacity).min(sims.len());
        let refs: Vec<&GpuSimulation> = sims[range.clone()].iter().collect();
        let data = chunk_data(&refs)?;
        let chunk = Chunk {
            pipeline: &pipeline,
            shape,
            data: &data,
            loop_budget: run.loop_budget,
            cancel: run.cancel,
        };
        let part = AdaptiveBatch {
            sims: &sims[range.clone()],
            landings: &landings[range.clone()],
            options: &options[range],
            measured,
        };
        outcomes.extend(match run.precision {
            Precision::F32 => run_typed::<f32>(gpu, &chunk, &part)?,
            Precision::F64 => run_typed::<f64>(gpu, &chunk, &part)?,
        });
    }
    Ok(outcomes)
}

/// Simulations per chunk: the largest buffer (the factors, twelve vec4 a
/// node) within the adapter's binding limit, a chunk's buffers within
/// [`CHUNK_MEMORY_BYTES`], its workgroups within one dispatch dimension,
/// and `run.max_chunk`.
fn chunk_capacity(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    shape: AdaptiveShape,
    run: &AdaptiveRun,
) -> Result<usize, GpuError> {
    let vec4 = 4 * run.precision.real_bytes();
    let node_slots = sims
        .iter()
        .map(|s| s.params.elements + 1)
        .max()
        .unwrap_or(1) as u64;
    let factors = ADAPTIVE_FACTOR_VEC4_PER_NODE as u64 * node_slots * vec4;
    let state = ADAPTIVE_PLANES as u64 * node_slots * vec4;
    let track = largest_track_bytes(sims, run.precision.real_bytes());
    let by_buffer = per_binding(gpu, factors.max(state).max(track))?;
    let by_memory = (CHUNK_MEMORY_BYTES / (factors + state + track)).max(1);
    let by_dispatch = gpu.limits.max_compute_workgroups_per_dimension as u64 * shape.sims as u64;
    let capacity = by_buffer.min(by_memory).min(by_dispatch) as usize;
    Ok(run.max_chunk.map_or(capacity, |m| capacity.min(m.max(1))))
}

/// A chunk's pipeline, shape, upload and loop budget.
struct Chunk<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    shape: AdaptiveShape,
    data: &'a ChunkData,
    loop_budget: u64,
    cancel: Option<&'a AtomicBool>,
}

/// The state planes of the adaptive stage from the chunk's four: the
/// algorithmic accelerations start as the true ones, the rest at 0.
fn adaptive_state<R: Real>(data: &ChunkData, count: usize) -> Vec<[R; 4]> {
    let plane = data.node_slots * count;
    let mut state = vec![[R::from_f64(0.0); 4]; ADAPTIVE_PLANES * plane];
    for (i, v) in data.state.iter().enumerate() {
        state[i] = v.map(R::from_f64);
    }
    // step_io.wgsl's PLANE_ACCELERATION.
    let acceleration = (STATE_PLANES - 1) * plane;
    for i in 0..plane {
        state[STATE_PLANES * plane + i] = state[acceleration + i];
    }
    state
}

fn run_typed<R: Real>(
    gpu: &Gpu,
    chunk: &Chunk,
    batch: &AdaptiveBatch,
) -> Result<Vec<AdaptiveOutcome>, GpuError> {
    let Chunk {
        pipeline,
        shape,
        data,
        loop_budget,
        cancel,
    } = *chunk;
    let AdaptiveBatch {
        sims,
        landings,
        options,
        measured,
    } = *batch;
    let count = sims.len();
    let r = R::from_f64;
    let attempts = attempts_per_dispatch(batch, shape, loop_budget);
    let params = DispatchParams {
        simulations: count as u32,
        steps_per_dispatch: attempts,
        node_slots: data.node_slots as u32,
        _pad: 0,
    };
    gpu.check()?;
    let device = &gpu.device;
    let mut clock = gpu.chunk_clock(ADAPTIVE_STAGE);
    let upload = Instant::now();
    use wgpu::util::DeviceExt;
    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("adaptive dispatch params"),
        contents: bytemuck::bytes_of(&params),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let physics: Vec<_> = data.physics.iter().map(|p| p.convert::<R>()).collect();
    let mesh: Vec<[R; 4]> = data.mesh.iter().map(|v| v.map(r)).collect();
    let measured: Vec<[R; 2]> = measured.unwrap_or(&[]).iter().map(|p| p.map(r)).collect();
    let state = adaptive_state::<R>(data, count);
    let (objectives0, progress0) = initial::<R>(sims, options);
    let (settings, frame_times) = per_simulation::<R>(data, landings, options);
    let factors = vec![[r(0.0); 4]; ADAPTIVE_FACTOR_VEC4_PER_NODE * data.node_slots * count];
    let none = wgpu::BufferUsages::empty();
    let copy = wgpu::BufferUsages::COPY_SRC;
    let bound = [
        (0, uniform),
        (1, storage(gpu, "controls", &data.controls, none)),
        (2, storage(gpu, "physics", &physics, none)),
        (3, storage(gpu, "mesh", &mesh, none)),
        (4, storage(gpu, "measured", &measured, none)),
        (5, storage(gpu, "state", &state, none)),
        (7, storage(gpu, "objectives", &objectives0, copy)),
        (
            8,
            storage(gpu, "track", &vec![[r(0.0); 2]; data.track_len], copy),
        ),
        (11, storage(gpu, "adaptive progress", &progress0, copy)),
        (12, storage(gpu, "frame times", &frame_times, none)),
        (13, storage(gpu, "factors", &factors, none)),
        (14, storage(gpu, "adaptive settings", &settings, none)),
    ];
    let bind_group = bind(gpu, pipeline, &bound);
    if let Some(c) = clock.as_mut() {
        c.uploaded(upload);
    }
    let buffer = |binding: u32| &bound.iter().find(|(b, _)| *b == binding).unwrap().1;
    let progress_buf = buffer(11);
    let workgroups = (count as u32).div_ceil(shape.sims);
    let progress = dispatch_until_done(
        gpu,
        pipeline,
        &bind_group,
        progress_buf,
        progress0,
        (workgroups, attempts),
        (cancel, clock.as_mut()),
    )?;
    let reading = Instant::now();
    let objectives: Vec<SimObjectives<R>> = read_back(gpu, buffer(7))?;
    let track: Vec<[R; 2]> = if data.track_len > 0 {
        read_back(gpu, buffer(8))?
    } else {
        Vec::new()
    };
    if let Some(c) = clock.as_mut() {
        c.read_back(reading);
    }
    Ok(sims
        .iter()
        .enumerate()
        .map(|(i, sim)| outcome(sim, &progress[i], &objectives[i], &track, data, i))
        .collect())
}

/// Attempts per dispatch within `loop_budget`, for the batch's largest
/// n, markers and frames per landing.
fn attempts_per_dispatch(batch: &AdaptiveBatch, shape: AdaptiveShape, loop_budget: u64) -> u32 {
    let sims = batch.sims;
    let max_elements = sims.iter().map(|s| s.params.elements).max().unwrap_or(1);
    let max_markers = sims
        .iter()
        .map(|s| s.marker_arc_lengths_m.len())
        .max()
        .unwrap_or(0);
    let most_frames = batch
        .landings
        .iter()
        .map(frames_per_landing)
        .max()
        .unwrap_or(1);
    let per_attempt =
        loop_iterations_per_attempt(max_elements, shape.lanes, max_markers, most_frames);
    (loop_budget / per_attempt).clamp(1, u32::MAX as u64) as u32
}

/// The objectives and progress each simulation starts from.
fn initial<R: Real>(
    sims: &[GpuSimulation],
    options: &[AdaptiveOptions],
) -> (Vec<SimObjectives<R>>, Vec<AdaptiveProgress<R>>) {
    let r = R::from_f64;
    let objectives = initial_objectives(sims.iter());
    let progress = options
        .iter()
        .map(|options| AdaptiveProgress {
            step_s: r(options.initial_step_s.min(options.max_step_s)),
            newton_eta: r(UNMEASURED_NEWTON_ETA),
            status: STATUS_RUNNING,
            ..Default::default()
        })
        .collect();
    (objectives, progress)
}

/// Each simulation's settings, and its frame times where [`chunk_data`]
/// put its frames.
fn per_simulation<R: Real>(
    data: &ChunkData,
    landings: &[Landings],
    options: &[AdaptiveOptions],
) -> (Vec<AdaptiveSettings<R>>, Vec<R>) {
    let r = R::from_f64;
    let settings = landings
        .iter()
        .zip(options)
        .map(|(l, options)| {
            let (interval, samples) = l.samples.unwrap_or((0.0, 0));
            AdaptiveSettings {
                tolerance_m: r(options.tolerance_m),
                max_step_s: r(options.max_step_s),
                sample_interval_s: r(interval),
                samples: samples as u32,
                _pad: 0,
            }
        })
        .collect();
    let mut frame_times = vec![r(0.0); data.frame_steps.len()];
    for (c, l) in data.controls.iter().zip(landings) {
        for (k, &t) in l.frame_times_s.iter().enumerate() {
            frame_times[c.frame_offset as usize + k] = r(t);
        }
    }
    (settings, frame_times)
}

/// The bind group of the stage's buffers, each at its binding.
fn bind(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    bound: &[(u32, wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = bound
        .iter()
        .map(|(binding, b)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: b.as_entire_binding(),
        })
        .collect();
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("step_adaptive"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// The adaptive stage's name in `gpu::timing`.
pub const ADAPTIVE_STAGE: &str = "adaptive";

/// Dispatches (`workgroups` each, of `attempts` per simulation) until no
/// simulation runs or `cancel` is set, checking every simulation's
/// attempts after each submission; the progress read back last.
fn dispatch_until_done<R: Real>(
    gpu: &Gpu,
    pipeline: &wgpu::ComputePipeline,
    bind_group: &wgpu::BindGroup,
    progress_buf: &wgpu::Buffer,
    progress0: Vec<AdaptiveProgress<R>>,
    (workgroups, attempts): (u32, u32),
    (cancel, mut clock): (Option<&AtomicBool>, Option<&mut ChunkClock<'_>>),
) -> Result<Vec<AdaptiveProgress<R>>, GpuError> {
    let staging = staging(
        &gpu.device,
        "adaptive progress readback",
        progress_buf.size(),
    );
    let mut expected = vec![0u64; progress0.len()];
    let mut progress = progress0;
    let mut dispatches: u32 = 1;
    while progress.iter().any(|p| p.status == STATUS_RUNNING) {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            break;
        }
        let started = Instant::now();
        progress = submit_passes(
            gpu,
            (pipeline, bind_group, workgroups),
            dispatches,
            (progress_buf, &staging),
            clock.as_deref_mut(),
        )?;
        check_attempts(
            &progress,
            &mut expected,
            dispatches as u64 * attempts as u64,
        )?;
        if started.elapsed() < SUBMISSION_TARGET / 2 {
            dispatches = (dispatches * 2).min(MAX_DISPATCHES_PER_SUBMISSION);
        }
    }
    Ok(progress)
}

/// Checks that every simulation still running made exactly the attempts
/// its dispatches allowed (`expected`, advanced here by `window`), and no
/// other one more: Mesa silently skips loop iterations beyond its cap.
fn check_attempts<R: Real>(
    progress: &[AdaptiveProgress<R>],
    expected: &mut [u64],
    window: u64,
) -> Result<(), GpuError> {
    for (i, p) in progress.iter().enumerate() {
        expected[i] += window;
        let got = p.attempts as u64;
        let fits = match p.status {
            STATUS_RUNNING => got == expected[i],
            STATUS_DONE | STATUS_DIVERGED | STATUS_NEWTON_FAILED | STATUS_ABANDONED => {
                got <= expected[i]
            }
            other => {
                return Err(GpuError::Device(format!(
                    "simulation {i} reports unknown status {other}"
                )));
            }
        };
        if !fits {
            return Err(GpuError::Truncated {
                simulation: i,
                expected: expected[i],
                got,
            });
        }
    }
    Ok(())
}

fn outcome<R: Real>(
    sim: &GpuSimulation,
    p: &AdaptiveProgress<R>,
    o: &SimObjectives<R>,
    track: &[[R; 2]],
    data: &ChunkData,
    i: usize,
) -> AdaptiveOutcome {
    let time_s = p.time_s.to_f64();
    let status = match p.status {
        STATUS_DIVERGED => exploded(time_s, R::PRECISION),
        STATUS_NEWTON_FAILED => RunStatus::NewtonFailed {
            time_s,
            step_s: p.step_s.to_f64(),
        },
        // At a landing: the frame's time.
        STATUS_ABANDONED => RunStatus::Abandoned { time_s },
        STATUS_RUNNING => RunStatus::Cancelled,
        _ => RunStatus::Ok,
    };
    let track_m = (sim.record_track && status.is_ok()).then(|| {
        let offset = data.controls[i].track_offset as usize;
        let len = sim.frames.len() * sim.marker_arc_lengths_m.len();
        track[offset..offset + len]
            .iter()
            .map(|p| p.map(R::to_f64))
            .collect()
    });
    AdaptiveOutcome {
        status,
        stats: AdaptiveStats {
            steps: p.steps as u64,
            rejected_steps: p.rejected_steps as u64,
            newton_iterations: p.newton_iterations as u64,
            factorizations: p.factorizations as u64,
            max_local_error_m: p.max_local_error_m.to_f64(),
        },
        identification_error_m2: o.identification_error_m2.to_f64(),
        swingup_min_m: o.swingup_min_m.to_f64(),
        swingup_time_s: o.swingup_time_s.to_f64(),
        track_m,
    }
}
