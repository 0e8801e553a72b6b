//! An identification's inputs as a user gives them ([`IdentifyInputs`]):
//! the one builder both doors fill, the command line from its flags and
//! the Python package from its keywords, with no text between them. It
//! turns them into an [`IdentifyRequest`]: the defaults, the config's film
//! (a file or a table in memory), the grid and its axes, the checks that
//! span inputs; every error names the input as its door's user wrote it
//! ([`Door::key`]), a config's key by the config.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::request::IdentifyRequest;
use super::shipped::shipped_dataset;
use crate::engine::EngineOptions;
use crate::error::InputError;
use crate::io::config::{self, ConfigError, FilmConfig};
use crate::io::track::Measured;
use crate::model::TetherParams;
use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};
use crate::sweep::{Axis, Grid, Parameter, Shard};
use crate::workflow::WorkflowError;
use crate::workflow::keywords::{ConfigInput, Door};

/// An axis as given: its text (`0:5000:250`, `1000,2000`) or its values.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisInput {
    Text(String),
    Values(Vec<f64>),
}

impl AxisInput {
    /// The axis in its text form, every digit of each value kept.
    fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Values(values) => values
                .iter()
                .map(|&v| match v.fract() == 0.0 && v.abs() < 1e15 {
                    true => format!("{}", v as i64),
                    false => format!("{v:?}"),
                })
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// The grid as a TOML file, or its keys in memory.
#[derive(Debug, Clone)]
pub enum GridInput {
    File(PathBuf),
    Table(Table),
}

/// Everything a user can give an identification (`keywords::KEYWORDS`
/// names and describes each), as given: [`Self::request`] makes the
/// request of them.
#[derive(Debug, Clone)]
pub struct IdentifyInputs {
    /// The film; None: the config's, else the shipped drop.
    pub measured: Option<Measured>,
    pub elements: Option<AxisInput>,
    pub damping: Option<AxisInput>,
    pub drag_coefficient: Option<AxisInput>,
    /// `NAME=AXIS` (several films: `FILM.NAME=AXIS`).
    pub axes: Vec<String>,
    /// `A,B`: the surface figure's axes.
    pub surface: Option<String>,
    pub grid: Option<GridInput>,
    /// `K/N`; None: Slurm's array task, if any.
    pub shard: Option<String>,
    pub resume: bool,
    pub chunk_size: Option<usize>,
    pub engine: EngineOptions,
    pub configs: Vec<ConfigInput>,
    /// `[tether]`, `[settings]` and `[camera]` keys over each config's (a
    /// config of their own without one).
    pub overlays: Table,
    pub tip_mass_kg: Option<f64>,
    pub length_m: Option<f64>,
    pub tolerance_m: Option<f64>,
    pub validate: usize,
    pub validate_marker_tolerance_m: f64,
    pub validate_j_e_tolerance: f64,
    pub no_refine: bool,
    pub exhaustive: bool,
    pub allow_implausible: bool,
    pub csv: bool,
    pub out: PathBuf,
    pub force: bool,
}

impl Default for IdentifyInputs {
    /// `keywords::KEYWORDS`' defaults.
    fn default() -> Self {
        Self {
            measured: None,
            elements: None,
            damping: None,
            drag_coefficient: None,
            axes: Vec::new(),
            surface: None,
            grid: None,
            shard: None,
            resume: false,
            chunk_size: None,
            engine: EngineOptions::default(),
            configs: Vec::new(),
            overlays: Table::new(),
            tip_mass_kg: None,
            length_m: None,
            tolerance_m: None,
            validate: 3,
            validate_marker_tolerance_m: DEFAULT_MARKER_TOLERANCE_M,
            validate_j_e_tolerance: DEFAULT_J_E_TOLERANCE,
            no_refine: false,
            exhaustive: false,
            allow_implausible: false,
            csv: false,
            out: PathBuf::from("identify-results"),
            force: false,
        }
    }
}

/// The tether parameters set by an input of their own when no axis sweeps
/// them: the library's key and the keyword.
const TETHER_KEYWORDS: [(Parameter, &str); 2] = [
    (Parameter::TipMassKg, "tip_mass"),
    (Parameter::LengthM, "length"),
];

impl IdentifyInputs {
    /// Whether it names more than one film.
    pub fn several(&self) -> bool {
        self.configs.len() > 1
    }

    /// Whether a config (a file, or its tables in memory) gives the
    /// experiment.
    pub fn configured(&self) -> bool {
        !self.configs.is_empty() || !self.overlays.is_empty()
    }

    /// The request these inputs make, checked across inputs; an error
    /// names the input as `door`'s user wrote it.
    pub fn request(&self, door: Door) -> Result<IdentifyRequest, WorkflowError> {
        match self.several() {
            true => self.films_request(door),
            false => self.single_request(door),
        }
    }

    /// The library's field names of what these inputs set, with the words
    /// `door`'s user wrote them in: for [`crate::workflow::keywords::rename`] of a later check's
    /// error (a film of several is named by the workflow's messages).
    pub fn names(&self, door: Door) -> Vec<(&'static str, String)> {
        let mut names: Vec<(&'static str, String)> = [
            ("tip_mass_kg", "tip_mass"),
            ("length_m", "length"),
            ("chunk_size", "chunk_size"),
            ("tolerance_m", "tolerance"),
            ("validate_marker_tolerance_m", "validate_marker_tolerance"),
            ("validate_j_e_tolerance", "validate_j_e_tolerance"),
            ("surface", "surface"),
        ]
        .map(|(field, keyword)| (field, door.key(keyword)))
        .to_vec();
        names.push((
            "axis",
            match &self.grid {
                Some(GridInput::File(path)) => format!(
                    "a parameter axis ({}, or {})",
                    door.key("axis"),
                    door.given("grid", path.display())
                ),
                Some(GridInput::Table(_)) => {
                    format!(
                        "a parameter axis ({} or {})",
                        door.key("axis"),
                        door.key("grid")
                    )
                }
                None => door.key("axis"),
            },
        ));
        if let (Some(config), false) = (self.configs_or_overlays().first(), self.several()) {
            for key in ["marker_arc_lengths_m", "release_time_s"] {
                names.push((key, format!("{key} (in {})", config.label())));
            }
        }
        names
    }

    /// The grid's three axes as given, each with its keyword
    /// ([`Axis::FIXED`]'s order).
    fn fixed_axes(&self) -> [(&Option<AxisInput>, &'static str); 3] {
        let given = [&self.elements, &self.damping, &self.drag_coefficient];
        let keywords =
            Axis::FIXED.map(|axis| axis_keyword(axis).expect("the fixed axes have flags"));
        [0, 1, 2].map(|k| (given[k], keywords[k]))
    }

    /// The configs, or the overlays' config alone.
    fn configs_or_overlays(&self) -> Vec<ConfigInput> {
        match (self.configs.is_empty(), self.overlays.is_empty()) {
            (true, false) => vec![ConfigInput::Tables {
                label: "config".into(),
                table: Table::new(),
                measured: None,
            }],
            _ => self.configs.clone(),
        }
    }

    fn single_request(&self, door: Door) -> Result<IdentifyRequest, WorkflowError> {
        let grid = self.grid(door)?;
        // The config's film (the measured input over its own), or the
        // shipped drop's experiment with the inputs' tether.
        let request = match self.configs_or_overlays().first() {
            Some(config) => {
                let mut film = self.film_of(config, 0, door)?;
                if let Some(measured) = &self.measured {
                    film.measured = Some(measured.clone());
                }
                if film.measured.is_none() {
                    film.measured = Some(shipped_dataset()?.into());
                }
                IdentifyRequest::of_film(film, grid, &self.out)?
            }
            None => IdentifyRequest {
                base: TetherParams {
                    tip_mass_kg: self.tip_mass_kg.unwrap_or(0.0),
                    length_m: self.length_m.unwrap_or(TetherParams::default().length_m),
                    ..TetherParams::default()
                },
                ..IdentifyRequest::new(
                    match &self.measured {
                        Some(measured) => measured.clone(),
                        None => shipped_dataset()?.into(),
                    },
                    grid,
                    &self.out,
                )
            },
        };
        let mut request = self.settings(request, door)?;
        self.add_axes(&mut request, door)?;
        Ok(request)
    }

    /// The request of several films: the single film's shared settings
    /// (grid, engine, tether, checks, output), and one film per config.
    fn films_request(&self, door: Door) -> Result<IdentifyRequest, WorkflowError> {
        if self.measured.is_some() {
            return Err(WorkflowError::Usage(format!(
                "{} names one film; with several {}, each config gives its own film (measured in its [settings])",
                door.key("measured"),
                door.key("config"),
            )));
        }
        let grid = self.grid(door)?;
        let mut configs = Vec::with_capacity(self.configs.len());
        for (k, input) in self.configs.iter().enumerate() {
            let config = self.film_of(input, k, door)?;
            if config.measured.is_none() {
                return Err(WorkflowError::Usage(format!(
                    "{}: no measured film in [settings]: with several {}, each config gives its film's file (measured = \"FILE\") or table",
                    input.label(),
                    door.key("config"),
                )));
            }
            configs.push(config);
        }
        let request = IdentifyRequest::of_configs(configs, grid, &self.out)?;
        let mut request = self.settings(request, door)?;
        self.add_axes(&mut request, door)?;
        Ok(request)
    }

    /// `request` with the inputs that are not the films or the grid.
    fn settings(
        &self,
        request: IdentifyRequest,
        door: Door,
    ) -> Result<IdentifyRequest, WorkflowError> {
        let surface = self.surface.as_deref().map(Axis::parse_pair).transpose();
        Ok(IdentifyRequest {
            shard: self.shard(door)?,
            resume: self.resume,
            chunk_size: self.chunk_size,
            engine: self.engine.clone(),
            tolerance_m: self.tolerance_m,
            exhaustive: self.exhaustive,
            validate: self.validate,
            validate_marker_tolerance_m: self.validate_marker_tolerance_m,
            validate_j_e_tolerance: self.validate_j_e_tolerance,
            allow_implausible: self.allow_implausible,
            surface_axes: surface.map_err(|e| WorkflowError::flag(&door.key("surface"), e))?,
            refine: !self.no_refine,
            csv: self.csv,
            force: self.force,
            ..request
        })
    }

    /// The shard given, else Slurm's array task.
    fn shard(&self, door: Door) -> Result<Option<Shard>, WorkflowError> {
        Ok(match &self.shard {
            Some(text) => {
                Some(Shard::parse(text).map_err(|e| WorkflowError::flag(&door.key("shard"), e))?)
            }
            None => Shard::from_slurm(|name| std::env::var(name).ok())
                .map_err(|e| WorkflowError::Usage(e.to_string()))?,
        })
    }

    /// The grid of its file (or table) or of the three axes (parameter
    /// axes: [`Self::add_axes`]).
    fn grid(&self, door: Door) -> Result<Grid, WorkflowError> {
        let named = |e: InputError| WorkflowError::flag(&door.key("grid"), e);
        let axes = self.fixed_axes();
        if let (Some(_), Some((_, keyword))) = (&self.grid, axes.iter().find(|(a, _)| a.is_some()))
        {
            return Err(WorkflowError::Usage(format!(
                "{} beside {}: the grid's file gives its axes; give one or the other",
                door.key(keyword),
                door.key("grid")
            )));
        }
        match &self.grid {
            Some(GridInput::File(path)) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    WorkflowError::Usage(format!(
                        "cannot read {}: {e}",
                        door.given("grid", path.display())
                    ))
                })?;
                Grid::from_toml(&text).map_err(|e| {
                    WorkflowError::Usage(format!("{}: {e}", door.given("grid", path.display())))
                })
            }
            Some(GridInput::Table(table)) => {
                let text = toml::to_string(table).map_err(|e| {
                    named(InputError::new(
                        "grid",
                        e,
                        "a table of the grid file's keys",
                    ))
                })?;
                Grid::from_toml(&text).map_err(named)
            }
            None => {
                let axes = axes.map(|(given, keyword)| {
                    let default = super::keywords::keyword(keyword).and_then(|k| k.default);
                    given
                        .as_ref()
                        .map_or(default.unwrap_or_default().to_string(), AxisInput::text)
                });
                Grid::parse(&axes[0], &axes[1], &axes[2]).map_err(|e| {
                    let keyword = Axis::parse(&e.field).ok().and_then(axis_keyword);
                    WorkflowError::flag(&door.key(keyword.unwrap_or("grid")), e)
                })
            }
        }
    }

    /// Each axis onto `request` (`FILM.NAME=AXIS` onto its film:
    /// [`IdentifyRequest::add_axis`]), refusing one beside the input of
    /// its own that gives it, and such an input beside an axis over its
    /// parameter.
    fn add_axes(&self, request: &mut IdentifyRequest, door: Door) -> Result<(), WorkflowError> {
        let own = self.fixed_axes();
        for text in &self.axes {
            let name = text.split_once('=').map_or("", |(name, _)| name.trim());
            let twin = Axis::parse(name).ok().and_then(|axis| {
                let i = Axis::FIXED.iter().position(|fixed| *fixed == axis)?;
                own[i].0.as_ref().map(|value| (own[i].1, value.text()))
            });
            if let Some((keyword, value)) = twin {
                return Err(WorkflowError::Usage(format!(
                    "{} beside {}: both give that axis; give one or the other",
                    door.given(keyword, value),
                    door.given("axis", text)
                )));
            }
            request.add_axis(text).map_err(|e| {
                let field = match e.field.split_once(' ') {
                    Some((first, rest)) => format!("{} {rest}", door.key(first)),
                    None => door.key(&e.field),
                };
                WorkflowError::flag(&field, e)
            })?;
        }
        for ((parameter, keyword), value) in TETHER_KEYWORDS
            .into_iter()
            .zip([self.tip_mass_kg, self.length_m])
        {
            if let Some(value) = value
                && request.grid.has(Axis::Parameter(parameter))
            {
                return Err(WorkflowError::Usage(format!(
                    "{} beside a grid axis over {}: the axis sets it for every candidate; give one or the other",
                    door.given(keyword, value),
                    parameter.name()
                )));
            }
        }
        Ok(())
    }

    /// The film of config `input` (the `k`th), with the overlays and the
    /// tether's own inputs over its tables.
    fn film_of(
        &self,
        input: &ConfigInput,
        k: usize,
        door: Door,
    ) -> Result<FilmConfig, WorkflowError> {
        let mut given = Table::new();
        for ((parameter, _), value) in TETHER_KEYWORDS
            .into_iter()
            .zip([self.tip_mass_kg, self.length_m])
        {
            if let Some(v) = value {
                given.insert(parameter.name().into(), Value::Float(v));
            }
        }
        let (mut table, path, in_memory) = match input {
            ConfigInput::File(path) => (
                config::read_table(path).map_err(|e| WorkflowError::Usage(e.to_string()))?,
                path.clone(),
                None,
            ),
            ConfigInput::Tables {
                label,
                table,
                measured,
            } => {
                let mut table = table.clone();
                // A film of several is named in columns and files: a
                // config in memory is `film1`, `film2`, … unless named.
                if self.several() {
                    let settings = table
                        .entry("settings")
                        .or_insert_with(|| Value::Table(Table::new()));
                    if let Value::Table(settings) = settings {
                        settings
                            .entry("name")
                            .or_insert_with(|| Value::String(format!("film{}", k + 1)));
                    }
                }
                (table, PathBuf::from(label), measured.clone())
            }
        };
        config::merge(&mut table, self.overlays.clone());
        config::experiment_only(&table, &path, "identify", &door.key("solver"))
            .map_err(|e| WorkflowError::Usage(e.to_string()))?;
        let named: Vec<(&str, String)> = TETHER_KEYWORDS
            .iter()
            .map(|(parameter, keyword)| (parameter.name(), door.key(keyword)))
            .collect();
        let named: Vec<(&str, &str)> = named.iter().map(|(k, f)| (*k, f.as_str())).collect();
        let mut film = FilmConfig::from_table(table, &path, given.clone())
            .map_err(|e| config_error(e, &path, &named, &given))?;
        if let Some(measured) = in_memory {
            film.measured = Some(measured);
        }
        Ok(film)
    }
}

/// The keyword of an axis with an input of its own (`elements`,
/// `damping`, `drag_coefficient`, …): its flag's name.
fn axis_keyword(axis: Axis) -> Option<&'static str> {
    axis.flag()
        .and_then(|flag| super::keywords::keyword(&flag[2..].replace('-', "_")))
        .map(|k| k.name)
}

/// A config's error in the user's words: a `[tether]` value an input of
/// its own gave (`given`, keyed as `named` names them) by that input,
/// another value by its key and the config, anything else with the
/// config's name.
pub fn config_error<S: AsRef<str>>(
    e: ConfigError,
    path: &Path,
    named: &[(&str, S)],
    given: &Table,
) -> WorkflowError {
    match e {
        ConfigError::Input(input) => {
            let name = match named
                .iter()
                .find(|(key, _)| *key == input.field && given.contains_key(*key))
            {
                Some((_, name)) => name.as_ref().to_string(),
                None => format!("{} (in {})", input.field, path.display()),
            };
            WorkflowError::flag(&name, input)
        }
        ConfigError::FilmKey(message) => WorkflowError::Usage(message),
        other => WorkflowError::Usage(format!("{}: {other}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_input_as_its_door_wrote_it() {
        let inputs = IdentifyInputs {
            damping: Some(AxisInput::Text("5:1:1".into())),
            ..IdentifyInputs::default()
        };
        for (door, name) in [(Door::CommandLine, "--damping"), (Door::Python, "damping")] {
            let e = inputs.request(door).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid {name} = '5:1:1'")), "{e}");
        }
        let inputs = IdentifyInputs {
            elements: Some(AxisInput::Values(vec![4.0])),
            axes: vec!["elements=4".into()],
            ..IdentifyInputs::default()
        };
        let e = inputs.request(Door::Python).unwrap_err().to_string();
        assert!(e.contains("elements=4 beside axis=elements=4"), "{e}");
    }

    #[test]
    fn a_config_in_memory_is_named_in_messages_by_its_place() {
        let mut tether = Table::new();
        tether.insert("length_m".into(), Value::Float(-1.0));
        let mut table = Table::new();
        table.insert("tether".into(), Value::Table(tether));
        let inputs = IdentifyInputs {
            configs: vec![ConfigInput::Tables {
                label: "config[0]".into(),
                table,
                measured: None,
            }],
            ..IdentifyInputs::default()
        };
        let e = inputs.request(Door::Python).unwrap_err().to_string();
        assert!(e.contains("length_m (in config[0])"), "{e}");
        let inputs = IdentifyInputs {
            length_m: Some(-1.0),
            ..inputs
        };
        let e = inputs.request(Door::Python).unwrap_err().to_string();
        assert!(e.starts_with("invalid length = -1"), "{e}");
    }

    #[test]
    fn values_keep_every_digit_as_axis_text() {
        let values = AxisInput::Values(vec![0.1 + 0.2, 1e-300, 3.0]);
        assert_eq!(values.text(), "0.30000000000000004,1e-300,3");
    }
}
