//! Merging a sharded identification: the parts of `identify --shard K/N`
//! (`DIR/shard=K/part.parquet` of one film, `DIR/shard=K/film=NAME/part.parquet`
//! of several), checked to be the same sweep and complete, become the
//! whole run's results, summary, refinement, best fits and figures, by
//! the same path that finishes a whole run ([`super::identify::merge`]).

use crate::workflow::keywords::{Keyword, KeywordKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::film::Film;
use super::identify::{FilmKey, IdentifyReport, IdentifyRequest, engine_names};
use super::{WorkflowError, usage};
use crate::camera::Camera;
use crate::engine::EngineNames;
use crate::io::results::read_results;
use crate::io::track::read_parquet_metadata;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::sweep::accuracy::Chosen;
use crate::sweep::validation::Validation;
use crate::sweep::{CandidateResult, Grid, Shard};

/// `summarize`'s inputs after its folder (the command line's positional
/// `DIR`), each named and described once (`workflow::keywords`), in the
/// order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new(
        "measured",
        KeywordKind::Path,
        "the measured track, when it is no longer where the shards recorded it (its SHA-256 must match)",
    ),
    Keyword::new(
        "out",
        KeywordKind::Path,
        "the merged results' folder; default DIR/_summary",
    ),
    Keyword::new(
        "no_refine",
        KeywordKind::Switch,
        "skip refining the merged best candidate",
    ),
    Keyword::new(
        "allow_implausible",
        KeywordKind::Switch,
        "return a merged fit its noise cannot explain instead of failing",
    ),
    Keyword::new(
        "force",
        KeywordKind::Switch,
        "replace an existing merged results.parquet",
    ),
];

/// A merge, as the user asked for it.
#[derive(Debug, Clone)]
pub struct SummarizeRequest {
    /// The directory of the shards' parts.
    pub dir: PathBuf,
    /// A single film's measured track, when it is no longer where the
    /// shards recorded it.
    pub measured: Option<PathBuf>,
    /// Default `DIR/_summary`.
    pub out: Option<PathBuf>,
    /// Refine the merged best candidate, as a whole run does
    /// (`sweep::refine`), into refined.parquet.
    pub refine: bool,
    /// A best fit that does not explain the data does not fail the merge
    /// (`identify --allow-implausible`).
    pub allow_implausible: bool,
    pub force: bool,
}

/// What the merge found and wrote: the shards merged, and the whole
/// run's report.
#[derive(Debug, Clone)]
pub struct SummarizeReport {
    pub shards: usize,
    pub identification: IdentifyReport,
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

/// Each film's parts (one film's without a film key, first), each by
/// shard: `shard=K/part.parquet`, or `shard=K/film=NAME/part.parquet`
/// for every film.
fn film_parts(dir: &Path) -> Result<Vec<Vec<(usize, Part)>>, WorkflowError> {
    let read = |d: &Path| {
        std::fs::read_dir(d)
            .map_err(|e| WorkflowError::Usage(format!("cannot read {}: {e}", d.display())))
    };
    let mut films: BTreeMap<usize, Vec<(usize, Part)>> = BTreeMap::new();
    for entry in read(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(k) = name.strip_prefix("shard=") else {
            continue;
        };
        let k: usize = k.parse().map_err(|_| {
            WorkflowError::Usage(format!(
                "{}: not a shard=K directory",
                entry.path().display()
            ))
        })?;
        let mut paths: Vec<PathBuf> = read(&entry.path())?
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().starts_with("film="))
            .map(|f| f.path().join("part.parquet"))
            .collect();
        if paths.is_empty() {
            paths.push(entry.path().join("part.parquet"));
        }
        for path in paths {
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
            let index = match part.metadata.contains_key(metadata::FILM) {
                true => part.parse::<FilmKey>(metadata::FILM)?.index,
                false => 0,
            };
            films.entry(index).or_default().push((k, part));
        }
    }
    Ok(films
        .into_values()
        .map(|mut parts| {
            parts.sort_by_key(|(k, _)| *k);
            parts
        })
        .collect())
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
    let extra: Vec<String> = present
        .iter()
        .filter(|&&k| k >= count)
        .map(|k| format!("shard={k}"))
        .collect();
    if !extra.is_empty() {
        return Err(WorkflowError::Usage(format!(
            "{} holds shards {present:?}, but its parts say the sweep was cut into {count} (0 to {}): {} belong{} to another sweep; move {} out of the folder",
            dir.display(),
            count - 1,
            extra.join(", "),
            if extra.len() == 1 { "s" } else { "" },
            if extra.len() == 1 { "it" } else { "them" },
        )));
    }
    if !missing.is_empty() {
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

/// One film's merged rows and its film as the shards recorded it: its
/// measured file (`--measured` for a single film's, whose SHA-256 must be
/// the shards'), experiment, camera and own axes.
fn merged_film(
    request: &SummarizeRequest,
    parts: &[(usize, Part)],
    grid: &Grid,
) -> Result<(Film, Vec<CandidateResult>), WorkflowError> {
    let part = &parts[0].1;
    let key: Option<FilmKey> = match part.metadata.contains_key(metadata::FILM) {
        true => Some(part.parse(metadata::FILM)?),
        false => None,
    };
    let film_grid = match &key {
        Some(k) => k.axes.grid(grid)?,
        None => grid.clone(),
    };
    let results = merged_results(parts, &film_grid, &request.dir)?;
    let measured = match (&request.measured, &key) {
        (Some(p), None) => p.clone(),
        (Some(_), Some(_)) => {
            return Err(WorkflowError::Usage(
                "--measured names a single film's file; a joint identification's parts each record their film's (move the files back to those paths)".into(),
            ));
        }
        (None, _) => PathBuf::from(part.key(metadata::MEASURED)?),
    };
    let sha = crate::io::sha256_hex(&measured).map_err(|e| {
        WorkflowError::Usage(format!(
            "{e} (pass --measured FILE if the measured track has moved)"
        ))
    })?;
    if sha != part.key(metadata::MEASURED_SHA256)? {
        return Err(WorkflowError::Usage(format!(
            "{} is not the measured track {} used (SHA-256 differs)",
            measured.display(),
            match &key {
                Some(k) => format!("film {}'s shards", k.axes.name),
                None => "the shards".into(),
            }
        )));
    }
    let film = Film {
        scenario: Some(part.parse(metadata::SCENARIO)?),
        camera: shards_camera(part)?,
        ..Film::new(measured)
    };
    Ok(match key {
        Some(k) => (
            Film {
                name: k.axes.name,
                own: k.axes.own,
                ..film
            },
            results,
        ),
        None => (film, results),
    })
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

/// The first part's metadata less what is a shard's own, with the shard
/// count and the shards' validations.
fn merged_metadata(films: &[Vec<(usize, Part)>], count: usize) -> Result<Metadata, WorkflowError> {
    let parts = &films[0];
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
    let validations: Vec<Validation> = films
        .iter()
        .flatten()
        .filter_map(|(_, p)| p.metadata.get(metadata::VALIDATION))
        .map(|v| serde_json::from_str(v))
        .collect::<Result<_, _>>()
        .map_err(usage)?;
    if !validations.is_empty() {
        metadata.insert(metadata::SHARD_VALIDATIONS.into(), json(&validations));
    }
    if films.len() > 1 {
        // Each film's record is the merged run's list of films.
        for key in [
            metadata::FILM,
            metadata::MEASURED,
            metadata::MEASURED_SHA256,
            metadata::CAMERA,
            metadata::SCENARIO,
            metadata::NOISE,
        ] {
            metadata.remove(key);
        }
    }
    Ok(metadata)
}

/// Every film's parts' checks of their engine, named by shard (and film,
/// of several).
fn shard_validations(
    films: &[Vec<(usize, Part)>],
    named: &[Film],
) -> Result<Vec<(String, Validation)>, WorkflowError> {
    let mut validations = Vec::new();
    for (parts, film) in films.iter().zip(named) {
        for (k, part) in parts {
            if part.metadata.contains_key(metadata::VALIDATION) {
                let v: Validation = part.parse(metadata::VALIDATION)?;
                let name = match films.len() {
                    1 => format!("shard {k}"),
                    _ => format!("{} (shard {k})", film.name),
                };
                validations.push((name, v));
            }
        }
    }
    Ok(validations)
}

/// Merges the parts in `request.dir`.
pub fn run(request: &SummarizeRequest) -> Result<SummarizeReport, WorkflowError> {
    let films = film_parts(&request.dir)?;
    let Some(first) = films
        .first()
        .and_then(|parts| parts.first())
        .map(|(_, p)| p)
    else {
        return Err(WorkflowError::Usage(format!(
            "no shard=K/part.parquet in {}: `summarize` merges the parts of `identify --shard K/N --out {}`",
            request.dir.display(),
            request.dir.display()
        )));
    };
    let grid: Grid = first.parse(metadata::GRID)?;
    let mut count = 0;
    let (mut given, mut results, mut wall_s) = (Vec::new(), Vec::new(), 0.0);
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
        let (film, rows) = merged_film(request, parts, &grid)?;
        given.push(film);
        results.push(rows);
        wall_s += parts
            .iter()
            .filter_map(|(_, p)| p.metadata.get(metadata::WALL_S)?.parse::<f64>().ok())
            .sum::<f64>();
    }
    let metadata = merged_metadata(&films, count)?;
    let validations = shard_validations(&films, &given)?;
    // The shards' `--tolerance`, which the merged run keeps.
    let tolerance_m = first
        .metadata
        .get(metadata::ACCURACY)
        .and_then(|text| serde_json::from_str::<Chosen>(text).ok())
        .filter(|chosen| chosen.given)
        .map(|chosen| chosen.tolerance_m);
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| request.dir.join("_summary"));
    let identify = IdentifyRequest {
        surface_axes: first
            .metadata
            .get(metadata::SURFACE_AXES)
            .map(|_| first.parse(metadata::SURFACE_AXES))
            .transpose()?,
        base: shards_tether(first)?,
        tolerance_m,
        refine: request.refine,
        allow_implausible: request.allow_implausible,
        force: request.force,
        ..IdentifyRequest::of_films(given, grid, out)
    };
    let identification = super::identify::merge(
        identify,
        results,
        first.engine()?,
        metadata,
        wall_s,
        validations,
    )?;
    Ok(SummarizeReport {
        shards: count,
        identification,
    })
}
