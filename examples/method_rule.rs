//! Where identification's accuracy rule should hand the re-runs to Radau
//! IIA: for each track error the rule may ask, each method runs at the
//! tolerance its own law (`sweep::accuracy::ErrorLaw`, the largest gain
//! measured) gives for it, and the wall time and the error actually
//! reached are printed side by side, on the paper's 2-s drop over the
//! grid's range of n and D. `RADAU_UP_TO_TRACK_ERROR_M` is the largest
//! track error measured at which Radau is slower in no case.
//!
//!     cargo run --release --example method_rule [-- --repeats 3]
//!
//! One thread; each wall time the best of `--repeats` runs (default 3).

use std::time::Instant;

use tether_sweep::model::TetherParams;
use tether_sweep::named::Named;
use tether_sweep::scenario::{Scenario, ScenarioKind, SimulationOutput, SolverSettings, simulate};
use tether_sweep::solver::ImplicitMethod;
use tether_sweep::sweep::accuracy::{ErrorLaw, RADAU_UP_TO_TRACK_ERROR_M};

fn run(
    scenario: &Scenario,
    params: &TetherParams,
    method: ImplicitMethod,
    tolerance_m: f64,
    repeats: usize,
) -> (SimulationOutput, f64) {
    let mut settings = SolverSettings::reference_at(tolerance_m);
    settings.reference.method = method;
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        out = Some(simulate(scenario, params, &settings).expect("the drop runs"));
        best = best.min(start.elapsed().as_secs_f64());
    }
    (out.expect("one run at least"), best)
}

fn rms_m(a: &SimulationOutput, b: &SimulationOutput) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for (x, y) in a.track.positions_m.iter().zip(&b.track.positions_m) {
        for k in 0..2 {
            sum += (x[k] - y[k]).powi(2);
            count += 1;
        }
    }
    (sum / count as f64).sqrt()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repeats = args
        .iter()
        .position(|a| a == "--repeats")
        .and_then(|at| args.get(at + 1)?.parse().ok())
        .unwrap_or(3);
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6);
    let methods = [ImplicitMethod::GeneralizedAlpha, ImplicitMethod::Radau5];
    println!(
        "n\tD\ttrack_error_m\tgalpha_tolerance_m\tgalpha_wall_s\tgalpha_rms_m\tradau_tolerance_m\tradau_wall_s\tradau_rms_m\tgalpha_over_radau"
    );
    let mut slower_from = f64::INFINITY;
    for elements in [10, 50] {
        for damping in [0.0, 100.0, 500.0, 2000.0, 10000.0] {
            let params = TetherParams {
                elements,
                damping_pa_s: damping,
                drag_coefficient: 0.8,
                ..TetherParams::default()
            };
            let (truth, _) = run(&scenario, &params, ImplicitMethod::Radau5, 1e-12, 1);
            for track_error_m in [4e-6, 2e-6, 1e-6, 5e-7, 1e-7] {
                let runs: Vec<(f64, f64, f64)> = methods
                    .iter()
                    .map(|&m| {
                        let law = ErrorLaw::of(m).expect("a measured method");
                        let tolerance_m = law.tolerance_for(track_error_m);
                        let (out, wall_s) = run(&scenario, &params, m, tolerance_m, repeats);
                        (tolerance_m, wall_s, rms_m(&out, &truth))
                    })
                    .collect();
                let ratio = runs[0].1 / runs[1].1;
                if ratio < 1.0 {
                    slower_from = slower_from.min(track_error_m);
                }
                println!(
                    "{elements}\t{damping}\t{track_error_m:e}\t{:.2e}\t{:.4}\t{:.2e}\t{:.2e}\t{:.4}\t{:.2e}\t{ratio:.2}",
                    runs[0].0, runs[0].1, runs[0].2, runs[1].0, runs[1].1, runs[1].2,
                );
            }
        }
    }
    eprintln!(
        "{} was slower than {} somewhere at track errors from {slower_from:e} m (inf: nowhere); the rule hands Radau track errors up to {RADAU_UP_TO_TRACK_ERROR_M:e} m",
        ImplicitMethod::Radau5.name(),
        ImplicitMethod::GeneralizedAlpha.name(),
    );
}
