//! The GPU engine's two layouts, and the one cost model that picks between
//! them (`--gpu-layout auto`) and that `--backend auto` weighs against the
//! CPU (`engine::choice`); at its end, the same model for the adaptive
//! stage ([`adaptive_seconds`]), which also chooses that stage's lanes
//! ([`adaptive_lanes`]).
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

use super::Precision;
use super::flops;
use super::layout::{GpuLayout, MIN_ADAPTIVE_LANES, adaptive_lanes_for, lanes_for};
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

/// What one simulation of the adaptive implicit scheme does, as the
/// reference solver counts it: fractional where it is a sample's mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdaptiveWork {
    pub elements: usize,
    /// Attempted steps: accepted and rejected.
    pub attempts: f64,
    pub newton_iterations: f64,
    pub factorizations: f64,
}

impl AdaptiveWork {
    /// One run's counts: `steps` accepted and `rejected` attempts.
    pub fn counted(
        elements: usize,
        (steps, rejected): (u64, u64),
        newton_iterations: u64,
        factorizations: u64,
    ) -> Self {
        Self {
            elements,
            attempts: (steps + rejected) as f64,
            newton_iterations: newton_iterations as f64,
            factorizations: factorizations as f64,
        }
    }

    /// The mean of `work`'s counts, at its largest n; None if empty.
    pub fn mean(work: &[Self]) -> Option<Self> {
        let count = work.len() as f64;
        let mean = |f: fn(&Self) -> f64| work.iter().map(f).sum::<f64>() / count;
        (!work.is_empty()).then(|| Self {
            elements: work.iter().map(|w| w.elements).max().unwrap_or(0),
            attempts: mean(|w| w.attempts),
            newton_iterations: mean(|w| w.newton_iterations),
            factorizations: mean(|w| w.factorizations),
        })
    }
}

/// Flops on one simulation's serial chain in the adaptive stage
/// (shaders/step_adaptive.wgsl) with `lanes` lanes: its attempts' node
/// passes, each Newton iteration's force pass, node passes and solve, and
/// each factorization's tangent pass and factorization (the solves' and
/// factorizations' part: [`adaptive_serial_flops`]). Scalars (the
/// step's control, Newton's rate) and barriers are not counted; rates
/// measured on the stage include them.
pub fn adaptive_chain_flops(work: &AdaptiveWork, lanes: u32, precision: Precision) -> f64 {
    let serial = adaptive_serial_flops(work, lanes);
    let lanes = lanes.max(1) as usize;
    let n = work.elements;
    let per_lane_elements = n.div_ceil(lanes) as f64;
    let per_lane_nodes = (n + 1).div_ceil(lanes) as f64;
    let attempt = per_lane_nodes * flops::ADAPTIVE_ATTEMPT_NODE as f64;
    let newton = per_lane_elements * flops::adaptive_force_element(precision) as f64
        + per_lane_nodes * flops::ADAPTIVE_NEWTON_NODE as f64;
    let factor = per_lane_elements * flops::adaptive_tangent_element(precision) as f64;
    work.attempts * attempt
        + work.newton_iterations * newton
        + work.factorizations * factor
        + serial
}

/// The part of [`adaptive_chain_flops`] that more than two lanes do not
/// shorten: the factorizations and solves from both ends, lane 0's share.
/// With two lanes or more, lane 0 takes the pin's side (⌈n/2⌉ nodes) and
/// the middle node, lane 1 the tip's side beside it; with one, lane 0
/// takes both sides, and the middle node's correction once for each.
pub fn adaptive_serial_flops(work: &AdaptiveWork, lanes: u32) -> f64 {
    let n = work.elements as u64;
    let (side_nodes, middle_solves) = if lanes >= 2 {
        (n.div_ceil(2), 1)
    } else {
        (n, 2)
    };
    let solve =
        side_nodes * flops::ADAPTIVE_SOLVE_NODE + middle_solves * flops::ADAPTIVE_SOLVE_MIDDLE;
    let factor = side_nodes * flops::ADAPTIVE_FACTOR_NODE + flops::ADAPTIVE_FACTOR_MIDDLE;
    work.newton_iterations * solve as f64 + work.factorizations * factor as f64
}

/// The lane-flops one simulation with `lanes` lanes holds on a filled
/// device whose subgroups (warps, wavefronts, SIMD vectors) are
/// `subgroup_width` invocations wide: its every lane along the shared
/// passes, but along the factorizations and solves (lanes 0 and 1) only
/// the lanes of lane 0's subgroup. A subgroup whose lanes all wait at a
/// barrier issues nothing (a GPU gives its turn to another; lavapipe skips
/// the branch), while the idle lanes of a working subgroup go along with
/// it.
pub fn adaptive_filled_flops(
    work: &AdaptiveWork,
    lanes: u32,
    subgroup_width: u32,
    precision: Precision,
) -> f64 {
    let serial = adaptive_serial_flops(work, lanes);
    let shared = adaptive_chain_flops(work, lanes, precision) - serial;
    lanes as f64 * shared + lanes.min(subgroup_width.max(1)) as f64 * serial
}

/// All the flops of one simulation in the adaptive stage, whichever lanes
/// do them: its chain on a single lane.
pub fn adaptive_work_flops(work: &AdaptiveWork, precision: Precision) -> f64 {
    adaptive_chain_flops(work, 1, precision)
}

/// Barriers (a `workgroupUniformLoad` is one) the adaptive stage
/// (step_adaptive.wgsl) passes per attempted step outside Newton's rounds:
/// prediction, the flags' uniform load, error, landing.
pub const ADAPTIVE_BARRIERS_PER_ATTEMPT: f64 = 4.0;
/// ... per Newton round: the force pass, residual, the solve's sweeps and
/// its back substitution, update, the round's end and the flags' uniform
/// load.
pub const ADAPTIVE_BARRIERS_PER_ROUND: f64 = 7.0;
/// ... more in a round that factors: the tangent pass, the
/// factorization's two sides and its middle.
pub const ADAPTIVE_BARRIERS_PER_FACTORING: f64 = 3.0;

/// The barriers one simulation's work passes in the adaptive stage (the
/// three counts above; a test counts them in the shader).
pub fn adaptive_barriers(work: &AdaptiveWork) -> f64 {
    ADAPTIVE_BARRIERS_PER_ATTEMPT * work.attempts
        + ADAPTIVE_BARRIERS_PER_ROUND * work.newton_iterations
        + ADAPTIVE_BARRIERS_PER_FACTORING * work.factorizations
}

/// The adaptive stage's measured costs: its chain's flops, and what a
/// barrier adds, which flops do not count and which cost the same for
/// every n (on the H100 the semi-implicit workgroup layout's barriers took
/// three quarters of its step).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdaptiveRates {
    /// One simulation alone, and the device filled (per lane).
    pub flops: GpuRates,
    /// What a barrier adds to one simulation's chain alone \[s\].
    pub barrier_lone_s: f64,
    /// What a barrier costs a lane with the device filled \[s\].
    pub barrier_filled_s: f64,
    /// The adapter's subgroup width ([`adaptive_filled_flops`]).
    pub subgroup_width: u32,
    /// The stage's precision, whose flops the rates are per.
    pub precision: Precision,
}

impl AdaptiveRates {
    /// Flops alone, barriers free: where only one n was measured.
    pub fn flops_only(flops: GpuRates, subgroup_width: u32, precision: Precision) -> Self {
        Self {
            flops,
            barrier_lone_s: 0.0,
            barrier_filled_s: 0.0,
            subgroup_width,
            precision,
        }
    }

    /// One simulation's chain alone \[s\].
    pub fn lone_s(&self, work: &AdaptiveWork, lanes: u32) -> f64 {
        adaptive_chain_flops(work, lanes, self.precision) / (self.flops.invocation_gflops * 1e9)
            + adaptive_barriers(work) * self.barrier_lone_s
    }

    /// One simulation's lanes with the device filled \[s\].
    pub fn filled_s(&self, work: &AdaptiveWork, lanes: u32) -> f64 {
        adaptive_filled_flops(work, lanes, self.subgroup_width, self.precision)
            / (self.flops.device_gflops * 1e9)
            + lanes as f64 * adaptive_barriers(work) * self.barrier_filled_s
    }
}

/// The model's wall time \[s\] of one batch of the adaptive stage at the
/// lanes it is run with ([`adaptive_lanes`]).
pub fn adaptive_seconds(work: &[AdaptiveWork], rates: AdaptiveRates) -> f64 {
    let elements: Vec<usize> = work.iter().map(|w| w.elements).collect();
    adaptive_seconds_at(work, rates, adaptive_lanes(&elements, rates))
}

/// The model's wall time \[s\] of one batch of the adaptive stage with
/// `lanes` lanes a simulation, every simulation in one dispatch sequence,
/// by the module's formula with barriers added: the longest chain alone,
/// or every simulation's lanes filled. A workgroup runs until its slowest
/// simulation is done, so simulations of unequal work cost more than the
/// second term says; the estimate counts each one's own.
pub fn adaptive_seconds_at(work: &[AdaptiveWork], rates: AdaptiveRates, lanes: u32) -> f64 {
    let (mut longest, mut occupancy) = (0.0f64, 0.0f64);
    for w in work {
        longest = longest.max(rates.lone_s(w, lanes));
        occupancy += rates.filled_s(w, lanes);
    }
    longest.max(occupancy)
}

/// The work the adaptive stage's lanes are chosen for, per attempted
/// step: the Newton iterations and factorizations of the reference runs
/// the cost model's estimates count (`examples/layout_costs`: 1.8–3.1 and
/// 0.08–0.48 over the default grid, the paper's and a GA generation, in
/// f32 and f64), and how much more the longest simulation of a batch does
/// than the mean (1.7–3.3 there). Only ratios matter to the choice.
const LANES_NEWTON_PER_ATTEMPT: f64 = 2.5;
const LANES_FACTORIZATIONS_PER_ATTEMPT: f64 = 0.25;
const LANES_LONGEST_OVER_MEAN: f64 = 3.0;

/// The lanes a simulation the adaptive stage gives a batch of simulations
/// of `elements` elements: of the powers of two from
/// [`MIN_ADAPTIVE_LANES`] up to a lane per element of the largest n
/// ([`adaptive_lanes_for`]), the one the model estimates fastest for
/// simulations of the typical work above, ties to more lanes.
///
/// Few simulations take the most: the wall time is the longest
/// simulation's chain, which more lanes shorten. A filled device takes
/// fewer: lane 0 factors and solves while the other lanes of its subgroup
/// go along idle ([`adaptive_filled_flops`]), and fewer lanes a
/// simulation put more simulations' lane 0s in one subgroup to work at
/// once (on lavapipe the default grid's first pass took 70.7 s with 32
/// lanes, 48.3 s with 8, 35.9 s with 2; BENCHMARKS.md).
pub fn adaptive_lanes(elements: &[usize], rates: AdaptiveRates) -> u32 {
    let largest = elements.iter().copied().max().unwrap_or(1);
    let typical = |elements: usize, attempts: f64| AdaptiveWork {
        elements,
        attempts,
        newton_iterations: LANES_NEWTON_PER_ATTEMPT * attempts,
        factorizations: LANES_FACTORIZATIONS_PER_ATTEMPT * attempts,
    };
    let longest = typical(largest, LANES_LONGEST_OVER_MEAN);
    let seconds = |lanes: u32| {
        let filled: f64 = elements
            .iter()
            .map(|&n| rates.filled_s(&typical(n, 1.0), lanes))
            .sum();
        rates.lone_s(&longest, lanes).max(filled)
    };
    let most = adaptive_lanes_for(largest);
    let mut best = (most, seconds(most));
    for lanes in (MIN_ADAPTIVE_LANES.trailing_zeros()..most.trailing_zeros())
        .rev()
        .map(|k| 1u32 << k)
    {
        let s = seconds(lanes);
        if s < best.1 {
            best = (lanes, s);
        }
    }
    best.0
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

    /// Barriers in the adaptive stage's attempt loop, as (outside Newton's
    /// rounds, per round, per factoring round): each `barrier()`,
    /// `workgroupUniformLoad(` and `take_flags(` (a uniform load) times the
    /// trip counts of the loops around it, read from the shader's braces.
    fn counted_barriers(shader: &str) -> [u32; 3] {
        let code: String = shader
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let main = &code[code.find("fn main(").expect("the stage's entry point")..];
        // (trip count, region: 0 attempt, 1 round, 2 factoring, None outside)
        let mut frames: Vec<(u32, Option<usize>)> = Vec::new();
        let mut counts = [0; 3];
        let mut header = String::new();
        let count_in = |text: &str, frames: &[(u32, Option<usize>)], counts: &mut [u32; 3]| {
            let hits = (text.matches("barrier()").count()
                + text.matches("workgroupUniformLoad(").count()
                + text.matches("take_flags(").count()) as u32;
            if hits == 0 {
                return;
            }
            let region = frames.iter().rev().find_map(|f| f.1);
            let trips: u32 = frames.iter().map(|f| f.0).product();
            let region = region.expect("every barrier inside the attempt loop");
            // Each loop frame multiplies by its trips, but the attempt and
            // round loops are what the counts are per.
            counts[region] += hits * trips;
        };
        for ch in main.chars() {
            match ch {
                '{' => {
                    count_in(&header, &frames, &mut counts);
                    let h = header.trim();
                    let frame = if h.starts_with("for (var attempt") {
                        (1, Some(0))
                    } else if h.starts_with("for (var round") {
                        (1, Some(1))
                    } else if h.contains("(flags & FLAG_FACTORING)") {
                        (1, Some(2))
                    } else if h.starts_with("for (var parity = 0u; parity < 2u;") {
                        (2, None)
                    } else if h.starts_with("for")
                        || h.starts_with("loop")
                        || h.starts_with("while")
                    {
                        (0, None) // unknown trips: a barrier inside would count 0 and fail
                    } else {
                        (1, None)
                    };
                    frames.push(frame);
                    header.clear();
                }
                '}' => {
                    count_in(&header, &frames, &mut counts);
                    header.clear();
                    frames.pop();
                    if frames.is_empty() {
                        break;
                    }
                }
                ';' => {
                    header.push(ch);
                    if !header.trim_start().starts_with("for") {
                        count_in(&header, &frames, &mut counts);
                        header.clear();
                    }
                }
                _ => header.push(ch),
            }
        }
        counts
    }

    #[test]
    fn the_shaders_barriers_are_the_models() {
        let counted = counted_barriers(crate::gpu::shader::STEP_ADAPTIVE);
        let modelled = [
            ADAPTIVE_BARRIERS_PER_ATTEMPT,
            ADAPTIVE_BARRIERS_PER_ROUND,
            ADAPTIVE_BARRIERS_PER_FACTORING,
        ];
        assert_eq!(
            counted.map(f64::from),
            modelled,
            "step_adaptive.wgsl's barriers"
        );
        // The counter sees a barrier moved into a loop of two.
        let doubled = crate::gpu::shader::STEP_ADAPTIVE.replacen(
            "            barrier();\n",
            "            for (var parity = 0u; parity < 2u; parity++) {\n barrier();\n }\n",
            1,
        );
        assert_ne!(counted_barriers(&doubled), counted);
    }

    #[test]
    fn a_runs_counts_and_their_mean() {
        let a = AdaptiveWork::counted(10, (90, 10), 300, 20);
        assert_eq!(
            (a.attempts, a.newton_iterations, a.factorizations),
            (100.0, 300.0, 20.0)
        );
        let b = AdaptiveWork::counted(20, (290, 10), 500, 60);
        let mean = AdaptiveWork::mean(&[a, b]).unwrap();
        assert_eq!(mean.elements, 20);
        assert_eq!(
            (mean.attempts, mean.newton_iterations, mean.factorizations),
            (200.0, 400.0, 40.0)
        );
        assert_eq!(AdaptiveWork::mean(&[]), None);
    }

    #[test]
    fn the_adaptive_chain_adds_its_attempts_iterations_and_factorizations() {
        let one = |attempts, newton_iterations, factorizations| AdaptiveWork {
            elements: 4,
            attempts,
            newton_iterations,
            factorizations,
        };
        // n = 4 on two lanes: two elements and three nodes a lane; on
        // lane 0's side of the factorization and solve, nodes 0 and 1, then
        // the middle node 2.
        assert_eq!(
            adaptive_chain_flops(&one(1.0, 0.0, 0.0), 2, Precision::F64),
            3.0 * flops::ADAPTIVE_ATTEMPT_NODE as f64
        );
        assert_eq!(
            adaptive_chain_flops(&one(0.0, 1.0, 0.0), 2, Precision::F64),
            (2 * flops::adaptive_force_element(Precision::F64)
                + 3 * flops::ADAPTIVE_NEWTON_NODE
                + 2 * flops::ADAPTIVE_SOLVE_NODE
                + flops::ADAPTIVE_SOLVE_MIDDLE) as f64
        );
        assert_eq!(
            adaptive_chain_flops(&one(0.0, 0.0, 1.0), 2, Precision::F64),
            (2 * flops::adaptive_tangent_element(Precision::F64)
                + 2 * flops::ADAPTIVE_FACTOR_NODE
                + flops::ADAPTIVE_FACTOR_MIDDLE) as f64
        );
        // f32 splits the strain in its two element passes (f64 does not):
        // two elements a lane each.
        let split = 2.0
            * (crate::model::element::GAUSS_POINTS as u64 * flops::SPLIT_STRAIN_POINT
                + flops::SPLIT_STRAIN_CHORD) as f64;
        for work in [one(0.0, 1.0, 0.0), one(0.0, 0.0, 1.0)] {
            assert_eq!(
                adaptive_chain_flops(&work, 2, Precision::F32)
                    - adaptive_chain_flops(&work, 2, Precision::F64),
                split
            );
        }
        // One lane: both sides, and the middle's correction for each.
        assert_eq!(
            adaptive_serial_flops(&one(0.0, 1.0, 1.0), 1),
            (4 * flops::ADAPTIVE_SOLVE_NODE
                + 2 * flops::ADAPTIVE_SOLVE_MIDDLE
                + 4 * flops::ADAPTIVE_FACTOR_NODE
                + flops::ADAPTIVE_FACTOR_MIDDLE) as f64
        );
        let all = adaptive_chain_flops(&one(3.0, 7.0, 2.0), 2, Precision::F64);
        let parts = 3.0 * adaptive_chain_flops(&one(1.0, 0.0, 0.0), 2, Precision::F64)
            + 7.0 * adaptive_chain_flops(&one(0.0, 1.0, 0.0), 2, Precision::F64)
            + 2.0 * adaptive_chain_flops(&one(0.0, 0.0, 1.0), 2, Precision::F64);
        assert!((all - parts).abs() < 1e-9 * all);
        // More lanes shorten the element and node passes; beyond two, not
        // the factorization's and solve's.
        let n40 = AdaptiveWork {
            elements: 40,
            ..one(1.0, 3.0, 0.5)
        };
        let (wide, narrow) = (
            adaptive_chain_flops(&n40, 20, Precision::F64),
            adaptive_chain_flops(&n40, 4, Precision::F64),
        );
        assert!(wide < narrow, "{wide} vs {narrow}");
        let serial = 3.0 * (20 * flops::ADAPTIVE_SOLVE_NODE + flops::ADAPTIVE_SOLVE_MIDDLE) as f64
            + 0.5 * (20 * flops::ADAPTIVE_FACTOR_NODE + flops::ADAPTIVE_FACTOR_MIDDLE) as f64;
        assert_eq!(adaptive_serial_flops(&n40, 20), serial);
        assert_eq!(adaptive_serial_flops(&n40, 2), serial);
        assert!(wide > serial, "{wide} vs lane 0's {serial}");
        // From both ends, lane 0's share is about half of one lane's.
        let alone = adaptive_serial_flops(&n40, 1);
        assert!(
            (1.9..2.0).contains(&(alone / serial)),
            "{alone} vs {serial}"
        );
    }

    #[test]
    fn the_adaptive_estimate_is_the_longest_chain_or_the_filled_device() {
        let rates = GpuRates {
            invocation_gflops: 1.0,
            device_gflops: 100.0,
        };
        let sim = AdaptiveWork {
            elements: 10,
            attempts: 100.0,
            newton_iterations: 300.0,
            factorizations: 30.0,
        };
        let lanes = adaptive_lanes_for(10);
        let chain = adaptive_chain_flops(&sim, lanes, Precision::F64);
        // Subgroups as wide as the lanes: every lane holds its place.
        let rates = AdaptiveRates::flops_only(rates, lanes, Precision::F64);
        let few = adaptive_seconds_at(&[sim; 2], rates, lanes);
        assert!((few - chain / 1e9).abs() < 1e-12 * few);
        let many = adaptive_seconds_at(&vec![sim; 10_000], rates, lanes);
        let filled = 10_000.0 * lanes as f64 * chain / 100e9;
        assert!((many - filled).abs() < 1e-9 * many);
        // Barriers add their count's cost, alone and per lane filled.
        let barriers = ADAPTIVE_BARRIERS_PER_ATTEMPT * 100.0
            + ADAPTIVE_BARRIERS_PER_ROUND * 300.0
            + ADAPTIVE_BARRIERS_PER_FACTORING * 30.0;
        assert_eq!(adaptive_barriers(&sim), barriers);
        let with = AdaptiveRates {
            barrier_lone_s: 1e-6,
            barrier_filled_s: 1e-8,
            ..rates
        };
        let few = adaptive_seconds_at(&[sim; 2], with, lanes);
        assert!((few - (chain / 1e9 + barriers * 1e-6)).abs() < 1e-12 * few);
        let many = adaptive_seconds_at(&vec![sim; 10_000], with, lanes);
        let filled = 10_000.0 * lanes as f64 * (chain / 100e9 + barriers * 1e-8);
        assert!((many - filled).abs() < 1e-9 * many);
    }

    /// Filled, a simulation holds all its lanes along the shared passes and
    /// lane 0's subgroup along its factorizations and solves.
    #[test]
    fn a_filled_simulation_holds_lane_0s_subgroup_along_its_chain() {
        let sim = AdaptiveWork {
            elements: 50,
            attempts: 1000.0,
            newton_iterations: 2500.0,
            factorizations: 250.0,
        };
        let serial = adaptive_serial_flops(&sim, 32);
        // Lane 0's side: nodes 0 to 24, then the middle node 25.
        assert_eq!(
            serial,
            2500.0 * (25 * flops::ADAPTIVE_SOLVE_NODE + flops::ADAPTIVE_SOLVE_MIDDLE) as f64
                + 250.0 * (25 * flops::ADAPTIVE_FACTOR_NODE + flops::ADAPTIVE_FACTOR_MIDDLE) as f64
        );
        let chain = adaptive_chain_flops(&sim, 32, Precision::F64);
        // Subgroups as wide as the lanes or wider: every lane throughout.
        assert_eq!(
            adaptive_filled_flops(&sim, 32, 32, Precision::F64),
            32.0 * chain
        );
        assert_eq!(
            adaptive_filled_flops(&sim, 8, 64, Precision::F64),
            8.0 * adaptive_chain_flops(&sim, 8, Precision::F64)
        );
        // lavapipe's 8: along lane 0's chain a quarter of 32 lanes.
        let narrow = adaptive_filled_flops(&sim, 32, 8, Precision::F64);
        assert_eq!(narrow, 32.0 * (chain - serial) + 8.0 * serial);
        // The price of 32 lanes over 2 on a filled lavapipe, over the
        // default grid's n (as many of each): more than 1, and less than
        // counting every lane along the factorization and solve makes it.
        // (Measured 2.13 there; the model says 1.69, optimistic for many
        // lanes since the element passes became one: BENCHMARKS.md.)
        let grid = |lanes, width| -> f64 {
            [10, 20, 30, 40, 50]
                .map(|elements| {
                    adaptive_filled_flops(
                        &AdaptiveWork { elements, ..sim },
                        lanes,
                        width,
                        Precision::F64,
                    )
                })
                .iter()
                .sum()
        };
        let price = grid(32, 8) / grid(2, 8);
        let every_lane = grid(32, 32) / grid(2, 8);
        assert!(
            price > 1.5 && every_lane > price + 0.5,
            "{price} {every_lane}"
        );
    }

    /// Few simulations get the most lanes, a filled device fewer, and the
    /// batch's estimate is the model's at the lanes chosen.
    #[test]
    fn the_adaptive_stage_takes_the_lanes_the_model_finds_fastest() {
        let rates = AdaptiveRates {
            flops: GpuRates {
                invocation_gflops: 0.36,
                device_gflops: 5000.0,
            },
            barrier_lone_s: 1e-7,
            barrier_filled_s: 1e-9,
            subgroup_width: 32,
            precision: Precision::F64,
        };
        assert_eq!(adaptive_lanes(&[50; 10], rates), adaptive_lanes_for(50));
        // Mixed n: the largest's.
        assert_eq!(adaptive_lanes(&[8, 50], rates), adaptive_lanes_for(50));
        let many = vec![50; 32_768];
        let chosen = adaptive_lanes(&many, rates);
        assert!(chosen < adaptive_lanes_for(50), "{chosen}");
        assert!(chosen.is_power_of_two());
        // Fewer lanes are chosen because the model finds them faster.
        let sim = AdaptiveWork {
            elements: 50,
            attempts: 1000.0,
            newton_iterations: 2500.0,
            factorizations: 250.0,
        };
        let work = vec![sim; 32_768];
        let at = |lanes| adaptive_seconds_at(&work, rates, lanes);
        assert!(at(chosen) < at(adaptive_lanes_for(50)));
        assert_eq!(adaptive_seconds(&work, rates), at(chosen));
        // The device's width in lanes decides: on a device a thousand
        // times as wide (flops and barriers), with the same chain alone,
        // 32,768 simulations no longer fill it.
        let wide = AdaptiveRates {
            flops: GpuRates {
                device_gflops: 5_000_000.0,
                ..rates.flops
            },
            barrier_filled_s: rates.barrier_filled_s / 1000.0,
            ..rates
        };
        assert_eq!(adaptive_lanes(&many, wide), adaptive_lanes_for(50));
        // No more lanes than the largest n's elements.
        assert_eq!(adaptive_lanes(&[4; 3], rates), adaptive_lanes_for(4));
    }

    const SEMI: FixedStepScheme = FixedStepScheme::SemiImplicit;

    /// An H100-like pair of rates: a filled device some 10⁵ times one
    /// invocation (numbers of that order, not a measurement).
    const RATES: GpuRates = GpuRates {
        invocation_gflops: 0.5,
        device_gflops: 50_000.0,
    };

    #[test]
    fn the_adaptive_stage_has_a_lane_per_element_up_to_a_workgroup() {
        assert_eq!(adaptive_lanes_for(1), 2);
        assert_eq!(adaptive_lanes_for(4), 4);
        assert_eq!(adaptive_lanes_for(10), 16);
        assert_eq!(adaptive_lanes_for(40), 64);
        assert_eq!(adaptive_lanes_for(64), 64);
        assert_eq!(adaptive_lanes_for(128), 64);
    }

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
