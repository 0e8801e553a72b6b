//! An identification's inputs named and described once: each keyword's
//! name, kind, default, unit and one line of help ([`KEYWORDS`]). Both
//! doors take their words from here: the command line's flags are these
//! names with dashes (a test holds clap's flags to them), the Python
//! package's keywords are these names, its signatures and type stubs are
//! written from this table, and an error names the input in the words of
//! the door it came through ([`Door::key`]).

use crate::engine::Backend;
use crate::gpu::{LayoutRequest, Precision};
use crate::named::Named;
use crate::solver::SolverKind;

/// The door an input came through: it names the input in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `--chunk-size`.
    CommandLine,
    /// `chunk_size` (the keyword: "invalid chunk_size = 0: …").
    Python,
}

impl Door {
    /// How this door's user wrote `keyword` (a [`KEYWORDS`] name).
    pub fn key(self, keyword: &str) -> String {
        match self {
            Self::CommandLine => format!("--{}", keyword.replace('_', "-")),
            Self::Python => keyword.to_string(),
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
    /// An axis: `start:stop:step`, a comma list, or numbers.
    Axis,
    /// Axes `NAME=AXIS`, any number of them.
    Axes,
    /// One of a closed set of names ([`Keyword::choices`]).
    Choice,
    /// A film: its file, or its table.
    Film,
    /// Configs: a file each, or (Python) a dict each.
    Configs,
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
    const fn new(name: &'static str, kind: KeywordKind, help: &'static str) -> Self {
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

    const fn whole_run(self) -> Self {
        Self {
            whole_run_only: true,
            ..self
        }
    }

    const fn default(self, default: &'static str) -> Self {
        Self {
            default: Some(default),
            ..self
        }
    }

    const fn unit(self, unit: &'static str) -> Self {
        Self {
            unit: Some(unit),
            ..self
        }
    }

    const fn choice<T: Named>(name: &'static str, help: &'static str) -> Self {
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

use KeywordKind as K;

/// `identify`'s inputs, in the order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new(
        "measured",
        K::Film,
        "the film: marker tracks in a Parquet or CSV file (long or wide, as trackers export) or a table; default the shipped drop",
    ),
    Keyword::new("elements", K::Axis, "element counts n: start:stop:step (inclusive), a comma list or numbers").default("10:50:10"),
    Keyword::new("damping", K::Axis, "Kelvin–Voigt damping D: start:stop:step (inclusive), a comma list or numbers")
        .default("0:5000:250")
        .unit("Pa·s"),
    Keyword::new("drag_coefficient", K::Axis, "drag coefficient C_D: start:stop:step (inclusive), a comma list or numbers")
        .default("0.6:0.9:0.05"),
    Keyword::new(
        "axis",
        K::Axes,
        "grid axes over any parameter, NAME=AXIS (several films: FILM.NAME=AXIS for one film's own)",
    ),
    Keyword::new("surface", K::Text, "the surface figure's two axes, A,B").default("damping_pa_s,drag_coefficient").whole_run(),
    Keyword::new("grid", K::Grid, "the grid from a TOML file (keys elements, damping, drag_coefficient and parameter axes) instead"),
    Keyword::new("shard", K::Text, "run only shard K/N (default in a Slurm array job: its task)").whole_run(),
    Keyword::new("resume", K::Switch, "finish an interrupted run of the same inputs from its saved chunks").whole_run(),
    Keyword::new("chunk_size", K::Count, "candidates per saved chunk; default 16 per CPU thread, 1024 on a GPU").whole_run(),
    Keyword::choice::<SolverKind>("solver", "the solver of every candidate; default the job's (the reference on the CPU)"),
    Keyword::choice::<Backend>("backend", "where simulations run: the faster of CPU and GPU (auto), or the one named").default("auto"),
    Keyword::choice::<Precision>("precision", "the GPU's precision").default("f32"),
    Keyword::new("adapter", K::Text, "the GPU adapter: its index, PCI address or part of its name"),
    Keyword::choice::<LayoutRequest>("gpu_layout", "the GPU layout: a simulation per invocation or per workgroup, or auto").default("auto"),
    Keyword::new(
        "config",
        K::Configs,
        "the experiment: [tether], [settings] and [camera] (a TOML file; Python: or a dict); several for a joint fit of one tether's films",
    ),
    Keyword::new("tip_mass", K::Number, "tip mass of every candidate (not identified); default the config's, else 0").unit("kg"),
    Keyword::new("length", K::Number, "tether length of every candidate (not identified); default the config's, else 0.6").unit("m"),
    Keyword::new(
        "tolerance",
        K::Number,
        "the reference solver's local error tolerance, in [1e-13, 1e-3]; default chosen from the data's noise",
    )
    .unit("m"),
    Keyword::new("validate", K::Count, "candidates re-run on the f64 reference after a GPU or explicit sweep; 0 skips").default("3").whole_run(),
    Keyword::new("validate_marker_tolerance", K::Number, "the largest marker deviation the validation accepts")
        .default("0.0001")
        .unit("m")
        .whole_run(),
    Keyword::new("validate_j_e_tolerance", K::Number, "the largest relative J_e deviation the validation accepts").default("0.01").whole_run(),
    Keyword::new("no_refine", K::Switch, "skip refining the best candidate by Levenberg–Marquardt").whole_run(),
    Keyword::new("exhaustive", K::Switch, "score every candidate to the end of its film (no abandoning)").whole_run(),
    Keyword::new(
        "allow_implausible",
        K::Switch,
        "sweep a film far from every initial shape, and return a fit its noise cannot explain instead of failing",
    ),
    Keyword::new("csv", K::Switch, "also write results.csv").whole_run(),
    Keyword::new("out", K::Path, "the output folder").default("identify-results").whole_run(),
    Keyword::new("force", K::Switch, "replace earlier results and discard an interrupted run's chunks").whole_run(),
    Keyword::new("tether", K::ConfigTable, "[tether] keys over each config's (or alone)"),
    Keyword::new("settings", K::ConfigTable, "[settings] keys over each config's (or alone)"),
    Keyword::new("camera", K::ConfigTable, "[camera] keys over each config's (or alone)"),
];

/// The keyword named `name`.
pub fn keyword(name: &str) -> Option<&'static Keyword> {
    KEYWORDS.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};

    #[test]
    fn each_door_names_a_keyword_its_own_way() {
        assert_eq!(Door::CommandLine.key("chunk_size"), "--chunk-size");
        assert_eq!(Door::Python.key("chunk_size"), "chunk_size");
    }

    #[test]
    fn the_table_states_the_library_defaults() {
        let default = |name| keyword(name).and_then(|k| k.default).unwrap();
        assert_eq!(
            default("validate_marker_tolerance").parse::<f64>(),
            Ok(DEFAULT_MARKER_TOLERANCE_M)
        );
        assert_eq!(
            default("validate_j_e_tolerance").parse::<f64>(),
            Ok(DEFAULT_J_E_TOLERANCE)
        );
        assert_eq!(
            keyword("backend").unwrap().choices(),
            ["auto", "gpu", "cpu"]
        );
        // The objective takes the study (film, experiment, grid, engine,
        // tolerance), not a whole run's outputs or passes.
        let objective: Vec<_> = KEYWORDS
            .iter()
            .filter(|k| !k.whole_run_only)
            .map(|k| k.name)
            .collect();
        assert!(objective.contains(&"tolerance") && objective.contains(&"config"));
        assert!(!objective.contains(&"out") && !objective.contains(&"resume"));
        let mut names: Vec<_> = KEYWORDS.iter().map(|k| k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KEYWORDS.len(), "one keyword per name");
    }
}
