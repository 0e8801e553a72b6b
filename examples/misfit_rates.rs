//! How often does the goodness-of-fit test (src/misfit.rs) flag a model
//! that explains its film, and how often does it catch one that does not?
//!
//! False alarms: films of a drop made on the same mesh the fit uses (the
//! model is then exactly right), over marker noise 0.1, 0.5 and 2 mm, 25,
//! 60 and 240 frames a second and meshes n = 4, 8 and 12, each identified
//! over D and C_D and refined; `SEEDS` noise seeds each.
//! Detections: the same experiment (n = 8, 60 fps, 0.5 mm) with one known
//! input off by a little: the config's tether 1, 2 and 4 % longer than the
//! filmed one, its Young's modulus 5, 10 and 20 % higher, the release half a
//! frame and a frame later than the config's.
//! The mesh: films made at n = 24 (a stand-in for the continuum) fitted at
//! n = 4, 8 and 12: how coarse a mesh the test lets pass.
//!
//!     cargo run --release --example misfit_rates [SEEDS]
//!
//! (BENCHMARKS.md records its output; SEEDS defaults to 8, 216 films for
//! the false alarms and 8 for each misfit.)

#[path = "support/mod.rs"]
mod support;

use tether_sweep::engine::EngineOptions;
use tether_sweep::misfit::GoodnessOfFit;
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{DropSettings, Experiment, Frames, Scenario};
use tether_sweep::sweep::Grid;
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::IdentifyRequest;

const DURATION_S: f64 = 1.0;

/// A film made from `truth` and `scenario`, identified from `config`'s
/// tether and `fitted` scenario over D and C_D at the config's n.
struct Case<'a> {
    truth: &'a TetherParams,
    scenario: &'a Scenario,
    config: &'a TetherParams,
    fitted: &'a Scenario,
    noise_m: f64,
    seed: u64,
}

fn drop(fps: f64, release_time_s: f64) -> Scenario {
    let frames = (DURATION_S * fps).round() as usize;
    Scenario {
        experiment: Experiment::Drop(DropSettings {
            pin_m: [0.0, 0.0],
            initial_angle_deg: 30.0,
            release_time_s,
        }),
        frames: Frames::film((0..=frames).map(|f| f as f64 / fps).collect()),
        marker_arc_lengths_m: vec![0.0, 0.05, 0.12, 0.2, 0.31, 0.4, 0.5],
    }
}

fn judge(case: &Case<'_>, dir: &std::path::Path, name: &str) -> GoodnessOfFit {
    let measured = dir.join(format!("{name}.parquet"));
    support::film(
        case.scenario,
        case.truth,
        case.noise_m,
        case.seed,
        &measured,
        "examples/misfit_rates.rs",
    );
    let grid = Grid::parse(
        &case.config.elements.to_string(),
        "1500:3000:500",
        "0.7:0.85:0.05",
    )
    .expect("a grid");
    let mut request = IdentifyRequest {
        engine: EngineOptions::cpu(),
        base: case.config.clone(),
        validate: 0,
        allow_implausible: true,
        ..IdentifyRequest::new(&measured, grid, dir.join(name))
    };
    request.films[0].scenario = Some(case.fitted.clone());
    let report = request.run(Hooks::default()).expect("identified");
    report
        .goodness
        .into_iter()
        .next()
        .expect("a noise estimate")
        .test
}

fn row(label: &str, g: &GoodnessOfFit) -> String {
    let w = g.whiteness.as_ref().expect("refined");
    format!(
        "{label:<28} ratio {:.3} (limit {:.3}, ν {:>6.0}) z {:>6.2} (limit {:.2}) marker z {:>6.2} (limit {:.2}) {}",
        g.ratio,
        g.ratio_limit,
        g.noise_degrees_of_freedom.unwrap_or(f64::INFINITY),
        w.z,
        w.z_limit,
        w.worst_marker_z.unwrap_or(f64::NAN),
        w.marker_z_limit.unwrap_or(f64::NAN),
        match g.explains {
            true => "explains",
            false => "FLAGGED",
        }
    )
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SEEDS: a count"))
        .unwrap_or(8);
    let dir = tempfile::tempdir().expect("a temporary directory");
    println!(
        "False alarms: the fit's model is the film's (n, tether, release); {seeds} seeds each"
    );
    let (mut films, mut alarms) = (0, 0);
    let mut by_test = [0usize; 3];
    for noise_mm in [0.1, 0.5, 2.0] {
        for fps in [25.0, 60.0, 240.0] {
            for n in [4, 8, 12] {
                let (t, s) = (support::filmed_tether(n), drop(fps, 0.0));
                let mut flagged = 0;
                for seed in 1..=seeds {
                    let case = Case {
                        truth: &t,
                        scenario: &s,
                        config: &t,
                        fitted: &s,
                        noise_m: 1e-3 * noise_mm,
                        seed,
                    };
                    let name = format!("c{noise_mm}_{fps}_{n}_{seed}");
                    let g = judge(&case, dir.path(), &name);
                    films += 1;
                    if !g.explains {
                        flagged += 1;
                        alarms += 1;
                        println!("  {}", row(&name, &g));
                    }
                    let w = g.whiteness.as_ref().expect("refined");
                    by_test[0] += usize::from(g.ratio > g.ratio_limit);
                    by_test[1] += usize::from(w.z > w.z_limit);
                    by_test[2] += usize::from(
                        w.worst_marker_z.unwrap_or(0.0) > w.marker_z_limit.unwrap_or(f64::INFINITY),
                    );
                }
                println!(
                    "noise {noise_mm:>3} mm, {fps:>3} fps, n = {n:>2}: {flagged} of {seeds} flagged"
                );
            }
        }
    }
    println!(
        "false alarms: {alarms} of {films} ({:.1} %; variance {}, pooled whiteness {}, a marker's whiteness {}); the tests' stated rate {} %",
        100.0 * alarms as f64 / films as f64,
        by_test[0],
        by_test[1],
        by_test[2],
        100.0 * tether_sweep::misfit::FALSE_ALARM
    );
    // Clopper–Pearson's one-sided 95 % upper bound on the rate.
    let upper = match alarms {
        0 => 1.0 - 0.05f64.powf(1.0 / films as f64),
        _ => {
            use statrs::distribution::{Beta, ContinuousCDF};
            Beta::new(alarms as f64 + 1.0, (films - alarms) as f64)
                .expect("a beta distribution")
                .inverse_cdf(0.95)
        }
    };
    println!(
        "the false-alarm rate is below {:.2} % (95 % upper bound)",
        100.0 * upper
    );

    println!("\nThe mesh: films made at n = 24 (60 fps), fitted at a coarser n");
    for noise_mm in [0.1, 0.5, 2.0] {
        let (fine, s) = (support::filmed_tether(24), drop(60.0, 0.0));
        for n in [4, 8, 12] {
            let coarse = support::filmed_tether(n);
            let mut caught = 0;
            let mut ratios = Vec::new();
            for seed in 1..=seeds {
                let case = Case {
                    truth: &fine,
                    scenario: &s,
                    config: &coarse,
                    fitted: &s,
                    noise_m: 1e-3 * noise_mm,
                    seed,
                };
                let g = judge(&case, dir.path(), &format!("n{noise_mm}_{n}_{seed}"));
                caught += usize::from(!g.explains);
                ratios.push(g.ratio);
            }
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            println!(
                "noise {noise_mm:>3} mm, fitted at n = {n:>2}: {caught} of {seeds} flagged (mean σ/σ₀ {mean:.2})"
            );
        }
    }

    println!("\nDetections: n = 8, 60 fps, 0.5 mm; one known input off");
    let truth = support::filmed_tether(8);
    let filmed = drop(60.0, 0.0);
    let misfits: Vec<(String, TetherParams, Scenario)> = {
        let mut m = Vec::new();
        for pct in [1.0, 2.0, 4.0] {
            // The config's tether is longer than the filmed one.
            let mut t = truth.clone();
            t.length_m = truth.length_m * (1.0 + 0.01 * pct);
            m.push((format!("length {pct} % long"), t, filmed.clone()));
        }
        for pct in [5.0, 10.0, 20.0] {
            let mut t = truth.clone();
            t.youngs_modulus_pa = truth.youngs_modulus_pa / (1.0 + 0.01 * pct);
            m.push((format!("modulus {pct} % low"), t, filmed.clone()));
        }
        for frames in [0.5, 1.0] {
            // The film's release is later than the config's 0.
            m.push((
                format!("release {frames} frame early"),
                truth.clone(),
                drop(60.0, 0.0),
            ));
        }
        m
    };
    for (label, config, fitted) in &misfits {
        let release_s = match label.strip_prefix("release ") {
            Some(rest) => rest.split(' ').next().unwrap().parse::<f64>().unwrap() / 60.0,
            None => 0.0,
        };
        let scenario = drop(60.0, release_s);
        let mut caught = 0;
        for seed in 1..=seeds {
            let case = Case {
                truth: &truth,
                scenario: &scenario,
                config,
                fitted,
                noise_m: 5e-4,
                seed,
            };
            let name = format!("m{}_{seed}", label.replace([' ', '%', '.'], "_"));
            let g = judge(&case, dir.path(), &name);
            caught += usize::from(!g.explains);
            if seed == 1 {
                println!("  {}", row(label, &g));
            }
        }
        println!("{label:<28}: {caught} of {seeds} flagged");
    }
}
