//! Where each simulation of a batch runs: the layout that holds it (the
//! cost model's choice per scheme where both do), and its place among a
//! chunk's workgroups.

use super::batch::GpuSimulation;
use super::cost;
use super::layout::{GpuLayout, LayoutRequest};
use super::{Gpu, GpuError, Precision};
use crate::scheme::FixedStepScheme;

/// The layout of every simulation of a batch, as [`run_batch`](super::run_batch) will run
/// it: the one asked for, or with
/// `Auto` the cost model's per scheme ([`cost`]), except where only the
/// other layout holds a simulation's n. On a CPU emulation `Auto` keeps the
/// thread layout (see [`cost`]).
pub fn assign_layouts(
    gpu: &Gpu,
    sims: &[GpuSimulation],
    request: LayoutRequest,
    precision: Precision,
) -> Result<Vec<GpuLayout>, GpuError> {
    if let Some(layout) = request.fixed() {
        return Ok(vec![layout; sims.len()]);
    }
    let holds = |layout: GpuLayout, sim: &GpuSimulation| layout_holds(gpu, layout, sim, precision);
    let mut preferred = [GpuLayout::Thread; 2];
    if gpu.adapter.hardware {
        for scheme in [FixedStepScheme::Explicit, FixedStepScheme::SemiImplicit] {
            let work: Vec<cost::SimulationWork> = sims
                .iter()
                .filter(|s| s.scheme == scheme)
                .map(|s| (s.params.elements, s.total_steps))
                .collect();
            if !work.is_empty() {
                preferred[scheme as usize] =
                    cost::fastest_layout(&work, scheme, gpu.layout_rates(precision, scheme)?).0;
            }
        }
    }
    Ok(sims
        .iter()
        .map(|sim| {
            let first = preferred[sim.scheme as usize];
            let other = match first {
                GpuLayout::Thread => GpuLayout::Workgroup,
                GpuLayout::Workgroup => GpuLayout::Thread,
            };
            if holds(first, sim) || !holds(other, sim) {
                first
            } else {
                other
            }
        })
        .collect())
}

/// Whether `layout` can run `sim` in `precision` on `gpu`: the thread
/// layout's private arrays, or a workgroup's memory, hold its nodes.
pub fn layout_holds(
    gpu: &Gpu,
    layout: GpuLayout,
    sim: &GpuSimulation,
    precision: Precision,
) -> bool {
    match layout {
        GpuLayout::Thread => {
            super::abi::node_capacity(sim.params.elements, precision.real_bytes(), sim.scheme)
                .is_some()
        }
        GpuLayout::Workgroup => {
            super::layout::workgroup_shape(sim.params.elements, precision, sim.scheme, &gpu.limits)
                .is_some()
        }
    }
}

/// The order of a chunk's simulations on the device, from `sorted` (by n
/// and steps, so that each workgroup holds similar ones): whole workgroups
/// in bit-reversed order, a partial one last. lavapipe hands each of its T
/// threads one contiguous 1/T of a dispatch's workgroups (`iter_per_thread`
/// in Mesa's lp_cs_tpool.c), so in sorted order one thread got all the
/// largest tethers: the default identification grid kept 1.2 of 2 cores
/// busy. Bit reversal gives every contiguous half (quarter, …) of the
/// workgroups every other (fourth, …) one of the sorted sequence. Hardware
/// GPUs schedule workgroups dynamically and do not care.
pub(super) fn spread_workgroups(sorted: &[usize], workgroup: usize) -> Vec<usize> {
    let workgroup = workgroup.max(1);
    let whole = sorted.len() / workgroup * workgroup;
    let blocks: Vec<&[usize]> = sorted[..whole].chunks(workgroup).collect();
    let slots = blocks.len().next_power_of_two();
    let bits = slots.trailing_zeros();
    let mut out = Vec::with_capacity(sorted.len());
    for i in 0..slots {
        let r = if bits == 0 {
            i
        } else {
            i.reverse_bits() >> (usize::BITS - bits)
        };
        if let Some(block) = blocks.get(r) {
            out.extend_from_slice(block);
        }
    }
    out.extend_from_slice(&sorted[whole..]);
    out
}

#[cfg(test)]
mod tests {
    use super::spread_workgroups;

    /// Work of each contiguous 1/`threads` of the workgroups, as lavapipe
    /// splits a dispatch, for simulation i costing `cost(i)`.
    fn per_thread(
        order: &[usize],
        workgroup: usize,
        threads: usize,
        cost: impl Fn(usize) -> f64,
    ) -> Vec<f64> {
        let groups: Vec<f64> = order
            .chunks(workgroup)
            .map(|g| g.iter().map(|&i| cost(i)).sum())
            .collect();
        let per = groups.len() / threads;
        (0..threads)
            .map(|t| groups[t * per..(t + 1) * per].iter().sum())
            .collect()
    }

    #[test]
    fn spread_keeps_workgroups_whole_and_balances_contiguous_shares() {
        // The default grid's 735 drops in 8-wide workgroups: 91 whole, and
        // 7 simulations left over. Cost grows with the sort order, as n does.
        let sorted: Vec<usize> = (0..735).collect();
        let order = spread_workgroups(&sorted, 8);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, sorted, "a permutation");
        for group in order[..728].chunks(8) {
            assert_eq!(group[0] % 8, 0, "{group:?} starts a workgroup");
            assert!(
                group.windows(2).all(|w| w[1] == w[0] + 1),
                "{group:?} is whole"
            );
        }
        assert_eq!(&order[728..], &sorted[728..], "the partial workgroup last");
        let cost = |i: usize| 1.0 + (i / 147) as f64 * 4.0;
        for threads in [2, 4] {
            let sorted_share = per_thread(&sorted, 8, threads, cost);
            let spread_share = per_thread(&order, 8, threads, cost);
            let imbalance = |s: &[f64]| {
                s.iter().cloned().fold(0.0, f64::max)
                    / s.iter().cloned().fold(f64::INFINITY, f64::min)
            };
            assert!(imbalance(&sorted_share) > 2.0, "{sorted_share:?}");
            assert!(
                imbalance(&spread_share) < 1.1,
                "{threads} threads: {spread_share:?}"
            );
        }
    }

    #[test]
    fn spread_of_small_chunks_is_the_identity_or_a_permutation() {
        assert_eq!(spread_workgroups(&[], 8), Vec::<usize>::new());
        assert_eq!(spread_workgroups(&[3, 1, 2], 8), vec![3, 1, 2]);
        assert_eq!(spread_workgroups(&[0, 1, 2, 3], 1), vec![0, 2, 1, 3]);
        assert_eq!(spread_workgroups(&[5, 6, 7], 1), vec![5, 7, 6]);
    }
}
