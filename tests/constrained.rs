//! Constrained bodies against exact facts: the arm's end point on its line
//! and its joint angles on the inverse kinematics' smooth branch through
//! the folded pose (modified Lagrange), the Baumgarte form's failure at
//! that pose, the drift decaying as the gains set it, and the command
//! line's runs of the arm and the robot.

mod common;

use std::f64::consts::PI;

use arrow::array::{Array, Float64Array};
use nalgebra::DVector;
use tether_sweep::constrained::arm::Arm;
use tether_sweep::constrained::integrate::{Ending, Tolerances, integrate};
use tether_sweep::constrained::pendulum::Pendulum;
use tether_sweep::constrained::{FirstOrder, Formulation, Holonomic};
use tether_sweep::io::track::read_table;
use tether_sweep::workflow::bodies::{ARM_GAINS, DEFAULT_ALPHA};

use common::{path_str, stderr, tether_sweep};

const TOL: Tolerances = Tolerances {
    rtol: 1e-10,
    atol: 1e-12,
    max_step_s: 0.01,
};

fn arm_run(formulation: Formulation) -> (Arm, tether_sweep::constrained::integrate::Trajectory) {
    let arm = Arm::default();
    let (q, rates, _) = arm.start();
    let y0 = DVector::from_iterator(4, q.iter().chain(rates.iter()).copied());
    let outputs: Vec<f64> = (0..=100).map(|k| k as f64 * 0.01).collect();
    let run = integrate(
        &FirstOrder {
            system: &arm,
            formulation,
        },
        y0,
        &outputs,
        TOL,
    );
    (arm, run)
}

/// The pose whose end point is at x on the line, on the branch that runs
/// smoothly through the fold: the elbow angle passes −π as x passes 0.
fn exact_pose(arm: &Arm, x: f64) -> [f64; 2] {
    let (l1, l2, y) = (arm.link1_m, arm.link2_m, arm.line_y_m);
    let c = (x * x + y * y - l1 * l1 - l2 * l2) / (2.0 * l1 * l2);
    let q2 = match x > 0.0 {
        true => -c.acos(),
        false => -2.0 * PI + c.acos(),
    };
    let q1 = y.atan2(x) - (l2 * q2.sin()).atan2(l1 + l2 * q2.cos());
    [q1, q2]
}

#[test]
fn the_modified_lagrange_arm_passes_the_fold_on_its_line_and_its_exact_path() {
    let (kp, kd) = ARM_GAINS;
    let formulation = Formulation::ModifiedLagrange {
        alpha: DEFAULT_ALPHA,
        kp,
        kd,
    };
    let (arm, run) = arm_run(formulation);
    assert_eq!(run.ending, Ending::Finished);
    assert!(arm.fold_time_s() < 0.6, "the run passes the fold");
    let x0 = arm.start().2;
    let mut last_rates: Option<[f64; 2]> = None;
    for (t, y) in run.times_s.iter().zip(&run.states) {
        let q = y.rows(0, 2).into_owned();
        let phi = arm.constraints(&q, *t);
        assert!(
            phi.amax() < 1e-6,
            "t = {t}: the end point {} m off its place on the line",
            phi.amax()
        );
        let exact = exact_pose(&arm, x0 - arm.speed_m_s * t);
        let off = (q[0] - exact[0]).abs().max((q[1] - exact[1]).abs());
        assert!(off < 1e-5, "t = {t}: {off} rad from the inverse kinematics");
        // The rates are continuous: no jump to the other elbow branch.
        let rates = [y[2], y[3]];
        if let Some(previous) = last_rates {
            let jump = (rates[0] - previous[0])
                .abs()
                .max((rates[1] - previous[1]).abs());
            assert!(jump < 0.05, "t = {t}: the joint rates jump by {jump} rad/s");
        }
        last_rates = Some(rates);
    }
    assert!(
        run.states.last().unwrap()[1] < -PI,
        "the elbow angle passed −π"
    );
}

#[test]
fn the_baumgarte_arm_fails_at_the_fold_named_with_its_time() {
    let (kp, kd) = ARM_GAINS;
    let (arm, run) = arm_run(Formulation::Baumgarte { kp, kd });
    let Ending::Failed { t_s, reason } = &run.ending else {
        panic!("the Baumgarte form passed the fold: {:?}", run.ending)
    };
    assert!(
        (t_s - arm.fold_time_s()).abs() < 1e-3,
        "{t_s} vs {}",
        arm.fold_time_s()
    );
    assert!(reason.contains("singular"), "{reason}");
    assert!(run.times_s.iter().all(|t| *t < arm.fold_time_s()));
}

/// From a start off its constraint (a rod 1 % long), each formulation's
/// drift Φ follows Φ̈ + K_D Φ̇ + K_P Φ = 0: critically damped at
/// K_P = 100, K_D = 20, Φ(t) = (Φ₀ + (Φ̇₀ + 10 Φ₀) t) e^(−10 t).
#[test]
fn the_drift_decays_at_the_rate_the_gains_set() {
    let p = Pendulum {
        length_m: 0.8,
        mass_kg: 0.3,
        gravity_m_s2: 9.81,
    };
    let (q, _) = p.released(0.5);
    let q = q * 1.01;
    let qd = DVector::from_vec(vec![0.3, 0.1]);
    let y0 = DVector::from_iterator(4, q.iter().chain(qd.iter()).copied());
    let phi0 = p.constraints(&q, 0.0)[0];
    let phi_dot0 = (p.jacobian(&q, 0.0) * &qd)[0];
    let outputs: Vec<f64> = (0..=50).map(|k| k as f64 * 0.02).collect();
    for formulation in [
        Formulation::Baumgarte {
            kp: 100.0,
            kd: 20.0,
        },
        Formulation::ModifiedLagrange {
            alpha: 10.0,
            kp: 100.0,
            kd: 20.0,
        },
    ] {
        let run = integrate(
            &FirstOrder {
                system: &p,
                formulation,
            },
            y0.clone(),
            &outputs,
            TOL,
        );
        assert_eq!(run.ending, Ending::Finished);
        for (t, y) in run.times_s.iter().zip(&run.states) {
            let phi = p.constraints(&y.rows(0, 2).into_owned(), *t)[0];
            let exact = (phi0 + (phi_dot0 + 10.0 * phi0) * t) * (-10.0 * t).exp();
            assert!(
                (phi - exact).abs() < 1e-6 * phi0.abs(),
                "{formulation:?} t = {t}: {phi} vs {exact}"
            );
        }
    }
}

/// A column of a table the binary wrote.
fn array(path: &std::path::Path, name: &str) -> arrow::array::ArrayRef {
    let table = read_table(path).unwrap();
    let column = table.column_by_name(name);
    column.unwrap_or_else(|| panic!("no column {name}")).clone()
}

fn column(path: &std::path::Path, name: &str) -> Vec<f64> {
    let array = array(path, name);
    let values = array.as_any().downcast_ref::<Float64Array>().unwrap();
    // A missing value (never settled, never failed) as NaN.
    (0..values.len())
        .map(|k| {
            if values.is_null(k) {
                f64::NAN
            } else {
                values.value(k)
            }
        })
        .collect()
}

fn text_column(path: &std::path::Path, name: &str) -> Vec<String> {
    let array = array(path, name);
    let values = array
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .unwrap();
    (0..values.len())
        .map(|k| values.value(k).to_string())
        .collect()
}

#[test]
fn the_command_line_runs_the_arm_with_each_formulation() {
    let dir = tempfile::tempdir().unwrap();
    let failed = dir.path().join("baumgarte.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--formulation",
        "baumgarte",
        "--out",
        path_str(&failed),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    // The fold's time from the arm itself, not typed in.
    let fold_s = Arm::default().fold_time_s();
    assert!(
        err.contains(&format!("baumgarte failed at t = {fold_s:.3}")),
        "{err}"
    );
    assert!(column(&failed, "t_s").iter().all(|t| *t < fold_s));
    let passed = dir.path().join("modified.parquet");
    let out = tether_sweep(&["simulate", "--scenario", "arm", "--out", path_str(&passed)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tip_y = column(&passed, "tip_y_m");
    assert_eq!(tip_y.len(), 101);
    assert!(tip_y.iter().all(|y| (y - 0.5).abs() < 1e-6));
    assert!(passed.with_extension("png").exists() && passed.with_extension("svg").exists());
    // A flag of the tether's, or of the robot's, is refused by name.
    for (flag, value) in [("--elements", "4"), ("--curvature", "2")] {
        let x = dir.path().join("x.parquet");
        let args = [
            "simulate",
            "--scenario",
            "arm",
            flag,
            value,
            "--out",
            path_str(&x),
        ];
        refused(&args, flag.trim_start_matches('-'));
    }
    let x = dir.path().join("x.parquet");
    let args = [
        "simulate",
        "--scenario",
        "arm",
        "--feedback-gains",
        "-1,3",
        "--out",
        path_str(&x),
    ];
    refused(&args, "--feedback-gains");
}

#[test]
fn the_robot_reaches_its_circle_with_feedback_and_not_without() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "robot",
        "--start-offset-m",
        "0.2",
        "--out",
        path_str(&with),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let error = column(&with, "tracking_error_m");
    assert!((error[0] - 0.2).abs() < 1e-12);
    assert!(error.last().unwrap().abs() < 1e-3);
    assert!(
        column(&with, "rolling_residual_m_s")
            .iter()
            .all(|r| r.abs() < 1e-12)
    );
    let without = dir.path().join("without.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "robot",
        "--feedback-gains",
        "0,0",
        "--out",
        path_str(&without),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not under 1 mm by the end"), "{text}");
    assert!(
        column(&without, "tracking_error_m")
            .iter()
            .all(|e| e.abs() > 0.19)
    );
}

#[test]
fn sweeps_write_one_row_per_candidate_with_its_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let robot = dir.path().join("robot.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "robot",
        "--axis",
        "kp_per_s2=0,4",
        "--axis",
        "kd_per_s=0,4",
        "--duration",
        "8",
        "--out",
        path_str(&robot),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(column(&robot, "kp_per_s2"), [0.0, 0.0, 4.0, 4.0]);
    assert_eq!(column(&robot, "kd_per_s"), [0.0, 4.0, 0.0, 4.0]);
    let settling = column(&robot, "settling_time_s");
    assert!(settling[0].is_nan() && settling[1].is_nan() && settling[2].is_nan());
    assert!((3.0..4.5).contains(&settling[3]), "{settling:?}");
    // A row's numbers are its candidate's alone: the same candidate run
    // by itself gives the same row.
    let alone = dir.path().join("alone.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "robot",
        "--axis",
        "kp_per_s2=4",
        "--axis",
        "kd_per_s=4",
        "--duration",
        "8",
        "--out",
        path_str(&alone),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for name in [
        "max_tracking_error_m",
        "final_tracking_error_m",
        "peak_torque_n_m",
    ] {
        assert_eq!(
            column(&alone, name)[0].to_bits(),
            column(&robot, name)[3].to_bits(),
            "{name}"
        );
    }
    let arm = dir.path().join("arm.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--axis",
        "alpha=10,1000",
        "--out",
        path_str(&arm),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let drift = column(&arm, "max_drift_m");
    assert!(drift[0] > 1e-6 && drift[1] < 1e-7, "{drift:?}");
    let failing = dir.path().join("baumgarte.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--formulation",
        "baumgarte",
        "--axis",
        "kd_per_s=10,20",
        "--out",
        path_str(&failing),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(text_column(&failing, "status"), ["failed", "failed"]);
    // Each failed row says why.
    assert!(
        text_column(&failing, "failure")
            .iter()
            .all(|why| why.contains("singular")),
        "{:?}",
        text_column(&failing, "failure")
    );
    assert!(
        column(&failing, "failed_at_s")
            .iter()
            .all(|t| (t - Arm::default().fold_time_s()).abs() < 1e-3)
    );
    refused(
        &[
            "simulate",
            "--scenario",
            "robot",
            "--axis",
            "alpha=1",
            "--out",
            path_str(&failing),
        ],
        "--axis",
    );
    // A value out of its range names its axis; an existing table is kept
    // unless --force; a table is Parquet.
    let fresh = dir.path().join("fresh.parquet");
    refused(
        &[
            "simulate",
            "--scenario",
            "robot",
            "--axis",
            "kd_per_s=-1,4",
            "--out",
            path_str(&fresh),
        ],
        "--axis kd_per_s",
    );
    assert!(!fresh.exists());
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--axis",
            "alpha=10",
            "--out",
            path_str(&arm),
        ],
        "--force",
    );
    let csv = dir.path().join("arm.csv");
    let out = tether_sweep(&["simulate", "--scenario", "arm", "--out", path_str(&csv)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--out") && !csv.exists(),
        "{}",
        stderr(&out)
    );
}

/// Runs the binary with `args` and checks that it refuses them (exit 2)
/// with a message that contains `needle`.
fn refused(args: &[&str], needle: &str) {
    let out = tether_sweep(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
}
