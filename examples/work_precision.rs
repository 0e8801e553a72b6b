//! Work against precision for the adaptive implicit methods (issue 56):
//! wall time, steps and force evaluations against the RMS marker error of
//! the track, measured against a converged one, for generalized-α, the
//! fourth-order ESDIRK and the fifth-order Radau IIA, on the paper's 2-s drop (n = 10, 20, 40, 50;
//! D = 0, 2000, 10000 Pa·s; C_D = 0.8) and the swing-up.
//!
//! The converged track is ESDIRK's at 1e-12 m; generalized-α's at 1e-11 m
//! is printed against it, so a reader sees the two agree before trusting
//! either as the truth. A second table interpolates each method's cost to
//! equal RMS errors (1e-5, 1e-6, 1e-7 m): what identification compares.
//! Force evaluations are Newton iterations times the forces each
//! evaluates (one for generalized-α and ESDIRK, whose first stage reuses
//! the last step's end; three for Radau, one per stage).
//!
//!     cargo run --release --example work_precision [-- --quick]
//!     cargo run --release --example work_precision -- --dampings 100,500 --elements 20
//!
//! (`--dampings` and `--elements` replace the drops' lists and leave the
//! swing-up out; `--methods`, `--tolerances` and `--max-step S` narrow or
//! change the runs.)
//!
//! One thread; every run once (wall times of a second or more vary by a
//! few percent on a shared host).

use std::time::Instant;

use tether_sweep::model::TetherParams;
use tether_sweep::named::Named;
use tether_sweep::scenario::{
    Scenario, ScenarioKind, SimulationOutput, SolverReport, SolverSettings, simulate,
};
use tether_sweep::solver::ImplicitMethod;

struct Case {
    name: String,
    scenario: Scenario,
    params: TetherParams,
    /// Frames up to this time are compared \[s\]: the swing-up's track
    /// after its winch stops is chaotic enough that generalized-α at 1e-11
    /// and 1e-12 m part by 4.5e-4 m at 3 s, so only the winch's motion
    /// (to 1.5 s, J_a,min at 1.02 s) measures the solvers.
    compared_until_s: f64,
}

fn run(case: &Case, method: ImplicitMethod, tolerance_m: f64) -> (SimulationOutput, f64) {
    let mut settings = SolverSettings::reference_at(tolerance_m);
    settings.reference.method = method;
    if let Some(s) = list_after::<f64>("--max-step") {
        settings.reference.max_step_s = s[0];
    }
    let start = Instant::now();
    let out = simulate(&case.scenario, &case.params, &settings).expect("the run ends");
    (out, start.elapsed().as_secs_f64())
}

fn rms_m(a: &SimulationOutput, b: &SimulationOutput, until_s: f64) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    let markers = a.track.markers();
    for (f, &t) in a.track.times_s.iter().enumerate() {
        if t > until_s {
            break;
        }
        for j in 0..markers {
            let (x, y) = (a.track.at(f, j), b.track.at(f, j));
            for k in 0..2 {
                sum += (x[k] - y[k]).powi(2);
                count += 1;
            }
        }
    }
    (sum / count as f64).sqrt()
}

/// |J_a,min − the converged run's| for the swing-up; NaN for a drop.
fn objective_error(a: &SimulationOutput, b: &SimulationOutput) -> f64 {
    match (&a.swingup, &b.swingup) {
        (Some(x), Some(y)) => (x.j_a_min - y.j_a_min).abs(),
        _ => f64::NAN,
    }
}

/// The comma-separated list after `flag`, if given.
fn list_after<T: std::str::FromStr>(flag: &str) -> Option<Vec<T>> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == flag)?;
    let text = args
        .get(at + 1)
        .unwrap_or_else(|| panic!("{flag} needs a list"));
    Some(
        text.split(',')
            .map(|v| v.parse().unwrap_or_else(|_| panic!("{flag}: {v}?")))
            .collect(),
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut cases = Vec::new();
    let drop = Scenario::new(ScenarioKind::Drop, 0.6);
    let (mut elements, mut dampings): (Vec<usize>, Vec<f64>) = if quick {
        (vec![10, 20], vec![2000.0])
    } else {
        (vec![10, 20, 40, 50], vec![0.0, 2000.0, 10000.0])
    };
    let chosen = (list_after("--elements"), list_after("--dampings"));
    let swingup_too = chosen.0.is_none() && chosen.1.is_none();
    elements = chosen.0.unwrap_or(elements);
    dampings = chosen.1.unwrap_or(dampings);
    for &n in &elements {
        for &d in &dampings {
            cases.push(Case {
                name: format!("drop n={n} D={d}"),
                scenario: drop.clone(),
                params: TetherParams {
                    elements: n,
                    damping_pa_s: d,
                    drag_coefficient: 0.8,
                    ..TetherParams::default()
                },
                compared_until_s: f64::INFINITY,
            });
        }
    }
    let swingup = Scenario::new(ScenarioKind::Swingup, 0.6);
    cases.extend(swingup_too.then(|| Case {
        name: "swing-up n=10 D=2000".into(),
        params: TetherParams {
            elements: 10,
            damping_pa_s: 2000.0,
            drag_coefficient: 0.8,
            tip_mass_kg: Scenario::default_tip_mass_kg(ScenarioKind::Swingup),
            ..TetherParams::default()
        },
        scenario: swingup,
        compared_until_s: 1.5,
    }));
    let tolerances: Vec<f64> = list_after("--tolerances").unwrap_or_else(|| match quick {
        true => vec![1e-6, 1e-8],
        false => vec![1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11],
    });
    let methods: Vec<ImplicitMethod> = list_after::<String>("--methods").map_or_else(
        || ImplicitMethod::ALL.to_vec(),
        |names| {
            names
                .iter()
                .map(|n| {
                    *ImplicitMethod::ALL
                        .iter()
                        .find(|m| m.name() == n)
                        .unwrap_or_else(|| panic!("--methods: {n}?"))
                })
                .collect()
        },
    );
    let mut measured: Vec<Point> = Vec::new();
    println!(
        "case\tmethod\ttolerance_m\tsteps\trejected\tforce_evaluations\tfactorizations\twall_s\trms_error_m\tja_min_error"
    );
    for case in &cases {
        let (truth, _) = run(case, ImplicitMethod::Esdirk43, 1e-12);
        let (check, _) = run(case, ImplicitMethod::GeneralizedAlpha, 1e-11);
        eprintln!(
            "{}: generalized-α at 1e-11 m is {:.2e} m RMS from ESDIRK at 1e-12 m",
            case.name,
            rms_m(&check, &truth, case.compared_until_s)
        );
        for &method in &methods {
            for &tolerance in &tolerances {
                let (out, wall_s) = run(case, method, tolerance);
                let SolverReport::Reference(stats) = out.report else {
                    unreachable!("the reference solver reports its stats")
                };
                measured.push(Point {
                    case: case.name.clone(),
                    method,
                    rms_m: rms_m(&out, &truth, case.compared_until_s),
                    wall_s,
                    evaluations: (stats.newton_iterations * method.forces_per_iteration()) as f64,
                });
                println!(
                    "{}\t{method}\t{tolerance:e}\t{}\t{}\t{}\t{}\t{wall_s:.4}\t{:.3e}\t{:.2e}",
                    case.name,
                    stats.steps,
                    stats.rejected_steps,
                    stats.newton_iterations * method.forces_per_iteration(),
                    stats.factorizations,
                    rms_m(&out, &truth, case.compared_until_s),
                    objective_error(&out, &truth)
                );
            }
        }
    }
    equal_accuracy(&cases, &measured);
}

/// One run's cost and accuracy.
struct Point {
    case: String,
    method: ImplicitMethod,
    rms_m: f64,
    wall_s: f64,
    evaluations: f64,
}

/// The cost each method needs for a given RMS error, interpolated
/// log-linearly between the two tolerances that bracket it (blank where
/// none does), and generalized-α's wall time over each other method's.
fn equal_accuracy(cases: &[Case], measured: &[Point]) {
    let methods = ImplicitMethod::ALL;
    let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
    println!(
        "\ncase\ttarget_rms_m\t{}\t{}\t{}",
        names
            .iter()
            .map(|n| format!("{n}_wall_s"))
            .collect::<Vec<_>>()
            .join("\t"),
        names[1..]
            .iter()
            .map(|n| format!("galpha_over_{n}"))
            .collect::<Vec<_>>()
            .join("\t"),
        names
            .iter()
            .map(|n| format!("{n}_evaluations"))
            .collect::<Vec<_>>()
            .join("\t"),
    );
    let cost = |case: &str, method, target: f64, of: fn(&Point) -> f64| {
        let mut points: Vec<&Point> = measured
            .iter()
            .filter(|p| p.case == case && p.method == method)
            .collect();
        points.sort_by(|a, b| b.rms_m.total_cmp(&a.rms_m));
        points.windows(2).find_map(|w| {
            let (a, b) = (w[0], w[1]);
            (b.rms_m <= target && target <= a.rms_m && b.rms_m < a.rms_m).then(|| {
                let x = (target / a.rms_m).ln() / (b.rms_m / a.rms_m).ln();
                (of(a).ln() + x * (of(b).ln() - of(a).ln())).exp()
            })
        })
    };
    let show = |v: Option<f64>, digits: usize| v.map_or(String::new(), |v| format!("{v:.digits$}"));
    for case in cases {
        for target in [1e-5, 1e-6, 1e-7] {
            let walls: Vec<Option<f64>> = methods
                .iter()
                .map(|&m| cost(&case.name, m, target, |p| p.wall_s))
                .collect();
            let evals: Vec<String> = methods
                .iter()
                .map(|&m| show(cost(&case.name, m, target, |p| p.evaluations), 0))
                .collect();
            let ratios: Vec<String> = walls[1..]
                .iter()
                .map(|w| show(walls[0].zip(*w).map(|(g, w)| g / w), 2))
                .collect();
            println!(
                "{}\t{target:e}\t{}\t{}\t{}",
                case.name,
                walls
                    .iter()
                    .map(|w| show(*w, 4))
                    .collect::<Vec<_>>()
                    .join("\t"),
                ratios.join("\t"),
                evals.join("\t"),
            );
        }
    }
}
