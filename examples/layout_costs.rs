//! The GPU cost model's predictions (`tether_sweep::gpu::cost`) for the
//! jobs the workgroup layout is for, on a device whose two rates are given:
//! one invocation's and the filled device's multiply-add rate [GFLOP/s].
//!
//!     cargo run --release --example layout_costs -- 1.25 55000
//!
//! (1.25 GFLOP/s is what one H100 invocation reached on the thread layout's
//! explicit step, 1.2e6 element-steps/s of 1,043 flops; 55,000 its measured
//! f32 peak; BENCHMARKS.md, 2026-11-22.) Each job's simulations are counted
//! from the model as the engine would run them on the semi-implicit scheme.

use tether_sweep::gpu::cost::{self, GpuLayout, GpuRates, SimulationWork};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind};
use tether_sweep::solver::FixedStepScheme;
use tether_sweep::sweep::Grid;

const SCHEME: FixedStepScheme = FixedStepScheme::SemiImplicit;

fn grid_work(grid: &Grid, cache: &StepCache) -> Vec<SimulationWork> {
    let base = TetherParams::default();
    let scenario = Scenario::new(ScenarioKind::Drop, base.length_m);
    grid.candidates()
        .iter()
        .map(|c| {
            let (tether, scenario) = c.experiment(&base, &scenario);
            let sim =
                gpu_simulation(&scenario, &tether, SCHEME, None, cache).expect("a valid candidate");
            (sim.params.elements, sim.total_steps)
        })
        .collect()
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("two numbers: invocation and device GFLOP/s")
        })
        .collect();
    let [invocation_gflops, device_gflops] = args[..] else {
        eprintln!("usage: layout_costs INVOCATION_GFLOPS DEVICE_GFLOPS");
        std::process::exit(2);
    };
    let rates = GpuRates {
        invocation_gflops,
        device_gflops,
    };
    let cache = StepCache::default();
    let default_grid = Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05").unwrap();
    let paper_grid = Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap();
    // The swing-up GA's default tether: n = 40, 21 g tip, 3 s; every
    // chromosome takes the same step on the semi-implicit scheme.
    let swingup = Scenario {
        duration_s: 3.0,
        ..Scenario::new(ScenarioKind::Swingup, 0.6)
    };
    let params = TetherParams {
        elements: 40,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        tip_mass_kg: 0.021,
        ..TetherParams::default()
    };
    let one = gpu_simulation(&swingup, &params, SCHEME, None, &cache).expect("the GA's tether");
    let swing = (one.params.elements, one.total_steps);
    let jobs: [(&str, Vec<SimulationWork>); 4] = [
        (
            "default identification grid (735)",
            grid_work(&default_grid, &cache),
        ),
        ("paper's grid (3,535)", grid_work(&paper_grid, &cache)),
        ("one GA generation (10 swing-ups)", vec![swing; 10]),
        ("landscape (32,768 swing-ups)", vec![swing; 32_768]),
    ];
    println!(
        "rates: one invocation {invocation_gflops} GFLOP/s, device {device_gflops} GFLOP/s; semi-implicit scheme"
    );
    println!(
        "{:<36} {:>12} {:>12} {:>10}",
        "job", "thread [s]", "workgroup [s]", "auto"
    );
    for (name, work) in jobs {
        let (auto, thread, workgroup) = cost::fastest_layout(&work, SCHEME, rates);
        debug_assert_eq!(
            thread,
            cost::layout_seconds(&work, SCHEME, GpuLayout::Thread, rates)
        );
        println!(
            "{name:<36} {thread:>12.2} {workgroup:>12.2} {:>10}",
            auto.name()
        );
    }
}
