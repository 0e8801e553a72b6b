//! The adaptive implicit stage (shaders/step_adaptive.wgsl) on whatever
//! adapter wgpu finds, lavapipe in CI, against its CPU mirror
//! (src/gpu/mirror/adaptive.rs), which tests/mirror.rs holds to the
//! reference solver step for step. Like tests/gpu.rs these fail without an
//! adapter unless TETHER_SWEEP_SKIP_GPU_TESTS=1 says to skip them.

mod common;

use common::{adaptive_options, landings, largest_distance, open_gpu as open, params};

use tether_sweep::engine::{Engine, EngineKind};
use tether_sweep::gpu::adaptive::{
    AdaptiveBatch, AdaptiveOptions, AdaptiveOutcome, AdaptiveRun, Landings, run_adaptive_batch,
};
use tether_sweep::gpu::batch::chunk_data;
use tether_sweep::gpu::mirror::adaptive::run_adaptive;
use tether_sweep::gpu::shape::AdaptiveShape;
use tether_sweep::gpu::{GpuError, GpuSimulation, Precision};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverReport, SolverSettings, simulate};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::status::RunStatus;

/// A batch of different n, D, C_D and experiments packed together: a
/// damped drop, an undamped one whose axial modes ring (hundreds of
/// rejections and refactorizations), a swing-up with its 1-ms J_a
/// samples, and a coarser drop with little damping.
fn mixed() -> Vec<(Scenario, TetherParams)> {
    let drop = |s| Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(s);
    vec![
        (drop(0.4), params(6, 2000.0, 0.8, 0.0)),
        (drop(0.2), params(10, 0.0, 0.0, 0.0)),
        (
            Scenario::new(ScenarioKind::Swingup, 0.6).with_duration_s(0.32),
            params(4, 2000.0, 0.8, 0.021),
        ),
        (drop(0.28), params(3, 300.0, 0.6, 0.0)),
    ]
}

struct Prepared {
    sims: Vec<GpuSimulation>,
    landings: Vec<Landings>,
    options: Vec<AdaptiveOptions>,
}

fn prepare(cases: &[(Scenario, TetherParams)], tolerance_m: f64) -> Prepared {
    let sims: Vec<GpuSimulation> = cases
        .iter()
        .map(|(scenario, p)| {
            let mut sim = gpu_simulation(
                scenario,
                p,
                FixedStepScheme::SemiImplicit,
                None,
                &StepCache::default(),
            )
            .unwrap();
            sim.record_track = true;
            sim
        })
        .collect();
    Prepared {
        landings: cases.iter().map(|(s, _)| landings(s)).collect(),
        options: vec![adaptive_options(tolerance_m); cases.len()],
        sims,
    }
}

fn on_gpu(
    gpu: &tether_sweep::gpu::Gpu,
    prepared: &Prepared,
    run: &AdaptiveRun,
) -> Result<Vec<AdaptiveOutcome>, GpuError> {
    run_adaptive_batch(
        gpu,
        &AdaptiveBatch {
            sims: &prepared.sims,
            landings: &prepared.landings,
            options: &prepared.options,
            measured: None,
        },
        run,
    )
}

fn on_mirror(prepared: &Prepared, precision: Precision) -> Vec<AdaptiveOutcome> {
    prepared
        .sims
        .iter()
        .zip(&prepared.landings)
        .zip(&prepared.options)
        .map(|((sim, l), o)| {
            let data = chunk_data(&[sim]).unwrap();
            run_adaptive(sim, &data, l, o, None, precision).unwrap()
        })
        .collect()
}

fn counts(o: &AdaptiveOutcome) -> (u64, u64, u64, u64) {
    let s = &o.stats;
    (
        s.steps,
        s.rejected_steps,
        s.newton_iterations,
        s.factorizations,
    )
}

fn track(o: &AdaptiveOutcome) -> &[[f64; 2]] {
    o.track_m.as_deref().expect("a recorded track")
}

/// f64 on the adapter against the f64 mirror: the same decisions, step for
/// step, and the same tracks to rounding; and so, through the mirror, the
/// reference solver's tracks within the tolerance.
#[test]
fn f64_adaptive_stage_matches_its_mirror_and_the_reference_solver() {
    let Some(gpu) = open() else { return };
    let tolerance_m = 1e-9;
    let cases = mixed();
    let prepared = prepare(&cases, tolerance_m);
    let gpu_runs = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap();
    let mirror_runs = on_mirror(&prepared, Precision::F64);
    for (((scenario, p), g), m) in cases.iter().zip(&gpu_runs).zip(&mirror_runs) {
        let what = format!(
            "{:?} n = {}, D = {}",
            scenario.kind(),
            p.elements,
            p.damping_pa_s
        );
        assert_eq!(g.status, RunStatus::Ok, "{what}");
        let distance = largest_distance(track(g), track(m));
        eprintln!(
            "{what}: adapter {distance:.1e} m from the mirror; counts {:?}",
            counts(g)
        );
        assert_eq!(
            counts(g),
            counts(m),
            "{what}: steps, rejections, Newton, factorizations"
        );
        assert!(distance < 1e-12, "{what}: {distance:e} m from the mirror");
        let cpu = simulate(scenario, p, &SolverSettings::reference_at(tolerance_m)).unwrap();
        let SolverReport::Reference(_) = cpu.report else {
            panic!("not the reference solver")
        };
        let markers = scenario.marker_arc_lengths_m.len();
        let reference = largest_distance(track(g), &cpu.track.positions_m[markers..]);
        assert!(
            reference < 1e-8,
            "{what}: {reference:e} m from the reference solver"
        );
        if let Some(objective) = cpu.swingup {
            let relative = (g.swingup_min_m / objective.j_a_min - 1.0).abs();
            assert!(relative < 1e-8, "{what}: J_a,min {relative:e}");
        }
    }
}

/// f32 on the adapter at its tolerance floor (1e-7 m, tests/mirror.rs):
/// within 1e-4 m of the f64 mirror. Its step decisions may part from the
/// f32 mirror's where a rounding tips one, so the tracks are compared,
/// not the counts.
#[test]
fn f32_adaptive_stage_holds_its_tolerance_floor() {
    let Some(gpu) = open() else { return };
    let cases = mixed();
    let prepared = prepare(&cases, 1e-7);
    let run = AdaptiveRun {
        precision: Precision::F32,
        ..Default::default()
    };
    let gpu_runs = on_gpu(&gpu, &prepared, &run).unwrap();
    let exact = on_mirror(&prepare(&cases, 1e-10), Precision::F64);
    for (((scenario, p), g), e) in cases.iter().zip(&gpu_runs).zip(&exact) {
        assert_eq!(g.status, RunStatus::Ok);
        let distance = largest_distance(track(g), track(e));
        eprintln!(
            "{:?} n = {}: f32 {distance:.1e} m from f64, {} steps",
            scenario.kind(),
            p.elements,
            g.stats.steps
        );
        assert!(distance < 1e-4, "{:?}: {distance:e} m", scenario.kind());
    }
}

/// Abandoning in the adaptive stage (observe_landing): drops bounded at
/// half their J_e stop at the landing where every lane's sum passes the
/// bound, as the f64 mirror does, step for step, with fewer steps and a
/// partial sum between the bound and the whole; one bounded just under
/// its whole J_e, and one without a bound, are the unbounded runs.
#[test]
fn the_adaptive_stage_abandons_where_its_mirror_does() {
    let Some(gpu) = open() else { return };
    let drop = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4);
    let truth = simulate(
        &drop,
        &params(6, 1500.0, 0.7, 0.0),
        &SolverSettings::default(),
    )
    .unwrap()
    .track;
    let measured = &truth.positions_m[truth.markers()..];
    let cases: Vec<_> = [
        (4, 0.0, 0.6),
        (10, 3000.0, 0.9),
        (4, 1000.0, 0.8),
        (3, 300.0, 0.6),
    ]
    .map(|(n, d, cd)| (drop.clone(), params(n, d, cd, 0.0)))
    .into();
    let mut prepared = prepare(&cases, 1e-7);
    for sim in &mut prepared.sims {
        sim.compare_measured = true;
    }
    let run = |prepared: &Prepared| {
        run_adaptive_batch(
            &gpu,
            &AdaptiveBatch {
                sims: &prepared.sims,
                landings: &prepared.landings,
                options: &prepared.options,
                measured: Some(measured),
            },
            &AdaptiveRun::default(),
        )
        .unwrap()
    };
    let whole = run(&prepared);
    let bounds = |i: usize, whole_m2: f64| match i {
        0 | 2 => Some(0.5 * whole_m2),
        1 => Some(whole_m2 * (1.0 - 1e-4)),
        _ => None,
    };
    for (i, (sim, w)) in prepared.sims.iter_mut().zip(&whole).enumerate() {
        sim.abandon_above_m2 = bounds(i, w.identification_error_m2);
    }
    let bounded = run(&prepared);
    for (i, ((sim, l), (w, g))) in prepared
        .sims
        .iter()
        .zip(&prepared.landings)
        .zip(whole.iter().zip(&bounded))
        .enumerate()
    {
        let data = chunk_data(&[sim]).unwrap();
        let m = run_adaptive(
            sim,
            &data,
            l,
            &prepared.options[i],
            Some(measured),
            Precision::F64,
        )
        .unwrap();
        eprintln!(
            "#{i}: {:?} after {} of {} steps",
            g.status, g.stats.steps, w.stats.steps
        );
        assert_eq!((&g.status, counts(g)), (&m.status, counts(&m)), "#{i}");
        match (i, &g.status) {
            (0 | 2, RunStatus::Abandoned { time_s }) => {
                let partial = g.identification_error_m2;
                let bound = sim.abandon_above_m2.unwrap();
                assert!(
                    bound < partial && partial < w.identification_error_m2,
                    "#{i}"
                );
                assert!(g.stats.steps < w.stats.steps, "#{i}");
                assert!(
                    l.frame_times_s[..l.frame_times_s.len() - 1].contains(time_s),
                    "#{i}"
                );
                assert!(
                    (partial / m.identification_error_m2 - 1.0).abs() < 1e-9,
                    "#{i}"
                );
            }
            (1 | 3, RunStatus::Ok) => assert_eq!(g, w, "#{i}"),
            _ => panic!("#{i}: {:?}", g.status),
        }
    }
}

/// The shape (simulations per workgroup, lanes per simulation) changes
/// who does the work, not the arithmetic: one lane per simulation (both
/// ends of the factorization on it), eight lanes and four simulations a
/// workgroup, or a workgroup's 64 lanes for one simulation (a hardware
/// GPU's shape for n > 32), give the same numbers.
#[test]
fn the_shape_changes_nothing() {
    let Some(gpu) = open() else { return };
    let prepared = prepare(&mixed(), 1e-8);
    let runs: Vec<Vec<AdaptiveOutcome>> = [
        AdaptiveShape { sims: 1, lanes: 1 },
        AdaptiveShape { sims: 4, lanes: 8 },
        AdaptiveShape { sims: 3, lanes: 2 },
        AdaptiveShape { sims: 1, lanes: 64 },
    ]
    .into_iter()
    .map(|shape| {
        let run = AdaptiveRun {
            shape: Some(shape),
            ..Default::default()
        };
        on_gpu(&gpu, &prepared, &run).unwrap()
    })
    .collect();
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
    assert_eq!(runs[0], runs[3]);
}

/// Without a shape asked for, a batch runs in the lanes the cost model
/// chooses at the adapter's rates: one workgroup's worth with the most
/// lanes, a batch that fills the device with fewer, a device wide enough
/// for all of them with the most again; and on a CPU emulation, which runs
/// a workgroup on one thread a subgroup at a time, with no more lanes than
/// a subgroup and never in fewer workgroups than it has threads where the
/// most lanes give that many.
#[test]
fn a_batch_runs_in_the_lanes_the_model_chooses() {
    use tether_sweep::gpu::cost::{AdaptiveRates, GpuRates};
    let Some(gpu) = open() else { return };
    let most = AdaptiveShape::most_for(&gpu, 50);
    if gpu.adapter.hardware {
        assert_eq!(most, AdaptiveShape::for_elements(50));
    } else {
        let subgroup = gpu.adapter.subgroup_width;
        assert_eq!(
            most.lanes,
            AdaptiveShape::for_elements(50).lanes.min(subgroup)
        );
    }
    assert_eq!(
        AdaptiveShape::for_batch(&gpu, Precision::F64, &[50, 10]).unwrap(),
        most
    );
    let narrow = AdaptiveRates {
        flops: GpuRates {
            invocation_gflops: 0.36,
            device_gflops: 5000.0,
        },
        barrier_lone_s: 1e-7,
        barrier_filled_s: 1e-9,
        subgroup_width: 32,
        precision: Precision::F64,
    };
    let wide = AdaptiveRates {
        flops: GpuRates {
            device_gflops: 5e6,
            ..narrow.flops
        },
        barrier_filled_s: 1e-12,
        ..narrow
    };
    let many = vec![50; 32_768];
    gpu.set_adaptive_rates(Precision::F64, narrow);
    let filled = AdaptiveShape::for_batch(&gpu, Precision::F64, &many).unwrap();
    assert!(filled.lanes < most.lanes, "{filled:?}");
    assert_eq!(filled.sims * filled.lanes, most.sims * most.lanes);
    gpu.set_adaptive_rates(Precision::F64, wide);
    assert_eq!(
        AdaptiveShape::for_batch(&gpu, Precision::F64, &many).unwrap(),
        most
    );
    // Three workgroups' worth at the most lanes on a device the model
    // finds filled: an emulation keeps one per thread, up to the three.
    gpu.set_adaptive_rates(
        Precision::F64,
        AdaptiveRates {
            barrier_filled_s: 1.0,
            ..narrow
        },
    );
    let few = vec![50; 3 * most.sims as usize];
    let shape = AdaptiveShape::for_batch(&gpu, Precision::F64, &few).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let workgroups = few.len().div_ceil(shape.sims as usize);
    if gpu.adapter.hardware {
        assert_eq!(
            shape.lanes,
            tether_sweep::gpu::layout::MIN_ADAPTIVE_LANES,
            "{shape:?}"
        );
    } else {
        assert!(
            workgroups >= threads.min(3),
            "{shape:?}: {workgroups} workgroups"
        );
        assert!(
            shape.lanes == tether_sweep::gpu::layout::MIN_ADAPTIVE_LANES
                || workgroups < 2 * threads,
            "{shape:?}"
        );
    }
}

/// A simulation whose Newton iteration cannot converge (a non-finite
/// velocity stands for any iterate that goes non-finite) halves its step
/// until it falls below the smallest and ends as NewtonFailed, as the
/// reference solver's would, packed with stable ones that end exactly as
/// they do without it.
#[test]
fn a_failing_simulation_fails_alone() {
    let Some(gpu) = open() else { return };
    let cases = mixed();
    let mut prepared = prepare(&cases, 1e-9);
    let alone = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap();
    prepared.sims[1].initial_v[9] = f64::NAN;
    let packed = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap();
    let RunStatus::NewtonFailed { time_s, step_s } = packed[1].status else {
        panic!("expected a Newton failure, got {:?}", packed[1].status)
    };
    assert!(step_s < 1e-12 && time_s == 0.0, "{time_s} s, {step_s:e} s");
    assert_eq!(packed[1].stats.steps, 0);
    let mirror = on_mirror(&prepared, Precision::F64);
    assert_eq!(packed[1].status, mirror[1].status);
    assert_eq!(counts(&packed[1]), counts(&mirror[1]));
    for i in [0, 2, 3] {
        assert_eq!(
            packed[i], alone[i],
            "simulation {i} changed by its neighbour"
        );
    }
}

/// Every run above spans many dispatches (each makes a few dozen
/// attempts). One dispatch per submission with no split must be caught
/// on a driver with a loop limit, not return a shortened run.
#[test]
fn an_unsplit_dispatch_is_caught_on_lavapipe() {
    let Some(gpu) = open() else { return };
    let prepared = prepare(&mixed(), 1e-9);
    let split = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap();
    let unsplit = on_gpu(
        &gpu,
        &prepared,
        &AdaptiveRun {
            loop_budget: u64::MAX / 2,
            ..Default::default()
        },
    );
    if gpu.adapter.driver.to_lowercase().contains("llvmpipe") {
        match unsplit {
            Err(GpuError::Truncated { expected, got, .. }) => {
                eprintln!("an undivided dispatch stopped after {got} of {expected} attempts");
                assert!(got < expected);
            }
            other => panic!("an unsplit run on lavapipe must be caught: {other:?}"),
        }
    } else {
        assert_eq!(unsplit.unwrap(), split);
    }
}

/// `simulate --backend gpu --solver reference` as the engine runs it: the
/// GPU's scheme at the reference solver's settings, its report the GPU's
/// adaptive scheme's, its track within 1e-8 m of the CPU reference
/// solver's.
#[test]
fn the_engine_runs_the_reference_solver_on_the_gpu() {
    let Some(gpu) = open() else { return };
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4);
    let p = params(8, 2000.0, 0.8, 0.0);
    let settings = SolverSettings::reference_at(1e-9);
    let engine = Engine::new(
        EngineKind::GpuAdaptive {
            precision: Precision::F64,
            reference: settings.reference,
        },
        std::sync::Arc::new(gpu),
    );
    assert_eq!(
        engine.kind().solver(),
        tether_sweep::solver::SolverKind::Reference
    );
    assert_eq!(engine.tolerance_m(), Some(1e-9));
    let on_gpu = engine.simulate(&scenario, &p).unwrap();
    let on_cpu = simulate(&scenario, &p, &settings).unwrap();
    let SolverReport::GpuAdaptive { steps, .. } = on_gpu.report else {
        panic!("not the GPU's adaptive scheme: {:?}", on_gpu.report)
    };
    let SolverReport::Reference(stats) = on_cpu.report else {
        panic!("not the reference solver")
    };
    assert_eq!(steps, stats.steps);
    assert_eq!(on_gpu.track.times_s, on_cpu.track.times_s);
    let distance = largest_distance(&on_gpu.track.positions_m, &on_cpu.track.positions_m);
    assert!(distance < 1e-8, "{distance:e} m");
}

/// `identify --backend gpu --solver reference` on the shipped drop finds
/// the CPU's best: its first pass on the GPU, the candidates near the best
/// re-run on the CPU at the data's tolerance (their rows say so), its best
/// validated against the CPU's reference solver.
#[test]
fn identify_on_the_gpu_reference_finds_the_cpus_best() {
    if !common::gpu_tests_run("identify on the GPU's reference solver") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ts-gpu-reference-{}", std::process::id()));
    let grid = [
        "--elements",
        "40,50",
        "--damping",
        "1500:2500:500",
        "--drag-coefficient",
        "0.75:0.85:0.05",
        "--force",
    ];
    let run = |backend: &[&str], out: &str| {
        let out_dir = dir.join(out);
        let mut args = vec!["identify", "--out", common::path_str(&out_dir)];
        args.extend(backend);
        args.extend(grid);
        let output = common::tether_sweep(&args);
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "{text}\n{}",
            common::stderr(&output)
        );
        let best = text
            .lines()
            .find(|l| l.starts_with("best:"))
            .unwrap_or_else(|| panic!("a best line in {text}"))
            .to_string();
        (best, text, out_dir)
    };
    let (gpu_best, gpu_text, gpu_dir) = run(
        &[
            "--backend",
            "gpu",
            "--solver",
            "reference",
            "--precision",
            "f64",
        ],
        "gpu",
    );
    let (cpu_best, _, _) = run(&["--backend", "cpu"], "cpu");
    assert_eq!(gpu_best, cpu_best);
    // In f32 the first pass runs at f32's first-pass tolerance for n = 50
    // (1e-6 m): the confirmation re-runs more candidates, the best is the
    // same candidate (its J_e re-run at a data's tolerance chosen from a
    // σ that the looser first pass moved in its fourth digit).
    let (f32_best, f32_text, _) = run(&["--backend", "gpu", "--solver", "reference"], "gpu32");
    let candidate = |best: &str| best.split(": J_e").next().unwrap().to_string();
    assert_eq!(candidate(&f32_best), candidate(&cpu_best));
    assert!(
        f32_text.contains("a first pass at tolerance 1e-6 m"),
        "{f32_text}"
    );
    // The engine against the CPU's reference solver at the same settings:
    // the same scheme, so the markers agree far inside the tolerance.
    let validation = gpu_text
        .lines()
        .find(|l| l.starts_with("validation against the f64 reference solver"))
        .unwrap_or_else(|| panic!("a validation line in {gpu_text}"));
    let deviation: f64 = validation
        .split("max marker deviation ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("a marker deviation in {validation}"));
    assert!(deviation < 1e-5, "{validation}");
    let table = tether_sweep::io::track::read_table(&gpu_dir.join("results.parquet")).unwrap();
    let backends = common::text_column(&table, "backend");
    assert!(backends.iter().any(|b| b == "gpu") && backends.iter().any(|b| b == "cpu"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cancel flag set before the first submission stops the batch at once:
/// every simulation comes back cancelled, none as a result.
#[test]
fn a_set_cancel_flag_stops_the_batch() {
    let Some(gpu) = open() else { return };
    let prepared = prepare(&mixed(), 1e-9);
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let runs = on_gpu(
        &gpu,
        &prepared,
        &AdaptiveRun {
            cancel: Some(&cancel),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        runs.iter()
            .all(|r| r.status == RunStatus::Cancelled && r.track_m.is_none()),
        "{runs:?}"
    );
}

/// A batch split into chunks (one simulation each, or three and one) gives
/// each simulation what it gets in one chunk.
#[test]
fn chunks_change_nothing() {
    let Some(gpu) = open() else { return };
    let prepared = prepare(&mixed(), 1e-8);
    let whole = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap();
    for max_chunk in [1, 3] {
        let run = AdaptiveRun {
            max_chunk: Some(max_chunk),
            ..Default::default()
        };
        assert_eq!(
            on_gpu(&gpu, &prepared, &run).unwrap(),
            whole,
            "chunks of {max_chunk}"
        );
    }
}

/// `--backend auto` weighs the adaptive stage at rates measured on the
/// stage itself: physical ones (below twice the adapter's measured
/// multiply-add peak; a unit slip of 1e9, a miscounted chain or a noisy
/// difference of two timings would not be).
#[test]
fn the_cost_model_is_calibrated_on_the_adaptive_stage() {
    let Some(gpu) = open() else { return };
    let reference = tether_sweep::solver::ReferenceOptions {
        tolerance_m: 1e-7,
        ..Default::default()
    };
    let all = tether_sweep::engine::calibrate::calibrate_adaptive(
        &gpu,
        Precision::F32,
        &reference,
        (4, 12),
        8,
    )
    .unwrap();
    // The peak as the best of two measurements, before and after the
    // calibration: the tests beside this one share the cores, and a
    // neighbour only ever slows a measurement down (one run measured 77
    // GFLOP/s here where the adapter does 113).
    let mut peak = gpu.rates(Precision::F32).unwrap();
    peak.device_gflops = peak
        .device_gflops
        .max(tether_sweep::gpu::rates::measure_peak_gflops(&gpu, Precision::F32, 3).unwrap());
    eprintln!("adaptive stage: {all:?} (peak stage {peak:?})");
    assert!(
        all.barrier_lone_s >= 0.0 && all.barrier_filled_s >= 0.0,
        "{all:?}"
    );
    // A barrier costs less than a whole 0.004-s drop alone.
    assert!(all.barrier_lone_s < 1e-3, "{all:?}");
    let rates = all.flops;
    assert!(
        rates.invocation_gflops > 0.0 && rates.device_gflops > 0.0,
        "{rates:?}"
    );
    assert!(
        rates.invocation_gflops <= 2.0 * peak.device_gflops
            && rates.device_gflops <= 2.0 * peak.device_gflops,
        "{rates:?} beyond the peak {peak:?}"
    );
}

/// The whole weighing `--backend auto` does on a hardware adapter, here on
/// any: the GPU's fixed-step scheme, its adaptive scheme and the CPU each
/// get a finite estimate from the job's own counts and this adapter's
/// measured rates, f32 is weighed down to its floor, and below it leaves
/// the adaptive scheme out with the reason.
#[test]
fn auto_weighs_the_adaptive_scheme_beside_the_fixed_step_one_and_the_cpu() {
    use tether_sweep::engine::EngineOptions;
    use tether_sweep::engine::estimate::{CpuProbe, Estimates, Workload, counted_work};
    use tether_sweep::engine::request::EngineRequest;
    let Some(gpu) = open() else { return };
    let drop = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.12);
    let job: Vec<TetherParams> = [500.0, 1000.0, 2000.0, 4000.0]
        .map(|d| params(12, d, 0.8, 0.0))
        .to_vec();
    let workload = |scheme: FixedStepScheme| -> Result<Workload, String> {
        let steps = StepCache::default();
        let simulations = job
            .iter()
            .map(|p| {
                let sim = gpu_simulation(&drop, p, scheme, None, &steps).unwrap();
                (p.elements, sim.total_steps)
            })
            .collect();
        Ok(Workload {
            label: "4 drops".into(),
            simulations,
            stands_for: job.len(),
            chunk: usize::MAX,
        })
    };
    let probe = |settings: &SolverSettings| -> Result<CpuProbe, String> {
        let output = simulate(&drop, &job[1], settings).unwrap();
        let SolverReport::Reference(s) = output.report else {
            panic!("not the reference solver")
        };
        Ok(CpuProbe {
            seconds_per_element: 1e-3,
            counted: vec![counted_work(12, &s)],
        })
    };
    for (precision, tolerance_m, weighed) in [
        (Precision::F64, 1e-9, true),
        (Precision::F32, 1e-6, true),
        (Precision::F32, 1e-7, true),
        (Precision::F32, 5e-8, false),
    ] {
        let options = EngineOptions {
            precision,
            ..EngineOptions::default()
        };
        let request = EngineRequest {
            options: &options,
            cpu: SolverSettings::reference_at(tolerance_m),
            simulations: job.len(),
            scouting: false,
        };
        let work = workload(FixedStepScheme::SemiImplicit).unwrap();
        let estimates = Estimates::measure(&gpu, &request, work, (&workload, probe), true).unwrap();
        for e in &estimates.all {
            eprintln!(
                "{precision:?} {tolerance_m:e}: {} ≈ {:.4} s",
                e.how, e.seconds
            );
            assert!(e.seconds.is_finite() && e.seconds > 0.0, "{e:?}");
        }
        let adaptive = estimates
            .all
            .iter()
            .any(|e| matches!(e.engine, EngineKind::GpuAdaptive { .. }));
        assert_eq!(adaptive, weighed, "{:?}", estimates.left_out);
        if !weighed {
            let why = estimates.left_out.as_deref().unwrap_or_default();
            assert!(why.contains("--precision f64"), "{why}");
        }
        assert_eq!(estimates.all.len(), 2 + usize::from(weighed));
        let fastest = estimates.fastest().seconds;
        assert!(estimates.all.iter().all(|e| e.seconds >= fastest));
    }
}

/// `bench` counts the adaptive stage's flops from what each simulation
/// did: in f64 the stage takes the reference solver's steps, Newton
/// iterations and factorizations, so the bench's rate times its wall time
/// is the count from the CPU solver's own runs of the same batch.
#[test]
fn bench_counts_the_adaptive_stages_flops_from_its_work() {
    use tether_sweep::engine::estimate::counted_work;
    use tether_sweep::throughput::{self, Peaks, batch_parameters};
    let Some(gpu) = open() else { return };
    let gpu = std::sync::Arc::new(gpu);
    let reference = tether_sweep::solver::ReferenceOptions::DEFAULT;
    let engine = Engine::new(
        EngineKind::GpuAdaptive {
            precision: Precision::F64,
            reference,
        },
        gpu.clone(),
    );
    let drop = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.04);
    let (elements, batch) = (4, 3);
    let peaks = Peaks::measure(Some(&gpu)).unwrap();
    let row = throughput::run(&engine, &drop, (elements, batch), 1, &peaks).unwrap();
    let counted: f64 = (0..batch)
        .map(|i| {
            let (d, cd) = batch_parameters(i, batch);
            let output = simulate(
                &drop,
                &params(elements, d, cd, 0.0),
                &SolverSettings::reference_at(reference.tolerance_m),
            )
            .unwrap();
            let SolverReport::Reference(s) = output.report else {
                panic!("not the reference solver")
            };
            tether_sweep::gpu::cost::adaptive_work_flops(
                &counted_work(elements, &s),
                Precision::F64,
            )
        })
        .sum();
    let gflops = row.gflops.expect("the adaptive stage's rate is counted");
    let flops = gflops * 1e9 * row.wall_s;
    assert!(
        (flops / counted - 1.0).abs() < 1e-9,
        "{flops} against {counted}"
    );
    let facts = row.layout.expect("its layout's facts");
    assert!(facts.chain_flops_per_step > 0, "{facts:?}");
    assert!(
        row.peak_fraction.is_some_and(|f| f > 0.0 && f < 2.0),
        "{row:?}"
    );
    // Where the time went: the device's own clock inside the host's.
    let stages = row.stages.expect("a GPU row's stage times");
    assert!(stages.submissions >= 1 && stages.dispatches >= stages.submissions);
    assert_eq!(stages.device_s.is_some(), gpu.timestamps, "{stages:?}");
    if let Some(device_s) = stages.device_s {
        assert!(
            device_s > 0.0 && device_s <= stages.submissions_s,
            "{stages:?}"
        );
    }
    let host_clocked = stages.upload_s + stages.submissions_s + stages.readback_s;
    assert!(host_clocked <= row.wall_s, "{stages:?} in {} s", row.wall_s);
    // Three drops fit in one workgroup: the most lanes. With one lane
    // fixed (`bench --lanes 1`) the work is the same and one lane's chain
    // carries all of it.
    let most = AdaptiveShape::most_for(&gpu, elements);
    assert!(most.sims as usize >= batch, "{most:?}");
    assert_eq!(
        (facts.sims_per_workgroup, facts.lanes),
        (most.sims, most.lanes),
        "{facts:?}"
    );
    let one = engine.with_adaptive_lanes(Some(1));
    let row_one = throughput::run(&one, &drop, (elements, batch), 1, &peaks).unwrap();
    let facts_one = row_one.layout.expect("its layout's facts");
    assert_eq!((facts_one.sims_per_workgroup, facts_one.lanes), (64, 1));
    let flops_one = row_one.gflops.unwrap() * 1e9 * row_one.wall_s;
    assert!((flops_one / counted - 1.0).abs() < 1e-9, "{flops_one}");
    assert!(
        facts_one.chain_flops_per_step > facts.chain_flops_per_step,
        "{facts_one:?} against {facts:?}"
    );
}

/// Asked for in f32 at its floor, the GPU's reference solver runs without
/// a note (f32 takes about f64's steps there: it forms the strain from the
/// displacement and the drift apart); below it, it is refused, naming the
/// floor and `--precision f64`, and writes nothing.
#[test]
fn f32_runs_to_its_floor_and_refuses_below() {
    if !common::gpu_tests_run("the f32 floor") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (tolerance, runs) in [("1e-7", true), ("5e-8", false)] {
        let out = dir.path().join(format!("drop-{tolerance}.parquet"));
        let output = common::tether_sweep(&[
            "simulate",
            "--backend",
            "gpu",
            "--solver",
            "reference",
            "--elements",
            "20",
            "--duration",
            "0.04",
            "--tolerance",
            tolerance,
            "--force",
            "--out",
            common::path_str(&out),
        ]);
        let stderr = common::stderr(&output);
        assert_eq!(output.status.success(), runs, "{tolerance}: {stderr}");
        assert!(!stderr.contains("note:"), "{tolerance}: {stderr}");
        if !runs {
            assert!(
                stderr.contains("1e-7") && stderr.contains("--precision f64"),
                "{stderr}"
            );
            assert!(!out.exists(), "a refused run wrote {}", out.display());
        }
    }
}

/// The adaptive stage records no pin force and says so, rather than
/// return none; and a pin path the shader cannot follow is refused.
#[test]
fn a_pin_force_is_recorded_only_where_it_can_be() {
    let Some(gpu) = open() else { return };
    let mut prepared = prepare(&mixed()[..1], 1e-9);
    prepared.sims[0].record_pin_force = true;
    let refused = on_gpu(&gpu, &prepared, &AdaptiveRun::default()).unwrap_err();
    assert!(
        refused.to_string().contains("record_pin_force"),
        "{refused}"
    );
    assert!(chunk_data(&[&prepared.sims[0]]).is_ok());
    // A pin path the shader cannot follow is refused before upload.
    for (step_s, segments) in [(0.0, 1), (0.1, 0), (f64::NAN, 1)] {
        let mut sim = prepared.sims[0].clone();
        sim.record_pin_force = false;
        sim.drive = tether_sweep::gpu::PinDrive::Path(tether_sweep::gpu::batch::GridPath {
            start_s: 0.0,
            step_s,
            cubics: vec![[[0.0; 4]; 2]; segments],
        });
        let Err(refused) = chunk_data(&[&sim]) else {
            panic!("a pin path of {segments} segments of {step_s} s was accepted")
        };
        assert!(refused.to_string().contains("pin path"), "{refused}");
    }
}
