//! Finishing a swept (or merged) identification: the films combined, the
//! first pass confirmed at the data's tolerance, summarized, refined and
//! judged against the data's noise.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::checks::{film_axes, film_names};
use super::record::FilmRecord;
use super::record::remove_previous_table;
use super::report::IdentifyReport;
use super::report::Swept;
use super::request::IdentifyRequest;
use crate::engine::{Engine, EngineNames, RunHooks};
use crate::io::CHUNKS_DIR;
use crate::io::results::BestFit;
use crate::io::results::write_refined;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::{SimulationOutput, SolverSettings};
use crate::status::RunStatus;
use crate::sweep::accuracy::{Chosen, confirm};
use crate::sweep::joint::{
    FilmAxes, FilmScore, FilmWeight, best_over_own, combine, combine_one, weights,
};
use crate::sweep::refine::{RefineFilm, Refined, refine_best_tightened};
use crate::sweep::validation::Validation;
use crate::sweep::{Candidate, CandidateResult, Grid, Summary, run, summarize};
use crate::workflow::film::CheckedFilm;
use crate::workflow::fit::{
    FilmGoodness, best_length_m, film_fit_warning, fit_counts, fit_warning, judge_fit,
    record_judgement, test_film,
};
use crate::workflow::{WorkflowError, batch};

/// The films' results combined ([`crate::sweep::joint`]): one film's are
/// its own.
pub(super) struct Combined {
    /// Several films: each one's best over its own axes at each shared
    /// candidate, and each one's noise and weight.
    pub(super) scores: Vec<Vec<FilmScore>>,
    pub(super) weights: Vec<FilmWeight>,
    /// One per shared candidate: its J_e.
    pub(super) joint: Vec<CandidateResult>,
}

/// Each film's validation, by its name, and its reference run of the
/// best (None where the sweep ran on the reference solver).
pub(super) type Validated = (Vec<(String, Validation)>, Vec<Option<SimulationOutput>>);

/// The films' results combined, summarized, refined, validated and
/// written: after a whole run's sweep, or `summarize`'s merge of a
/// sharded one's parts ([`merge`]).
pub(super) struct Combination {
    pub(super) request: IdentifyRequest,
    pub(super) films: Vec<CheckedFilm>,
    pub(super) names: EngineNames,
    /// The sweep's engine, for the validation; None for a merge (each
    /// shard ran its own).
    pub(super) engine: Option<Engine>,
    pub(super) metadata: Metadata,
    pub(super) table_path: PathBuf,
    /// The sweep's first-pass tolerance, when it was one \[m\].
    pub(super) scout_tolerance_m: Option<f64>,
}

/// The error of a run none of whose candidates has a J_e: nothing is
/// written; `kept` says what is left (the saved chunks, or the shards'
/// parts).
pub(super) fn nothing_simulated(results: &[Vec<CandidateResult>], kept: &str) -> WorkflowError {
    let mut counts = std::collections::BTreeMap::new();
    for r in results.iter().flatten() {
        *counts.entry(r.status.name()).or_insert(0usize) += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let what = match results.len() {
        1 => "no candidate could be simulated",
        _ => "no shared candidate ran in every film",
    };
    WorkflowError::NothingSimulated(format!(
        "{what} ({}): no J_e to compare, nothing written; {kept}. Check the tether's parameters and the grid's ranges",
        counts.join(", "),
    ))
}

/// Film `k`'s noise level σ of one coordinate \[m\] among several: the
/// refinement's residual where there is one, else its grid best's.
pub(super) fn film_sigma_m(refined: Option<&Refined>, weights: &[FilmWeight], k: usize) -> f64 {
    refined
        .and_then(|r| r.films.get(k))
        .map_or(weights[k].sigma_m, |f| f.sigma_m)
}

/// The refined optimum at the chosen tolerance; fitted again from its
/// values at its own σ's when that asks for a tolerance far below the
/// grid's ([`Chosen::tightened_for_refinement`]) and profiled there,
/// `chosen` then updated, so that the best fit runs at it too.
pub(super) fn refine_at_datas_accuracy(
    grid: &Grid,
    summary: &Summary,
    films: &[RefineFilm<'_>],
    base: &TetherParams,
    chosen: &mut Option<Chosen>,
) -> Result<Option<Refined>, WorkflowError> {
    let mut tightened = None;
    let refined = refine_best_tightened(
        grid,
        summary,
        films,
        base,
        &Chosen::reference(chosen.as_ref()),
        |r| {
            let t = chosen
                .as_ref()?
                .tightened_for_refinement(r.sigma_m, r.observations)?;
            let settings = Chosen::reference(Some(&t));
            tightened = Some(t);
            Some(settings)
        },
    )
    .map_err(crate::workflow::solver("refining the best candidate"))?;
    if tightened.is_some() {
        *chosen = tightened;
    }
    Ok(refined)
}

impl Combination {
    /// Combines, summarizes, refines, validates and writes.
    pub(super) fn finish(
        mut self,
        swept: Swept,
        cancel: Option<&AtomicBool>,
    ) -> Result<IdentifyReport, WorkflowError> {
        let Swept {
            mut results,
            scored,
            simulations,
            wall_s,
            abandon,
        } = swept;
        let observations: Vec<usize> = self
            .films
            .iter()
            .map(|f| f.coverage.observations())
            .collect();
        let total: usize = observations.iter().sum();
        remove_previous_table(&self.table_path)?;
        let confirmed = self.confirm_near_best(&mut results, &observations, cancel)?;
        let combined = self.combined(&results, &observations)?;
        let Some(summary) = summarize(&self.request.grid, &combined.joint, total) else {
            return Err(nothing_simulated(&results, &self.kept_rows()));
        };
        let mut chosen = match self.request.tolerance_m {
            Some(t) => Some(Chosen::given(t)),
            None => confirmed.or_else(|| Some(Chosen::from_summary(&summary, total))),
        };
        self.record_sweep(&combined.weights, wall_s, &summary, abandon.as_ref());
        self.stop_if_interrupted(cancel, "refining the best candidate")?;
        let refined = match self.request.refine {
            true => self.refine(&summary, &combined, &mut chosen)?,
            false => None,
        };
        self.record_refinement(chosen.as_ref(), refined.as_ref());
        self.stop_if_interrupted(cancel, "validating the engine")?;
        let (validations, references) = self.validate(&summary, &combined.scores, &results)?;
        self.stop_if_interrupted(cancel, "the best fits and figures")?;
        let fits = self.best_fits(
            &summary,
            refined.as_ref(),
            &combined,
            references,
            &Chosen::reference(chosen.as_ref()),
        )?;
        // Judged on the best fits' residuals, before any table that
        // carries the verdict in its metadata is written.
        let (goodness, fit_warning) = self.judge_fit(
            &summary,
            refined.as_ref(),
            &combined.weights,
            &observations,
            &fits,
        );
        self.stop_if_interrupted(cancel, "freeing known inputs")?;
        let freed = self.free_inputs(
            &summary.best.candidate,
            refined.as_ref(),
            &combined,
            &goodness,
            &Chosen::reference(chosen.as_ref()),
        )?;
        if let Some(r) = &refined {
            write_refined(&self.request.out.join("refined.parquet"), r, &self.metadata)?;
        }
        let (figures, outliers) =
            self.write_fits_and_figures(&summary, refined.as_ref(), &combined, &fits)?;
        self.stop_if_interrupted(cancel, "the results table")?;
        // Last: its presence marks a complete set (`remove_previous_table`),
        // and a run killed before it is finished by --resume.
        self.write_results(&combined.joint, &combined.scores)?;
        Ok(IdentifyReport {
            films: film_names(&self.request),
            results: combined.joint,
            scores: combined.scores,
            weights: combined.weights,
            summary: Some(summary),
            refined,
            accuracy: chosen,
            validations,
            engine: self.names.clone(),
            scored,
            simulations,
            wall_s,
            abandon,
            table_path: self.table_path.clone(),
            figures,
            fit_warning,
            goodness,
            freed,
            implausible_allowed: self.request.allow_implausible,
            outliers,
            out: self.request.out.clone(),
            shard: None,
            parts: Vec::new(),
        })
    }

    /// The films' results combined: each film's best over its own axes at
    /// every shared candidate, the films' weights, the joint results; a
    /// single film's results as they are.
    pub(super) fn combined(
        &self,
        results: &[Vec<CandidateResult>],
        observations: &[usize],
    ) -> Result<Combined, WorkflowError> {
        if let [only] = results {
            return Ok(Combined {
                scores: Vec::new(),
                weights: Vec::new(),
                joint: only.clone(),
            });
        }
        let scores: Vec<Vec<FilmScore>> = self
            .films
            .iter()
            .zip(results)
            .map(|(f, r)| best_over_own(&film_axes(&f.film), r))
            .collect();
        let axes: Vec<FilmAxes> = self.films.iter().map(|f| film_axes(&f.film)).collect();
        let weights = weights(&axes, &scores, observations)?;
        let joint = combine(&self.request.grid, &scores, &weights);
        Ok(Combined {
            scores,
            weights,
            joint,
        })
    }

    /// After a first pass at the scouting tolerance ([`confirm`]): the
    /// data's tolerance from the J_e's σ over all the films' compared
    /// coordinates, and the shared candidates near the best and each n's
    /// best re-run at it in every film (all their own values), their rows
    /// replaced in `results`. Several films' J_e of a re-run keeps the
    /// first pass's weights, so that its shift is the solver's alone; the
    /// caller weighs and combines afresh. None: no first pass, or no
    /// shared candidate every film ran.
    pub(super) fn confirm_near_best(
        &self,
        results: &mut [Vec<CandidateResult>],
        observations: &[usize],
        cancel: Option<&AtomicBool>,
    ) -> Result<Option<Chosen>, WorkflowError> {
        let Some(scout_tolerance_m) = self
            .scout_tolerance_m
            .filter(|_| self.request.tolerance_m.is_none())
        else {
            return Ok(None);
        };
        let Combined {
            weights, mut joint, ..
        } = self.combined(results, observations)?;
        let (grid, base, films) = (&self.request.grid, &self.request.base, &self.films);
        let single = self.request.single();
        let near = match single {
            true => "the best",
            false => "the joint best",
        };
        let rerun = |shared: &[Candidate], settings: &SolverSettings| {
            let engine = Engine::cpu(*settings);
            let at: Vec<usize> = shared
                .iter()
                .map(|c| grid.index_of(c).expect("a shared grid point"))
                .collect();
            let mut scores: Vec<Vec<FilmScore>> = Vec::with_capacity(films.len());
            let mut rerun_rows = Vec::new();
            for (f, rows) in films.iter().zip(results.iter_mut()) {
                let axes = film_axes(&f.film);
                let own = axes.own_len();
                let positions: Vec<usize> =
                    at.iter().flat_map(|&i| i * own..(i + 1) * own).collect();
                let candidates: Vec<Candidate> =
                    positions.iter().map(|&p| rows[p].candidate).collect();
                let hooks = RunHooks {
                    progress: None,
                    cancel,
                };
                let scored = run(
                    &engine,
                    &candidates,
                    f.study(base),
                    f.grid.release_axis(),
                    None,
                    hooks,
                )
                .map_err(batch(match single {
                    true => "re-running the candidates near the best",
                    false => "re-running the candidates near the joint best",
                }))?;
                for (&p, r) in positions.iter().zip(&scored) {
                    rows[p] = r.clone();
                }
                rerun_rows = scored;
                scores.push(
                    at.iter()
                        .flat_map(|&i| best_over_own(&axes, &rows[i * own..(i + 1) * own]))
                        .collect(),
                );
            }
            if single {
                return Ok::<_, WorkflowError>(rerun_rows);
            }
            Ok(shared
                .iter()
                .enumerate()
                .map(|(j, c)| combine_one(*c, scores.iter().map(|s| &s[j]), &weights))
                .collect())
        };
        let total = observations.iter().sum();
        let confirmation = confirm(grid, &mut joint, total, scout_tolerance_m, rerun)?;
        if results
            .iter()
            .flatten()
            .any(|r| r.status == RunStatus::Cancelled)
        {
            return Err(self.interrupted(&format!(
                "re-running the candidates near {near} at the data's tolerance"
            )));
        }
        Ok(confirmation.map(|c| Chosen::from_data(c.accuracy, Some(c))))
    }

    /// The error of a Ctrl-C while `doing`: the sweep's chunks are kept
    /// (only a finished run removes them), so `--resume` finishes it; a
    /// merge's parts are as they were.
    pub(super) fn interrupted(&self, doing: &str) -> WorkflowError {
        let kept = match self.engine {
            Some(_) => format!(
                "the sweep is saved in {}; run the same command with --resume to finish",
                self.table_path
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(CHUNKS_DIR)
                    .display()
            ),
            None => "the shards' parts are as they were; run summarize again to finish".into(),
        };
        WorkflowError::Interrupted(format!("interrupted while {doing}: {kept}"))
    }

    /// Stops with [`Self::interrupted`] where Ctrl-C was pressed: between
    /// the phases after the sweep, none of which is worth finishing once
    /// the user has asked to stop.
    fn stop_if_interrupted(
        &self,
        cancel: Option<&AtomicBool>,
        next: &str,
    ) -> Result<(), WorkflowError> {
        match cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            true => Err(self.interrupted(&format!("finishing, before {next}"))),
            false => Ok(()),
        }
    }

    /// Each film's goodness of fit and the run's warning, recorded in the
    /// metadata. A single film: its σ against the length, then against
    /// its noise and along its frames (its best fit's residuals). Several:
    /// the joint fit's 5 %-of-length rule, then each film's own (a film
    /// that is no film of this experiment weighs little in the joint J_e,
    /// so the joint σ alone would not show it), its σ the refinement's
    /// residual where there is one, else its best candidate's over the
    /// grid.
    pub(super) fn judge_fit(
        &mut self,
        summary: &Summary,
        refined: Option<&Refined>,
        weights: &[FilmWeight],
        observations: &[usize],
        fits: &[(BestFit, Candidate)],
    ) -> (Vec<FilmGoodness>, Option<String>) {
        let base = &self.request.base;
        let grid = &self.request.grid;
        if let ([film], [(fit, _)]) = (&self.films[..], fits) {
            let counts = fit_counts(grid, refined, observations[0]);
            let (test, warning) = judge_fit(
                &mut self.metadata,
                summary,
                refined,
                counts,
                film.noise,
                base,
                fit,
            );
            let goodness = test.map(|test| FilmGoodness {
                film: film.film.name.clone(),
                test,
            });
            return (goodness.into_iter().collect(), warning);
        }
        let length_m = best_length_m(summary, base);
        let sigmas: Vec<f64> = (0..weights.len())
            .map(|k| film_sigma_m(refined, weights, k))
            .collect();
        // Each film's own share of the fitted parameters is not separable
        // from the shared ones: p is the whole fit's, a conservative count.
        let parameters = fit_counts(grid, refined, 0).1;
        let goodness: Vec<FilmGoodness> = self
            .films
            .iter()
            .zip(weights.iter().zip(&sigmas))
            .zip(observations.iter().zip(fits))
            .filter_map(|((f, (w, &sigma_m)), (&n, (fit, _)))| {
                let test = test_film(sigma_m, (n, parameters), f.noise?, fit);
                Some(FilmGoodness {
                    film: w.name.clone(),
                    test,
                })
            })
            .collect();
        let warning = fit_warning(summary, refined, base)
            .or_else(|| film_fit_warning(weights, &sigmas, length_m))
            .or_else(|| {
                goodness
                    .iter()
                    .find_map(|g| g.test.warning().map(|w| format!("film {}: {w}", g.film)))
            });
        record_judgement(
            &mut self.metadata,
            Some(&goodness).filter(|g| !g.is_empty()),
            warning.as_ref(),
        );
        (goodness, warning)
    }

    /// The sweep in the metadata: its films (several), wall time, summary
    /// and abandoning.
    fn record_sweep(
        &mut self,
        weights: &[FilmWeight],
        wall_s: f64,
        summary: &Summary,
        abandon: Option<&crate::sweep::abandon::AbandonBounds>,
    ) {
        if !self.request.single() {
            self.record_films(weights);
        }
        self.metadata
            .insert(metadata::WALL_S.into(), format!("{wall_s:.3}"));
        self.metadata
            .insert(metadata::SUMMARY.into(), json(summary));
        if let Some(a) = abandon {
            self.metadata.insert(metadata::ABANDON.into(), json(a));
        }
    }

    /// What is kept when nothing could be summarized: the sweep's saved
    /// rows, or the shards' parts.
    fn kept_rows(&self) -> String {
        match self.engine {
            Some(_) => format!(
                "their rows are saved in {} (--force discards them)",
                self.table_path.with_file_name(CHUNKS_DIR).display()
            ),
            None => "the shards' parts are as they were".into(),
        }
    }

    /// The tolerance chosen and the refinement in the metadata.
    fn record_refinement(&mut self, chosen: Option<&Chosen>, refined: Option<&Refined>) {
        if let Some(c) = chosen {
            self.metadata.insert(metadata::ACCURACY.into(), json(c));
        }
        if let Some(r) = refined {
            self.metadata.insert(metadata::REFINED.into(), json(r));
        }
    }

    /// The films in the metadata, each with its noise and weight.
    pub(super) fn record_films(&mut self, weights: &[FilmWeight]) {
        let records: Vec<FilmRecord> = self
            .films
            .iter()
            .zip(weights)
            .map(|(f, w)| FilmRecord {
                name: &f.film.name,
                measured: f.film.measured.to_string(),
                measured_sha256: &f.measured_sha256,
                scenario: serde_json::from_str(&f.scenario.record())
                    .unwrap_or(serde_json::Value::Null),
                camera: Some(&f.film.camera).filter(|c| !c.is_default()),
                own: &f.film.own,
                observations: w.observations,
                j_min_m2: w.j_e_m2,
                sigma_m: w.sigma_m,
                weight: w.weight,
            })
            .collect();
        self.metadata.insert(metadata::FILMS.into(), json(&records));
    }

    /// The refinement: the shared parameters and every film's own, each
    /// film's residuals weighed as in the joint J_e (one film: 1).
    pub(super) fn refine(
        &self,
        summary: &Summary,
        combined: &Combined,
        chosen: &mut Option<Chosen>,
    ) -> Result<Option<Refined>, WorkflowError> {
        refine_at_datas_accuracy(
            &self.request.grid,
            summary,
            &self.refine_films(combined),
            &self.request.base,
            chosen,
        )
    }

    /// The films as the refinement fits them: a single film alone, or
    /// each with its name, own axes and weight in the joint J_e.
    pub(super) fn refine_films<'a>(&'a self, combined: &'a Combined) -> Vec<RefineFilm<'a>> {
        match &self.films[..] {
            [f] => vec![RefineFilm::single(&f.measured, &f.scenario)],
            films => films
                .iter()
                .zip(&combined.scores)
                .zip(&combined.weights)
                .map(|((f, s), w)| RefineFilm {
                    name: Some(&f.film.name),
                    measured: &f.measured,
                    scenario: &f.scenario,
                    weight: w.weight,
                    own: &f.film.own,
                    scores: s,
                    start: None,
                })
                .collect(),
        }
    }
}
