//! A design's inputs as a user gives them ([`DesignInputs`]): the one
//! builder both doors fill (`keywords::KEYWORDS` names and describes
//! each). It makes the request: each planned film (a config file, its
//! tables in memory, a film already taken, or the paper's drop) with the
//! tether expected, the design axes and the parameters estimated; every
//! error names the input as its door's user wrote it ([`Door::key`]), a
//! config's key by the config.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::{DesignRequest, PlannedRelease, planned_from_measured, require_drop};
use crate::engine::{Backend, EngineOptions};
use crate::io::config::{self, FilmConfig};
use crate::scenario::SolverSettings;
use crate::sweep::design::{Design, Estimated, PlannedFilm};
use crate::sweep::{Axis, Parameter, ScopedAxis};
use crate::workflow::WorkflowError;
use crate::workflow::identify::config_error;
use crate::workflow::keywords::{ConfigInput, Door, TetherInputs, rename};

#[derive(Debug, Clone)]
pub struct DesignInputs {
    /// The planned films; none: the paper's drop.
    pub configs: Vec<ConfigInput>,
    /// The tether expected (D and C_D required, here or in every
    /// config's `[tether]`).
    pub tether_inputs: TetherInputs,
    pub noise_m: f64,
    /// `NAME=AXIS` (or `FILM.NAME=AXIS`).
    pub axes: Vec<String>,
    /// Parameters estimated besides D and C_D.
    pub estimates: Vec<String>,
    pub backend: Backend,
    pub adapter: Option<String>,
    pub tolerance_m: Option<f64>,
    /// `[tether]`, `[settings]` and `[camera]` keys over each config's (a
    /// config of their own without one).
    pub overlays: Table,
    pub out: PathBuf,
    pub force: bool,
}

impl Default for DesignInputs {
    /// `keywords::KEYWORDS`' defaults.
    fn default() -> Self {
        Self {
            configs: Vec::new(),
            tether_inputs: TetherInputs::default(),
            noise_m: 5e-4,
            axes: Vec::new(),
            estimates: Vec::new(),
            backend: Backend::Auto,
            adapter: None,
            tolerance_m: None,
            overlays: Table::new(),
            out: PathBuf::from("design-results"),
            force: false,
        }
    }
}

/// Where a film already taken is released, for the caller to say.
#[derive(Debug, Clone)]
pub struct ReleaseNote {
    pub planned: PlannedFilm,
    pub release: PlannedRelease,
    /// Its config's name.
    pub config: PathBuf,
}

/// The request's fields that an input sets, and the input.
const FIELD_KEYWORDS: [(&str, &str); 3] = [
    ("noise", "noise"),
    ("estimate", "estimate"),
    ("axis", "axis"),
];

impl DesignInputs {
    /// The request these inputs make, and where each film already taken
    /// is released; an error names the input as `door`'s user wrote it.
    pub fn request(&self, door: Door) -> Result<(DesignRequest, Vec<ReleaseNote>), WorkflowError> {
        let mut notes = Vec::new();
        let films = self.films(door, &mut notes)?;
        let mut design = Design {
            films,
            axes: Vec::new(),
            estimated: vec![
                Estimated::shared(Axis::Damping),
                Estimated::shared(Axis::Drag),
            ],
            noise_m: self.noise_m,
        };
        let names: Vec<String> = design.films.iter().map(|f| f.name.clone()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        for text in &self.axes {
            let axis = ScopedAxis::parse(text, &names, Axis::parse_design).map_err(|e| {
                let field = match e.field.split_once(' ') {
                    Some((first, rest)) => format!("{} {rest}", door.key(first)),
                    None => door.key(&e.field),
                };
                WorkflowError::flag(&field, e)
            })?;
            design.axes.push(axis);
        }
        for name in &self.estimates {
            let estimated = design
                .estimates(name)
                .map_err(|e| WorkflowError::flag(&door.key("estimate"), e))?;
            design.estimated.extend(estimated);
        }
        let solver = SolverSettings::checked_reference(self.tolerance_m)
            .map_err(|e| WorkflowError::flag(&door.key("tolerance"), e))?;
        let request = DesignRequest {
            design,
            solver,
            engine: EngineOptions {
                backend: self.backend,
                adapter: self.adapter.clone(),
                ..EngineOptions::default()
            },
            out: self.out.clone(),
            force: self.force,
        };
        Ok((request, notes))
    }

    /// The design's error in the words of `door`: a value a design axis
    /// set by the axis.
    pub fn error(e: WorkflowError, design: &Design, door: Door) -> WorkflowError {
        match e {
            WorkflowError::Input(input)
                if design.axes.iter().any(|a| a.axis().column() == input.field) =>
            {
                let field = format!("{} {}", door.key("axis"), input.field);
                WorkflowError::flag(&field, input)
            }
            other => rename(
                other,
                &FIELD_KEYWORDS.map(|(field, keyword)| (field, door.key(keyword))),
            ),
        }
    }

    /// The configs, or the overlays' config alone, or none.
    fn configs(&self) -> Vec<Option<ConfigInput>> {
        match (self.configs.is_empty(), self.overlays.is_empty()) {
            (true, true) => vec![None],
            (true, false) => vec![Some(ConfigInput::Tables {
                label: "config".into(),
                table: Table::new(),
                measured: None,
            })],
            _ => self.configs.iter().cloned().map(Some).collect(),
        }
    }

    /// The planned films: each config's, or the paper's drop.
    fn films(
        &self,
        door: Door,
        notes: &mut Vec<ReleaseNote>,
    ) -> Result<Vec<PlannedFilm>, WorkflowError> {
        let configs = self.configs();
        let several = configs.len() > 1;
        (configs.iter().enumerate())
            .map(|(k, c)| self.film(c.as_ref(), k, several, door, notes))
            .collect()
    }

    fn film(
        &self,
        input: Option<&ConfigInput>,
        k: usize,
        several: bool,
        door: Door,
        notes: &mut Vec<ReleaseNote>,
    ) -> Result<PlannedFilm, WorkflowError> {
        let usage = |e: config::ConfigError| WorkflowError::Usage(e.to_string());
        let (mut table, path, in_memory) = match input {
            Some(ConfigInput::File(path)) => {
                let table = config::read_table(path).map_err(usage)?;
                (table, Some(path.clone()), None)
            }
            Some(ConfigInput::Tables {
                label,
                table,
                measured,
            }) => {
                let mut table = table.clone();
                // A film of several is named in the table: a config in
                // memory is `film1`, `film2`, … unless named.
                if several
                    && let Value::Table(settings) = table
                        .entry("settings")
                        .or_insert_with(|| Value::Table(Table::new()))
                {
                    settings
                        .entry("name")
                        .or_insert_with(|| Value::String(format!("film{}", k + 1)));
                }
                (table, Some(PathBuf::from(label)), measured.clone())
            }
            None => (Table::new(), None, None),
        };
        config::merge(&mut table, self.overlays.clone());
        if let Some(path) = &path {
            config::experiment_only(&table, path, "design", &door.key("tolerance"))
                .map_err(usage)?;
        }
        self.require_assumed_values(&table, path.as_deref(), door)?;
        let tether = self.tether_inputs.table();
        let mut overrides = Table::new();
        overrides.insert("tether".into(), Value::Table(tether.clone()));
        config::merge(&mut table, overrides);
        let names = TetherInputs::names(door);
        let Some(path) = path else {
            let cfg = config::resolve(table).map_err(|e| match e {
                config::ConfigError::Input(input) => rename(input.into(), &names),
                other => WorkflowError::Usage(other.to_string()),
            })?;
            return Ok(PlannedFilm {
                name: "drop".into(),
                tether: cfg.tether,
                scenario: cfg.scenario,
            });
        };
        let measured = in_memory.is_some()
            || table
                .get("settings")
                .and_then(Value::as_table)
                .is_some_and(|s| s.contains_key("measured"));
        if measured {
            // A film already taken: read as identify reads it.
            let mut film = FilmConfig::from_table(table, &path, Table::new())
                .map_err(|e| config_error(e, &path, &names, &tether))?;
            if let Some(measured) = in_memory {
                film.measured = Some(measured);
            }
            require_drop(&film.scenario, &path)?;
            let release = match self.release_axis(&film.name) {
                Some(values) => PlannedRelease::Axis(values),
                None if film.release_given => PlannedRelease::Configured,
                None => PlannedRelease::FirstFrame,
            };
            let file = film.measured.as_ref().map(ToString::to_string);
            let planned = planned_from_measured(film, &release)
                .map_err(|e| WorkflowError::Usage(format!("{}: {e}", file.unwrap_or_default())))?;
            notes.push(ReleaseNote {
                planned: planned.clone(),
                release,
                config: path,
            });
            return Ok(planned);
        }
        // A film to be made: its frames are its config's.
        let (name, _) = config::film_keys(&mut table, &path).map_err(usage)?;
        let cfg = config::resolve(table).map_err(|e| config_error(e, &path, &names, &tether))?;
        require_drop(&cfg.scenario, &path)?;
        Ok(PlannedFilm {
            name,
            tether: cfg.tether,
            scenario: cfg.scenario,
        })
    }

    /// D and C_D are the values design predicts at: from the inputs or
    /// the config's `[tether]`.
    fn require_assumed_values(
        &self,
        table: &Table,
        path: Option<&Path>,
        door: Door,
    ) -> Result<(), WorkflowError> {
        let in_config = |key: &str| {
            table
                .get("tether")
                .and_then(Value::as_table)
                .is_some_and(|t| t.contains_key(key))
        };
        let [_, damping, drag, ..] = TetherInputs::keywords();
        let t = &self.tether_inputs;
        for (axis, keyword, given) in [
            (Axis::Damping, damping, t.damping_pa_s.is_some()),
            (Axis::Drag, drag, t.drag_coefficient.is_some()),
        ] {
            let key = axis.column();
            if !given && !in_config(key) {
                let place = path.map_or_else(String::new, |p| {
                    format!(" (or {key} in [tether] of {})", p.display())
                });
                return Err(WorkflowError::Usage(format!(
                    "design predicts errors at the values you expect: give {}{place}",
                    door.key(&keyword)
                )));
            }
        }
        Ok(())
    }

    /// The values of an axis over film `film`'s release time, its own
    /// (`FILM.release_time_s`) or every film's; one that does not parse is
    /// left to [`Self::request`] to refuse.
    fn release_axis(&self, film: &str) -> Option<Vec<f64>> {
        let release = Axis::Parameter(Parameter::ReleaseTimeS);
        self.axes.iter().rev().find_map(|text| {
            let scoped = ScopedAxis::parse(text, &[film], Axis::parse_design).ok()?;
            (scoped.axis() == release).then_some(scoped.values.values)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(inputs: &DesignInputs, door: Door) -> String {
        inputs.request(door).expect_err("refused").to_string()
    }

    #[test]
    fn an_error_names_the_input_as_its_door_wrote_it() {
        let expected = TetherInputs {
            damping_pa_s: Some(2000.0),
            drag_coefficient: Some(0.8),
            ..TetherInputs::default()
        };
        let inputs = DesignInputs {
            tether_inputs: TetherInputs {
                drag_coefficient: None,
                ..expected.clone()
            },
            ..DesignInputs::default()
        };
        assert!(error(&inputs, Door::Python).ends_with("give drag_coefficient"));
        assert!(error(&inputs, Door::CommandLine).ends_with("give --drag-coefficient"));
        let inputs = DesignInputs {
            tether_inputs: expected.clone(),
            tolerance_m: Some(-1.0),
            ..DesignInputs::default()
        };
        assert!(error(&inputs, Door::Python).starts_with("invalid tolerance = -1"));
        let inputs = DesignInputs {
            tether_inputs: expected,
            estimates: vec!["no_such".into()],
            ..DesignInputs::default()
        };
        assert!(error(&inputs, Door::Python).starts_with("invalid estimate = "));
    }

    #[test]
    fn several_configs_in_memory_are_named_film1_film2() {
        let tables = |angle: f64| {
            let mut settings = Table::new();
            settings.insert("initial_angle_deg".into(), Value::Float(angle));
            let mut table = Table::new();
            table.insert("settings".into(), Value::Table(settings));
            ConfigInput::Tables {
                label: format!("config[{angle}]"),
                table,
                measured: None,
            }
        };
        let inputs = DesignInputs {
            configs: vec![tables(45.0), tables(90.0)],
            tether_inputs: TetherInputs {
                damping_pa_s: Some(2000.0),
                drag_coefficient: Some(0.8),
                ..TetherInputs::default()
            },
            ..DesignInputs::default()
        };
        let (request, notes) = inputs.request(Door::Python).unwrap();
        let names: Vec<_> = request
            .design
            .films
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["film1", "film2"]);
        assert!(notes.is_empty());
    }
}
