//! The GPU engine's two layouts, what `--gpu-layout` asks for, and the
//! workgroup layout's shape on an adapter: lanes per simulation,
//! simulations per workgroup, workgroup memory. Why each layout is as it
//! is, and the cost model that picks between them, are in [`super::cost`].

use serde::{Deserialize, Serialize};

use super::Precision;
use crate::named::{Named, display_and_parse_by_name};
use crate::scheme::FixedStepScheme;

/// How the engine maps simulations onto invocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuLayout {
    /// One simulation per invocation, its state in private memory.
    Thread,
    /// Several invocations per simulation, its state in workgroup memory.
    Workgroup,
}

impl GpuLayout {
    pub const ALL: [GpuLayout; 2] = [GpuLayout::Thread, GpuLayout::Workgroup];

    pub fn name(self) -> &'static str {
        match self {
            GpuLayout::Thread => "thread",
            GpuLayout::Workgroup => "workgroup",
        }
    }

    /// Its step stage's name in `gpu::timing`.
    pub fn stage_name(self) -> &'static str {
        match self {
            GpuLayout::Thread => "step (thread layout)",
            GpuLayout::Workgroup => "step (workgroup layout)",
        }
    }
}

impl Named for GpuLayout {
    const WHAT: &'static str = "gpu_layout";
    const ALL: &'static [Self] = &GpuLayout::ALL;

    fn name(self) -> &'static str {
        GpuLayout::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            GpuLayout::Thread => "One simulation per invocation, its state in private memory",
            GpuLayout::Workgroup => {
                "Several invocations per simulation, its state in workgroup memory"
            }
        }
    }
}

display_and_parse_by_name!(GpuLayout);

/// What `--gpu-layout` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayoutRequest {
    /// For each batch and scheme, the layout the cost model estimates
    /// faster.
    #[default]
    Auto,
    Thread,
    Workgroup,
}

impl LayoutRequest {
    pub fn name(self) -> &'static str {
        match self {
            LayoutRequest::Auto => "auto",
            LayoutRequest::Thread => "thread",
            LayoutRequest::Workgroup => "workgroup",
        }
    }

    /// The layout asked for, if it is not left to the model.
    pub fn fixed(self) -> Option<GpuLayout> {
        match self {
            LayoutRequest::Auto => None,
            LayoutRequest::Thread => Some(GpuLayout::Thread),
            LayoutRequest::Workgroup => Some(GpuLayout::Workgroup),
        }
    }
}

impl Named for LayoutRequest {
    const WHAT: &'static str = "gpu_layout";
    const ALL: &'static [Self] = &[
        LayoutRequest::Auto,
        LayoutRequest::Thread,
        LayoutRequest::Workgroup,
    ];

    fn name(self) -> &'static str {
        LayoutRequest::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            LayoutRequest::Auto => {
                "For each batch and scheme, the layout the cost model estimates faster"
            }
            LayoutRequest::Thread => GpuLayout::Thread.help(),
            LayoutRequest::Workgroup => GpuLayout::Workgroup.help(),
        }
    }
}

display_and_parse_by_name!(LayoutRequest);

impl From<GpuLayout> for LayoutRequest {
    fn from(layout: GpuLayout) -> Self {
        match layout {
            GpuLayout::Thread => LayoutRequest::Thread,
            GpuLayout::Workgroup => LayoutRequest::Workgroup,
        }
    }
}

/// A workgroup-layout pipeline's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkgroupShape {
    /// Node slots per simulation (the chunk's n + 1).
    pub nodes: u32,
    /// Simulations per workgroup (S).
    pub sims: u32,
    /// Invocations per simulation (T).
    pub lanes: u32,
}

impl WorkgroupShape {
    pub fn invocations(&self) -> u32 {
        self.sims * self.lanes
    }
}

/// Invocations a workgroup aims at: two 32-wide warps (NVIDIA) or one
/// 64-wide wavefront (AMD), so that no hardware SIMD group is left partly
/// empty by the shape.
pub const TARGET_INVOCATIONS: u32 = 64;
/// The most lanes one simulation gets: a lane per element pair and pass
/// needs n/2 of them, and the solve's chain does not shrink with more.
pub const MAX_LANES: u32 = 32;

/// The fewest lanes a simulation the adaptive stage's cost model chooses
/// (`gpu::cost::adaptive_lanes`), and [`adaptive_lanes_for`] gives: the
/// factorization's and solve's two sides. With one lane, lane 0 runs both,
/// one after the other; the model counts that as the same flops on half
/// as many lanes (about 4 % cheaper than two on lavapipe's default grid),
/// but it measured 1.22× slower (34.4–34.6 s against 28.2–28.6 s,
/// BENCHMARKS.md). The model counts neither of what one lane adds: twice
/// the simulations a subgroup, whose steps and Newton rounds diverge, and
/// twice the simulations a workgroup, fewer workgroups for the threads of
/// a CPU emulation to share.
pub const MIN_ADAPTIVE_LANES: u32 = 2;

/// The most lanes the adaptive stage (step_adaptive.wgsl) gives a
/// simulation of `elements` elements: a lane per element, since its
/// element passes take every element at once (a power of two for the lane
/// index arithmetic), at least [`MIN_ADAPTIVE_LANES`] and at most a
/// workgroup's [`TARGET_INVOCATIONS`].
pub fn adaptive_lanes_for(elements: usize) -> u32 {
    (elements as u32)
        .next_power_of_two()
        .clamp(MIN_ADAPTIVE_LANES, TARGET_INVOCATIONS)
}

/// The lanes that share a node's solve (a column of its 4×4 blocks each).
pub const SOLVE_LANES: u32 = 4;

/// Lanes for a simulation of n elements: one element per lane in each of
/// the two element passes (⌈n/2⌉, to a power of two for the lane index
/// arithmetic), at least the [`SOLVE_LANES`] and at most [`MAX_LANES`].
pub fn lanes_for(elements: usize) -> u32 {
    (elements.div_ceil(2) as u32)
        .next_power_of_two()
        .clamp(SOLVE_LANES, MAX_LANES)
}

/// Workgroup memory of one simulation slot \[bytes\], as WGSL lays out
/// step_workgroup.wgsl's arrays: five vec4 planes per node (displacement,
/// drift, velocity, acceleration, force); per node of the semi-implicit
/// scheme (one slot for the explicit one) a `Symmetric4` pivot (two vec4
/// and a vec2, padded to a multiple of the vec4 alignment: 12 reals) and a
/// 4×4 coupling; the shared solve's two 4×4 blocks; the divergence and
/// abandon flags and the tip's velocity.
pub fn slot_bytes(nodes: u32, precision: Precision, scheme: FixedStepScheme) -> u64 {
    let real = precision.real_bytes();
    let blocks = match scheme {
        FixedStepScheme::SemiImplicit => nodes as u64,
        FixedStepScheme::Explicit => 1,
    };
    nodes as u64 * 5 * 4 * real + blocks * (12 + 16) * real + 2 * 16 * real + 2 * 4 + 2 * real
}

/// Workgroup memory its slots share \[bytes\]: the step count (twice), n,
/// and the count of slots still stepping (twice), five u32.
const SHARED_BYTES: u64 = 5 * 4;

/// Workgroup memory of a pipeline of `shape` \[bytes\]: its slots, and
/// what they share.
pub fn workgroup_bytes(
    shape: WorkgroupShape,
    precision: Precision,
    scheme: FixedStepScheme,
) -> u64 {
    shape.sims as u64 * slot_bytes(shape.nodes, precision, scheme) + SHARED_BYTES
}

/// The shape for simulations of `elements` elements on an adapter with
/// `limits`, or `None` when not even one simulation's state fits its
/// workgroup memory. S is as many simulations as the memory, the
/// invocation limit and [`TARGET_INVOCATIONS`] allow, at least one.
pub fn workgroup_shape(
    elements: usize,
    precision: Precision,
    scheme: FixedStepScheme,
    limits: &wgpu::Limits,
) -> Option<WorkgroupShape> {
    let nodes = elements as u32 + 1;
    let max_invocations = limits
        .max_compute_invocations_per_workgroup
        .min(limits.max_compute_workgroup_size_x);
    let lanes = lanes_for(elements).min(max_invocations);
    if lanes < SOLVE_LANES {
        return None;
    }
    let memory = (limits.max_compute_workgroup_storage_size as u64).saturating_sub(SHARED_BYTES);
    let by_memory = memory / slot_bytes(nodes, precision, scheme);
    let by_invocations = (max_invocations / lanes) as u64;
    let by_target = (TARGET_INVOCATIONS / lanes).max(1) as u64;
    let sims = by_memory.min(by_invocations).min(by_target);
    (sims >= 1).then_some(WorkgroupShape {
        nodes,
        sims: sims as u32,
        lanes,
    })
}
