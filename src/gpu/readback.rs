//! Reading a mapped staging buffer back to the host: one wait, shared by
//! the stages' progress, their results and the timestamps of
//! [`super::timing`].

use bytemuck::Pod;

use super::GpuError;

/// A buffer of `size` bytes to copy a storage buffer into and map.
pub(super) fn staging(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Maps `staging` (a copy already submitted to it), waits for it, and
/// returns its contents.
pub(super) fn map_and_collect<T: Pod>(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
) -> Result<Vec<T>, GpuError> {
    let failed = |e: String| GpuError::Device(e);
    let slice = staging.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| failed(e.to_string()))?;
    rx.recv()
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))?;
    let view = slice
        .get_mapped_range()
        .map_err(|e| failed(e.to_string()))?;
    let out = bytemuck::pod_collect_to_vec(&view);
    drop(view);
    staging.unmap();
    Ok(out)
}
