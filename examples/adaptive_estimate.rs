//! The cost model's estimate for the default identification grid's first
//! pass on the GPU's adaptive scheme, on this machine's first adapter, as
//! `--backend auto` makes it on a hardware GPU (`engine::choice`): each
//! candidate given the mean of four of the largest tethers' reference
//! runs (their attempts, Newton iterations and factorizations), at rates
//! measured on the stage (flops and barriers, at n = 10 and 50). Also the
//! same model fed every candidate's own counts. Compare with the sweep's measured time:
//!
//!     cargo run --release --example adaptive_estimate [f32|f64]
//!     tether-sweep identify --backend gpu --solver reference [--precision f64] --no-refine --validate 0
//!
//! (f32 runs at its first-pass tolerance for n = 50, 1e-6 m; f64 at the
//! scouting 1e-7 m.)

use tether_sweep::engine::calibrate;
use tether_sweep::engine::estimate::{AdaptiveWork, Workload, adaptive_gpu_seconds, counted_work};
use tether_sweep::gpu::adaptive::f32_first_pass_tolerance_m;
use tether_sweep::gpu::shape::{AdaptiveShape, ShapeBounds};
use tether_sweep::gpu::{Gpu, Precision, cost};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::solver::ReferenceOptions;
use tether_sweep::sweep::Grid;

fn main() {
    use rayon::prelude::*;
    let precision = match std::env::args().nth(1).as_deref() {
        Some("f64") => Precision::F64,
        _ => Precision::F32,
    };
    let grid = Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05").unwrap();
    let base = TetherParams::default();
    let drop = Scenario::new(ScenarioKind::Drop, base.length_m);
    let tolerance_m = match precision {
        Precision::F32 => f32_first_pass_tolerance_m(50).max(1e-7),
        Precision::F64 => 1e-7,
    };
    let counted: Vec<AdaptiveWork> = grid
        .candidates()
        .par_iter()
        .map(|c| {
            let (tether, scenario) = c.experiment(&base, &drop);
            let output = simulate(
                &scenario,
                &tether,
                &SolverSettings::reference_at(tolerance_m),
            )
            .expect("a reference run");
            let SolverReport::Reference(s) = output.report else {
                unreachable!("the reference solver reports its counts")
            };
            counted_work(tether.elements, &s)
        })
        .collect();
    // As the probe picks them: four of the largest n, spread over the order.
    let largest: Vec<&AdaptiveWork> = counted.iter().filter(|w| w.elements == 50).collect();
    let probe: Vec<AdaptiveWork> = (0..4)
        .map(|k| *largest[(2 * k + 1) * largest.len() / 8])
        .collect();
    let chunk = 1024;
    let work = Workload {
        label: "735 drops".into(),
        simulations: counted.iter().map(|w| (w.elements, 0)).collect(),
        stands_for: counted.len(),
        chunk,
    };
    let gpu = Gpu::open(None).expect("an adapter");
    let reference = ReferenceOptions {
        tolerance_m,
        ..Default::default()
    };
    let rates = calibrate::calibrate_adaptive(&gpu, precision, &reference, (10, 50), counted.len())
        .expect("the stage's rates");
    let bounds = ShapeBounds::of(&gpu);
    let estimate = adaptive_gpu_seconds(&work, &probe, rates, bounds);
    let elements: Vec<usize> = counted.iter().map(|w| w.elements).collect();
    let shape = AdaptiveShape::choose_at(&elements, bounds, rates);
    let every = cost::adaptive_seconds_at(&counted, rates, shape.lanes);
    println!(
        "{} ({}), {} at {tolerance_m:e} m: rates {rates:?}",
        gpu.adapter.name,
        if gpu.adapter.hardware {
            "hardware"
        } else {
            "emulation"
        },
        precision.name()
    );
    println!(
        "estimate from the probe's four: {estimate:.1} s; from every candidate's counts: {every:.1} s; in the shape the run takes, {} lanes a simulation",
        shape.lanes
    );
    let most = AdaptiveShape::most_within(bounds, 50).lanes;
    let at: Vec<String> = (1..=most.trailing_zeros())
        .map(|k| {
            let lanes = 1 << k;
            let seconds = cost::adaptive_seconds_at(&counted, rates, lanes);
            format!("{lanes}: {seconds:.1} s")
        })
        .collect();
    println!(
        "from every candidate's counts at each lanes a simulation: {}",
        at.join(", ")
    );
}
