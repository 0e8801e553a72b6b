//! Would a Radau IIA adaptive stage make the GPU faster? The cost model
//! prices the generalized-α stage (`gpu::cost::AdaptiveWork`) and a Radau
//! stage that is not built yet (`gpu::cost::RadauWork`) on the same
//! rates, each simulation's work counted from the CPU reference solver's
//! own run of it, both methods at the tolerances their error laws
//! (`sweep::accuracy::ErrorLaw`) give for the same track error, so that
//! their rows are equally accurate.
//!
//!     cargo run --release --example radau_gpu_costs -- [A_INV A_DEV [BARRIER_US]]
//!
//! A_INV and A_DEV are the stage's rates [GFLOP/s]: one simulation's chain
//! alone and the filled device's per lane. Without them the H100's
//! workgroup-layout rates stand in (0.36 and 5,000, BENCHMARKS.md
//! 2026-11-24), as in `examples/layout_costs.rs`; BARRIER_US adds that
//! much to a lone chain per barrier. Each job's lanes are the ones the
//! model finds fastest for it, for each method.
//!
//! The jobs: the default grid's and the paper's first pass (generalized-α
//! at 1e-7 m in f64, or f32's first-pass tolerance; the track error that
//! asks decides Radau's), and the default grid's candidates at the
//! re-runs' and refinement's asks (4e-6, 5e-7 and 1e-7 m). Counting runs
//! every candidate twice on the CPU: a few minutes on two cores.

use rayon::prelude::*;
use tether_sweep::engine::estimate::counted_work;
use tether_sweep::gpu::Precision;
use tether_sweep::gpu::adaptive::f32_first_pass_tolerance_m;
use tether_sweep::gpu::cost::{
    AdaptiveRates, AdaptiveWork, GpuRates, RadauWork, StageWork, adaptive_terms, fastest_lanes,
};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::solver::ImplicitMethod;
use tether_sweep::solver::reference::ReferenceStats;
use tether_sweep::sweep::Grid;
use tether_sweep::sweep::accuracy::{GENERALIZED_ALPHA_LAW, RADAU_LAW, SCOUT_TOLERANCE_M};

/// An NVIDIA warp: the H100's subgroup width.
const H100_WARP: u32 = 32;

fn candidates(grid: &Grid) -> Vec<(Scenario, TetherParams)> {
    let base = TetherParams::default();
    let scenario = Scenario::new(ScenarioKind::Drop, base.length_m);
    grid.candidates()
        .iter()
        .map(|c| {
            let (tether, scenario) = c.experiment(&base, &scenario);
            (scenario, tether)
        })
        .collect()
}

/// Every simulation's reference-solver counts with `method` at
/// `tolerance_m`.
fn counted(
    simulations: &[(Scenario, TetherParams)],
    method: ImplicitMethod,
    tolerance_m: f64,
) -> Vec<ReferenceStats> {
    let mut settings = SolverSettings::reference_at(tolerance_m);
    settings.reference.method = method;
    simulations
        .par_iter()
        .map(|(scenario, params)| {
            let output = simulate(scenario, params, &settings).expect("a reference run");
            let SolverReport::Reference(s) = output.report else {
                unreachable!("the reference solver reports its own counts")
            };
            s
        })
        .collect()
}

/// The model's estimate at the fastest lanes, with the lone chain's and
/// the filled device's terms apart, and the work's means.
fn priced<W: StageWork>(work: &[W], rates: AdaptiveRates) -> (u32, f64, f64, f64) {
    let (lanes, seconds) = fastest_lanes(work, rates);
    let (lone, filled) = adaptive_terms(work, rates, lanes);
    (lanes, seconds, lone, filled)
}

fn mean(stats: &[ReferenceStats], f: fn(&ReferenceStats) -> u64) -> f64 {
    stats.iter().map(|s| f(s) as f64).sum::<f64>() / stats.len() as f64
}

fn job(
    name: &str,
    simulations: &[(Scenario, TetherParams)],
    alpha_tolerance_m: f64,
    precision: Precision,
    rates: AdaptiveRates,
) {
    let ask_m = GENERALIZED_ALPHA_LAW.track_error_m(alpha_tolerance_m);
    let radau_tolerance_m = RADAU_LAW.tolerance_for(ask_m);
    let alpha = counted(
        simulations,
        ImplicitMethod::GeneralizedAlpha,
        alpha_tolerance_m,
    );
    let radau = counted(simulations, ImplicitMethod::Radau5, radau_tolerance_m);
    let rates = AdaptiveRates { precision, ..rates };
    let alpha_work: Vec<AdaptiveWork> = simulations
        .iter()
        .zip(&alpha)
        .map(|((_, p), s)| counted_work(p.elements, s))
        .collect();
    let radau_work: Vec<RadauWork> = simulations
        .iter()
        .zip(&radau)
        .map(|((_, p), s)| {
            RadauWork::counted(
                p.elements,
                (s.steps, s.rejected_steps),
                s.newton_iterations,
                s.factorizations,
            )
        })
        .collect();
    let (al, at, alone, afilled) = priced(&alpha_work, rates);
    let (rl, rt, rlone, rfilled) = priced(&radau_work, rates);
    let steps = |s: &ReferenceStats| s.steps + s.rejected_steps;
    println!(
        "{name:<30} {precision:?} ask {ask_m:.1e} m | α {alpha_tolerance_m:.1e}: {:>6.0} att {:>6.0} it {:>5.0} fac, {al:>2} lanes {at:>8.4} s (lone {alone:.4}, filled {afilled:.4}) | Radau {radau_tolerance_m:.1e}: {:>5.0} att {:>5.0} it {:>5.0} ref, {rl:>2} lanes {rt:>8.4} s (lone {rlone:.4}, filled {rfilled:.4}) | α/Radau {:.2}",
        mean(&alpha, steps),
        mean(&alpha, |s| s.newton_iterations),
        mean(&alpha, |s| s.factorizations),
        mean(&radau, steps),
        mean(&radau, |s| s.newton_iterations),
        mean(&radau, |s| s.factorizations) / 2.0,
        at / rt,
    );
}

fn main() {
    let args: Result<Vec<f64>, _> = std::env::args().skip(1).map(|a| a.parse()).collect();
    let (invocation_gflops, device_gflops, barrier_us) = match args.as_deref() {
        Ok([]) => (0.36, 5000.0, 0.0),
        Ok(&[i, d]) if i > 0.0 && d > 0.0 => (i, d, 0.0),
        Ok(&[i, d, b]) if i > 0.0 && d > 0.0 && b >= 0.0 => (i, d, b),
        _ => {
            eprintln!(
                "usage: radau_gpu_costs [A_INV A_DEV [BARRIER_US]] (GFLOP/s > 0, GFLOP/s > 0, µs ≥ 0)"
            );
            std::process::exit(2);
        }
    };
    let rates = AdaptiveRates {
        barrier_lone_s: barrier_us * 1e-6,
        ..AdaptiveRates::flops_only(
            GpuRates {
                invocation_gflops,
                device_gflops,
            },
            H100_WARP,
            Precision::F64,
        )
    };
    println!(
        "stage rates: {invocation_gflops} GFLOP/s a chain, {device_gflops} filled, {barrier_us} µs a lone barrier; subgroup {H100_WARP}"
    );
    for (lanes, precision) in [(64u32, Precision::F64), (64, Precision::F32)] {
        let [iteration, refresh, attempt] =
            tether_sweep::gpu::cost::heavier_than_generalized_alpha(50, lanes, precision);
        println!(
            "n = 50, {lanes} lanes, {precision:?}: a Radau iteration {iteration:.2}×, refresh {refresh:.2}×, attempt {attempt:.2}× generalized-α's chain"
        );
    }
    let default_grid = candidates(&Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05").unwrap());
    let paper_grid = candidates(&Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap());
    let f32_first = f32_first_pass_tolerance_m(50);
    job(
        "default grid, first pass",
        &default_grid,
        SCOUT_TOLERANCE_M,
        Precision::F64,
        rates,
    );
    job(
        "default grid, first pass",
        &default_grid,
        f32_first,
        Precision::F32,
        rates,
    );
    job(
        "paper's grid, first pass",
        &paper_grid,
        SCOUT_TOLERANCE_M,
        Precision::F64,
        rates,
    );
    for ask_m in [4e-6, 5e-7, 1e-7] {
        job(
            "default grid, re-run asks",
            &default_grid,
            GENERALIZED_ALPHA_LAW.tolerance_for(ask_m),
            Precision::F64,
            rates,
        );
    }
}
