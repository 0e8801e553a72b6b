//! Identification: one tether fitted to one film or several. Every
//! candidate of the grid (n, D, C_D and any parameter axis, times each
//! film's own axes) is simulated on each film's experiment and scored by
//! J_e against its measured track, whole or as one shard of N, chunk by
//! chunk so that a killed run can resume. Then the first pass is confirmed
//! at the data's tolerance, the films' J_e combined (each film at its best
//! own values, weighed by the inverse of its noise variance:
//! `sweep::joint`; one film's J_e is its own), summarized, refined,
//! validated against the f64 reference solver, judged against the data's
//! noise and written with the best fits and the figures.
//!
//! A single film is a study of one film: the same path, whose tables keep
//! a single film's layout (no `FILM.` columns, `best_fit.parquet`).
//! [`prepare`] checks the request, claims the output, opens the saved
//! chunks and chooses the engine, and says what it will do ([`Plan`]);
//! [`PreparedIdentification::run`] runs it; [`merge`] finishes a sharded
//! run's parts (`summarize`) as a whole run finishes its own sweep.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::film::{CheckedFilm, Film, StartOffset, TrackedPin};
use super::fit::{
    FilmGoodness, GoodnessOfFit, Outlier, best_length_m, film_fit_warning, find_outliers,
    fit_warning, judge_fit, outlier_limit_m, record_judgement,
};
use super::{Estimate, Hooks, WorkflowError, batch, claim_output};
use crate::camera::Camera;
use crate::engine::choice::{Choice, EngineRequest};
use crate::engine::{Backend, Engine, EngineKind, EngineNames, EngineOptions, RunHooks};
use crate::error::InputError;
use crate::gpu::Precision;
use crate::io::CHUNKS_DIR;
use crate::io::IoError;
use crate::io::checkpoint::ChunkStore;
use crate::io::config::FilmConfig;
use crate::io::lock::OutputLock;
use crate::io::results::{
    BestFit, write_best_fit, write_joint_results, write_refined, write_results,
};
use crate::io::track::Measured;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::batch::StepCache;
use crate::scenario::{Scenario, SimulationOutput, SolverSettings, simulate};
use crate::solver::SolverKind;
use crate::status::RunStatus;
use crate::sweep::abandon::{self, AbandonBounds, Pilot};
use crate::sweep::accuracy::{Chosen, SCOUT_TOLERANCE_M, confirm};
use crate::sweep::joint::{
    FilmAxes, FilmScore, FilmWeight, best_over_own, combine, combine_one, weights,
};
use crate::sweep::refine::{RefineFilm, Refined, refine_best_tightened};
use crate::sweep::validation::{
    DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M, Validation, pick, validate,
};
use crate::sweep::{
    Axis, AxisValues, Candidate, CandidateResult, Coverage, Grid, ScopedAxis, Selection, Shard,
    Summary, run, summarize,
};
use crate::track::NoiseEstimate;

/// The shipped synthetic measured drop, as the repository names it.
pub const SHIPPED_DATASET: &str = "datasets/drop_synthetic.parquet";

/// The shipped drop, compiled in: a copy of the binary on a machine that
/// cannot see the build's checkout (a cluster's compute node) still has
/// its default data.
const SHIPPED_DATASET_BYTES: &[u8] = include_bytes!("../../datasets/drop_synthetic.parquet");

/// The shipped dataset from wherever the command runs: the repository's
/// relative path when it is there (so the metadata records it as before),
/// else the compiled-in copy, written once into the temporary directory
/// under this version's name (rewritten when it is not the same bytes).
pub fn shipped_dataset() -> Result<PathBuf, WorkflowError> {
    let relative = PathBuf::from(SHIPPED_DATASET);
    if relative.exists() {
        return Ok(relative);
    }
    let copy = std::env::temp_dir().join(format!(
        "tether-sweep-{}-drop_synthetic.parquet",
        crate::VERSION
    ));
    if std::fs::read(&copy).ok().as_deref() == Some(SHIPPED_DATASET_BYTES) {
        return Ok(copy);
    }
    let failed = |e: std::io::Error| {
        WorkflowError::Usage(format!(
            "cannot write the shipped dataset to {}: {e} (give --measured FILE)",
            copy.display()
        ))
    };
    // Beside its target and renamed into place: two runs starting at once
    // never read a half-written file.
    let partial = copy.with_extension(format!("{}.partial", std::process::id()));
    std::fs::write(&partial, SHIPPED_DATASET_BYTES).map_err(failed)?;
    std::fs::rename(&partial, &copy).map_err(failed)?;
    Ok(copy)
}

/// An identification, as the user asked for it: the films, the grid they
/// share, and how to run and check it.
#[derive(Debug, Clone)]
pub struct IdentifyRequest {
    /// One film, or several of one tether (each with its own experiment,
    /// camera and own axes).
    pub films: Vec<Film>,
    /// The shared axes: n, D, C_D and any parameter (a single film's
    /// release time too; several films' own parameters are their own axes).
    pub grid: Grid,
    /// Run only this shard (its parts are all it writes; `summarize`
    /// merges them).
    pub shard: Option<Shard>,
    /// Finish an interrupted run of the same request from its saved chunks.
    pub resume: bool,
    /// Candidates per saved chunk; default 16 per CPU thread, 1024 on a GPU.
    pub chunk_size: Option<usize>,
    /// Where and how the candidates run.
    pub engine: EngineOptions,
    /// Every parameter the grid does not vary (tip mass, length, …).
    pub base: TetherParams,
    /// The reference solver's local error tolerance \[m\] for the sweep,
    /// the best fit and the refinement alike (`--tolerance`). None:
    /// chosen from the data ([`crate::sweep::accuracy`]): a first pass at
    /// the scouting tolerance, then the candidates near the best, the best
    /// fit and the refinement at the tolerance whose track error moves J_e
    /// by a tenth of the confidence threshold.
    pub tolerance_m: Option<f64>,
    /// Candidates (per film) re-run on the reference solver after a sweep
    /// on another solver; 0 skips the check.
    pub validate: usize,
    pub validate_marker_tolerance_m: f64,
    pub validate_j_e_tolerance: f64,
    /// Score every candidate to the end of its film (`--exhaustive`)
    /// instead of abandoning the hopeless ([`crate::sweep::abandon`]).
    pub exhaustive: bool,
    /// After the grid, refine the best candidate's continuous axes (and
    /// every film's own) by Levenberg–Marquardt on the reference solver
    /// (`sweep::refine`) and write refined.parquet.
    pub refine: bool,
    /// Sweep even when a measured first frame is far from the
    /// experiment's initial shape, and exit 0 with a fit that does not
    /// explain the data.
    pub allow_implausible: bool,
    /// The surface figure's two axes (results columns); None: D and C_D.
    pub surface_axes: Option<[Axis; 2]>,
    /// Also write results.csv.
    pub csv: bool,
    pub out: PathBuf,
    pub force: bool,
}

impl IdentifyRequest {
    /// The identification of the film in `measured` (in the model's frame,
    /// of docs/model.md §4.1's drop) over `grid` into `out`, with the
    /// CLI's defaults: `--backend auto`, f32 on a GPU, the job's default
    /// solver, docs/model.md §1 for the parameters the grid does not vary,
    /// three candidates validated, no CSV, no shard, no resume, no
    /// overwrite.
    pub fn new(measured: impl Into<Measured>, grid: Grid, out: impl Into<PathBuf>) -> Self {
        Self::of_films(vec![Film::new(measured)], grid, out)
    }

    /// The identification of `films` (one, or several of one tether) over
    /// `grid` into `out`, with [`Self::new`]'s defaults.
    pub fn of_films(films: Vec<Film>, grid: Grid, out: impl Into<PathBuf>) -> Self {
        Self {
            films,
            grid,
            shard: None,
            resume: false,
            chunk_size: None,
            engine: EngineOptions::default(),
            base: TetherParams::default(),
            tolerance_m: None,
            exhaustive: false,
            validate: 3,
            validate_marker_tolerance_m: DEFAULT_MARKER_TOLERANCE_M,
            validate_j_e_tolerance: DEFAULT_J_E_TOLERANCE,
            allow_implausible: false,
            surface_axes: None,
            refine: true,
            csv: false,
            out: out.into(),
            force: false,
        }
    }

    /// The identification of a config's film ([`FilmConfig`]: its measured
    /// file, experiment, tether, camera and declared frames) over `grid`
    /// into `out`, with [`Self::new`]'s defaults otherwise. A film whose
    /// config names no measured file is refused.
    pub fn of_film(
        config: FilmConfig,
        grid: Grid,
        out: impl Into<PathBuf>,
    ) -> Result<Self, WorkflowError> {
        Self::of_configs(vec![config], grid, out)
    }

    /// The identification of several configs' films of one tether (or
    /// one config's), each config with its measured file, experiment,
    /// camera and declared frames, over `grid` into `out`, with
    /// [`Self::new`]'s defaults otherwise. Configs that describe different
    /// tethers are refused, naming the keys that differ.
    pub fn of_configs(
        configs: Vec<FilmConfig>,
        grid: Grid,
        out: impl Into<PathBuf>,
    ) -> Result<Self, WorkflowError> {
        let Some(first) = configs.first() else {
            return Err(WorkflowError::Usage(
                "an identification fits one film or more; no config given".into(),
            ));
        };
        if let Some(other) = configs.iter().find(|c| c.tether != first.tether) {
            return Err(WorkflowError::Usage(format!(
                "film {} describes another tether than film {} ([tether] {}): the films of one identification share one tether",
                other.name,
                first.name,
                differing_keys(&other.tether, &first.tether)
            )));
        }
        let films = configs
            .iter()
            .map(Film::of_config)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            base: first.tether.clone(),
            ..Self::of_films(films, grid, out)
        })
    }

    /// Adds an axis given as text (`--axis`'s): `NAME=AXIS` on the grid (n,
    /// D, C_D or any parameter: `release_time_s=0:0.03:0.005`),
    /// `FILM.NAME=AXIS` on that film's own axes where there are several
    /// films (`shallow.release_time_s=0:0.03:0.005`; with one film, on the
    /// grid as without its name). An error names the axis (`axis`, or
    /// `axis NAME` for a value of it).
    pub fn add_axis(&mut self, text: &str) -> Result<(), InputError> {
        let names: Vec<&str> = self.films.iter().map(|f| f.name.as_str()).collect();
        let scoped = ScopedAxis::parse(text, &names, Axis::parse)?;
        self.add(scoped)
    }

    /// Adds an axis: on the grid, or on its film's own axes where there
    /// are several films.
    pub fn add(&mut self, scoped: ScopedAxis) -> Result<(), InputError> {
        let axis = scoped.values;
        let column = axis.axis.column();
        let film = match scoped.film {
            Some(k) if !self.single() => k,
            _ => {
                self.grid = self
                    .grid
                    .clone()
                    .with(axis)
                    .map_err(|e| match e.field.as_str() {
                        "axis" => e,
                        _ => InputError {
                            field: format!("axis {column}"),
                            ..e
                        },
                    })?;
                return Ok(());
            }
        };
        let Some(film) = self.films.get_mut(film) else {
            return Err(InputError::new(
                "axis",
                column,
                "an axis of one of the films",
            ));
        };
        if film.own.iter().any(|a| a.axis == axis.axis) {
            return Err(InputError::new(
                "axis",
                format!("{}.{column}", film.name),
                "each film's parameter on one axis",
            ));
        }
        film.own.push(axis);
        Ok(())
    }

    /// Whether its tables keep a single film's layout: one film.
    pub fn single(&self) -> bool {
        self.films.len() == 1
    }

    /// Checks it, then runs it ([`prepare`], then [`PreparedIdentification::run`]).
    pub fn run(self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
        prepare(self)?.run(hooks)
    }
}

/// What a prepared identification will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub films: Vec<FilmPlan>,
    /// The shared grid's candidates: the results' rows.
    pub candidates: usize,
    pub engine: EngineKind,
    /// The adapter's name when the GPU runs.
    pub adapter: Option<String>,
    /// Why `--backend auto` chose the engine.
    pub engine_reason: Option<String>,
    /// The results table (a shard: its directory of parts).
    pub table_path: PathBuf,
    /// The tolerance of the sweep's first pass \[m\] when the run then
    /// re-runs the candidates near the best at the data's
    /// ([`crate::sweep::accuracy::confirm`]); None: the sweep is final.
    pub scout_tolerance_m: Option<f64>,
}

/// One film's part of the plan.
#[derive(Debug, Clone)]
pub struct FilmPlan {
    pub name: String,
    pub measured: Measured,
    /// The experiment compared: frames, markers, duration.
    pub scenario: Scenario,
    /// The samples J_e compares, and those it skips.
    pub coverage: Coverage,
    /// How far the measured first frame is from the initial shape.
    pub start: Option<StartOffset>,
    /// Rows of the measured file that no frame and marker of the experiment
    /// compares (markers beyond its own; every frame is compared).
    pub unused_rows: usize,
    /// Rows of the file with an empty or NaN position (occluded markers).
    pub occluded_rows: usize,
    /// Its candidates in this run (shared × own; a shard's), those found
    /// finished in saved chunks and the chunks they were in, and the
    /// simulations they all take (a release axis's values share one).
    pub candidates: usize,
    pub resumed: usize,
    pub saved_chunks: usize,
    pub simulations: usize,
    pub own: Vec<AxisValues>,
    /// Its pin, where its tracked marker gave it
    /// ([`super::film::take_pin_from_film`]).
    pub tracked_pin: Option<TrackedPin>,
    /// Its noise, which its fit is tested against ([`GoodnessOfFit`]);
    /// None when the film is too short to tell.
    pub noise: Option<NoiseEstimate>,
}

impl Plan {
    /// Candidates of every film this run still runs.
    pub fn to_run(&self) -> usize {
        self.films.iter().map(|f| f.candidates - f.resumed).sum()
    }
}

/// What an identification found and wrote (a shard: its parts).
#[derive(Debug, Clone)]
pub struct IdentifyReport {
    /// The films, by name (one: a single film's layout).
    pub films: Vec<String>,
    /// One per shared candidate: its J_e (several films': the joint J_e).
    pub results: Vec<CandidateResult>,
    /// Several films: each film's best over its own axes at each shared
    /// candidate, and each film's noise and weight (empty for one film).
    pub scores: Vec<Vec<FilmScore>>,
    pub weights: Vec<FilmWeight>,
    /// None for a shard whose every candidate diverged.
    pub summary: Option<Summary>,
    /// The refined optimum (not for a shard, or with `refine` off).
    pub refined: Option<Refined>,
    /// The reference solver's tolerance for the best fit and the
    /// refinement, and how it was chosen (None: no candidate had a J_e).
    pub accuracy: Option<Chosen>,
    /// Each film's validation (by its name), when the sweep ran on another
    /// solver than the reference; `summarize`: each shard's.
    pub validations: Vec<(String, Validation)>,
    /// The engine that swept.
    pub engine: EngineNames,
    /// Film candidates scored by this invocation, the simulations they
    /// took (fewer where a release axis's values share one), and their
    /// wall time \[s\].
    pub scored: usize,
    pub simulations: usize,
    pub wall_s: f64,
    /// The bounds hopeless candidates were abandoned at (this run's
    /// sweep; none with `--exhaustive`, several films or a release axis).
    pub abandon: Option<AbandonBounds>,
    pub table_path: PathBuf,
    /// The figures drawn (none for a shard).
    pub figures: Vec<String>,
    /// Set when a best fit misses the data by more than
    /// [`super::film::Plausibility::FIT_WARNING`] of the tether's length,
    /// or by more than the film's noise explains ([`GoodnessOfFit`]).
    pub fit_warning: Option<String>,
    /// Each film's fit against its noise (none for a shard, or a film too
    /// short to estimate its noise).
    pub goodness: Vec<FilmGoodness>,
    /// `--allow-implausible`: a fit warning does not fail the run.
    pub implausible_allowed: bool,
    /// Each film's samples far beyond the noise from its best fit.
    pub outliers: Vec<FilmOutliers>,
    pub out: PathBuf,
    /// The shard this run was, and the parts it wrote.
    pub shard: Option<Shard>,
    pub parts: Vec<PathBuf>,
}

/// A film's samples far beyond its noise from its best fit
/// ([`find_outliers`]).
#[derive(Debug, Clone)]
pub struct FilmOutliers {
    pub film: String,
    pub outliers: Vec<Outlier>,
    /// The distance beyond which they are listed \[m\] ([`outlier_limit_m`]).
    pub limit_m: f64,
    /// How its file is written, to name them as the file has them.
    pub camera: Camera,
}

/// A shard part's film ([`metadata::FILM`]) where there are several: its
/// place among the films (their order is the refinement's and the
/// columns'), its name and own axes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilmKey {
    pub index: usize,
    #[serde(flatten)]
    pub axes: FilmAxes,
}

/// A film's record in the metadata of several films ([`metadata::FILMS`]).
#[derive(Serialize)]
struct FilmRecord<'a> {
    name: &'a str,
    measured: String,
    measured_sha256: &'a str,
    scenario: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    camera: Option<&'a Camera>,
    own: &'a [AxisValues],
    observations: usize,
    /// Its lowest J_e over the grid \[m²\], noise estimate \[m\] and weight
    /// in the joint J_e ([`FilmWeight`]).
    j_min_m2: f64,
    sigma_m: f64,
    weight: f64,
}

/// Candidates in a GPU chunk, each saved before the next starts: enough
/// that a chunk fills a GPU in the thread layout (an H100 holds about
/// 2,000 invocations per multiprocessor), few enough that an interrupted
/// run loses seconds.
pub const GPU_CHUNK_CANDIDATES: usize = 1024;
/// Release groups the engine choice counts: all of them up to here, an
/// even sample of this many beyond, whose estimate is scaled to the whole
/// job, so that counting costs no more time and memory on a grid of
/// millions. Over five times the paper's grid (3,535), so the jobs of the
/// docs and benchmarks are counted whole.
pub const CHOICE_SAMPLE_GROUPS: usize = 20_000;
/// Candidates per CPU thread in a chunk: enough that the threads share the
/// slow candidates (low D, large n), few enough that Ctrl-C saves often.
pub const CPU_CHUNK_CANDIDATES_PER_THREAD: usize = 16;

/// Film names name columns (`FILM.j_e_m2`) and files (`best_fit_FILM`)
/// where there are several.
fn check_names(films: &[Film]) -> Result<(), WorkflowError> {
    if films.is_empty() {
        return Err(WorkflowError::Usage(
            "an identification fits one film or more; none given".into(),
        ));
    }
    if films.len() == 1 {
        return Ok(());
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

/// The [tether] keys whose values differ between two tethers.
fn differing_keys(a: &TetherParams, b: &TetherParams) -> String {
    let (a, b) = (json_value(a), json_value(b));
    let keys: Vec<String> = a
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, v)| format!("{k} = {v} against {}", b[k.as_str()]))
        .collect();
    keys.join(", ")
}

fn json_value(t: &TetherParams) -> serde_json::Value {
    serde_json::to_value(t).expect("plain data serializes")
}

fn film_names(request: &IdentifyRequest) -> Vec<String> {
    request.films.iter().map(|f| f.name.clone()).collect()
}

/// A film's grid: a single film's is the request's (its axes are all the
/// grid's); one of several films has the shared axes, then its own.
pub(super) fn film_grid(request: &IdentifyRequest, film: &Film) -> Result<Grid, WorkflowError> {
    if !request.single() {
        return Ok(film_axes(film).grid(&request.grid)?);
    }
    if let Some(axis) = film.own.first() {
        return Err(InputError::new(
            "axis",
            format!("{}.{}", film.name, axis.axis),
            "an axis of the grid: a single film's axes are all the grid's (write it without the film's name)",
        )
        .into());
    }
    Ok(request.grid.clone())
}

fn film_axes(film: &Film) -> FilmAxes {
    FilmAxes {
        name: film.name.clone(),
        own: film.own.clone(),
    }
}

/// Checks every film against its experiment and its grid; an error in
/// one of several names the film.
fn check_films(request: &IdentifyRequest) -> Result<Vec<CheckedFilm>, WorkflowError> {
    check_names(&request.films)?;
    if let Some(axes) = &request.surface_axes {
        check_surface_axes(&request.grid, axes)?;
    }
    let mut checked = Vec::with_capacity(request.films.len());
    for film in &request.films {
        let named = |e| match request.single() {
            true => e,
            false => named(e, film),
        };
        let grid = film_grid(request, film).map_err(named)?;
        checked.push(
            super::film::check(film, &grid, &request.base, request.allow_implausible)
                .map_err(named)?,
        );
    }
    Ok(checked)
}

/// An error in one film's checks, with the film named.
fn named(e: WorkflowError, film: &Film) -> WorkflowError {
    let place = format!("film {} ({})", film.name, film.measured);
    match e {
        WorkflowError::Usage(m) => WorkflowError::Usage(format!("{place}: {m}")),
        WorkflowError::Input(i) => WorkflowError::Usage(format!("{place}: {i}")),
        other => other,
    }
}

/// The surface figure's axes must be two different axes of the grid.
fn check_surface_axes(grid: &Grid, axes: &[Axis; 2]) -> Result<(), WorkflowError> {
    let on_grid: Vec<Axis> = grid.axes().iter().map(|a| a.axis).collect();
    for axis in axes {
        if !on_grid.contains(axis) {
            return Err(InputError::new(
                "surface",
                format!("'{axis}'"),
                format!(
                    "two of the grid's axes: {}",
                    on_grid
                        .iter()
                        .map(|a| a.column())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .into());
        }
    }
    if axes[0] == axes[1] {
        return Err(InputError::new(
            "surface",
            format!("'{}' twice", axes[0]),
            "two different axes",
        )
        .into());
    }
    Ok(())
}

/// The request's own numbers and combinations, before anything is read.
pub(super) fn check_settings(request: &IdentifyRequest) -> Result<(), WorkflowError> {
    if request.chunk_size == Some(0) {
        return Err(InputError::new("chunk_size", 0, "at least 1 candidate").into());
    }
    request.base.validate()?;
    for (field, value) in [
        (
            "validate_marker_tolerance_m",
            request.validate_marker_tolerance_m,
        ),
        ("validate_j_e_tolerance", request.validate_j_e_tolerance),
    ] {
        crate::error::require_positive(field, value)?;
    }
    if let Some(t) = request.tolerance_m {
        crate::error::require_positive("tolerance_m", t)?;
        // Refused before anything is claimed where the flags already
        // name another solver (`--backend gpu` sweeps a fixed-step
        // scheme); `auto`'s choice is checked once it is made.
        let named = match request.engine.backend {
            Backend::Gpu => request.engine.solver.unwrap_or(SolverKind::SemiImplicit),
            _ => request.engine.solver.unwrap_or(SolverKind::Reference),
        };
        sweep_settings(request.tolerance_m, named, false)?;
    }
    Ok(())
}

/// The sweep's solver settings: `kind`, at the given `tolerance_m`, else
/// (the reference solver's first pass, `scout`) at the scouting tolerance
/// ([`crate::sweep::accuracy`]); an error when a tolerance is given for
/// another solver than the reference (`--backend auto` chose a GPU: it
/// would not be used).
fn sweep_settings(
    tolerance_m: Option<f64>,
    kind: SolverKind,
    scout: bool,
) -> Result<SolverSettings, WorkflowError> {
    let mut settings = SolverSettings {
        kind,
        ..Default::default()
    };
    if scout && kind == SolverKind::Reference {
        settings.reference.tolerance_m = SCOUT_TOLERANCE_M;
    }
    if let Some(t) = tolerance_m {
        if kind != SolverKind::Reference {
            return Err(InputError::new(
                "tolerance_m",
                t,
                format!(
                    "given only for a sweep on the reference solver; this sweep runs {} (add --backend cpu)",
                    kind.name()
                ),
            )
            .into());
        }
        settings.reference.tolerance_m = t;
    }
    Ok(settings)
}

/// Whether a run's reference-solver sweep is a first pass at the
/// scouting tolerance, confirmed at the data's ([`confirm`]): a run
/// without `--tolerance`. A shard cannot know the grid's best, so
/// `summarize` confirms the merged parts as a whole run confirms its own.
fn scouts(request: &IdentifyRequest) -> bool {
    request.tolerance_m.is_none()
}

/// The simulations of release groups (each its candidates): one a group.
fn release_simulations(
    groups: &[Vec<Candidate>],
    base: &TetherParams,
    scenario: &Scenario,
) -> Vec<(Scenario, TetherParams)> {
    groups
        .iter()
        .map(|members| {
            let (tether, shared) =
                crate::sweep::release::shared_experiment(members, base, scenario);
            (shared, tether)
        })
        .collect()
}

/// The engine for every film's simulations (`--backend auto` weighs this
/// shard's simulations of every film, one per release group, or an even
/// sample of them on a grid of millions; the steps it counts are kept for
/// the run), and the sweep's solver settings on it with the first pass's
/// tolerance where the run scouts on the reference solver: the engine's
/// own, the scouting tolerance or, for the GPU's adaptive scheme in f32,
/// f32's first-pass one where that is looser
/// (`engine::choice::adaptive_reference`).
pub(super) fn choose_sweep_engine(
    request: &IdentifyRequest,
    films: &[(&Grid, &Scenario)],
) -> Result<(Choice, SolverSettings, Option<f64>), WorkflowError> {
    let Some((first_grid, _)) = films.first() else {
        return Err(WorkflowError::Usage(
            "an identification fits one film or more; none given".into(),
        ));
    };
    let per_film = (CHOICE_SAMPLE_GROUPS / films.len()).max(1);
    let mut simulations = Vec::new();
    let mut groups = 0;
    for (grid, scenario) in films {
        let (sample, count) =
            Selection::new((*grid).clone(), request.shard, HashSet::new()).sample_groups(per_film);
        simulations.extend(release_simulations(&sample, &request.base, scenario));
        groups += count;
    }
    let steps = Arc::new(StepCache::default());
    let choice = super::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: sweep_settings(
                request.tolerance_m,
                request.engine.solver.unwrap_or(SolverKind::Reference),
                scouts(request),
            )?,
            simulations: groups,
            scouting: scouts(request),
        },
        &super::count(groups, "drop"),
        &simulations,
        // A chunk's candidates, a release axis's values sharing a drop.
        (request.chunk_size.unwrap_or(GPU_CHUNK_CANDIDATES) / first_grid.release_run()).max(1),
        &steps,
    )?;
    let kind = choice.engine.kind().solver();
    let mut settings = sweep_settings(request.tolerance_m, kind, scouts(request))?;
    let scout_tolerance_m = (scouts(request) && kind == SolverKind::Reference)
        .then(|| choice.engine.tolerance_m().unwrap_or(SCOUT_TOLERANCE_M));
    if let Some(t) = scout_tolerance_m {
        settings.reference.tolerance_m = t;
    }
    Ok((choice, settings, scout_tolerance_m))
}

/// What every table of the run records: the grid, the tether, the solver
/// and the engine (a single film's: its film too).
fn run_metadata(
    request: &IdentifyRequest,
    settings: &SolverSettings,
    choice: &Choice,
    films: &[CheckedFilm],
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
    if let [film] = films {
        record_film(&mut metadata, film);
    }
    metadata
}

/// A film's file, its hash, camera, experiment and noise in a table's
/// metadata: a single film's tables', or one film's shard part.
fn record_film(metadata: &mut Metadata, f: &CheckedFilm) {
    metadata.insert(metadata::MEASURED.into(), f.film.measured.to_string());
    metadata.insert(metadata::MEASURED_SHA256.into(), f.measured_sha256.clone());
    if !f.film.camera.is_default() {
        metadata.insert(metadata::CAMERA.into(), json(&f.film.camera));
    }
    metadata.insert(metadata::SCENARIO.into(), f.scenario.record());
    if let Some(n) = &f.noise {
        metadata.insert(metadata::NOISE.into(), json(n));
    }
}

/// The error of a run none of whose candidates has a J_e: nothing is
/// written; `kept` says what is left (the saved chunks, or the shards'
/// parts).
fn nothing_simulated(results: &[Vec<CandidateResult>], kept: &str) -> WorkflowError {
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

/// Removes the results table a `--force` run replaces (with its CSV twin),
/// as its output phase begins: from here until the new table is written,
/// the directory holds no complete set, and `--resume` finishes it from
/// the saved chunks. Before, a kill leaves the previous set whole.
pub(super) fn remove_previous_table(table_path: &Path) -> Result<(), WorkflowError> {
    for path in [table_path.to_path_buf(), table_path.with_extension("csv")] {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(IoError::Write { path, error: e }.into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// An identification ready to run.
pub struct PreparedIdentification {
    request: IdentifyRequest,
    pub plan: Plan,
    films: Vec<PreparedFilm>,
    engine: Engine,
    metadata: Metadata,
    /// The directory of the run's table or parts, and of its saved chunks.
    table_dir: PathBuf,
    /// The directories claiming the output made (innermost first), which
    /// a run stopped before saving anything removes.
    made_dirs: Vec<PathBuf>,
    /// No other live run writes there while this one does (None once
    /// released to remove `made_dirs`).
    lock: Option<OutputLock>,
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

/// Checks the request, claims the output, opens the saved chunks and
/// chooses the engine. Nothing is simulated yet, except that `--backend
/// auto` with a hardware GPU times one candidate on the CPU.
pub fn prepare(request: IdentifyRequest) -> Result<PreparedIdentification, WorkflowError> {
    check_settings(&request)?;
    let checked = check_films(&request)?;
    let table_dir = match &request.shard {
        Some(s) => request.out.join(s.directory()),
        None => request.out.clone(),
    };
    let made_dirs: Vec<PathBuf> = table_dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let lock = OutputLock::acquire(&table_dir)?;
    let table_path = match (&request.shard, request.single()) {
        (Some(_), true) => claim_output(&table_dir, "part.parquet", request.force)?,
        (Some(_), false) => table_dir.clone(),
        (None, _) => claim_output(&request.out, "results.parquet", request.force)?,
    };
    let experiments: Vec<(&Grid, &Scenario)> =
        checked.iter().map(|f| (&f.grid, &f.scenario)).collect();
    let (choice, settings, scout_tolerance_m) = choose_sweep_engine(&request, &experiments)?;
    let names = choice.engine.kind().names();
    let mut metadata = run_metadata(&request, &settings, &choice, &checked);
    if let Some(t) = scout_tolerance_m {
        metadata.insert(metadata::SCOUT_TOLERANCE.into(), json(&t));
    }
    let engine_key = json(&(&settings, &names, &request.shard));
    let films = open_chunks(&request, checked, &table_dir, &table_path, &engine_key)?;
    let plan = Plan {
        films: films.iter().map(PreparedFilm::plan).collect(),
        candidates: request.grid.len(),
        engine: choice.engine.kind(),
        adapter: choice.engine.adapter_name().map(str::to_string),
        engine_reason: choice.reason,
        table_path,
        scout_tolerance_m,
    };
    Ok(PreparedIdentification {
        request,
        plan,
        films,
        engine: choice.engine,
        metadata,
        table_dir,
        made_dirs,
        lock: Some(lock),
    })
}

impl PreparedFilm {
    fn plan(&self) -> FilmPlan {
        let f = &self.checked;
        let candidates = self.done.len() + self.todo.len();
        FilmPlan {
            name: f.film.name.clone(),
            measured: f.film.measured.clone(),
            scenario: f.scenario.clone(),
            coverage: f.coverage,
            start: f.start,
            unused_rows: f.unused_rows,
            occluded_rows: f.measured.occluded_rows,
            candidates,
            resumed: self.done.len(),
            saved_chunks: self.store.chunks(),
            simulations: candidates / f.grid.release_run(),
            own: f.film.own.clone(),
            tracked_pin: f.tracked_pin,
            noise: f.noise,
        }
    }
}

/// Each checked film with its saved chunks opened (resumed, or refused
/// without `--resume`: a single film's in `.chunks/`, each of several
/// films' in `.chunks/film=NAME/`), the positions of its grid this run
/// runs (a shard's), and, for a shard, its part claimed. `engine_key` is
/// the sweep's solver settings, engine and shard, which decide the results
/// as much as the film does.
fn open_chunks(
    request: &IdentifyRequest,
    checked: Vec<CheckedFilm>,
    table_dir: &Path,
    table_path: &Path,
    engine_key: &str,
) -> Result<Vec<PreparedFilm>, WorkflowError> {
    let single = request.single();
    let mut films = Vec::with_capacity(checked.len());
    for f in checked {
        let part_path = match (&request.shard, single) {
            (None, _) => None,
            (Some(_), true) => Some(table_path.to_path_buf()),
            (Some(_), false) => Some(claim_output(
                &table_dir.join(format!("film={}", f.film.name)),
                "part.parquet",
                request.force,
            )?),
        };
        // Everything that decides the film's results: a resume must
        // continue the same run.
        let run_key = json(&(
            &request.grid,
            &f.grid,
            &f.measured_sha256,
            &f.film.camera,
            &request.base,
            &f.scenario,
            engine_key,
            request.exhaustive,
        ));
        let (store, done) = match single {
            true => ChunkStore::open(table_dir, &run_key, request.resume, request.force)?,
            false => ChunkStore::open_film(
                table_dir,
                &f.film.name,
                &run_key,
                request.resume,
                request.force,
            )?,
        };
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

/// The work candidates cost, for the first estimate of a sweep's time: n.
fn candidates_work(candidates: impl Iterator<Item = Candidate>) -> f64 {
    candidates.map(|c| c.elements as f64).sum()
}

/// What the films' sweeps return: each film's results in its grid's
/// order, the film candidates scored here, and the simulations they took.
struct Swept {
    results: Vec<Vec<CandidateResult>>,
    scored: usize,
    simulations: usize,
    wall_s: f64,
    /// The bounds hopeless candidates were abandoned at, where they were.
    abandon: Option<AbandonBounds>,
}

impl PreparedIdentification {
    /// Sweeps every film's candidates still to run, chunk by chunk (each
    /// chunk saved before the next starts), then combines, summarizes,
    /// refines, validates and writes; a shard writes each film's part.
    pub fn run(mut self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
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

    /// Every film's candidates still to run, film by film, chunk by chunk,
    /// each chunk saved before the next starts (the film's resumed ones
    /// first); an interruption is an error once the finished chunks are
    /// saved.
    fn sweep(&mut self, hooks: Hooks<'_>) -> Result<Swept, WorkflowError> {
        let started = Instant::now();
        let total: u64 = self.films.iter().map(|f| f.todo.len() as u64).sum();
        let work_at_start = candidates_work(
            self.films
                .iter()
                .flat_map(|f| f.todo.iter().map(|&i| f.checked.grid.candidate(i))),
        );
        let names = self.plan.engine.names();
        let mut finished = 0u64;
        let mut simulations = 0;
        let mut all = Vec::with_capacity(self.films.len());
        let mut cancelled = false;
        // One film only: a joint best may lie far above a film's own.
        let abandons = !self.request.exhaustive && self.films.len() == 1;
        let mut abandon = None;
        let failed = match self.engine.gpu() {
            Some(_) => "GPU sweep failed",
            None => "sweep failed",
        };
        'films: for f in &mut self.films {
            let chunk_size = chunk_size(&self.request, self.plan.engine, &f.checked.grid);
            let mut results = std::mem::take(&mut f.done);
            let c = &f.checked;
            let study = c.study(&self.request.base);
            // A release group's shared simulation runs to the end.
            let pilot = (abandons && c.grid.release_axis().is_none()).then(|| Pilot::of(&c.grid));
            let (chunks, pilot_chunks) = abandon::chunks(pilot.as_ref(), &f.todo, chunk_size);
            let on = (&self.engine, &c.grid, study, hooks.cancel);
            let pilot_bounds = |p: &Pilot, results: &[CandidateResult]| {
                p.bounds(on, results, c.coverage.observations())
                    .map_err(batch("the pilot bounding hopeless candidates failed"))
            };
            // None until the pilot's rows are in.
            let mut bounds: Option<Option<AbandonBounds>> = None;
            for (k, positions) in chunks.enumerate() {
                if let (Some(p), true) = (&pilot, Some(k) == pilot_chunks) {
                    bounds = Some(pilot_bounds(p, &results)?);
                }
                let chunk: Vec<Candidate> =
                    positions.iter().map(|&i| c.grid.candidate(i)).collect();
                let offset = finished;
                let report = |done: u64, of: u64| {
                    if let Some(p) = hooks.progress {
                        p(offset + (chunk.len() as u64 * done) / of.max(1), total);
                    }
                };
                let scored = run(
                    &self.engine,
                    &chunk,
                    study,
                    c.grid.release_axis(),
                    bounds.as_ref().and_then(Option::as_ref),
                    RunHooks {
                        progress: Some(&report),
                        cancel: hooks.cancel,
                    },
                )
                .map_err(batch(failed))?;
                if scored.iter().any(|r| r.status == RunStatus::Cancelled) {
                    all.push(std::mem::take(&mut results));
                    cancelled = true;
                    break 'films;
                }
                f.store.save(
                    &scored,
                    (&names.backend, &names.precision, &names.solver),
                    &self.metadata,
                )?;
                simulations += crate::sweep::release::group_by_release(&chunk).len();
                finished += chunk.len() as u64;
                results.extend(scored);
                if let Some(tell) = hooks
                    .estimate
                    .filter(|_| finished == chunk.len() as u64 && finished < total)
                {
                    let share = candidates_work(chunk.iter().copied()) / work_at_start;
                    tell(&Estimate::after(started, finished, total, share));
                }
            }
            // A resumed run with nothing left past its pilot still says
            // the bounds its rows were abandoned at.
            if let (Some(p), None) = (&pilot, &bounds) {
                bounds = Some(pilot_bounds(p, &results)?);
            }
            abandon = bounds.flatten();
            results.sort_by_key(|r| c.grid.index_of(&r.candidate));
            all.push(results);
        }
        if cancelled {
            return Err(self.stopped(&all));
        }
        Ok(Swept {
            results: all,
            scored: finished as usize,
            simulations,
            wall_s: started.elapsed().as_secs_f64(),
            abandon,
        })
    }

    /// The error of a sweep interrupted with `kept` finished: with
    /// nothing saved, nothing is left behind.
    fn stopped(&mut self, kept: &[Vec<CandidateResult>]) -> WorkflowError {
        match interrupted(kept, &self.plan, &self.table_dir) {
            Ok(e) => e,
            Err(nothing_saved) => {
                for f in &self.films {
                    f.store.discard_empty();
                }
                self.lock = None;
                for dir in &self.made_dirs {
                    // Only empty ones: nothing else was there.
                    let _ = std::fs::remove_dir(dir);
                }
                nothing_saved
            }
        }
    }

    /// A shard's parts: each film's results with the film's own record
    /// (its experiment, file and, of several, its place and own axes), its
    /// part's summary and check of its engine, for `summarize` to merge.
    fn write_parts(&self, shard: Shard, swept: &Swept) -> Result<IdentifyReport, WorkflowError> {
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
    fn validate_part(
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

/// Candidates per chunk: the request's, else the engine's default in
/// whole runs of a release axis, whose values share one simulation when
/// they share a chunk.
fn chunk_size(request: &IdentifyRequest, engine: EngineKind, grid: &Grid) -> usize {
    request.chunk_size.unwrap_or_else(|| {
        let size = match engine.is_gpu() {
            true => GPU_CHUNK_CANDIDATES,
            false => CPU_CHUNK_CANDIDATES_PER_THREAD * rayon::current_num_threads(),
        };
        size.next_multiple_of(grid.release_run())
    })
}

/// Whether a sweep on `engine` is checked against the f64 reference
/// solver: any engine but the CPU's reference solver, unless the request
/// asks for no check.
fn validates(engine: &Engine, request: &IdentifyRequest) -> bool {
    let kind = engine.kind();
    (kind.is_gpu() || kind.solver() != SolverKind::Reference) && request.validate > 0
}

/// The error of an interrupted sweep, `kept` its films' finished results
/// so far (the resumed ones included). Err: nothing was saved, so nothing
/// is left behind (the caller removes what it made).
fn interrupted(
    kept: &[Vec<CandidateResult>],
    plan: &Plan,
    table_dir: &Path,
) -> Result<WorkflowError, WorkflowError> {
    let saved: usize = kept.iter().map(Vec::len).sum();
    let all: usize = plan.films.iter().map(|f| f.candidates).sum();
    let noun = match plan.films.len() {
        1 => "candidate",
        _ => "film candidate",
    };
    if saved == 0 {
        return Err(WorkflowError::Interrupted(format!(
            "interrupted before the first chunk of {} was saved: nothing to resume, nothing written",
            super::count(all, noun)
        )));
    }
    Ok(WorkflowError::Interrupted(format!(
        "interrupted: {saved} of {} are finished and saved in {}; run the same command with --resume to finish",
        super::count(all, noun),
        table_dir.join(CHUNKS_DIR).display()
    )))
}

/// The settings of the GPU's reference solver, which [`validate`]
/// compares with the CPU's at the same settings; None for a fixed-step
/// engine.
fn validation_reference(engine: &EngineKind) -> Option<SolverSettings> {
    match engine {
        EngineKind::GpuAdaptive { reference, .. } => Some(SolverSettings {
            kind: SolverKind::Reference,
            step_s: None,
            reference: *reference,
        }),
        _ => None,
    }
}

/// The films' results combined ([`crate::sweep::joint`]): one film's are
/// its own.
struct Combined {
    /// Several films: each one's best over its own axes at each shared
    /// candidate, and each one's noise and weight.
    scores: Vec<Vec<FilmScore>>,
    weights: Vec<FilmWeight>,
    /// One per shared candidate: its J_e.
    joint: Vec<CandidateResult>,
}

/// Each film's validation, by its name, and its reference run of the
/// best (None where the sweep ran on the reference solver).
type Validated = (Vec<(String, Validation)>, Vec<Option<SimulationOutput>>);

/// The films' results combined, summarized, refined, validated and
/// written: after a whole run's sweep, or `summarize`'s merge of a
/// sharded one's parts ([`merge`]).
struct Combination {
    request: IdentifyRequest,
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
            let kept = match self.engine {
                Some(_) => format!(
                    "their rows are saved in {} (--force discards them)",
                    self.table_path.with_file_name(CHUNKS_DIR).display()
                ),
                None => "the shards' parts are as they were".into(),
            };
            return Err(nothing_simulated(&results, &kept));
        };
        let mut chosen = match self.request.tolerance_m {
            Some(t) => Some(Chosen::given(t)),
            None => confirmed.or_else(|| Some(Chosen::from_summary(&summary, total))),
        };
        if !self.request.single() {
            self.record_films(&combined.weights);
        }
        self.metadata
            .insert(metadata::WALL_S.into(), format!("{wall_s:.3}"));
        self.metadata
            .insert(metadata::SUMMARY.into(), json(&summary));
        if let Some(a) = &abandon {
            self.metadata.insert(metadata::ABANDON.into(), json(a));
        }
        let refined = match self.request.refine {
            true => self.refine(&summary, &combined, &mut chosen)?,
            false => None,
        };
        let (goodness, fit_warning) = self.judge_fit(&summary, refined.as_ref(), &combined.weights);
        if let Some(c) = &chosen {
            self.metadata.insert(metadata::ACCURACY.into(), json(c));
        }
        if let Some(r) = &refined {
            self.metadata.insert(metadata::REFINED.into(), json(r));
            write_refined(&self.request.out.join("refined.parquet"), r, &self.metadata)?;
        }
        let (validations, references) = self.validate(&summary, &combined.scores, &results)?;
        let (figures, outliers) = self.best_fits_and_figures(
            &summary,
            refined.as_ref(),
            &combined,
            references,
            &Chosen::reference(chosen.as_ref()),
        )?;
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
    fn combined(
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
        let single = self.request.single();
        let near = match single {
            true => "the best",
            false => "the joint best",
        };
        let rerun = |shared: &[Candidate], tolerance_m: f64| {
            let engine = Engine::cpu(SolverSettings::reference_at(tolerance_m));
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
            let mut why = format!(
                "interrupted while re-running the candidates near {near} at the data's tolerance"
            );
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

    /// Each film's goodness of fit and the run's warning, recorded in the
    /// metadata. A single film: its σ against the length, then against
    /// its noise. Several: the joint fit's 5 %-of-length rule, then each
    /// film's own (a film that is no film of this experiment weighs little
    /// in the joint J_e, so the joint σ alone would not show it), its σ the
    /// refinement's residual where there is one, else its best
    /// candidate's over the grid.
    fn judge_fit(
        &mut self,
        summary: &Summary,
        refined: Option<&Refined>,
        weights: &[FilmWeight],
    ) -> (Vec<FilmGoodness>, Option<String>) {
        let base = &self.request.base;
        if let [film] = &self.films[..] {
            let (test, warning) =
                judge_fit(&mut self.metadata, Some(summary), refined, film.noise, base);
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
        let goodness: Vec<FilmGoodness> = self
            .films
            .iter()
            .zip(weights.iter().zip(&sigmas))
            .filter_map(|(f, (w, &sigma_m))| {
                let test = GoodnessOfFit::test(sigma_m, f.noise?, length_m);
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

    /// The films in the metadata, each with its noise and weight.
    fn record_films(&mut self, weights: &[FilmWeight]) {
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
    fn refine(
        &self,
        summary: &Summary,
        combined: &Combined,
        chosen: &mut Option<Chosen>,
    ) -> Result<Option<Refined>, WorkflowError> {
        let films: Vec<RefineFilm> = match &self.films[..] {
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
                })
                .collect(),
        };
        refine_at_datas_accuracy(
            &self.request.grid,
            summary,
            &films,
            &self.request.base,
            chosen,
        )
    }

    /// Film `k`'s candidate at the shared candidate `shared`: with its
    /// best own values there.
    fn film_candidate(&self, k: usize, shared: &Candidate, scores: &[Vec<FilmScore>]) -> Candidate {
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
    fn validate(
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
    fn write_results(
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

    /// Each film's best fit at the best (with the refined track), its
    /// samples far beyond its noise, and the figures: the surface,
    /// profiles and per-n figure, and each film's shapes and residuals.
    fn best_fits_and_figures(
        &mut self,
        summary: &Summary,
        refined: Option<&Refined>,
        combined: &Combined,
        references: Vec<Option<SimulationOutput>>,
        settings: &SolverSettings,
    ) -> Result<(Vec<String>, Vec<FilmOutliers>), WorkflowError> {
        let out = self.request.out.clone();
        let single = self.request.single();
        let mut fits = Vec::with_capacity(self.films.len());
        let mut outliers = Vec::new();
        for (k, (f, reference)) in self.films.iter().zip(references).enumerate() {
            let best = self.film_candidate(k, &summary.best.candidate, &combined.scores);
            let (tether, scenario) = best.experiment(&self.request.base, &f.scenario);
            let track = match reference {
                Some(r) => r.track,
                None => {
                    simulate(&scenario, &tether, settings)
                        .map_err(super::solver("best-fit run on the reference solver failed"))?
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
                    .map_err(super::solver(
                        "refined-fit run on the reference solver failed",
                    ))?
                    .track;
                fit = fit.with_refined(&refined_track);
            }
            // A single film's limit is its grid best's noise level; each of
            // several films' its own: the refinement's, whose residual is
            // the fit's, else the grid's estimate.
            let sigma_m = match single {
                true => summary.confidence.sigma2_m2.sqrt(),
                false => film_sigma_m(refined, &combined.weights, k),
            };
            let limit_m = outlier_limit_m(sigma_m, self.request.base.length_m);
            let found = find_outliers(&fit, limit_m, &f.film.camera);
            let mut fit_metadata = self.metadata.clone();
            if !found.is_empty() {
                fit_metadata.insert(metadata::OUTLIERS.into(), json(&found));
            }
            let path = match single {
                true => out.join("best_fit.parquet"),
                false => best_fit_path(&out, &f.film.name),
            };
            write_best_fit(
                &path,
                &fit,
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
            fits.push((fit, best));
        }
        let annotations = crate::plot::identify::Annotations::from_metadata(&self.metadata);
        if let [(fit, _)] = &fits[..] {
            let figures =
                crate::plot::identify::save_all(&out, &combined.joint, Some(fit), &annotations)?;
            return Ok((figures, outliers));
        }
        let mut figures =
            crate::plot::identify::save_all(&out, &combined.joint, None, &annotations)?;
        for (f, (fit, best)) in self.films.iter().zip(&fits) {
            figures.extend(crate::plot::identify::save_fit(
                &out,
                fit,
                best,
                &format!("_{}", f.film.name),
            )?);
        }
        Ok((figures, outliers))
    }
}

/// Film `k`'s noise level σ of one coordinate \[m\] among several: the
/// refinement's residual where there is one, else its grid best's.
fn film_sigma_m(refined: Option<&Refined>, weights: &[FilmWeight], k: usize) -> f64 {
    refined
        .and_then(|r| r.films.get(k))
        .map_or(weights[k].sigma_m, |f| f.sigma_m)
}

/// Merges a sharded identification (`summarize`): `results`, each film's
/// parts merged in its grid's order, combined, summarized, refined and
/// written as a whole run's; `shard_validations`, each part's check of its
/// engine, become the report's validations.
pub fn merge(
    request: IdentifyRequest,
    results: Vec<Vec<CandidateResult>>,
    names: EngineNames,
    metadata: Metadata,
    wall_s: f64,
    shard_validations: Vec<(String, Validation)>,
) -> Result<IdentifyReport, WorkflowError> {
    let films = check_films(&request)?;
    for (f, r) in films.iter().zip(&results) {
        if r.len() != f.grid.len() {
            return Err(WorkflowError::Usage(format!(
                "film {}: {} merged rows, not its grid's {} candidates",
                f.film.name,
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
    // Every shard's pilot is the whole grid's: one bound for all.
    let abandon = metadata
        .get(metadata::ABANDON)
        .and_then(|t| serde_json::from_str(t).ok());
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
        Swept {
            results,
            scored: 0,
            simulations: 0,
            wall_s,
            abandon,
        },
        None,
    )
    .map(|report| IdentifyReport {
        validations: shard_validations,
        ..report
    })
}

/// Checks a finished identification's outcome: a shard none of whose
/// candidates has a J_e, a failed validation, or (unless allowed) a best
/// fit that misses the data by more than the tether's length or the
/// film's noise allows, is an error after the files are written.
pub fn check_outcome(report: &IdentifyReport) -> Result<(), WorkflowError> {
    // A single film's shard has its part's summary; several films' parts
    // have none (their joint J_e is `summarize`'s).
    if report.summary.is_none() && (report.shard.is_none() || report.films.len() == 1) {
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
    super::fit::implausible(
        report.fit_warning.as_ref(),
        report.implausible_allowed,
        &report.out,
    )
}

/// The path one of several films' best fit is written to.
pub fn best_fit_path(out: &Path, film: &str) -> PathBuf {
    out.join(format!("best_fit_{film}.parquet"))
}

/// The refined optimum at the chosen tolerance; fitted again from its
/// values at its own σ's when that asks for a tolerance far below the
/// grid's ([`Chosen::tightened_for_refinement`]) and profiled there,
/// `chosen` then updated, so that the best fit runs at it too.
fn refine_at_datas_accuracy(
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
    .map_err(super::solver("refining the best candidate"))?;
    if tightened.is_some() {
        *chosen = tightened;
    }
    Ok(refined)
}

/// The tether every candidate shares, as metadata: every field the grid
/// sweeps (n, D, C_D and any parameter axis over the tether) null rather
/// than the base's value, which no candidate has.
pub fn sweep_tether_json(base: &TetherParams, grid: &Grid) -> String {
    let mut value = serde_json::to_value(base).expect("plain data serializes");
    let fields = value.as_object_mut().expect("a struct");
    for axis in grid.axes() {
        if let Some(field) = fields.get_mut(axis.axis.column()) {
            *field = serde_json::Value::Null;
        }
    }
    value.to_string()
}

/// The base tether back from [`sweep_tether_json`] (the swept fields at
/// their defaults: the grid sets them per candidate).
pub fn sweep_tether(text: &str) -> Result<TetherParams, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(text)?;
    let defaults = serde_json::to_value(TetherParams::default()).expect("plain data serializes");
    if let Some(fields) = value.as_object_mut() {
        for (key, field) in fields.iter_mut().filter(|(_, v)| v.is_null()) {
            *field = defaults[key.as_str()].clone();
        }
    }
    serde_json::from_value(value)
}

/// The engine names of a results table, from its metadata.
pub fn engine_names(metadata: &Metadata) -> Option<EngineNames> {
    serde_json::from_str(metadata.get(metadata::ENGINE)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_films_is_refused_not_a_panic() {
        let grid = Grid::parse("4", "1000", "0.8").unwrap();
        let out = std::env::temp_dir().join("tether-sweep-no-films");
        let request = IdentifyRequest::of_films(Vec::new(), grid, &out);
        let e = prepare(request.clone()).err().expect("refused");
        assert!(e.to_string().contains("one film or more"), "{e}");
        let e = crate::workflow::objective::Objective::new(&request)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("one film or more"), "{e}");
        assert!(!out.exists());
    }

    #[test]
    fn axes_given_as_text_go_on_the_grid_or_their_film() {
        let grid = Grid::parse("4", "1000", "0.8").unwrap();
        let mut one = IdentifyRequest::new("a.csv", grid.clone(), "out");
        one.add_axis("release_time_s=0:0.01:0.005").unwrap();
        assert_eq!(one.grid.len(), 3);
        let e = one.add_axis("release_time_s").unwrap_err();
        assert_eq!(e.field, "axis");
        assert!(e.allowed.contains("NAME=AXIS"), "{e}");
        // One film may be named, as design's advice names it: its axes
        // are the grid's.
        let mut named = IdentifyRequest::new("a.csv", grid.clone(), "out");
        named.add_axis("a.release_time_s=0,0.01").unwrap();
        assert_eq!((named.grid.len(), named.films[0].own.len()), (2, 0));
        let e = named.add_axis("b.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("no film is named 'b'"), "{e}");
        let e = one.add_axis("length_m=abc").unwrap_err();
        assert_eq!(e.field, "axis length_m");

        let films = vec![Film::new("shallow.csv"), Film::new("steep.csv")];
        let mut two = IdentifyRequest::of_films(films, grid, "out");
        two.add_axis("steep.release_time_s=0,0.01").unwrap();
        assert_eq!(two.films[1].own.len(), 1);
        assert_eq!(two.grid.len(), 1, "a film's axis is not the grid's");
        let e = two.add_axis("steep.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("one axis"), "{e}");
        let e = two.add_axis("flat.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("the films: shallow, steep"), "{e}");
    }

    #[test]
    fn a_sweeps_tether_record_has_no_placeholder_axes_and_reads_back() {
        let base = TetherParams {
            tip_mass_kg: 0.01,
            length_m: 0.7,
            ..TetherParams::default()
        };
        let grid = Grid::parse("10", "0", "0.8").unwrap();
        let text = sweep_tether_json(&base, &grid);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for axis in Axis::FIXED {
            assert!(value[axis.column()].is_null(), "{axis} in {text}");
        }
        assert_eq!(value["length_m"], 0.7);
        assert_eq!(sweep_tether(&text).unwrap(), base);
        // A swept length is recorded as swept, not as the base's.
        let swept = grid.with_axis("length_m", "0.6,0.8").unwrap();
        let text = sweep_tether_json(&base, &swept);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(value["length_m"].is_null(), "{text}");
        assert_eq!(value["tip_mass_kg"], 0.01);
    }

    #[test]
    fn the_shipped_dataset_is_its_compiled_in_copy() {
        // The test runs in the package root, where the file is.
        assert_eq!(shipped_dataset().unwrap(), PathBuf::from(SHIPPED_DATASET));
        assert_eq!(
            std::fs::read(SHIPPED_DATASET).unwrap(),
            SHIPPED_DATASET_BYTES
        );
    }
}
