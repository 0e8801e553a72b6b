//! The cost model of the adaptive stage (`shaders/step_adaptive.wgsl`):
//! its chain and filled-device flops from the reference solver's counts,
//! its barriers, and the lanes it takes a simulation. The same formula as
//! the fixed-step layouts' (the parent module's doc), with barriers added.

use super::GpuRates;
use crate::gpu::Precision;
use crate::gpu::flops;
use crate::gpu::layout::{MIN_ADAPTIVE_LANES, adaptive_lanes_for};

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

/// One simulation's work on an adaptive stage as the model counts it: the
/// generalized-α stage's ([`AdaptiveWork`]) or a Radau IIA stage's
/// (`RadauWork`, modelled before it is built), so that one formula
/// ([`AdaptiveRates`], [`adaptive_seconds_at`]) prices both.
pub trait StageWork {
    /// Flops on the simulation's serial chain with `lanes` lanes.
    fn chain_flops(&self, lanes: u32, precision: Precision) -> f64;
    /// The part of the chain that more lanes do not shorten: the
    /// factorizations and solves.
    fn serial_flops(&self, lanes: u32) -> f64;
    /// Barriers passed (a `workgroupUniformLoad` is one).
    fn barriers(&self) -> f64;
    /// n, whose lanes the stage chooses from.
    fn elements(&self) -> usize;
}

impl StageWork for AdaptiveWork {
    fn chain_flops(&self, lanes: u32, precision: Precision) -> f64 {
        adaptive_chain_flops(self, lanes, precision)
    }

    fn serial_flops(&self, lanes: u32) -> f64 {
        adaptive_serial_flops(self, lanes)
    }

    fn barriers(&self) -> f64 {
        adaptive_barriers(self)
    }

    fn elements(&self) -> usize {
        self.elements
    }
}

/// The lane-flops one simulation with `lanes` lanes holds on a filled
/// device whose subgroups (warps, wavefronts, SIMD vectors) are
/// `subgroup_width` invocations wide: its every lane along the shared
/// passes, but along the factorizations and solves (lanes 0 and 1) only
/// the lanes of lane 0's subgroup. A subgroup whose lanes all wait at a
/// barrier issues nothing (a GPU gives its turn to another; lavapipe skips
/// the branch), while the idle lanes of a working subgroup go along with
/// it.
pub fn adaptive_filled_flops<W: StageWork>(
    work: &W,
    lanes: u32,
    subgroup_width: u32,
    precision: Precision,
) -> f64 {
    let serial = work.serial_flops(lanes);
    let shared = work.chain_flops(lanes, precision) - serial;
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
    pub fn lone_s<W: StageWork>(&self, work: &W, lanes: u32) -> f64 {
        work.chain_flops(lanes, self.precision) / (self.flops.invocation_gflops * 1e9)
            + work.barriers() * self.barrier_lone_s
    }

    /// One simulation's lanes with the device filled \[s\].
    pub fn filled_s<W: StageWork>(&self, work: &W, lanes: u32) -> f64 {
        adaptive_filled_flops(work, lanes, self.subgroup_width, self.precision)
            / (self.flops.device_gflops * 1e9)
            + lanes as f64 * work.barriers() * self.barrier_filled_s
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
pub fn adaptive_seconds_at<W: StageWork>(work: &[W], rates: AdaptiveRates, lanes: u32) -> f64 {
    let (longest, occupancy) = adaptive_terms(work, rates, lanes);
    longest.max(occupancy)
}

/// The two terms [`adaptive_seconds_at`] takes the larger of \[s\]: the
/// longest simulation's chain alone, and every simulation's lanes on the
/// filled device; which one binds says whether more simulations would
/// come for free.
pub fn adaptive_terms<W: StageWork>(work: &[W], rates: AdaptiveRates, lanes: u32) -> (f64, f64) {
    let (mut longest, mut occupancy) = (0.0f64, 0.0f64);
    for w in work {
        longest = longest.max(rates.lone_s(w, lanes));
        occupancy += rates.filled_s(w, lanes);
    }
    (longest, occupancy)
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

/// The lanes a simulation, of the powers of two the stage offers up to a
/// lane per element of the largest n, that the model finds fastest for
/// `work` itself, with that estimate \[s\]: a method's best against
/// another's where both stages are priced (`examples/radau_gpu_costs.rs`).
/// The engine chooses from typical work instead ([`adaptive_lanes`]),
/// before the runs are counted.
pub fn fastest_lanes<W: StageWork>(work: &[W], rates: AdaptiveRates) -> (u32, f64) {
    let largest = work.iter().map(W::elements).max().unwrap_or(1);
    let most = adaptive_lanes_for(largest);
    (MIN_ADAPTIVE_LANES.trailing_zeros()..=most.trailing_zeros())
        .map(|k| 1u32 << k)
        .map(|lanes| (lanes, adaptive_seconds_at(work, rates, lanes)))
        .fold((most, f64::INFINITY), |best, this| {
            if this.1 < best.1 { this } else { best }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_adaptive_stage_has_a_lane_per_element_up_to_a_workgroup() {
        assert_eq!(adaptive_lanes_for(1), 2);
        assert_eq!(adaptive_lanes_for(4), 4);
        assert_eq!(adaptive_lanes_for(10), 16);
        assert_eq!(adaptive_lanes_for(40), 64);
        assert_eq!(adaptive_lanes_for(64), 64);
        assert_eq!(adaptive_lanes_for(128), 64);
    }
}
