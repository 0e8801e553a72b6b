//! A linearization's inputs as a user gives them ([`LinearizeInputs`]):
//! the one builder both doors fill (`keywords::KEYWORDS` names and
//! describes each); every error names the input as its door's user wrote
//! it ([`Door::key`]).

use std::path::PathBuf;

use toml::{Table, Value};

use super::LinearizeRequest;
use crate::io::config::{self, ConfigError};
use crate::named::Named;
use crate::scenario::ScenarioKind;
use crate::workflow::WorkflowError;
use crate::workflow::keywords::{Door, TetherInputs, rename};

#[derive(Debug, Clone)]
pub struct LinearizeInputs {
    /// Over the swing-up's tether (tip mass 21 g): this model is for
    /// designing it.
    pub tether_inputs: TetherInputs,
    pub frequency_min_hz: f64,
    pub frequency_max_hz: f64,
    pub frequency_points: usize,
    pub modes: usize,
    pub out: PathBuf,
    pub force: bool,
}

impl Default for LinearizeInputs {
    /// `keywords::KEYWORDS`' defaults.
    fn default() -> Self {
        Self {
            tether_inputs: TetherInputs::default(),
            frequency_min_hz: 0.05,
            frequency_max_hz: 50.0,
            frequency_points: 400,
            modes: 4,
            out: PathBuf::from("linearize-results"),
            force: false,
        }
    }
}

/// The request's fields that an input sets, and the input.
const FIELD_KEYWORDS: [(&str, &str); 4] = [
    ("frequency_min_hz", "frequency_min"),
    ("frequency_max_hz", "frequency_max"),
    ("frequency_points", "frequency_points"),
    ("modes", "modes"),
];

impl LinearizeInputs {
    /// The request these inputs make; an error names the input as
    /// `door`'s user wrote it.
    pub fn request(&self, door: Door) -> Result<LinearizeRequest, WorkflowError> {
        let mut table = Table::new();
        let swingup = ScenarioKind::Swingup.name();
        table.insert("scenario".into(), Value::String(swingup.into()));
        table.insert("tether".into(), Value::Table(self.tether_inputs.table()));
        let params = match config::resolve(table) {
            Ok(config) => config.tether,
            Err(ConfigError::Input(e)) => {
                return Err(rename(e.into(), &TetherInputs::names(door)));
            }
            Err(e) => return Err(WorkflowError::Usage(e.to_string())),
        };
        Ok(LinearizeRequest {
            params,
            frequency_min_hz: self.frequency_min_hz,
            frequency_max_hz: self.frequency_max_hz,
            frequency_points: self.frequency_points,
            modes: self.modes,
            out: self.out.clone(),
            force: self.force,
        })
    }

    /// The linearization's error in the words of `door`.
    pub fn error(e: WorkflowError, door: Door) -> WorkflowError {
        rename(
            e,
            &FIELD_KEYWORDS.map(|(field, keyword)| (field, door.key(keyword))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_input_as_its_door_wrote_it() {
        let inputs = LinearizeInputs {
            tether_inputs: TetherInputs {
                length_m: Some(-1.0),
                ..TetherInputs::default()
            },
            ..LinearizeInputs::default()
        };
        for (door, name) in [(Door::CommandLine, "--length"), (Door::Python, "length")] {
            let e = inputs.request(door).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid {name} = -1")), "{e}");
        }
        let inputs = LinearizeInputs {
            frequency_points: 1,
            out: std::env::temp_dir().join("tether-sweep-never-written"),
            ..LinearizeInputs::default()
        };
        let request = inputs.request(Door::Python).unwrap();
        let e = super::super::run(&request).unwrap_err();
        let e = LinearizeInputs::error(e, Door::Python).to_string();
        assert!(e.starts_with("invalid frequency_points = 1"), "{e}");
        assert!(!inputs.out.exists());
    }
}
