//! Joint identification: one tether fitted to several films of it at once
//! (`sweep::joint`). Each film is swept over the shared grid times its own
//! axes on the chosen engine and minimized over its own axes; the films'
//! J_e, each weighed by the inverse of its noise variance, make the joint
//! J_e, which is summarized, refined (the shared parameters and every
//! film's own together), validated film by film and written.
//!
//! [`prepare`] checks every film against its experiment, claims the output
//! and chooses the engine; [`PreparedJoint::run`] runs it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::identify::{
    CHOICE_SAMPLE_GROUPS, CPU_CHUNK_CANDIDATES_PER_THREAD, Film, GPU_CHUNK_CANDIDATES,
    GoodnessOfFit, IdentifyRequest, Outlier, Plausibility, StartOffset, best_length_m,
    check_settings, check_surface_axes, engine_sweep_settings, find_outliers, fit_warning,
    implausible, outlier_limit_m, prepare_film, record_judgement, refine_at_datas_accuracy,
    release_simulations, sweep_settings, sweep_tether_json,
};
use super::identify::{TrackedPin, remove_previous_table, take_pin_from_film};
use super::{Hooks, WorkflowError, batch, claim_output};
use crate::camera::Camera;
use crate::engine::choice::EngineRequest;
use crate::engine::{Engine, EngineKind, EngineNames, EngineOptions, RunHooks};
use crate::io::checkpoint::{CHUNKS_DIR, ChunkStore};
use crate::io::lock::OutputLock;
use crate::io::results::{
    BestFit, write_best_fit, write_joint_results, write_refined, write_results,
};
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::batch::StepCache;
use crate::scenario::{DeclaredFrames, RunStatus, Scenario, SolverSettings, simulate};
use crate::solver::SolverKind;
use crate::sweep::accuracy::{Chosen, confirm};
use crate::sweep::joint::{
    FilmAxes, FilmScore, FilmWeight, best_over_own, combine, combine_one, weights,
};
use crate::sweep::refine::{RefineFilm, Refined};
use crate::sweep::validation::{Validation, pick, validate};
use crate::sweep::{
    Axis, Candidate, CandidateResult, Coverage, Grid, ParameterAxis, Selection, Shard, Summary,
    run, summarize,
};

/// One film of a joint identification, as the user gave it.
#[derive(Debug, Clone)]
pub struct JointFilm {
    /// Its name: the config's file stem, or `name = "…"` in its
    /// `[settings]`; letters, digits, `_` and `-` (it names columns and
    /// files).
    pub name: String,
    /// Its measured track, read through `camera`.
    pub measured: PathBuf,
    /// Its experiment (release angle, pin, markers); None: docs/model.md
    /// §4.1's.
    pub scenario: Option<Scenario>,
    /// The frames its config declares, to agree with the file.
    pub declared_frames: DeclaredFrames,
    pub camera: Camera,
    pub marker_arc_lengths_m: Option<Vec<f64>>,
    /// Axes over its own parameters (`FILM.release_time_s`, …).
    pub own: Vec<ParameterAxis>,
}

/// A joint identification, as the user asked for it: the films, and what
/// a single film's identification also takes.
#[derive(Debug, Clone)]
pub struct JointRequest {
    pub films: Vec<JointFilm>,
    /// The shared axes: n, D, C_D and any tether parameter.
    pub grid: Grid,
    /// Candidates per engine call; default as `identify`'s chunks.
    pub chunk_size: Option<usize>,
    pub engine: EngineOptions,
    /// Every tether parameter the grid does not vary.
    pub base: TetherParams,
    /// The reference solver's tolerance for everything \[m\]; None: chosen
    /// from the data after a first pass ([`crate::sweep::accuracy`]).
    pub tolerance_m: Option<f64>,
    /// Candidates per film re-run on the reference solver after a sweep on
    /// another solver; 0 skips the check.
    pub validate: usize,
    pub validate_marker_tolerance_m: f64,
    pub validate_j_e_tolerance: f64,
    pub refine: bool,
    pub allow_implausible: bool,
    pub surface_axes: Option<[Axis; 2]>,
    pub csv: bool,
    pub out: PathBuf,
    /// Finish an interrupted run of the same request from its saved
    /// chunks (each film's in `.chunks/film=NAME/`).
    pub resume: bool,
    /// Run only this shard of every film's candidates, and write each
    /// film's part (`DIR/shard=K/film=NAME/part.parquet`), which
    /// `summarize` merges.
    pub shard: Option<Shard>,
    pub force: bool,
}

impl JointRequest {
    /// A joint identification over `grid` with the CLI's defaults (as
    /// [`IdentifyRequest::new`]'s) and no films yet, into
    /// `identify-results`.
    pub fn new(grid: Grid) -> Self {
        Self::from_single(
            Vec::new(),
            IdentifyRequest::new("", grid, "identify-results"),
        )
    }

    /// `films` with everything else as `single` asks for it (its grid,
    /// engine, tether, checks, output, shard and resume); its measured
    /// file and experiment are the films'.
    pub fn from_single(films: Vec<JointFilm>, single: IdentifyRequest) -> Self {
        Self {
            films,
            grid: single.grid,
            chunk_size: single.chunk_size,
            engine: single.engine,
            base: single.base,
            tolerance_m: single.tolerance_m,
            validate: single.validate,
            validate_marker_tolerance_m: single.validate_marker_tolerance_m,
            validate_j_e_tolerance: single.validate_j_e_tolerance,
            refine: single.refine,
            allow_implausible: single.allow_implausible,
            surface_axes: single.surface_axes,
            csv: single.csv,
            out: single.out,
            resume: single.resume,
            shard: single.shard,
            force: single.force,
        }
    }

    /// Film `film`'s own identification request, for the checks a single
    /// film has: its file, experiment, camera and grid (the shared axes
    /// and its own).
    fn film_request(&self, film: &JointFilm, grid: Grid) -> IdentifyRequest {
        IdentifyRequest {
            scenario: film.scenario.clone(),
            declared_frames: film.declared_frames.clone(),
            camera: film.camera.clone(),
            marker_arc_lengths_m: film.marker_arc_lengths_m.clone(),
            chunk_size: self.chunk_size,
            engine: self.engine.clone(),
            base: self.base.clone(),
            tolerance_m: self.tolerance_m,
            validate: self.validate,
            validate_marker_tolerance_m: self.validate_marker_tolerance_m,
            validate_j_e_tolerance: self.validate_j_e_tolerance,
            allow_implausible: self.allow_implausible,
            ..IdentifyRequest::new(&film.measured, grid, &self.out)
        }
    }

    /// Checks it, then runs it ([`prepare`], then [`PreparedJoint::run`]).
    pub fn run(self, hooks: Hooks<'_>) -> Result<JointReport, WorkflowError> {
        prepare(self)?.run(hooks)
    }
}

/// One film's part of the plan.
#[derive(Debug, Clone)]
pub struct FilmPlan {
    pub name: String,
    pub measured: PathBuf,
    /// The experiment compared: frames, markers, duration.
    pub scenario: Scenario,
    pub coverage: Coverage,
    pub start: Option<StartOffset>,
    pub unused_rows: usize,
    pub occluded_rows: usize,
    /// Its candidates (shared × own), those found finished in saved
    /// chunks, and the simulations they all take (a release axis's values
    /// share one).
    pub candidates: usize,
    pub resumed: usize,
    pub simulations: usize,
    pub own: Vec<ParameterAxis>,
    /// Its pin, where its tracked marker gave it ([`take_pin_from_film`]).
    pub tracked_pin: Option<TrackedPin>,
}

/// What a prepared joint identification will do.
#[derive(Debug, Clone)]
pub struct JointPlan {
    pub films: Vec<FilmPlan>,
    /// The shared grid's candidates: the joint results' rows.
    pub shared_candidates: usize,
    pub engine: EngineKind,
    pub adapter: Option<String>,
    pub engine_reason: Option<String>,
    pub table_path: PathBuf,
    /// The first pass's tolerance, when the sweep is the reference
    /// solver's first pass, confirmed at the data's afterwards
    /// ([`crate::sweep::accuracy`]) \[m\].
    pub scout_tolerance_m: Option<f64>,
}

/// A joint identification ready to run.
pub struct PreparedJoint {
    request: JointRequest,
    pub plan: JointPlan,
    films: Vec<PreparedFilm>,
    engine: Engine,
    metadata: Metadata,
    /// Whether claiming the output made its directory (removed again when
    /// a run is interrupted before writing anything).
    made_out: bool,
    /// No other live run writes there while this one does (None once
    /// released to remove the directory).
    lock: Option<OutputLock>,
}

/// A film checked against its experiment: what combining the films
/// needs of it.
struct CheckedFilm {
    axes: FilmAxes,
    /// The shared axes and its own.
    grid: Grid,
    film: Film,
    camera: Camera,
    /// Its measured file, as given.
    measured: PathBuf,
    /// Its pin, where its tracked marker gave it.
    tracked_pin: Option<TrackedPin>,
}

/// A film ready to sweep.
struct PreparedFilm {
    checked: CheckedFilm,
    /// Its saved chunks, the results they hold, and the positions in its
    /// grid this run still runs (a shard's part of them).
    store: ChunkStore,
    done: Vec<CandidateResult>,
    todo: Vec<usize>,
    /// Where a shard writes the film's part.
    part_path: Option<PathBuf>,
}

/// A shard part's film ([`metadata::FILM`]): its place among the films
/// (their order is the refinement's and the columns'), its name and own
/// axes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilmKey {
    pub index: usize,
    #[serde(flatten)]
    pub axes: FilmAxes,
}

/// A film's record in the metadata ([`metadata::FILMS`]).
#[derive(Serialize)]
struct FilmRecord<'a> {
    name: &'a str,
    measured: String,
    measured_sha256: &'a str,
    scenario: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    camera: Option<&'a Camera>,
    own: &'a [ParameterAxis],
    observations: usize,
    /// Its lowest J_e over the grid \[m²\], noise estimate \[m\] and weight
    /// in the joint J_e ([`FilmWeight`]).
    j_min_m2: f64,
    sigma_m: f64,
    weight: f64,
}

/// What a joint identification found and wrote (a shard: its parts).
#[derive(Debug, Clone, Default)]
pub struct JointReport {
    /// One per shared candidate: the joint J_e.
    pub results: Vec<CandidateResult>,
    /// Each film's best over its own axes at each shared candidate.
    pub scores: Vec<Vec<FilmScore>>,
    /// Each film's noise and weight.
    pub weights: Vec<FilmWeight>,
    /// None when every candidate diverged in some film.
    pub summary: Option<Summary>,
    pub refined: Option<Refined>,
    /// The reference solver's tolerance for the best, the region, the
    /// refinement and the best fits, and how it was chosen (None for a
    /// shard, or when no shared candidate ran in every film).
    pub accuracy: Option<Chosen>,
    /// Each film's validation, when the sweep ran on another solver than
    /// the reference.
    pub validations: Vec<(String, Validation)>,
    /// The films' candidates scored, and the simulations they took.
    pub scored: usize,
    pub simulations: usize,
    pub wall_s: f64,
    pub table_path: PathBuf,
    pub figures: Vec<String>,
    pub fit_warning: Option<String>,
    /// Each film's fit against its noise (none for a shard, or a film too
    /// short to estimate its noise).
    pub goodness: Vec<FilmGoodness>,
    pub implausible_allowed: bool,
    /// Each film's samples far beyond the noise from its best fit, and the
    /// distance beyond which they are listed \[m\].
    pub outliers: Vec<FilmOutliers>,
    pub out: PathBuf,
    /// The shard this run was, and the films' parts it wrote.
    pub shard: Option<Shard>,
    pub parts: Vec<PathBuf>,
}

/// A film's samples far beyond its noise from its best fit.
#[derive(Debug, Clone)]
pub struct FilmOutliers {
    pub film: String,
    pub outliers: Vec<Outlier>,
    /// The distance beyond which they are listed \[m\].
    pub limit_m: f64,
    /// How its file is written, to name them as the file has them.
    pub camera: Camera,
}

/// Film names name columns (`FILM.j_e_m2`) and files (`best_fit_FILM`).
fn check_names(films: &[JointFilm]) -> Result<(), WorkflowError> {
    if films.len() < 2 {
        return Err(WorkflowError::Usage(format!(
            "a joint identification fits two films or more; {} given (one film: identify --measured FILE --config FILE)",
            films.len()
        )));
    }
    let mut seen = HashSet::new();
    for f in films {
        let plain = !f.name.is_empty()
            && f.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !plain {
            return Err(WorkflowError::Usage(format!(
                "film name '{}': letters, digits, _ and - only (it names columns and files); give name = \"…\" in the config's [settings]",
                f.name
            )));
        }
        if !seen.insert(f.name.as_str()) {
            return Err(WorkflowError::Usage(format!(
                "two films are named '{}': give each config its own name = \"…\" in [settings]",
                f.name
            )));
        }
    }
    Ok(())
}

/// Checks every film against its experiment and the grid.
fn check_films(request: &JointRequest) -> Result<Vec<CheckedFilm>, WorkflowError> {
    check_names(&request.films)?;
    if let Some(axes) = &request.surface_axes {
        check_surface_axes(&request.grid, axes)?;
    }
    let mut checked = Vec::with_capacity(request.films.len());
    for (k, film) in request.films.iter().enumerate() {
        let axes = FilmAxes {
            name: film.name.clone(),
            own: film.own.clone(),
        };
        let grid = axes.grid(&request.grid)?;
        let mut film_request = request.film_request(film, grid.clone());
        if k == 0 {
            check_settings(&film_request)?;
        }
        let tracked_pin = take_pin_from_film(&mut film_request).map_err(|e| named(e, film))?;
        checked.push(CheckedFilm {
            axes,
            grid,
            film: prepare_film(&film_request).map_err(|e| named(e, film))?,
            camera: film_request.camera.clone(),
            measured: film.measured.clone(),
            tracked_pin,
        });
    }
    Ok(checked)
}

/// What every table of the run records: the shared grid, the tether, the
/// solver and the engine.
fn run_metadata(
    request: &JointRequest,
    settings: &SolverSettings,
    choice: &crate::engine::choice::Choice,
) -> Metadata {
    let mut metadata = metadata::base();
    metadata.insert(metadata::GRID.into(), json(&request.grid));
    if let Some(axes) = &request.surface_axes {
        metadata.insert(metadata::SURFACE_AXES.into(), json(axes));
    }
    if let Some(s) = &request.shard {
        metadata.insert(metadata::SHARD.into(), s.to_string());
    }
    metadata.insert(
        metadata::TETHER.into(),
        sweep_tether_json(&request.base, &request.grid),
    );
    metadata.insert(metadata::SOLVER_SETTINGS.into(), json(settings));
    super::record_engine(&mut metadata, &request.engine, choice);
    metadata
}

/// Checks every film, claims the output (a shard's parts) and chooses the
/// engine for all the films' simulations.
pub fn prepare(request: JointRequest) -> Result<PreparedJoint, WorkflowError> {
    let checked = check_films(&request)?;
    let made_out = !request.out.exists();
    let table_dir = match &request.shard {
        Some(s) => request.out.join(s.directory()),
        None => request.out.clone(),
    };
    let lock = OutputLock::acquire(&table_dir)?;
    let table_path = match &request.shard {
        Some(_) => table_dir.clone(),
        None => claim_output(&request.out, "results.parquet", request.force)?,
    };
    let experiments: Vec<(&Grid, &Scenario)> = checked
        .iter()
        .map(|f| (&f.grid, &f.film.scenario))
        .collect();
    let (choice, (settings, scout_tolerance_m)) = choose_engine(&request, &experiments)?;
    let engine = choice.engine.kind();
    let names = engine.names();
    let films = open_chunks(
        &request,
        checked,
        &table_dir,
        &json(&(&settings, &names, &request.shard)),
    )?;
    let mut metadata = run_metadata(&request, &settings, &choice);
    if let Some(t) = scout_tolerance_m {
        metadata.insert(metadata::SCOUT_TOLERANCE.into(), json(&t));
    }
    let plan = JointPlan {
        films: films
            .iter()
            .map(|p| {
                let f = &p.checked;
                let selected = p.done.len() + p.todo.len();
                FilmPlan {
                    name: f.axes.name.clone(),
                    measured: f.measured.clone(),
                    scenario: f.film.scenario.clone(),
                    coverage: f.film.coverage,
                    start: f.film.start,
                    unused_rows: f.film.unused_rows,
                    occluded_rows: f.film.measured.occluded_rows,
                    candidates: selected,
                    resumed: p.done.len(),
                    simulations: selected / f.grid.release_run(),
                    own: f.axes.own.clone(),
                    tracked_pin: f.tracked_pin,
                }
            })
            .collect(),
        shared_candidates: request.grid.len(),
        engine,
        adapter: choice.engine.adapter_name().map(str::to_string),
        engine_reason: choice.reason,
        table_path,
        scout_tolerance_m,
    };
    Ok(PreparedJoint {
        request,
        plan,
        films,
        engine: choice.engine,
        metadata,
        made_out,
        lock: Some(lock),
    })
}

/// Each checked film with its saved chunks opened (resumed, or refused
/// without `--resume`), the positions of its grid this run runs (a
/// shard's), and, for a shard, its part claimed. `engine_key` is the
/// sweep's solver settings, engine and shard, which decide the results as
/// much as the film does.
fn open_chunks(
    request: &JointRequest,
    checked: Vec<CheckedFilm>,
    table_dir: &Path,
    engine_key: &str,
) -> Result<Vec<PreparedFilm>, WorkflowError> {
    let mut films = Vec::with_capacity(checked.len());
    for f in checked {
        let part_path = match &request.shard {
            Some(_) => Some(claim_output(
                &table_dir.join(format!("film={}", f.axes.name)),
                "part.parquet",
                request.force,
            )?),
            None => None,
        };
        // Everything that decides the film's results: a resume must
        // continue the same run.
        let run_key = json(&(
            &request.grid,
            &f.grid,
            &f.film.measured_sha256,
            &f.camera,
            &request.base,
            &f.film.scenario,
            engine_key,
        ));
        let (store, done) = ChunkStore::open_film(
            table_dir,
            &f.axes.name,
            &run_key,
            request.resume,
            request.force,
        )?;
        let finished: HashSet<usize> = done
            .iter()
            .filter_map(|r| f.grid.index_of(&r.candidate))
            .collect();
        let todo = Selection::new(f.grid.clone(), request.shard, finished)
            .positions()
            .collect();
        films.push(PreparedFilm {
            checked: f,
            store,
            done,
            todo,
            part_path,
        });
    }
    Ok(films)
}

/// The engine for every film's simulations, and the sweep's solver
/// settings on it with the first pass's tolerance where it scouts
/// (`identify::engine_sweep_settings`).
fn choose_engine(
    request: &JointRequest,
    films: &[(&Grid, &Scenario)],
) -> Result<(crate::engine::choice::Choice, (SolverSettings, Option<f64>)), WorkflowError> {
    // The engine weighs every film's simulations (one per release group),
    // or an even sample of each.
    let per_film = (CHOICE_SAMPLE_GROUPS / films.len()).max(1);
    let mut simulations = Vec::new();
    let mut groups = 0;
    for (grid, scenario) in films {
        let (sample, count) =
            Selection::new((*grid).clone(), None, HashSet::new()).sample_groups(per_film);
        simulations.extend(release_simulations(&sample, &request.base, scenario));
        groups += count;
    }
    let first = request.film_request(&request.films[0], films[0].0.clone());
    let steps = Arc::new(StepCache::default());
    let choice = super::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: sweep_settings(
                &first,
                request.engine.solver.unwrap_or(SolverKind::Reference),
                scouts(request),
            )?,
            simulations: groups,
            scouting: scouts(request),
        },
        &super::count(groups, "drop"),
        &simulations,
        (request.chunk_size.unwrap_or(GPU_CHUNK_CANDIDATES) / films[0].0.release_run()).max(1),
        &steps,
    )?;
    let settings = engine_sweep_settings(&first, &choice.engine)?;
    Ok((choice, settings))
}

/// Whether a reference-solver sweep is a first pass at the scouting
/// tolerance, confirmed at the data's: a run without `--tolerance`, as a
/// single film's. A shard's parts are confirmed by `summarize`'s merge.
fn scouts(request: &JointRequest) -> bool {
    request.tolerance_m.is_none()
}

/// An error in one film's checks, with the film named.
fn named(e: WorkflowError, film: &JointFilm) -> WorkflowError {
    let place = format!("film {} ({})", film.name, film.measured.display());
    match e {
        WorkflowError::Usage(m) => WorkflowError::Usage(format!("{place}: {m}")),
        WorkflowError::Input(i) => WorkflowError::Usage(format!("{place}: {i}")),
        other => other,
    }
}

/// What the films' sweeps return: each film's results in its grid's
/// order, and the simulations they took.
struct SweptFilms {
    results: Vec<Vec<CandidateResult>>,
    simulations: usize,
    wall_s: f64,
}

impl PreparedJoint {
    /// Sweeps every film, then combines, summarizes, refines, validates
    /// and writes; a shard writes each film's part.
    pub fn run(mut self, hooks: Hooks<'_>) -> Result<JointReport, WorkflowError> {
        let swept = self.sweep(hooks)?;
        let stores: Vec<ChunkStore>;
        let report = match self.request.shard {
            Some(shard) => {
                let report = self.write_parts(shard, &swept)?;
                stores = self.films.into_iter().map(|f| f.store).collect();
                report
            }
            None => {
                let (checked, kept): (Vec<CheckedFilm>, Vec<ChunkStore>) =
                    self.films.into_iter().map(|f| (f.checked, f.store)).unzip();
                stores = kept;
                Combination {
                    request: self.request,
                    films: checked,
                    names: self.plan.engine.names(),
                    engine: Some(self.engine),
                    metadata: self.metadata,
                    table_path: self.plan.table_path,
                    scout_tolerance_m: self.plan.scout_tolerance_m,
                }
                .finish(swept, hooks.cancel)?
            }
        };
        // Every file is written: the chunks are no longer needed.
        for store in stores {
            store.finish()?;
        }
        Ok(report)
    }

    /// A shard's parts: each film's results with the film's own record
    /// (its experiment, file and axes), for `summarize` to merge.
    fn write_parts(&self, shard: Shard, swept: &SweptFilms) -> Result<JointReport, WorkflowError> {
        let names = self.plan.engine.names();
        let mut parts = Vec::new();
        let mut validations = Vec::new();
        for (index, (f, results)) in self.films.iter().zip(&swept.results).enumerate() {
            let c = &f.checked;
            let mut metadata = self.metadata.clone();
            if let Some(v) = self.validate_part(c, results)? {
                metadata.insert(metadata::VALIDATION.into(), json(&v));
                validations.push((c.axes.name.clone(), v));
            }
            metadata.insert(metadata::WALL_S.into(), format!("{:.3}", swept.wall_s));
            let key = FilmKey {
                index,
                axes: c.axes.clone(),
            };
            metadata.insert(metadata::FILM.into(), json(&key));
            metadata.insert(metadata::MEASURED.into(), c.measured.display().to_string());
            metadata.insert(
                metadata::MEASURED_SHA256.into(),
                c.film.measured_sha256.clone(),
            );
            if !c.camera.is_default() {
                metadata.insert(metadata::CAMERA.into(), json(&c.camera));
            }
            metadata.insert(metadata::SCENARIO.into(), c.film.scenario.record());
            let path = f.part_path.clone().expect("a shard claims its parts");
            write_results(
                &path,
                results,
                &names.backend,
                &names.precision,
                &names.solver,
                &metadata,
            )?;
            parts.push(path);
        }
        Ok(JointReport {
            scored: swept.results.iter().map(Vec::len).sum(),
            simulations: swept.simulations,
            wall_s: swept.wall_s,
            table_path: self.plan.table_path.clone(),
            implausible_allowed: self.request.allow_implausible,
            out: self.request.out.clone(),
            shard: Some(shard),
            parts,
            validations,
            ..JointReport::default()
        })
    }

    /// A shard's check of its engine on one film, as a single film's shard
    /// checks its part: the film's best in this part and the best of other
    /// n, re-run on the reference solver (a shard has no joint best).
    fn validate_part(
        &self,
        film: &CheckedFilm,
        results: &[CandidateResult],
    ) -> Result<Option<Validation>, WorkflowError> {
        let request = &self.request;
        let engine = self.plan.engine;
        if (!engine.is_gpu() && engine.solver() == SolverKind::Reference) || request.validate == 0 {
            return Ok(None);
        }
        let Some(s) = summarize(&film.grid, results, film.film.coverage.observations()) else {
            return Ok(None);
        };
        let rerun =
            |params: &TetherParams, scenario: &Scenario| self.engine.simulate(scenario, params);
        let reference = super::identify::validation_reference(&engine);
        let (v, _) = validate(
            &pick(&s, request.validate),
            (&request.base, &film.film.scenario, &film.film.measured),
            reference.as_ref(),
            &rerun,
            request.validate_marker_tolerance_m,
            request.validate_j_e_tolerance,
        )
        .map_err(batch("validation run failed"))?;
        Ok(Some(v))
    }

    /// Every film's candidates still to run, film by film, chunk by chunk,
    /// each chunk saved before the next starts (the film's resumed ones
    /// first); an interruption is an error once the finished chunks are
    /// saved.
    fn sweep(&mut self, hooks: Hooks<'_>) -> Result<SweptFilms, WorkflowError> {
        let started = Instant::now();
        let total: u64 = self.films.iter().map(|f| f.todo.len() as u64).sum();
        let names = self.plan.engine.names();
        let mut finished = 0u64;
        let mut simulations = 0;
        let mut all = Vec::with_capacity(self.films.len());
        for f in &mut self.films {
            let chunk_size = self.request.chunk_size.unwrap_or_else(|| {
                let size = match self.plan.engine.is_gpu() {
                    true => GPU_CHUNK_CANDIDATES,
                    false => CPU_CHUNK_CANDIDATES_PER_THREAD * rayon::current_num_threads(),
                };
                size.next_multiple_of(f.checked.grid.release_run())
            });
            let mut results = std::mem::take(&mut f.done);
            for positions in f.todo.chunks(chunk_size) {
                let chunk: Vec<Candidate> = positions
                    .iter()
                    .map(|&i| f.checked.grid.candidate(i))
                    .collect();
                let offset = finished;
                let report = |done: u64, of: u64| {
                    if let Some(p) = hooks.progress {
                        p(offset + (chunk.len() as u64 * done) / of.max(1), total);
                    }
                };
                let scored = run(
                    &self.engine,
                    &chunk,
                    &f.checked.film.measured,
                    &self.request.base,
                    &f.checked.film.scenario,
                    f.checked.grid.release_axis(),
                    RunHooks {
                        progress: Some(&report),
                        cancel: hooks.cancel,
                    },
                )
                .map_err(batch("sweep failed"))?;
                if scored.iter().any(|r| r.status == RunStatus::Cancelled) {
                    all.push(results);
                    return Err(self.interrupted(&all));
                }
                f.store.save(
                    &scored,
                    (&names.backend, &names.precision, &names.solver),
                    &self.metadata,
                )?;
                simulations += crate::sweep::release::group_by_release(&chunk).len();
                finished += chunk.len() as u64;
                results.extend(scored);
            }
            results.sort_by_key(|r| f.checked.grid.index_of(&r.candidate));
            all.push(results);
        }
        Ok(SweptFilms {
            results: all,
            simulations,
            wall_s: started.elapsed().as_secs_f64(),
        })
    }

    /// The error of an interrupted sweep, `kept` its films' finished
    /// results so far: with nothing saved, nothing is left behind.
    fn interrupted(&mut self, kept: &[Vec<CandidateResult>]) -> WorkflowError {
        let saved: usize = kept.iter().map(Vec::len).sum();
        let all: usize = self.films.iter().map(|f| f.done.len() + f.todo.len()).sum();
        if saved == 0 {
            for f in &self.films {
                f.store.discard_empty();
            }
            self.lock = None;
            if self.made_out {
                let _ = std::fs::remove_dir(&self.request.out);
            }
            return WorkflowError::Interrupted(format!(
                "interrupted before the first chunk of {} film candidates was saved: nothing to resume, nothing written",
                all
            ));
        }
        WorkflowError::Interrupted(format!(
            "interrupted: {saved} of {all} film candidates are finished and saved in {}; run the same command with --resume to finish",
            self.plan
                .table_path
                .parent()
                .filter(|_| self.request.shard.is_none())
                .unwrap_or(&self.plan.table_path)
                .join(CHUNKS_DIR)
                .display()
        ))
    }
}

/// The films' results combined ([`crate::sweep::joint`]).
struct Combined {
    /// Each film's best over its own axes at each shared candidate.
    scores: Vec<Vec<FilmScore>>,
    weights: Vec<FilmWeight>,
    /// One per shared candidate: the joint J_e.
    joint: Vec<CandidateResult>,
}

/// Each film's validation, by its name, and its reference run of the
/// joint best (None where the sweep ran on the reference solver).
type Validated = (
    Vec<(String, Validation)>,
    Vec<Option<crate::scenario::SimulationOutput>>,
);

/// The films' results combined into the joint J_e, summarized, refined,
/// validated and written: after a whole run's sweep, or `summarize`'s
/// merge of a sharded one's parts ([`merge`]).
struct Combination {
    request: JointRequest,
    films: Vec<CheckedFilm>,
    names: EngineNames,
    /// The sweep's engine, for the validation; None for a merge (each
    /// shard ran its own).
    engine: Option<Engine>,
    metadata: Metadata,
    table_path: PathBuf,
    /// The sweep's first-pass tolerance, when it was one \[m\].
    scout_tolerance_m: Option<f64>,
}

impl Combination {
    /// Combines, summarizes, refines, validates and writes.
    fn finish(
        mut self,
        swept: SweptFilms,
        cancel: Option<&AtomicBool>,
    ) -> Result<JointReport, WorkflowError> {
        let SweptFilms {
            mut results,
            simulations,
            wall_s,
        } = swept;
        let observations: Vec<usize> = self
            .films
            .iter()
            .map(|f| f.film.coverage.observations())
            .collect();
        let total: usize = observations.iter().sum();
        remove_previous_table(&self.table_path)?;
        let confirmed = self.confirm_near_best(&mut results, &observations, cancel)?;
        let combined = self.combined(&results, &observations)?;
        let summary = summarize(&self.request.grid, &combined.joint, total);
        if summary.is_none() {
            let kept = match self.engine {
                Some(_) => format!(
                    "the films' rows are saved in {} (--force discards them)",
                    self.table_path.with_file_name(CHUNKS_DIR).display()
                ),
                None => "the shards' parts are as they were".into(),
            };
            return Err(WorkflowError::NothingSimulated(format!(
                "no shared candidate ran in every film: no joint J_e to compare, nothing written; {kept}"
            )));
        }
        let mut chosen = match self.request.tolerance_m {
            Some(t) => Some(Chosen::given(t)),
            None => confirmed.or_else(|| summary.as_ref().map(|s| Chosen::from_summary(s, total))),
        };
        self.record_films(&combined.weights);
        self.metadata
            .insert(metadata::WALL_S.into(), format!("{wall_s:.3}"));
        if let Some(s) = &summary {
            self.metadata.insert(metadata::SUMMARY.into(), json(s));
        }
        let refined = match &summary {
            Some(s) if self.request.refine => self.refine(s, &combined, &mut chosen)?,
            _ => None,
        };
        let (goodness, fit_warning) = match &summary {
            Some(s) => self.judge_fit(s, refined.as_ref(), &combined.weights),
            None => (Vec::new(), None),
        };
        record_judgement(
            &mut self.metadata,
            Some(&goodness).filter(|g| !g.is_empty()),
            fit_warning.as_ref(),
        );
        if let Some(c) = &chosen {
            self.metadata.insert(metadata::ACCURACY.into(), json(c));
        }
        if let Some(r) = &refined {
            self.metadata.insert(metadata::REFINED.into(), json(r));
            write_refined(&self.request.out.join("refined.parquet"), r, &self.metadata)?;
        }
        let (validations, references) = match &summary {
            Some(s) => self.validate(s, &combined.scores, &results)?,
            None => (Vec::new(), vec![None; self.films.len()]),
        };
        let (figures, outliers) = match &summary {
            Some(s) => self.best_fits_and_figures(
                s,
                refined.as_ref(),
                &combined,
                references,
                &Chosen::reference(chosen.as_ref()),
            )?,
            None => (Vec::new(), Vec::new()),
        };
        // Last: its presence marks a complete set (as a single film's).
        self.write_results(&combined.joint, &combined.scores)?;
        Ok(JointReport {
            scored: results.iter().map(Vec::len).sum(),
            results: combined.joint,
            scores: combined.scores,
            weights: combined.weights,
            summary,
            refined,
            accuracy: chosen,
            validations,
            simulations,
            wall_s,
            table_path: self.table_path.clone(),
            figures,
            fit_warning,
            goodness,
            implausible_allowed: self.request.allow_implausible,
            outliers,
            out: self.request.out.clone(),
            shard: None,
            parts: Vec::new(),
        })
    }

    /// The films' results combined: each film's best over its own axes at
    /// every shared candidate, the films' weights, the joint results.
    fn combined(
        &self,
        results: &[Vec<CandidateResult>],
        observations: &[usize],
    ) -> Result<Combined, WorkflowError> {
        let scores: Vec<Vec<FilmScore>> = self
            .films
            .iter()
            .zip(results)
            .map(|(f, r)| best_over_own(&f.axes, r))
            .collect();
        let axes: Vec<FilmAxes> = self.films.iter().map(|f| f.axes.clone()).collect();
        let weights = weights(&axes, &scores, observations)?;
        let joint = combine(&self.request.grid, &scores, &weights);
        Ok(Combined {
            scores,
            weights,
            joint,
        })
    }

    /// After a first pass at the scouting tolerance, as a single film's
    /// run ([`confirm`]): the data's tolerance from the joint J_e's σ over
    /// all the films' compared coordinates, and the shared candidates near
    /// the joint best and each n's best re-run at it in every film (all
    /// their own values), their rows replaced in `results`. The joint J_e
    /// of a re-run keeps the first pass's weights, so that its shift is
    /// the solver's alone; the caller weighs and combines afresh. None:
    /// no first pass, or no shared candidate every film ran.
    fn confirm_near_best(
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
        let rerun = |shared: &[Candidate], tolerance_m: f64| {
            let engine = Engine::cpu(SolverSettings::reference_at(tolerance_m));
            let at: Vec<usize> = shared
                .iter()
                .map(|c| grid.index_of(c).expect("a shared grid point"))
                .collect();
            let mut scores: Vec<Vec<FilmScore>> = Vec::with_capacity(films.len());
            for (f, rows) in films.iter().zip(results.iter_mut()) {
                let own = f.axes.own_len();
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
                    &f.film.measured,
                    base,
                    &f.film.scenario,
                    f.grid.release_axis(),
                    hooks,
                )
                .map_err(batch("re-running the candidates near the joint best"))?;
                for (&p, r) in positions.iter().zip(scored) {
                    rows[p] = r;
                }
                scores.push(
                    at.iter()
                        .flat_map(|&i| best_over_own(&f.axes, &rows[i * own..(i + 1) * own]))
                        .collect(),
                );
            }
            Ok::<_, WorkflowError>(
                shared
                    .iter()
                    .enumerate()
                    .map(|(j, c)| combine_one(*c, scores.iter().map(|s| &s[j]), &weights))
                    .collect::<Vec<_>>(),
            )
        };
        let total = observations.iter().sum();
        let confirmation = confirm(grid, &mut joint, total, scout_tolerance_m, rerun)?;
        if results
            .iter()
            .flatten()
            .any(|r| r.status == RunStatus::Cancelled)
        {
            let mut why = "interrupted while re-running the candidates near the joint best at the data's tolerance".to_string();
            if self.engine.is_some() {
                why += &format!(
                    ": the sweep is saved in {}; run the same command with --resume to finish",
                    self.table_path
                        .parent()
                        .unwrap_or(Path::new("."))
                        .join(CHUNKS_DIR)
                        .display()
                );
            }
            return Err(WorkflowError::Interrupted(why));
        }
        Ok(confirmation.map(|c| Chosen::from_data(c.accuracy, Some(c))))
    }

    /// Each film's goodness of fit, and the run's warning: the joint fit's
    /// 5 %-of-length rule, then each film's own (a film that is no film of
    /// this experiment weighs little in the joint J_e, so the joint σ
    /// alone would not show it): its σ against the length, then against
    /// its noise. A film's σ is the refinement's residual where there is
    /// one, else its best candidate's over the grid.
    fn judge_fit(
        &self,
        summary: &Summary,
        refined: Option<&Refined>,
        weights: &[FilmWeight],
    ) -> (Vec<FilmGoodness>, Option<String>) {
        let length_m = best_length_m(summary, &self.request.base);
        let sigmas: Vec<f64> = (0..weights.len())
            .map(|k| {
                refined
                    .and_then(|r| r.films.get(k))
                    .map_or(weights[k].sigma_m, |f| f.sigma_m)
            })
            .collect();
        let goodness: Vec<FilmGoodness> = self
            .films
            .iter()
            .zip(weights.iter().zip(&sigmas))
            .filter_map(|(f, (w, &sigma_m))| {
                let test = GoodnessOfFit::test(sigma_m, f.film.noise?, length_m);
                Some(FilmGoodness {
                    film: w.name.clone(),
                    test,
                })
            })
            .collect();
        let warning = fit_warning(summary, refined, &self.request.base)
            .or_else(|| film_fit_warning(weights, &sigmas, length_m))
            .or_else(|| {
                goodness
                    .iter()
                    .find_map(|g| g.test.warning().map(|w| format!("film {}: {w}", g.film)))
            });
        (goodness, warning)
    }

    /// The films in the metadata, each with its noise and weight.
    fn record_films(&mut self, weights: &[FilmWeight]) {
        let records: Vec<FilmRecord> = self
            .films
            .iter()
            .zip(weights)
            .map(|(f, w)| FilmRecord {
                name: &f.axes.name,
                measured: f.measured.display().to_string(),
                measured_sha256: &f.film.measured_sha256,
                scenario: serde_json::from_str(&f.film.scenario.record())
                    .unwrap_or(serde_json::Value::Null),
                camera: Some(&f.camera).filter(|c| !c.is_default()),
                own: &f.axes.own,
                observations: w.observations,
                j_min_m2: w.j_min_m2,
                sigma_m: w.sigma_m,
                weight: w.weight,
            })
            .collect();
        self.metadata.insert(metadata::FILMS.into(), json(&records));
    }

    /// The joint refinement: the shared parameters and every film's own,
    /// each film's residuals weighed as in the joint J_e.
    fn refine(
        &self,
        summary: &Summary,
        combined: &Combined,
        chosen: &mut Option<Chosen>,
    ) -> Result<Option<Refined>, WorkflowError> {
        let films: Vec<RefineFilm> = self
            .films
            .iter()
            .zip(&combined.scores)
            .zip(&combined.weights)
            .map(|((f, s), w)| RefineFilm {
                name: Some(&f.axes.name),
                measured: &f.film.measured,
                scenario: &f.film.scenario,
                weight: w.weight,
                own: &f.axes.own,
                scores: s,
            })
            .collect();
        refine_at_datas_accuracy(
            &self.request.grid,
            summary,
            &films,
            &self.request.base,
            chosen,
        )
    }

    /// Film `k`'s result at the shared candidate `shared`: the one at its
    /// best own values there.
    fn film_result(
        &self,
        k: usize,
        shared: &Candidate,
        scores: &[Vec<FilmScore>],
        results: &[Vec<CandidateResult>],
    ) -> CandidateResult {
        let at = self
            .request
            .grid
            .index_of(shared)
            .expect("a shared grid point");
        let mut c = *shared;
        for (p, v) in scores[k][at].own.iter() {
            c.parameters.set(p, v);
        }
        let i = self.films[k].grid.index_of(&c).expect("a film grid point");
        results[k][i].clone()
    }

    /// Each film's validation at the joint best and the best of other n,
    /// when the sweep ran on another solver than the reference; each
    /// film's reference run of the joint best, for its best fit.
    fn validate(
        &mut self,
        summary: &Summary,
        scores: &[Vec<FilmScore>],
        results: &[Vec<CandidateResult>],
    ) -> Result<Validated, WorkflowError> {
        let request = &self.request;
        let Some(engine) = self.engine.as_ref().filter(|e| {
            (e.kind().is_gpu() || e.kind().solver() != SolverKind::Reference)
                && request.validate > 0
        }) else {
            return Ok((Vec::new(), vec![None; self.films.len()]));
        };
        let picked = pick(summary, request.validate);
        let mut validations = Vec::new();
        let mut references = Vec::new();
        for (k, f) in self.films.iter().enumerate() {
            let film_picked: Vec<CandidateResult> = picked
                .iter()
                .map(|r| self.film_result(k, &r.candidate, scores, results))
                .collect();
            let rerun =
                |params: &TetherParams, scenario: &Scenario| engine.simulate(scenario, params);
            let kind = engine.kind();
            let (v, refs) = validate(
                &film_picked,
                (&request.base, &f.film.scenario, &f.film.measured),
                super::identify::validation_reference(&kind).as_ref(),
                &rerun,
                request.validate_marker_tolerance_m,
                request.validate_j_e_tolerance,
            )
            .map_err(batch("validation run failed"))?;
            validations.push((f.axes.name.clone(), v));
            // At the GPU's loose sweep tolerance, the reference runs are
            // not the best fit's (which runs at the data's).
            let gpu_reference = kind.is_gpu() && kind.solver() == SolverKind::Reference;
            references.push(refs.into_iter().next().filter(|_| !gpu_reference));
        }
        let by_film: std::collections::BTreeMap<&str, &Validation> =
            validations.iter().map(|(n, v)| (n.as_str(), v)).collect();
        self.metadata
            .insert(metadata::VALIDATION.into(), json(&by_film));
        Ok((validations, references))
    }

    /// results.parquet (and .csv): the joint J_e and each film's columns.
    fn write_results(
        &self,
        joint: &[CandidateResult],
        scores: &[Vec<FilmScore>],
    ) -> Result<(), WorkflowError> {
        let names = &self.names;
        let films: Vec<(&FilmAxes, &[FilmScore])> = self
            .films
            .iter()
            .zip(scores)
            .map(|(f, s)| (&f.axes, s.as_slice()))
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

    /// Each film's best fit at the joint best (with the refined track),
    /// its samples far beyond its noise, and the figures: the joint
    /// surface, profiles and per-n figure, and each film's shapes and
    /// residuals.
    fn best_fits_and_figures(
        &mut self,
        summary: &Summary,
        refined: Option<&Refined>,
        combined: &Combined,
        references: Vec<Option<crate::scenario::SimulationOutput>>,
        settings: &SolverSettings,
    ) -> Result<(Vec<String>, Vec<FilmOutliers>), WorkflowError> {
        let out = self.request.out.clone();
        let annotations = crate::plot::identify::Annotations::from_metadata(&self.metadata);
        let (scores, weights) = (&combined.scores, &combined.weights);
        let mut figures =
            crate::plot::identify::save_all(&out, &combined.joint, None, &annotations)?;
        let mut outliers = Vec::new();
        let at = self
            .request
            .grid
            .index_of(&summary.best.candidate)
            .expect("a shared grid point");
        for (k, (f, reference)) in self.films.iter().zip(references).enumerate() {
            let mut best = summary.best.candidate;
            for (p, v) in scores[k][at].own.iter() {
                best.parameters.set(p, v);
            }
            let (tether, scenario) = best.experiment(&self.request.base, &f.film.scenario);
            let track = match reference {
                Some(r) => r.track,
                None => {
                    simulate(&scenario, &tether, settings)
                        .map_err(super::solver("best-fit run on the reference solver failed"))?
                        .track
                }
            };
            let mut fit = BestFit::new(&f.film.measured, &track);
            if let Some(r) = refined {
                let (tether, scenario) = r
                    .candidate(&best, Some(&f.axes.name))
                    .experiment(&self.request.base, &f.film.scenario);
                let refined_track = simulate(&scenario, &tether, settings)
                    .map_err(super::solver(
                        "refined-fit run on the reference solver failed",
                    ))?
                    .track;
                fit = fit.with_refined(&refined_track);
            }
            // Each film's own noise: the refinement's, whose residual is
            // the fit's, else the grid's estimate.
            let sigma_m = refined
                .and_then(|r| r.films.get(k))
                .map_or(weights[k].sigma_m, |f| f.sigma_m);
            let limit_m = outlier_limit_m(sigma_m, self.request.base.length_m);
            let found = find_outliers(&fit, limit_m, &f.camera);
            let mut fit_metadata = self.metadata.clone();
            if !found.is_empty() {
                fit_metadata.insert(metadata::OUTLIERS.into(), json(&found));
            }
            write_best_fit(
                &best_fit_path(&out, &f.axes.name),
                &fit,
                &f.camera,
                f.film.scenario.pin_m(),
                &fit_metadata,
            )?;
            outliers.push(FilmOutliers {
                film: f.axes.name.clone(),
                outliers: found,
                limit_m,
                camera: f.camera.clone(),
            });
            figures.extend(crate::plot::identify::save_fit(
                &out,
                &fit,
                &best,
                &format!("_{}", f.axes.name),
            )?);
        }
        Ok((figures, outliers))
    }
}

/// Why a film's own best fit is no fit of this experiment, when its
/// σ (`sigmas_m`, one a film) is more than [`Plausibility::FIT_WARNING`]
/// of the tether's `length_m`.
fn film_fit_warning(weights: &[FilmWeight], sigmas_m: &[f64], length_m: f64) -> Option<String> {
    weights
        .iter()
        .zip(sigmas_m)
        .find(|&(_, &sigma_m)| sigma_m > Plausibility::FIT_WARNING * length_m)
        .map(|(w, sigma_m)| {
            format!(
                "film {}'s best candidate misses its data by σ ≈ {sigma_m:.4} m RMS a coordinate, more than {} % of the tether's {length_m} m: that film may not be this experiment (units, axes, length, release, markers)",
                w.name,
                100.0 * Plausibility::FIT_WARNING
            )
        })
}

/// One film's [`GoodnessOfFit`] in a joint run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilmGoodness {
    pub film: String,
    #[serde(flatten)]
    pub test: GoodnessOfFit,
}

/// Merges a sharded joint identification (`summarize`): `results`, each
/// film's parts merged in its grid's order, combined, summarized, refined
/// and written as a whole run's; `shard_validations`, each film's part's
/// check of its engine, become the report's validations.
pub fn merge(
    request: JointRequest,
    results: Vec<Vec<CandidateResult>>,
    names: EngineNames,
    metadata: Metadata,
    wall_s: f64,
    shard_validations: Vec<(String, Validation)>,
) -> Result<JointReport, WorkflowError> {
    let films = check_films(&request)?;
    for (f, r) in films.iter().zip(&results) {
        if r.len() != f.grid.len() {
            return Err(WorkflowError::Usage(format!(
                "film {}: {} merged rows, not its grid's {} candidates",
                f.axes.name,
                r.len(),
                f.grid.len()
            )));
        }
    }
    let _lock = OutputLock::acquire(&request.out)?;
    let table_path = claim_output(&request.out, "results.parquet", request.force)?;
    // The shards' first pass, confirmed here as a whole run confirms its own.
    let scout_tolerance_m = metadata
        .get(metadata::SCOUT_TOLERANCE)
        .map(|t| serde_json::from_str(t))
        .transpose()
        .map_err(super::usage)?;
    Combination {
        request,
        films,
        names,
        engine: None,
        metadata,
        table_path,
        scout_tolerance_m,
    }
    .finish(
        SweptFilms {
            results,
            simulations: 0,
            wall_s,
        },
        None,
    )
    .map(|report| JointReport {
        validations: shard_validations,
        ..report
    })
}

/// A finished joint identification's outcome, as a single film's
/// ([`super::identify::check_outcome`]): no candidate that every film ran,
/// a film's failed validation, or an implausible fit is an error after
/// the files are written.
pub fn check_outcome(report: &JointReport) -> Result<(), WorkflowError> {
    if report.summary.is_none() && report.shard.is_none() {
        return Err(WorkflowError::Failed(format!(
            "no candidate ran in every film: no joint J_e to compare (results in {})",
            report.table_path.display()
        )));
    }
    if let Some((film, v)) = report.validations.iter().find(|(_, v)| !v.passed) {
        return Err(WorkflowError::Failed(format!(
            "validation failed for film {film}: the sweep's engine deviates from the f64 reference solver by up to {:.2e} m at the markers and {:.2e} in J_e (tolerances {:.0e} m, {:.0e}); details in the metadata key {} of {}",
            v.max_marker_deviation_m,
            v.max_j_e_relative_deviation,
            v.marker_tolerance_m,
            v.j_e_tolerance,
            metadata::VALIDATION,
            report.table_path.display(),
        )));
    }
    if report.shard.is_some() {
        // A shard's best is only its part's: `summarize` judges the merge.
        return Ok(());
    }
    implausible(
        report.fit_warning.as_ref(),
        report.implausible_allowed,
        &report.out,
    )
}

/// The path a film's best fit is written to.
pub fn best_fit_path(out: &Path, film: &str) -> PathBuf {
    out.join(format!("best_fit_{film}.parquet"))
}
