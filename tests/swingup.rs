//! The swing-up design (issue 5): chromosome mapping and winch motion
//! against docs/model.md, the GA through the CLI, the GPU engine's J_a,min against
//! the CPU explicit solver, and a reduced exhaustive landscape against a
//! brute-force loop. GPU parts need an adapter (lavapipe in CI) unless
//! TETHER_SWEEP_SKIP_GPU_TESTS is set.

mod common;

use std::path::Path;

use common::{
    f64_column, i32_column, i64_column, open_gpu as gpu, optional_f64_column, stderr, tether_sweep,
    text_column,
};
use tether_sweep::engine::{Engine, EngineKind};
use tether_sweep::ga::confirm::{
    CONFIRMATION_METHOD, CONFIRMATION_TOLERANCE_M, FIRST_ROUND, MARGIN_PER_SHIFT,
    confirmation_settings,
};
use tether_sweep::ga::evaluate::Landscape;
use tether_sweep::ga::{Evaluator, GeneCoding, SwingupProblem};
use tether_sweep::gpu::Precision;
use tether_sweep::io::track::{read_parquet_metadata, read_table};
use tether_sweep::model::{PinMotion, TetherParams};
use tether_sweep::named::Named;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverSettings, simulate};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::solver::SolverKind;

/// A swing-up CI can afford: n = 4, 2 bits a gene (64 chromosomes), 1.2 s
/// (the captures of this configuration happen before 1 s).
fn reduced() -> SwingupProblem {
    let params = TetherParams {
        elements: 4,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        tip_mass_kg: 0.021,
        ..Default::default()
    };
    SwingupProblem {
        scenario: Scenario::new(ScenarioKind::Swingup, params.length_m).with_duration_s(1.2),
        params,
        coding: GeneCoding {
            bits_per_gene: 2,
            ..Default::default()
        },
    }
}

fn explicit() -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Explicit,
        ..Default::default()
    }
}

/// J_a,min of every chromosome by a plain loop over `simulate`.
fn brute_force(problem: &SwingupProblem) -> Vec<f64> {
    (0..problem.coding.space_size() as u32)
        .map(|c| {
            simulate(&problem.scenario_for(c), &problem.params, &explicit())
                .unwrap()
                .swingup
                .unwrap()
                .j_a_min
        })
        .collect()
}

fn argmin(values: &[f64]) -> usize {
    (0..values.len())
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap()
}

#[test]
fn chromosomes_map_to_spec_periods_and_winch_motion() {
    let problem = SwingupProblem {
        params: TetherParams::default(),
        scenario: Scenario::new(ScenarioKind::Swingup, 0.6),
        coding: GeneCoding::default(),
    };
    problem.validate().unwrap();
    // docs/model.md §7: T_i = (1.0 − 0.25) x_i / 31 + 0.25, genes of 5 bits, gene 1 first.
    let chromosome = 0b01101_00010_11111;
    let expected = [13.0, 2.0, 31.0].map(|x: f64| 0.75 * x / 31.0 + 0.25);
    let scenario = problem.scenario_for(chromosome);
    let w = &scenario.as_swingup().expect("a swing-up").winch;
    for (t, e) in w.periods_s.iter().zip(expected) {
        assert!((t - e).abs() < 1e-15, "{t} vs {e}");
    }
    // docs/model.md §4.2: half-cosine moves 0 → −A → +A → 0, at rest afterwards.
    let (t1, t2, t3) = (expected[0], expected[1], expected[2]);
    let a = 0.2;
    let starts = [0.0, t1, t1 + t2];
    let ends = [0.0, -a, a, 0.0];
    let periods = [t1, t2, t3];
    let spec = |t: f64| -> f64 {
        for i in 0..3 {
            if t >= starts[i] && t < starts[i] + periods[i] {
                let tau = t - starts[i];
                return ends[i]
                    + (ends[i + 1] - ends[i])
                        * (1.0 - (std::f64::consts::PI * tau / periods[i]).cos())
                        / 2.0;
            }
        }
        0.0
    };
    let h = 1e-6;
    for k in 0..=600 {
        let t = k as f64 * 0.005 + 1.3e-4;
        assert!((w.position(t)[0] - spec(t)).abs() < 1e-14, "x at {t}");
        assert_eq!(w.position(t)[1], 0.0);
        let v_fd = (spec(t + h) - spec(t - h)) / (2.0 * h);
        assert!((w.velocity(t)[0] - v_fd).abs() < 1e-6, "v at {t}");
        let near_switch = [t1, t1 + t2, t1 + t2 + t3]
            .iter()
            .any(|s| (t - s).abs() < 2.0 * h);
        if !near_switch {
            let a_fd = (w.velocity(t + h)[0] - w.velocity(t - h)[0]) / (2.0 * h);
            assert!((w.acceleration(t)[0] - a_fd).abs() < 1e-4, "a at {t}");
        }
    }
    assert_eq!(w.velocity(3.0)[0], 0.0);
}

#[test]
fn gpu_f32_scores_a_batch_like_the_cpu_solver_of_its_scheme() {
    let Some(gpu) = gpu() else { return };
    let gpu = std::sync::Arc::new(gpu);
    let problem = reduced();
    let chromosomes = [0u32, 1, 7, 21, 42, 63];
    // Progress counts chromosomes on either engine (the GPU counts
    // element-steps, which once reached the terminal as "chromosomes").
    let last = std::sync::Mutex::new((0u64, 0u64));
    let progress = |done: u64, of: u64| *last.lock().unwrap() = (done, of);
    let n = chromosomes.len() as u64;
    for scheme in [FixedStepScheme::Explicit, FixedStepScheme::SemiImplicit] {
        let engine = Engine::new(EngineKind::gpu(Precision::F32, scheme), gpu.clone());
        let on_gpu = Evaluator::new(engine)
            .evaluate(&problem, &chromosomes, Some(&progress))
            .unwrap();
        assert_eq!(*last.lock().unwrap(), (n, n), "GPU progress");
        let cpu = SolverSettings {
            kind: SolverKind::from(scheme),
            ..Default::default()
        };
        let on_cpu = Evaluator::new(Engine::cpu(cpu))
            .evaluate(&problem, &chromosomes, Some(&progress))
            .unwrap();
        assert_eq!(*last.lock().unwrap(), (n, n), "CPU progress");
        for ((c, g), e) in chromosomes.iter().zip(&on_gpu).zip(&on_cpu) {
            let (g, e) = (g.j_a_min_m.unwrap(), e.j_a_min_m.unwrap());
            let relative = (g / e - 1.0).abs();
            eprintln!(
                "{scheme:?} chromosome {c}: GPU {g:.8} m, CPU {e:.8} m, relative {relative:.1e}"
            );
            assert!(relative < 1e-4, "{scheme:?} chromosome {c}: {g} vs {e}");
        }
    }
}

#[test]
fn exhaustive_landscape_equals_brute_force_and_the_ga_finds_its_optimum() {
    let problem = reduced();
    let truth = brute_force(&problem);
    let best = argmin(&truth);
    // The landscape on the GPU engine where there is one, else on the CPU.
    let engine = match gpu() {
        Some(device) => Engine::new(
            EngineKind::gpu(Precision::F32, FixedStepScheme::SemiImplicit),
            std::sync::Arc::new(device),
        ),
        None => Engine::cpu(explicit()),
    };
    let evaluator = Evaluator::new(engine);
    let landscape = Landscape::compute(&problem, &evaluator, None).unwrap();
    assert_eq!(landscape.evaluations.len(), 64);
    for (c, (e, t)) in landscape.evaluations.iter().zip(&truth).enumerate() {
        let j = e.j_a_min_m.unwrap();
        assert!((j / t - 1.0).abs() < 1e-4, "chromosome {c}: {j} vs {t}");
    }
    assert_eq!(landscape.optimum(), Some(best as u32));
    assert_eq!(landscape.rank(best as u32), 1);
    // A clear optimum: the runner-up is worse by far more than the tolerance.
    let mut sorted = truth.clone();
    sorted.sort_by(f64::total_cmp);
    assert!(sorted[1] - sorted[0] > 1e-3, "{:?}", &sorted[..3]);

    let settings = tether_sweep::ga::GaSettings {
        generations: 25,
        ..Default::default()
    };
    let run = tether_sweep::ga::run(
        &problem.coding,
        &settings,
        |c: &[u32]| evaluator.evaluate(&problem, c, None),
        |_| {},
    )
    .unwrap();
    assert_eq!(run.best.chromosome, best as u32, "the GA found the optimum");
    assert!(run.evaluations < 64, "and without scoring everything");
}

fn run_ok(args: &[&str]) -> String {
    let out = tether_sweep(args);
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SMALL: [&str; 14] = [
    "swingup",
    "--elements",
    "3",
    "--bits-per-gene",
    "2",
    "--duration",
    "0.8",
    "--generations",
    "6",
    "--population",
    "6",
    "--backend",
    "cpu",
    "--force",
];

#[test]
fn cli_ga_is_reproducible_elitist_and_documented() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        let mut args = SMALL.to_vec();
        args.extend(["--seed", seed, "--out", out.to_str().unwrap()]);
        run_ok(&args);
        read_table(&out.join("generations.parquet")).unwrap()
    };
    let a = run("a", "5");
    let b = run("b", "5");
    let c = run("c", "6");
    assert_eq!(a.num_rows(), 36, "6 generations × 6 individuals");
    for name in ["t1_s", "t2_s", "t3_s", "j_a_min_m", "t_at_min_s"] {
        assert_eq!(f64_column(&a, name), f64_column(&b, name), "{name}");
    }
    assert_ne!(f64_column(&a, "j_a_min_m"), f64_column(&c, "j_a_min_m"));
    assert!(text_column(&a, "status").iter().all(|s| s == "ok"));
    // Elitism: the best of each generation never gets worse.
    let generation = i32_column(&a, "generation");
    let j = f64_column(&a, "j_a_min_m");
    let best: Vec<f64> = (0..6)
        .map(|g| {
            (0..j.len())
                .filter(|&r| generation[r] == g)
                .map(|r| j[r])
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    assert!(best.windows(2).all(|w| w[1] <= w[0]), "{best:?}");
    let dir_a = dir.path().join("a");
    let meta = read_parquet_metadata(&dir_a.join("generations.parquet")).unwrap();
    for key in [
        "tether_sweep.version",
        "tether_sweep.tether",
        "tether_sweep.scenario",
        "tether_sweep.coding",
        "tether_sweep.ga",
        "tether_sweep.engine",
        "tether_sweep.summary",
    ] {
        assert!(meta.contains_key(key), "{key}");
    }
    // The best individual's track reproduces its J_a,min's time and its
    // motion table starts at the winch's rest position.
    let motion = read_table(&dir_a.join("best_motion.parquet")).unwrap();
    assert_eq!(f64_column(&motion, "winch_x_m")[0], 0.0);
    assert!(
        read_table(&dir_a.join("best_track.parquet"))
            .unwrap()
            .num_rows()
            > 0
    );
    for figure in ["fitness", "winch", "tip", "snapshots"] {
        assert!(dir_a.join(format!("{figure}.svg")).exists(), "{figure}.svg");
        assert!(dir_a.join(format!("{figure}.png")).exists(), "{figure}.png");
    }
}

/// The GA's answer is confirmed on Radau IIA at a tight tolerance
/// (`ga::confirm`): the chromosomes re-run score as that solver does, the
/// answer is the fittest of them, every chromosome left out lies beyond the
/// margin above it, and the summary and the terminal give its confirmed
/// score and the solver. A search on generalized-α, however tight, is
/// confirmed too: it never ran the confirmation's solver.
#[test]
fn cli_ga_answer_is_confirmed_at_a_tight_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, tolerance: &str| {
        let out = dir.path().join(name);
        let mut args = SMALL.to_vec();
        args.extend(["--seed", "5", "--tolerance", tolerance]);
        args.extend(["--out", out.to_str().unwrap()]);
        let stdout = run_ok(&args);
        let table = read_table(&out.join("generations.parquet")).unwrap();
        let meta = read_parquet_metadata(&out.join("generations.parquet")).unwrap();
        let summary: serde_json::Value =
            serde_json::from_str(&meta["tether_sweep.summary"]).unwrap();
        (stdout, table, summary)
    };
    // SMALL's swing-up, as the CLI builds it.
    let params = TetherParams {
        elements: 3,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        tip_mass_kg: tether_sweep::scenario::SWINGUP_TIP_MASS_KG,
        ..Default::default()
    };
    let problem = SwingupProblem {
        scenario: Scenario::new(ScenarioKind::Swingup, params.length_m).with_duration_s(0.8),
        params,
        coding: GeneCoding {
            bits_per_gene: 2,
            ..Default::default()
        },
    };
    let confirmed_on = format!(
        "confirmed at {CONFIRMATION_TOLERANCE_M:e} m on the reference solver's {CONFIRMATION_METHOD}"
    );
    let (stdout, table, summary) = run("loose", "1e-5");
    let chromosomes = i64_column(&table, "chromosome");
    let search = f64_column(&table, "j_a_min_m");
    let confirmed = optional_f64_column(&table, "j_a_min_confirmed_m");
    let mut best: Option<(i64, f64)> = None;
    for (row, &c) in chromosomes.iter().enumerate() {
        let Some(j) = confirmed[row] else { continue };
        let direct = simulate(
            &problem.scenario_for(c as u32),
            &problem.params,
            &confirmation_settings(),
        )
        .unwrap()
        .swingup
        .unwrap()
        .j_a_min;
        assert!(
            (j - direct).abs() < 1e-12,
            "chromosome {c}: {j} against {direct}"
        );
        if best.is_none_or(|(_, b)| j < b) {
            best = Some((c, j));
        }
    }
    let (best_chromosome, best_j) = best.expect("some chromosomes were re-run");
    let rerun = summary["confirmation"]["rerun"].as_u64().unwrap();
    assert!(rerun as usize >= FIRST_ROUND);
    assert_eq!(summary["best_chromosome"].as_i64(), Some(best_chromosome));
    assert_eq!(summary["j_a_min_m"].as_f64(), Some(best_j));
    // Left out: beyond the margin, which the measured changes set.
    let margin = summary["confirmation"]["margin_m"].as_f64().unwrap();
    let shift = summary["confirmation"]["largest_shift_m"].as_f64().unwrap();
    assert!(
        shift > 0.0 && margin == MARGIN_PER_SHIFT * shift,
        "{summary}"
    );
    let left_out: Vec<f64> = (0..search.len())
        .filter(|&r| confirmed[r].is_none())
        .map(|r| search[r])
        .collect();
    assert!(!left_out.is_empty(), "SMALL leaves some chromosomes out");
    assert!(
        left_out.iter().all(|&j| j >= best_j + margin),
        "{left_out:?}"
    );
    assert!(
        stdout.contains(&format!("J_a,min = {best_j:.6} m")) && stdout.contains(&confirmed_on),
        "{stdout}"
    );
    assert_eq!(
        summary["confirmation"]["method"].as_str(),
        Some(CONFIRMATION_METHOD.name())
    );
    // Searched on generalized-α at a tolerance tighter than the
    // confirmation's: still confirmed, on Radau.
    let (stdout, table, summary) = run("tight", "1e-10");
    assert!(stdout.contains(&confirmed_on), "{stdout}");
    assert!(
        optional_f64_column(&table, "j_a_min_confirmed_m")
            .iter()
            .any(Option::is_some)
    );
    assert_eq!(
        summary["confirmation"]["method"].as_str(),
        Some(CONFIRMATION_METHOD.name())
    );
}

#[test]
fn the_ga_on_the_gpus_reference_solver_scores_as_the_cpus() {
    // The same seed on the CPU's reference solver and on its scheme on the
    // GPU: the same chromosomes, and J_a,min within 1e-8 m in f64 (the
    // stage reproduces the solver's steps) and 1e-4 m in f32; the GA's
    // choices follow the scores, so a wrong score shows as another
    // chromosome too.
    if !common::gpu_tests_run("the GA on the GPU's reference solver") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, engine: &[&str]| {
        let out = dir.path().join(name);
        let mut args: Vec<&str> = SMALL[..SMALL.len() - 3].to_vec();
        args.extend(engine);
        args.extend(["--force", "--seed", "3", "--out", out.to_str().unwrap()]);
        run_ok(&args);
        let table = read_table(&out.join("generations.parquet")).unwrap();
        let meta = read_parquet_metadata(&out.join("generations.parquet")).unwrap();
        (table, meta["tether_sweep.engine"].clone())
    };
    let (cpu, _) = run("cpu", &["--backend", "cpu", "--solver", "reference"]);
    for (precision, within) in [("f64", 1e-8), ("f32", 1e-4)] {
        let (gpu, engine) = run(
            precision,
            &[
                "--backend",
                "gpu",
                "--solver",
                "reference",
                "--precision",
                precision,
            ],
        );
        assert!(
            engine.contains("\"backend\":\"gpu\"") && engine.contains("\"solver\":\"reference\""),
            "{engine}"
        );
        assert_eq!(text_column(&gpu, "bits"), text_column(&cpu, "bits"));
        let (g, c) = (f64_column(&gpu, "j_a_min_m"), f64_column(&cpu, "j_a_min_m"));
        let worst = g
            .iter()
            .zip(&c)
            .map(|(g, c)| (g - c).abs())
            .fold(0.0, f64::max);
        eprintln!("{precision}: largest J_a,min difference {worst:.1e} m");
        assert!(worst < within, "{precision}: {worst} m");
    }
}

#[test]
fn cli_exhaustive_ranks_the_ga_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let mut args = SMALL.to_vec();
    args.extend([
        "--exhaustive",
        "--solver",
        "explicit",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = run_ok(&args);
    let landscape = read_table(&out.join("landscape.parquet")).unwrap();
    assert_eq!(landscape.num_rows(), 64);
    let j = f64_column(&landscape, "j_a_min_m");
    let rank = i64_column(&landscape, "rank");
    let best = argmin(&j);
    assert_eq!(rank[best], 1);
    // Rows are in chromosome order with docs/model.md §7's mapping.
    let coding = GeneCoding {
        bits_per_gene: 2,
        ..Default::default()
    };
    assert_eq!(
        f64_column(&landscape, "t2_s")[best],
        coding.periods_s(best as u32)[1]
    );
    assert!(
        stdout.contains("global optimum (64 chromosomes)"),
        "{stdout}"
    );
    assert!(stdout.contains("the GA's answer ranks"), "{stdout}");
    assert!(out.join("landscape.svg").exists());
}

#[test]
fn cli_rejects_bad_ga_input_before_running() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value, field) in [
        ("--population", "0", "--population"),
        ("--generations", "0", "--generations"),
        ("--period-min", "0.001", "--period-min"),
        ("--period-max", "0.2", "--period-max"),
        ("--bits-per-gene", "11", "--bits-per-gene"),
        ("--crossover-rate", "1.5", "--crossover-rate"),
        ("--waypoints", "0,0.1,0", "--waypoints"),
        ("--elements", "0", "--elements"),
        ("--tolerance", "0", "invalid --tolerance"),
    ] {
        let out = dir.path().join(field.trim_start_matches('-'));
        // The paper's defaults (docs/model.md) otherwise: the error must come before any simulation.
        let args = [
            "swingup",
            "--backend",
            "cpu",
            flag,
            value,
            "--out",
            out.to_str().unwrap(),
        ];
        let result = tether_sweep(&args);
        assert_eq!(
            result.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&result)
        );
        assert!(
            stderr(&result).contains(field),
            "{flag}: {}",
            stderr(&result)
        );
        assert!(!Path::new(&out).join("generations.parquet").exists());
    }
}

/// A swing-up none of whose chromosomes can be simulated (a tether of
/// 1e-30 Pa blows up at once) has no answer: exit code 3, nothing written.
#[test]
fn a_ga_whose_every_chromosome_diverged_writes_nothing_and_exits_3() {
    use tether_sweep::ga::GaSettings;
    use tether_sweep::workflow::swingup::{SwingupHooks, SwingupRequest, prepare};
    let dir = tempfile::tempdir().unwrap();
    let mut problem = reduced();
    problem.params.youngs_modulus_pa = 1e-30;
    let request = SwingupRequest {
        problem,
        settings: GaSettings {
            population: 4,
            generations: 2,
            ..Default::default()
        },
        exhaustive: false,
        engine: tether_sweep::engine::EngineOptions {
            backend: tether_sweep::engine::Backend::Cpu,
            solver: Some(SolverKind::Explicit),
            ..Default::default()
        },
        tolerance_m: 1e-7,
        out: dir.path().join("out"),
        force: false,
    };
    let error = prepare(request)
        .and_then(|p| p.run(SwingupHooks::default()))
        .expect_err("no chromosome ran");
    assert_eq!(error.exit_code(), 3, "{error}");
    assert!(error.to_string().contains("nothing written"), "{error}");
    let written: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?}");
}
