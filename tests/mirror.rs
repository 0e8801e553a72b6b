//! The CPU mirror of the step shader (`gpu::mirror`), without a GPU: in f64
//! it must reproduce the CPU solver of each fixed-step scheme (the same
//! scheme in another formulation), and in f32 it must hold a long damped
//! drop to 0.1 mm, which the plain f32 accumulation of the displacement did
//! not.

mod common;

use common::{cpu_on_the_same_step, largest_distance, params};
use tether_sweep::gpu::batch::chunk_data;
use tether_sweep::gpu::{GpuOutcome, GpuSimulation, Precision, mirror};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind};
use tether_sweep::solver::FixedStepScheme;

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
