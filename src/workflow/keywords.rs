//! A job's inputs named and described once: each keyword's name, kind,
//! default, unit and one line of help ([`Keyword`]), in a table per job
//! (`identify::KEYWORDS`, `simulate::KEYWORDS`). Both doors take their
//! words from those tables: the command line's flags are the names with
//! dashes (a test per command holds clap's flags to them), the Python
//! package's keywords are the names, its signatures and type stubs are
//! written from the tables, and an error names the input in the words of
//! the door it came through ([`Door::key`]).

use std::path::PathBuf;

use toml::{Table, Value};

use crate::io::config::{self, ConfigError, SimulationConfig};
use crate::io::track::Measured;
use crate::named::Named;
use crate::sweep::{Axis, Parameter};
use crate::workflow::WorkflowError;

/// The door an input came through: it names the input in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `--chunk-size`.
    CommandLine,
    /// `chunk_size` (the keyword: "invalid chunk_size = 0: …").
    Python,
}

impl Door {
    /// How this door's user wrote `keyword` (a `KEYWORDS` name: each job's own).
    pub fn key(self, keyword: &str) -> String {
        match self {
            Self::CommandLine => format!("--{}", keyword.replace('_', "-")),
            Self::Python => keyword.to_string(),
        }
    }

    /// A switch turned on, as this door's user writes it: `--tether`,
    /// `tether=True`.
    pub fn switch(self, keyword: &str) -> String {
        match self {
            Self::CommandLine => self.key(keyword),
            Self::Python => format!("{keyword}=True"),
        }
    }

    /// `keyword` given `value`, as this door's user wrote it:
    /// `--length 0.5`, `length=0.5`.
    pub fn given(self, keyword: &str, value: impl std::fmt::Display) -> String {
        match self {
            Self::CommandLine => format!("{} {value}", self.key(keyword)),
            Self::Python => format!("{keyword}={value}"),
        }
    }
}

/// A film's config: a TOML file, or its tables given in memory (a
/// Python dict), named in messages by `label` (`config[1]`), its film
/// optionally a table in memory.
#[derive(Debug, Clone)]
pub enum ConfigInput {
    File(PathBuf),
    Tables {
        label: String,
        table: Table,
        measured: Option<Measured>,
    },
}

impl ConfigInput {
    /// Its name in messages: the file's path, or the label.
    pub fn label(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::Tables { label, .. } => label.clone(),
        }
    }
}

/// The tether's own inputs as given (each optional: the config's, else
/// the job's default): n, D, C_D, the tip mass, the length, and leaving
/// out rotary inertia. Their keywords are their axes' flags' names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TetherInputs {
    pub elements: Option<i64>,
    pub damping_pa_s: Option<f64>,
    pub drag_coefficient: Option<f64>,
    pub tip_mass_kg: Option<f64>,
    pub length_m: Option<f64>,
    pub no_rotary_inertia: bool,
}

/// The tether's inputs that are grid axes, in [`TetherInputs`]' order.
const TETHER_AXES: [Axis; 5] = [
    Axis::Elements,
    Axis::Damping,
    Axis::Drag,
    Axis::Parameter(Parameter::TipMassKg),
    Axis::Parameter(Parameter::LengthM),
];

/// The `[tether]` key of rotary inertia, and its input (which turns it off).
const ROTARY_INERTIA: (&str, &str) = ("rotary_inertia", "no_rotary_inertia");

impl TetherInputs {
    /// The keywords, in order: `elements`, …, `no_rotary_inertia`.
    pub fn keywords() -> [String; 6] {
        let [a, b, c, d, e] = TETHER_AXES.map(|axis| {
            let flag = axis.flag().expect("the tether's axes have flags");
            flag.trim_start_matches('-').replace('-', "_")
        });
        [a, b, c, d, e, ROTARY_INERTIA.1.to_string()]
    }

    /// Each keyword with whether it was given, in order.
    pub fn given(&self) -> [(String, bool); 6] {
        let given = [
            self.elements.is_some(),
            self.damping_pa_s.is_some(),
            self.drag_coefficient.is_some(),
            self.tip_mass_kg.is_some(),
            self.length_m.is_some(),
            self.no_rotary_inertia,
        ];
        let keywords = Self::keywords();
        std::array::from_fn(|k| (keywords[k].clone(), given[k]))
    }

    /// The inputs given as a `[tether]` table of the config layout.
    pub fn table(&self) -> Table {
        let mut tether = Table::new();
        if let Some(n) = self.elements {
            tether.insert(Axis::Elements.column().into(), Value::Integer(n));
        }
        let values = [
            self.damping_pa_s,
            self.drag_coefficient,
            self.tip_mass_kg,
            self.length_m,
        ];
        for (axis, value) in TETHER_AXES[1..].iter().zip(values) {
            if let Some(v) = value {
                tether.insert(axis.column().into(), Value::Float(v));
            }
        }
        if self.no_rotary_inertia {
            tether.insert(ROTARY_INERTIA.0.into(), Value::Boolean(false));
        }
        tether
    }

    /// Each `[tether]` key these inputs set, with its input as `door`'s
    /// user writes it: for naming a value's error.
    pub fn names(door: Door) -> Vec<(&'static str, String)> {
        let keywords = Self::keywords();
        (TETHER_AXES.iter().map(|axis| axis.column()))
            .chain([ROTARY_INERTIA.0])
            .zip(keywords.iter().map(|k| door.key(k)))
            .collect()
    }
}

/// The experiment of a job that makes its own track (`simulate`,
/// `dataset synth`): `config` (a file, tables in memory, or none: the
/// defaults) with `overlays` (a door's config tables) and `overrides`
/// (its inputs, in the config's layout) merged over it. A value an input
/// gave is named as `names` say (config key → the input as its door
/// writes it), any other by its key and the config; a film in memory is
/// refused, for `job` (what it makes) reads none.
pub fn resolve_config(
    config: Option<&ConfigInput>,
    overlays: &Table,
    overrides: Table,
    names: &[(&str, String)],
    job: &str,
) -> Result<SimulationConfig, WorkflowError> {
    let (mut table, label) = match config {
        Some(ConfigInput::File(path)) => (
            config::read_table(path).map_err(|e| WorkflowError::Usage(e.to_string()))?,
            Some(path.clone()),
        ),
        Some(
            input @ ConfigInput::Tables {
                table, measured, ..
            },
        ) => {
            if measured.is_some() {
                return Err(WorkflowError::Usage(format!(
                    "{}: {job}; it reads no measured film",
                    input.label()
                )));
            }
            (table.clone(), Some(PathBuf::from(input.label())))
        }
        None if !overlays.is_empty() => (Table::new(), Some(PathBuf::from("config"))),
        None => (Table::new(), None),
    };
    config::merge(&mut table, overlays.clone());
    config::resolve_over(table, label.as_deref(), overrides).map_err(|e| match e {
        ConfigError::Input(input) => rename(input.into(), names),
        // A file's own errors name it; tables in memory by their label.
        other => match config {
            Some(input @ ConfigInput::Tables { .. }) => {
                WorkflowError::Usage(format!("{}: {other}", input.label()))
            }
            _ => WorkflowError::Usage(other.to_string()),
        },
    })
}

/// A workflow error whose field is one of `names`' fields, renamed to the
/// words the user wrote it in (`length_m` → `--length`, or `length=`).
pub fn rename<S: AsRef<str>>(e: WorkflowError, names: &[(&str, S)]) -> WorkflowError {
    match e {
        WorkflowError::Input(input) => match names.iter().find(|(key, _)| *key == input.field) {
            Some((_, name)) => WorkflowError::flag(name.as_ref(), input),
            None => WorkflowError::Input(input),
        },
        other => other,
    }
}

/// What a keyword takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordKind {
    /// On or off (a flag without a value).
    Switch,
    /// A whole number ≥ 0.
    Count,
    /// A number.
    Number,
    /// A line of text in the keyword's own syntax.
    Text,
    /// A file or folder.
    Path,
    /// A second output's file (Python: or True, for one beside `out`).
    SecondOutput,
    /// An axis: `start:stop:step`, a comma list, or numbers.
    Axis,
    /// Axes `NAME=AXIS`, any number of them.
    Axes,
    /// Names, any number of them.
    Names,
    /// One of a closed set of names ([`Keyword::choices`]).
    Choice,
    /// A film: its file, or its table.
    Film,
    /// A config: a file, or (Python) a dict.
    Config,
    /// Configs: a file each, or (Python) a dict each.
    Configs,
    /// A fixed count of numbers (`KP,KD`: a comma list, or a sequence).
    Numbers,
    /// On or off; Python: or a dict of its config table's keys (`tether`:
    /// carry a tether, or its `[tether]` keys).
    SwitchOrTable,
    /// A grid file (Python: or a dict of its keys).
    Grid,
    /// One of a config's tables as a dict (Python only).
    ConfigTable,
}

/// One input of a job.
#[derive(Debug, Clone, Copy)]
pub struct Keyword {
    pub name: &'static str,
    pub kind: KeywordKind,
    /// The value when not given, as the command line writes it; None:
    /// not set (chosen by the job, or off).
    pub default: Option<&'static str>,
    /// Its unit, where it has one.
    pub unit: Option<&'static str>,
    /// One line on what it does.
    pub help: &'static str,
    /// The names a [`KeywordKind::Choice`] takes.
    choices: Option<fn() -> Vec<&'static str>>,
    /// Only a whole identification takes it (its outputs, shards, resuming,
    /// abandoning, validation, refinement); the objective, which scores
    /// candidates it is given, does not.
    pub whole_run_only: bool,
}

impl Keyword {
    pub(crate) const fn new(name: &'static str, kind: KeywordKind, help: &'static str) -> Self {
        Self {
            name,
            kind,
            default: None,
            unit: None,
            help,
            choices: None,
            whole_run_only: false,
        }
    }

    pub(crate) const fn whole_run(self) -> Self {
        Self {
            whole_run_only: true,
            ..self
        }
    }

    pub(crate) const fn default(self, default: &'static str) -> Self {
        Self {
            default: Some(default),
            ..self
        }
    }

    pub(crate) const fn unit(self, unit: &'static str) -> Self {
        Self {
            unit: Some(unit),
            ..self
        }
    }

    pub(crate) const fn choice<T: Named>(name: &'static str, help: &'static str) -> Self {
        Self {
            choices: Some(names_of::<T>),
            ..Self::new(name, KeywordKind::Choice, help)
        }
    }

    /// The names a choice takes (empty for any other kind).
    pub fn choices(&self) -> Vec<&'static str> {
        self.choices.map(|f| f()).unwrap_or_default()
    }

    /// Whether the command line has it (the config's tables as dicts are
    /// Python's; the command line gives them in a config file).
    pub fn on_command_line(&self) -> bool {
        self.kind != KeywordKind::ConfigTable
    }
}

fn names_of<T: Named>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_door_names_a_keyword_its_own_way() {
        assert_eq!(Door::CommandLine.key("chunk_size"), "--chunk-size");
        assert_eq!(Door::Python.key("chunk_size"), "chunk_size");
    }
}
