//! The GPU engine's two layouts, and the one cost model that picks between
//! them (`--gpu-layout auto`) and that `--backend auto` weighs against the
//! CPU (`engine::choice`). The same model for the adaptive stage, which
//! also chooses that stage's lanes, is in `cost/adaptive.rs` ([`adaptive_seconds`],
//! [`adaptive_lanes`]); `cost/radau.rs` prices a Radau IIA stage before
//! it is built ([`RadauWork`]).
//!
//! - **Thread layout** (`shaders/step.wgsl`): one invocation runs one whole
//!   simulation. Every flop of a simulation is on one serial chain, so a
//!   job takes at least its longest simulation at one invocation's rate;
//!   its private arrays fill the device only with tens of thousands of
//!   simulations.
//! - **Workgroup layout** (`shaders/step_workgroup.wgsl`): a workgroup holds
//!   S simulations with T lanes each, the state in workgroup memory. The
//!   elements (about 80 % of a step's flops) and the node updates are
//!   spread over the T lanes; the block-tridiagonal solve runs node after
//!   node, shared by four lanes. A step's serial chain is then the elements
//!   of one lane plus n + 1 shared solve nodes, not n elements and n + 1
//!   whole nodes.
//!
//! **The solve, by its critical path.** With the elements spread, the
//! solve is what remains serial: n + 1 nodes of a 4×4 inverse and three 4×4
//! products each.
//! - One lane (block Thomas as the thread layout runs it): 502 flops a node
//!   (`flops::node_solve`); at n = 50, 25.6k flops a step against 2 × 1.9k
//!   for a lane's elements, 87 % of the chain.
//! - Four lanes, a column of each block apiece (the work-sharing block
//!   Thomas of László, Giles and Appleyard, OP-DSL/tridsolver): 212 flops a
//!   node on the longest lane (`flops::SHARED_SEMI_IMPLICIT_NODE_SOLVE`),
//!   the same total work, three barriers a node. This is the one used for
//!   the semi-implicit scheme; the explicit scheme's solve is a
//!   matrix-vector product a node and stays on one lane.
//! - Block cyclic reduction: log₂(n + 1) levels instead of n + 1 nodes,
//!   but each level factors every remaining node (about ten times the
//!   solve's work at n = 50), which a filled device pays in full, and its
//!   products come in another order than the CPU's and the thread
//!   layout's. Left for when measurements show the four-lane chain still
//!   dominating.
//!
//! The shared solve keeps the thread layout's arithmetic column by column,
//! so on lavapipe the two layouts agree to the last bit.
//!
//! **The model.** Work and chains are counted in flops from the model
//! (`gpu::flops`, each simulation's steps); the two rates of each layout
//! are measured on the adapter: one invocation's chain
//! ([`GpuRates::invocation_gflops`]) and the filled device's
//! ([`GpuRates::device_gflops`]), on the step pipelines themselves where
//! `engine::calibrate::calibrate_layouts` ran ([`LayoutRates`]), else by the
//! peak stage's multiply-add chains. No timing is typed in. For a layout
//! whose simulation i keeps `lanes` lanes busy along a chain of `chain_i`
//! flops:
//!
//!   t = max( max_i chain_i / r_invocation ,  Σ_i lanes · chain_i / r_device )
//!
//! over the simulations the engine runs together: a batch in the thread
//! layout, each n of a batch in the workgroup layout (one pipeline per n,
//! run one after another, so their times add), and a job's batches (its
//! chunks) one after another.
//!
//! The first term is the longest simulation, the second the device full of
//! lanes (idle ones included: a lane waiting at a barrier holds its slot).
//! Thread layout: lanes = 1, chain_i = all of simulation i's flops.
//! Workgroup layout: lanes = T, chain_i = steps × (per-lane element and node
//! work + the solve's n + 1 nodes). Barriers (seven per step, and one
//! every 16 steps where the workgroup looks whether any of its
//! simulations still runs) and workgroup-memory traffic are not counted
//! as flops: rates measured on the step pipeline include them (on an H100
//! they take three quarters of a workgroup step), the peak stage's do not.
//!
//! On a CPU emulation (lavapipe) `auto` takes the thread layout without
//! estimating: lavapipe runs a workgroup's invocations on one CPU thread
//! and switches between them at every barrier, and its "lanes" are the
//! same SIMD lanes that the thread layout already fills. The workgroup
//! layout runs there for testing, correctly and slowly.

mod adaptive;
mod radau;

pub use adaptive::*;
pub use radau::*;

use super::flops;
use super::layout::{GpuLayout, lanes_for};
use crate::scheme::FixedStepScheme;

/// Measured rates of the GPU [GFLOP/s of multiply-adds].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuRates {
    /// One invocation alone (its dependent chains).
    pub invocation_gflops: f64,
    /// The whole device, filled.
    pub device_gflops: f64,
}

/// The rates of each layout. Measured on the step pipelines themselves
/// where `engine::choice` calibrated them (`Gpu::layout_rates`); else the
/// peak stage's, the same for both.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayoutRates {
    pub thread: GpuRates,
    pub workgroup: GpuRates,
}

impl LayoutRates {
    /// The same rates for both layouts (the peak stage's).
    pub fn same(rates: GpuRates) -> Self {
        Self {
            thread: rates,
            workgroup: rates,
        }
    }

    pub fn get(&self, layout: GpuLayout) -> GpuRates {
        match layout {
            GpuLayout::Thread => self.thread,
            GpuLayout::Workgroup => self.workgroup,
        }
    }

    pub fn set(&mut self, layout: GpuLayout, rates: GpuRates) {
        match layout {
            GpuLayout::Thread => self.thread = rates,
            GpuLayout::Workgroup => self.workgroup = rates,
        }
    }
}

/// A simulation as the model sees it: n and its steps.
pub type SimulationWork = (usize, u64);

/// Flops on one step's serial chain in the workgroup layout with `lanes`
/// lanes: a lane's elements in each pass, its nodes' updates, and the
/// solve's n + 1 nodes (shared by four lanes when semi-implicit).
pub fn workgroup_chain_flops(elements: usize, lanes: u32, scheme: FixedStepScheme) -> u64 {
    let solve_node = match scheme {
        FixedStepScheme::SemiImplicit => flops::SHARED_SEMI_IMPLICIT_NODE_SOLVE,
        FixedStepScheme::Explicit => flops::node_solve(scheme),
    };
    let lanes = lanes.max(1) as usize;
    let even = elements.div_ceil(2);
    let odd = elements / 2;
    let per_lane_elements = (even.div_ceil(lanes) + odd.div_ceil(lanes)) as u64;
    let per_lane_nodes = (elements + 1).div_ceil(lanes) as u64;
    per_lane_elements * flops::element(scheme)
        + per_lane_nodes * flops::NODE_UPDATE
        + (elements as u64 + 1) * solve_node
}

/// The model's wall time \[s\] for `work`, one batch handed to the engine,
/// in `layout` (see the module doc). The engine runs the workgroup layout
/// one n after another (a pipeline per n), so there the groups' times add
/// up; the thread layout runs every n in one dispatch.
pub fn layout_seconds(
    work: &[SimulationWork],
    scheme: FixedStepScheme,
    layout: GpuLayout,
    rates: GpuRates,
) -> f64 {
    let seconds = |group: &[SimulationWork]| {
        let (longest, occupancy) = chain_and_occupancy(group, scheme, layout);
        (longest / (rates.invocation_gflops * 1e9)).max(occupancy / (rates.device_gflops * 1e9))
    };
    match layout {
        GpuLayout::Thread => seconds(work),
        GpuLayout::Workgroup => {
            let mut sorted = work.to_vec();
            sorted.sort_by_key(|w| w.0);
            sorted.chunk_by(|a, b| a.0 == b.0).map(seconds).sum()
        }
    }
}

/// The model's two counts for `work` in `layout` [flops]: the longest
/// simulation's serial chain, and all simulations' lanes × chains.
pub fn chain_and_occupancy(
    work: &[SimulationWork],
    scheme: FixedStepScheme,
    layout: GpuLayout,
) -> (f64, f64) {
    let (mut longest, mut occupancy) = (0.0f64, 0.0f64);
    for &(elements, steps) in work {
        let (lanes, per_step) = match layout {
            GpuLayout::Thread => (1, elements as u64 * flops::per_element_step(scheme)),
            GpuLayout::Workgroup => {
                let lanes = lanes_for(elements);
                (lanes, workgroup_chain_flops(elements, lanes, scheme))
            }
        };
        let chain = steps as f64 * per_step as f64;
        longest = longest.max(chain);
        occupancy += lanes as f64 * chain;
    }
    (longest, occupancy)
}

/// The layout the model estimates faster for `work`, with both estimates.
pub fn fastest_layout(
    work: &[SimulationWork],
    scheme: FixedStepScheme,
    rates: LayoutRates,
) -> (GpuLayout, f64, f64) {
    let thread = layout_seconds(work, scheme, GpuLayout::Thread, rates.thread);
    let workgroup = layout_seconds(work, scheme, GpuLayout::Workgroup, rates.workgroup);
    let layout = if workgroup < thread {
        GpuLayout::Workgroup
    } else {
        GpuLayout::Thread
    };
    (layout, thread, workgroup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Precision;
    use crate::gpu::layout::*;

    const SEMI: FixedStepScheme = FixedStepScheme::SemiImplicit;

    /// An H100-like pair of rates: a filled device some 10⁵ times one
    /// invocation (numbers of that order, not a measurement).
    const RATES: GpuRates = GpuRates {
        invocation_gflops: 0.5,
        device_gflops: 50_000.0,
    };

    #[test]
    fn lanes_cover_an_element_pair_each_up_to_the_cap() {
        assert_eq!(lanes_for(1), SOLVE_LANES);
        assert_eq!(lanes_for(8), 4);
        assert_eq!(lanes_for(10), 8);
        assert_eq!(lanes_for(40), 32);
        assert_eq!(lanes_for(64), 32);
        assert_eq!(lanes_for(128), 32);
    }

    #[test]
    fn shapes_pack_small_simulations_and_respect_the_limits() {
        let limits = wgpu::Limits {
            max_compute_workgroup_storage_size: 32768,
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            ..wgpu::Limits::default()
        };
        let small = workgroup_shape(10, Precision::F32, SEMI, &limits).unwrap();
        assert_eq!((small.nodes, small.lanes, small.sims), (11, 8, 8));
        let large = workgroup_shape(50, Precision::F32, SEMI, &limits).unwrap();
        assert_eq!((large.lanes, large.sims), (32, 2));
        let f64_64 = workgroup_shape(64, Precision::F64, SEMI, &limits).unwrap();
        assert_eq!(f64_64.sims, 1);
        assert!(workgroup_bytes(f64_64, Precision::F64, SEMI) <= 32768);
        // 16 KiB (Vulkan's guaranteed minimum): fewer per workgroup.
        let small_memory = wgpu::Limits {
            max_compute_workgroup_storage_size: 16384,
            ..limits.clone()
        };
        let tight = workgroup_shape(50, Precision::F32, SEMI, &small_memory).unwrap();
        assert_eq!(tight.sims, 1);
        assert!(workgroup_shape(64, Precision::F64, SEMI, &small_memory).is_none());
        // Invocations: 16 lanes allowed, so one simulation of 16 lanes.
        let narrow = wgpu::Limits {
            max_compute_invocations_per_workgroup: 16,
            ..limits
        };
        let shape = workgroup_shape(50, Precision::F32, SEMI, &narrow).unwrap();
        assert_eq!((shape.lanes, shape.sims), (16, 1));
    }

    #[test]
    fn the_chain_is_a_lanes_elements_and_the_shared_solve() {
        // n = 50, 32 lanes: one element per pass, two nodes, 51 solve nodes
        // shared by four lanes.
        let chain = workgroup_chain_flops(50, 32, SEMI);
        assert_eq!(
            chain,
            2 * flops::element(SEMI)
                + 2 * flops::NODE_UPDATE
                + 51 * flops::SHARED_SEMI_IMPLICIT_NODE_SOLVE
        );
        // The explicit solve stays on one lane: with one lane in all, the
        // thread layout's work on one chain (plus the tip).
        let explicit = FixedStepScheme::Explicit;
        assert_eq!(
            workgroup_chain_flops(50, 1, explicit),
            50 * flops::per_element_step(explicit)
                + flops::node_solve(explicit)
                + flops::NODE_UPDATE
        );
        // Sharing is worth its barriers: less than half the one-lane solve.
        assert!(2 * flops::SHARED_SEMI_IMPLICIT_NODE_SOLVE < flops::node_solve(SEMI));
    }

    #[test]
    fn the_workgroup_layouts_n_groups_run_one_after_another() {
        // Two drops the device holds at once: the thread layout's time is
        // the longer chain, the workgroup layout's both chains (a pipeline
        // per n), as the engine dispatches them.
        let work = [(10, 1000), (50, 1000)];
        let chain = |n: usize, layout| chain_and_occupancy(&[(n, 1000)], SEMI, layout).0;
        let seconds = |flops: f64| flops / (RATES.invocation_gflops * 1e9);
        let thread = layout_seconds(&work, SEMI, GpuLayout::Thread, RATES);
        assert_eq!(thread, seconds(chain(50, GpuLayout::Thread)));
        let workgroup = layout_seconds(&work, SEMI, GpuLayout::Workgroup, RATES);
        let both =
            seconds(chain(10, GpuLayout::Workgroup)) + seconds(chain(50, GpuLayout::Workgroup));
        assert!(
            (workgroup - both).abs() < 1e-12 * both,
            "{workgroup} vs {both}"
        );
    }

    #[test]
    fn few_long_simulations_go_to_the_workgroup_layout_many_equal_ones_do_not() {
        // The paper's grid's shape: 3,535 drops, n = 10..50.
        let spec: Vec<SimulationWork> = (0..3535)
            .map(|i| {
                let n = 10 * (1 + i % 5);
                (n, 1_626 * n as u64)
            })
            .collect();
        let (layout, thread, workgroup) = fastest_layout(&spec, SEMI, LayoutRates::same(RATES));
        assert_eq!(layout, GpuLayout::Workgroup, "{thread} vs {workgroup}");
        // The landscape's: 32,768 equal swing-ups at n = 40 fill the device
        // in either layout, and the workgroup layout's idle lanes cost.
        let landscape = vec![(40, 100_000); 32_768];
        let (layout, thread, workgroup) =
            fastest_layout(&landscape, SEMI, LayoutRates::same(RATES));
        assert_eq!(layout, GpuLayout::Thread, "{thread} vs {workgroup}");
    }

    /// Bytes of the workgroup stage's workgroup globals as naga lays them
    /// out, after checking that the module validates.
    fn wgsl_workgroup_bytes(
        shape: WorkgroupShape,
        precision: Precision,
        scheme: FixedStepScheme,
    ) -> u64 {
        let src = super::super::shader::step_workgroup_source(precision, scheme, shape);
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{shape:?}: {}", e.emit_to_string(&src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{shape:?} {scheme:?}: {}", e.emit_to_string(&src)));
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).unwrap();
        module
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
            .map(|(_, g)| layouter[g.ty].size as u64)
            .sum()
    }

    #[test]
    fn workgroup_memory_is_what_the_shape_counts() {
        // Every shape the engine can choose on a 32 KiB adapter, both
        // schemes and precisions: naga's layout of the pipeline's workgroup
        // arrays is the count the shape was chosen by, so a pipeline never
        // asks for more than the adapter's limit.
        let limits = wgpu::Limits {
            max_compute_workgroup_storage_size: 32768,
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            ..wgpu::Limits::default()
        };
        for precision in [Precision::F32, Precision::F64] {
            for scheme in [FixedStepScheme::Explicit, SEMI] {
                for n in [1, 2, 7, 10, 33, 50, 64] {
                    let Some(shape) = workgroup_shape(n, precision, scheme, &limits) else {
                        panic!("n = {n} {precision:?} {scheme:?} has no shape");
                    };
                    let bytes = workgroup_bytes(shape, precision, scheme);
                    assert!(bytes <= 32768, "{shape:?}: {bytes}");
                    assert_eq!(
                        wgsl_workgroup_bytes(shape, precision, scheme),
                        bytes,
                        "n = {n} {precision:?} {scheme:?} {shape:?}"
                    );
                }
            }
        }
    }
}
