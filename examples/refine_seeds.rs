//! Do the refined optimum's standard errors mean what they say? The filmed
//! experiment of issue 18: a drop of a non-default tether filmed at 30 fps
//! (every fourth frame 3 µs late), seven unevenly spaced markers, a 30°
//! release from an offset pin 0.02 s after the file's first frame, made on
//! a finer mesh (n = 12) with an off-grid truth and 0.4 mm marker noise, for
//! ten noise seeds; each is identified on an n = 6, 12 grid over D, C_D and
//! the release time, and refined. The spread of the ten estimates is
//! compared with the standard errors the refinement reports, and each
//! parameter's 95 % profile interval is checked for the truth (an interval
//! that ends on the grid's bound holds a truth beyond it too: the data do
//! not exclude it); and the spread is compared with what `design` predicts
//! for the film before any data.
//!
//!     cargo run --release --example refine_seeds
//!
//! (BENCHMARKS.md records its output. The tests keep a cheaper version:
//! one seed, truth within two standard errors.)

#[path = "support/mod.rs"]
mod support;

use tether_sweep::engine::EngineOptions;
use tether_sweep::least_squares::profile::ProfileEnd;
use tether_sweep::scenario::{DropSettings, Experiment, Frames, Scenario, SolverSettings};
use tether_sweep::sweep::design::{Design, Estimated, PlannedFilm};
use tether_sweep::sweep::{Axis, Grid, Parameter};
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::IdentifyRequest;

const SEEDS: u64 = 10;
const RELEASE_S: f64 = 0.02;

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tether = support::filmed_tether(12);
    let times: Vec<f64> = (0..=30)
        .map(|p| p as f64 / 30.0 + if p % 4 == 2 { 3e-6 } else { 0.0 })
        .collect();
    let drop = DropSettings {
        pin_m: [0.1, 0.2],
        initial_angle_deg: 30.0,
        release_time_s: RELEASE_S,
    };
    let filmed = Scenario {
        experiment: Experiment::Drop(drop.clone()),
        frames: Frames::film(times),
        marker_arc_lengths_m: vec![0.0, 0.05, 0.12, 0.2, 0.31, 0.4, 0.5],
    };
    // What the user knows: the release angle and pin, not the release time.
    let config = Scenario {
        experiment: Experiment::Drop(DropSettings {
            release_time_s: 0.0,
            ..drop
        }),
        ..filmed.clone()
    };
    let grid = Grid::parse("6,12", "1000:4000:1000", "0.6:0.9:0.1")
        .and_then(|g| g.with_axis("release_time_s", "0:0.03:0.005"))
        .expect("a grid");
    let truth = [2300.0, 0.77, RELEASE_S];
    println!(
        "truth D = 2300 Pa·s, C_D = 0.77, release 0.02 s (n = 12); grid n = 6, 12, {} candidates; 0.4 mm noise; {SEEDS} seeds",
        grid.len()
    );
    println!(
        "{:>4} {:>3} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9}",
        "seed", "n", "D", "± SE", "C_D", "± SE", "release", "± SE"
    );
    let mut estimates = Vec::new();
    let mut profiles = Vec::new();
    for seed in 1..=SEEDS {
        let measured = dir.path().join(format!("m{seed}.parquet"));
        support::film(
            &filmed,
            &tether,
            0.0004,
            seed,
            &measured,
            "examples/refine_seeds.rs",
        );
        let mut request = IdentifyRequest {
            engine: EngineOptions::cpu(),
            base: tether.clone(),
            validate: 0,
            ..IdentifyRequest::new(
                &measured,
                grid.clone(),
                dir.path().join(format!("id{seed}")),
            )
        };
        request.films[0].scenario = Some(config.clone());
        let report = request.run(Hooks::default()).expect("identified");
        let refined = report.refined.expect("refined");
        let p = &refined.parameters;
        let bound = |i: usize| if p[i].at_bound { "*" } else { " " };
        println!(
            "{seed:>4} {:>3} {:>9.1}{} {:>8.1} {:>9.5} {:>9.5} {:>10.6} {:>9.6}",
            refined.elements,
            p[0].value,
            bound(0),
            p[0].standard_error,
            p[1].value,
            p[1].standard_error,
            p[2].value,
            p[2].standard_error
        );
        estimates.push(
            p.iter()
                .map(|q| (q.value, q.standard_error))
                .collect::<Vec<_>>(),
        );
        profiles.push(
            p.iter()
                .map(|q| q.profile.clone().expect("profiled"))
                .collect::<Vec<_>>(),
        );
    }
    println!("(* on the grid's bound)");
    // What `design` predicts for this film before any data: the Fisher
    // information of the tracks at the truth, with the release estimated.
    let predicted = Design {
        films: vec![PlannedFilm {
            name: "filmed".into(),
            tether: tether.clone(),
            scenario: filmed.clone(),
        }],
        axes: Vec::new(),
        estimated: vec![
            Estimated::shared(Axis::Damping),
            Estimated::shared(Axis::Drag),
            Estimated::shared(Axis::Parameter(Parameter::ReleaseTimeS)),
        ],
        noise_m: 0.0004,
    }
    .predict(&SolverSettings::reference())
    .expect("predicted")
    .remove(0)
    .standard_errors;
    println!("95 % profile intervals (b: the grid's bound, ?: not found):");
    let show = |end: &ProfileEnd| match end {
        ProfileEnd::Crossed { value } => format!("{value:.6}"),
        ProfileEnd::Bound { value } => format!("{value}b"),
        ProfileEnd::Unresolved { value, .. } => format!("{value}?"),
    };
    // An end on a bound reaches everything beyond it; an unresolved one
    // claims nothing, so it cannot cover.
    let reaches = |end: &ProfileEnd, truth: f64, below: bool| match end {
        ProfileEnd::Crossed { value } => (truth > *value) == below,
        ProfileEnd::Bound { .. } => true,
        ProfileEnd::Unresolved { .. } => false,
    };
    for (seed, ps) in profiles.iter().enumerate() {
        let intervals: Vec<String> = ps
            .iter()
            .map(|q| format!("[{}, {}]", show(&q.lower), show(&q.upper)))
            .collect();
        println!("{:>4} {}", seed + 1, intervals.join(" "));
    }
    for (i, name) in ["D", "C_D", "release_time_s"].into_iter().enumerate() {
        let values: Vec<f64> = estimates.iter().map(|e| e[i].0).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let spread = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
            / (values.len() - 1) as f64)
            .sqrt();
        let se = estimates.iter().map(|e| e[i].1).sum::<f64>() / estimates.len() as f64;
        let covered = profiles
            .iter()
            .filter(|ps| {
                reaches(&ps[i].lower, truth[i], true) && reaches(&ps[i].upper, truth[i], false)
            })
            .count();
        let gauss_newton = estimates
            .iter()
            .filter(|e| (e[i].0 - truth[i]).abs() <= 1.959964 * e[i].1)
            .count();
        println!(
            "{name}: mean {mean:.6}, truth {}, spread over the seeds {spread:.6}, mean standard error {se:.6}, ratio {:.2}, bias {:.2} SE; truth in the profile interval in {covered} of {SEEDS}, in ±1.96 SE in {gauss_newton}; design predicted {:.6} (spread / predicted {:.2})",
            truth[i],
            spread / se,
            (mean - truth[i]) / se,
            predicted[i],
            spread / predicted[i]
        );
    }
}
