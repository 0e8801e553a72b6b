//! Simulation configs: a TOML file, command-line flags overriding it.
//!
//! ```toml
//! scenario = "swingup"        # drop | swingup
//! solver = "explicit"         # explicit | reference
//! # step_s = 1e-5             # explicit step; default: chosen from the model
//! # tolerance_m = 1e-9        # reference solver's local error tolerance
//!
//! [tether]                    # any field of TetherParams; defaults: docs/model.md §1
//! elements = 10
//! damping_pa_s = 2000.0
//! drag_coefficient = 0.8
//! # tip_mass_kg defaults to 0 for the drop and 0.021 for the swing-up
//!
//! [settings]                  # scenario settings; defaults: docs/model.md §4
//! duration_s = 3.0
//! # release_time_s = 0.02     # drop: the release on the frames' clock
//! # frame_times_s = [0.0, 0.0333, 0.0667]   # drop: frames at these times
//! winch_periods_s = [0.5, 0.4, 0.6]
//! winch_amplitude_m = 0.2
//!
//! [camera]                    # a measured file's frame and clock (crate::camera)
//! # unit = "px"               # m | mm | px
//! # metres_per_unit = 5e-4    # px only
//! # y_axis = "down"           # up | down
//! # down = [0.026, 1.0]       # gravity in the file's coordinates
//! # pin = [640.0, 120.0]      # the pin where the tracker saw it
//! # time_unit = "s"           # s | ms | frame (with frames_per_second)
//! # lost = [0.0, 0.0]         # a tracker's lost-marker code
//! # first_marker = 1          # the file's number for the pin's marker
//! ```
//!
//! Both sources become TOML tables; flags replace the file's keys, and the
//! merged table is deserialized once, so the file and the flags are checked
//! by the same code and name fields the same way.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;
use toml::{Table, Value};

use crate::camera::Camera;
use crate::error::InputError;
use crate::io::track::Measured;
use crate::model::TetherParams;
use crate::scenario::{
    DeclaredFrames, Experiment, Scenario, ScenarioKind, SolverSettings, WinchMotion,
};
use crate::solver::{ImplicitMethod, ReferenceOptions, SolverKind};

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config {path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error(
        "config {path} is larger than the {} MiB a config may be (a million frame times take 12): is it the config?",
        MAX_CONFIG_BYTES >> 20
    )]
    TooLarge { path: PathBuf },
    #[error("invalid configuration: {0}")]
    Schema(String),
    #[error(transparent)]
    Input(#[from] InputError),
    /// A film's own key (`name`, `measured`) that is not text; the message
    /// names the key, its value and the config.
    #[error("{0}")]
    FilmKey(String),
    /// A key outside the experiment's tables in a config of a job that
    /// chooses its own solver (identify, design): `solver` names where it
    /// is set instead.
    #[error(
        "{path}: `{key}` is not read by {job}: the config gives the experiment ({}), and {solver} the solver",
        EXPERIMENT_KEYS.join(", ")
    )]
    NotExperiment {
        path: PathBuf,
        key: String,
        job: &'static str,
        solver: String,
    },
}

/// A config's keys that describe the experiment; the rest (`solver`,
/// `tolerance_m`, `implicit_method`, …) describe how `simulate` solves it.
pub const EXPERIMENT_KEYS: [&str; 4] = ["scenario", "tether", "settings", "camera"];

/// Refuses a key of `table` (the config at `path`) that is not the
/// experiment's, for a `job` whose solver is set by `solver` (its flag or
/// keyword), not by the config: read and ignored, it would be a setting
/// the user believes in and the job does not use.
pub fn experiment_only(
    table: &Table,
    path: &Path,
    job: &'static str,
    solver: &str,
) -> Result<(), ConfigError> {
    match table
        .keys()
        .find(|k| !EXPERIMENT_KEYS.contains(&k.as_str()))
    {
        Some(key) => Err(ConfigError::NotExperiment {
            path: path.to_owned(),
            key: key.clone(),
            job,
            solver: solver.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Scenario settings; each overrides the scenario's default (docs/model.md §4).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioSettings {
    duration_s: Option<f64>,
    frame_interval_s: Option<f64>,
    marker_arc_lengths_m: Option<Vec<f64>>,
    pin_m: Option<[f64; 2]>,
    initial_angle_deg: Option<f64>,
    release_time_s: Option<f64>,
    frame_times_s: Option<Vec<f64>>,
    winch_periods_s: Option<Vec<f64>>,
    winch_amplitude_m: Option<f64>,
    winch_waypoints_m: Option<Vec<f64>>,
    objective_interval_s: Option<f64>,
    objective_weights: Option<[f64; 2]>,
    /// A film's name and its measured file: identify's and design's (they
    /// take them out before the rest is read); accepted here so that the
    /// config that names a film also makes it (`dataset synth`) and
    /// simulates it.
    #[allow(dead_code)]
    name: Option<String>,
    #[allow(dead_code)]
    measured: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default = "default_scenario")]
    scenario: ScenarioKind,
    #[serde(default = "default_solver")]
    solver: SolverKind,
    step_s: Option<f64>,
    tolerance_m: Option<f64>,
    implicit_method: Option<ImplicitMethod>,
    #[serde(default)]
    tether: Table,
    #[serde(default)]
    settings: Table,
    #[serde(default)]
    camera: Table,
}

fn default_scenario() -> ScenarioKind {
    ScenarioKind::Drop
}

fn default_solver() -> SolverKind {
    SolverKind::Explicit
}

/// A complete, validated simulation request.
#[derive(Debug, Clone)]
pub struct SimulationConfig {
    pub scenario: Scenario,
    pub tether: TetherParams,
    pub solver: SolverSettings,
    /// How a measured file of this experiment is written (`[camera]`).
    pub camera: Camera,
}

/// The largest config read \[bytes\]: a film's frame times, about 12
/// bytes each, fit for a million frames (the most a track may have), and
/// parsing what fits takes under a GB (a 100 MB file took 3–5 GB).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads a config file into a table; a file over [`MAX_CONFIG_BYTES`] is
/// refused before it is parsed (a pipe or device once that much is read).
pub fn read_table(path: &Path) -> Result<Table, ConfigError> {
    use std::io::Read;
    let too_large = || ConfigError::TooLarge {
        path: path.to_owned(),
    };
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > MAX_CONFIG_BYTES) {
        return Err(too_large());
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text))
        .map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    parse_table(&text, path)
}

/// A config's `text` as a table; `path` names it in the message, which
/// shows at most [`crate::error::MAX_ECHOED_CHARS`] of each of its lines.
fn parse_table(text: &str, path: &Path) -> Result<Table, ConfigError> {
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_owned(),
        });
    }
    text.parse::<Table>().map_err(|e| ConfigError::Syntax {
        path: path.to_owned(),
        message: e
            .to_string()
            .lines()
            .map(crate::error::echoed)
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// The config in `path` (none: every default) with `overrides` (keys
/// given elsewhere, e.g. by command-line flags, in the config's layout)
/// merged over it, resolved. An invalid value is named as the user gave
/// it: a key `overrides` set by that key (for the caller to name by its
/// flag), any other by the key and the file (`length_m (in drop.toml)`).
pub fn resolve_file(
    path: Option<&Path>,
    overrides: Table,
) -> Result<SimulationConfig, ConfigError> {
    let table = match path {
        Some(p) => read_table(p)?,
        None => Table::new(),
    };
    resolve_over(table, path, overrides)
}

/// A config's `table` (read from `path`, or given in memory and named so;
/// None: no config) with `overrides` merged over it, resolved, its errors
/// named as [`resolve_file`]'s.
pub fn resolve_over(
    mut table: Table,
    path: Option<&Path>,
    overrides: Table,
) -> Result<SimulationConfig, ConfigError> {
    let given = |key: &str| {
        overrides.contains_key(key)
            || overrides
                .values()
                .filter_map(Value::as_table)
                .any(|t| t.contains_key(key))
    };
    let named = |e: ConfigError| match (e, path) {
        (ConfigError::Input(mut input), Some(p)) if !given(&input.field) => {
            input.field = format!("{} (in {})", input.field, p.display());
            ConfigError::Input(input)
        }
        (e, _) => e,
    };
    merge(&mut table, overrides.clone());
    resolve(table).map_err(named)
}

/// Copies `overrides` into `base`, merging sub-tables key by key.
pub fn merge(base: &mut Table, overrides: Table) {
    for (key, value) in overrides {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

/// Deserializes `table` as section `section`. serde's message for a value of
/// the wrong type does not say which key held it, so on error each key is
/// tried alone (every field of these types has a default) to name it.
fn deserialize_section<T: serde::de::DeserializeOwned>(
    section: &str,
    table: Table,
) -> Result<T, ConfigError> {
    let whole = Value::Table(table.clone()).try_into::<T>();
    whole.map_err(|e| {
        let culprit = table.iter().find(|(key, value)| {
            let mut single = Table::new();
            single.insert((*key).clone(), (*value).clone());
            Value::Table(single).try_into::<T>().is_err()
        });
        ConfigError::Schema(match culprit {
            Some((key, value)) => format!("{section}{key} = {value}: {}", e.message()),
            None => format!("{section}{}", e.message()),
        })
    })
}

/// One measured film's config, as an identification reads it: its
/// experiment, tether and camera, the frames it declares, and the film's
/// own `name` and `measured` file, taken out of `[settings]` (they are the
/// film's, not the experiment's). The scenario's frames are the
/// experiment's defaults until the measured file's replace them; the
/// declared ones are kept to be checked against that file.
#[derive(Debug, Clone)]
pub struct FilmConfig {
    /// `name` in `[settings]`, else the config's file stem.
    pub name: String,
    /// `measured` in `[settings]`, a file relative to the config's
    /// folder; or a table given with the config in memory.
    pub measured: Option<Measured>,
    pub tether: TetherParams,
    pub scenario: Scenario,
    /// The markers' arc lengths, when the config gives them
    /// (`marker_arc_lengths_m`); else the measured file's or the
    /// experiment's default eleven.
    pub marker_arc_lengths_m: Option<Vec<f64>>,
    pub camera: Camera,
    /// The frames the config declares (`duration_s`, `frame_interval_s`,
    /// `frame_times_s`), each to agree with the measured file.
    pub declared_frames: DeclaredFrames,
    /// Whether the config gives `release_time_s` (else the scenario's is
    /// the default, 0 on the file's clock).
    pub release_given: bool,
}

impl FilmConfig {
    /// The config written in `text`, as if at `path`: the path names the
    /// film by default, places its `measured` file, and names the config
    /// in messages.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, ConfigError> {
        Self::from_table(parse_table(text, path)?, path, Table::new())
    }

    /// The config in the file `path`.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        Self::from_table(read_table(path)?, path, Table::new())
    }

    /// The config `table` read from `path`, with `tether` (keys of
    /// `[tether]` given elsewhere, e.g. by command-line flags) replacing
    /// its own.
    pub fn from_table(mut table: Table, path: &Path, tether: Table) -> Result<Self, ConfigError> {
        let settings_key = |key: &str| {
            table
                .get("settings")
                .and_then(Value::as_table)
                .is_some_and(|s| s.contains_key(key))
        };
        let markers_given = settings_key("marker_arc_lengths_m");
        let release_given = settings_key("release_time_s");
        let (name, measured) = film_keys(&mut table, path)?;
        let mut overrides = Table::new();
        overrides.insert("tether".into(), Value::Table(tether));
        merge(&mut table, overrides);
        let (cfg, declared_frames) = resolve_film(table, path)?;
        Ok(Self {
            name,
            measured: measured.map(Measured::File),
            marker_arc_lengths_m: markers_given.then(|| cfg.scenario.marker_arc_lengths_m.clone()),
            tether: cfg.tether,
            scenario: cfg.scenario,
            camera: cfg.camera,
            declared_frames,
            release_given,
        })
    }
}

/// A film's `name` and `measured` file from a config's `[settings]`, taken
/// out of it: the name defaults to the config's file stem, and the file is
/// relative to the config.
pub fn film_keys(table: &mut Table, path: &Path) -> Result<(String, Option<PathBuf>), ConfigError> {
    let settings = table.get_mut("settings").and_then(Value::as_table_mut);
    let (named, measured) = match settings {
        Some(s) => (s.remove("name"), s.remove("measured")),
        None => (None, None),
    };
    let text = |key: &str, value: Option<Value>| -> Result<Option<String>, ConfigError> {
        match value {
            None => Ok(None),
            Some(Value::String(t)) => Ok(Some(t)),
            Some(other) => Err(ConfigError::FilmKey(format!(
                "[settings] {key} = {other} in {}: give it as text, e.g. {key} = \"{}\"",
                path.display(),
                if key == "name" { "steep" } else { "steep.csv" }
            ))),
        }
    };
    let name = text("name", named)?.unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(|| "film".into(), |s| s.to_string_lossy().into_owned())
    });
    let measured = text("measured", measured)?
        .map(|file| lexically_normal(&path.parent().unwrap_or(Path::new("")).join(file)));
    Ok((name, measured))
}

/// `path` with each `dir/..` and `.` taken out by its text (Go's
/// `filepath.Clean`), so that a file named relative to its config reads
/// `datasets/a.csv`, not `examples/../datasets/a.csv`, in messages and
/// metadata.
fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Resolves a merged table into a validated configuration.
pub fn resolve(table: Table) -> Result<SimulationConfig, ConfigError> {
    resolve_frames(table, FramesFrom::Settings).map(|(config, _)| config)
}

/// Resolves the config of a measured film: its frames are the file's, so
/// the frames it declares (those of the config that made the film) are
/// returned to be checked against the file, and the scenario keeps the
/// experiment's default frames meanwhile.
pub fn resolve_film(
    table: Table,
    path: &Path,
) -> Result<(SimulationConfig, DeclaredFrames), ConfigError> {
    let (config, mut declared) = resolve_frames(table, FramesFrom::MeasuredFile)?;
    declared.source = path.display().to_string();
    Ok((config, declared))
}

/// Where a config's frames come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FramesFrom {
    /// Its `[settings]` (with the experiment's defaults).
    Settings,
    /// A measured file's times.
    MeasuredFile,
}

fn resolve_frames(
    table: Table,
    frames_from: FramesFrom,
) -> Result<(SimulationConfig, DeclaredFrames), ConfigError> {
    let file: ConfigFile = deserialize_section("", table)?;
    let mut tether_table = file.tether;
    if !tether_table.contains_key("tip_mass_kg") {
        tether_table.insert(
            "tip_mass_kg".into(),
            Value::Float(Scenario::default_tip_mass_kg(file.scenario)),
        );
    }
    let tether: TetherParams = deserialize_section("[tether] ", tether_table)?;
    tether.validate()?;

    let s: ScenarioSettings = deserialize_section("[settings] ", file.settings)?;
    let declared = s.declared_frames();
    let mut scenario = s.scenario(file.scenario, tether.length_m)?;
    if frames_from == FramesFrom::Settings {
        let release = scenario.release_time_s();
        scenario.frames = declared.frames(&scenario.frames, release)?;
    }
    scenario.validate(tether.length_m)?;

    let camera: Camera = deserialize_section("[camera] ", file.camera)?;
    camera.validate()?;
    if camera.pin.is_some() && file.scenario == ScenarioKind::Swingup {
        return Err(ConfigError::Schema(
            "[camera] pin is the drop's pin seen by the camera; the swing-up's winch moves".into(),
        ));
    }

    let mut reference = ReferenceOptions::default();
    if let Some(tol) = file.tolerance_m {
        crate::solver::reference::check_tolerance_m("tolerance_m", tol)?;
        reference.tolerance_m = tol;
    }
    if let Some(method) = file.implicit_method {
        reference.method = method;
    }
    if let Some(step) = file.step_s {
        crate::scenario::validate_step_for(step, &scenario)?;
    }
    let config = SimulationConfig {
        scenario,
        tether,
        solver: SolverSettings {
            kind: file.solver,
            step_s: file.step_s,
            reference,
        },
        camera,
    };
    Ok((config, declared))
}

impl ScenarioSettings {
    fn declared_frames(&self) -> DeclaredFrames {
        DeclaredFrames {
            duration_s: self.duration_s,
            frame_interval_s: self.frame_interval_s,
            frame_times_s: self.frame_times_s.clone(),
            source: String::new(),
        }
    }

    /// The keys given that only one experiment has, each with its
    /// experiment.
    fn given_experiment_keys(&self) -> Vec<(&'static str, ScenarioKind)> {
        use ScenarioKind::{Drop, Swingup};
        let all = [
            ("initial_angle_deg", Drop, self.initial_angle_deg.is_some()),
            ("release_time_s", Drop, self.release_time_s.is_some()),
            ("frame_times_s", Drop, self.frame_times_s.is_some()),
            ("winch_periods_s", Swingup, self.winch_periods_s.is_some()),
            (
                "winch_amplitude_m",
                Swingup,
                self.winch_amplitude_m.is_some(),
            ),
            (
                "winch_waypoints_m",
                Swingup,
                self.winch_waypoints_m.is_some(),
            ),
            (
                "objective_interval_s",
                Swingup,
                self.objective_interval_s.is_some(),
            ),
            (
                "objective_weights",
                Swingup,
                self.objective_weights.is_some(),
            ),
        ];
        all.into_iter()
            .filter_map(|(key, kind, given)| given.then_some((key, kind)))
            .collect()
    }

    /// The experiment the settings describe, with the experiment's default
    /// frames (the caller sets the frames). A key of the other experiment
    /// is an error: a drop has no winch, a swing-up no release.
    fn scenario(self, kind: ScenarioKind, length_m: f64) -> Result<Scenario, ConfigError> {
        let name = |kind: ScenarioKind| format!("{kind:?}").to_lowercase();
        if let Some((key, other)) = self
            .given_experiment_keys()
            .into_iter()
            .find(|&(_, owner)| owner != kind)
        {
            return Err(ConfigError::Schema(format!(
                "[settings] {key} is a setting of scenario = \"{}\", and this config's scenario is \"{}\": remove it, or set the scenario",
                name(other),
                name(kind)
            )));
        }
        let mut scenario = Scenario::new(kind, length_m);
        if let Some(markers) = self.marker_arc_lengths_m {
            scenario.marker_arc_lengths_m = markers;
        }
        match &mut scenario.experiment {
            Experiment::Drop(drop) => {
                drop.pin_m = self.pin_m.unwrap_or(drop.pin_m);
                drop.initial_angle_deg = self.initial_angle_deg.unwrap_or(drop.initial_angle_deg);
                drop.release_time_s = self.release_time_s.unwrap_or(drop.release_time_s);
            }
            Experiment::Swingup(swingup) => {
                if self.winch_waypoints_m.is_some() && self.winch_amplitude_m.is_some() {
                    return Err(ConfigError::Schema(
                        "give either winch_waypoints_m or winch_amplitude_m, not both".into(),
                    ));
                }
                let periods = self
                    .winch_periods_s
                    .unwrap_or_else(|| swingup.winch.periods_s.clone());
                let waypoints = match (self.winch_waypoints_m, self.winch_amplitude_m) {
                    (Some(w), _) => w,
                    (None, Some(a)) => WinchMotion::spec_waypoints(a),
                    (None, None) => swingup.winch.waypoints_m.clone(),
                };
                // The winch starts wherever pin_m says.
                let [x_m, height_m] = self.pin_m.unwrap_or([0.0, 0.0]);
                swingup.winch = WinchMotion {
                    waypoints_m: waypoints.iter().map(|w| w + x_m).collect(),
                    periods_s: periods,
                    height_m,
                };
                swingup.objective_interval_s = self
                    .objective_interval_s
                    .unwrap_or(swingup.objective_interval_s);
                swingup.objective_weights =
                    self.objective_weights.unwrap_or(swingup.objective_weights);
            }
        }
        Ok(scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn defaults_depend_on_the_scenario() {
        let drop = resolve(Table::new()).unwrap();
        assert_eq!(drop.scenario.kind(), ScenarioKind::Drop);
        assert_eq!(drop.tether.tip_mass_kg, 0.0);
        let swing = resolve(parse("scenario = \"swingup\"")).unwrap();
        assert_eq!(swing.tether.tip_mass_kg, 0.021);
        assert_eq!(swing.scenario.duration_s(), 3.0);
    }

    #[test]
    fn flags_override_the_file() {
        let mut base =
            parse("[tether]\nelements = 7\ndamping_pa_s = 100.0\n[settings]\nduration_s = 1.0");
        merge(&mut base, parse("[tether]\nelements = 12"));
        let c = resolve(base).unwrap();
        assert_eq!(c.tether.elements, 12);
        assert_eq!(c.tether.damping_pa_s, 100.0);
        assert_eq!(c.scenario.duration_s(), 1.0);
    }

    #[test]
    fn a_key_of_the_other_experiment_is_refused_by_name() {
        let e = resolve(parse("[settings]\nwinch_amplitude_m = 0.1"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[settings] winch_amplitude_m") && e.contains("\"swingup\""),
            "{e}"
        );
        let e = resolve(parse(
            "scenario = \"swingup\"\n[settings]\nrelease_time_s = 0.1",
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("[settings] release_time_s"), "{e}");
    }

    #[test]
    fn a_film_config_gives_its_frames_back_unapplied() {
        let table = parse("[settings]\nframe_interval_s = 0.0333\nduration_s = 1.0");
        // Not a whole number of frames: an error for a simulation, but a
        // film's frames are the file's, checked against these later.
        assert!(resolve(table.clone()).is_err());
        let (config, declared) = resolve_film(table, Path::new("film.toml")).unwrap();
        assert_eq!(declared.frame_interval_s, Some(0.0333));
        assert_eq!(declared.duration_s, Some(1.0));
        assert_eq!(declared.source, "film.toml");
        assert_eq!(
            config.scenario.frames,
            Scenario::new(ScenarioKind::Drop, 1.0).frames
        );
    }

    #[test]
    fn unknown_and_invalid_fields_are_named() {
        let e = resolve(parse("[tether]\nelemnts = 3"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("elemnts"), "{e}");
        let e = resolve(parse("[tether]\ndrag_coefficient = -0.5"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(TetherParams::DRAG_COEFFICIENT) && e.contains(">= 0"),
            "{e}"
        );
        let e = resolve(parse("[tether]\nelements = \"ten\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("[tether] elements = \"ten\""), "{e}");
        let e = resolve(parse("[settings]\nduration_s = \"long\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("[settings] duration_s"), "{e}");
        let e = resolve(parse("step_s = 0.003")).unwrap_err().to_string();
        assert!(e.contains("step_s") && e.contains("divides"), "{e}");
    }

    #[test]
    fn a_films_config_from_text_names_its_film_and_places_its_file() {
        let text = "[tether]\nlength_m = 0.5\n[settings]\nmeasured = \"../data/a.csv\"\n\
                    initial_angle_deg = 30.0\nmarker_arc_lengths_m = [0.0, 0.5]\n";
        let film = FilmConfig::from_toml(text, Path::new("configs/steep.toml")).unwrap();
        assert_eq!(film.name, "steep");
        assert_eq!(
            film.measured.map(|m| m.to_string()),
            Some("data/a.csv".to_string())
        );
        assert_eq!(film.tether.length_m, 0.5);
        assert_eq!(film.marker_arc_lengths_m, Some(vec![0.0, 0.5]));
        // The flags' [tether] keys replace the config's.
        let mut tether = Table::new();
        tether.insert("length_m".into(), Value::Float(0.6));
        let over = FilmConfig::from_table(parse(text), Path::new("a.toml"), tether).unwrap();
        assert_eq!(over.tether.length_m, 0.6);
        assert_eq!(over.marker_arc_lengths_m, Some(vec![0.0, 0.5]));
        let named =
            FilmConfig::from_toml("[settings]\nname = \"shallow\"", Path::new("x.toml")).unwrap();
        assert_eq!(named.name, "shallow");
        assert!(named.measured.is_none());
        assert_eq!(named.marker_arc_lengths_m, None);
        let e = FilmConfig::from_toml("[settings]\nname = 3", Path::new("x.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("[settings] name = 3 in x.toml"), "{e}");
        let e = FilmConfig::from_toml("[tether\n", Path::new("x.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("TOML"), "{e}");
    }

    #[test]
    fn a_huge_config_is_refused_unparsed_and_a_long_line_not_echoed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        let line = format!(
            "[tether]\nlength_m = {}\n",
            "1".repeat(MAX_CONFIG_BYTES as usize)
        );
        std::fs::write(&path, &line).unwrap();
        let e = read_table(&path).unwrap_err();
        assert!(matches!(e, ConfigError::TooLarge { .. }), "{e}");
        assert!(e.to_string().len() < 300, "{e}");
        // Under the limit, a bad line a megabyte long is named in part.
        let bad = format!("[tether]\nlength_m = 0.6 {}\n", "x".repeat(1 << 20));
        std::fs::write(&path, &bad).unwrap();
        let e = read_table(&path).unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { .. }), "{e}");
        assert!(e.to_string().len() < 2000, "{}", e.to_string().len());
    }
}
