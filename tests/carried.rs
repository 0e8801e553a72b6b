//! The arm carrying the tether (docs/constrained.md §5) against exact
//! facts: the pin's force against the tether's own momentum balance on a
//! curved path, the arm at rest holding the pinned tether in its hanging
//! equilibrium with the tether's weight, and the tether's pull entering
//! the arm's torques as J(q)ᵀ times it; and the command line's `--tether`.

mod common;

use std::sync::Arc;

use nalgebra::DVector;
use tether_sweep::constrained::Holonomic;
use tether_sweep::constrained::arm::Arm;
use tether_sweep::io::track::read_table;
use tether_sweep::model::tether::NODE_DOFS;
use tether_sweep::model::{FixedPin, PinMotion, Tether, TetherParams};
use tether_sweep::scenario::PathMotion;
use tether_sweep::solver::equilibrium::hanging_equilibrium;
use tether_sweep::solver::{ReferenceOptions, ReferenceSolver, TetherDynamics};
use tether_sweep::workflow::bodies::{CARRIED_MARKERS, CarriedTether, run_tether};

use common::{path_str, stderr, tether_sweep};

fn params(damping_pa_s: f64, drag: f64) -> TetherParams {
    TetherParams {
        elements: 8,
        damping_pa_s,
        drag_coefficient: drag,
        ..TetherParams::default()
    }
}

/// Linear momentum: the position rows of M v summed, x and y (the
/// position shape functions of an element sum to one).
fn momentum(tether: &Tether, v: &[f64]) -> [f64; 2] {
    let mut mv = vec![0.0; v.len()];
    tether.mass_times(v, &mut mv);
    let sum = |k: usize| mv.iter().skip(k).step_by(NODE_DOFS).sum::<f64>();
    [sum(0), sum(1)]
}

/// A curved pin path through five points 0.1 s apart (accelerations over
/// 10 m/s²), back at its start at 0.4 s.
fn curved_path() -> PathMotion {
    let times = vec![0.0, 0.1, 0.2, 0.3, 0.4];
    let points = vec![
        [0.0, 0.0],
        [0.05, 0.02],
        [-0.04, 0.0],
        [0.03, -0.03],
        [0.0, 0.0],
    ];
    PathMotion::new(times, points).unwrap()
}

#[test]
fn the_pins_force_is_the_rate_of_the_tethers_momentum_less_its_weight() {
    // No drag: the only outside forces are the pin's and gravity.
    let tether = Tether::new(params(800.0, 0.0)).unwrap();
    let path = curved_path();
    let q = hanging_equilibrium(&tether, path.position(0.0)).unwrap();
    let mut v = vec![0.0; q.len()];
    for node in v.chunks_mut(NODE_DOFS) {
        node[..2].copy_from_slice(&path.velocity(0.0));
    }
    let weight: [f64; 2] = std::array::from_fn(|k| {
        tether
            .gravity()
            .iter()
            .skip(k)
            .step_by(NODE_DOFS)
            .sum::<f64>()
    });
    let dynamics = TetherDynamics::new(tether.clone(), Arc::new(path)).unwrap();
    let options = ReferenceOptions {
        tolerance_m: 1e-12,
        ..ReferenceOptions::DEFAULT
    };
    let mut solver = ReferenceSolver::new(dynamics, q, v, 0.0, options);
    // The central difference's error is h² P‴/6: 5e-7 N at 1e-5 s
    // (5e-5 N at 1e-4 s, measured); the balance itself is exact.
    let h = 1e-5;
    let mut worst = 0.0f64;
    let mut largest = 0.0f64;
    for t in [0.05, 0.15, 0.25, 0.33] {
        solver.advance_to(t - h).unwrap();
        let before = momentum(&tether, solver.velocities());
        solver.advance_to(t).unwrap();
        let force = solver.pin_reaction();
        solver.advance_to(t + h).unwrap();
        let after = momentum(&tether, solver.velocities());
        for k in 0..2 {
            let rate = (after[k] - before[k]) / (2.0 * h);
            worst = worst.max((force[k] - (rate - weight[k])).abs());
            largest = largest.max(rate.abs());
        }
    }
    // The path's accelerations (over 10 m/s²) take the force far from the
    // weight alone: a missing inertia term would miss by that.
    assert!(largest > 0.3 * weight[1].abs(), "{largest} {weight:?}");
    assert!(worst < 1e-5 * largest, "worst {worst:e} of {largest}");
}

#[test]
fn the_arm_at_rest_holds_the_pinned_tether_and_its_weight() {
    let arm = Arm {
        speed_m_s: 0.0,
        ..Arm::default()
    };
    let tether = CarriedTether {
        params: params(2000.0, 0.9),
        tolerance_m: 1e-10,
    };
    let outputs: Vec<f64> = (0..=30).map(|k| k as f64 * 0.01).collect();
    let run = run_tether(&arm, &tether, &outputs).unwrap();
    assert!(run.failure.is_none());
    assert_eq!(run.markers_m.len(), outputs.len());

    // The same tether pinned at the arm's end point, run on its own.
    let model = Tether::new(tether.params.clone()).unwrap();
    let pin = arm.tip(&arm.start().0);
    let q = hanging_equilibrium(&model, pin).unwrap();
    let v = vec![0.0; q.len()];
    let dynamics = TetherDynamics::new(model.clone(), Arc::new(FixedPin(pin))).unwrap();
    let options = ReferenceOptions {
        tolerance_m: 1e-10,
        ..ReferenceOptions::DEFAULT
    };
    let mut pinned = ReferenceSolver::new(dynamics, q, v, 0.0, options);
    let weight: f64 = model.gravity().iter().skip(1).step_by(NODE_DOFS).sum();
    for (k, t) in outputs.iter().enumerate() {
        pinned.advance_to(*t).unwrap();
        for j in 0..CARRIED_MARKERS {
            let s = model.params().length_m * j as f64 / (CARRIED_MARKERS - 1) as f64;
            let p = model.point(pinned.positions(), s);
            let carried = run.markers_m[k][j];
            assert!(
                (p[0] - carried[0]).abs() < 1e-12 && (p[1] - carried[1]).abs() < 1e-12,
                "t {t} marker {j}: {p:?} vs {carried:?}"
            );
        }
        // At rest the tether hangs: it pulls the end point down by its
        // weight (the hanging equilibrium is the discrete one to 1e-4).
        let pull = run.pull_at_output(k);
        assert!(pull[0].abs() < 1e-9, "t {t}: {pull:?}");
        assert!(
            (pull[1] - weight).abs() < 1e-4 * weight.abs(),
            "t {t}: {pull:?} {weight}"
        );
        // Between samples, the interpolated pull stays on the samples' scale.
        let between = run.pull_n(t + 0.0025);
        assert!((between[1] - weight).abs() < 1e-4 * weight.abs());
    }
}

fn column(path: &std::path::Path, name: &str) -> Vec<f64> {
    let table = read_table(path).unwrap();
    let array = table
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let values = array
        .as_any()
        .downcast_ref::<arrow::array::Float64Array>()
        .unwrap();
    values.values().to_vec()
}

#[test]
fn the_command_line_carries_the_tether_and_its_pull_is_in_the_torques() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("bare.parquet");
    let carried = dir.path().join("carried.parquet");
    let out = tether_sweep(&["simulate", "--scenario", "arm", "--out", path_str(&bare)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--tether",
        "--elements",
        "6",
        "--drag-coefficient",
        "1.2",
        "--tip-mass",
        "0.05",
        "--out",
        path_str(&carried),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("carried tether: its pull"), "{stdout}");
    assert!(dir.path().join("carried.svg").exists());

    let arm = Arm::default();
    let q = [column(&carried, "q1_rad"), column(&carried, "q2_rad")];
    let pull = [
        column(&carried, "tether_pull_x_n"),
        column(&carried, "tether_pull_y_n"),
    ];
    let torque = [
        column(&carried, "torque1_n_m"),
        column(&carried, "torque2_n_m"),
    ];
    let bare_torque = [column(&bare, "torque1_n_m"), column(&bare, "torque2_n_m")];
    let tip = [column(&carried, "tip_x_m"), column(&carried, "tip_y_m")];
    let pin = [
        column(&carried, "tether_marker0_x_m"),
        column(&carried, "tether_marker0_y_m"),
    ];
    assert_eq!(q[0].len(), 101);
    let mut largest_change = 0.0f64;
    let outputs_s = |k: usize| k as f64 * 0.01;
    for k in 0..q[0].len() {
        // The joints hold the tether: τ = τ_bare − J(q)ᵀ pull, J the end
        // point's Jacobian (the arm's path is the constraints', so q is
        // the bare arm's to the drift).
        let j = arm.jacobian(&DVector::from_vec(vec![q[0][k], q[1][k]]), 0.0);
        let load = j.transpose() * DVector::from_vec(vec![pull[0][k], pull[1][k]]);
        for i in 0..2 {
            let change = torque[i][k] - bare_torque[i][k];
            largest_change = largest_change.max(change.abs());
            // At the folded pose the joints' torques are not fixed by the
            // end point's path (J is singular there), and the arm leaves
            // it with a drift transient of a micrometre that decays.
            if (outputs_s(k) - arm.fold_time_s()).abs() < 0.01 {
                assert!(change.is_finite());
                continue;
            }
            assert!(
                (change + load[i]).abs() < 2e-6,
                "row {k} joint {i}: torque changed by {change}, −Jᵀ pull is {}",
                -load[i]
            );
        }
        // The tether's pin is the arm's end point.
        for i in 0..2 {
            assert!((tip[i][k] - pin[i][k]).abs() < 1e-7, "row {k}");
        }
    }
    // The tether's weight (and the tip mass's) is a torque the joints feel.
    assert!(largest_change > 0.1, "{largest_change}");
}

#[test]
fn the_tether_flags_belong_to_the_carried_tether() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.parquet");
    let refused = |args: &[&str], needle: &str| {
        let run = tether_sweep(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(stderr(&run).contains(needle), "{args:?}: {}", stderr(&run));
        assert!(!out.exists());
    };
    let o = path_str(&out);
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--elements",
            "6",
            "--out",
            o,
        ],
        "only with --tether",
    );
    refused(
        &["simulate", "--scenario", "robot", "--tether", "--out", o],
        "robot carries no tether",
    );
    refused(
        &["simulate", "--scenario", "drop", "--tether", "--out", o],
        "--tether is a constrained body's",
    );
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--tether",
            "--elements",
            "0",
            "--out",
            o,
        ],
        "--elements",
    );
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--tether",
            "--solver",
            "explicit",
            "--out",
            o,
        ],
        "--solver",
    );
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--backend",
            "gpu",
            "--out",
            o,
        ],
        "the tether an arm carries (--tether) on either",
    );
    // The GPU's readback of a long carried run is bounded before anything
    // runs or is allocated.
    refused(
        &[
            "simulate",
            "--scenario",
            "arm",
            "--tether",
            "--backend",
            "gpu",
            "--duration",
            "2000",
            "--out",
            o,
        ],
        "--duration = 200001 output times: must be at most",
    );
}

#[test]
fn a_sweep_over_the_carried_tethers_drag_swings_it_only_with_drag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.parquet");
    let run = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--tether",
        "--elements",
        "4",
        "--duration",
        "0.4",
        "--axis",
        "drag_coefficient=0,0.8,1.6",
        "--axis",
        "damping_pa_s=0,3000",
        "--out",
        path_str(&out),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let drag = column(&out, "drag_coefficient");
    let swing = column(&out, "max_tip_swing_m");
    let pull = column(&out, "peak_pull_n");
    assert_eq!(drag, [0.0, 0.0, 0.8, 0.8, 1.6, 1.6]);
    // Carried at constant velocity without air, the tether translates as
    // it hangs (a Galilean frame): its free end stays under the pin.
    assert!(swing[0] < 1e-12 && swing[1] < 1e-12, "{swing:?}");
    // Drag trails it, the more the larger C_D.
    assert!(swing[2] > 1e-3 && swing[4] > 1.5 * swing[2], "{swing:?}");
    assert!(pull.iter().all(|p| *p > 0.2 && *p < 0.23), "{pull:?}");

    // Its axes are the tether's own numbers, only where it is carried.
    let bare = tether_sweep(&[
        "simulate",
        "--scenario",
        "arm",
        "--axis",
        "drag_coefficient=1",
        "--out",
        path_str(&dir.path().join("bare.parquet")),
    ]);
    assert_eq!(bare.status.code(), Some(2));
    assert!(stderr(&bare).contains("--tether"), "{}", stderr(&bare));
}

/// The GPU engine carries the tether on the arm's line (its pin a straight
/// line at constant velocity, a `PinDrive::Path` of one segment), a frame at each of the
/// pull's samples: in f64 its markers are the CPU's fixed-step solver's on
/// the same step (round-off), and within 1e-7 m of the CPU reference
/// solver's carried run (the issue asks 1e-5; measured 9.6e-9), in f32
/// within 5e-6 m (measured 3.2e-7). A pin left where it started would be
/// 0.18 m off by the end. Its pin force, node 0's rows of M ä − f from the
/// scheme's own acceleration, is the CPU's exact reaction at the
/// fixed-step solver's state within 1e-9 N in f64 (measured 2.1e-11, of a
/// 0.2 N pull), and the reference run's pull within 1e-6 N (measured
/// 1.3e-7); in f32 within 5e-5 N (measured 2.5e-6).
#[test]
fn the_carried_tether_on_the_gpu_matches_the_cpu() {
    use tether_sweep::gpu::{self, BatchOptions, Precision};
    use tether_sweep::scheme::FixedStepScheme;
    use tether_sweep::solver::FixedStepSolver;
    use tether_sweep::workflow::bodies::{PULL_SAMPLES_PER_OUTPUT, gpu_simulation, program_path};
    let Some(gpu) = common::open_gpu() else {
        return;
    };
    let gpu = Arc::new(gpu);
    let arm = Arm::default();
    let tether = CarriedTether {
        params: params(2000.0, 1.2),
        tolerance_m: 1e-10,
    };
    let outputs: Vec<f64> = (0..=30).map(|k| k as f64 * 0.01).collect();
    let reference = run_tether(&arm, &tether, &outputs).unwrap();
    let scheme = FixedStepScheme::SemiImplicit;
    let sim = gpu_simulation(&arm, &tether, &outputs, scheme).unwrap();
    let samples = (outputs.len() - 1) * PULL_SAMPLES_PER_OUTPUT;
    assert_eq!(sim.frames.len(), samples);
    // The engine runs a built simulation only on its own fixed-step
    // scheme, and never on the CPU.
    use tether_sweep::engine::{Engine, EngineKind};
    let one = std::slice::from_ref(&sim);
    let cpu_engine = Engine::cpu(tether_sweep::scenario::SolverSettings::default());
    assert!(cpu_engine.run_built(one).is_err());
    let explicit = EngineKind::Gpu {
        precision: Precision::F32,
        scheme: FixedStepScheme::Explicit,
        layout: Default::default(),
    };
    let refused = Engine::new(explicit, Arc::clone(&gpu)).run_built(one);
    assert!(refused.unwrap_err().to_string().contains("scheme"));

    // The CPU's own fixed-step solver on the GPU's step and start.
    let model = Tether::new(tether.params.clone()).unwrap();
    let path = Arc::new(program_path(&arm).unwrap());
    let mut exact = TetherDynamics::new(model.clone(), path.clone()).unwrap();
    let dynamics = TetherDynamics::new(model.clone(), path).unwrap();
    let (q, v) = (sim.initial_q.clone(), sim.initial_v.clone());
    let mut cpu = FixedStepSolver::new(scheme, dynamics, q, v, 0.0, sim.step_s);
    let mut cpu_pull = Vec::new();
    for i in 0..samples {
        cpu.advance_to(sim.frame_time_s(i)).unwrap();
        let r = exact.pin_reaction(cpu.time(), cpu.positions(), cpu.velocities());
        cpu_pull.push((r, cpu.positions().to_vec()));
    }

    for precision in [Precision::F64, Precision::F32] {
        if precision == Precision::F64 && !gpu.adapter.shader_f64 {
            continue;
        }
        let options = BatchOptions {
            precision,
            ..Default::default()
        };
        let outcome = gpu::run_batch(&gpu, std::slice::from_ref(&sim), None, &options).unwrap();
        assert!(outcome[0].status.is_ok(), "{:?}", outcome[0].status);
        let track = outcome[0].track_m.as_ref().unwrap();
        let force = outcome[0].pin_force_n.as_ref().unwrap();
        assert_eq!(track.len(), samples * CARRIED_MARKERS);
        assert_eq!(force.len(), samples);
        let (mut to_reference, mut to_scheme) = (0.0f64, 0.0f64);
        let (mut pull_to_reference, mut pull_to_scheme) = (0.0f64, 0.0f64);
        for (i, (frame, f)) in track.chunks(CARRIED_MARKERS).zip(force).enumerate() {
            let (r, q) = &cpu_pull[i];
            pull_to_scheme = pull_to_scheme.max((f[0] - r[0]).hypot(f[1] - r[1]));
            let pull = reference.pull_n(sim.frame_time_s(i));
            pull_to_reference = pull_to_reference.max((f[0] + pull[0]).hypot(f[1] + pull[1]));
            if (i + 1) % PULL_SAMPLES_PER_OUTPUT != 0 {
                continue;
            }
            let k = (i + 1) / PULL_SAMPLES_PER_OUTPUT;
            for (j, p) in frame.iter().enumerate() {
                let r = reference.markers_m[k][j];
                to_reference = to_reference.max((p[0] - r[0]).hypot(p[1] - r[1]));
                let s = tether.params.length_m * j as f64 / (CARRIED_MARKERS - 1) as f64;
                let c = model.point(q, s);
                to_scheme = to_scheme.max((p[0] - c[0]).hypot(p[1] - c[1]));
            }
        }
        eprintln!(
            "{}: markers {to_scheme:.1e} m from the CPU scheme, {to_reference:.1e} m from the reference; pull {pull_to_scheme:.1e} N from the CPU scheme's state, {pull_to_reference:.1e} N from the reference",
            precision.name()
        );
        match precision {
            Precision::F64 => {
                assert!(to_scheme < 1e-12, "{to_scheme:e}");
                assert!(to_reference < 1e-7, "{to_reference:e}");
                assert!(pull_to_scheme < 1e-9, "{pull_to_scheme:e}");
                assert!(pull_to_reference < 1e-6, "{pull_to_reference:e}");
            }
            Precision::F32 => {
                assert!(to_reference < 5e-6, "{to_reference:e}");
                assert!(pull_to_reference < 5e-5, "{pull_to_reference:e}");
            }
        }
    }
}

/// `--backend gpu` carries the tether on the GPU engine, one run and a
/// sweep (the last output interval cut short, 0.3051 s, so that its pull
/// samples fall between the GPU's steps: their forces are the steps'
/// ends'), and the tables are the CPU's to the engine's accuracy (f64):
/// markers within 1e-5 m (the bound), pulls and torques within
/// 1e-5 N and N m (the largest difference of any column measured
/// 2.6e-6).
#[test]
fn the_command_line_carries_the_tether_on_the_gpu() {
    if common::open_gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "simulate",
            "--scenario",
            "arm",
            "--tether",
            "--elements",
            "6",
            "--drag-coefficient",
            "1.2",
            "--duration",
            "0.3051",
            "--out",
            path_str(&out),
        ];
        args.extend(extra);
        let done = tether_sweep(&args);
        assert!(done.status.success(), "{extra:?}: {}", stderr(&done));
        out
    };
    let gpu = ["--backend", "gpu", "--precision", "f64"];
    let (cpu_run, gpu_run) = (run("cpu.parquet", &[]), run("gpu.parquet", &gpu));
    let mut columns: Vec<String> = [
        "torque1_n_m",
        "torque2_n_m",
        "tether_pull_x_n",
        "tether_pull_y_n",
    ]
    .map(String::from)
    .to_vec();
    for j in 0..CARRIED_MARKERS {
        columns.push(format!("tether_marker{j}_x_m"));
        columns.push(format!("tether_marker{j}_y_m"));
    }
    let mut largest = 0.0f64;
    for name in &columns {
        let (c, g) = (column(&cpu_run, name), column(&gpu_run, name));
        assert_eq!(c.len(), 32, "{name}");
        for (a, b) in c.iter().zip(&g) {
            largest = largest.max((a - b).abs());
            assert!((a - b).abs() < 1e-5, "{name}: CPU {a}, GPU {b}");
        }
    }
    eprintln!("largest difference, CPU against GPU: {largest:.1e}");
    // Each run's record says what ran the tether, and a tolerance only
    // where the reference solver did.
    let carried = |path: &std::path::Path| -> serde_json::Value {
        let metadata = tether_sweep::io::track::read_parquet_metadata(path).unwrap();
        serde_json::from_str(&metadata["tether_sweep.carried_tether"]).unwrap()
    };
    let (on_cpu, on_gpu) = (carried(&cpu_run), carried(&gpu_run));
    assert!(on_gpu["solver"].as_str().unwrap().contains("GPU engine"));
    assert!(on_gpu["tolerance_m"].is_null(), "{on_gpu}");
    assert!(on_cpu["tolerance_m"].as_f64().is_some(), "{on_cpu}");

    let axis = [
        "--axis",
        "drag_coefficient=0,1.2",
        "--axis",
        "kp_per_s2=50,100",
    ];
    let cpu_sweep = run("cpu_sweep.parquet", &axis);
    let gpu_sweep = run("gpu_sweep.parquet", &[&axis[..], &gpu[..]].concat());
    for name in [
        "peak_pull_n",
        "max_tip_swing_m",
        "final_tip_swing_m",
        "peak_torque_n_m",
    ] {
        let (c, g) = (column(&cpu_sweep, name), column(&gpu_sweep, name));
        assert_eq!(c.len(), 4, "{name}");
        for (a, b) in c.iter().zip(&g) {
            assert!((a - b).abs() < 1e-5, "{name}: CPU {a}, GPU {b}");
        }
    }
}

/// Any planar path on the GPU engine as on the CPU: the curved path of
/// the momentum test (accelerations over 10 m/s², times on a 0.1 s grid)
/// followed by the GPU's shader from its grid form (`PathMotion::on_grid`,
/// the spline's cubics exactly), against the CPU's fixed-step solver on
/// the same spline, step and start: in f64 the markers agree to round-off
/// (measured 1.8e-15 m semi-implicit, 5.7e-15 explicit), in f32 within
/// 2e-5 m (5.5e-7, 1.1e-6). Past the table's last time (0.4 s) the pin
/// goes on in a straight line on both. The pin's force, against the
/// reference solver's (1e-10 m): within 5e-3 N for the semi-implicit
/// scheme (measured 1.9e-3 N in both precisions; the tether weighs 0.22 N:
/// the scheme takes the damping at the step's end, a first-order error
/// that the CPU's exact reaction at that scheme's state shares, 1.1e-3 N)
/// and 2e-4 N for the explicit one (5.5e-5 f64, 8.9e-5 f32).
#[test]
fn a_curved_pin_path_on_the_gpu_is_the_cpus() {
    use tether_sweep::gpu::{self, BatchOptions, Precision};
    use tether_sweep::scheme::FixedStepScheme;
    use tether_sweep::solver::FixedStepSolver;
    use tether_sweep::workflow::bodies::path_simulation;
    let Some(gpu) = common::open_gpu() else {
        return;
    };
    let path = curved_path();
    let tether = CarriedTether {
        params: params(2000.0, 1.2),
        tolerance_m: 1e-9,
    };
    let outputs: Vec<f64> = (0..=45).map(|k| k as f64 * 0.01).collect();
    let model = Tether::new(tether.params.clone()).unwrap();
    let motion = Arc::new(path.clone());
    for (scheme, newtons) in [
        (FixedStepScheme::SemiImplicit, 5e-3),
        (FixedStepScheme::Explicit, 2e-4),
    ] {
        let sim = path_simulation(path.clone(), &tether, &outputs, scheme).unwrap();
        let start = (sim.initial_q.clone(), sim.initial_v.clone());
        let dynamics = TetherDynamics::new(model.clone(), motion.clone()).unwrap();
        let mut cpu = FixedStepSolver::new(
            scheme,
            dynamics,
            start.0.clone(),
            start.1.clone(),
            0.0,
            sim.step_s,
        );
        let options = ReferenceOptions {
            tolerance_m: 1e-10,
            ..ReferenceOptions::DEFAULT
        };
        let dynamics = TetherDynamics::new(model.clone(), motion.clone()).unwrap();
        let mut reference = ReferenceSolver::new(dynamics, start.0, start.1, 0.0, options);
        let mut expected = Vec::new();
        for i in 0..sim.frames.len() {
            reference.advance_to(sim.frame_time_s(i)).unwrap();
            cpu.advance_to(sim.frame_time_s(i)).unwrap();
            let markers: Vec<[f64; 2]> = sim
                .marker_arc_lengths_m
                .iter()
                .map(|&s| model.point(cpu.positions(), s))
                .collect();
            expected.push((markers, reference.pin_reaction()));
        }
        let mut precisions = vec![(Precision::F32, 2e-5)];
        if gpu.adapter.shader_f64 {
            precisions.push((Precision::F64, 1e-12));
        }
        for (precision, metres) in precisions {
            let options = BatchOptions {
                precision,
                ..Default::default()
            };
            let outcome = gpu::run_batch(&gpu, std::slice::from_ref(&sim), None, &options).unwrap();
            assert!(outcome[0].status.is_ok(), "{:?}", outcome[0].status);
            let track = outcome[0].track_m.as_ref().unwrap();
            let force = outcome[0].pin_force_n.as_ref().unwrap();
            let (mut markers_off, mut force_off) = (0.0f64, 0.0f64);
            for (i, (markers, truth)) in expected.iter().enumerate() {
                let frame = &track[i * CARRIED_MARKERS..(i + 1) * CARRIED_MARKERS];
                for (p, c) in frame.iter().zip(markers) {
                    markers_off = markers_off.max((p[0] - c[0]).hypot(p[1] - c[1]));
                }
                let f = force[i];
                force_off = force_off.max((f[0] - truth[0]).hypot(f[1] - truth[1]));
            }
            eprintln!(
                "{scheme:?} {}: markers {markers_off:.1e} m from the CPU scheme's, pin force {force_off:.1e} N from the reference's",
                precision.name()
            );
            assert!(
                markers_off < metres,
                "{scheme:?} {precision:?}: {markers_off:e} m"
            );
            assert!(
                force_off < newtons,
                "{scheme:?} {precision:?}: {force_off:e} N"
            );
        }
    }
}
