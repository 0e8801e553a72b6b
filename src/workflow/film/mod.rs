//! A film of an identification: the measured track as the user gave it
//! ([`Film`]), read through its camera and checked against its experiment
//! and the grid it is swept over ([`check`]): its clock and declared
//! frames, its markers, every axis value, and its first frame against the
//! initial shape. `identify`, `design` and the batched objective check a
//! film here, and nowhere else.
//!
//! The checks live beside it: the experiment and its frames
//! (`experiment.rs`), the first frame against the initial shape
//! (`start.rs`), the pin taken from the film (`pin.rs`).

mod experiment;
mod pin;
mod start;

pub use pin::{PIN_WANDER_OF_LENGTH, TrackedPin, take_pin_from_film};
pub use start::{Plausibility, StartOffset, start_offset};

use super::{WorkflowError, usage};
use crate::camera::Camera;
use crate::error::InputError;
use crate::io::IoError;
use crate::io::config::FilmConfig;
use crate::io::track::{LoadedFilm, Measured};
use crate::model::TetherParams;
use crate::scenario::{DeclaredFrames, Scenario};
use crate::sweep::{AxisValues, Coverage, Grid, Study, check_coverage};
use crate::track::{MeasuredTrack, NoiseEstimate};
use experiment::{check_parameter_axes, experiment};
use start::checked_start;

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
