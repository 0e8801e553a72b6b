//! A simulation's inputs as a user gives them ([`SimulateInputs`]): the
//! one builder both doors fill, the command line from its flags and the
//! Python package from its keywords (`keywords::KEYWORDS` names and
//! describes each). It makes the job of them ([`SimulateJob`]): the
//! tether's run with its config (a file or tables in memory, the inputs
//! over it), or a constrained body's; an input the other kind of run
//! takes is refused, and every error names the input as its door's user
//! wrote it ([`Door::key`]), a config's key by the config.

use std::path::PathBuf;

use toml::{Table, Value};

use super::SimulateRequest;
use crate::engine::{Backend, EngineOptions};
use crate::gpu::{LayoutRequest, Precision};
use crate::io::config::SimulationConfig;
use crate::named::{Named, display_and_parse_by_name};
use crate::scenario::ScenarioKind;
use crate::workflow::WorkflowError;
use crate::workflow::bodies::{BodyInputs, BodyKind, FormulationKind};
use crate::workflow::keywords::{ConfigInput, Door, TetherInputs, rename, resolve_config};

/// What `simulate` runs: one of the tether's experiments, or a
/// constrained body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimulateScenario {
    Tether(ScenarioKind),
    Body(BodyKind),
}

impl Named for SimulateScenario {
    const WHAT: &'static str = "scenario";
    const ALL: &'static [Self] = &[
        Self::Tether(ScenarioKind::Drop),
        Self::Tether(ScenarioKind::Swingup),
        Self::Body(BodyKind::Arm),
        Self::Body(BodyKind::Robot),
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Tether(kind) => kind.name(),
            Self::Body(kind) => kind.name(),
        }
    }

    fn help(self) -> &'static str {
        match self {
            Self::Tether(kind) => kind.help(),
            Self::Body(kind) => kind.help(),
        }
    }
}

display_and_parse_by_name!(SimulateScenario);

/// Everything a user can give `simulate`, as given.
#[derive(Debug, Clone, Default)]
pub struct SimulateInputs {
    pub config: Option<ConfigInput>,
    /// Default: the tether's drop.
    pub scenario: Option<SimulateScenario>,
    pub formulation: Option<FormulationKind>,
    /// K_P, K_D.
    pub feedback_gains: Option<Vec<f64>>,
    pub alpha: Option<f64>,
    pub curvature_per_m: Option<f64>,
    /// A body's swept parameters, `NAME=AXIS` each.
    pub axes: Vec<String>,
    /// The arm carries a tether.
    pub tether: bool,
    pub start_offset_m: Option<f64>,
    /// The tether's own (n, D, C_D, …), over the config's.
    pub tether_inputs: TetherInputs,
    pub step_s: Option<f64>,
    /// The tether's local error tolerance \[m\], or a body's relative one.
    pub tolerance: Option<f64>,
    pub duration_s: Option<f64>,
    pub winch_periods_s: Option<Vec<f64>>,
    pub winch_amplitude_m: Option<f64>,
    /// Where it runs; its `solver` is the `solver` input.
    pub engine: EngineOptions,
    /// `[tether]`, `[settings]` and `[camera]` keys over the config's (a
    /// config of their own without one).
    pub overlays: Table,
    pub out: PathBuf,
    pub state: Option<PathBuf>,
    pub force: bool,
}

/// A simulation, ready to run.
#[derive(Debug, Clone)]
// Made once a run and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum SimulateJob {
    Tether(SimulateRequest),
    Body(BodyKind, BodyInputs),
}

/// The other config keys that an input of its own sets, and the input.
const CONFIG_KEYWORDS: [(&str, &str); 7] = [
    ("step_s", "step"),
    ("tolerance_m", "tolerance"),
    ("duration_s", "duration"),
    ("winch_amplitude_m", "winch_amplitude"),
    ("winch_periods_s", "winch_periods"),
    ("winch_waypoints_m", "winch_amplitude"),
    ("scenario", "scenario"),
];

/// A body's fields (`BodyInputs`' errors name them) and their inputs.
const BODY_KEYWORDS: [(&str, &str); 7] = [
    ("duration", "duration"),
    ("tolerance", "tolerance"),
    ("feedback_gains", "feedback_gains"),
    ("alpha", "alpha"),
    ("curvature", "curvature"),
    ("start_offset_m", "start_offset_m"),
    ("out", "out"),
];

impl SimulateInputs {
    /// The job these inputs make; an error names the input as `door`'s
    /// user wrote it.
    pub fn job(&self, door: Door) -> Result<SimulateJob, WorkflowError> {
        let body = match self.scenario {
            Some(SimulateScenario::Body(body)) => Some(body),
            _ => None,
        };
        self.refuse_misplaced(body.is_some(), door)?;
        let Some(body) = body else {
            return Ok(SimulateJob::Tether(SimulateRequest {
                config: self.config(self.overrides(), door)?,
                engine: self.engine.clone(),
                out: self.out.clone(),
                state: self.state.clone(),
                force: self.force,
            }));
        };
        let tether = match self.tether {
            // The tether the arm carries: the drop's tether with the
            // inputs' and the config's [tether] (its settings are not the
            // body's run's).
            true => {
                let mut overrides = Table::new();
                overrides.insert("tether".into(), Value::Table(self.tether_inputs.table()));
                Some(self.config(overrides, door)?.tether)
            }
            false => None,
        };
        Ok(SimulateJob::Body(
            body,
            BodyInputs {
                formulation: self.formulation,
                feedback_gains: self.feedback_gains.clone(),
                alpha: self.alpha,
                curvature_per_m: self.curvature_per_m,
                start_offset_m: self.start_offset_m,
                duration_s: self.duration_s,
                tolerance: self.tolerance,
                tether,
                engine: self.engine.clone(),
                axes: self.axes.clone(),
                out: self.out.clone(),
                force: self.force,
            },
        ))
    }

    /// A body's error in the words of `door`: a field by its input, a
    /// swept value by its axis.
    pub fn body_error(e: WorkflowError, door: Door) -> WorkflowError {
        match e {
            WorkflowError::Input(mut input) if input.field.split(' ').next() == Some("axis") => {
                input.field = format!("{}{}", door.key("axis"), &input.field["axis".len()..]);
                let field = input.field.clone();
                WorkflowError::flag(&field, input)
            }
            other => {
                let names = BODY_KEYWORDS.map(|(field, keyword)| (field, door.key(keyword)));
                rename(other, &names)
            }
        }
    }

    /// The inputs as a TOML table in the config file's layout.
    fn overrides(&self) -> Table {
        let mut root = Table::new();
        let mut settings = Table::new();
        if let Some(SimulateScenario::Tether(s)) = self.scenario {
            root.insert("scenario".into(), Value::String(s.name().into()));
        }
        if let Some(s) = self.engine.solver {
            root.insert("solver".into(), Value::String(s.name().into()));
        }
        for (key, value) in [("step_s", self.step_s), ("tolerance_m", self.tolerance)] {
            if let Some(v) = value {
                root.insert(key.into(), Value::Float(v));
            }
        }
        for (key, value) in [
            ("duration_s", self.duration_s),
            ("winch_amplitude_m", self.winch_amplitude_m),
        ] {
            if let Some(v) = value {
                settings.insert(key.into(), Value::Float(v));
            }
        }
        if let Some(p) = &self.winch_periods_s {
            settings.insert(
                "winch_periods_s".into(),
                Value::Array(p.iter().map(|&v| Value::Float(v)).collect()),
            );
        }
        root.insert("tether".into(), Value::Table(self.tether_inputs.table()));
        root.insert("settings".into(), Value::Table(settings));
        root
    }

    /// The config (a file, tables in memory, or none: the defaults) with
    /// the overlays and `overrides` over it; a value an input gave is
    /// named by that input, any other by its key and the config.
    fn config(&self, overrides: Table, door: Door) -> Result<SimulationConfig, WorkflowError> {
        let mut names = TetherInputs::names(door);
        names.extend(CONFIG_KEYWORDS.map(|(key, keyword)| (key, door.key(keyword))));
        let job = "a simulation makes its track";
        resolve_config(self.config.as_ref(), &self.overlays, overrides, &names, job)
    }

    /// An input of the other kind of run refused, named as `door` writes
    /// it: a body's beside the tether's runs, theirs and the GPU's beside
    /// a body, the tether's own beside a body that carries none.
    fn refuse_misplaced(&self, body: bool, door: Door) -> Result<(), WorkflowError> {
        let bodies = door.given("scenario", "arm or robot");
        let carried = door.switch("tether");
        let body_s = format!("is a constrained body's ({bodies}), not the tether's");
        let own = format!(
            "is the tether's: a constrained body takes it only with {carried} (the arm carrying it)"
        );
        let runs = "is the tether's drop or swing-up run's, not a constrained body's".to_string();
        let gpu = format!(
            "is the GPU engine's; the constrained bodies run on the CPU (f64), the tether an arm carries ({carried}) on either"
        );
        let (e, a) = (&self.engine, self);
        let (tether, bare) = (!body, body && !self.tether);
        let overlay = |key: &str| a.overlays.contains_key(key);
        let key = |keyword: &str| door.key(keyword);
        let tether_given = a.tether_inputs.given();
        let tether_own = tether_given
            .iter()
            .map(|(k, given)| (key(k), bare && *given, &own));
        #[rustfmt::skip]
        let given = [
            (key("axis"), tether && !a.axes.is_empty(), &body_s),
            (key("formulation"), tether && a.formulation.is_some(), &body_s),
            (key("feedback_gains"), tether && a.feedback_gains.is_some(), &body_s),
            (key("alpha"), tether && a.alpha.is_some(), &body_s),
            (key("curvature"), tether && a.curvature_per_m.is_some(), &body_s),
            (key("start_offset_m"), tether && a.start_offset_m.is_some(), &body_s),
            (key("tether"), tether && a.tether, &body_s),
            (key("config"), bare && a.config.is_some(), &own),
            (key("tether"), bare && overlay("tether"), &own),
            (key("solver"), body && e.solver.is_some(), &runs),
            (key("step"), body && a.step_s.is_some(), &runs),
            (key("winch_periods"), body && a.winch_periods_s.is_some(), &runs),
            (key("winch_amplitude"), body && a.winch_amplitude_m.is_some(), &runs),
            (key("state"), body && a.state.is_some(), &runs),
            (key("settings"), body && overlay("settings"), &runs),
            (key("camera"), body && overlay("camera"), &runs),
            (door.given("backend", "gpu"), bare && e.backend == Backend::Gpu, &gpu),
            (key("precision"), bare && e.precision != Precision::F32, &gpu),
            (key("adapter"), bare && e.adapter.is_some(), &gpu),
            (key("gpu_layout"), bare && e.gpu_layout != LayoutRequest::Auto, &gpu),
        ];
        let mut given = given.into_iter().chain(tether_own);
        match given.find(|(_, given, _)| *given) {
            Some((input, _, why)) => Err(WorkflowError::Usage(format!("{input} {why}"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_error(inputs: &SimulateInputs, door: Door) -> String {
        inputs.job(door).unwrap_err().to_string()
    }

    #[test]
    fn an_error_names_the_input_as_its_door_wrote_it() {
        let inputs = SimulateInputs {
            tether_inputs: TetherInputs {
                length_m: Some(-1.0),
                ..TetherInputs::default()
            },
            ..SimulateInputs::default()
        };
        for (door, name) in [(Door::CommandLine, "--length"), (Door::Python, "length")] {
            let e = job_error(&inputs, door);
            assert!(e.starts_with(&format!("invalid {name} = -1")), "{e}");
        }
        let arm = SimulateInputs {
            scenario: Some(SimulateScenario::Body(BodyKind::Arm)),
            tether_inputs: TetherInputs {
                damping_pa_s: Some(2000.0),
                ..TetherInputs::default()
            },
            ..SimulateInputs::default()
        };
        let e = job_error(&arm, Door::Python);
        assert!(e.starts_with("damping is the tether's"), "{e}");
        assert!(e.contains("only with tether=True"), "{e}");
        let e = job_error(&arm, Door::CommandLine);
        assert!(
            e.starts_with("--damping is the tether's") && e.contains("only with --tether"),
            "{e}"
        );
        let drop = SimulateInputs {
            alpha: Some(10.0),
            ..SimulateInputs::default()
        };
        let e = job_error(&drop, Door::Python);
        assert!(
            e.starts_with("alpha is a constrained body's (scenario=arm or robot)"),
            "{e}"
        );
    }

    #[test]
    fn a_config_in_memory_is_named_by_its_label_and_the_overlays_apply() {
        let mut tether = Table::new();
        tether.insert("length_m".into(), Value::Float(-1.0));
        let mut table = Table::new();
        table.insert("tether".into(), Value::Table(tether.clone()));
        let inputs = SimulateInputs {
            config: Some(ConfigInput::Tables {
                label: "config".into(),
                table,
                measured: None,
            }),
            ..SimulateInputs::default()
        };
        let e = job_error(&inputs, Door::Python);
        assert!(e.contains("length_m (in config)"), "{e}");
        // An input of its own over the config's key is named as given.
        let inputs = SimulateInputs {
            tether_inputs: TetherInputs {
                length_m: Some(-2.0),
                ..TetherInputs::default()
            },
            ..inputs
        };
        assert!(job_error(&inputs, Door::Python).starts_with("invalid length = -2"));
        // A [tether] dict alone is a config of its own.
        tether.insert("length_m".into(), Value::Float(0.5));
        let mut overlays = Table::new();
        overlays.insert("tether".into(), Value::Table(tether));
        let inputs = SimulateInputs {
            overlays,
            tether_inputs: TetherInputs {
                elements: Some(4),
                ..TetherInputs::default()
            },
            ..SimulateInputs::default()
        };
        let Ok(SimulateJob::Tether(request)) = inputs.job(Door::Python) else {
            panic!("the tether's run");
        };
        assert_eq!(request.config.tether.length_m, 0.5);
        assert_eq!(request.config.tether.elements, 4);
    }

    #[test]
    fn every_scenario_is_named_once() {
        let names: Vec<_> = SimulateScenario::ALL.iter().map(|s| s.name()).collect();
        let expected: Vec<_> = (ScenarioKind::ALL.iter().map(|s| s.name()))
            .chain(BodyKind::ALL.iter().map(|b| b.name()))
            .collect();
        assert_eq!(names, expected);
        assert_eq!(
            "robot".parse::<SimulateScenario>(),
            Ok(SimulateScenario::Body(BodyKind::Robot))
        );
    }
}
