//! A film of an identification: the measured track as the user gave it
//! ([`Film`]), read through its camera and checked against its experiment
//! and the grid it is swept over ([`check`]): its clock and declared
//! frames, its markers, every axis value, and its first frame against the
//! initial shape. `identify`, `design` and the batched objective check a
//! film here, and nowhere else.

use super::{WorkflowError, usage};
use crate::camera::Camera;
use crate::error::{InputError, decimal};
use crate::io::IoError;
use crate::io::config::FilmConfig;
use crate::io::track::{LoadedFilm, Measured};
use crate::model::TetherParams;
use crate::scenario::{DeclaredFrames, Frames, Scenario, ScenarioKind, median_interval_s};
use crate::sweep::{Axis, AxisValues, Coverage, Grid, Parameter, Study, check_coverage};

/// The release-time axis.
const RELEASE: Axis = Axis::Parameter(Parameter::ReleaseTimeS);
use crate::track::{MeasuredTrack, NoiseEstimate};

/// One film of an identification, as the user gave it.
#[derive(Debug, Clone)]
pub struct Film {
    /// Its name: the config's file stem, or `name = "…"` in its
    /// `[settings]`; letters, digits, `_` and `-` where several films name
    /// columns and files by it.
    pub name: String,
    /// The measured track: a Parquet or CSV file, or a table in memory,
    /// long (t, marker, x, y) or wide (a time column, x and y per marker),
    /// read through `camera`.
    pub measured: Measured,
    /// The filmed drop (release angle, pin, frame interval, marker arc
    /// lengths), from a config; None: docs/model.md §4.1's. Whichever it
    /// is, its duration becomes the measured file's last frame, and its
    /// markers the file's `s` column where the file has one.
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
    /// Axes over its own parameters where several films share a tether
    /// (`FILM.release_time_s`, …); a single film's axes are all the grid's.
    pub own: Vec<AxisValues>,
}

impl Film {
    /// The film in `measured` (a file's path, or [`Measured::Table`]), in
    /// the model's frame, of docs/model.md §4.1's drop, named after the
    /// file or the table.
    pub fn new(measured: impl Into<Measured>) -> Self {
        let measured: Measured = measured.into();
        Self {
            name: match &measured {
                Measured::File(path) => path
                    .file_stem()
                    .map_or_else(|| "film".into(), |s| s.to_string_lossy().into_owned()),
                Measured::Table { name, .. } => name.clone(),
            },
            measured,
            scenario: None,
            declared_frames: DeclaredFrames::default(),
            camera: Camera::default(),
            marker_arc_lengths_m: None,
            own: Vec::new(),
        }
    }

    /// A config's film ([`FilmConfig`]: its measured file, experiment,
    /// camera and declared frames; its tether is the caller's). A config
    /// that names no measured file is refused.
    pub fn of_config(config: &FilmConfig) -> Result<Self, WorkflowError> {
        let Some(measured) = &config.measured else {
            return Err(InputError::new(
                "measured",
                "not given",
                format!(
                    "the film's file: measured = \"FILE\" in [settings] of {}'s config",
                    config.name
                ),
            )
            .into());
        };
        Ok(Self {
            name: config.name.clone(),
            scenario: Some(config.scenario.clone()),
            camera: config.camera.clone(),
            declared_frames: config.declared_frames.clone(),
            marker_arc_lengths_m: config.marker_arc_lengths_m.clone(),
            ..Self::new(measured.clone())
        })
    }
}

/// A film with what it is checked against: the grid it is swept over (the
/// study's axes and its own), the tether, and whether a first frame far
/// from the initial shape is allowed.
#[derive(Debug, Clone, Copy)]
pub struct FilmContext<'a> {
    pub film: &'a Film,
    pub grid: &'a Grid,
    pub base: &'a TetherParams,
    pub allow_implausible: bool,
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
/// is written into the film's camera ([`check`]), as if the user had typed
/// it, so that every table, the best fit's file-frame columns and
/// `summarize` use it. Refused, naming `[camera] pin`, when the marker wanders more
/// than [`PIN_WANDER_OF_LENGTH`] of the length. Nothing without a camera
/// table (the file is then in the model's frame), with a pin given, or
/// with a pin axis.
pub fn take_pin_from_film(
    context: &FilmContext<'_>,
    loaded: &LoadedFilm,
) -> Result<Option<TrackedPin>, WorkflowError> {
    let pin_axis = context.grid.parameters().any(|(p, _)| {
        matches!(
            p,
            crate::sweep::Parameter::PinXM | crate::sweep::Parameter::PinYM
        )
    });
    let camera = &context.film.camera;
    if camera.is_default() || camera.pin.is_some() || pin_axis {
        return Ok(None);
    }
    camera.validate()?;
    let measured = loaded
        .read(camera, [0.0, 0.0])
        .map_err(measured_track_error)?;
    let first_arc_m = context
        .film
        .marker_arc_lengths_m
        .as_ref()
        .or(measured.marker_arc_lengths_m.as_ref())
        .and_then(|a| a.first().copied())
        .unwrap_or(0.0);
    let Some((place_m, wander_m)) = measured.resting_place(0).filter(|_| first_arc_m == 0.0) else {
        return Ok(None);
    };
    let length_m = context.base.length_m;
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
        grid.values(crate::sweep::Axis::Parameter(p))
            .map_or_else(|| vec![p.get(base, scenario)], <[f64]>::to_vec)
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

/// The drop the candidates are compared in: the film's scenario (or
/// the paper's), with the measured file's markers and its last frame as the
/// duration.
fn experiment(
    context: &FilmContext<'_>,
    measured: &MeasuredTrack,
) -> Result<Scenario, WorkflowError> {
    let mut scenario = context
        .film
        .scenario
        .clone()
        .unwrap_or_else(|| Scenario::new(ScenarioKind::Drop, context.base.length_m));
    if scenario.kind() != ScenarioKind::Drop {
        return Err(InputError::new(
            "scenario",
            format!("{:?}", scenario.kind()).to_lowercase(),
            "drop: identify compares a released tether's drop",
        )
        .into());
    }
    let file_arcs = measured.marker_arc_lengths_m.as_ref();
    match (&context.film.marker_arc_lengths_m, file_arcs) {
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
            let length_m = context.base.length_m;
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
    check_clock(&scenario, context.grid, &times)?;
    check_declared_frames(
        &context.film.declared_frames,
        &times,
        &scenario,
        context.grid,
    )?;
    check_marker_count(
        measured,
        &scenario,
        context.film.marker_arc_lengths_m.is_some(),
    )?;
    scenario.frames = Frames::film(times);
    scenario.validate(context.base.length_m)?;
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
        let releases = match grid.values(RELEASE) {
            Some(values) => values.to_vec(),
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
    let has_release_axis = grid.has(RELEASE);
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
    for (parameter, values) in grid.parameters() {
        for &value in values {
            let (mut tether, mut experiment) = (base.clone(), scenario.clone());
            parameter.set(value, &mut tether, &mut experiment);
            tether
                .validate()
                .and_then(|()| experiment.validate(tether.length_m))
                .map_err(|e| {
                    InputError::new(
                        "axis",
                        format!("{parameter}={}", crate::error::number(value)),
                        format!("values that make a valid experiment: {e}"),
                    )
                })?;
        }
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
    context: &FilmContext<'_>,
    measured: &MeasuredTrack,
    scenario: &Scenario,
) -> Result<Option<StartOffset>, WorkflowError> {
    let start = start_offset_over_axes(measured, scenario, context.base, context.grid)?;
    let length_m = context.base.length_m;
    if let Some(offset) = start
        && offset.rms_m > Plausibility::START_ERROR * length_m
        && !context.allow_implausible
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

/// The measured film in the model's frame, through the film's camera.
/// A camera that says where it saw the pin fixes the pin: an axis over the
/// pin would move the model under the data.
pub fn read(
    context: &FilmContext<'_>,
    loaded: &LoadedFilm,
) -> Result<MeasuredTrack, WorkflowError> {
    let camera = &context.film.camera;
    camera.validate()?;
    if camera.pin.is_some()
        && let Some((pin, _)) = context.grid.parameters().find(|(p, _)| {
            matches!(
                p,
                crate::sweep::Parameter::PinXM | crate::sweep::Parameter::PinYM
            )
        })
    {
        return Err(InputError::new(
            "axis",
            pin.to_string(),
            "no pin axis beside [camera] pin: the camera's pin is where the model's pin is (pin_m); leave one out",
        )
        .into());
    }
    let model_pin_m = context
        .film
        .scenario
        .as_ref()
        .map_or([0.0, 0.0], Scenario::pin_m);
    loaded
        .read(camera, model_pin_m)
        .map_err(measured_track_error)
}

/// The film read once ([`Measured::load`]): its bytes hashed and parsed
/// from one buffer, read through each camera from there.
pub fn load(film: &Film) -> Result<LoadedFilm, WorkflowError> {
    film.measured.load().map_err(measured_track_error)
}

/// An error reading the measured track: the user's file or table.
fn measured_track_error(e: IoError) -> WorkflowError {
    WorkflowError::Usage(format!("the measured track: {e}"))
}

/// A film's noise: `[camera] noise` where declared, else its own estimate.
pub fn film_noise(camera: &Camera, measured: &MeasuredTrack) -> Option<NoiseEstimate> {
    camera
        .declared_noise_m()
        .map(NoiseEstimate::declared)
        .or_else(|| measured.noise_estimate())
}

/// A film read and checked against its experiment and its grid.
#[derive(Debug, Clone)]
pub struct CheckedFilm {
    /// As the user gave it, with the pin taken from the film where its
    /// camera gives none ([`take_pin_from_film`]).
    pub film: Film,
    /// The grid it is swept over: the study's axes and its own.
    pub grid: Grid,
    pub tracked_pin: Option<TrackedPin>,
    pub measured: MeasuredTrack,
    pub measured_sha256: String,
    /// The experiment compared: the film's, with the file's frames and
    /// markers.
    pub scenario: Scenario,
    pub coverage: Coverage,
    pub unused_rows: usize,
    pub start: Option<StartOffset>,
    /// Its noise: `[camera] noise`, or the film's own estimate.
    pub noise: Option<NoiseEstimate>,
}

impl CheckedFilm {
    /// What its candidates are scored against, `base` giving every
    /// parameter the grid does not vary.
    pub fn study<'a>(&'a self, base: &'a TetherParams) -> Study<'a> {
        Study {
            measured: &self.measured,
            base,
            scenario: &self.scenario,
        }
    }
}

/// Reads `film` through its camera (its pin taken from the film where the
/// camera gives none) and checks it against its experiment and `grid`
/// (the study's axes and its own): the frames, the markers, the axes'
/// values and the start.
pub fn check(
    film: &Film,
    grid: &Grid,
    base: &TetherParams,
    allow_implausible: bool,
) -> Result<CheckedFilm, WorkflowError> {
    let mut film = film.clone();
    let loaded = load(&film)?;
    let tracked_pin = take_pin_from_film(
        &FilmContext {
            film: &film,
            grid,
            base,
            allow_implausible,
        },
        &loaded,
    )?;
    if let Some(pin) = &tracked_pin {
        film.camera.pin = Some(pin.pin_file);
    }
    let context = FilmContext {
        film: &film,
        grid,
        base,
        allow_implausible,
    };
    let measured = read(&context, &loaded)?;
    let checked = check_measured(&context, measured, loaded.sha256)?;
    Ok(CheckedFilm {
        tracked_pin,
        ..checked
    })
}

/// [`check`]'s checks of a film already read ([`read`]), its
/// camera as given.
pub fn check_measured(
    context: &FilmContext<'_>,
    measured: MeasuredTrack,
    measured_sha256: String,
) -> Result<CheckedFilm, WorkflowError> {
    let scenario = experiment(context, &measured)?;
    check_parameter_axes(context.grid, context.base, &scenario)?;
    let coverage = check_coverage(&measured, &scenario).map_err(usage)?;
    let unused_rows = unused_rows(&measured, &scenario, &coverage);
    let noise = film_noise(&context.film.camera, &measured);
    // Before the start check: a film in another unit than declared fails
    // both, and this one names the unit and the scale that would fit.
    if !context.allow_implausible {
        super::spacing::check(
            &measured,
            &scenario.marker_arc_lengths_m,
            &context.film.camera,
            noise.map(|n| n.sigma_m),
            context.base.length_m,
            &context.film.name,
        )?;
    }
    let start = checked_start(context, &measured, &scenario)?;
    Ok(CheckedFilm {
        film: context.film.clone(),
        grid: context.grid.clone(),
        tracked_pin: None,
        measured,
        measured_sha256,
        scenario,
        coverage,
        unused_rows,
        start,
        noise,
    })
}
