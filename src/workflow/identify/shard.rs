//! A shard's run: each film's part written with its own record, summary
//! and check of its engine, for `summarize` to merge.

use super::checks::{film_axes, film_names};
use super::engine::{validates, validation_reference};
use super::record::record_film;
use super::record::remove_previous_table;
use super::report::Swept;
use super::report::{FilmKey, IdentifyReport};
use super::sweep::PreparedIdentification;
use crate::io::results::write_results;
use crate::metadata::{self, json};
use crate::model::TetherParams;
use crate::scenario::Scenario;
use crate::sweep::accuracy::Chosen;
use crate::sweep::validation::{Validation, pick, validate};
use crate::sweep::{Shard, Summary, summarize};
use crate::workflow::film::CheckedFilm;
use crate::workflow::{WorkflowError, batch};

impl PreparedIdentification {
    /// A shard's parts: each film's results with the film's own record
    /// (its experiment, file and, of several, its place and own axes), its
    /// part's summary and check of its engine, for `summarize` to merge.
    pub(super) fn write_parts(
        &self,
        shard: Shard,
        swept: &Swept,
    ) -> Result<IdentifyReport, WorkflowError> {
        let names = self.plan.engine.names();
        let mut parts = Vec::new();
        let mut validations = Vec::new();
        let mut summaries = Vec::new();
        for (index, (f, results)) in self.films.iter().zip(&swept.results).enumerate() {
            let c = &f.checked;
            let path = f.part_path.clone().expect("a shard claims its parts");
            remove_previous_table(&path)?;
            let mut metadata = self.metadata.clone();
            metadata.insert(metadata::WALL_S.into(), format!("{:.3}", swept.wall_s));
            if let Some(a) = &swept.abandon {
                metadata.insert(metadata::ABANDON.into(), json(a));
            }
            if !self.request.single() {
                let key = FilmKey {
                    index,
                    axes: film_axes(&c.film),
                };
                metadata.insert(metadata::FILM.into(), json(&key));
                record_film(&mut metadata, c);
            }
            // Its part's best is only a shard's: the summary and the
            // fixed-step tolerance it gives are the part's record;
            // `summarize` decides from the merged parts.
            let observations = c.coverage.observations();
            let summary = summarize(&c.grid, results, observations);
            if let Some(s) = &summary {
                metadata.insert(metadata::SUMMARY.into(), json(s));
            }
            let accuracy = match (self.request.tolerance_m, self.plan.scout_tolerance_m) {
                (Some(t), _) => Some(Chosen::given(t)),
                (None, None) => summary
                    .as_ref()
                    .map(|s| Chosen::from_summary(s, observations)),
                (None, Some(_)) => None,
            };
            if let Some(chosen) = &accuracy {
                metadata.insert(metadata::ACCURACY.into(), json(chosen));
            }
            if let Some(v) = self.validate_part(c, summary.as_ref())? {
                metadata.insert(metadata::VALIDATION.into(), json(&v));
                validations.push((c.film.name.clone(), v));
            }
            let csv =
                (self.request.csv && self.request.single()).then(|| path.with_extension("csv"));
            for path in csv.iter().chain(std::iter::once(&path)) {
                write_results(
                    path,
                    results,
                    &names.backend,
                    &names.precision,
                    &names.solver,
                    &metadata,
                )?;
            }
            parts.push(path);
            summaries.push(summary);
        }
        // A single film's part's summary is the report's (its grid is the
        // request's); several films' parts have no joint one.
        let summary = match summaries.len() {
            1 => summaries.pop().flatten(),
            _ => None,
        };
        Ok(IdentifyReport {
            films: film_names(&self.request),
            results: match self.request.single() {
                true => swept.results[0].clone(),
                false => Vec::new(),
            },
            scores: Vec::new(),
            weights: Vec::new(),
            summary,
            refined: None,
            accuracy: None,
            validations,
            engine: names,
            scored: swept.scored,
            simulations: swept.simulations,
            wall_s: swept.wall_s,
            abandon: swept.abandon.clone(),
            table_path: self.plan.table_path.clone(),
            figures: Vec::new(),
            fit_warning: None,
            goodness: Vec::new(),
            freed: Vec::new(),
            implausible_allowed: self.request.allow_implausible,
            outliers: Vec::new(),
            out: self.request.out.clone(),
            shard: Some(shard),
            parts,
        })
    }

    /// A shard's check of its engine on one film: the film's best in this
    /// part and the best of other n, re-run on the reference solver (a
    /// shard has no best of the whole grid).
    pub(super) fn validate_part(
        &self,
        film: &CheckedFilm,
        summary: Option<&Summary>,
    ) -> Result<Option<Validation>, WorkflowError> {
        let request = &self.request;
        let Some(s) = summary.filter(|_| validates(&self.engine, request)) else {
            return Ok(None);
        };
        let rerun =
            |params: &TetherParams, scenario: &Scenario| self.engine.simulate(scenario, params);
        let reference = validation_reference(&self.plan.engine);
        let (v, _) = validate(
            &pick(s, request.validate),
            (&request.base, &film.scenario, &film.measured),
            reference.as_ref(),
            &rerun,
            request.validate_marker_tolerance_m,
            request.validate_j_e_tolerance,
        )
        .map_err(batch("validation run failed"))?;
        Ok(Some(v))
    }
}
