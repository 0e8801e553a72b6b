//! The model and the CPU solvers against exact solutions (docs/model.md §8), the
//! independent reference force vectors (docs/model.md §2) and each other.

use std::sync::Arc;

use tether_sweep::model::{FixedPin, Tether, TetherParams};
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::solver::equilibrium::hanging_equilibrium;
use tether_sweep::solver::modal::{explicit_stability_limit, modes, semi_implicit_stability_limit};
use tether_sweep::solver::{
    FixedStepSolver, ReferenceOptions, ReferenceStats, SolverKind, TetherDynamics,
};

fn tether(n: usize, damping: f64, drag: f64, tip_mass: f64) -> Tether {
    Tether::new(TetherParams {
        elements: n,
        damping_pa_s: damping,
        drag_coefficient: drag,
        tip_mass_kg: tip_mass,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn reference_force_vectors_and_mass_matrices_match() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/element_forces.json"
    ))
    .unwrap();
    let data: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = data["cases"].as_array().unwrap();
    assert!(cases.len() >= 4);
    let vec_of = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    for case in cases {
        let t = Tether::new(TetherParams {
            elements: case["elements"].as_u64().unwrap() as usize,
            damping_pa_s: case["damping_pa_s"].as_f64().unwrap(),
            drag_coefficient: case["drag_coefficient"].as_f64().unwrap(),
            tip_mass_kg: case["tip_mass_kg"].as_f64().unwrap(),
            rotary_inertia: case["rotary_inertia"].as_bool().unwrap(),
            ..Default::default()
        })
        .unwrap();
        let (q, qd) = (vec_of(&case["q"]), vec_of(&case["qdot"]));
        let expected = vec_of(&case["generalized_force"]);
        let mut f = vec![0.0; t.dofs()];
        t.generalized_force(&q, &qd, &mut f);
        let scale = expected.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (i, (a, b)) in f.iter().zip(&expected).enumerate() {
            assert!(
                (a - b).abs() < 1e-10 * scale,
                "n={} f[{i}] = {a} vs {b}",
                t.elements()
            );
        }
        let mass = case["mass_matrix"].as_array().unwrap();
        for (i, row) in mass.iter().enumerate() {
            for (j, m) in vec_of(row).iter().enumerate() {
                assert!((t.mass().get(i, j) - m).abs() < 1e-14, "M[{i}][{j}]");
            }
        }
    }
}

#[test]
fn static_stretch_matches_exact_solution() {
    // docs/model.md §8: the tip hangs g ρ_t L²/(2E) (+ m g L/(E a)) below L.
    for n in [3, 10, 40] {
        for tip_mass in [0.0, 0.021] {
            let t = tether(n, 0.0, 0.0, tip_mass);
            let p = t.params();
            let q = hanging_equilibrium(&t, [0.0, 0.0]).unwrap();
            let stretch = -q[t.tip_index() + 1] - p.length_m;
            let exact = p.gravity_m_s2 * p.density_kg_m3 * p.length_m.powi(2)
                / (2.0 * p.youngs_modulus_pa)
                + tip_mass * p.gravity_m_s2 * p.length_m / (p.youngs_modulus_pa * p.area_m2());
            if tip_mass == 0.0 {
                assert!((exact - 1.72647e-4).abs() < 1e-9);
            }
            assert!(
                (stretch / exact - 1.0).abs() < 1e-8,
                "n={n} m={tip_mass}: {stretch} vs {exact}"
            );
            assert!(q[t.tip_index()].abs() < 1e-15, "hangs straight");
        }
    }
}

#[test]
fn lowest_frequency_about_hanging_equilibrium() {
    // docs/model.md §8: ω₁ = 4.8638 rad/s (0.05 %), within 0.2 % of the heavy chain's 4.8595.
    for n in [10, 20] {
        let t = tether(n, 0.0, 0.0, 0.0);
        let q = hanging_equilibrium(&t, [0.0, 0.0]).unwrap();
        let w1 = modes(&t, &q).unwrap()[0].omega_rad_s;
        assert!((w1 / 4.8638 - 1.0).abs() < 5e-4, "n={n}: ω₁ = {w1}");
        assert!((w1 / 4.8595 - 1.0).abs() < 2e-3, "n={n}: ω₁ = {w1}");
    }
}

fn drop_run(
    n: usize,
    damping: f64,
    drag: f64,
    settings: SolverSettings,
    duration: f64,
) -> tether_sweep::scenario::SimulationOutput {
    let params = TetherParams {
        elements: n,
        damping_pa_s: damping,
        drag_coefficient: drag,
        ..Default::default()
    };
    let scenario = Scenario::new(ScenarioKind::Drop, params.length_m).with_duration_s(duration);
    simulate(&scenario, &params, &settings).unwrap()
}

fn explicit(step: Option<f64>) -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Explicit,
        step_s: step,
        ..Default::default()
    }
}

fn max_energy_error(out: &tether_sweep::scenario::SimulationOutput) -> f64 {
    let e0 = out.energy_j[0];
    out.energy_j
        .iter()
        .fold(0.0f64, |m, e| m.max((e - e0).abs()))
}

#[test]
fn undamped_energy_is_conserved_at_second_order() {
    // D = 0, C_D = 0: the explicit scheme is velocity Verlet; its energy error
    // must fall by about 4 when the step halves.
    let (e1, e2) = (
        max_energy_error(&drop_run(4, 0.0, 0.0, explicit(Some(1e-4)), 0.4)),
        max_energy_error(&drop_run(4, 0.0, 0.0, explicit(Some(5e-5)), 0.4)),
    );
    let ratio = e1 / e2;
    assert!(
        (3.5..4.5).contains(&ratio),
        "energy errors {e1:e}, {e2:e}: ratio {ratio}"
    );
    // And it is small relative to the energy exchanged (≈ m g L/2 ≈ 0.03 J).
    assert!(e1 < 1e-4, "{e1}");
    // The reference solver conserves it to its tolerance too.
    let reference = drop_run(
        4,
        0.0,
        0.0,
        SolverSettings {
            kind: SolverKind::Reference,
            ..Default::default()
        },
        0.4,
    );
    assert!(
        max_energy_error(&reference) < 1e-5,
        "{}",
        max_energy_error(&reference)
    );
}

#[test]
fn dissipation_never_increases_energy() {
    for (d, cd) in [(2000.0, 0.0), (0.0, 0.8), (500.0, 0.9)] {
        let out = drop_run(6, d, cd, explicit(None), 1.0);
        for w in out.energy_j.windows(2) {
            assert!(
                w[1] <= w[0] + 1e-9,
                "D={d} C_D={cd}: energy rose from {} to {}",
                w[0],
                w[1]
            );
        }
        let lost = out.energy_j[0] - out.energy_j.last().unwrap();
        eprintln!("D={d} C_D={cd}: lost {lost:e} J");
        assert!(
            lost > 1e-6,
            "D={d} C_D={cd}: nothing dissipated ({lost:e} J)"
        );
    }
}

fn max_track_difference(a: &tether_sweep::track::Track, b: &tether_sweep::track::Track) -> f64 {
    assert_eq!(a.times_s, b.times_s);
    a.positions_m
        .iter()
        .zip(&b.positions_m)
        .fold(0.0f64, |m, (p, q)| m.max((p[0] - q[0]).hypot(p[1] - q[1])))
}

#[test]
fn explicit_agrees_with_reference_on_the_spec_drop() {
    // Issue: n = 10, D = 2000, C_D = 0.8, 2 s, every marker and frame to 1e-5 m.
    let exp = drop_run(10, 2000.0, 0.8, explicit(None), 2.0);
    let reference = drop_run(10, 2000.0, 0.8, tight_reference(), 2.0);
    let diff = max_track_difference(&exp.track, &reference.track);
    assert!(diff < 1e-5, "max marker difference {diff:e} m");
    assert_eq!(exp.track.times_s.len(), 51);
    // The tether really fell: the tip moved by a good part of a metre.
    let tip0 = exp.track.at(0, 10);
    let tip_end = exp.track.at(50, 10);
    assert!((tip0[0] - tip_end[0]).hypot(tip0[1] - tip_end[1]) > 0.1);
}

/// Errors of `scheme` at `steps` against a tight reference on a 0.4-s drop
/// at n = 4 each halve the step's error by four: second order.
fn assert_second_order(damping: f64, steps: [f64; 3], scheme: fn(Option<f64>) -> SolverSettings) {
    let tight = drop_run(4, damping, 0.8, reference_at(1e-13), 0.4);
    let errors: Vec<f64> = steps
        .iter()
        .map(|&h| {
            max_track_difference(
                &drop_run(4, damping, 0.8, scheme(Some(h)), 0.4).track,
                &tight.track,
            )
        })
        .collect();
    assert_halving_quarters(&errors);
}

/// Each halving of the step divides the error by about four.
fn assert_halving_quarters(errors: &[f64]) {
    eprintln!("errors {errors:?}");
    for w in errors.windows(2) {
        let ratio = w[0] / w[1];
        assert!((3.3..4.7).contains(&ratio), "errors {errors:?}");
    }
}

/// `drop_run`'s tether filmed at 30 fps from t = 0 to 0.4 s with the
/// release at 0.02 s: no frame after the first falls on a step of any of
/// the steps below.
fn filmed_run(damping: f64, settings: SolverSettings) -> tether_sweep::scenario::SimulationOutput {
    let params = TetherParams {
        elements: 4,
        damping_pa_s: damping,
        drag_coefficient: 0.8,
        ..Default::default()
    };
    let times: Vec<f64> = (0..=12).map(|p| p as f64 / 30.0).collect();
    let scenario = Scenario::film(times, 0.02, params.length_m);
    simulate(&scenario, &params, &settings).unwrap()
}

#[test]
fn frames_between_steps_converge_at_second_order() {
    // Sampled within its step by the scheme's own expansion, a frame keeps
    // the scheme's order; read at the nearest step instead, it would be off
    // by up to h/2 times the tip's speed, an error of first order (ratio 2).
    let tight = filmed_run(500.0, reference_at(1e-13));
    // The frame before the release shows the held shape: straight at 45°
    // from the pin at the origin.
    assert_eq!(tight.track.times_s.len(), 13);
    let d = 45f64.to_radians();
    for (j, &s) in tight.track.marker_arc_lengths_m.iter().enumerate() {
        let p = tight.track.at(0, j);
        assert!((p[0] - s * d.sin()).abs() < 1e-15 && (p[1] + s * d.cos()).abs() < 1e-15);
    }
    for scheme in [explicit, semi_implicit] {
        let errors: Vec<f64> = [2e-4, 1e-4, 5e-5]
            .iter()
            .map(|&h| max_track_difference(&filmed_run(500.0, scheme(Some(h))).track, &tight.track))
            .collect();
        assert_halving_quarters(&errors);
    }
}

#[test]
fn explicit_converges_to_reference_at_second_order() {
    // Steps near the stability limit (≈ 2.2e-4 s) so the explicit error stays
    // far above the reference's own.
    assert_second_order(500.0, [2e-4, 1e-4, 5e-5], explicit);
}

#[test]
fn reference_tolerance_controls_its_error() {
    let run = |tol: f64| {
        drop_run(
            6,
            2000.0,
            0.8,
            SolverSettings {
                kind: SolverKind::Reference,
                reference: ReferenceOptions {
                    tolerance_m: tol,
                    ..Default::default()
                },
                ..Default::default()
            },
            1.0,
        )
    };
    let truth = run(1e-13);
    let loose = run(1e-7);
    let default = run(ReferenceOptions::default().tolerance_m);
    let (e_loose, e_default) = (
        max_track_difference(&loose.track, &truth.track),
        max_track_difference(&default.track, &truth.track),
    );
    assert!(e_default < e_loose / 10.0, "{e_default:e} vs {e_loose:e}");
    assert!(e_default < 2e-6, "{e_default:e}");
    let SolverReport::Reference(stats) = default.report else {
        panic!()
    };
    assert!(stats.max_local_error_m <= 1e-9 && stats.steps > 10);
}

fn reference_stats(n: usize, damping: f64, duration: f64) -> ReferenceStats {
    let settings = SolverSettings {
        kind: SolverKind::Reference,
        ..Default::default()
    };
    let SolverReport::Reference(stats) = drop_run(n, damping, 0.8, settings, duration).report
    else {
        panic!("the reference solver reports its statistics")
    };
    stats
}

#[test]
fn newton_borrows_the_last_steps_contraction_rate() {
    // Measuring each step's rate afresh takes two iterations a step (2.0
    // here); with the last step's rate most steps stop after one. The
    // accuracy this must not cost is checked by
    // reference_tolerance_controls_its_error and tests/exudyn.rs.
    let stats = reference_stats(10, 2000.0, 1.0);
    let per_step = stats.newton_iterations as f64 / (stats.steps + stats.rejected_steps) as f64;
    assert!(per_step < 1.6, "{per_step} Newton iterations per step");
}

#[test]
fn a_borrowed_rate_does_not_pollute_the_error_estimate() {
    // Undamped, the predictor misses the ringing axial modes. Had a first
    // iteration with a large correction been accepted on a borrowed rate,
    // its leftover error would inflate the step's error estimate: 14 % of
    // these steps were rejected that way, against 2.5 %.
    let stats = reference_stats(30, 0.0, 0.4);
    let rejected = stats.rejected_steps as f64 / stats.steps as f64;
    assert!(
        rejected < 0.05,
        "{:.1} % of steps rejected",
        100.0 * rejected
    );
}

#[test]
fn step_beyond_the_stability_limit_diverges_and_is_reported() {
    let t = tether(6, 2000.0, 0.0, 0.0);
    let q = t.straight_configuration(
        [0.0, 0.0],
        [45f64.to_radians().sin(), -45f64.to_radians().cos()],
    );
    let limit = explicit_stability_limit(&t, &q).unwrap();
    let run = |h: f64| {
        let dynamics = TetherDynamics::new(t.clone(), Arc::new(FixedPin([0.0, 0.0]))).unwrap();
        let mut s = FixedStepSolver::new(
            FixedStepScheme::Explicit,
            dynamics,
            q.clone(),
            vec![0.0; t.dofs()],
            0.0,
            h,
        );
        s.advance_to(h * 20000.0)
    };
    assert!(run(0.98 * limit).is_ok());
    let err = run(1.2 * limit).unwrap_err();
    assert!(err.is_divergence(), "{err}");
}

#[test]
fn swingup_objective_matches_the_independent_reference_run() {
    // docs/model.md §8: winch periods 0.5, 0.4, 0.6 s, A = 0.2 m, D = 2000, no drag:
    // J_a,min = 0.5593 at t ≈ 1.02 s (n = 10 and 40 alike). Both CPU solvers.
    let params = TetherParams {
        elements: 10,
        damping_pa_s: 2000.0,
        tip_mass_kg: 0.021,
        ..Default::default()
    };
    let scenario = Scenario::new(ScenarioKind::Swingup, params.length_m);
    assert_eq!(
        scenario.as_swingup().unwrap().winch.periods_s,
        [0.5, 0.4, 0.6]
    );
    for kind in [SolverKind::Reference, SolverKind::Explicit] {
        let settings = SolverSettings {
            kind,
            ..Default::default()
        };
        let out = simulate(&scenario, &params, &settings).unwrap();
        let obj = out.swingup.unwrap();
        assert!(
            (obj.j_a_min - 0.5593).abs() < 5e-5,
            "{kind:?}: J_a,min = {}",
            obj.j_a_min
        );
        assert!(
            (obj.t_at_min_s - 1.02).abs() < 0.005,
            "{kind:?}: at {}",
            obj.t_at_min_s
        );
        // J_a(0): the tip hangs L plus its static stretch below the winch.
        assert_eq!(out.track.times_s.len(), 76);
    }
}

fn semi_implicit(step: Option<f64>) -> SolverSettings {
    SolverSettings {
        kind: SolverKind::SemiImplicit,
        step_s: step,
        ..Default::default()
    }
}

fn tight_reference() -> SolverSettings {
    reference_at(1e-10)
}

/// The reference solver at a local error tolerance of `tolerance_m`.
fn reference_at(tolerance_m: f64) -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Reference,
        reference: ReferenceOptions {
            tolerance_m,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn steps_and_step(out: &tether_sweep::scenario::SimulationOutput) -> (u64, f64) {
    match out.report {
        SolverReport::FixedStep { step_s, steps, .. } => (steps, step_s),
        ref other => panic!("not a fixed-step report: {other:?}"),
    }
}

#[test]
fn semi_implicit_damping_frees_the_step_from_d_n_squared() {
    // The paper's drop at n = 10: the semi-implicit step is bounded by
    // elasticity alone, the explicit one by the damping of the highest
    // axial modes; the track meets the explicit scheme's 1e-5 m bound.
    let semi = drop_run(10, 2000.0, 0.8, semi_implicit(None), 2.0);
    let reference = drop_run(10, 2000.0, 0.8, tight_reference(), 2.0);
    let diff = max_track_difference(&semi.track, &reference.track);
    let (semi_steps, semi_step) = steps_and_step(&semi);
    // Both automatic steps, chosen the same way from the same modes.
    let (_, explicit_step) = steps_and_step(&drop_run(10, 2000.0, 0.8, explicit(None), 0.04));
    eprintln!(
        "semi-implicit: {semi_steps} steps of {semi_step:e} s (explicit: {explicit_step:e} s), markers {diff:e} m from the reference"
    );
    assert!(diff < 1e-5, "max marker difference {diff:e} m");
    assert!(
        semi_step > 3.0 * explicit_step,
        "{semi_step:e} vs {explicit_step:e}"
    );
    // At D = 10000 the explicit step shrinks with D, this one does not.
    let stiff = drop_run(10, 10000.0, 0.8, semi_implicit(None), 0.2);
    assert_eq!(steps_and_step(&stiff).1, semi_step);
}

#[test]
fn semi_implicit_converges_to_reference_at_second_order() {
    // Heavy damping (D = 5000), steps up to near the elastic limit (≈ 3e-4 s
    // at n = 4), far beyond the explicit scheme's damped limit there.
    assert_second_order(5000.0, [2e-4, 1e-4, 5e-5], semi_implicit);
}

#[test]
fn semi_implicit_swingup_matches_the_reference_j_a() {
    let params = TetherParams {
        elements: 10,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        tip_mass_kg: 0.021,
        ..Default::default()
    };
    let scenario = Scenario::new(ScenarioKind::Swingup, params.length_m).with_duration_s(1.52);
    let semi = simulate(&scenario, &params, &semi_implicit(None)).unwrap();
    let reference = simulate(&scenario, &params, &tight_reference()).unwrap();
    let (a, b) = (semi.swingup.unwrap(), reference.swingup.unwrap());
    let relative = (a.j_a_min / b.j_a_min - 1.0).abs();
    eprintln!("J_a,min {} vs {} ({relative:e})", a.j_a_min, b.j_a_min);
    assert!(relative < 1e-5, "J_a,min {} vs {}", a.j_a_min, b.j_a_min);
    assert_eq!(a.t_at_min_s, b.t_at_min_s);
}

#[test]
fn semi_implicit_steps_beyond_its_limit_are_refused() {
    // Beyond 2/ω_max the semi-implicit scheme does not blow up, it goes
    // wrong (its damping holds the unstable modes bounded), so a user's step
    // above the limit is refused; just below it the drop is still right.
    let t = tether(6, 2000.0, 0.0, 0.0);
    let scenario = Scenario::new(ScenarioKind::Drop, t.params().length_m).with_duration_s(2.0);
    let (q0, _) = scenario.initial_state(&t).unwrap();
    let limit = semi_implicit_stability_limit(&t, &q0).unwrap();
    let frame = scenario.sample_interval_s();
    let below = frame / (frame / (0.98 * limit)).ceil();
    let above = frame / (frame / (1.015 * limit)).floor();
    assert!(below < limit && above > limit);
    let run = |step| simulate(&scenario, t.params(), &semi_implicit(Some(step)));
    let reference = simulate(&scenario, t.params(), &tight_reference()).unwrap();
    let diff = max_track_difference(&run(below).unwrap().track, &reference.track);
    assert!(diff < 1e-4, "{diff:e} m just below the limit");
    let err = run(above).unwrap_err().to_string();
    assert!(
        err.contains("step_s") && err.contains("stability limit"),
        "{err}"
    );
}
