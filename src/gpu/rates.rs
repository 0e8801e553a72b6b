//! The adapter's rates: its multiply-add peak, measured by the peak stage
//! (`shaders/peak.wgsl`) for the filled device and one invocation's chain,
//! which `bench` reports achieved rates against, and the rates the cost
//! model runs on (each layout's as calibrated on its step pipeline, else
//! the peak's).

use std::time::Instant;

use super::cost::{self, GpuRates};
use super::device::PeakChains;
use super::{Gpu, GpuError, Precision};
use crate::scheme::FixedStepScheme;

/// Measures the adapter's multiply-add throughput in `precision` [GFLOP/s]
/// with the peak stage: the best, over its variants, of `repeats` timed runs
/// of enough invocations to fill the device.
pub fn measure_peak_gflops(
    gpu: &Gpu,
    precision: Precision,
    repeats: usize,
) -> Result<f64, GpuError> {
    // About 50 ms a run on lavapipe: runs of 8,192 invocations (15 ms)
    // measured a few per cent less there.
    let wanted: u32 = if gpu.adapter.hardware {
        1 << 21
    } else {
        1 << 15
    };
    // Small workgroups (TETHER_SWEEP_WORKGROUP_SIZE) must not push the
    // dispatch past the adapter's workgroup-count limit.
    let workgroups =
        (wanted / gpu.workgroup_size).clamp(1, gpu.limits.max_compute_workgroups_per_dimension);
    let mut best: f64 = 0.0;
    for chains in PeakChains::ALL {
        best = best.max(measure_peak_variant(
            gpu, precision, chains, workgroups, repeats,
        )?);
    }
    Ok(best)
}

/// The multiply-add rate of one invocation alone [GFLOP/s]: the peak stage
/// on a single workgroup, divided by its invocations. What one simulation
/// of the thread layout can reach, whatever the device's size.
pub fn measure_invocation_gflops(gpu: &Gpu, precision: Precision) -> Result<f64, GpuError> {
    let mut best: f64 = 0.0;
    for chains in PeakChains::ALL {
        best = best.max(measure_peak_variant(gpu, precision, chains, 1, 3)?);
    }
    Ok(best / gpu.workgroup_size as f64)
}

fn measure_peak_variant(
    gpu: &Gpu,
    precision: Precision,
    chains: PeakChains,
    workgroups: u32,
    repeats: usize,
) -> Result<f64, GpuError> {
    let pipeline = gpu.pipeline(super::device::Stage::Peak(chains), precision)?;
    let invocations = workgroups * gpu.workgroup_size;
    let sink = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("peak sink"),
        size: invocations as u64 * 4 * precision.real_bytes(),
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("peak"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: sink.as_entire_binding(),
        }],
    });
    let mut best = f64::INFINITY;
    // The first run includes compiling on some drivers: not timed.
    for run in 0..=repeats.max(1) {
        let started = Instant::now();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(workgroups, 1, 1);
        }
        gpu.queue.submit([encoder.finish()]);
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Device(e.to_string()))?;
        if run > 0 {
            best = best.min(started.elapsed().as_secs_f64());
        }
    }
    Ok(invocations as f64 * super::flops::PEAK_PER_INVOCATION as f64 / best / 1e9)
}

impl Gpu {
    /// The peak stage's rates in `precision` on this adapter: one
    /// invocation's and the filled device's, measured on first use.
    pub fn rates(&self, precision: Precision) -> Result<GpuRates, GpuError> {
        if let Some(rates) = self.rates.lock().expect("rates lock").get(&precision) {
            return Ok(*rates);
        }
        let rates = GpuRates {
            invocation_gflops: measure_invocation_gflops(self, precision)?,
            device_gflops: measure_peak_gflops(self, precision, 3)?,
        };
        self.rates
            .lock()
            .expect("rates lock")
            .insert(precision, rates);
        Ok(rates)
    }

    /// The cost model's rates for `scheme` in `precision`: each layout's as
    /// measured on its step pipeline, once [`Gpu::set_layout_rates`] has
    /// them, else the peak stage's for both. The peak stage's multiply-add
    /// chains run 4× faster than the workgroup layout's steps (barriers and
    /// workgroup memory) and the whole device 10–40× faster than either
    /// layout fills it (BENCHMARKS.md, H100, 2026-11-24).
    pub fn layout_rates(
        &self,
        precision: Precision,
        scheme: FixedStepScheme,
    ) -> Result<cost::LayoutRates, GpuError> {
        let calibrated = self
            .layout_rates
            .lock()
            .expect("layout rates lock")
            .get(&(precision, scheme))
            .copied();
        match calibrated {
            Some(rates) => Ok(rates),
            None => Ok(cost::LayoutRates::same(self.rates(precision)?)),
        }
    }

    /// Keeps `rates`, measured on the step pipelines, for the cost model.
    pub fn set_layout_rates(
        &self,
        precision: Precision,
        scheme: FixedStepScheme,
        rates: cost::LayoutRates,
    ) {
        self.layout_rates
            .lock()
            .expect("layout rates lock")
            .insert((precision, scheme), rates);
    }
}
impl Gpu {
    /// The adaptive stage's rates in `precision`: as measured on the stage
    /// once [`Gpu::set_adaptive_rates`] has them, else the peak stage's
    /// flops with barriers free.
    pub fn adaptive_rates(&self, precision: Precision) -> Result<cost::AdaptiveRates, GpuError> {
        let calibrated = self
            .adaptive_rates
            .lock()
            .expect("adaptive rates lock")
            .get(&precision)
            .copied();
        match calibrated {
            Some(rates) => Ok(rates),
            None => Ok(cost::AdaptiveRates::flops_only(
                self.rates(precision)?,
                self.adapter.subgroup_width,
                precision,
            )),
        }
    }

    /// Keeps `rates`, measured on the adaptive stage, for its lane choice.
    pub fn set_adaptive_rates(&self, precision: Precision, rates: cost::AdaptiveRates) {
        self.adaptive_rates
            .lock()
            .expect("adaptive rates lock")
            .insert(precision, rates);
    }
}
