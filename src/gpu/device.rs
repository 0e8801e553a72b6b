//! Opening a GPU: adapter choice, SHADER_F64 and the adapter's own limits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{GpuError, Precision, abi, shader};
use crate::scheme::FixedStepScheme;

/// What a user needs to know about an adapter.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AdapterSummary {
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    /// The driver's version, as it says it (`Mesa 22.3.6`, `560.35.03`).
    pub driver_info: String,
    /// A real GPU, not a CPU emulation such as lavapipe.
    pub hardware: bool,
    pub shader_f64: bool,
    /// Invocations that run in lockstep (a warp, a wavefront, lavapipe's
    /// SIMD vector): the adapter's largest subgroup size.
    pub subgroup_width: u32,
    /// Its PCI bus address (`0000:3b:00.0`) where the driver says it: the
    /// one name a GPU has in both Vulkan and `nvidia-smi`, which a
    /// scheduler's `CUDA_VISIBLE_DEVICES` index (ignored by Vulkan) maps
    /// to. Empty when unknown.
    pub pci_bus_id: String,
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{} {} ({}, {}{}{})",
            self.index,
            self.name,
            self.backend,
            self.device_type,
            if self.driver.is_empty() { "" } else { ", " },
            self.driver
        )
    }
}

fn instance() -> wgpu::Instance {
    // Vulkan, Metal and DX12 only: wgpu's GL fallback (llvmpipe) has no f64.
    // WGPU_BACKEND and friends still apply.
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = wgpu::Backends::PRIMARY;
    }
    wgpu::Instance::new(desc)
}

fn summary(index: usize, adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    AdapterSummary {
        index,
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        hardware: !matches!(
            info.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::Other
        ),
        shader_f64: adapter.features().contains(wgpu::Features::SHADER_F64),
        subgroup_width: info.subgroup_max_size,
        pci_bus_id: info.device_pci_bus_id.clone(),
    }
}

/// Whether `wanted` names the PCI address `bus_id`: domain, bus, device
/// and function compared as numbers, so that `nvidia-smi`'s
/// `00000000:3B:00.0` is Vulkan's `0000:3b:00.0`; the domain may be left
/// out (`3b:00.0`).
fn same_pci_bus(wanted: &str, bus_id: &str) -> bool {
    let parts = |text: &str| -> Option<Vec<u32>> {
        let (address, function) = text.trim().rsplit_once('.')?;
        let mut numbers: Vec<u32> = address
            .split(':')
            .map(|p| u32::from_str_radix(p, 16).ok())
            .collect::<Option<_>>()?;
        numbers.push(u32::from_str_radix(function, 16).ok()?);
        (3..=4).contains(&numbers.len()).then_some(numbers)
    };
    match (parts(wanted), parts(bus_id)) {
        (Some(w), Some(b)) => b.ends_with(&w) && (w.len() == b.len() || w.len() == 3),
        _ => false,
    }
}

fn preference(device_type: wgpu::DeviceType) -> u8 {
    match device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

/// Every adapter wgpu can open here.
pub fn list_adapters() -> Vec<AdapterSummary> {
    let adapters = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    adapters
        .iter()
        .enumerate()
        .map(|(i, a)| summary(i, a))
        .collect()
}

/// Environment variable that overrides the step stage's workgroup size
/// (simulations per workgroup). For tuning on a new GPU: a small grid of
/// long simulations fills more multiprocessors with small workgroups.
pub const WORKGROUP_SIZE_VARIABLE: &str = "TETHER_SWEEP_WORKGROUP_SIZE";

fn parse_workgroup_size(text: &str, adapter_max: u32) -> Result<u32, GpuError> {
    match text.trim().parse::<u32>() {
        Ok(size) if (1..=adapter_max).contains(&size) => Ok(size),
        _ => Err(crate::error::InputError::new(
            WORKGROUP_SIZE_VARIABLE,
            text,
            format!("a whole number from 1 to {adapter_max} (this adapter's limit)"),
        )
        .into()),
    }
}

/// The error for a simulation of `elements` elements that no step pipeline
/// of `precision` and `scheme` holds.
pub fn elements_error(elements: usize, precision: Precision, scheme: FixedStepScheme) -> GpuError {
    crate::error::InputError::new(
        crate::model::TetherParams::ELEMENTS,
        elements,
        format!(
            "1..={} for the {} scheme on the GPU's thread layout in {} (use --gpu-layout workgroup or --backend cpu for more{})",
            abi::max_gpu_elements(precision.real_bytes(), scheme),
            scheme.name(),
            precision.name(),
            if precision == Precision::F64 {
                ", or f32"
            } else {
                ""
            }
        ),
    )
    .into()
}

/// The pipeline stages (one WGSL file each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Time stepping and objectives (step.wgsl) with `scheme`, for
    /// simulations of at most `node_capacity` nodes.
    Step {
        node_capacity: u32,
        scheme: FixedStepScheme,
    },
    /// Time stepping and objectives in the workgroup layout
    /// (step_workgroup.wgsl) of `shape`.
    StepWorkgroup {
        shape: super::layout::WorkgroupShape,
        scheme: FixedStepScheme,
    },
    /// The adaptive implicit scheme (step_adaptive.wgsl) in workgroups of
    /// `sims` simulations of `lanes` invocations, for generalized-α's ρ∞
    /// (its bits: a stage is a cache key).
    StepAdaptive {
        sims: u32,
        lanes: u32,
        spectral_radius_bits: u64,
    },
    /// Multiply-add throughput (peak.wgsl), one of its variants.
    Peak(PeakChains),
}

/// The peak stage's variants: independent vec4 chains per invocation, one
/// entry point each in peak.wgsl.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeakChains {
    Four,
    Eight,
}

impl PeakChains {
    pub const ALL: [PeakChains; 2] = [PeakChains::Four, PeakChains::Eight];
}

impl Stage {
    /// The stage's entry point in its WGSL file.
    fn entry_point(self) -> &'static str {
        match self {
            Stage::Step { .. } | Stage::StepWorkgroup { .. } | Stage::StepAdaptive { .. } => "main",
            Stage::Peak(PeakChains::Four) => "four_chains",
            Stage::Peak(PeakChains::Eight) => "eight_chains",
        }
    }
}

/// An open device with its compiled pipelines.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
    /// Simulations per workgroup on this adapter.
    pub workgroup_size: u32,
    pipelines: Mutex<HashMap<(Stage, Precision), Arc<wgpu::ComputePipeline>>>,
    /// The peak stage's rates per precision, measured once when a layout or
    /// backend choice first needs them (`Gpu::rates`).
    pub(super) rates: Mutex<HashMap<Precision, super::cost::GpuRates>>,
    /// Each layout's rates measured on the step pipeline of a scheme
    /// (`engine::calibrate::calibrate_layouts`), which the cost model prefers
    /// to the peak stage's.
    pub(super) layout_rates: Mutex<HashMap<(Precision, FixedStepScheme), super::cost::LayoutRates>>,
    /// The adaptive stage's rates measured on the stage
    /// (`engine::calibrate::calibrate_adaptive`), by which it chooses its lanes.
    pub(super) adaptive_rates: Mutex<HashMap<Precision, super::cost::AdaptiveRates>>,
    /// Errors wgpu reported outside an error scope, and a lost device: kept
    /// here and returned by [`Gpu::check`] rather than wgpu's default of
    /// panicking (or, for a lost device, of invalid resources later on).
    faults: Arc<Mutex<Vec<String>>>,
    /// The adapter writes timestamps in compute passes (`gpu::timing`).
    pub timestamps: bool,
    /// The stages' times while timing (`Gpu::time_stages`).
    pub(super) timing: Mutex<Option<super::timing::StageTimes>>,
}

impl Gpu {
    /// Opens the adapter named by `choice` (its index in [`list_adapters`],
    /// its PCI bus address or part of its name, case-insensitive), or else
    /// the most capable one:
    /// discrete, integrated, virtual, then CPU emulation.
    pub fn open(choice: Option<&str>) -> Result<Self, GpuError> {
        let instance = instance();
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        if adapters.is_empty() {
            return Err(GpuError::NoAdapter);
        }
        let summaries: Vec<AdapterSummary> = adapters
            .iter()
            .enumerate()
            .map(|(i, a)| summary(i, a))
            .collect();
        let index = match choice {
            Some(wanted) => {
                let lower = wanted.to_lowercase();
                summaries
                    .iter()
                    .find(|s| wanted.parse::<usize>().ok() == Some(s.index))
                    .or_else(|| {
                        summaries
                            .iter()
                            .find(|s| same_pci_bus(wanted, &s.pci_bus_id))
                    })
                    .or_else(|| {
                        summaries
                            .iter()
                            .find(|s| s.name.to_lowercase().contains(&lower))
                    })
                    .map(|s| s.index)
                    .ok_or_else(|| GpuError::AdapterNotFound {
                        requested: wanted.to_string(),
                        available: summaries
                            .iter()
                            .map(|s| s.to_string())
                            .collect::<Vec<_>>()
                            .join("; "),
                    })?
            }
            None => (0..adapters.len())
                .min_by_key(|&i| (preference(adapters[i].get_info().device_type), i))
                .expect("non-empty"),
        };
        let adapter = &adapters[index];
        let summary = summaries[index].clone();
        let mut features = wgpu::Features::empty();
        if summary.shader_f64 {
            features |= wgpu::Features::SHADER_F64;
        }
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        if timestamps {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        // The adapter's own limits: chunk sizes follow from them.
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("tether-sweep"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| GpuError::RequestDevice {
            adapter: summary.name.clone(),
            message: e.to_string(),
        })?;
        let workgroup_size = match std::env::var(WORKGROUP_SIZE_VARIABLE) {
            Ok(text) => parse_workgroup_size(&text, limits.max_compute_workgroup_size_x)?,
            Err(_) if summary.hardware => abi::WORKGROUP_SIZE,
            Err(_) => abi::CPU_EMULATION_WORKGROUP_SIZE,
        };
        let faults = Arc::new(Mutex::new(Vec::new()));
        let sink = faults.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock().expect("fault lock").push(e.to_string());
        }));
        let sink = faults.clone();
        device.set_device_lost_callback(move |reason, message| {
            sink.lock()
                .expect("fault lock")
                .push(format!("device lost ({reason:?}): {message}"));
        });
        Ok(Self {
            device,
            queue,
            workgroup_size,
            adapter: summary,
            limits,
            pipelines: Mutex::new(HashMap::new()),
            rates: Mutex::new(HashMap::new()),
            layout_rates: Mutex::new(HashMap::new()),
            adaptive_rates: Mutex::new(HashMap::new()),
            faults,
            timestamps,
            timing: Mutex::new(None),
        })
    }

    /// Starts timing every stage's batches (again from zero); read with
    /// [`Gpu::stage_times`].
    pub fn time_stages(&self) {
        *self.timing.lock().expect("timing lock") = Some(Default::default());
    }

    /// The stages' times since [`Gpu::time_stages`], which stops timing;
    /// None when it was not timing.
    pub fn stage_times(&self) -> Option<super::timing::StageTimes> {
        self.timing.lock().expect("timing lock").take()
    }

    /// A clock for a chunk of `stage`, or None when not timing.
    pub(super) fn chunk_clock(&self, stage: &'static str) -> Option<super::timing::ChunkClock<'_>> {
        self.timing.lock().expect("timing lock").as_ref()?;
        Some(super::timing::ChunkClock::new(
            (&self.device, &self.queue),
            &self.timing,
            self.timestamps,
            stage,
        ))
    }

    /// The step pipeline of `scheme` for `precision` and simulations of up
    /// to `max_elements` elements, compiled once per device.
    pub fn step_pipeline(
        &self,
        precision: Precision,
        max_elements: usize,
        scheme: FixedStepScheme,
    ) -> Result<Arc<wgpu::ComputePipeline>, GpuError> {
        let node_capacity = abi::node_capacity(max_elements, precision.real_bytes(), scheme)
            .ok_or_else(|| elements_error(max_elements, precision, scheme))?;
        self.pipeline(
            Stage::Step {
                node_capacity,
                scheme,
            },
            precision,
        )
    }

    /// The step pipeline of `scheme` for `precision` in the workgroup layout
    /// for simulations of `elements` elements, with its shape (at most
    /// `max_sims` simulations per workgroup, when given).
    pub fn step_workgroup_pipeline(
        &self,
        precision: Precision,
        elements: usize,
        scheme: FixedStepScheme,
        max_sims: Option<u32>,
    ) -> Result<(Arc<wgpu::ComputePipeline>, super::layout::WorkgroupShape), GpuError> {
        let shape = super::layout::workgroup_shape(elements, precision, scheme, &self.limits)
            .map(|s| super::layout::WorkgroupShape {
                sims: s.sims.min(max_sims.unwrap_or(u32::MAX).max(1)),
                ..s
            })
            .ok_or_else(|| GpuError::WorkgroupMemory {
                elements,
                precision: precision.name(),
                scheme: scheme.name(),
                bytes: super::layout::slot_bytes(elements as u32 + 1, precision, scheme),
                limit: self.limits.max_compute_workgroup_storage_size,
            })?;
        let pipeline = self.pipeline(Stage::StepWorkgroup { shape, scheme }, precision)?;
        Ok((pipeline, shape))
    }

    /// The errors the device reported since the last check, if any: a lost
    /// device or an error outside every error scope.
    pub fn check(&self) -> Result<(), GpuError> {
        let faults = std::mem::take(&mut *self.faults.lock().expect("fault lock"));
        if faults.is_empty() {
            Ok(())
        } else {
            Err(GpuError::Device(format!(
                "adapter {:?}: {}",
                self.adapter.name,
                faults.join("; ")
            )))
        }
    }

    /// A stage's pipeline for `precision`, compiled once per device.
    pub fn pipeline(
        &self,
        stage: Stage,
        precision: Precision,
    ) -> Result<Arc<wgpu::ComputePipeline>, GpuError> {
        if precision == Precision::F64 && !self.adapter.shader_f64 {
            return Err(GpuError::NoF64 {
                adapter: self.adapter.name.clone(),
            });
        }
        let mut cache = self.pipelines.lock().expect("pipeline cache lock");
        if let Some(p) = cache.get(&(stage, precision)) {
            return Ok(p.clone());
        }
        // Scopes pop in reverse order; a driver's failure to compile
        // (internal, out of memory) is as fatal here as a validation error.
        let scopes = [
            wgpu::ErrorFilter::Validation,
            wgpu::ErrorFilter::OutOfMemory,
            wgpu::ErrorFilter::Internal,
        ]
        .map(|filter| self.device.push_error_scope(filter));
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&format!("{stage:?} ({})", precision.name())),
                source: wgpu::ShaderSource::Wgsl(
                    match stage {
                        Stage::Step {
                            node_capacity,
                            scheme,
                        } => shader::step_source(precision, node_capacity, scheme),
                        Stage::StepWorkgroup { shape, scheme } => {
                            shader::step_workgroup_source(precision, scheme, shape)
                        }
                        Stage::StepAdaptive {
                            sims,
                            lanes,
                            spectral_radius_bits,
                        } => shader::step_adaptive_source(
                            precision,
                            super::shape::AdaptiveShape { sims, lanes },
                            f64::from_bits(spectral_radius_bits),
                        ),
                        Stage::Peak(_) => shader::peak_source(precision),
                    }
                    .into(),
                ),
            });
        let workgroup_size = [("WORKGROUP_SIZE", self.workgroup_size as f64)];
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&format!("{stage:?}")),
                layout: None,
                module: &module,
                entry_point: Some(stage.entry_point()),
                compilation_options: wgpu::PipelineCompilationOptions {
                    // The workgroup layout's size is its shape, a constant.
                    constants: match stage {
                        Stage::StepWorkgroup { .. } | Stage::StepAdaptive { .. } => &[],
                        _ => &workgroup_size,
                    },
                    ..Default::default()
                },
                cache: None,
            });
        let mut errors: Vec<String> = Vec::new();
        for scope in scopes.into_iter().rev() {
            if let Some(err) = pollster::block_on(scope.pop()) {
                errors.push(err.to_string());
            }
        }
        self.check()?;
        if !errors.is_empty() {
            return Err(GpuError::Device(format!(
                "compiling the {stage:?} stage ({}) on {:?}: {}",
                precision.name(),
                self.adapter.name,
                errors.join("; ")
            )));
        }
        let pipeline = Arc::new(pipeline);
        cache.insert((stage, precision), pipeline.clone());
        Ok(pipeline)
    }
}

#[cfg(test)]
mod tests {
    use super::same_pci_bus;

    #[test]
    fn a_pci_address_is_the_same_as_nvidia_smi_and_vulkan_write_it() {
        assert!(same_pci_bus("00000000:3B:00.0", "0000:3b:00.0"));
        assert!(same_pci_bus("3b:00.0", "0000:3b:00.0"));
        assert!(!same_pci_bus("3b:00.1", "0000:3b:00.0"));
        assert!(!same_pci_bus("0001:3b:00.0", "0000:3b:00.0"));
        assert!(
            !same_pci_bus("0", "0000:00:00.0"),
            "an index is not an address"
        );
        assert!(!same_pci_bus("NVIDIA", ""));
    }

    use super::*;

    #[test]
    fn workgroup_size_override_is_checked_against_the_adapter() {
        assert_eq!(parse_workgroup_size(" 32 ", 256).unwrap(), 32);
        for bad in ["0", "257", "-1", "many", ""] {
            let message = parse_workgroup_size(bad, 256).unwrap_err().to_string();
            assert!(message.contains(WORKGROUP_SIZE_VARIABLE), "{message}");
            assert!(message.contains("1 to 256"), "{message}");
        }
    }
}
