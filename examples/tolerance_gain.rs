//! How far the reference solver's tracks move at the markers for a given
//! local error tolerance: the gain G = (RMS marker error over the compared
//! coordinates) / tolerance, against a run at 1e-12 m, over the paper's
//! grid's corners and a swing of D. `sweep::accuracy` divides by the
//! largest G measured here. `--method radau5` (or `esdirk43`) measures
//! another implicit method, its truth its own run at 1e-12 m. The last
//! two columns are e/τ and e/τ^(2/3): a second-order method's error grows
//! as the second, Radau's nearly as the first.
//!
//!     cargo run --release --example tolerance_gain [-- --method radau5]

use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::solver::ImplicitMethod;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let method: ImplicitMethod = args
        .iter()
        .position(|a| a == "--method")
        .map(|at| {
            args.get(at + 1)
                .expect("--method needs a name")
                .parse()
                .expect("an implicit method")
        })
        .unwrap_or(ImplicitMethod::GeneralizedAlpha);
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6);
    println!("method\tn\tD\tC_D\ttolerance\tsteps\trms_m\tmax_m\tgain_rms\tgain_rms_two_thirds");
    for elements in [10, 30, 50] {
        for damping in [0.0, 100.0, 500.0, 2000.0, 10000.0] {
            for drag in [0.6, 0.9] {
                let params = TetherParams {
                    elements,
                    damping_pa_s: damping,
                    drag_coefficient: drag,
                    ..TetherParams::default()
                };
                let run = |tolerance_m: f64| {
                    let mut settings = SolverSettings::reference();
                    settings.reference.tolerance_m = tolerance_m;
                    settings.reference.method = method;
                    simulate(&scenario, &params, &settings).expect("the drop runs")
                };
                let truth = run(1e-12).track;
                for tolerance in [1e-6, 1e-7, 1e-8, 1e-9] {
                    let out = run(tolerance);
                    let steps = match out.report {
                        SolverReport::Reference(s) => s.steps,
                        _ => 0,
                    };
                    let (mut sum, mut max) = (0.0f64, 0.0f64);
                    let mut count = 0;
                    for (a, b) in out.track.positions_m.iter().zip(&truth.positions_m) {
                        for k in 0..2 {
                            let d = a[k] - b[k];
                            sum += d * d;
                            max = max.max(d.abs());
                            count += 1;
                        }
                    }
                    let rms = (sum / count as f64).sqrt();
                    println!(
                        "{method}\t{elements}\t{damping}\t{drag}\t{tolerance:e}\t{steps}\t{rms:.3e}\t{max:.3e}\t{:.1}\t{:.2}",
                        rms / tolerance,
                        rms / tolerance.powf(2.0 / 3.0)
                    );
                }
            }
        }
    }
}
