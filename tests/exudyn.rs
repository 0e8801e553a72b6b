//! The reference solver against Exudyn's ObjectANCFCable2D (independent
//! implementation, same strain and curvature; see reference/exudyn/README.md),
//! with each of its implicit methods.

use std::path::Path;

use tether_sweep::io::track::read_measured;
use tether_sweep::model::TetherParams;
use tether_sweep::named::Named;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverSettings, simulate};
use tether_sweep::solver::{ImplicitMethod, ReferenceOptions, SolverKind};

fn max_deviation_from_exudyn(elements: usize, method: ImplicitMethod) -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("reference/exudyn/drop_n{elements}_d2000.csv"));
    let exudyn = read_measured(&path).unwrap();
    // Exudyn's cable has neither rotary inertia nor drag.
    let params = TetherParams {
        elements,
        damping_pa_s: 2000.0,
        rotary_inertia: false,
        ..Default::default()
    };
    let scenario = Scenario::new(ScenarioKind::Drop, params.length_m);
    let settings = SolverSettings {
        kind: SolverKind::Reference,
        reference: ReferenceOptions {
            method,
            ..Default::default()
        },
        ..Default::default()
    };
    let out = simulate(&scenario, &params, &settings).unwrap();
    let track = &out.track;
    let mut worst = 0.0f64;
    for (f, &t) in track.times_s.iter().enumerate() {
        for j in 0..track.markers() {
            let theirs = exudyn
                .get(t, j)
                .unwrap_or_else(|| panic!("Exudyn track lacks t={t} marker {j}"));
            let ours = track.at(f, j);
            worst = worst.max((theirs[0] - ours[0]).hypot(theirs[1] - ours[1]));
        }
    }
    eprintln!("n={elements}, {method}: largest marker deviation from Exudyn {worst:e} m");
    worst
}

#[test]
fn reference_solver_reproduces_exudyn_n10() {
    for &method in ImplicitMethod::ALL {
        let d = max_deviation_from_exudyn(10, method);
        assert!(d < 2e-5, "{method}: largest marker deviation {d:e} m");
    }
}

#[test]
fn reference_solver_reproduces_exudyn_n40() {
    for &method in ImplicitMethod::ALL {
        let d = max_deviation_from_exudyn(40, method);
        assert!(d < 2e-5, "{method}: largest marker deviation {d:e} m");
    }
}
