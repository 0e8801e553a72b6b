//! The CPU mirror of the step shader (`gpu::mirror`), without a GPU: in f64
//! it must reproduce the CPU solver of each fixed-step scheme (the same
//! scheme in another formulation), and in f32 it must hold a long damped
//! drop to 0.1 mm, which the plain f32 accumulation of the displacement did
//! not.

mod common;

use common::{adaptive_options, cpu_on_the_same_step, landings, largest_distance, params};
use tether_sweep::gpu::adaptive::AdaptiveOutcome;
use tether_sweep::gpu::batch::chunk_data;
use tether_sweep::gpu::mirror::adaptive::run_adaptive;
use tether_sweep::gpu::{GpuOutcome, GpuSimulation, Precision, mirror};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::status::RunStatus;

fn recorded(scenario: &Scenario, p: &TetherParams, scheme: FixedStepScheme) -> GpuSimulation {
    let mut sim = gpu_simulation(scenario, p, scheme, None, &StepCache::default()).unwrap();
    sim.record_track = true;
    sim
}

#[test]
fn f64_mirror_matches_the_cpu_fixed_step_solvers() {
    let cases = [
        (
            Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4),
            params(4, 2000.0, 0.8, 0.0),
        ),
        (
            Scenario::new(ScenarioKind::Swingup, 0.6).with_duration_s(0.6),
            params(4, 2000.0, 0.8, 0.021),
        ),
    ];
    let schemes = [FixedStepScheme::Explicit, FixedStepScheme::SemiImplicit];
    for ((scenario, p), scheme) in cases
        .iter()
        .flat_map(|c| schemes.iter().map(move |s| (c, *s)))
    {
        let sim = recorded(scenario, p, scheme);
        let mirror =
            &mirror::mirror_batch(std::slice::from_ref(&sim), None, Precision::F64).unwrap()[0];
        let cpu = cpu_on_the_same_step(scenario, &sim);
        let markers = sim.marker_arc_lengths_m.len();
        // The CPU track starts with frame 0, the engine's with frame 1.
        let distance = largest_distance(
            mirror.track_m.as_ref().unwrap(),
            &cpu.track.positions_m[markers..],
        );
        eprintln!("{:?} {scheme:?}: {distance:.1e} m", scenario.kind());
        assert!(
            distance < 1e-11,
            "{:?} {scheme:?}: {distance:e} m",
            scenario.kind()
        );
        if let Some(objective) = cpu.swingup {
            let relative = (mirror.swingup_min_m / objective.j_a_min - 1.0).abs();
            assert!(relative < 1e-12, "{scheme:?} J_a,min: {relative:e}");
            assert_eq!(mirror.swingup_time_s, objective.t_at_min_s);
        }
    }
}

/// `sim` on the mirror in f64 and in f32, and the largest marker distance
/// between the two tracks.
fn f64_and_f32(sim: &GpuSimulation) -> (GpuOutcome, f64) {
    let run = |precision| {
        mirror::mirror_batch(std::slice::from_ref(sim), None, precision)
            .unwrap()
            .remove(0)
    };
    let (exact, single) = (run(Precision::F64), run(Precision::F32));
    let distance = largest_distance(
        exact.track_m.as_ref().unwrap(),
        single.track_m.as_ref().unwrap(),
    );
    (exact, distance)
}

#[test]
fn f32_holds_a_damped_two_second_drop_to_a_hundredth_of_a_millimetre() {
    // n = 20, D = 1000: 240,000 steps. Adding each step's increment to the
    // displacement in f32 drifted by 3.7e-4 m over these 2 s; adding it to
    // a drift that is folded in every STEPS_PER_FOLD steps holds 4e-6 m.
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6);
    let sim = recorded(
        &scenario,
        &params(20, 1000.0, 0.0, 0.0),
        FixedStepScheme::Explicit,
    );
    let (exact, folded) = f64_and_f32(&sim);
    assert!(folded < 1e-5, "f32 with folds: {folded:e} m");

    // The same run folding every step, i.e. accumulating straight into the
    // displacement: the case must be one that shows the defect.
    let mut data = chunk_data(&[&sim]).unwrap();
    data.controls[0].steps_per_fold = 1;
    let unfolded = mirror::run_prepared(&sim, &data, None, Precision::F32);
    let distance = largest_distance(
        exact.track_m.as_ref().unwrap(),
        unfolded.track_m.as_ref().unwrap(),
    );
    assert!(distance > 1e-4, "f32 without folds: {distance:e} m");
}

#[test]
fn f32_semi_implicit_holds_a_stiff_damped_drop_to_a_hundredth_of_a_millimetre() {
    // n = 40, D = 5000: each of the 67,150 steps factors M + h/2 C_D in f32
    // (4×4 pivots inverted by cofactors), its damping part far above its
    // mass part on the stiffest axial modes.
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6);
    let sim = recorded(
        &scenario,
        &params(40, 5000.0, 0.8, 0.0),
        FixedStepScheme::SemiImplicit,
    );
    let (_, distance) = f64_and_f32(&sim);
    eprintln!("{} steps: f32 {distance:.1e} m from f64", sim.total_steps);
    assert!(distance < 1e-5, "f32: {distance:e} m");
}

/// `scenario` for `p` on the adaptive mirror in `precision` at
/// `tolerance_m`, its track recorded.
fn adaptive(
    scenario: &Scenario,
    p: &TetherParams,
    tolerance_m: f64,
    precision: Precision,
) -> AdaptiveOutcome {
    let sim = recorded(scenario, p, FixedStepScheme::SemiImplicit);
    let data = chunk_data(&[&sim]).unwrap();
    run_adaptive(
        &sim,
        &data,
        &landings(scenario),
        &adaptive_options(tolerance_m),
        None,
        precision,
    )
    .unwrap()
}

/// The GPU's adaptive implicit scheme (its arithmetic, on the mirror)
/// against its CPU twin, the reference solver, at the same tolerance: the
/// same scheme in the engine's formulation (displacements, the tangent of
/// tangent.wgsl, block factors with separate lower blocks). Measured: the
/// same steps, rejections, Newton iterations and factorizations, and
/// tracks within 2e-12 m.
#[test]
fn f64_adaptive_mirror_matches_the_reference_solver() {
    let tolerance_m = 1e-9;
    let cases = [
        (
            Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4),
            params(6, 2000.0, 0.8, 0.0),
        ),
        // Undamped: the ringing axial modes reject steps and refresh the
        // iteration matrix hundreds of times.
        (
            Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.2),
            params(10, 0.0, 0.0, 0.0),
        ),
        (
            Scenario::new(ScenarioKind::Swingup, 0.6).with_duration_s(0.6),
            params(4, 2000.0, 0.8, 0.021),
        ),
    ];
    for (scenario, p) in &cases {
        let mirror = adaptive(scenario, p, tolerance_m, Precision::F64);
        assert_eq!(mirror.status, RunStatus::Ok);
        let cpu = simulate(scenario, p, &SolverSettings::reference_at(tolerance_m)).unwrap();
        let SolverReport::Reference(stats) = cpu.report else {
            panic!("not the reference solver: {:?}", cpu.report)
        };
        let markers = scenario.marker_arc_lengths_m.len();
        let distance = largest_distance(
            mirror.track_m.as_ref().unwrap(),
            &cpu.track.positions_m[markers..],
        );
        let kind = scenario.kind();
        eprintln!(
            "{kind:?} n = {}, D = {}: {distance:.1e} m, {} steps",
            p.elements, p.damping_pa_s, mirror.stats.steps
        );
        assert!(
            distance < 1e-8,
            "{kind:?}: the adaptive mirror is {distance:e} m from the reference solver"
        );
        // The same decisions, step for step: a slip in the scheme's
        // arithmetic or control shows as another count long before it
        // moves a track by the tolerance.
        let m = &mirror.stats;
        assert_eq!(
            (
                m.steps,
                m.rejected_steps,
                m.newton_iterations,
                m.factorizations
            ),
            (
                stats.steps,
                stats.rejected_steps,
                stats.newton_iterations,
                stats.factorizations
            ),
            "{kind:?}: steps, rejections, Newton iterations, factorizations"
        );
        if let Some(objective) = cpu.swingup {
            let relative = (mirror.swingup_min_m / objective.j_a_min - 1.0).abs();
            assert!(relative < 1e-8, "J_a,min: {relative:e}");
            assert!((mirror.swingup_time_s - objective.t_at_min_s).abs() < 1e-12);
        }
    }
}

/// In f32 the scheme's own rounding sets a floor under the tolerance:
/// below it, Newton's corrections and the error estimate read rounding
/// noise, steps are rejected and the step count grows. At its floor it
/// holds the track as f64 does at that tolerance, in about f64's steps
/// since the strain is formed from the displacement and the drift apart
/// (this drop: 1.07× f64's attempts; 1.68× summed, `examples/f32_floor`).
#[test]
fn f32_adaptive_mirror_holds_its_tolerance_floor() {
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4);
    let p = params(20, 2000.0, 0.8, 0.0);
    let tolerance_m = 1e-7;
    let exact = adaptive(&scenario, &p, 1e-10, Precision::F64);
    let double = adaptive(&scenario, &p, tolerance_m, Precision::F64);
    let single = adaptive(&scenario, &p, tolerance_m, Precision::F32);
    assert_eq!(single.status, RunStatus::Ok);
    let track = |o: &AdaptiveOutcome| o.track_m.clone().unwrap();
    let (single_error, double_error) = (
        largest_distance(&track(&single), &track(&exact)),
        largest_distance(&track(&double), &track(&exact)),
    );
    eprintln!(
        "f32 {single_error:.1e} m in {} steps, f64 {double_error:.1e} m in {} steps",
        single.stats.steps, double.stats.steps
    );
    assert!(
        single_error < 1e-4 && single_error < 3.0 * double_error.max(tolerance_m),
        "f32 at {tolerance_m:e} m: {single_error:e} m off (f64 {double_error:e} m)"
    );
    assert!(
        10 * single.stats.steps < 12 * double.stats.steps,
        "f32 took {} steps against f64's {}",
        single.stats.steps,
        double.stats.steps
    );
}
