//! `tether-sweep adapters`: the GPU adapters wgpu can open.

use anyhow::Result;

use crate::gpu::GpuError;
use crate::gpu::device::list_adapters;

pub fn run() -> Result<()> {
    let adapters = list_adapters();
    if adapters.is_empty() {
        outln!("{}", GpuError::NoAdapter);
    }
    for a in adapters {
        outln!(
            "{a}{}{}{}",
            if a.hardware { "" } else { " [CPU emulation]" },
            if a.shader_f64 { " [f64]" } else { "" },
            match a.pci_bus_id.as_str() {
                "" => String::new(),
                bus => format!(" [PCI {bus}]"),
            }
        );
    }
    Ok(())
}
