//! The GPU cost model's predictions (`tether_sweep::gpu::cost`) for the
//! jobs the GPU is for, on a device whose rates are given: one
//! invocation's and the filled device's [GFLOP/s], the same for every
//! layout, or the thread layout's and the workgroup layout's, and
//! optionally the adaptive stage's.
//!
//!     cargo run --release --example layout_costs -- 1.5 4900 0.36 5000 [A_INV A_DEV [BARRIER_US]]
//!
//! (The semi-implicit step on an H100, BENCHMARKS.md, 2026-11-24: the
//! thread layout's chain at 1.5 GFLOP/s and 4,900 filled with 8,192 drops
//! at n = 50; the workgroup layout's chain at 0.36 GFLOP/s and its lanes at
//! 5,000. The adaptive stage has not run on hardware: without its two
//! rates the workgroup layout's stand in, and its barriers count nothing
//! beyond them. With BARRIER_US, each barrier of a simulation's chain
//! adds that many µs beyond its flops at A_INV, as the model's
//! calibration on the stage would fit it: the workgroup layout's 41 µs a
//! step at n = 50 on an H100 is 9.8 µs of flops at 1.5 GFLOP/s and, if
//! barriers took the rest, about 0.2 µs for each of its 159, so
//! `1.5 4900 0.36 5000 1.5 5000 0.2` brackets the stand-in from the
//! other side.) Each job's simulations are
//! counted from the model as the engine would run them on the
//! semi-implicit scheme, as one batch; for the adaptive stage, from the
//! CPU reference solver's own runs of every candidate (the stage takes
//! its steps), in f32 at the grids' first-pass tolerance (f32's for the
//! grid's n) and the GA's 1e-7 m, and at 1e-7 m in f64. The landscape is
//! given the GA's mean. Counting runs the grids on the CPU: about a minute
//! on two cores.

use rayon::prelude::*;
use tether_sweep::engine::estimate::counted_work;
use tether_sweep::gpu::adaptive::f32_first_pass_tolerance_m;
use tether_sweep::gpu::cost::{
    self, AdaptiveRates, AdaptiveWork, GpuRates, LayoutRates, SimulationWork,
};
use tether_sweep::gpu::{GpuLayout, Precision};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::sweep::Grid;

const SCHEME: FixedStepScheme = FixedStepScheme::SemiImplicit;
/// identify's first pass, and the swing-up's tolerance, in f64 \[m\].
const F64_TOLERANCE_M: f64 = 1e-7;

/// One job: its simulations as the fixed-step engine and the reference
/// solver see them.
struct Job {
    name: &'static str,
    fixed: Vec<SimulationWork>,
    simulations: Vec<(Scenario, TetherParams)>,
    /// A first pass (identify's), which f32 runs at its first-pass
    /// tolerance; else the job's 1e-7 m.
    first_pass: bool,
}

/// An NVIDIA warp: the H100's subgroup width.
const H100_WARP: u32 = 32;
fn grid_job(name: &'static str, grid: &Grid, cache: &StepCache) -> Job {
    let base = TetherParams::default();
    let scenario = Scenario::new(ScenarioKind::Drop, base.length_m);
    let simulations: Vec<(Scenario, TetherParams)> = grid
        .candidates()
        .iter()
        .map(|c| {
            let (tether, scenario) = c.experiment(&base, &scenario);
            (scenario, tether)
        })
        .collect();
    let fixed = simulations
        .iter()
        .map(|(scenario, tether)| {
            let sim =
                gpu_simulation(scenario, tether, SCHEME, None, cache).expect("a valid candidate");
            (sim.params.elements, sim.total_steps)
        })
        .collect();
    Job {
        name,
        fixed,
        simulations,
        first_pass: true,
    }
}

/// The reference solver's counts for each simulation at `tolerance_m`.
fn counted(simulations: &[(Scenario, TetherParams)], tolerance_m: f64) -> Vec<AdaptiveWork> {
    simulations
        .par_iter()
        .map(|(scenario, params)| {
            let output = simulate(scenario, params, &SolverSettings::reference_at(tolerance_m))
                .expect("a reference run");
            let SolverReport::Reference(s) = output.report else {
                unreachable!("the reference solver reports its own counts")
            };
            counted_work(params.elements, &s)
        })
        .collect()
}

fn rates_from(args: &[f64]) -> Option<(LayoutRates, GpuRates, f64)> {
    let rate = |invocation_gflops, device_gflops| GpuRates {
        invocation_gflops,
        device_gflops,
    };
    let layouts = match args {
        [i, d] => LayoutRates::same(rate(*i, *d)),
        [ti, td, wi, wd, ..] => LayoutRates {
            thread: rate(*ti, *td),
            workgroup: rate(*wi, *wd),
        },
        _ => return None,
    };
    let (adaptive, barrier_s) = match args {
        [_, _, _, _, ai, ad] => (rate(*ai, *ad), 0.0),
        [_, _, _, _, ai, ad, barrier_us] => (rate(*ai, *ad), barrier_us * 1e-6),
        [_, _] | [_, _, _, _] => (layouts.workgroup, 0.0),
        _ => return None,
    };
    Some((layouts, adaptive, barrier_s))
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: GFLOP/s"))
        .collect();
    let Some((rates, adaptive_rates, barrier_s)) = rates_from(&args) else {
        eprintln!(
            "usage: layout_costs INVOCATION_GFLOPS DEVICE_GFLOPS, or per layout: THREAD_INVOCATION THREAD_DEVICE WORKGROUP_INVOCATION WORKGROUP_DEVICE [ADAPTIVE_INVOCATION ADAPTIVE_DEVICE [BARRIER_US]]"
        );
        std::process::exit(2);
    };
    // A barrier costs a simulation alone its time; filled, other
    // workgroups' work hides it (the model's fit on lavapipe found none).
    let stage = |precision| AdaptiveRates {
        barrier_lone_s: barrier_s,
        ..AdaptiveRates::flops_only(adaptive_rates, H100_WARP, precision)
    };
    let cache = StepCache::default();
    let default_grid = Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05").unwrap();
    let paper_grid = Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap();
    // The swing-up GA's default tether: n = 40, 21 g tip, 3 s; every
    // chromosome takes the same step on the semi-implicit scheme.
    let params = TetherParams {
        elements: 40,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        tip_mass_kg: 0.021,
        ..TetherParams::default()
    };
    let problem = tether_sweep::ga::SwingupProblem {
        scenario: Scenario::new(ScenarioKind::Swingup, 0.6).with_duration_s(3.0),
        params: params.clone(),
        coding: Default::default(),
    };
    let generation: Vec<(Scenario, TetherParams)> = (0..10u32)
        .map(|i| (problem.scenario_for(i * 3277), params.clone()))
        .collect();
    let one = gpu_simulation(&generation[0].0, &params, SCHEME, None, &cache).expect("a swing-up");
    let swing = (one.params.elements, one.total_steps);
    let jobs = [
        grid_job("default identification grid (735)", &default_grid, &cache),
        grid_job("paper's grid (3,535)", &paper_grid, &cache),
        Job {
            name: "one GA generation (10 swing-ups)",
            fixed: vec![swing; 10],
            simulations: generation.clone(),
            first_pass: false,
        },
    ];
    println!(
        "rates [GFLOP/s]: {rates:?}, adaptive stage {adaptive_rates:?}, {:.2} µs a barrier alone",
        barrier_s * 1e6
    );
    println!(
        "{:<36} {:>10} {:>10} {:>6} {:>22} {:>18}",
        "job", "thread", "workgroup", "auto", "adaptive f32 (tol.)", "adaptive f64 1e-7"
    );
    let mut ga_counts = Vec::new();
    for job in &jobs {
        let (auto, thread, workgroup) = cost::fastest_layout(&job.fixed, SCHEME, rates);
        let largest = job.fixed.iter().map(|w| w.0).max().unwrap_or(1);
        let f32_tolerance_m = if job.first_pass {
            f32_first_pass_tolerance_m(largest).max(F64_TOLERANCE_M)
        } else {
            F64_TOLERANCE_M
        };
        let f64_counts = counted(&job.simulations, F64_TOLERANCE_M);
        let f32_counts = counted(&job.simulations, f32_tolerance_m);
        println!(
            "{:<36} {thread:>9.2}s {workgroup:>9.2}s {:>6} {:>13.2}s ({f32_tolerance_m:.0e}) {:>17.2}s",
            job.name,
            auto.name(),
            cost::adaptive_seconds(&f32_counts, stage(Precision::F32)),
            cost::adaptive_seconds(&f64_counts, stage(Precision::F64)),
        );
        if job.simulations.len() == 10 {
            ga_counts = f64_counts;
        }
    }
    let landscape = vec![swing; 32_768];
    let (auto, thread, workgroup) = cost::fastest_layout(&landscape, SCHEME, rates);
    debug_assert_eq!(
        thread,
        cost::layout_seconds(&landscape, SCHEME, GpuLayout::Thread, rates.thread)
    );
    println!(
        "{:<36} {thread:>9.2}s {workgroup:>9.2}s {:>6} {:>22} {:>17.2}s",
        "landscape (32,768; the GA's mean)",
        auto.name(),
        "–",
        cost::adaptive_seconds(
            &vec![AdaptiveWork::mean(&ga_counts).expect("the GA's counts"); 32_768],
            stage(Precision::F64),
        ),
    );
}
