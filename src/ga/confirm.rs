//! The GA's answer at a tight tolerance. The search scores every
//! chromosome at its own accuracy (the reference solver at 1e-7 m by
//! default, or a fixed-step scheme), and J_a,min moves with it: on the
//! default run (docs/swingup.md) the two fittest chromosomes' J_a,min
//! moved by 2.2e-5 and 2.1e-5 m at 1e-7 m against 1e-11 m, and they lie
//! 1.2e-4 m apart; at 1e-6 m they moved by 1.1e-4 m. A printed J_a,min
//! would be wrong in its last two digits, and a looser search could rank
//! the two the wrong way round.
//!
//! So the fittest chromosomes are scored again on Radau IIA at
//! [`CONFIRMATION_TOLERANCE_M`] ([`confirmation_settings`]): first the
//! [`FIRST_ROUND`] fittest, then every one whose search score lies within
//! a margin of the best score confirmed so far, the margin
//! [`MARGIN_PER_SHIFT`] times the largest change (shift) a re-run
//! measured, round after round until no chromosome is left inside it. A chromosome left out would have to move four times
//! as far as any re-run did to beat the answer (or, where no re-run moved,
//! move at all: the chromosomes tied with the answer are not re-run).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{Evaluation, Individual, fitter};
use crate::scenario::SolverSettings;
use crate::solver::ImplicitMethod;

/// The method the answer is confirmed with: Radau IIA, which reaches the
/// swing-up's J_a,min to a given accuracy in less time than generalized-α
/// (the work–precision study, docs/solvers.md).
pub const CONFIRMATION_METHOD: ImplicitMethod = ImplicitMethod::Radau5;
/// The tolerance the answer is confirmed at \[m\], Radau's. J_a,min is
/// printed to 1e-6 m. At 3e-9 m, on the default problem's three fittest
/// chromosomes and nine spread over its space, J_a,min lies within 5.5e-8 m
/// of Radau's at 1e-13 m (the three fittest within 1.8e-9 m), where
/// generalized-α at 1e-10 m, the confirmation before, was up to 2.4e-6 m
/// off (2.5–2.7e-7 m on the fittest), and it takes 1.70× less time
/// (`cargo run --release --example confirm_method`, BENCHMARKS.md).
pub const CONFIRMATION_TOLERANCE_M: f64 = 3e-9;

/// The CPU solver the answer is confirmed on: the reference solver's
/// [`CONFIRMATION_METHOD`] at [`CONFIRMATION_TOLERANCE_M`].
pub fn confirmation_settings() -> SolverSettings {
    let mut settings = SolverSettings::reference_at(CONFIRMATION_TOLERANCE_M);
    settings.reference.method = CONFIRMATION_METHOD;
    settings
}
/// The fittest re-run in the first round, so that the margin is measured
/// from more shifts than the best's own.
pub const FIRST_ROUND: usize = 3;
/// The margin above the best confirmed score, per largest measured shift.
pub const MARGIN_PER_SHIFT: f64 = 4.0;

/// What the confirmation re-ran, and what it found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwingupConfirmation {
    /// The reference solver's method for the re-runs.
    pub method: ImplicitMethod,
    /// The tolerance of the re-runs \[m\].
    pub tolerance_m: f64,
    /// The fittest chromosome re-run, with its score at that tolerance;
    /// None when every re-run failed.
    pub best: Option<Individual>,
    /// Chromosomes re-run (or taken from an earlier confirmation's re-runs).
    pub rerun: usize,
    /// The largest |J_a,min| change between the search and the re-runs \[m\].
    pub largest_shift_m: f64,
    /// The last round's margin above the best confirmed score \[m\].
    pub margin_m: f64,
    pub rounds: usize,
}

/// Confirms the fittest of `scored` (distinct chromosomes with the
/// search's evaluations). `confirmed` holds the re-runs so far, by
/// chromosome: what is in it is not run again, and what `rerun` scores at
/// [`CONFIRMATION_TOLERANCE_M`] is added to it. None: no chromosome has a
/// score to confirm.
pub fn confirm<E>(
    scored: &[Individual],
    confirmed: &mut BTreeMap<u32, Evaluation>,
    mut rerun: impl FnMut(&[u32]) -> Result<Vec<Evaluation>, E>,
) -> Result<Option<SwingupConfirmation>, E> {
    let mut ranked: Vec<&Individual> = scored
        .iter()
        .filter(|i| i.evaluation.j_a_min_m.is_some())
        .collect();
    if ranked.is_empty() {
        return Ok(None);
    }
    ranked.sort_by(|a, b| fitter(a, b));
    let mut c = SwingupConfirmation {
        method: CONFIRMATION_METHOD,
        tolerance_m: CONFIRMATION_TOLERANCE_M,
        best: None,
        rerun: 0,
        largest_shift_m: 0.0,
        margin_m: 0.0,
        rounds: 0,
    };
    let mut considered: BTreeSet<u32> = BTreeSet::new();
    // Each round adds at least one chromosome, so the loop ends, at worst
    // with every one re-run.
    loop {
        let picked: Vec<&Individual> = if c.rounds == 0 {
            ranked.iter().take(FIRST_ROUND).copied().collect()
        } else {
            let Some(best) = fittest(&considered, confirmed) else {
                break;
            };
            // Strictly below: where no re-run moved at all (a J_a,min at
            // t = 0, the same for every chromosome), the chromosomes tied
            // with the answer stay out rather than all being re-run.
            let cutoff = best.evaluation.fitness() + c.margin_m;
            ranked
                .iter()
                .filter(|i| !considered.contains(&i.chromosome))
                .take_while(|i| i.evaluation.fitness() < cutoff)
                .copied()
                .collect()
        };
        if picked.is_empty() {
            break;
        }
        let fresh: Vec<u32> = picked
            .iter()
            .map(|i| i.chromosome)
            .filter(|ch| !confirmed.contains_key(ch))
            .collect();
        if !fresh.is_empty() {
            let scores = rerun(&fresh)?;
            assert_eq!(scores.len(), fresh.len(), "one evaluation per chromosome");
            confirmed.extend(fresh.into_iter().zip(scores));
        }
        c.rounds += 1;
        for i in picked {
            considered.insert(i.chromosome);
            if let (Some(a), Some(b)) = (i.evaluation.j_a_min_m, confirmed[&i.chromosome].j_a_min_m)
            {
                c.largest_shift_m = c.largest_shift_m.max((a - b).abs());
            }
        }
        c.margin_m = MARGIN_PER_SHIFT * c.largest_shift_m;
    }
    c.best = fittest(&considered, confirmed);
    c.rerun = considered.len();
    Ok(Some(c))
}

/// The fittest of `chromosomes` by their confirmed scores, if any has one.
fn fittest(
    chromosomes: &BTreeSet<u32>,
    confirmed: &BTreeMap<u32, Evaluation>,
) -> Option<Individual> {
    chromosomes
        .iter()
        .map(|&chromosome| Individual {
            chromosome,
            evaluation: confirmed[&chromosome].clone(),
        })
        .filter(|i| i.evaluation.j_a_min_m.is_some())
        .min_by(fitter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::RunStatus;

    fn scored(j: Option<f64>) -> Evaluation {
        Evaluation {
            j_a_min_m: j,
            t_at_min_s: j.map(|_| 1.0),
            status: if j.is_some() {
                RunStatus::Ok
            } else {
                RunStatus::diverged("blew up")
            },
        }
    }

    fn individuals(search: &[Option<f64>]) -> Vec<Individual> {
        search
            .iter()
            .enumerate()
            .map(|(c, &j)| Individual {
                chromosome: c as u32,
                evaluation: scored(j),
            })
            .collect()
    }

    /// The confirmation of `search` against the `truth` a re-run finds,
    /// with the chromosomes each round re-ran.
    fn run(
        search: &[Option<f64>],
        truth: &[Option<f64>],
    ) -> (Option<SwingupConfirmation>, Vec<Vec<u32>>) {
        let mut rounds = Vec::new();
        let c = confirm(
            &individuals(search),
            &mut BTreeMap::new(),
            |cs: &[u32]| {
                rounds.push(cs.to_vec());
                Ok::<_, ()>(cs.iter().map(|&c| scored(truth[c as usize])).collect())
            },
        )
        .unwrap();
        (c, rounds)
    }

    #[test]
    fn the_search_order_is_overturned_where_the_shifts_say_it_may_be() {
        // The search ranks 0 first; at the tight tolerance 3 is fitter.
        // Shifts in the first round (0, 1, 2) are up to 0.02, so the
        // margin 0.08 brings 3 (search 0.15, within 0.08 of 0.09) in, and
        // its own shift of 0.1 widens it to take 4 (0.4) but not 5 (0.9).
        let search = [
            Some(0.10),
            Some(0.11),
            Some(0.12),
            Some(0.15),
            Some(0.4),
            Some(0.9),
        ];
        let truth = [
            Some(0.11),
            Some(0.09),
            Some(0.14),
            Some(0.05),
            Some(0.41),
            Some(0.0),
        ];
        let (c, rounds) = run(&search, &truth);
        let c = c.unwrap();
        assert_eq!(rounds, vec![vec![0, 1, 2], vec![3], vec![4]]);
        let best = c.best.unwrap();
        assert_eq!(best.chromosome, 3);
        assert_eq!(best.evaluation.j_a_min_m, Some(0.05));
        assert_eq!(c.rerun, 5);
        assert!((c.largest_shift_m - 0.1).abs() < 1e-12);
        assert_eq!(c.rounds, 3);
        // Chromosome 5 would have won, but its search score (0.9) lies
        // beyond the last margin above the answer: it was never re-run.
        assert!((c.margin_m - MARGIN_PER_SHIFT * 0.1).abs() < 1e-12);
    }

    #[test]
    fn earlier_re_runs_are_not_run_again_and_failures_neither_win_nor_widen() {
        let search = individuals(&[Some(0.2), None, Some(0.1), Some(0.3)]);
        let mut confirmed = BTreeMap::from([(2, scored(Some(0.1)))]);
        let mut asked = Vec::new();
        let c = confirm(&search, &mut confirmed, |cs: &[u32]| {
            asked.extend_from_slice(cs);
            // 0 fails at the tight tolerance; 3 scores as searched.
            Ok::<_, ()>(
                cs.iter()
                    .map(|&c| scored(if c == 0 { None } else { Some(0.3) }))
                    .collect(),
            )
        })
        .unwrap()
        .unwrap();
        assert_eq!(asked, vec![0, 3], "1 has no score; 2 was confirmed before");
        assert_eq!(c.best.unwrap().chromosome, 2);
        assert_eq!(c.largest_shift_m, 0.0);
        assert_eq!(confirmed.len(), 3);
        assert_eq!(confirmed[&0].status.name(), "diverged");
    }

    #[test]
    fn ties_with_an_answer_that_did_not_move_are_not_all_re_run() {
        // Every swing-up's J_a,min at t = 0: the same for every chromosome
        // and every tolerance.
        let search = vec![Some(0.6); 100];
        let (c, rounds) = run(&search, &search);
        let c = c.unwrap();
        assert_eq!(rounds, vec![vec![0, 1, 2]]);
        assert_eq!(c.best.unwrap().chromosome, 0);
        assert_eq!((c.rerun, c.largest_shift_m, c.margin_m), (3, 0.0, 0.0));
    }

    #[test]
    fn nothing_to_confirm_or_nothing_confirmed() {
        assert_eq!(run(&[None, None], &[None, None]).0, None);
        let (c, _) = run(&[Some(0.1)], &[None]);
        let c = c.unwrap();
        assert_eq!(c.best, None);
        assert_eq!(c.rerun, 1);
    }
}
