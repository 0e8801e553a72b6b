//! The GPU cost model's predictions (`tether_sweep::gpu::cost`) for the
//! jobs the workgroup layout is for, on a device whose rates are given:
//! one invocation's and the filled device's [GFLOP/s], the same for both
//! layouts or each layout's.
//!
//!     cargo run --release --example layout_costs -- 1.5 4900 0.36 5000
//!
//! (The semi-implicit step on an H100, BENCHMARKS.md, 2026-11-24: the
//! thread layout's chain at 1.5 GFLOP/s and 4,900 filled with 8,192 drops
//! at n = 50; the workgroup layout's chain at 0.36 GFLOP/s and its lanes at
//! 5,000.) Each job's simulations are counted from the model as the engine
//! would run them on the semi-implicit scheme, as one batch.

use tether_sweep::gpu::GpuLayout;
use tether_sweep::gpu::cost::{self, GpuRates, LayoutRates, SimulationWork};
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
        .map(|a| a.parse().expect("numbers: GFLOP/s"))
        .collect();
    let rate = |invocation_gflops, device_gflops| GpuRates {
        invocation_gflops,
        device_gflops,
    };
    let rates = match args[..] {
        [i, d] => LayoutRates::same(rate(i, d)),
        [ti, td, wi, wd] => LayoutRates {
            thread: rate(ti, td),
            workgroup: rate(wi, wd),
        },
        _ => {
            eprintln!(
                "usage: layout_costs INVOCATION_GFLOPS DEVICE_GFLOPS, or per layout: THREAD_INVOCATION THREAD_DEVICE WORKGROUP_INVOCATION WORKGROUP_DEVICE"
            );
            std::process::exit(2);
        }
    };
    let cache = StepCache::default();
    let default_grid = Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05").unwrap();
    let paper_grid = Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap();
    // The swing-up GA's default tether: n = 40, 21 g tip, 3 s; every
    // chromosome takes the same step on the semi-implicit scheme.
    let swingup = Scenario::new(ScenarioKind::Swingup, 0.6).with_duration_s(3.0);
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
    println!("rates [GFLOP/s]: {rates:?}; semi-implicit scheme");
    println!(
        "{:<36} {:>12} {:>12} {:>10}",
        "job", "thread [s]", "workgroup [s]", "auto"
    );
    for (name, work) in jobs {
        let (auto, thread, workgroup) = cost::fastest_layout(&work, SCHEME, rates);
        debug_assert_eq!(
            thread,
            cost::layout_seconds(&work, SCHEME, GpuLayout::Thread, rates.thread)
        );
        println!(
            "{name:<36} {thread:>12.2} {workgroup:>12.2} {:>10}",
            auto.name()
        );
    }
}
