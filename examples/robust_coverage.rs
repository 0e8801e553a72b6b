//! Do the quoted intervals hold the truth when a known input is slightly
//! wrong? The filmed drop of `refine_seeds` (n = 12, 30 fps, 0.4 mm, an
//! unknown release) identified from a config whose tether is 1 % too long
//! (0.505 m for 0.5 m), over 20 noise seeds: how often the Gauss–Newton and
//! the robust (Newey–West) 95 % intervals of C_D and the release hold the
//! truth, how often the fit is flagged, and the same after following the
//! tool's suggestion (the length freed as an axis).
//!
//!     cargo run --release --example robust_coverage [SEEDS]
//!
//! (BENCHMARKS.md and docs/identify.md record its output.)

#[path = "support/mod.rs"]
mod support;

use tether_sweep::engine::EngineOptions;
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{DropSettings, Experiment, Frames, Scenario};
use tether_sweep::sweep::Grid;
use tether_sweep::sweep::refine::Refined;
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::IdentifyRequest;

const TRUTH: [(&str, f64); 2] = [("drag_coefficient", 0.77), ("release_time_s", 0.02)];

/// Whether `refined`'s 95 % interval of each of [`TRUTH`]'s parameters
/// holds its truth: (Gauss–Newton, robust).
fn covers(refined: &Refined) -> Vec<(bool, bool)> {
    let z = 1.959964;
    TRUTH
        .iter()
        .map(|(name, truth)| {
            let p = refined
                .parameters
                .iter()
                .find(|p| p.name() == *name)
                .expect("refined");
            let robust = p.robust_standard_error.unwrap_or(f64::NAN);
            (
                (p.value - truth).abs() <= z * p.standard_error,
                (p.value - truth).abs() <= z * robust,
            )
        })
        .collect()
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SEEDS: a count"))
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tether = support::filmed_tether(12);
    let drop = DropSettings {
        pin_m: [0.1, 0.2],
        initial_angle_deg: 30.0,
        release_time_s: 0.02,
    };
    let filmed = Scenario {
        experiment: Experiment::Drop(drop.clone()),
        frames: Frames::film((0..=30).map(|p| p as f64 / 30.0).collect()),
        marker_arc_lengths_m: vec![0.0, 0.05, 0.12, 0.2, 0.31, 0.4, 0.5],
    };
    let config = Scenario {
        experiment: Experiment::Drop(DropSettings {
            release_time_s: 0.0,
            ..drop
        }),
        ..filmed.clone()
    };
    let long = TetherParams {
        length_m: 0.505,
        ..tether.clone()
    };
    let grid = Grid::parse("12", "1000:4000:1000", "0.6:0.9:0.1")
        .and_then(|g| g.with_axis("release_time_s", "0:0.03:0.005"))
        .expect("a grid");
    let freed = grid
        .clone()
        .with_axis("length_m", "0.5:0.51:0.005")
        .expect("a grid");
    let (mut flagged, mut freed_flagged) = (0, 0);
    let mut counts = [[0usize; 2]; 2];
    let mut freed_counts = [0usize; 2];
    for seed in 1..=seeds {
        let measured = dir.path().join(format!("m{seed}.parquet"));
        support::film(
            &filmed,
            &tether,
            0.0004,
            seed,
            &measured,
            "examples/robust_coverage.rs",
        );
        let run = |grid: &Grid, name: &str| {
            let mut request = IdentifyRequest {
                engine: EngineOptions::cpu(),
                base: long.clone(),
                validate: 0,
                allow_implausible: true,
                ..IdentifyRequest::new(&measured, grid.clone(), dir.path().join(name))
            };
            request.films[0].scenario = Some(config.clone());
            request.run(Hooks::default()).expect("identified")
        };
        let report = run(&grid, &format!("id{seed}"));
        let explains = report.goodness.first().is_some_and(|g| g.test.explains);
        flagged += usize::from(!explains);
        let refined = report.refined.expect("refined");
        for (i, (gn, robust)) in covers(&refined).into_iter().enumerate() {
            counts[i][0] += usize::from(gn);
            counts[i][1] += usize::from(robust);
        }
        let report = run(&freed, &format!("freed{seed}"));
        freed_flagged += usize::from(!report.goodness.first().is_some_and(|g| g.test.explains));
        let refined = report.refined.expect("refined");
        for (i, (gn, _)) in covers(&refined).into_iter().enumerate() {
            freed_counts[i] += usize::from(gn);
        }
        println!("seed {seed}: flagged {}", !explains);
    }
    println!("config 1 % long: flagged in {flagged} of {seeds}");
    for (i, (name, truth)) in TRUTH.iter().enumerate() {
        println!(
            "  {name} (truth {truth}): in the Gauss–Newton 95 % interval {} of {seeds}, in the robust one {} of {seeds}",
            counts[i][0], counts[i][1]
        );
    }
    println!(
        "the length freed (--axis length_m=0.5:0.51:0.005): flagged in {freed_flagged} of {seeds}"
    );
    for (i, (name, _)) in TRUTH.iter().enumerate() {
        println!(
            "  {name}: in the Gauss–Newton 95 % interval {} of {seeds}",
            freed_counts[i]
        );
    }
}
