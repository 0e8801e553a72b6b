//! Merging a sharded identification: the parts `DIR/shard=K/part.parquet`
//! of `identify --shard K/N`, checked to be the same sweep and complete,
//! become one results table, summary, best fit and figures.

use std::path::{Path, PathBuf};

use super::identify::{
    ConfirmRun, GoodnessOfFit, best_fit_run, best_fit_with_refined, confirm_near_best,
    engine_names, observations, refine_at_datas_accuracy,
};
use super::joint::{FilmKey, JointFilm, JointReport, JointRequest};
use super::{WorkflowError, claim_output, usage};
use crate::camera::Camera;
use crate::engine::EngineNames;
use crate::io::results::{BestFit, read_results, write_best_fit, write_refined, write_results};
use crate::io::track::read_parquet_metadata;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::{Scenario, SolverSettings};
use crate::sweep::accuracy::Chosen;
use crate::sweep::refine::{RefineFilm, Refined};
use crate::sweep::validation::Validation;
use crate::sweep::{CandidateResult, Grid, Shard, Summary, summarize};
use crate::track::MeasuredTrack;

/// A merge, as the user asked for it.
#[derive(Debug, Clone)]
pub struct SummarizeRequest {
    /// The directory of the shards' parts.
    pub dir: PathBuf,
    /// The measured track, when it is no longer where the shards recorded it.
    pub measured: Option<PathBuf>,
    /// Default `DIR/_summary`.
    pub out: Option<PathBuf>,
    /// Refine the merged best candidate, as a single run does
    /// (`sweep::refine`), into refined.parquet.
    pub refine: bool,
    /// A best fit that misses the data by more than 5 % of the tether's
    /// length does not fail the merge (`identify --allow-implausible`).
    pub allow_implausible: bool,
    pub force: bool,
}

/// What the merge found and wrote.
#[derive(Debug, Clone)]
pub struct SummarizeReport {
    pub shards: usize,
    pub results: Vec<CandidateResult>,
    pub summary: Summary,
    pub engine: EngineNames,
    pub validations: Vec<Validation>,
    pub results_path: PathBuf,
    pub figures: Vec<String>,
    pub refined: Option<Refined>,
    /// Why the merged best fit is no fit of this experiment, if it is not
    /// (`identify::judge_fit`).
    pub fit_warning: Option<String>,
    /// The merged fit against the film's noise.
    pub goodness: Option<GoodnessOfFit>,
    pub implausible_allowed: bool,
    pub out: PathBuf,
    /// The reference solver's tolerance for the merged run, and why
    /// (`sweep::accuracy`).
    pub accuracy: Option<Chosen>,
}

/// One shard's part: where it is, its metadata and its rows.
struct Part {
    path: PathBuf,
    metadata: Metadata,
    results: Vec<CandidateResult>,
}

impl Part {
    fn key(&self, key: &str) -> Result<&str, WorkflowError> {
        self.metadata.get(key).map(String::as_str).ok_or_else(|| {
            WorkflowError::Usage(format!(
                "{}: no metadata key {key}: not written by identify --shard",
                self.path.display()
            ))
        })
    }

    /// The engine that ran the part.
    fn engine(&self) -> Result<EngineNames, WorkflowError> {
        engine_names(&self.metadata).ok_or_else(|| {
            WorkflowError::Usage(format!(
                "{}: metadata key {} is not an engine",
                self.path.display(),
                metadata::ENGINE
            ))
        })
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<T, WorkflowError> {
        serde_json::from_str(self.key(key)?).map_err(|e| {
            WorkflowError::Usage(format!("{}: metadata key {key}: {e}", self.path.display()))
        })
    }
}

fn shard_parts(dir: &Path) -> Result<Vec<(usize, Part)>, WorkflowError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| WorkflowError::Usage(format!("cannot read {}: {e}", dir.display())))?;
    let mut parts = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| WorkflowError::Usage(format!("reading {}: {e}", dir.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(k) = name.strip_prefix("shard=") else {
            continue;
        };
        let path = entry.path().join("part.parquet");
        let index: usize = k.parse().map_err(|_| {
            WorkflowError::Usage(format!(
                "{}: not a shard=K directory",
                entry.path().display()
            ))
        })?;
        if !path.exists() {
            return Err(WorkflowError::Usage(format!(
                "{} is missing: shard {index} has not finished (rerun it, with --resume if it was interrupted)",
                path.display()
            )));
        }
        parts.push((
            index,
            Part {
                metadata: read_parquet_metadata(&path)?,
                results: read_results(&path)?,
                path,
            },
        ));
    }
    parts.sort_by_key(|(k, _)| *k);
    Ok(parts)
}

/// Checks that every part is a shard of the same sweep and that all N are
/// there; returns N.
fn check_parts(dir: &Path, parts: &[(usize, Part)]) -> Result<usize, WorkflowError> {
    let Some((_, first)) = parts.first() else {
        return Err(WorkflowError::Usage(format!(
            "no shard=K/part.parquet in {}: `summarize` merges the parts of `identify --shard K/N --out {}`",
            dir.display(),
            dir.display()
        )));
    };
    for (_, part) in parts {
        for k in [
            metadata::GRID,
            metadata::MEASURED_SHA256,
            metadata::TETHER,
            metadata::SCENARIO,
            metadata::ENGINE,
            metadata::SOLVER_SETTINGS,
        ] {
            if part.key(k)? != first.key(k)? {
                let hint = match k {
                    metadata::SOLVER_SETTINGS => {
                        " (run every shard with the same --solver and --tolerance)"
                    }
                    _ => "",
                };
                return Err(WorkflowError::Usage(format!(
                    "{} and {} differ in {k}: they are shards of different sweeps{hint}",
                    first.path.display(),
                    part.path.display()
                )));
            }
        }
        if part.metadata.get(metadata::CAMERA) != first.metadata.get(metadata::CAMERA) {
            return Err(WorkflowError::Usage(format!(
                "{} and {} differ in {}: they read the measured file through different cameras",
                first.path.display(),
                part.path.display(),
                metadata::CAMERA
            )));
        }
        if part.metadata.get(metadata::SCOUT_TOLERANCE)
            != first.metadata.get(metadata::SCOUT_TOLERANCE)
        {
            return Err(WorkflowError::Usage(format!(
                "{} and {} differ in {}: one swept a first pass, the other its final tolerance (run every shard with the same --tolerance, or none)",
                first.path.display(),
                part.path.display(),
                metadata::SCOUT_TOLERANCE
            )));
        }
    }
    let count = Shard::parse(first.key(metadata::SHARD)?)
        .map_err(usage)?
        .count;
    let present: Vec<usize> = parts.iter().map(|(k, _)| *k).collect();
    let missing: Vec<String> = (0..count)
        .filter(|k| !present.contains(k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() || present.iter().any(|&k| k >= count) {
        return Err(WorkflowError::Usage(format!(
            "{} holds shards {present:?} of {count}; missing: {}",
            dir.display(),
            missing.join(", ")
        )));
    }
    Ok(count)
}

/// Every part's rows in the grid's order, refused unless they hold each
/// candidate once.
fn merged_results(
    parts: &[(usize, Part)],
    grid: &Grid,
    dir: &Path,
) -> Result<Vec<CandidateResult>, WorkflowError> {
    let mut results: Vec<CandidateResult> = parts
        .iter()
        .flat_map(|(_, p)| p.results.iter().cloned())
        .collect();
    results.sort_by_key(|r| grid.index_of(&r.candidate));
    let indices: Vec<Option<usize>> = results
        .iter()
        .map(|r| grid.index_of(&r.candidate))
        .collect();
    if indices != (0..grid.len()).map(Some).collect::<Vec<_>>() {
        return Err(WorkflowError::Usage(format!(
            "the parts in {} hold {} rows, not the grid's {} candidates once each",
            dir.display(),
            results.len(),
            grid.len()
        )));
    }
    Ok(results)
}

/// The parameters the shards' grid does not vary.
fn shards_tether(first: &Part) -> Result<TetherParams, WorkflowError> {
    super::identify::sweep_tether(first.key(metadata::TETHER)?).map_err(|e| {
        WorkflowError::Usage(format!(
            "{}: metadata key {}: {e}",
            first.path.display(),
            metadata::TETHER
        ))
    })
}

/// The camera the shards read the measured file through (none: the
/// model's frame).
fn shards_camera(first: &Part) -> Result<Camera, WorkflowError> {
    match first.metadata.get(metadata::CAMERA) {
        Some(_) => first.parse(metadata::CAMERA),
        None => Ok(Camera::default()),
    }
}

/// The measured track the shards used: `--measured`, or the path in their
/// metadata, refused unless its SHA-256 is theirs.
fn shards_measured(
    request: &SummarizeRequest,
    first: &Part,
    camera: &Camera,
    model_pin_m: [f64; 2],
) -> Result<MeasuredTrack, WorkflowError> {
    let measured_path = match &request.measured {
        Some(p) => p.clone(),
        None => PathBuf::from(first.key(metadata::MEASURED)?),
    };
    let sha = crate::io::sha256_hex(&measured_path).map_err(|e| {
        WorkflowError::Usage(format!(
            "{e} (pass --measured FILE if the measured track has moved)"
        ))
    })?;
    if sha != first.key(metadata::MEASURED_SHA256)? {
        return Err(WorkflowError::Usage(format!(
            "{} is not the measured track the shards used (SHA-256 differs)",
            measured_path.display()
        )));
    }
    crate::io::track::read_film(&measured_path, camera, model_pin_m).map_err(usage)
}

/// The first part's metadata less what is a shard's own, with the shard
/// count and the shards' validations.
fn merged_metadata(
    parts: &[(usize, Part)],
    count: usize,
) -> Result<(Metadata, Vec<Validation>), WorkflowError> {
    let first = &parts[0].1;
    let mut metadata = first.metadata.clone();
    for key in [
        metadata::SHARD,
        metadata::VALIDATION,
        metadata::WALL_S,
        metadata::SUMMARY,
        metadata::ACCURACY,
    ] {
        metadata.remove(key);
    }
    metadata.insert(metadata::SHARDS.into(), count.to_string());
    let validations: Vec<Validation> = parts
        .iter()
        .filter_map(|(_, p)| p.metadata.get(metadata::VALIDATION))
        .map(|v| serde_json::from_str(v))
        .collect::<Result<_, _>>()
        .map_err(usage)?;
    if !validations.is_empty() {
        metadata.insert(metadata::SHARD_VALIDATIONS.into(), json(&validations));
    }
    Ok((metadata, validations))
}

/// What a merge found: a single film's sweep, or a joint one of several
/// films (`identify --config a --config b --shard K/N`).
#[derive(Debug, Clone)]
pub enum Merged {
    Single(Box<SummarizeReport>),
    Joint(Box<JointReport>),
}

/// Merges the parts in `request.dir`: a joint identification's when its
/// shard directories hold one `film=NAME/part.parquet` per film, else a
/// single film's ([`run`]).
pub fn merge(request: &SummarizeRequest) -> Result<Merged, WorkflowError> {
    match joint_parts(&request.dir)? {
        Some(films) => Ok(Merged::Joint(Box::new(run_joint(request, films)?))),
        None => Ok(Merged::Single(Box::new(run(request)?))),
    }
}

/// One film's parts of a joint identification, by shard.
type FilmParts = Vec<(usize, Part)>;

/// A joint identification's parts, by film (in the films' order), each
/// film's by shard; None when the shard directories hold no film's part.
fn joint_parts(dir: &Path) -> Result<Option<Vec<FilmParts>>, WorkflowError> {
    let read = |d: &Path| {
        std::fs::read_dir(d)
            .map_err(|e| WorkflowError::Usage(format!("cannot read {}: {e}", d.display())))
    };
    let mut films: std::collections::BTreeMap<usize, FilmParts> = Default::default();
    let mut joint = false;
    for entry in read(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(k) = name.strip_prefix("shard=").and_then(|k| k.parse().ok()) else {
            continue;
        };
        for film in read(&entry.path())?.flatten() {
            if !film.file_name().to_string_lossy().starts_with("film=") {
                continue;
            }
            joint = true;
            let path = film.path().join("part.parquet");
            if !path.exists() {
                return Err(WorkflowError::Usage(format!(
                    "{} is missing: shard {k} has not finished (rerun it, with --resume if it was interrupted)",
                    path.display()
                )));
            }
            let part = Part {
                metadata: read_parquet_metadata(&path)?,
                results: read_results(&path)?,
                path,
            };
            let key: FilmKey = part.parse(metadata::FILM)?;
            films.entry(key.index).or_default().push((k, part));
        }
    }
    if !joint {
        return Ok(None);
    }
    Ok(Some(
        films
            .into_values()
            .map(|mut parts| {
                parts.sort_by_key(|(k, _)| *k);
                parts
            })
            .collect(),
    ))
}

/// The merge of a joint identification's parts: each film's checked and
/// merged as a single film's, then combined as a whole run
/// (`workflow::joint::merge`).
fn run_joint(
    request: &SummarizeRequest,
    films: Vec<FilmParts>,
) -> Result<JointReport, WorkflowError> {
    if request.measured.is_some() {
        return Err(WorkflowError::Usage(
            "--measured names a single film's file; a joint identification's parts each record their film's (move the files back to those paths)".into(),
        ));
    }
    let first = &films[0][0].1;
    let grid: Grid = first.parse(metadata::GRID)?;
    let mut count = 0;
    let (mut joint_films, mut results, mut wall_s) = (Vec::new(), Vec::new(), 0.0);
    for parts in &films {
        count = check_parts(&request.dir, parts)?;
        let part = &parts[0].1;
        for k in [
            metadata::GRID,
            metadata::TETHER,
            metadata::ENGINE,
            metadata::SHARD,
        ] {
            if part.key(k)? != first.key(k)? {
                return Err(WorkflowError::Usage(format!(
                    "{} and {} differ in {k}: they are parts of different sweeps",
                    first.path.display(),
                    part.path.display()
                )));
            }
        }
        let key: FilmKey = part.parse(metadata::FILM)?;
        let film_grid = key.axes.grid(&grid)?;
        results.push(merged_results(parts, &film_grid, &request.dir)?);
        wall_s += parts
            .iter()
            .filter_map(|(_, p)| p.metadata.get(metadata::WALL_S)?.parse::<f64>().ok())
            .sum::<f64>();
        let measured = PathBuf::from(part.key(metadata::MEASURED)?);
        let sha = crate::io::sha256_hex(&measured).map_err(usage)?;
        if sha != part.key(metadata::MEASURED_SHA256)? {
            return Err(WorkflowError::Usage(format!(
                "{} is not the measured track film {}'s shards used (SHA-256 differs)",
                measured.display(),
                key.axes.name
            )));
        }
        joint_films.push(JointFilm {
            name: key.axes.name,
            measured,
            scenario: Some(part.parse(metadata::SCENARIO)?),
            declared_frames: Default::default(),
            camera: shards_camera(part)?,
            marker_arc_lengths_m: None,
            own: key.axes.own,
        });
    }
    let (mut metadata, _) = merged_metadata(&films[0], count)?;
    let validations = shard_validations(&films, &joint_films)?;
    if !validations.is_empty() {
        let listed: Vec<&Validation> = validations.iter().map(|(_, v)| v).collect();
        metadata.insert(metadata::SHARD_VALIDATIONS.into(), json(&listed));
    }
    for key in [
        metadata::FILM,
        metadata::MEASURED,
        metadata::MEASURED_SHA256,
        metadata::CAMERA,
        metadata::SCENARIO,
    ] {
        metadata.remove(key);
    }
    let joint = JointRequest {
        films: joint_films,
        surface_axes: first
            .metadata
            .get(metadata::SURFACE_AXES)
            .map(|_| first.parse(metadata::SURFACE_AXES))
            .transpose()?,
        base: shards_tether(first)?,
        refine: request.refine,
        allow_implausible: request.allow_implausible,
        out: request
            .out
            .clone()
            .unwrap_or_else(|| request.dir.join("_summary")),
        force: request.force,
        ..JointRequest::new(grid)
    };
    super::joint::merge(
        joint,
        results,
        first.engine()?,
        metadata,
        wall_s,
        validations,
    )
}

/// Every film's parts' checks of their engine, named by film and shard.
fn shard_validations(
    films: &[FilmParts],
    joint_films: &[JointFilm],
) -> Result<Vec<(String, Validation)>, WorkflowError> {
    let mut validations = Vec::new();
    for (parts, film) in films.iter().zip(joint_films) {
        for (k, part) in parts {
            if part.metadata.contains_key(metadata::VALIDATION) {
                let v: Validation = part.parse(metadata::VALIDATION)?;
                validations.push((format!("{} (shard {k})", film.name), v));
            }
        }
    }
    Ok(validations)
}

/// The tolerance of what the merged run decides (the best fit, the
/// refinement): the shards' `--tolerance`; else, after first passes, the
/// data's, with the candidates near the merged best re-run at it in
/// `results` as a single run re-runs them; else the data's, from the
/// merged summary (the shards swept at a fixed step or their final
/// tolerance).
fn merged_accuracy(
    grid: &Grid,
    results: &mut [CandidateResult],
    film: &MergedFilm<'_>,
    first: &Part,
) -> Result<Option<Chosen>, WorkflowError> {
    let given = first
        .metadata
        .get(metadata::ACCURACY)
        .and_then(|text| serde_json::from_str::<Chosen>(text).ok())
        .filter(|chosen| chosen.given);
    if given.is_some() {
        return Ok(given);
    }
    let observations = film.observations;
    if first.metadata.contains_key(metadata::SCOUT_TOLERANCE) {
        let scout_tolerance_m: f64 = first.parse(metadata::SCOUT_TOLERANCE)?;
        return confirm_near_best(
            grid,
            results,
            ConfirmRun {
                measured: film.measured,
                base: film.base,
                scenario: film.scenario,
                observations,
                scout_tolerance_m,
            },
            None,
        );
    }
    Ok(summarize(grid, results, observations).map(|s| Chosen::from_summary(&s, observations)))
}

/// The film the shards compared, as `summarize` reads it back.
struct MergedFilm<'a> {
    measured: &'a MeasuredTrack,
    base: &'a TetherParams,
    scenario: &'a Scenario,
    /// The coordinates J_e compares.
    observations: usize,
}

impl MergedFilm<'_> {
    /// The merged best refined at the data's accuracy, as a single run
    /// refines its own.
    fn refine(
        &self,
        grid: &Grid,
        summary: &Summary,
        accuracy: &mut Option<Chosen>,
    ) -> Result<Option<Refined>, WorkflowError> {
        refine_at_datas_accuracy(
            grid,
            summary,
            &[RefineFilm::single(self.measured, self.scenario)],
            self.base,
            accuracy,
        )
    }

    /// The merged best candidate's track and the refined optimum's, on
    /// the reference solver at `reference`.
    fn best_fit(
        &self,
        summary: &Summary,
        refined: Option<&Refined>,
        reference: &SolverSettings,
    ) -> Result<BestFit, WorkflowError> {
        let best = best_fit_run(summary, self.base, self.scenario, reference)?;
        best_fit_with_refined(
            BestFit::new(self.measured, &best.track),
            summary,
            refined,
            self.base,
            self.scenario,
            reference,
        )
    }
}

/// The merge's output directory (`--out`, else DIR/_summary), locked, and
/// its results table claimed: an earlier merge's is removed (`--force`),
/// the new one written last.
fn claim_summary(
    request: &SummarizeRequest,
) -> Result<(PathBuf, PathBuf, crate::io::lock::OutputLock), WorkflowError> {
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| request.dir.join("_summary"));
    let lock = crate::io::lock::OutputLock::acquire(&out)?;
    let results_path = claim_output(&out, "results.parquet", request.force)?;
    super::identify::remove_previous_table(&results_path)?;
    Ok((out, results_path, lock))
}

/// Merges the parts in `request.dir`.
pub fn run(request: &SummarizeRequest) -> Result<SummarizeReport, WorkflowError> {
    let parts = shard_parts(&request.dir)?;
    let count = check_parts(&request.dir, &parts)?;
    let first = &parts[0].1;
    let grid: Grid = first.parse(metadata::GRID)?;
    let base = shards_tether(first)?;
    let scenario: Scenario = first.parse(metadata::SCENARIO)?;
    let engine = first.engine()?;
    let mut results = merged_results(&parts, &grid, &request.dir)?;
    let camera = shards_camera(first)?;
    let measured = shards_measured(request, first, &camera, scenario.pin_m())?;

    let (out, results_path, _lock) = claim_summary(request)?;
    let (mut metadata, validations) = merged_metadata(&parts, count)?;
    let film = MergedFilm {
        measured: &measured,
        base: &base,
        scenario: &scenario,
        observations: observations(&measured, &scenario),
    };
    let mut accuracy = merged_accuracy(&grid, &mut results, &film, first)?;
    let summary = summarize(&grid, &results, film.observations);
    let refined = match &summary {
        Some(s) if request.refine => film.refine(&grid, s, &mut accuracy)?,
        _ => None,
    };
    for (key, value) in [
        (metadata::ACCURACY, accuracy.as_ref().map(json)),
        (metadata::REFINED, refined.as_ref().map(json)),
    ] {
        metadata.extend(value.map(|v| (key.to_string(), v)));
    }
    let reference = Chosen::reference(accuracy.as_ref());
    // As a single run judges its best fit (the shards could not: each saw
    // only its part), against the film's noise estimated as the shards
    // estimated it.
    let (goodness, fit_warning) = super::identify::judge_fit(
        &mut metadata,
        summary.as_ref(),
        refined.as_ref(),
        super::identify::film_noise(&camera, &measured),
        &base,
    );
    let fit = match &summary {
        Some(s) => {
            metadata.insert(metadata::SUMMARY.into(), json(s));
            Some(film.best_fit(s, refined.as_ref(), &reference)?)
        }
        None => None,
    };
    let (Some(summary), Some(fit)) = (summary, fit) else {
        return Err(WorkflowError::NothingSimulated(format!(
            "every candidate of the {count} shards in {} diverged: no J_e to compare, nothing written",
            request.dir.display()
        )));
    };
    write_best_fit(
        &out.join("best_fit.parquet"),
        &fit,
        &camera,
        scenario.pin_m(),
        &metadata,
    )?;
    if let Some(r) = &refined {
        write_refined(&out.join("refined.parquet"), r, &metadata)?;
    }
    let annotations = crate::plot::identify::Annotations::from_metadata(&metadata);
    let figures = crate::plot::identify::save_all(&out, &results, Some(&fit), &annotations)?;
    // Last: its presence marks a complete set.
    let e = &engine;
    write_results(
        &results_path,
        &results,
        &e.backend,
        &e.precision,
        &e.solver,
        &metadata,
    )?;
    Ok(SummarizeReport {
        shards: count,
        results,
        summary,
        engine,
        validations,
        results_path,
        figures,
        refined,
        fit_warning,
        goodness,
        implausible_allowed: request.allow_implausible,
        out,
        accuracy,
    })
}

/// A merge whose shards' validations failed, or (unless allowed) whose
/// best fit misses the data as no fit of this experiment can, is an error
/// after the files are written.
pub fn check_outcome(report: &SummarizeReport) -> Result<(), WorkflowError> {
    if report.validations.iter().any(|v| !v.passed) {
        return Err(WorkflowError::Failed(format!(
            "the validation of at least one shard failed (metadata key {})",
            metadata::SHARD_VALIDATIONS
        )));
    }
    super::identify::implausible(
        report.fit_warning.as_ref(),
        report.implausible_allowed,
        &report.out,
    )
}
