//! The reference solver's method and tolerance chosen from what the
//! comparison can resolve: the one rule (docs/identify.md, "How accurately
//! each candidate is simulated").
//!
//! **The rule.** A track error δ (the simulated marker coordinates' error,
//! RMS e over the N compared coordinates, so |δ| = e √N) moves a
//! candidate's J_e by about |δ|² + 2 σ |δ|: its square, and its product
//! with the residual, whose noise part (σ a coordinate) is independent of
//! the solver's error. The confidence region is J_e ≤ J_min + σ² χ²₂(95 %).
//! The tolerance is the loosest whose track error keeps that move below
//! [`THRESHOLD_FRACTION`] of the threshold: with u = |δ|/σ,
//! u² + 2u ≤ f χ²₂. The same u bounds how far the error can move a
//! least-squares estimate, in units of its standard error (Cauchy–Schwarz
//! on (JᵀJ)⁻¹Jᵀδ): at most u, in practice far less, as only δ's part
//! along the parameters' sensitivities moves them.
//!
//! **From tolerance to track error, per method.** The reference solver
//! bounds each step's local error τ; how the track's error e follows τ is
//! the method's ([`ErrorLaw`]): generalized-α's grows as τ^(2/3) (a
//! second-order scheme whose steps scale as τ^(1/3)), Radau IIA's nearly
//! as τ (its estimate is of its error). Each gain is the largest e / τ^p
//! measured over the paper's grid's corners against runs at 1e-12 m
//! (`cargo run --release --example tolerance_gain [-- --method radau5]`).
//!
//! **Which method.** Radau IIA wherever the track error asked is at most
//! [`RADAU_UP_TO_TRACK_ERROR_M`], generalized-α above it, each at the
//! tolerance its own law gives: there Radau's wall time was generalized-α's
//! or less in every case measured (`examples/method_rule.rs`,
//! BENCHMARKS.md); above it, on damped tethers, it was not.
//!
//! **Where σ comes from.** From the data: σ² = J_min / (N − 2) of the
//! grid's best, as the region itself uses. So a whole run sweeps at a
//! scouting tolerance ([`SCOUT_TOLERANCE_M`], generalized-α's), then
//! re-runs with the chosen method and tolerance every candidate whose J_e
//! is within the threshold plus a margin of the best, and each n's best
//! ([`confirm`]): the best, the region and the refinement are those of
//! the chosen accuracy, and the margin is checked against the J_e shifts
//! the re-runs measure.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::{
    CONFIDENCE_LEVEL, Candidate, CandidateResult, Grid, Summary, chi2_quantile, summarize,
};
use crate::named::Named;
use crate::scenario::SolverSettings;
use crate::solver::{ImplicitMethod, ReferenceOptions};

/// How a method's RMS marker error e grows with its local error
/// tolerance τ: e ≤ gain τ^exponent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorLaw {
    /// \[m^(1 − exponent)\]
    pub gain: f64,
    pub exponent: f64,
}

/// Generalized-α's law: the largest e / τ^(2/3) measured (1.18, n = 50,
/// D = 100, C_D = 0.6 at τ = 1e-9 m), rounded up.
pub const GENERALIZED_ALPHA_LAW: ErrorLaw = ErrorLaw {
    gain: 1.2,
    exponent: 2.0 / 3.0,
};
/// Radau IIA's law: the largest e / τ measured (14.0, n = 50, D = 0,
/// C_D = 0.6 at τ = 1e-9 m), rounded up. Over the tolerances measured,
/// 1e-9 to 1e-6 m, e/τ grows as τ falls at n = 50 undamped (8.1, 8.4,
/// 11.3, 14.0; e ∝ τ^0.9) and stays near 7–9 at n = 10 and 30: so asks
/// below 1.5e-8 m (τ < 1e-9 m) extrapolate it, as generalized-α's law is
/// extrapolated below its 1e-9 m. It is 10–100× below the measured e on
/// tethers damped from 500 Pa·s, so the rule is conservative there.
pub const RADAU_LAW: ErrorLaw = ErrorLaw {
    gain: 15.0,
    exponent: 1.0,
};
/// The largest track error \[m\] the rule asks of Radau IIA rather than
/// generalized-α, each at its own law's tolerance: the largest of those
/// measured (4e-6, 2e-6, 1e-6, 5e-7, 1e-7 m; n = 10 and 50, D = 0–10000)
/// at which Radau was slower in no case with a margin (1.08–7.16× faster
/// at 5e-7 m, re-measured after its complex solve was written out). At
/// 1e-6 m it was 1.01–1.31× on tethers damped from 500 Pa·s (0.92–0.99×
/// before its looser Newton stop: a tie), at 4e-6 m (the shipped films'
/// ask) 0.78–0.94×: there Radau's steps are bound by
/// its Newton iteration's contraction (a fresh tangent nearly every step)
/// rather than its error, and generalized-α's error law is the cheaper
/// (`cargo run --release --example method_rule`).
pub const RADAU_UP_TO_TRACK_ERROR_M: f64 = 5e-7;
/// The fraction of the confidence threshold a track error may move J_e.
pub const THRESHOLD_FRACTION: f64 = 0.1;
/// The tightest tolerance the rule chooses \[m\]: below it round-off,
/// not the step, limits the reference solver.
pub const TIGHTEST_TOLERANCE_M: f64 = 1e-11;
/// The loosest \[m\]: beyond it the Newton iteration's start, not the
/// error estimate, decides the steps, and the gains above are unmeasured.
pub const LOOSEST_TOLERANCE_M: f64 = 1e-6;
/// The tolerance of a whole run's first pass over the grid \[m\],
/// generalized-α's: a speed choice only, as the candidates the answer
/// depends on are re-run at the chosen accuracy. At 1e-7 m the paper's
/// grid takes about 40 % of its time at 1e-9 m, and J_e near the paper's
/// optimum moves by about a fifth of the threshold.
pub const SCOUT_TOLERANCE_M: f64 = 1e-7;
/// The margin above the threshold, as a multiple of the largest J_e shift
/// the re-runs measured: a candidate left out must have moved more than
/// half of it, twice what any candidate re-run moved, and the best's own
/// shift is in it too.
const MARGIN_PER_SHIFT: f64 = 4.0;

/// The refinement re-runs at its own σ's accuracy when that asks a track
/// error below this fraction of the grid's. The refined σ is nearly
/// always a little below the grid's (the refined J_e is lower), so
/// re-running at any smaller track error would refine every run twice;
/// within this fraction the track error is at most 1/0.63 of the rule's,
/// u ≤ 0.42, and J_e moves by at most 0.17 of the refined threshold
/// instead of 0.1.
pub const REFINEMENT_RERUN_FRACTION: f64 = 0.63;

impl ErrorLaw {
    /// The law of `method`; ESDIRK's is unmeasured, so none (the rule
    /// never chooses it).
    pub fn of(method: ImplicitMethod) -> Option<Self> {
        match method {
            ImplicitMethod::GeneralizedAlpha => Some(GENERALIZED_ALPHA_LAW),
            ImplicitMethod::Radau5 => Some(RADAU_LAW),
            ImplicitMethod::Esdirk43 => None,
        }
    }

    /// The RMS marker error to expect at local error tolerance
    /// `tolerance_m` \[m\] (an upper estimate: the gain is the largest
    /// measured).
    pub fn track_error_m(&self, tolerance_m: f64) -> f64 {
        self.gain * tolerance_m.powf(self.exponent)
    }

    /// The loosest tolerance whose track error stays below
    /// `track_error_m`, within [`TIGHTEST_TOLERANCE_M`,
    /// `LOOSEST_TOLERANCE_M`].
    pub fn tolerance_for(&self, track_error_m: f64) -> f64 {
        (track_error_m / self.gain)
            .powf(1.0 / self.exponent)
            .clamp(TIGHTEST_TOLERANCE_M, LOOSEST_TOLERANCE_M)
    }
}

/// The method the rule runs for a track error of `track_error_m`.
pub fn method_for_track_error(track_error_m: f64) -> ImplicitMethod {
    match track_error_m <= RADAU_UP_TO_TRACK_ERROR_M {
        true => ImplicitMethod::Radau5,
        false => ImplicitMethod::GeneralizedAlpha,
    }
}

/// The method and tolerance the data call for, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// The marker noise the rule assumed, σ \[m\].
    pub noise_m: f64,
    /// Compared coordinates N.
    pub observations: usize,
    /// The confidence threshold above J_min, σ² χ²₂ \[m²\].
    pub threshold_m2: f64,
    /// The RMS track error allowed a coordinate \[m\].
    pub track_error_m: f64,
    /// The reference solver's method for that track error (records
    /// before it was chosen ran generalized-α).
    #[serde(default = "generalized_alpha")]
    pub method: ImplicitMethod,
    /// The method's local error tolerance \[m\].
    pub tolerance_m: f64,
}

fn generalized_alpha() -> ImplicitMethod {
    ImplicitMethod::GeneralizedAlpha
}

impl Accuracy {
    /// The rule for markers with noise `noise_m` over `observations`
    /// compared coordinates.
    pub fn from_noise(noise_m: f64, observations: usize) -> Self {
        let chi2 = chi2_quantile(2, CONFIDENCE_LEVEL);
        // u² + 2u = f χ²: the root of the quadratic.
        let u = (1.0 + THRESHOLD_FRACTION * chi2).sqrt() - 1.0;
        let track_error_m = u * noise_m / (observations.max(1) as f64).sqrt();
        let method = method_for_track_error(track_error_m);
        let law = ErrorLaw::of(method).expect("the rule chooses a measured method");
        Self {
            noise_m,
            observations,
            threshold_m2: noise_m * noise_m * chi2,
            track_error_m,
            method,
            tolerance_m: law.tolerance_for(track_error_m),
        }
    }

    /// The reference solver at this method and tolerance.
    pub fn reference(&self) -> SolverSettings {
        reference(self.method, self.tolerance_m)
    }
}

/// The reference solver running `method` at `tolerance_m`.
fn reference(method: ImplicitMethod, tolerance_m: f64) -> SolverSettings {
    let mut settings = SolverSettings::reference_at(tolerance_m);
    settings.reference.method = method;
    settings
}

/// The reference solver's method and tolerance for what a run decides
/// (the best, the region, the refinement), and how they were chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chosen {
    /// The method of the best fit and the refinement (records before it
    /// was chosen ran generalized-α).
    #[serde(default = "generalized_alpha")]
    pub method: ImplicitMethod,
    /// The tolerance of the best fit and the refinement \[m\].
    pub tolerance_m: f64,
    /// `--tolerance`: everything ran at it, generalized-α.
    pub given: bool,
    /// The rule's choice from the data (absent when given, or when no
    /// candidate had a J_e).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<Accuracy>,
    /// The re-runs of a first pass at the scouting tolerance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// The rule for the refined σ, when it asked a track error below
    /// [`REFINEMENT_RERUN_FRACTION`] of the grid's: the refinement went on
    /// at it from its values, and the best fit ran at it (`method`,
    /// `tolerance_m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refinement: Option<Accuracy>,
}

impl Chosen {
    /// `--tolerance` for everything, on generalized-α.
    pub fn given(tolerance_m: f64) -> Self {
        Self {
            method: ImplicitMethod::GeneralizedAlpha,
            tolerance_m,
            given: true,
            accuracy: None,
            confirmation: None,
            refinement: None,
        }
    }

    /// The rule's choice for a sweep's summary, whose σ is the data's.
    pub fn from_summary(summary: &Summary, observations: usize) -> Self {
        let noise_m = summary.confidence.sigma2_m2.sqrt();
        Self::from_data(Accuracy::from_noise(noise_m, observations), None)
    }

    /// The reference solver at the chosen method and tolerance, or at its
    /// defaults where nothing was chosen (no candidate had a J_e).
    pub fn reference(chosen: Option<&Self>) -> SolverSettings {
        match chosen {
            Some(c) => reference(c.method, c.tolerance_m),
            None => reference(
                ReferenceOptions::DEFAULT.method,
                ReferenceOptions::DEFAULT.tolerance_m,
            ),
        }
    }

    /// The method and tolerance in words ([`describe`]).
    pub fn describe(&self) -> String {
        describe(self.method, self.tolerance_m)
    }

    /// The rule's choice, with the confirmation that applied it, if any.
    pub fn from_data(accuracy: Accuracy, confirmation: Option<Confirmation>) -> Self {
        Self {
            method: accuracy.method,
            tolerance_m: accuracy.tolerance_m,
            given: false,
            accuracy: Some(accuracy),
            confirmation,
            refinement: None,
        }
    }

    /// The choice tightened for a refinement whose own σ over
    /// `observations` asks a track error below
    /// [`REFINEMENT_RERUN_FRACTION`] of this one's; None: this one holds
    /// (or it was given).
    pub fn tightened_for_refinement(&self, sigma_m: f64, observations: usize) -> Option<Self> {
        // A given tolerance has no rule's accuracy to tighten.
        let governing = self.refinement.or(self.accuracy)?;
        let refined = Accuracy::from_noise(sigma_m, observations);
        (refined.track_error_m < REFINEMENT_RERUN_FRACTION * governing.track_error_m).then(|| {
            Self {
                method: refined.method,
                tolerance_m: refined.tolerance_m,
                refinement: Some(refined),
                ..self.clone()
            }
        })
    }
}

/// A method and tolerance in words: "radau5 at 2.6e-7 m".
pub fn describe(method: ImplicitMethod, tolerance_m: f64) -> String {
    format!("{} at {tolerance_m:.1e} m", method.name())
}

/// What the confirmation re-ran, and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    pub accuracy: Accuracy,
    /// The first pass's tolerance \[m\].
    pub scout_tolerance_m: f64,
    /// Candidates re-run at the chosen tolerance.
    pub confirmed: usize,
    /// Re-run were those within the threshold plus this margin of the
    /// first pass's best \[m²\] (and each n's best).
    pub margin_m2: f64,
    /// The largest |J_e| change between the two passes over the
    /// candidates re-run \[m²\].
    pub largest_shift_m2: f64,
    /// Rounds of re-runs: each adds the candidates a margin grown from
    /// the last round's shifts brings inside, until none is left.
    pub rounds: usize,
}

/// Chooses the method and tolerance from a first pass's `results` (all
/// on generalized-α at `scout_tolerance_m`) and re-runs, with them, what
/// the best, the region and each n's best depend on, replacing those
/// results in place. `rerun` runs candidates on the reference solver's
/// settings. None: nothing to choose from (no candidate has a J_e).
pub fn confirm<E>(
    grid: &Grid,
    results: &mut [CandidateResult],
    observations: usize,
    scout_tolerance_m: f64,
    mut rerun: impl FnMut(&[Candidate], &SolverSettings) -> Result<Vec<CandidateResult>, E>,
) -> Result<Option<Confirmation>, E> {
    let Some(first) = summarize(grid, results, observations) else {
        return Ok(None);
    };
    let accuracy = Accuracy::from_noise(first.confidence.sigma2_m2.sqrt(), observations);
    let mut confirmation = Confirmation {
        accuracy,
        scout_tolerance_m,
        confirmed: 0,
        margin_m2: accuracy.threshold_m2,
        largest_shift_m2: 0.0,
        rounds: 0,
    };
    if accuracy.track_error_m >= GENERALIZED_ALPHA_LAW.track_error_m(scout_tolerance_m) {
        // The first pass is already as accurate as the data need.
        return Ok(Some(confirmation));
    }
    let scout: Vec<Option<f64>> = results.iter().map(|r| r.j_e_m2).collect();
    let scout_min = first.best.j_e_m2.expect("the best has a J_e");
    let mut done: HashSet<usize> = HashSet::new();
    // Each round only adds candidates, so the loop ends, at worst with
    // every candidate re-run.
    loop {
        let cutoff = scout_min + accuracy.threshold_m2 + confirmation.margin_m2;
        let near: HashSet<usize> = (0..results.len())
            .filter(|i| !done.contains(i) && scout[*i].is_some_and(|j| j <= cutoff))
            .collect();
        // Each n's best once, with the first round: far from the best it
        // is reported, not decided on, and its shift (the solver's error
        // times a misfit far above the noise) says nothing of the margin.
        let mut picked: Vec<usize> = near.iter().copied().collect();
        if confirmation.rounds == 0 {
            picked.extend(
                best_per_elements(grid, results)
                    .into_iter()
                    .filter(|i| !near.contains(i)),
            );
        }
        if picked.is_empty() {
            break;
        }
        picked.sort_unstable();
        confirmation.rounds += 1;
        let candidates: Vec<Candidate> = picked.iter().map(|&i| results[i].candidate).collect();
        for (&i, result) in picked
            .iter()
            .zip(rerun(&candidates, &accuracy.reference())?)
        {
            if let (Some(a), Some(b)) = (scout[i], result.j_e_m2)
                && near.contains(&i)
            {
                confirmation.largest_shift_m2 = confirmation.largest_shift_m2.max((a - b).abs());
            }
            results[i] = result;
            done.insert(i);
        }
        confirmation.confirmed = done.len();
        confirmation.margin_m2 = confirmation
            .margin_m2
            .max(MARGIN_PER_SHIFT * confirmation.largest_shift_m2);
    }
    Ok(Some(confirmation))
}

/// Each n's best result's index.
fn best_per_elements(grid: &Grid, results: &[CandidateResult]) -> Vec<usize> {
    grid.elements()
        .into_iter()
        .filter_map(|n| {
            (0..results.len())
                .filter(|&i| results[i].candidate.elements == n)
                .filter(|&i| results[i].j_e_m2.is_some())
                .min_by(|&a, &b| {
                    results[a]
                        .j_e_m2
                        .unwrap()
                        .total_cmp(&results[b].j_e_m2.unwrap())
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::RunStatus;

    #[test]
    fn the_rule_keeps_the_j_e_move_at_its_fraction_of_the_threshold() {
        let a = Accuracy::from_noise(5e-4, 1100);
        let moved = |e: f64| {
            let delta = e * (a.observations as f64).sqrt();
            delta * delta + 2.0 * a.noise_m * delta
        };
        let ratio = moved(a.track_error_m) / a.threshold_m2;
        assert!((ratio - THRESHOLD_FRACTION).abs() < 1e-9, "{ratio}");
        // The tolerance gives that track error back, by the method's law.
        assert_eq!(a.method, ImplicitMethod::GeneralizedAlpha);
        let law = ErrorLaw::of(a.method).unwrap();
        assert!((law.track_error_m(a.tolerance_m) / a.track_error_m - 1.0).abs() < 1e-9);
        // More markers or less noise ask for more accuracy.
        assert!(Accuracy::from_noise(5e-4, 4400).tolerance_m < a.tolerance_m);
        assert!(Accuracy::from_noise(1e-4, 1100).tolerance_m < a.tolerance_m);
        // Within its bounds whatever the data.
        assert_eq!(
            Accuracy::from_noise(1e-12, 1100).tolerance_m,
            TIGHTEST_TOLERANCE_M
        );
        assert_eq!(
            Accuracy::from_noise(1.0, 10).tolerance_m,
            LOOSEST_TOLERANCE_M
        );
    }

    #[test]
    fn radau_takes_the_track_errors_up_to_its_bound_and_generalized_alpha_the_rest() {
        // The bound's track error is 0.2645 σ / √N: the shipped film's
        // σ = 0.5 mm over 1,100 coordinates asks 4e-6 m, generalized-α's
        // ground; 0.1 mm over 4,400 asks 4e-7 m, Radau's.
        let shipped = Accuracy::from_noise(5e-4, 1100);
        assert!(shipped.track_error_m > RADAU_UP_TO_TRACK_ERROR_M);
        assert_eq!(shipped.method, ImplicitMethod::GeneralizedAlpha);
        let precise = Accuracy::from_noise(1e-4, 4400);
        assert_eq!(precise.method, ImplicitMethod::Radau5);
        let law = RADAU_LAW;
        assert!(
            (law.track_error_m(precise.tolerance_m) / precise.track_error_m - 1.0).abs() < 1e-9
        );
        for e in [RADAU_UP_TO_TRACK_ERROR_M, 1e-7] {
            assert_eq!(method_for_track_error(e), ImplicitMethod::Radau5);
        }
        assert_eq!(
            method_for_track_error(1.01 * RADAU_UP_TO_TRACK_ERROR_M),
            ImplicitMethod::GeneralizedAlpha
        );
        // The same track error asks Radau for a far looser tolerance.
        let e = 3.9e-6;
        assert!(RADAU_LAW.tolerance_for(e) > 40.0 * GENERALIZED_ALPHA_LAW.tolerance_for(e));
        // The settings carry both.
        let radau = precise.reference();
        assert_eq!(radau.reference.method, ImplicitMethod::Radau5);
        assert_eq!(
            Chosen::from_data(precise, None).describe(),
            format!("radau5 at {:.1e} m", radau.reference.tolerance_m)
        );
        assert_eq!(
            Chosen::reference(Some(&Chosen::given(1e-8)))
                .reference
                .method,
            ImplicitMethod::GeneralizedAlpha
        );
        assert_eq!(ErrorLaw::of(ImplicitMethod::Esdirk43), None);
    }

    #[test]
    fn a_record_from_before_the_method_was_chosen_reads_as_generalized_alpha() {
        let text = r#"{"tolerance_m":5.9e-9,"given":false,"accuracy":{"noise_m":4.9e-4,"observations":1100,"threshold_m2":1.4e-6,"track_error_m":3.9e-6,"tolerance_m":5.9e-9}}"#;
        let old: Chosen = serde_json::from_str(text).unwrap();
        assert_eq!(old.method, ImplicitMethod::GeneralizedAlpha);
        assert_eq!(
            old.accuracy.unwrap().method,
            ImplicitMethod::GeneralizedAlpha
        );
        let now = Chosen::from_data(Accuracy::from_noise(5e-4, 1100), None);
        let again: Chosen = serde_json::from_str(&serde_json::to_string(&now).unwrap()).unwrap();
        assert_eq!(again, now);
    }

    #[test]
    fn a_refinement_tightens_only_what_its_own_noise_asks_far_below() {
        let grid = Chosen::from_data(Accuracy::from_noise(7.4e-4, 672), None);
        // The tracker example: σ 0.74 mm on the grid, 0.39 mm refined.
        let tight = grid.tightened_for_refinement(3.9e-4, 672).unwrap();
        assert_eq!(tight.refinement.unwrap().noise_m, 3.9e-4);
        assert_eq!(tight.tolerance_m, tight.refinement.unwrap().tolerance_m);
        assert_eq!(tight.method, tight.refinement.unwrap().method);
        assert!(
            tight.refinement.unwrap().track_error_m
                < REFINEMENT_RERUN_FRACTION * grid.accuracy.unwrap().track_error_m
        );
        assert!(tight.tolerance_m < grid.tolerance_m);
        assert_eq!(tight.accuracy, grid.accuracy);
        // Once tightened, its own accuracy is what a further σ compares with.
        assert_eq!(tight.tightened_for_refinement(3.5e-4, 672), None);
        // A refined σ a little below the grid's, as nearly always: no
        // second refinement.
        assert_eq!(grid.tightened_for_refinement(7.0e-4, 672), None);
        // A larger one never loosens what the grid decided at.
        assert_eq!(grid.tightened_for_refinement(1e-3, 672), None);
        assert_eq!(
            Chosen::given(1e-9).tightened_for_refinement(1e-6, 672),
            None
        );
    }

    fn surface(grid: &Grid, shift: f64) -> Vec<CandidateResult> {
        grid.candidates()
            .into_iter()
            .map(|c| CandidateResult {
                j_e_m2: Some(
                    1.0 + ((c.damping_pa_s - 500.0) / 300.0).powi(2) + shift * c.damping_pa_s,
                ),
                status: RunStatus::Ok,
                ..CandidateResult::cancelled(c)
            })
            .collect()
    }

    #[test]
    fn confirmation_reruns_the_region_and_each_ns_best_and_grows_its_margin() {
        let grid = Grid::parse("10,20", "0:1000:50", "0.8").unwrap();
        // 100 observations: σ² ≈ 1/98, threshold ≈ 0.061; the first pass
        // is off by 1e-3 per Pa·s (its best at D = 450), which the re-runs
        // measure and correct.
        let mut results = surface(&grid, 1e-3);
        let exact = surface(&grid, 0.0);
        let mut asked = Vec::new();
        let confirmation = confirm(&grid, &mut results, 100, 1.0, |cs, settings| {
            asked.push((cs.len(), settings.reference));
            Ok::<_, ()>(
                cs.iter()
                    .map(|c| {
                        let i = exact.iter().position(|r| r.candidate == *c).unwrap();
                        exact[i].clone()
                    })
                    .collect(),
            )
        })
        .unwrap()
        .unwrap();
        assert!(confirmation.rounds >= 2, "the shift grew the margin");
        assert!(confirmation.largest_shift_m2 >= 0.45);
        assert!(confirmation.margin_m2 >= MARGIN_PER_SHIFT * confirmation.largest_shift_m2);
        // The exact region (and each n's exact best, D = 500) is exact now.
        let threshold = confirmation.accuracy.threshold_m2;
        for (r, e) in results.iter().zip(&exact) {
            if e.j_e_m2.unwrap() <= 1.0 + threshold {
                assert_eq!(r, e);
            }
        }
        let best = summarize(&grid, &results, 100).unwrap();
        assert_eq!(best.best.candidate.damping_pa_s, 500.0);
        let a = confirmation.accuracy;
        assert!(
            asked
                .iter()
                .all(|&(_, r)| (r.method, r.tolerance_m) == (a.method, a.tolerance_m))
        );
        assert_eq!(
            confirmation.confirmed,
            asked.iter().map(|a| a.0).sum::<usize>()
        );
    }

    #[test]
    fn a_first_pass_as_accurate_as_needed_is_not_rerun() {
        let grid = Grid::parse("10", "0:1000:50", "0.8").unwrap();
        let mut results = surface(&grid, 0.0);
        let c = confirm(&grid, &mut results, 100, 1e-12, |_, _| {
            Err::<Vec<CandidateResult>, _>("not called")
        })
        .unwrap()
        .unwrap();
        assert_eq!((c.confirmed, c.rounds), (0, 0));
    }
}
