//! A synthetic drop's inputs as a user gives them ([`SynthInputs`]): the
//! one builder both doors fill (`keywords::KEYWORDS` names and describes
//! each); every error names the input as its door's user wrote it
//! ([`Door::key`]), a config's key by the config.

use std::path::PathBuf;

use toml::{Table, Value};

use super::SynthRequest;
use crate::dataset::{GENERATOR, SynthSpec};
use crate::io::track::TrackLayout;
use crate::scenario::ScenarioKind;
use crate::workflow::WorkflowError;
use crate::workflow::keywords::{ConfigInput, Door, TetherInputs, rename, resolve_config};

#[derive(Debug, Clone)]
pub struct SynthInputs {
    /// n, D and C_D (default the shipped dataset's: 80, 2000 Pa·s, 0.8),
    /// and the tip mass and length over the config's.
    pub tether_inputs: TetherInputs,
    pub noise_m: f64,
    pub seed: u64,
    pub tolerance_m: f64,
    pub layout: TrackLayout,
    /// A filmed drop of the user's own; None: the paper's.
    pub config: Option<ConfigInput>,
    /// `[tether]`, `[settings]` and `[camera]` keys over the config's (a
    /// config of their own without one).
    pub overlays: Table,
    /// The command line or the call, recorded in the file.
    pub command: String,
    pub out: PathBuf,
    pub force: bool,
}

/// The shipped dataset's n, D and C_D.
const SHIPPED: (i64, f64, f64) = (80, 2000.0, 0.8);

impl Default for SynthInputs {
    /// `keywords::KEYWORDS`' defaults.
    fn default() -> Self {
        Self {
            tether_inputs: TetherInputs::default(),
            noise_m: 5e-4,
            seed: 2010,
            tolerance_m: 1e-10,
            layout: TrackLayout::Long,
            config: None,
            overlays: Table::new(),
            command: String::new(),
            out: PathBuf::from("measured.parquet"),
            force: false,
        }
    }
}

impl SynthInputs {
    /// The request these inputs make; an error names the input as
    /// `door`'s user wrote it, a config's key by the config.
    pub fn request(&self, door: Door) -> Result<SynthRequest, WorkflowError> {
        let t = &self.tether_inputs;
        let tether = TetherInputs {
            elements: Some(t.elements.unwrap_or(SHIPPED.0)),
            damping_pa_s: Some(t.damping_pa_s.unwrap_or(SHIPPED.1)),
            drag_coefficient: Some(t.drag_coefficient.unwrap_or(SHIPPED.2)),
            ..t.clone()
        };
        let mut overrides = Table::new();
        overrides.insert("tether".into(), Value::Table(tether.table()));
        let names = TetherInputs::names(door);
        let job = "a synthetic drop makes its film";
        let cfg = resolve_config(self.config.as_ref(), &self.overlays, overrides, &names, job)?;
        if cfg.scenario.kind() != ScenarioKind::Drop {
            return Err(WorkflowError::Usage(
                "dataset synth makes a drop: scenario = \"drop\" (the default)".into(),
            ));
        }
        Ok(SynthRequest {
            spec: SynthSpec {
                scenario: cfg.scenario,
                tether: cfg.tether,
                noise_std_m: self.noise_m,
                seed: self.seed,
                tolerance_m: self.tolerance_m,
                generator: GENERATOR,
            },
            camera: cfg.camera,
            layout: self.layout,
            command: self.command.clone(),
            out: self.out.clone(),
            force: self.force,
        })
    }

    /// The synthesis's error in the words of `door`.
    pub fn error(e: WorkflowError, door: Door) -> WorkflowError {
        let mut names = TetherInputs::names(door);
        names.push(("noise", door.key("noise")));
        rename(e, &names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_shipped_datasets_and_errors_name_the_input() {
        let request = SynthInputs::default().request(Door::Python).unwrap();
        assert_eq!(request.spec.tether.elements, 80);
        assert_eq!(request.spec.tether.damping_pa_s, 2000.0);
        assert_eq!(request.spec.tether.drag_coefficient, 0.8);
        assert!(request.spec.tether.rotary_inertia);
        let inputs = SynthInputs {
            tether_inputs: TetherInputs {
                length_m: Some(-1.0),
                ..TetherInputs::default()
            },
            ..SynthInputs::default()
        };
        for (door, name) in [(Door::CommandLine, "--length"), (Door::Python, "length")] {
            let e = inputs.request(door).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid {name} = -1")), "{e}");
        }
        let mut settings = Table::new();
        settings.insert("initial_angle_deg".into(), Value::String("x".into()));
        let mut overlays = Table::new();
        overlays.insert("settings".into(), Value::Table(settings));
        let inputs = SynthInputs {
            overlays,
            ..SynthInputs::default()
        };
        let e = inputs.request(Door::Python).unwrap_err().to_string();
        assert!(
            e.contains("initial_angle_deg") && e.contains("config"),
            "{e}"
        );
    }
}
