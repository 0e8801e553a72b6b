//! The buffers both step stages (the fixed-step ones of `dispatch` and the
//! adaptive one) share: how many simulations a binding holds, uploads and
//! read-backs, one submission's passes, and the per-simulation inputs and
//! objectives they start from.

use bytemuck::Pod;
use wgpu::util::DeviceExt;

use super::abi::{NEVER_ABANDON_M2, Real, SimObjectives};
use super::batch::GpuSimulation;
use super::readback::{map_and_collect, staging};
use super::timing::ChunkClock;
use super::{Gpu, GpuError};

/// The largest recorded track of `sims` \[bytes\] (vec2 per marker and
/// frame).
pub(super) fn largest_track_bytes(sims: &[GpuSimulation], real_bytes: u64) -> u64 {
    sims.iter()
        .filter(|s| s.record_track)
        .map(|s| s.frames() * s.marker_arc_lengths_m.len() as u64 * 2 * real_bytes)
        .max()
        .unwrap_or(0)
}

/// How many simulations fit one storage binding when the largest
/// per-simulation slice of a buffer is `biggest` bytes; too large when not
/// even one does.
pub(super) fn per_binding(gpu: &Gpu, biggest: u64) -> Result<u64, GpuError> {
    let per_buffer = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    if biggest > per_buffer {
        return Err(GpuError::TooLarge {
            bytes: biggest,
            limit: per_buffer,
        });
    }
    Ok(per_buffer / biggest.max(1))
}

pub(super) fn storage<T: Pod>(
    gpu: &Gpu,
    label: &str,
    data: &[T],
    extra: wgpu::BufferUsages,
) -> wgpu::Buffer {
    // Bindings may not be empty: a zero-length array gets one zeroed element.
    let bytes: Vec<u8> = if data.is_empty() {
        vec![0; std::mem::size_of::<T>().max(16)]
    } else {
        bytemuck::cast_slice(data).to_vec()
    };
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &bytes,
            usage: wgpu::BufferUsages::STORAGE | extra,
        })
}

/// Copies `buffer` to the host.
pub(super) fn read_back<T: Pod>(gpu: &Gpu, buffer: &wgpu::Buffer) -> Result<Vec<T>, GpuError> {
    let size = buffer.size();
    let staging = staging(&gpu.device, "readback", size);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);
    map_and_collect(&gpu.device, &staging)
}

/// One submission: `dispatches` passes of `pipeline` with `bind_group`
/// over `workgroups` workgroups (a pass per dispatch, so that each sees
/// the previous one's writes), then the stage's `progress` buffer copied
/// into `staging` and read back; timed by `clock` when timing (the first
/// pass's start and the last pass's end on the device's clock).
pub(super) fn submit_passes<P: Pod>(
    gpu: &Gpu,
    (pipeline, bind_group, workgroups): (&wgpu::ComputePipeline, &wgpu::BindGroup, u32),
    dispatches: u32,
    (progress, staging): (&wgpu::Buffer, &wgpu::Buffer),
    clock: Option<&mut ChunkClock<'_>>,
) -> Result<Vec<P>, GpuError> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    for d in 0..dispatches {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: clock.as_ref().and_then(|c| c.pass_writes(d, dispatches)),
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }
    encoder.copy_buffer_to_buffer(progress, 0, staging, 0, progress.size());
    let submission = clock.as_ref().map(|c| c.submitting(&mut encoder));
    gpu.queue.submit([encoder.finish()]);
    let read = map_and_collect(&gpu.device, staging)?;
    gpu.check()?;
    if let (Some(c), Some(s)) = (clock, submission) {
        c.submitted(s, dispatches)?;
    }
    Ok(read)
}

/// Refuses a batch whose compared simulations need more measured frames
/// than `measured` holds.
pub(super) fn check_measured(
    sims: &[GpuSimulation],
    measured: Option<&[[f64; 2]]>,
) -> Result<(), GpuError> {
    let measured_len = measured.map_or(0, |m| m.len());
    for sim in sims.iter().filter(|s| s.compare_measured) {
        let frames = sim.measured_first_frame + sim.frames() as usize;
        let needed = frames * sim.marker_arc_lengths_m.len();
        if measured_len < needed {
            return Err(crate::error::InputError::new(
                "measured",
                format!("{measured_len} marker positions"),
                format!("at least {needed} (every marker of {frames} frames)"),
            )
            .into());
        }
    }
    Ok(())
}

/// The objectives each simulation starts from: no J_e yet, J_a,min at its
/// value at t = 0. Both step stages (and the adaptive one) accumulate them.
pub(super) fn initial_objectives<'a, R: Real>(
    sims: impl Iterator<Item = &'a GpuSimulation>,
) -> Vec<SimObjectives<R>> {
    sims.map(|s| SimObjectives {
        identification_error_m2: R::from_f64(0.0),
        swingup_min_m: R::from_f64(s.initial_swingup_m),
        swingup_time_s: R::from_f64(0.0),
        abandon_above_m2: R::from_f64(s.abandon_above_m2.unwrap_or(NEVER_ABANDON_M2)),
    })
    .collect()
}
