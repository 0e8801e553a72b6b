//! Which method and tolerance the GA's confirmation should run: the
//! swing-up's J_a,min on the default problem (`swingup`'s defaults), for
//! chromosomes spread over the search space and the three fittest of the
//! default GA run (searched here first, on the CPU, as `swingup` does),
//! with generalized-α at the confirmation's 1e-10 m and Radau IIA at a
//! range of tolerances; each against Radau at 1e-13 m (checked against
//! generalized-α at 1e-12 m on every chromosome), with its wall time.
//!
//!     cargo run --release --example confirm_method [-- --repeats 3]
//!
//! One thread; each wall time the best of `--repeats` runs (default 3).

use std::time::Instant;

use tether_sweep::engine::Engine;
use tether_sweep::ga::confirm::{CONFIRMATION_METHOD, CONFIRMATION_TOLERANCE_M};
use tether_sweep::ga::{Evaluator, fitter};
use tether_sweep::named::Named;
use tether_sweep::scenario::{SolverSettings, simulate};
use tether_sweep::solver::ImplicitMethod;
use tether_sweep::workflow::swingup::SwingupInputs;

/// The confirmation before it moved to Radau: generalized-α at this
/// tolerance \[m\], the first row every other is compared with.
const GENERALIZED_ALPHA_CONFIRMATION_M: f64 = 1e-10;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repeats: usize = args
        .iter()
        .position(|a| a == "--repeats")
        .and_then(|at| args.get(at + 1)?.parse().ok())
        .unwrap_or(3);
    let request = SwingupInputs::default().request();
    let problem = request.problem;
    let coding = problem.coding;
    // The default run's search, as `swingup --backend cpu` makes it.
    let search = Evaluator::new(Engine::cpu(SolverSettings::reference_at(
        request.tolerance_m,
    )));
    let run = tether_sweep::ga::run(
        &coding,
        &request.settings,
        |c: &[u32]| search.evaluate(&problem, c, None),
        |_| {},
    )
    .expect("the default GA runs");
    let mut scored = run.scored();
    scored.retain(|i| i.evaluation.j_a_min_m.is_some());
    scored.sort_by(fitter);
    let mut chromosomes: Vec<u32> = scored.iter().take(3).map(|i| i.chromosome).collect();
    let space = coding.space_size() as u32;
    chromosomes.extend((0..9).map(|k| (k * space / 9 + 1234) % space));
    let j_a_min = |chromosome: u32, method: ImplicitMethod, tolerance_m: f64, repeats: usize| {
        let scenario = problem.scenario_for(chromosome);
        let mut settings = SolverSettings::reference_at(tolerance_m);
        settings.reference.method = method;
        let mut best_s = f64::INFINITY;
        let mut value = f64::NAN;
        for _ in 0..repeats.max(1) {
            let start = Instant::now();
            let out = simulate(&scenario, &problem.params, &settings).expect("the swing-up runs");
            best_s = best_s.min(start.elapsed().as_secs_f64());
            value = out.swingup.map_or(f64::NAN, |s| s.j_a_min);
        }
        (value, best_s)
    };
    let candidates: Vec<(ImplicitMethod, f64)> = std::iter::once((
        ImplicitMethod::GeneralizedAlpha,
        GENERALIZED_ALPHA_CONFIRMATION_M,
    ))
    .chain(
        [1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10]
            .into_iter()
            .map(|t| (ImplicitMethod::Radau5, t)),
    )
    .collect();
    println!("chromosome\tbits\tmethod\ttolerance_m\tj_a_min_m\terror_m\twall_s");
    let mut worst = vec![0.0f64; candidates.len()];
    let mut total_s = vec![0.0f64; candidates.len()];
    for &c in &chromosomes {
        let (truth, _) = j_a_min(c, ImplicitMethod::Radau5, 1e-13, 1);
        let (check, _) = j_a_min(c, ImplicitMethod::GeneralizedAlpha, 1e-12, 1);
        eprintln!(
            "{}: J_a,min {truth:.9} m (Radau 1e-13 m), generalized-α at 1e-12 m {:.1e} m off",
            coding.bit_string(c),
            (check - truth).abs()
        );
        for (i, &(method, tolerance_m)) in candidates.iter().enumerate() {
            let (value, wall_s) = j_a_min(c, method, tolerance_m, repeats);
            let error_m = (value - truth).abs();
            worst[i] = worst[i].max(error_m);
            total_s[i] += wall_s;
            println!(
                "{c}\t{}\t{}\t{tolerance_m:e}\t{value:.9}\t{error_m:.2e}\t{wall_s:.4}",
                coding.bit_string(c),
                method.name()
            );
        }
    }
    eprintln!(
        "method\ttolerance_m\tworst_error_m\ttotal_wall_s\tgalpha_confirmation_over_it\tconfirmation"
    );
    for (i, &(method, tolerance_m)) in candidates.iter().enumerate() {
        eprintln!(
            "{}\t{tolerance_m:e}\t{:.2e}\t{:.3}\t{:.2}\t{}",
            method.name(),
            worst[i],
            total_s[i],
            total_s[0] / total_s[i],
            // The confirmation `ga::confirm` runs now.
            if (method, tolerance_m) == (CONFIRMATION_METHOD, CONFIRMATION_TOLERANCE_M) {
                "shipped"
            } else {
                ""
            }
        );
    }
}
