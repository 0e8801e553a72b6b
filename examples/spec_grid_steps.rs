//! The steps each fixed-step scheme takes over the paper's grid (docs/model.md §6:
//! n 10–50 by 10, D 0–10000 by 100 Pa·s, C_D 0.6–0.9 by 0.05; 2-s drops),
//! from the step rule each uses (docs/model.md §8), per n and in total:
//! the GPU's cost is its steps. The reference solver's count is its own
//! (the `steps` column of `identify --grid examples/paper_grid.toml`).
//!
//!     cargo run --release --example spec_grid_steps

use tether_sweep::model::{Tether, TetherParams};
use tether_sweep::scenario::{Scenario, ScenarioKind, fixed_step};
use tether_sweep::scheme::FixedStepScheme;

fn main() {
    let schemes = [FixedStepScheme::SemiImplicit, FixedStepScheme::Explicit];
    println!("n\tsemi_implicit_steps\texplicit_steps");
    let mut totals = [0u64; 2];
    for elements in (10..=50).step_by(10) {
        let mut per_n = [0u64; 2];
        for d in 0..=100 {
            for c in 0..=6 {
                let params = TetherParams {
                    elements,
                    damping_pa_s: 100.0 * d as f64,
                    drag_coefficient: 0.6 + 0.05 * c as f64,
                    ..TetherParams::default()
                };
                let scenario = Scenario::new(ScenarioKind::Drop, params.length_m);
                let tether = Tether::new(params).expect("a valid tether");
                let (q0, _) = scenario.initial_state(&tether).expect("a state");
                for (k, scheme) in schemes.iter().enumerate() {
                    let h = fixed_step(*scheme, None, &tether, &q0, &scenario).expect("a step");
                    per_n[k] += (scenario.duration_s() / h).round() as u64;
                }
            }
        }
        println!("{elements}\t{}\t{}", per_n[0], per_n[1]);
        totals[0] += per_n[0];
        totals[1] += per_n[1];
    }
    println!("total\t{}\t{}", totals[0], totals[1]);
}
