//! A finished identification's validation, tables, best fits and figures,
//! and the outcome it exits with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::checks::film_axes;
use super::engine::{validates, validation_reference};
use super::finish::{Combination, Combined, Validated, film_sigma_m};
use super::report::{FilmOutliers, IdentifyReport};
use crate::gpu::Precision;
use crate::io::results::{BestFit, write_best_fit, write_joint_results};
use crate::metadata::{self, json};
use crate::model::TetherParams;
use crate::scenario::{Scenario, SimulationOutput, SolverSettings, simulate};
use crate::solver::SolverKind;
use crate::sweep::joint::{FilmAxes, FilmScore};
use crate::sweep::refine::Refined;
use crate::sweep::validation::{Validation, pick, validate};
use crate::sweep::{Candidate, CandidateResult, Summary};
use crate::workflow::fit::{find_outliers, outlier_limit_m};
use crate::workflow::{WorkflowError, batch};

/// Checks a finished identification's outcome: a shard none of whose
/// candidates has a J_e, a failed validation, or (unless allowed) a best
/// fit that misses the data by more than the tether's length or the
/// film's noise allows, is an error after the files are written.
pub fn check_outcome(report: &IdentifyReport) -> Result<(), WorkflowError> {
    let no_j_e = match (&report.shard, report.films.len()) {
        (None, _) => report.summary.is_none(),
        // A single film's shard has its part's summary, unless it held no
        // candidate (more shards than the grid has): its empty part is
        // merged as one.
        (Some(_), 1) => report.summary.is_none() && !report.results.is_empty(),
        // Several films' parts have none: their joint J_e is `summarize`'s.
        (Some(_), _) => false,
    };
    if no_j_e {
        return Err(WorkflowError::Failed(format!(
            "every candidate diverged: no J_e to compare (results in {})",
            report.table_path.display()
        )));
    }
    let several = report.validations.len() > 1;
    if let Some((name, v)) = report.validations.iter().find(|(_, v)| !v.passed) {
        let e = &report.engine;
        return Err(WorkflowError::Failed(format!(
            "validation failed{}: the sweep's engine deviates from the f64 reference solver by up to {:.2e} m at the markers and {:.2e} in J_e (tolerances {:.0e} m, {:.0e}); details in the metadata key {} of {}{}",
            match several {
                true => format!(" for {name}"),
                false => String::new(),
            },
            v.max_marker_deviation_m,
            v.max_j_e_relative_deviation,
            v.marker_tolerance_m,
            v.j_e_tolerance,
            metadata::VALIDATION,
            report.table_path.display(),
            if e.backend != "cpu" && e.precision == Precision::F32.name() {
                ". Try --precision f64, which agrees with the CPU explicit solver to 1e-14 m"
            } else {
                ""
            }
        )));
    }
    if report.shard.is_some() {
        // A shard's best is only its part's: `summarize` judges the merge.
        return Ok(());
    }
    crate::workflow::fit::implausible(
        report.fit_warning.as_ref(),
        report.implausible_allowed,
        &report.out,
    )
}

/// The path one of several films' best fit is written to.
pub fn best_fit_path(out: &Path, film: &str) -> PathBuf {
    out.join(format!("best_fit_{film}.parquet"))
}

impl Combination {
    /// Film `k`'s candidate at the shared candidate `shared`: with its
    /// best own values there.
    pub(super) fn film_candidate(
        &self,
        k: usize,
        shared: &Candidate,
        scores: &[Vec<FilmScore>],
    ) -> Candidate {
        let mut c = *shared;
        if let Some(film_scores) = scores.get(k) {
            let at = self
                .request
                .grid
                .index_of(shared)
                .expect("a shared grid point");
            for (p, v) in film_scores[at].own.iter() {
                c.parameters.set(p, v);
            }
        }
        c
    }

    /// Each film's validation at the best and the best of other n, when
    /// the sweep ran on another solver than the reference; each film's
    /// reference run of the best, for its best fit.
    pub(super) fn validate(
        &mut self,
        summary: &Summary,
        scores: &[Vec<FilmScore>],
        results: &[Vec<CandidateResult>],
    ) -> Result<Validated, WorkflowError> {
        let request = &self.request;
        let Some(engine) = self.engine.as_ref().filter(|e| validates(e, request)) else {
            return Ok((Vec::new(), vec![None; self.films.len()]));
        };
        let picked = pick(summary, request.validate);
        let mut validations = Vec::new();
        let mut references = Vec::new();
        for (k, f) in self.films.iter().enumerate() {
            let film_picked: Vec<CandidateResult> = picked
                .iter()
                .map(|r| {
                    let c = self.film_candidate(k, &r.candidate, scores);
                    let i = f.grid.index_of(&c).expect("a film grid point");
                    results[k][i].clone()
                })
                .collect();
            let rerun =
                |params: &TetherParams, scenario: &Scenario| engine.simulate(scenario, params);
            let kind = engine.kind();
            let (v, refs) = validate(
                &film_picked,
                (&request.base, &f.scenario, &f.measured),
                validation_reference(&kind).as_ref(),
                &rerun,
                request.validate_marker_tolerance_m,
                request.validate_j_e_tolerance,
            )
            .map_err(batch("validation run failed"))?;
            validations.push((f.film.name.clone(), v));
            // At the GPU's loose sweep tolerance, the reference runs are
            // not the best fit's (which runs at the data's).
            let gpu_reference = kind.is_gpu() && kind.solver() == SolverKind::Reference;
            references.push(refs.into_iter().next().filter(|_| !gpu_reference));
        }
        let record = match &validations[..] {
            [(_, v)] => json(v),
            several => json(
                &several
                    .iter()
                    .map(|(n, v)| (n.as_str(), v))
                    .collect::<BTreeMap<&str, &Validation>>(),
            ),
        };
        self.metadata.insert(metadata::VALIDATION.into(), record);
        Ok((validations, references))
    }

    /// results.parquet (and .csv): the J_e, and several films' columns
    /// (one film's scores are empty: its table has none).
    pub(super) fn write_results(
        &self,
        joint: &[CandidateResult],
        scores: &[Vec<FilmScore>],
    ) -> Result<(), WorkflowError> {
        let names = &self.names;
        let axes: Vec<FilmAxes> = self.films.iter().map(|f| film_axes(&f.film)).collect();
        let films: Vec<(&FilmAxes, &[FilmScore])> = axes
            .iter()
            .zip(scores)
            .map(|(a, s)| (a, s.as_slice()))
            .collect();
        let csv = self
            .request
            .csv
            .then(|| self.table_path.with_extension("csv"));
        for path in csv.iter().chain(std::iter::once(&self.table_path)) {
            write_joint_results(
                path,
                joint,
                &films,
                &names.backend,
                &names.precision,
                &names.solver,
                &self.metadata,
            )?;
        }
        Ok(())
    }

    /// Each film's best fit at the best, with the refined track where
    /// there is one, and the film's candidate at the best.
    pub(super) fn best_fits(
        &self,
        summary: &Summary,
        refined: Option<&Refined>,
        combined: &Combined,
        references: Vec<Option<SimulationOutput>>,
        settings: &SolverSettings,
    ) -> Result<Vec<(BestFit, Candidate)>, WorkflowError> {
        let single = self.request.single();
        let mut fits = Vec::with_capacity(self.films.len());
        for (k, (f, reference)) in self.films.iter().zip(references).enumerate() {
            let best = self.film_candidate(k, &summary.best.candidate, &combined.scores);
            let (tether, scenario) = best.experiment(&self.request.base, &f.scenario);
            let track = match reference {
                Some(r) => r.track,
                None => {
                    simulate(&scenario, &tether, settings)
                        .map_err(crate::workflow::solver(
                            "best-fit run on the reference solver failed",
                        ))?
                        .track
                }
            };
            let mut fit = BestFit::new(&f.measured, &track);
            if let Some(r) = refined {
                let name = Some(f.film.name.as_str()).filter(|_| !single);
                let (tether, scenario) = r
                    .candidate(&best, name)
                    .experiment(&self.request.base, &f.scenario);
                let refined_track = simulate(&scenario, &tether, settings)
                    .map_err(crate::workflow::solver(
                        "refined-fit run on the reference solver failed",
                    ))?
                    .track;
                fit = fit.with_refined(&refined_track);
            }
            fits.push((fit, best));
        }
        Ok(fits)
    }

    /// Each film's best fit written, with its samples far beyond its
    /// noise, and the figures: the surface, profiles and per-n figure, and
    /// each film's shapes and residuals.
    pub(super) fn write_fits_and_figures(
        &self,
        summary: &Summary,
        refined: Option<&Refined>,
        combined: &Combined,
        fits: &[(BestFit, Candidate)],
    ) -> Result<(Vec<String>, Vec<FilmOutliers>), WorkflowError> {
        let out = &self.request.out;
        let single = self.request.single();
        let mut outliers = Vec::new();
        for (k, (f, (fit, _))) in self.films.iter().zip(fits).enumerate() {
            // A single film's limit is its grid best's noise level; each of
            // several films' its own: the refinement's, whose residual is
            // the fit's, else the grid's estimate.
            let sigma_m = match single {
                true => summary.confidence.sigma2_m2.sqrt(),
                false => film_sigma_m(refined, &combined.weights, k),
            };
            let limit_m = outlier_limit_m(sigma_m, self.request.base.length_m);
            let found = find_outliers(fit, limit_m, &f.film.camera);
            let mut fit_metadata = self.metadata.clone();
            if !found.is_empty() {
                fit_metadata.insert(metadata::OUTLIERS.into(), json(&found));
            }
            let path = match single {
                true => out.join("best_fit.parquet"),
                false => best_fit_path(out, &f.film.name),
            };
            write_best_fit(
                &path,
                fit,
                &f.film.camera,
                f.scenario.pin_m(),
                &fit_metadata,
            )?;
            outliers.push(FilmOutliers {
                film: f.film.name.clone(),
                outliers: found,
                limit_m,
                camera: f.film.camera.clone(),
            });
        }
        let annotations = crate::plot::identify::Annotations::from_metadata(&self.metadata);
        if let [(fit, _)] = fits {
            let figures =
                crate::plot::identify::save_all(out, &combined.joint, Some(fit), &annotations)?;
            return Ok((figures, outliers));
        }
        let mut figures =
            crate::plot::identify::save_all(out, &combined.joint, None, &annotations)?;
        for (f, (fit, best)) in self.films.iter().zip(fits) {
            figures.extend(crate::plot::identify::save_fit(
                out,
                fit,
                best,
                &format!("_{}", f.film.name),
            )?);
        }
        Ok((figures, outliers))
    }
}
