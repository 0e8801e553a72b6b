//! Do the refined optimum's standard errors mean what they say? A filmed
//! drop of a non-default tether (30 fps, seven unevenly spaced markers, a
//! 30° release from an offset pin) is made on a finer mesh (n = 12) with an
//! off-grid truth and 0.4 mm marker noise, for ten noise seeds; each is
//! identified on an n = 6, 12 grid and refined. The spread of the ten
//! estimates is compared with the standard errors the refinement reports.
//!
//!     cargo run --release --example refine_seeds
//!
//! (The check; BENCHMARKS.md records its output. The tests keep a
//! cheaper version: one seed, truth within two standard errors.)

use tether_sweep::dataset::{GENERATOR, SynthSpec};
use tether_sweep::engine::Backend;
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind};
use tether_sweep::sweep::Grid;
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::IdentifyRequest;
use tether_sweep::workflow::synth::{self, SynthRequest};

const SEEDS: u64 = 10;

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tether = TetherParams {
        elements: 12,
        length_m: 0.5,
        thickness_m: 0.0025,
        youngs_modulus_pa: 8e6,
        density_kg_m3: 1000.0,
        damping_pa_s: 2300.0,
        drag_coefficient: 0.77,
        ..TetherParams::default()
    };
    let scenario = Scenario {
        duration_s: 1.0,
        frame_interval_s: 1.0 / 30.0,
        marker_arc_lengths_m: vec![0.0, 0.05, 0.12, 0.2, 0.31, 0.4, 0.5],
        initial_angle_deg: 30.0,
        pin_m: [0.1, 0.2],
        ..Scenario::new(ScenarioKind::Drop, tether.length_m)
    };
    let grid = Grid::parse("6,12", "1000:4000:500", "0.6:0.9:0.1").expect("a grid");
    println!(
        "truth D = 2300 Pa·s, C_D = 0.77 (n = 12); grid n = 6, 12; 0.4 mm noise; {SEEDS} seeds"
    );
    println!(
        "{:>4} {:>3} {:>10} {:>8} {:>9} {:>9}",
        "seed", "n", "D", "± SE", "C_D", "± SE"
    );
    let mut estimates = Vec::new();
    for seed in 1..=SEEDS {
        let measured = dir.path().join(format!("m{seed}.parquet"));
        synth::run(&SynthRequest {
            spec: SynthSpec {
                scenario: scenario.clone(),
                tether: tether.clone(),
                noise_std_m: 0.0004,
                seed,
                tolerance_m: 1e-10,
                generator: GENERATOR,
            },
            command: "examples/refine_seeds.rs".into(),
            out: measured.clone(),
            force: false,
        })
        .expect("synthesized");
        let report = IdentifyRequest {
            backend: Backend::Cpu,
            base: tether.clone(),
            scenario: Some(scenario.clone()),
            validate: 0,
            ..IdentifyRequest::new(
                &measured,
                grid.clone(),
                dir.path().join(format!("id{seed}")),
            )
        }
        .run(Hooks::default())
        .expect("identified");
        let refined = report.refined.expect("refined");
        let p = &refined.parameters;
        println!(
            "{seed:>4} {:>3} {:>10.1} {:>8.1} {:>9.5} {:>9.5}",
            refined.elements, p[0].value, p[0].standard_error, p[1].value, p[1].standard_error
        );
        estimates.push([
            (p[0].value, p[0].standard_error),
            (p[1].value, p[1].standard_error),
        ]);
    }
    for (i, name) in ["D", "C_D"].into_iter().enumerate() {
        let values: Vec<f64> = estimates.iter().map(|e| e[i].0).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let spread = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
            / (values.len() - 1) as f64)
            .sqrt();
        let se = estimates.iter().map(|e| e[i].1).sum::<f64>() / estimates.len() as f64;
        println!(
            "{name}: mean {mean:.5}, spread over the seeds {spread:.5}, mean standard error {se:.5}, ratio {:.2}",
            spread / se
        );
    }
}
