//! The GPU's adaptive implicit scheme in f32 against f64, on its CPU
//! mirror (the stage's arithmetic in IEEE f32): the steps each takes on a
//! 0.4-s drop per n, D and tolerance. Where f32 needs many more steps than
//! f64, its rounding, not the tolerance, drives the step control: that
//! tolerance is below f32's floor for that n (`gpu::adaptive::f32_tolerance_floor_m`).
//!
//!     cargo run --release --example f32_floor

use rayon::prelude::*;
use tether_sweep::gpu::Precision;
use tether_sweep::gpu::adaptive::AdaptiveOptions;
use tether_sweep::gpu::batch::chunk_data;
use tether_sweep::gpu::mirror::adaptive::run_adaptive;
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::batch::{StepCache, adaptive_landings, gpu_simulation};
use tether_sweep::scenario::{Scenario, ScenarioKind};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::solver::ReferenceOptions;

fn steps(elements: usize, damping_pa_s: f64, tolerance_m: f64, precision: Precision) -> u64 {
    let scenario = Scenario::new(ScenarioKind::Drop, 0.6).with_duration_s(0.4);
    let params = TetherParams {
        elements,
        damping_pa_s,
        drag_coefficient: 0.8,
        ..TetherParams::default()
    };
    let sim = gpu_simulation(
        &scenario,
        &params,
        FixedStepScheme::Explicit,
        Some(scenario.sample_interval_s()),
        &StepCache::default(),
    )
    .expect("a valid drop");
    let data = chunk_data(&[&sim]).expect("its upload");
    let r = ReferenceOptions {
        tolerance_m,
        ..Default::default()
    };
    let options = AdaptiveOptions {
        tolerance_m,
        spectral_radius: r.spectral_radius,
        max_step_s: r.max_step_s,
        initial_step_s: r.initial_step_s,
    };
    let landings = adaptive_landings(&scenario, &sim);
    let outcome =
        run_adaptive(&sim, &data, &landings, &options, None, precision).expect("a mirror run");
    outcome.stats.steps + outcome.stats.rejected_steps
}

fn main() {
    let tolerances = [5e-8, 1e-7, 2e-7, 5e-7, 1e-6];
    let cases: Vec<(usize, f64)> = [10, 20, 30, 40, 50, 80, 120]
        .iter()
        .flat_map(|&n| [100.0, 2000.0].map(|d| (n, d)))
        .collect();
    println!("attempted steps, f32 / f64, 0.4-s drop, C_D = 0.8");
    print!("{:>4} {:>6}", "n", "D");
    for t in tolerances {
        print!(" {:>16}", format!("{t:e} m"));
    }
    println!();
    let rows: Vec<String> = cases
        .par_iter()
        .map(|&(n, d)| {
            let mut row = format!("{n:>4} {d:>6}");
            for t in tolerances {
                let single = steps(n, d, t, Precision::F32);
                let double = steps(n, d, t, Precision::F64);
                row += &format!(
                    " {:>16}",
                    format!("{:.2} ({double})", single as f64 / double as f64)
                );
            }
            row
        })
        .collect();
    for row in rows {
        println!("{row}");
    }
}
