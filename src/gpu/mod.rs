//! The GPU batch engine: WGSL compute shaders (`shaders/`) that advance a
//! whole batch of tethers at once with a fixed-step scheme, the explicit one
//! of `solver::explicit` or the semi-implicit one of
//! `solver::semi_implicit`, one invocation per simulation, and accumulate
//! the objectives on the device.
//!
//! - [`device`]: adapters, features and limits.
//! - [`abi`]: the `#[repr(C)]` structs shared with WGSL.
//! - [`shader`]: how the WGSL modules are put together.
//! - [`mass_factor`]: the mass matrix of a uniform mesh as four 2×2
//!   matrices (both schemes), and its block-tridiagonal factors (explicit).
//! - [`batch`]: a batch of simulations in the engine's terms, and its upload.
//! - [`dispatch`]: pipelines, dispatch splitting, chunking and readback.
//! - [`layout`]: the two layouts (a simulation per invocation, or per
//!   workgroup) and their shapes; [`cost`]: the cost model that picks one.
//! - [`mirror`]: the CPU mirror of the step stage, operation for operation,
//!   one file per WGSL module, each function tested against its shader.
//! - [`adaptive`]: the adaptive implicit scheme (step_adaptive.wgsl), each
//!   simulation with its own steps, run by [`adaptive::run_adaptive_batch`].
//! - [`flops`]: the flop count of a step, and the peak-throughput stage.
//! - [`timing`]: where a batch's time goes per stage, when asked.

pub mod abi;
pub mod adaptive;
pub mod batch;
mod buffers;
pub mod cost;
pub mod device;
pub mod dispatch;
pub mod flops;
pub mod layout;
pub mod mass_factor;
// The shaders' CPU mirror: test support (tests/mirror.rs), not library API.
#[doc(hidden)]
pub mod mirror;
pub mod placement;
pub mod rates;
mod readback;
pub mod shader;
pub mod shape;
pub mod timing;

use thiserror::Error;

use crate::error::InputError;
use crate::linalg::FactorError;
use crate::named::{Named, display_and_parse_by_name};

pub use abi::MISSING_SAMPLE_M;
pub use batch::{GpuOutcome, GpuSimulation, PinDrive};
pub use device::{AdapterSummary, Gpu};
pub use dispatch::{BatchOptions, run_batch};
pub use layout::{GpuLayout, LayoutRequest};

/// Floating-point precision of the shaders.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Single precision, in displacement form (docs/model.md §8).
    #[default]
    F32,
    /// Double precision; needs the adapter's SHADER_F64.
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Bytes of one real.
    pub fn real_bytes(self) -> u64 {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// Whether the adaptive stage forms the strain with the drift since
    /// the last fold apart from the displacement (element.wgsl's
    /// SPLIT_STRAIN): in f32, where summed they put noise of about 1e-7
    /// into the strain, and f32 took up to 11× f64's steps and 85× its
    /// factorizations (a 2-s drop at n = 50, D = 100, 1e-7 m); split,
    /// 1.2× and 2.2× there (BENCHMARKS.md).
    /// f64 has no need of it, and unsplit its stage keeps the reference
    /// solver's arithmetic decision for decision (tests/mirror.rs).
    pub fn adaptive_splits_strain(self) -> bool {
        self == Precision::F32
    }
}

impl Named for Precision {
    const WHAT: &'static str = "precision";
    const ALL: &'static [Self] = &[Precision::F32, Precision::F64];

    fn name(self) -> &'static str {
        Precision::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            Precision::F32 => "Single precision, in displacement form (docs/model.md §8)",
            Precision::F64 => "Double precision; needs the adapter's SHADER_F64",
        }
    }
}

display_and_parse_by_name!(Precision);

#[derive(Debug, Error)]
pub enum GpuError {
    #[error(
        "no GPU adapter found (wgpu sees no Vulkan, Metal or DX12 device). Install a GPU driver, or Mesa's software Vulkan driver lavapipe (Debian/Ubuntu: `apt-get install mesa-vulkan-drivers`), or use --backend cpu"
    )]
    NoAdapter,
    #[error("no GPU adapter matches --adapter {requested:?}; available: {available}")]
    AdapterNotFound {
        requested: String,
        available: String,
    },
    #[error(
        "adapter {adapter:?} has no SHADER_F64, so --precision f64 cannot run there (use --precision f32 or --backend cpu)"
    )]
    NoF64 { adapter: String },
    #[error("could not open adapter {adapter:?}: {message}")]
    RequestDevice { adapter: String, message: String },
    #[error("GPU error: {0}")]
    Device(String),
    #[error(
        "simulation {simulation} advanced {got} steps in a dispatch window that should have given {expected}: the shader was cut short (loop limit?), so the results would be wrong"
    )]
    Truncated {
        simulation: usize,
        expected: u64,
        got: u64,
    },
    #[error(
        "a simulation needs {bytes} bytes of GPU buffers, more than the adapter's limit of {limit} bytes per buffer"
    )]
    TooLarge { bytes: u64, limit: u64 },
    #[error(
        "a simulation of {elements} elements needs {bytes} bytes of workgroup memory for the {scheme} scheme in {precision}, more than the adapter's {limit}: use --gpu-layout thread, fewer elements, or f32"
    )]
    WorkgroupMemory {
        elements: usize,
        precision: &'static str,
        scheme: &'static str,
        bytes: u64,
        limit: u32,
    },
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Factor(#[from] FactorError),
    #[error(transparent)]
    MeshMass(#[from] mass_factor::MeshMassError),
}
