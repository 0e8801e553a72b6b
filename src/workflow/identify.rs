//! Identification: every candidate (n, D, C_D) of a grid simulated on the
//! drop and scored by J_e against a measured track, whole or as one shard
//! of N, chunk by chunk so that a killed run can resume; then the summary,
//! the validation of the engine against the f64 reference solver, the best
//! fit and the figures.
//!
//! [`prepare`] checks the request, claims the output, opens the saved chunks
//! and chooses the engine, and says what it will do ([`Plan`]);
//! [`PreparedIdentification::run`] runs it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{Estimate, Hooks, WorkflowError, batch, claim_output, usage};
use crate::camera::Camera;
use crate::engine::EngineOptions;
use crate::engine::choice::{Choice, EngineRequest};
use crate::engine::{Backend, Engine, EngineKind, EngineNames, RunHooks};
use crate::error::{InputError, decimal};
use crate::gpu::Precision;
use crate::io::IoError;
use crate::io::checkpoint::{CHUNKS_DIR, ChunkStore};
use crate::io::config::FilmConfig;
use crate::io::lock::OutputLock;
use crate::io::results::{BestFit, write_best_fit, write_refined, write_results};
use crate::io::track::read_film;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::batch::StepCache;
use crate::scenario::{
    DeclaredFrames, Frames, RunStatus, Scenario, ScenarioKind, SimulationOutput, SolverSettings,
    median_interval_s, simulate,
};
use crate::solver::SolverKind;
use crate::sweep::accuracy::{Chosen, SCOUT_TOLERANCE_M, confirm};
use crate::sweep::refine::{RefineFilm, Refined, refine_best_tightened};
use crate::sweep::validation::{
    DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M, Validation, pick, validate,
};
use crate::sweep::{
    Axis, Candidate, CandidateResult, Coverage, Grid, Selection, Shard, Summary, check_coverage,
    run, summarize,
};
use crate::track::{MeasuredTrack, NoiseEstimate};

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

/// An identification, as the user asked for it.
#[derive(Debug, Clone)]
pub struct IdentifyRequest {
    /// The measured track: Parquet or CSV, long (t, marker, x, y) or wide
    /// (a time column, x and y per marker), read through `camera`.
    pub measured: PathBuf,
    pub grid: Grid,
    /// Run only this shard (its part is all it writes).
    pub shard: Option<Shard>,
    pub resume: bool,
    /// Candidates per saved chunk; default 16 per CPU thread, 1024 on a GPU.
    pub chunk_size: Option<usize>,
    /// Where and how the candidates run.
    pub engine: EngineOptions,
    /// Every parameter the grid does not vary (tip mass, length, …).
    pub base: TetherParams,
    /// The filmed drop (release angle, pin, frame interval, marker arc
    /// lengths), from a config; None: docs/model.md §4.1's. Whichever it is, its
    /// duration becomes the measured file's last frame, and its markers
    /// the file's `s` column where the file has one.
    pub scenario: Option<Scenario>,
    /// The frames the config declares (`duration_s`, `frame_interval_s`,
    /// `frame_times_s` of the config that made the film): each must agree
    /// with the measured file, whose frames the run uses.
    pub declared_frames: DeclaredFrames,
    /// How the measured file is written: its unit, y axis, gravity, pin
    /// and clock (`[camera]`; the default is the model's frame).
    pub camera: Camera,
    /// Marker arc lengths the user gave \[m\] (a config's
    /// `marker_arc_lengths_m`): they override the scenario's and must
    /// agree with the file's `s` column.
    pub marker_arc_lengths_m: Option<Vec<f64>>,
    /// The reference solver's local error tolerance \[m\] for the sweep,
    /// the best fit and the refinement alike (`--tolerance`). None:
    /// chosen from the data ([`crate::sweep::accuracy`]): a first pass at
    /// the scouting tolerance, then the candidates near the best, the best
    /// fit and the refinement at the tolerance whose track error moves J_e
    /// by a tenth of the confidence threshold.
    pub tolerance_m: Option<f64>,
    /// Candidates re-run on the reference solver after a sweep on another
    /// solver; 0 skips the check.
    pub validate: usize,
    pub validate_marker_tolerance_m: f64,
    pub validate_j_e_tolerance: f64,
    /// After the grid, refine the best candidate's continuous axes by
    /// Levenberg–Marquardt on the reference solver (`sweep::refine`) and
    /// write refined.parquet.
    pub refine: bool,
    /// Sweep even when the measured first frame is far from the
    /// experiment's initial shape ([`Plausibility`]).
    pub allow_implausible: bool,
    /// The surface figure's two axes (results columns); None: D and C_D.
    pub surface_axes: Option<[Axis; 2]>,
    /// Also write results.csv.
    pub csv: bool,
    pub out: PathBuf,
    pub force: bool,
}

impl IdentifyRequest {
    /// The identification of `measured` over `grid` into `out` with the
    /// CLI's defaults: `--backend auto`, f32 on a GPU, the job's default
    /// solver, docs/model.md §1 for the parameters the grid does not vary, three
    /// candidates validated, no CSV, no shard, no resume, no overwrite.
    pub fn new(measured: impl Into<PathBuf>, grid: Grid, out: impl Into<PathBuf>) -> Self {
        Self {
            measured: measured.into(),
            grid,
            shard: None,
            resume: false,
            chunk_size: None,
            engine: EngineOptions::default(),
            base: TetherParams::default(),
            scenario: None,
            camera: Camera::default(),
            declared_frames: DeclaredFrames::default(),
            marker_arc_lengths_m: None,
            tolerance_m: None,
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
        film: FilmConfig,
        grid: Grid,
        out: impl Into<PathBuf>,
    ) -> Result<Self, WorkflowError> {
        let Some(measured) = film.measured else {
            return Err(InputError::new(
                "measured",
                "not given",
                format!(
                    "the film's file: measured = \"FILE\" in [settings] of {}'s config",
                    film.name
                ),
            )
            .into());
        };
        Ok(Self {
            base: film.tether,
            scenario: Some(film.scenario),
            camera: film.camera,
            declared_frames: film.declared_frames,
            marker_arc_lengths_m: film.marker_arc_lengths_m,
            ..Self::new(measured, grid, out)
        })
    }

    /// Checks it, then runs it ([`prepare`], then [`PreparedIdentification::run`]).
    pub fn run(self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
        prepare(self)?.run(hooks)
    }
}

/// What a prepared identification will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub candidates: usize,
    /// This shard's candidates (all when not sharded).
    pub selected: usize,
    /// Candidates found finished in saved chunks.
    pub resumed: usize,
    pub saved_chunks: usize,
    pub to_run: usize,
    pub engine: EngineKind,
    /// The adapter's name when the GPU runs.
    pub adapter: Option<String>,
    /// Why `--backend auto` chose the engine.
    pub engine_reason: Option<String>,
    pub table_path: PathBuf,
    /// Rows of the measured file that no frame and marker of the experiment
    /// compares (markers beyond its own; every frame is compared).
    pub unused_rows: usize,
    /// The experiment compared: frames, markers, duration.
    pub scenario: Scenario,
    /// How far the measured first frame is from the initial shape.
    pub start: Option<StartOffset>,
    /// The samples J_e compares, and those it skips.
    pub coverage: Coverage,
    /// Rows of the file with an empty or NaN position (occluded markers).
    pub occluded_rows: usize,
    /// The tolerance of the sweep's first pass \[m\] when the run then
    /// re-runs the candidates near the best at the data's
    /// ([`crate::sweep::accuracy::confirm`]); None: the sweep is final.
    pub scout_tolerance_m: Option<f64>,
    /// The film's noise, which the fit is tested against
    /// ([`GoodnessOfFit`]); None when the film is too short to tell.
    pub noise: Option<NoiseEstimate>,
    /// The pin, where the film's tracked marker gave it
    /// ([`take_pin_from_film`]).
    pub tracked_pin: Option<TrackedPin>,
}

/// A pin taken from the film: the marker it tracks at arc length 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TrackedPin {
    /// Its median position, in the file's coordinates: what `[camera] pin`
    /// would say.
    pub pin_file: [f64; 2],
    /// The marker's RMS distance from it over the frames \[m\].
    pub wander_m: f64,
}

/// A tracked pin may wander this fraction of the tether's length (RMS)
/// around its median and still be the pin: 6 mm on the paper's 0.6 m
/// tether, over ten times a tracker's typical noise, where a marker on the
/// swinging tether wanders by tens of percent.
pub const PIN_WANDER_OF_LENGTH: f64 = 0.01;

/// Where a `[camera]` table gives no pin, the film tracks marker 0 and
/// marker 0 is at arc length 0 (the config's or the file's arc lengths,
/// or the default markers), that marker's median position is the pin: it
/// is written into the request's camera, as if the user had typed it, so
/// that every table, the best fit's file-frame columns and `summarize`
/// use it. Refused, naming `[camera] pin`, when the marker wanders more
/// than [`PIN_WANDER_OF_LENGTH`] of the length. Nothing without a camera
/// table (the file is then in the model's frame), with a pin given, or
/// with a pin axis.
pub fn take_pin_from_film(
    request: &mut IdentifyRequest,
) -> Result<Option<TrackedPin>, WorkflowError> {
    let pin_axis = request.grid.parameters.iter().any(|a| {
        matches!(
            a.parameter,
            crate::sweep::Parameter::PinXM | crate::sweep::Parameter::PinYM
        )
    });
    let camera = &request.camera;
    if camera.is_default() || camera.pin.is_some() || pin_axis {
        return Ok(None);
    }
    camera.validate()?;
    let measured = read_film(&request.measured, camera, [0.0, 0.0])
        .map_err(|e| WorkflowError::Usage(format!("the measured track: {e}")))?;
    let first_arc_m = request
        .marker_arc_lengths_m
        .as_ref()
        .or(measured.marker_arc_lengths_m.as_ref())
        .and_then(|a| a.first().copied())
        .unwrap_or(0.0);
    let Some((place_m, wander_m)) = measured.resting_place(0).filter(|_| first_arc_m == 0.0) else {
        return Ok(None);
    };
    let length_m = request.base.length_m;
    if wander_m > PIN_WANDER_OF_LENGTH * length_m {
        return Err(InputError::new(
            "[camera] pin",
            "not given",
            format!(
                "the pin where the tracker saw it: the film's marker 0, at arc length 0, wanders {:.1} mm RMS around its median, more than {} % of the tether's {length_m} m, so it is no pin to take the pin from",
                1e3 * wander_m,
                100.0 * PIN_WANDER_OF_LENGTH
            ),
        )
        .into());
    }
    let pin_file = camera.map([0.0, 0.0]).to_file(place_m);
    request.camera.pin = Some(pin_file);
    Ok(Some(TrackedPin { pin_file, wander_m }))
}

/// How far the measured first frame, before the release, is from the experiment's initial
/// shape (straight, from the pin at the release angle, its markers at
/// their arc lengths).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StartOffset {
    /// The frame's time on the file's clock \[s\].
    pub time_s: f64,
    /// RMS over the markers \[m\].
    pub rms_m: f64,
    /// The marker farthest off, and by how much \[m\].
    pub worst_marker: usize,
    pub worst_m: f64,
    pub markers: usize,
}

/// The thresholds of the plausibility checks, as fractions of the tether's
/// length L. Marker noise is a fraction of a millimetre and L is tens of
/// centimetres, so a first frame 1 % of L off the initial shape is worth a
/// look, and 10 % (6 cm for the paper's tether) is another experiment: other
/// units, mirrored axes, another length or release angle. A best fit that
/// misses the data by an RMS of 5 % of L is no fit of this experiment.
pub struct Plausibility;

impl Plausibility {
    pub const START_WARNING: f64 = 0.01;
    pub const START_ERROR: f64 = 0.10;
    pub const FIT_WARNING: f64 = 0.05;
}

/// The measured first frame, when it is at or before the release, against
/// the initial shape that every candidate starts from (the scenario's
/// initial state of `tether`), over the markers the frame has; None without
/// such a frame.
pub fn start_offset(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    tether: &TetherParams,
) -> Result<Option<StartOffset>, WorkflowError> {
    let Some(time_s) = scenario
        .frame_times_s()
        .first()
        .copied()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
    else {
        return Ok(None);
    };
    let tether = crate::model::Tether::new(tether.clone())?;
    let (q0, _) = scenario
        .initial_state(&tether)
        .map_err(super::solver("the initial shape"))?;
    let offsets: Vec<(usize, f64)> = scenario
        .marker_arc_lengths_m
        .iter()
        .enumerate()
        .filter_map(|(j, &s)| {
            let m = measured.get(time_s, j)?;
            let initial = tether.point(&q0, s);
            Some((j, (m[0] - initial[0]).hypot(m[1] - initial[1])))
        })
        .collect();
    let Some((worst_marker, worst_m)) = offsets.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Ok(None);
    };
    let rms_m = (offsets.iter().map(|(_, d)| d * d).sum::<f64>() / offsets.len() as f64).sqrt();
    Ok(Some(StartOffset {
        time_s,
        rms_m,
        worst_marker,
        worst_m,
        markers: offsets.len(),
    }))
}

/// Initial shapes the start check compares with at most: the product of
/// the shaping axes' values (an axis that would pass it stays at its base
/// value).
const MAX_START_SHAPES: usize = 4096;

/// The start check for every experiment the grid can make. The measured
/// first frame shows the held initial shape if it is at or before the
/// latest release time the run uses (the config's, or a release axis's
/// largest value: a clock starting after 0 is then checked too); the
/// offset reported is the smallest over the values of the axes that move
/// that shape (angle, pin, length), so that only data no candidate can
/// start from is refused.
fn start_offset_over_axes(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    base: &TetherParams,
    grid: &Grid,
) -> Result<Option<StartOffset>, WorkflowError> {
    use crate::sweep::Parameter;
    let values = |p: Parameter| {
        grid.parameters
            .iter()
            .find(|a| a.parameter == p)
            .map_or_else(|| vec![p.get(base, scenario)], |a| a.values.clone())
    };
    let latest_release = values(Parameter::ReleaseTimeS)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    let (mut tether, mut latest) = (base.clone(), scenario.clone());
    Parameter::ReleaseTimeS.set(latest_release, &mut tether, &mut latest);
    let mut experiments = vec![(tether, latest)];
    for p in [
        Parameter::InitialAngleDeg,
        Parameter::PinXM,
        Parameter::PinYM,
        Parameter::LengthM,
    ] {
        let vs = values(p);
        if vs.len() < 2 || experiments.len() * vs.len() > MAX_START_SHAPES {
            continue;
        }
        experiments = experiments
            .into_iter()
            .flat_map(|(t, s)| {
                vs.iter().map(move |&v| {
                    let (mut t, mut s) = (t.clone(), s.clone());
                    p.set(v, &mut t, &mut s);
                    (t, s)
                })
            })
            .collect();
    }
    let mut closest: Option<StartOffset> = None;
    for (tether, experiment) in &experiments {
        if let Some(offset) = start_offset(measured, experiment, tether)?
            && closest.as_ref().is_none_or(|c| offset.rms_m < c.rms_m)
        {
            closest = Some(offset);
        }
    }
    Ok(closest)
}

impl StartOffset {
    /// The finding in words, for a warning or an error.
    pub fn describe(&self, scenario: &Scenario) -> String {
        let angle_deg = scenario.as_drop().map_or(f64::NAN, |d| d.initial_angle_deg);
        format!(
            "the measured frame at t = {} s, before the release, is {:.4} m RMS over {} markers (marker {}: {:.4} m) from the experiment's initial shape (straight from the pin at ({}, {}) m, released at {}°): data in other units, mirrored axes, another length or release angle? (a tracker's pixels, an image's y axis pointing down, a pin elsewhere: say so in [camera] of --config, docs/conventions.md)",
            decimal(self.time_s),
            self.rms_m,
            self.markers,
            self.worst_marker,
            self.worst_m,
            scenario.pin_m()[0],
            scenario.pin_m()[1],
            angle_deg
        )
    }
}

/// An identification ready to run.
pub struct PreparedIdentification {
    request: IdentifyRequest,
    pub plan: Plan,
    measured: MeasuredTrack,
    scenario: Scenario,
    engine: Engine,
    store: ChunkStore,
    done: Vec<CandidateResult>,
    todo: Selection,
    metadata: Metadata,
    /// The directories claiming the table made (see [`ClaimedTable`]).
    made_dirs: Vec<PathBuf>,
    /// Held until the run ends (None once released to remove `made_dirs`).
    lock: Option<OutputLock>,
}

/// What an identification found and wrote.
#[derive(Debug, Clone)]
pub struct IdentifyReport {
    pub plan: Plan,
    pub results: Vec<CandidateResult>,
    /// None when every candidate diverged.
    pub summary: Option<Summary>,
    pub validation: Option<Validation>,
    /// Candidates scored by this invocation, and their wall time \[s\].
    pub simulated: usize,
    /// Simulations those took: fewer than the candidates when a
    /// release-time axis shares one among its values
    /// (`sweep::release`).
    pub simulations: usize,
    pub wall_s: f64,
    pub table_path: PathBuf,
    /// The figures drawn (not for a shard).
    pub figures: Option<Vec<String>>,
    pub shard: Option<Shard>,
    pub out: PathBuf,
    /// Set when the best fit misses the data by more than
    /// [`Plausibility::FIT_WARNING`] of the tether's length, or by more
    /// than the film's noise explains ([`GoodnessOfFit`]).
    pub fit_warning: Option<String>,
    /// The fit's σ against the film's noise (not for a shard; None when
    /// the film is too short to estimate its noise, or nothing fitted).
    pub goodness: Option<GoodnessOfFit>,
    /// `--allow-implausible`: a fit warning does not fail the run.
    pub implausible_allowed: bool,
    /// Samples far beyond the noise from the best fit ([`find_outliers`]).
    pub outliers: Vec<Outlier>,
    /// The distance beyond which they are listed \[m\] ([`outlier_limit_m`]).
    pub outlier_limit_m: f64,
    /// The refined optimum (not for a shard, or with `refine` off).
    pub refined: Option<Refined>,
    /// The reference solver's tolerance for the best fit and the
    /// refinement, and how it was chosen (None: no candidate had a J_e).
    pub accuracy: Option<Chosen>,
}

/// The drop the candidates are compared in: the request's scenario (or
/// the paper's), with the measured file's markers and its last frame as the
/// duration.
fn experiment(
    request: &IdentifyRequest,
    measured: &MeasuredTrack,
) -> Result<Scenario, WorkflowError> {
    let mut scenario = request
        .scenario
        .clone()
        .unwrap_or_else(|| Scenario::new(ScenarioKind::Drop, request.base.length_m));
    if scenario.kind() != ScenarioKind::Drop {
        return Err(InputError::new(
            "scenario",
            format!("{:?}", scenario.kind()).to_lowercase(),
            "drop: identify compares a released tether's drop",
        )
        .into());
    }
    let file_arcs = measured.marker_arc_lengths_m.as_ref();
    match (&request.marker_arc_lengths_m, file_arcs) {
        (Some(given), Some(file))
            if given.len() != file.len()
                || given.iter().zip(file).any(|(a, b)| (a - b).abs() > 1e-6) =>
        {
            return Err(InputError::new(
                "marker_arc_lengths_m",
                format!("{given:?}"),
                format!("the measured file's markers, whose `s` column says {file:?} m (to 1 µm)"),
            )
            .into());
        }
        (Some(given), _) => scenario.marker_arc_lengths_m = given.clone(),
        (None, Some(file)) => {
            // Named as the file's: the config says nothing of them.
            let length_m = request.base.length_m;
            if let Some(s) = file.iter().find(|&&s| !(0.0..=length_m).contains(&s)) {
                return Err(InputError::new(
                    "s (a column of the measured file)",
                    // To the nanometre: 0.54, not 0.5399999999999999.
                    (s * 1e9).round() / 1e9,
                    format!("arc lengths from the pin, between 0 and the tether's length {length_m} m (length_m, or --length; an s column in another unit needs [camera] unit)"),
                )
                .into());
            }
            scenario.marker_arc_lengths_m = file.clone();
        }
        (None, None) => {}
    }
    // The file's own frames, wherever they fall (docs/model.md §4.1).
    let times = measured.times_s();
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return Err(InputError::new("measured", "no rows", "a measured track").into());
    };
    if first < 0.0 {
        return Err(InputError::new(
            "measured",
            format!("a frame at t = {first} s"),
            "times from 0 s on (shift the file's clock; the release is release_time_s on it)",
        )
        .into());
    }
    if last <= scenario.release_time_s() {
        return Err(InputError::new(
            "release_time_s",
            scenario.release_time_s(),
            format!("a time before the measured file's last frame, t = {last} s"),
        )
        .into());
    }
    check_clock(&scenario, &request.grid, &times)?;
    check_declared_frames(&request.declared_frames, &times, &scenario, &request.grid)?;
    check_marker_count(measured, &scenario, request.marker_arc_lengths_m.is_some())?;
    scenario.frames = Frames::film(times);
    scenario.validate(request.base.length_m)?;
    scenario.check_track_memory()?;
    Ok(scenario)
}

/// The config's declared frames against the file's `times` (on the
/// file's clock, in seconds). A duration agrees when the file's last frame
/// falls within a frame interval before the release plus the duration, for
/// some release the run can use (the config's, or a release axis's range).
fn check_declared_frames(
    declared: &DeclaredFrames,
    times: &[f64],
    scenario: &Scenario,
    grid: &Grid,
) -> Result<(), WorkflowError> {
    let named = |key: &str| format!("{key} (in {})", declared.source);
    let (first, last) = (times[0], times[times.len() - 1]);
    let interval = median_interval_s(times).unwrap_or(f64::INFINITY);
    if let Some(given) = &declared.frame_times_s
        && (given.len() != times.len()
            || given.iter().zip(times).any(|(a, b)| (a - b).abs() > 1e-6))
    {
        return Err(InputError::new(
            named("frame_times_s"),
            format!(
                "{} times from {} to {} s",
                given.len(),
                given.first().unwrap_or(&f64::NAN),
                given.last().unwrap_or(&f64::NAN)
            ),
            format!(
                "the measured file's frames ({} from {} to {} s, to 1 µs), or left out",
                times.len(),
                decimal(first),
                decimal(last)
            ),
        )
        .into());
    }
    if let Some(given) = declared.frame_interval_s
        && times.len() > 1
        && (given - interval).abs() > 0.01 * interval
    {
        return Err(InputError::new(
            named("frame_interval_s"),
            given,
            format!(
                "the measured file's frame interval, {} s (its median, to 1 %), or left out",
                decimal(interval)
            ),
        )
        .into());
    }
    if let Some(duration) = declared.duration_s {
        let releases = match grid
            .parameters
            .iter()
            .find(|a| a.parameter == crate::sweep::Parameter::ReleaseTimeS)
        {
            Some(axis) => axis.values.clone(),
            None => vec![scenario.release_time_s()],
        };
        let (low, high) = releases
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &r| {
                (l.min(r), h.max(r))
            });
        // last ∈ [release + duration − interval, release + duration] for
        // some release in [low, high].
        let slack = 1e-6 + if interval.is_finite() { interval } else { 0.0 };
        if last > high + duration + 1e-6 || last < low + duration - slack {
            return Err(InputError::new(
                named("duration_s"),
                duration,
                format!(
                    "the measured file's last frame less the release: {} s less {} ({}), or left out",
                    decimal(last),
                    if low == high {
                        format!("{} s", decimal(low))
                    } else {
                        format!("{} … {} s", decimal(low), decimal(high))
                    },
                    if releases.len() > 1 {
                        "the release axis"
                    } else {
                        "release_time_s"
                    }
                ),
            )
            .into());
        }
    }
    Ok(())
}

/// A film whose clock starts more than a frame interval after 0 was not
/// released at its t = 0: without a release time (or an axis over it)
/// every candidate would be compared from the wrong instant, and the sweep
/// would still find a best one.
fn check_clock(scenario: &Scenario, grid: &Grid, times: &[f64]) -> Result<(), WorkflowError> {
    let has_release_axis = grid
        .parameters
        .iter()
        .any(|a| a.parameter == crate::sweep::Parameter::ReleaseTimeS);
    if scenario.release_time_s() != 0.0 || has_release_axis {
        return Ok(());
    }
    let (Some(&first), Some(interval)) = (times.first(), median_interval_s(times)) else {
        return Ok(());
    };
    if first > interval * (1.0 + 1e-6) {
        return Err(InputError::new(
            "release_time_s",
            "not given",
            format!(
                "the release on the measured file's clock, which starts at t = {} s, more than a frame interval ({} s) after 0: set release_time_s in [settings] of --config, or give it an axis (--axis release_time_s=START:STOP:STEP)", decimal(first), decimal(interval)
            ),
        )
        .into());
    }
    Ok(())
}

/// The file's markers must be the experiment's: a file with other markers
/// than the default eleven, and neither an `s` column nor
/// marker_arc_lengths_m to say where they sit, would be matched to the
/// wrong arc lengths. A config that lists fewer markers than the file has
/// says which to use.
fn check_marker_count(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    markers_given: bool,
) -> Result<(), WorkflowError> {
    let in_file = measured.marker_count();
    let in_experiment = scenario.marker_arc_lengths_m.len();
    // Markers 1..=N where the experiment has N, 0..N−1: numbered from 1
    // (a file that only leaves out the pin's marker 0 is fine).
    if in_file == in_experiment + 1 && !measured.names_marker(0) {
        return Err(InputError::new(
            "measured",
            format!("markers 1..{}", in_file - 1),
            "a marker 0 at the pin's end: a file whose markers are numbered from 1 says so with first_marker = 1 in [camera] of --config",
        )
        .into());
    }
    let described = markers_given || measured.marker_arc_lengths_m.is_some();
    if in_file != in_experiment && !(described && in_file > in_experiment) {
        return Err(InputError::new(
            "marker_arc_lengths_m",
            if described {
                format!("{in_experiment} markers")
            } else {
                format!("not given (the default {in_experiment} at s = j L/10)")
            },
            format!(
                "the measured file's {in_file} markers (0..{}): give their arc lengths as marker_arc_lengths_m in [settings] of --config, or an `s` column in the file",
                in_file.saturating_sub(1)
            ),
        )
        .into());
    }
    Ok(())
}

/// Every value of every parameter axis, set in the experiment, must make a
/// valid tether and drop: a length that holds the markers, a release before
/// the last frame, … Checked per value, before anything runs.
fn check_parameter_axes(
    grid: &Grid,
    base: &TetherParams,
    scenario: &Scenario,
) -> Result<(), WorkflowError> {
    for axis in &grid.parameters {
        for &value in &axis.values {
            let (mut tether, mut experiment) = (base.clone(), scenario.clone());
            axis.parameter.set(value, &mut tether, &mut experiment);
            tether
                .validate()
                .and_then(|()| experiment.validate(tether.length_m))
                .map_err(|e| {
                    InputError::new(
                        "axis",
                        format!("{}={value}", axis.parameter),
                        format!("values that make a valid experiment: {e}"),
                    )
                })?;
        }
    }
    Ok(())
}

/// The surface figure's axes must be two different axes of the grid.
pub(super) fn check_surface_axes(grid: &Grid, axes: &[Axis; 2]) -> Result<(), WorkflowError> {
    let on_grid = grid.axes();
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

/// Compared coordinates of a drop: 2 per sample of a marker at a compared
/// frame (every frame but the film's first) that the measurement has.
pub fn observations(measured: &MeasuredTrack, scenario: &Scenario) -> usize {
    check_coverage(measured, scenario).map_or(0, |c| c.observations())
}

/// The frames' rows the run does not use: neither compared nor the first
/// frame's (the start check's).
fn unused_rows(measured: &MeasuredTrack, scenario: &Scenario, coverage: &Coverage) -> usize {
    let first_frame = scenario
        .frame_times_s()
        .first()
        .map(|&t| {
            (0..scenario.marker_arc_lengths_m.len())
                .filter(|&j| measured.get(t, j).is_some())
                .count()
        })
        .unwrap_or(0);
    measured.len() - coverage.compared - first_frame
}

/// The start of the film against the model's initial shape over every
/// release the run can use; a start no candidate can fit is refused unless
/// the user allows it.
fn checked_start(
    request: &IdentifyRequest,
    measured: &MeasuredTrack,
    scenario: &Scenario,
) -> Result<Option<StartOffset>, WorkflowError> {
    let start = start_offset_over_axes(measured, scenario, &request.base, &request.grid)?;
    let length_m = request.base.length_m;
    if let Some(offset) = start
        && offset.rms_m > Plausibility::START_ERROR * length_m
        && !request.allow_implausible
    {
        return Err(WorkflowError::Usage(format!(
            "{}; that is more than {} % of the tether's {} m, so no candidate can fit (pass --allow-implausible to sweep anyway)",
            offset.describe(scenario),
            100.0 * Plausibility::START_ERROR,
            length_m
        )));
    }
    Ok(start)
}

/// The simulations of release groups (each its candidates): one a group.
pub(super) fn release_simulations(
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

/// What every table of the run records: the grid, the measured file, the
/// tether, the experiment, the solver and the engine.
fn run_metadata(
    request: &IdentifyRequest,
    scenario: &Scenario,
    measured_sha256: &str,
    settings: &SolverSettings,
    choice: &Choice,
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
        metadata::MEASURED.into(),
        request.measured.display().to_string(),
    );
    metadata.insert(
        metadata::MEASURED_SHA256.into(),
        measured_sha256.to_string(),
    );
    metadata.insert(
        metadata::TETHER.into(),
        sweep_tether_json(&request.base, &request.grid),
    );
    if !request.camera.is_default() {
        metadata.insert(metadata::CAMERA.into(), json(&request.camera));
    }
    metadata.insert(metadata::SCENARIO.into(), scenario.record());
    metadata.insert(metadata::SOLVER_SETTINGS.into(), json(settings));
    super::record_engine(&mut metadata, &request.engine, choice);
    metadata
}

/// The directory of the run's table and its path (a shard's part, or the
/// whole run's results), claimed before anything runs.
fn claim_table(request: &IdentifyRequest) -> Result<ClaimedTable, WorkflowError> {
    let (dir, table_name) = match &request.shard {
        Some(s) => (request.out.join(s.directory()), "part.parquet"),
        None => (request.out.clone(), "results.parquet"),
    };
    let made_dirs: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let lock = OutputLock::acquire(&dir)?;
    let path = claim_output(&dir, table_name, request.force)?;
    Ok(ClaimedTable {
        dir,
        path,
        made_dirs,
        lock,
    })
}

/// The error of a run none of whose candidates has a J_e: nothing is
/// written, the saved chunks beside `table_path` keep their rows.
pub(super) fn nothing_simulated(results: &[CandidateResult], table_path: &Path) -> WorkflowError {
    let mut counts = std::collections::BTreeMap::new();
    for r in results {
        *counts.entry(r.status.name()).or_insert(0usize) += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let dir = table_path.parent().unwrap_or(Path::new("."));
    WorkflowError::NothingSimulated(format!(
        "no candidate could be simulated ({}): no J_e to compare, nothing written; their rows are saved in {} (--force discards them). Check the tether's parameters and the grid's ranges",
        counts.join(", "),
        dir.join(CHUNKS_DIR).display()
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

/// Where a run's table goes, and the directories claiming it made
/// (innermost first), which a run stopped before saving anything removes.
struct ClaimedTable {
    dir: PathBuf,
    path: PathBuf,
    made_dirs: Vec<PathBuf>,
    /// No other live run writes there while this one does.
    lock: OutputLock,
}

/// The measured film in the model's frame, through the request's camera.
/// A camera that says where it saw the pin fixes the pin: an axis over the
/// pin would move the model under the data.
pub(super) fn read_request_film(request: &IdentifyRequest) -> Result<MeasuredTrack, WorkflowError> {
    let camera = &request.camera;
    camera.validate()?;
    if camera.pin.is_some()
        && let Some(axis) = request.grid.parameters.iter().find(|a| {
            matches!(
                a.parameter,
                crate::sweep::Parameter::PinXM | crate::sweep::Parameter::PinYM
            )
        })
    {
        return Err(InputError::new(
            "axis",
            axis.parameter.to_string(),
            "no pin axis beside [camera] pin: the camera's pin is where the model's pin is (pin_m); leave one out",
        )
        .into());
    }
    let model_pin_m = request
        .scenario
        .as_ref()
        .map_or([0.0, 0.0], Scenario::pin_m);
    read_film(&request.measured, camera, model_pin_m)
        .map_err(|e| WorkflowError::Usage(format!("the measured track: {e}")))
}

/// The sweep's solver settings: `kind`, at the request's tolerance, else
/// (the reference solver's first pass, `scout`) at the scouting tolerance
/// ([`crate::sweep::accuracy`]); an error when a tolerance is given for
/// another solver than the reference (`--backend auto` chose a GPU: it
/// would not be used).
pub(super) fn sweep_settings(
    request: &IdentifyRequest,
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
    if let Some(t) = request.tolerance_m {
        if kind != SolverKind::Reference {
            return Err(crate::error::InputError::new(
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

/// The sweep's solver settings on the chosen `engine`, and the first
/// pass's tolerance \[m\] where the run scouts on the reference solver:
/// the engine's own, the scouting tolerance or, for the GPU's adaptive
/// scheme in f32, f32's first-pass one where that is looser
/// (`engine::choice::adaptive_reference`).
pub(super) fn engine_sweep_settings(
    request: &IdentifyRequest,
    engine: &Engine,
) -> Result<(SolverSettings, Option<f64>), WorkflowError> {
    let kind = engine.kind().solver();
    let mut settings = sweep_settings(request, kind, scouts(request))?;
    let scout_tolerance_m = (scouts(request) && kind == SolverKind::Reference)
        .then(|| engine.tolerance_m().unwrap_or(SCOUT_TOLERANCE_M));
    if let Some(t) = scout_tolerance_m {
        settings.reference.tolerance_m = t;
    }
    Ok((settings, scout_tolerance_m))
}

/// Whether a run's reference-solver sweep is a first pass at the
/// scouting tolerance, confirmed at the data's ([`confirm`]): a run
/// without `--tolerance`. A shard cannot know the grid's best, so
/// `summarize` confirms the merged parts as the single run confirms its
/// table.
fn scouts(request: &IdentifyRequest) -> bool {
    request.tolerance_m.is_none()
}

/// The request's own numbers and combinations, before anything is read.
pub(super) fn check_settings(request: &IdentifyRequest) -> Result<(), WorkflowError> {
    if request.chunk_size == Some(0) {
        return Err(crate::error::InputError::new("chunk_size", 0, "at least 1 candidate").into());
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
        sweep_settings(request, named, false)?;
    }
    Ok(())
}

/// A measured film read and checked against its experiment.
pub(super) struct Film {
    pub measured: MeasuredTrack,
    pub measured_sha256: String,
    /// The experiment compared: the request's, with the file's frames and
    /// markers.
    pub scenario: Scenario,
    pub coverage: Coverage,
    pub unused_rows: usize,
    pub start: Option<StartOffset>,
    /// Its noise: `[camera] noise`, or the film's own estimate.
    pub noise: Option<NoiseEstimate>,
}

/// Reads the request's film through its camera and checks it against the
/// experiment and the grid: the frames, the markers, the axes' values,
/// and the start.
pub(super) fn prepare_film(request: &IdentifyRequest) -> Result<Film, WorkflowError> {
    check_film(request, read_request_film(request)?)
}

/// A film's noise: `[camera] noise` where declared, else its own estimate.
pub fn film_noise(camera: &Camera, measured: &MeasuredTrack) -> Option<NoiseEstimate> {
    camera
        .declared_noise_m()
        .map(NoiseEstimate::declared)
        .or_else(|| measured.noise_estimate())
}

/// [`prepare_film`] of a film already read ([`read_request_film`]).
pub(super) fn check_film(
    request: &IdentifyRequest,
    measured: MeasuredTrack,
) -> Result<Film, WorkflowError> {
    let measured_sha256 = crate::io::sha256_hex(&request.measured)?;
    let scenario = experiment(request, &measured)?;
    check_parameter_axes(&request.grid, &request.base, &scenario)?;
    let coverage = check_coverage(&measured, &scenario).map_err(usage)?;
    let unused_rows = unused_rows(&measured, &scenario, &coverage);
    let start = checked_start(request, &measured, &scenario)?;
    let noise = film_noise(&request.camera, &measured);
    Ok(Film {
        measured,
        measured_sha256,
        scenario,
        coverage,
        unused_rows,
        start,
        noise,
    })
}

/// The engine of `request`'s sweep of `scenario`: `--backend auto`
/// weighs the shard's simulations (one per release group), or an even
/// sample of them on a grid of millions; the steps it counts are kept for
/// the run.
pub(super) fn choose_sweep_engine(
    request: &IdentifyRequest,
    scenario: &Scenario,
) -> Result<Choice, WorkflowError> {
    let (sample, groups) = Selection::new(request.grid.clone(), request.shard, HashSet::new())
        .sample_groups(CHOICE_SAMPLE_GROUPS);
    let simulations = release_simulations(&sample, &request.base, scenario);
    let steps = Arc::new(StepCache::default());
    super::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: sweep_settings(
                request,
                request.engine.solver.unwrap_or(SolverKind::Reference),
                scouts(request),
            )?,
            simulations: groups,
            scouting: scouts(request),
        },
        &super::count(groups, "drop"),
        &simulations,
        // A chunk's candidates, a release axis's values sharing a drop.
        (request.chunk_size.unwrap_or(GPU_CHUNK_CANDIDATES) / request.grid.release_run()).max(1),
        &steps,
    )
}

/// Checks the request, claims the output, opens the saved chunks and
/// chooses the engine. Nothing is simulated yet, except that `--backend
/// auto` with a hardware GPU times one candidate on the CPU.
pub fn prepare(mut request: IdentifyRequest) -> Result<PreparedIdentification, WorkflowError> {
    check_settings(&request)?;
    let tracked_pin = take_pin_from_film(&mut request)?;
    if let Some(axes) = &request.surface_axes {
        check_surface_axes(&request.grid, axes)?;
    }
    let Film {
        measured,
        measured_sha256,
        scenario,
        coverage,
        unused_rows,
        start,
        noise,
    } = prepare_film(&request)?;
    let shard = request.shard;
    let ClaimedTable {
        dir: table_dir,
        path: table_path,
        made_dirs,
        lock,
    } = claim_table(&request)?;

    let grid = &request.grid;
    let choice = choose_sweep_engine(&request, &scenario)?;
    let engine = choice.engine.kind();
    let names = engine.names();
    let (settings, scout_tolerance_m) = engine_sweep_settings(&request, &choice.engine)?;
    let mut metadata = run_metadata(&request, &scenario, &measured_sha256, &settings, &choice);
    if let Some(t) = scout_tolerance_m {
        metadata.insert(metadata::SCOUT_TOLERANCE.into(), json(&t));
    }
    if let Some(n) = &noise {
        metadata.insert(metadata::NOISE.into(), json(n));
    }
    // Everything that decides the results: a resume must continue the same run.
    let run_key = json(&(
        grid,
        &shard,
        &measured_sha256,
        &request.camera,
        &request.base,
        &scenario,
        &settings,
        &names,
    ));
    let (store, done) = ChunkStore::open(&table_dir, &run_key, request.resume, request.force)?;
    let done_indices: HashSet<usize> = done
        .iter()
        .filter_map(|r| grid.index_of(&r.candidate))
        .collect();
    let todo = Selection::new(grid.clone(), shard, done_indices);
    let plan = Plan {
        candidates: grid.len(),
        selected: todo.selected(),
        resumed: done.len(),
        saved_chunks: store.chunks(),
        to_run: todo.len(),
        engine,
        adapter: choice.engine.adapter_name().map(str::to_string),
        engine_reason: choice.reason,
        table_path,
        unused_rows,
        scenario: scenario.clone(),
        start,
        coverage,
        occluded_rows: measured.occluded_rows,
        scout_tolerance_m,
        noise,
        tracked_pin,
    };
    Ok(PreparedIdentification {
        request,
        plan,
        measured,
        scenario,
        engine: choice.engine,
        store,
        done,
        todo,
        metadata,
        made_dirs,
        lock: Some(lock),
    })
}

/// What the sweep of a run returns: every result (resumed ones first),
/// and what ran here.
struct Swept {
    results: Vec<CandidateResult>,
    resumed: usize,
    simulations: usize,
    wall_s: f64,
}

/// What a whole run writes beside its table: the figures (None for a
/// shard), and the samples far from the best fit beyond their limit [m].
struct FitOutputs {
    figures: Option<Vec<String>>,
    outliers: Vec<Outlier>,
    outlier_limit_m: f64,
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

impl PreparedIdentification {
    /// Runs the candidates still to run, chunk by chunk (each chunk saved
    /// before the next starts), then summarizes, validates and writes.
    pub fn run(mut self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
        let Swept {
            mut results,
            resumed,
            simulations,
            wall_s,
        } = self.sweep(hooks)?;
        let grid = &self.request.grid;
        results.sort_by_key(|r| grid.index_of(&r.candidate));
        remove_previous_table(&self.plan.table_path)?;
        let mut chosen = self.choose_accuracy(&mut results, hooks)?;
        self.metadata
            .insert(metadata::WALL_S.into(), format!("{wall_s:.3}"));
        let summary = summarize(
            &self.request.grid,
            &results,
            self.plan.coverage.observations(),
        );
        if let Some(s) = &summary {
            self.metadata.insert(metadata::SUMMARY.into(), json(s));
        } else if self.request.shard.is_none() {
            return Err(nothing_simulated(&results, &self.plan.table_path));
        }
        let refined = match (&summary, &self.request.shard) {
            (Some(s), None) if self.request.refine => refine_at_datas_accuracy(
                &self.request.grid,
                s,
                &[RefineFilm::single(&self.measured, &self.scenario)],
                &self.request.base,
                &mut chosen,
            )?,
            _ => None,
        };
        // A shard's best is only its part's (the good candidates may all
        // be in another shard): `summarize` judges the merged fit.
        let (goodness, fit_warning) = judge_fit(
            &mut self.metadata,
            summary.as_ref().filter(|_| self.request.shard.is_none()),
            refined.as_ref(),
            self.plan.noise,
            &self.request.base,
        );
        if let Some(c) = &chosen {
            self.metadata.insert(metadata::ACCURACY.into(), json(c));
        }
        let reference = Chosen::reference(chosen.as_ref());
        if let Some(r) = &refined {
            self.metadata.insert(metadata::REFINED.into(), json(r));
            write_refined(&self.request.out.join("refined.parquet"), r, &self.metadata)?;
        }
        let (validation, best_reference) = self.validate(summary.as_ref())?;
        let results_metadata = self.metadata.clone();
        let FitOutputs {
            figures,
            outliers,
            outlier_limit_m: outlier_limit,
        } = self.best_fit_and_figures(
            summary.as_ref(),
            refined.as_ref(),
            best_reference,
            &results,
            &reference,
        )?;
        let table_path = self.write_table(&results, &results_metadata)?;
        self.store.finish()?;
        let report = IdentifyReport {
            plan: self.plan.clone(),
            simulated: results.len() - resumed,
            simulations,
            results,
            summary,
            validation,
            wall_s,
            table_path,
            figures,
            shard: self.request.shard,
            out: self.request.out.clone(),
            fit_warning,
            goodness,
            implausible_allowed: self.request.allow_implausible,
            refined,
            outliers,
            outlier_limit_m: outlier_limit,
            accuracy: chosen,
        };
        Ok(report)
    }

    /// The results table (and its CSV twin), written last: its presence
    /// marks a complete output set (`remove_previous_table`), and a run
    /// killed before it is finished by --resume from its saved chunks.
    fn write_table(
        &self,
        results: &[CandidateResult],
        metadata: &Metadata,
    ) -> Result<PathBuf, WorkflowError> {
        let names = self.plan.engine.names();
        let table_path = self.plan.table_path.clone();
        let csv_path = self.request.csv.then(|| table_path.with_extension("csv"));
        for path in csv_path.iter().chain(std::iter::once(&table_path)) {
            write_results(
                path,
                results,
                &names.backend,
                &names.precision,
                &names.solver,
                metadata,
            )?;
        }
        Ok(table_path)
    }

    /// Runs the candidates still to run, chunk by chunk, each saved before
    /// the next starts; an interruption is an error once the finished
    /// chunks are saved.
    fn sweep(&mut self, hooks: Hooks<'_>) -> Result<Swept, WorkflowError> {
        let request = &self.request;
        let engine = self.plan.engine;
        // The default in whole runs of a release axis, whose values share
        // one simulation when they share a chunk.
        let chunk_size = request.chunk_size.unwrap_or_else(|| {
            let size = match engine.is_gpu() {
                true => GPU_CHUNK_CANDIDATES,
                false => CPU_CHUNK_CANDIDATES_PER_THREAD * rayon::current_num_threads(),
            };
            size.next_multiple_of(request.grid.release_run())
        });
        let names = engine.names();
        let started = Instant::now();
        let total = self.todo.len() as u64;
        let mut results = std::mem::take(&mut self.done);
        let resumed = results.len();
        let mut finished_here = 0u64;
        let mut interrupted = false;
        let mut simulations = 0usize;
        // The work a candidate costs, for the first estimate: its n (the
        // remaining candidates' n from the grid's mean, as they are not
        // made before they run).
        let work_at_start = total as f64 * self.todo.mean_elements();
        let mut pending = self.todo.candidates();
        loop {
            let chunk: Vec<Candidate> = pending.by_ref().take(chunk_size).collect();
            if chunk.is_empty() {
                break;
            }
            let offset = finished_here;
            let report = |done: u64, of: u64| {
                if let Some(p) = hooks.progress {
                    p(offset + (chunk.len() as u64 * done) / of.max(1), total);
                }
            };
            let finished = self.run_chunk(&chunk, &report, hooks)?;
            if finished.iter().any(|r| r.status == RunStatus::Cancelled) {
                interrupted = true;
                break;
            }
            self.store.save(
                &finished,
                (&names.backend, &names.precision, &names.solver),
                &self.metadata,
            )?;
            finished_here += chunk.len() as u64;
            simulations += crate::sweep::release::group_by_release(&chunk).len();
            results.extend(finished);
            let first_chunk = finished_here == chunk.len() as u64;
            if let Some(tell) = hooks
                .estimate
                .filter(|_| first_chunk && finished_here < total)
            {
                let elapsed_s = started.elapsed().as_secs_f64();
                let work_done: f64 = chunk.iter().map(|c| c.elements as f64).sum();
                tell(&Estimate {
                    finished: finished_here,
                    left: total - finished_here,
                    elapsed_s,
                    left_s: elapsed_s / work_done * (work_at_start - work_done).max(0.0),
                });
            }
        }
        let wall_s = started.elapsed().as_secs_f64();
        let table_dir = self.plan.table_path.parent().unwrap_or(Path::new("."));
        if interrupted {
            if results.is_empty() {
                self.store.discard_empty();
                self.lock = None;
                for dir in &self.made_dirs {
                    // Only empty ones: nothing else was there.
                    let _ = std::fs::remove_dir(dir);
                }
                return Err(WorkflowError::Interrupted(format!(
                    "interrupted before the first chunk of {} was saved: nothing to resume, nothing written",
                    super::count(self.plan.selected, "candidate"),
                )));
            }
            return Err(WorkflowError::Interrupted(format!(
                "interrupted: {} of {} are finished and saved in {}; run the same command with --resume to finish",
                results.len(),
                super::count(self.plan.selected, "candidate"),
                table_dir.join(CHUNKS_DIR).display()
            )));
        }
        Ok(Swept {
            results,
            resumed,
            simulations,
            wall_s,
        })
    }

    /// The best fit (with the refined optimum's track), the samples far
    /// from it, and the figures. A shard's part is all it writes: its best
    /// is only a shard's best, and anything else under DIR would break
    /// reading DIR as one dataset.
    fn best_fit_and_figures(
        &mut self,
        summary: Option<&Summary>,
        refined: Option<&Refined>,
        best_reference: Option<SimulationOutput>,
        results: &[CandidateResult],
        reference: &SolverSettings,
    ) -> Result<FitOutputs, WorkflowError> {
        let request = &self.request;
        let (mut outliers, mut outlier_limit) = (Vec::new(), f64::NAN);
        let figures = match (summary, &request.shard) {
            (Some(s), None) => {
                let best = match best_reference {
                    Some(r) => r,
                    None => best_fit_run(s, &request.base, &self.scenario, reference)?,
                };
                let fit = best_fit_with_refined(
                    BestFit::new(&self.measured, &best.track),
                    s,
                    refined,
                    &request.base,
                    &self.scenario,
                    reference,
                )?;
                outlier_limit =
                    outlier_limit_m(s.confidence.sigma2_m2.sqrt(), request.base.length_m);
                outliers = find_outliers(&fit, outlier_limit, &request.camera);
                if !outliers.is_empty() {
                    self.metadata
                        .insert(metadata::OUTLIERS.into(), json(&outliers));
                }
                write_best_fit(
                    &request.out.join("best_fit.parquet"),
                    &fit,
                    &request.camera,
                    self.scenario.pin_m(),
                    &self.metadata,
                )?;
                Some(crate::plot::identify::save_all(
                    &request.out,
                    results,
                    Some(&fit),
                    &crate::plot::identify::Annotations::from_metadata(&self.metadata),
                )?)
            }
            _ => None,
        };
        Ok(FitOutputs {
            figures,
            outliers,
            outlier_limit_m: outlier_limit,
        })
    }

    /// The tolerance of what the run decides: `--tolerance`'s, else the
    /// data's ([`crate::sweep::accuracy`]). After a first pass at the
    /// scouting tolerance, the candidates the answer depends on are
    /// re-run at it, replacing their results.
    fn choose_accuracy(
        &self,
        results: &mut [CandidateResult],
        hooks: Hooks<'_>,
    ) -> Result<Option<Chosen>, WorkflowError> {
        if let Some(t) = self.request.tolerance_m {
            return Ok(Some(Chosen::given(t)));
        }
        let observations = self.plan.coverage.observations();
        let Some(scout_tolerance_m) = self.plan.scout_tolerance_m else {
            return Ok(summarize(&self.request.grid, results, observations)
                .map(|s| Chosen::from_summary(&s, observations)));
        };
        if self.request.shard.is_some() {
            // `summarize` confirms the merged parts: a shard's best is
            // only its part's.
            return Ok(None);
        }
        confirm_near_best(
            &self.request.grid,
            results,
            ConfirmRun {
                measured: &self.measured,
                base: &self.request.base,
                scenario: &self.scenario,
                observations,
                scout_tolerance_m,
            },
            hooks.cancel,
        )
        .map_err(|e| match e {
            WorkflowError::Interrupted(why) => WorkflowError::Interrupted(format!(
                "{why}: the sweep is saved in {}; run the same command with --resume to finish",
                self.plan
                    .table_path
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(CHUNKS_DIR)
                    .display()
            )),
            e => e,
        })
    }

    fn run_chunk(
        &self,
        chunk: &[Candidate],
        report: &(dyn Fn(u64, u64) + Sync),
        hooks: Hooks<'_>,
    ) -> Result<Vec<CandidateResult>, WorkflowError> {
        run(
            &self.engine,
            chunk,
            &self.measured,
            &self.request.base,
            &self.scenario,
            self.request.grid.release_axis(),
            RunHooks {
                progress: Some(report),
                cancel: hooks.cancel,
            },
        )
        .map_err(batch(match self.engine.gpu() {
            Some(_) => "GPU sweep failed",
            None => "sweep failed",
        }))
    }

    /// The validation against the f64 reference solver, when the sweep ran
    /// on anything else; its reference runs give the best fit.
    fn validate(
        &mut self,
        summary: Option<&Summary>,
    ) -> Result<(Option<Validation>, Option<SimulationOutput>), WorkflowError> {
        let request = &self.request;
        let engine = self.plan.engine;
        let Some(s) = summary else {
            return Ok((None, None));
        };
        if (!engine.is_gpu() && engine.solver() == SolverKind::Reference) || request.validate == 0 {
            return Ok((None, None));
        }
        let rerun =
            |params: &TetherParams, scenario: &Scenario| self.engine.simulate(scenario, params);
        let reference = validation_reference(&engine);
        let (v, references) = validate(
            &pick(s, request.validate),
            (&request.base, &self.scenario, &self.measured),
            reference.as_ref(),
            &rerun,
            request.validate_marker_tolerance_m,
            request.validate_j_e_tolerance,
        )
        .map_err(batch("validation run failed"))?;
        self.metadata.insert(metadata::VALIDATION.into(), json(&v));
        // At the GPU's loose sweep tolerance, the reference runs are not
        // the best fit's (which runs at the data's).
        let best = references
            .into_iter()
            .next()
            .filter(|_| !engine.is_gpu() || engine.solver() != SolverKind::Reference);
        Ok((Some(v), best))
    }
}

/// The settings of the GPU's reference solver, which [`validate`]
/// compares with the CPU's at the same settings; None for a fixed-step
/// engine.
pub(super) fn validation_reference(engine: &EngineKind) -> Option<SolverSettings> {
    match engine {
        EngineKind::GpuAdaptive { reference, .. } => Some(SolverSettings {
            kind: SolverKind::Reference,
            step_s: None,
            reference: *reference,
        }),
        _ => None,
    }
}

/// What a first pass's confirmation runs: one film's experiment on the
/// reference solver.
pub(super) struct ConfirmRun<'a> {
    pub measured: &'a MeasuredTrack,
    pub base: &'a TetherParams,
    pub scenario: &'a Scenario,
    pub observations: usize,
    pub scout_tolerance_m: f64,
}

/// The data's tolerance, chosen from a first pass's `results` (in the
/// grid's order) at `run.scout_tolerance_m`, with the candidates near the
/// best and each n's best re-run at it in place ([`confirm`]): a whole
/// run's, and `summarize`'s of the merged parts, so both end with the
/// same table. None: no candidate has a J_e.
pub(super) fn confirm_near_best(
    grid: &Grid,
    results: &mut [CandidateResult],
    run_on: ConfirmRun<'_>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<Chosen>, WorkflowError> {
    let rerun = |candidates: &[Candidate], tolerance_m: f64| {
        run(
            &Engine::cpu(SolverSettings::reference_at(tolerance_m)),
            candidates,
            run_on.measured,
            run_on.base,
            run_on.scenario,
            grid.release_axis(),
            RunHooks {
                progress: None,
                cancel,
            },
        )
    };
    let confirmation = confirm(
        grid,
        results,
        run_on.observations,
        run_on.scout_tolerance_m,
        rerun,
    )
    .map_err(batch("re-running the candidates near the best"))?;
    if results.iter().any(|r| r.status == RunStatus::Cancelled) {
        return Err(WorkflowError::Interrupted(
            "interrupted while re-running the candidates near the best at the data's tolerance"
                .into(),
        ));
    }
    Ok(confirmation.map(|c| Chosen::from_data(c.accuracy, Some(c))))
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
    .map_err(super::solver("refining the best candidate"))?;
    if tightened.is_some() {
        *chosen = tightened;
    }
    Ok(refined)
}

/// The best candidate on the f64 reference solver: the best fit's track.
pub fn best_fit_run(
    s: &Summary,
    base: &TetherParams,
    scenario: &Scenario,
    settings: &SolverSettings,
) -> Result<SimulationOutput, WorkflowError> {
    let (tether, scenario) = s.best.candidate.experiment(base, scenario);
    simulate(&scenario, &tether, settings)
        .map_err(super::solver("best-fit run on the reference solver failed"))
}

/// The best fit, with the refined optimum's track beside it when refined.
pub fn best_fit_with_refined(
    fit: BestFit,
    s: &Summary,
    refined: Option<&Refined>,
    base: &TetherParams,
    scenario: &Scenario,
    settings: &SolverSettings,
) -> Result<BestFit, WorkflowError> {
    let Some(r) = refined else {
        return Ok(fit);
    };
    let (tether, scenario) = r
        .candidate(&s.best.candidate, None)
        .experiment(base, scenario);
    let track = simulate(&scenario, &tether, settings)
        .map_err(super::solver(
            "refined-fit run on the reference solver failed",
        ))?
        .track;
    Ok(fit.with_refined(&track))
}

/// Why the best fit is no fit of this experiment, when it misses the data
/// by more than [`Plausibility::FIT_WARNING`] of the tether's length (RMS
/// a coordinate).
pub fn fit_warning(
    summary: &Summary,
    refined: Option<&Refined>,
    base: &TetherParams,
) -> Option<String> {
    let length_m = best_length_m(summary, base);
    let sigma = fit_sigma_m(summary, refined);
    (sigma > Plausibility::FIT_WARNING * length_m).then(|| {
        format!(
            "the best candidate misses the data by σ ≈ {sigma:.4} m RMS a coordinate, more than {} % of the tether's {length_m} m: the data may not be this experiment (units, axes, length, release, markers)",
            100.0 * Plausibility::FIT_WARNING
        )
    })
}

/// The best candidate's own length where the grid sweeps it \[m\].
pub(super) fn best_length_m(summary: &Summary, base: &TetherParams) -> f64 {
    summary
        .best
        .candidate
        .value(Axis::Parameter(crate::sweep::Parameter::LengthM))
        .unwrap_or(base.length_m)
}

/// The fit's noise level σ of one coordinate \[m\]: the refined optimum's
/// where there is one, else the grid best's.
pub fn fit_sigma_m(summary: &Summary, refined: Option<&Refined>) -> f64 {
    refined.map_or(summary.confidence.sigma2_m2.sqrt(), |r| r.sigma_m)
}

/// The goodness-of-fit test and the run's warning (the 5 %-of-length rule
/// first, plainly not the experiment, then the fit against the noise),
/// recorded in `metadata`; nothing without a summary.
pub fn judge_fit(
    metadata: &mut Metadata,
    summary: Option<&Summary>,
    refined: Option<&Refined>,
    noise: Option<NoiseEstimate>,
    base: &TetherParams,
) -> (Option<GoodnessOfFit>, Option<String>) {
    let Some(summary) = summary else {
        return (None, None);
    };
    let goodness = noise.map(|noise| {
        GoodnessOfFit::test(
            fit_sigma_m(summary, refined),
            noise,
            best_length_m(summary, base),
        )
    });
    let warning = fit_warning(summary, refined, base)
        .or_else(|| goodness.as_ref().and_then(GoodnessOfFit::warning));
    record_judgement(metadata, goodness.as_ref(), warning.as_ref());
    (goodness, warning)
}

/// Records the test (a single film's, or a joint run's list of films')
/// and the warning in the tables' metadata.
pub fn record_judgement<T: serde::Serialize>(
    metadata: &mut Metadata,
    goodness: Option<&T>,
    warning: Option<&String>,
) {
    if let Some(g) = goodness {
        metadata.insert(metadata::GOODNESS_OF_FIT.into(), json(g));
    }
    if let Some(w) = warning {
        metadata.insert(metadata::PLAUSIBILITY.into(), w.clone());
    }
}

/// Does the fit explain the data? Its σ (the RMS misfit of one
/// coordinate) against the film's own noise σ₀, found before any fit: a
/// model that explains the film leaves residuals of the noise's size, so
/// σ/σ₀ ≈ 1 (0.86–1.07 on the shipped films, whose noise estimates run
/// 5–20 % high or low). A ratio above [`Self::RATIO_LIMIT`] means a misfit
/// of √(5² − 1) ≈ 4.9 σ₀ beyond the noise, which no noise explains:
/// measured, a tether 8 % too long gives 11, a release one frame late 28,
/// two lost-marker codes among 1,100 samples 43, the paper's drop fitted
/// at n = 5 against a truth at n = 80 with 0.1 mm of noise 5.3. A mesh a
/// few times coarser than the data need is not refused: n = 3 and 4 on
/// that drop with 0.5 mm give 4.1–4.2, n = 5 2.4 (docs/identify.md has
/// the table). Misfits under [`Self::FLOOR_OF_LENGTH`] of the length pass
/// whatever the ratio: a noiseless synthetic film's estimate can be
/// micrometres, and a mesh's discretization is then all of its misfit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoodnessOfFit {
    /// \[m\], one coordinate.
    pub fit_sigma_m: f64,
    pub noise: NoiseEstimate,
    /// fit_sigma_m / noise.sigma_m.
    pub ratio: f64,
    pub ratio_limit: f64,
    /// \[m\]: [`Self::FLOOR_OF_LENGTH`] of the tether's length.
    pub floor_m: f64,
    /// The verdict: the ratio within its limit, or the misfit under the
    /// floor.
    pub explains: bool,
}

impl GoodnessOfFit {
    pub const RATIO_LIMIT: f64 = 5.0;
    pub const FLOOR_OF_LENGTH: f64 = 1e-3;

    pub fn test(fit_sigma_m: f64, noise: NoiseEstimate, length_m: f64) -> Self {
        let ratio = fit_sigma_m / noise.sigma_m;
        let floor_m = Self::FLOOR_OF_LENGTH * length_m;
        Self {
            fit_sigma_m,
            noise,
            ratio,
            ratio_limit: Self::RATIO_LIMIT,
            floor_m,
            // NaN (a zero noise and a zero misfit) explains: both say
            // nothing is left.
            explains: !(ratio > Self::RATIO_LIMIT && fit_sigma_m > floor_m),
        }
    }

    /// The warning when the fit does not explain the data.
    pub fn warning(&self) -> Option<String> {
        (!self.explains).then(|| {
            format!(
                "the best fit misses the data by σ ≈ {:.3} mm RMS a coordinate, {:.1}× the film's noise of {:.3} mm ({}); beyond {}× no noise explains it: the model is not this film's experiment. Check the tether's length and parameters, the clock and the release time, the camera (unit, scale, y axis, pin), the markers' arc lengths and any samples listed far from the fit, and the mesh (n)",
                1e3 * self.fit_sigma_m,
                self.ratio,
                1e3 * self.noise.sigma_m,
                self.noise.how(),
                self.ratio_limit
            )
        })
    }
}

/// The error a run ends with when `fit_warning` is set and not allowed:
/// exit code 4, the results in `out` kept and marked.
pub fn implausible(
    fit_warning: Option<&String>,
    allowed: bool,
    out: &Path,
) -> Result<(), WorkflowError> {
    match fit_warning {
        Some(warning) if !allowed => Err(WorkflowError::Implausible(format!(
            "implausible: {warning}. The results are written to {} and marked so in their metadata ({}); --allow-implausible accepts them",
            out.display(),
            metadata::PLAUSIBILITY
        ))),
        _ => Ok(()),
    }
}

/// A measured sample far from the best fit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outlier {
    /// On the file's clock \[s\], and in the model's marker numbering.
    pub time_s: f64,
    pub marker: usize,
    /// As the file writes them (`[camera] time_unit` and `first_marker`),
    /// to find the sample in the tracker.
    pub t_file: f64,
    pub marker_file: usize,
    /// Its distance from the fit \[m\].
    pub distance_m: f64,
}

/// How many noise levels σ (of one coordinate) a sample's distance from the
/// best fit may reach before it is listed: Gaussian marker noise exceeds
/// 5σ in distance with probability e^(−12.5) ≈ 4e-6 a sample, so a
/// thousand-sample film lists none by chance, while a tracker's lost-marker
/// code written as a position, or a jump to another marker, stands out.
pub const OUTLIER_SIGMAS: f64 = 5.0;
/// …and at least this fraction of the tether's length: where the data fit
/// to a fraction of a micrometre (a synthetic film without noise), the
/// model's own discretization is not Gaussian and passes 5σ; a lost marker
/// or a jump is millimetres to decimetres.
pub const OUTLIER_FLOOR_OF_LENGTH: f64 = 1e-3;

/// The distance \[m\] beyond which a sample is listed: [`OUTLIER_SIGMAS`] σ
/// and [`OUTLIER_FLOOR_OF_LENGTH`] of the tether's length.
pub fn outlier_limit_m(sigma_m: f64, length_m: f64) -> f64 {
    (OUTLIER_SIGMAS * sigma_m).max(OUTLIER_FLOOR_OF_LENGTH * length_m)
}

/// The samples of `fit` (the refined fit where there is one) farther than
/// `limit_m` from it, farthest first.
pub fn find_outliers(fit: &BestFit, limit_m: f64, camera: &Camera) -> Vec<Outlier> {
    let fitted = fit.refined_m.as_ref().unwrap_or(&fit.fitted_m);
    let mut outliers: Vec<Outlier> = (0..fit.times_s.len())
        .filter_map(|r| {
            let (m, f) = (fit.measured_m[r], fitted[r]);
            let distance_m = (m[0] - f[0]).hypot(m[1] - f[1]);
            (distance_m > limit_m).then_some(Outlier {
                time_s: fit.times_s[r],
                marker: fit.markers[r],
                t_file: camera.file_time(fit.times_s[r]),
                marker_file: fit.markers[r] + camera.first_marker,
                distance_m,
            })
        })
        .collect();
    outliers.sort_by(|a, b| b.distance_m.total_cmp(&a.distance_m));
    outliers
}

/// Checks a finished identification's outcome: every candidate diverged,
/// the validation failed, or (unless allowed) the best fit misses the data
/// by more than [`Plausibility::FIT_WARNING`] of the tether's length, is an
/// error after the files are written.
pub fn check_outcome(report: &IdentifyReport) -> Result<(), WorkflowError> {
    if report.summary.is_none() {
        return Err(WorkflowError::Failed(format!(
            "every candidate diverged: no J_e to compare (results in {})",
            report.table_path.display()
        )));
    }
    if let Some(v) = report.validation.as_ref().filter(|v| !v.passed) {
        let engine = report.plan.engine;
        return Err(WorkflowError::Failed(format!(
            "validation failed: the sweep's engine deviates from the f64 reference solver by up to {:.2e} m at the markers and {:.2e} in J_e (tolerances {:.0e} m, {:.0e}); details in the metadata key {} of {}{}",
            v.max_marker_deviation_m,
            v.max_j_e_relative_deviation,
            v.marker_tolerance_m,
            v.j_e_tolerance,
            metadata::VALIDATION,
            report.table_path.display(),
            if engine.is_gpu() && engine.precision() == Precision::F32 {
                ". Try --precision f64, which agrees with the CPU explicit solver to 1e-14 m"
            } else {
                ""
            }
        )));
    }
    implausible(
        report.fit_warning.as_ref(),
        report.implausible_allowed,
        &report.out,
    )
}

/// The tether every candidate shares, as metadata: every field the grid
/// sweeps (n, D, C_D and any parameter axis over the tether) null rather
/// than the base's value, which no candidate has.
pub fn sweep_tether_json(base: &TetherParams, grid: &Grid) -> String {
    let mut value = serde_json::to_value(base).expect("plain data serializes");
    let fields = value.as_object_mut().expect("a struct");
    for axis in grid.axes() {
        if let Some(field) = fields.get_mut(axis.column()) {
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
    fn outliers_are_named_as_the_file_has_them() {
        let fit = BestFit {
            times_s: vec![7.5, 7.5, 7.6],
            markers: vec![0, 3, 3],
            measured_m: vec![[0.0, 0.0], [0.2, -0.3], [0.0, 0.0]],
            fitted_m: vec![[0.0, 0.0], [0.0, -0.3], [0.001, 0.0]],
            refined_m: None,
        };
        let camera = Camera {
            time_unit: crate::camera::TimeUnit::Ms,
            first_marker: 1,
            ..Camera::default()
        };
        let outliers = find_outliers(&fit, 0.01, &camera);
        assert_eq!(outliers.len(), 1);
        let o = &outliers[0];
        assert_eq!((o.time_s, o.marker), (7.5, 3));
        assert_eq!((o.t_file, o.marker_file), (7500.0, 4));
        assert!((o.distance_m - 0.2).abs() < 1e-15);
        let plain = find_outliers(&fit, 0.01, &Camera::default());
        assert_eq!((plain[0].t_file, plain[0].marker_file), (7.5, 3));
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
