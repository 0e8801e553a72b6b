//! How far the reference solver's tracks move at the markers for a given
//! local error tolerance: the gain G = (RMS marker error over the compared
//! coordinates) / tolerance, against a run at 1e-12 m, over the paper's
//! grid's corners and a swing of D. `sweep::accuracy` divides by the
//! largest G measured here.
//!
//!     cargo run --release --example tolerance_gain

use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};

fn main() {
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6);
    println!("n\tD\tC_D\ttolerance\tsteps\trms_m\tmax_m\tgain_rms");
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
                        "{elements}\t{damping}\t{drag}\t{tolerance:e}\t{steps}\t{rms:.3e}\t{max:.3e}\t{:.1}",
                        rms / tolerance
                    );
                }
            }
        }
    }
}
