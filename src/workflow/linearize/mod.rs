//! The linearized model about the hanging equilibrium: modes, state space
//! and the winch-to-tip frequency response, as Parquet tables and figures.
//! Its inputs as either door gives them: `inputs`, each named and
//! described in `keywords`.

mod inputs;
mod keywords;

pub use inputs::LinearizeInputs;
pub use keywords::KEYWORDS;

use std::path::PathBuf;
use std::time::Instant;

use nalgebra::Complex;

use super::{WorkflowError, claim_output};
use crate::error::InputError;
use crate::io::linear::{nodal_shape, write_linear_analysis};
use crate::metadata::{self, json};
use crate::model::{Tether, TetherParams};
use crate::plot::linear::{BodePlot, ModeShapePlot};
use crate::solver::linear_model::{LinearModel, OUTPUTS, log_spaced};
use crate::solver::modal::{Mode, modes};

/// A linearization, as the user asked for it.
#[derive(Debug, Clone)]
pub struct LinearizeRequest {
    pub params: TetherParams,
    pub frequency_min_hz: f64,
    pub frequency_max_hz: f64,
    pub frequency_points: usize,
    /// How many of the lowest modes to draw.
    pub modes: usize,
    pub out: PathBuf,
    pub force: bool,
}

/// What the linearization found and wrote.
#[derive(Debug, Clone)]
pub struct LinearizeReport {
    pub params: TetherParams,
    /// Static stretch of the tip under gravity \[m\].
    pub stretch_m: f64,
    /// Every mode, lowest first.
    pub modes: Vec<Mode>,
    pub frequencies_hz: Vec<f64>,
    /// Per frequency, per output (tip x, tip y): tip per unit winch position.
    pub responses: Vec<[Complex<f64>; 2]>,
    pub wall_s: f64,
    /// The files written.
    pub written: Vec<PathBuf>,
}

impl LinearizeRequest {
    fn validate(&self) -> Result<(), InputError> {
        if !(self.frequency_min_hz.is_finite() && self.frequency_min_hz > 0.0) {
            return Err(InputError::new(
                "frequency_min_hz",
                self.frequency_min_hz,
                "a frequency > 0 Hz",
            ));
        }
        if !(self.frequency_max_hz.is_finite() && self.frequency_max_hz > self.frequency_min_hz) {
            return Err(InputError::new(
                "frequency_max_hz",
                self.frequency_max_hz,
                format!(
                    "a frequency above the lowest one, {} Hz",
                    self.frequency_min_hz
                ),
            ));
        }
        if !(2..=100_000).contains(&self.frequency_points) {
            return Err(InputError::new(
                "frequency_points",
                self.frequency_points,
                "from 2 to 100000",
            ));
        }
        if self.modes == 0 {
            return Err(InputError::new("modes", 0, "at least 1"));
        }
        Ok(())
    }
}

pub fn run(request: &LinearizeRequest) -> Result<LinearizeReport, WorkflowError> {
    request.validate()?;
    let params = &request.params;
    params.validate()?;
    claim_output(&request.out, "modes.parquet", request.force)?;

    let started = Instant::now();
    let tether = Tether::new(params.clone())?;
    let pin = [0.0, 0.0];
    let model = LinearModel::about_hanging_equilibrium(&tether, pin)
        .map_err(super::solver("linearization failed"))?;
    let all_modes = modes(&tether, &model.equilibrium).map_err(super::solver("modal analysis"))?;
    let state_space = model.state_space().map_err(super::solver("state space"))?;
    let frequencies = log_spaced(
        request.frequency_min_hz,
        request.frequency_max_hz,
        request.frequency_points,
    );
    let responses = model
        .frequency_responses(&frequencies)
        .map_err(super::solver("frequency response"))?;
    let wall_s = started.elapsed().as_secs_f64();

    let mut metadata = metadata::base();
    metadata.insert(metadata::TETHER.into(), json(params));
    metadata.insert(
        metadata::LINEARIZATION.into(),
        serde_json::json!({
            "about": "hanging static equilibrium, winch at (0, 0), at rest",
            "input": "winch position x_0 [m]",
            "outputs": OUTPUTS,
            "damping_ratio": "modal: phi^T C phi / (2 omega) with mass-normalised undamped modes",
            "air_drag": "quadratic in velocity, so its linearization at rest is zero: only Kelvin-Voigt damping enters C",
        })
        .to_string(),
    );
    let mut written = write_linear_analysis(
        &request.out,
        &tether,
        &all_modes,
        &state_space,
        &frequencies,
        &responses,
        &metadata,
    )?;

    let two_pi = 2.0 * std::f64::consts::PI;
    let label = format!(
        "n = {}, D = {} Pa·s, tip mass {} kg",
        params.elements, params.damping_pa_s, params.tip_mass_kg
    );
    let bode = BodePlot {
        title: format!("Winch position to tip ({label})"),
        frequencies_hz: frequencies.clone(),
        responses: OUTPUTS
            .iter()
            .enumerate()
            .map(|(k, name)| (name.to_string(), responses.iter().map(|r| r[k]).collect()))
            .collect(),
        natural_frequencies_hz: all_modes.iter().map(|m| m.omega_rad_s / two_pi).collect(),
    };
    crate::plot::save(&request.out.join("bode"), &bode)?;
    let shapes = ModeShapePlot {
        title: format!("Lowest modes, hanging equilibrium ({label})"),
        modes: all_modes
            .iter()
            .take(request.modes)
            .enumerate()
            .map(|(k, m)| {
                let points = nodal_shape(&tether, m)
                    .into_iter()
                    .map(|(node, dx, _)| (dx, model.equilibrium[4 * node + 1]))
                    .collect();
                (
                    format!("mode {}: {:.3} Hz", k + 1, m.omega_rad_s / two_pi),
                    points,
                )
            })
            .collect(),
    };
    crate::plot::save(&request.out.join("mode_shapes"), &shapes)?;
    for figure in ["bode", "mode_shapes"] {
        for ext in ["svg", "png"] {
            written.push(request.out.join(format!("{figure}.{ext}")));
        }
    }
    Ok(LinearizeReport {
        stretch_m: -model.equilibrium[tether.tip_index() + 1] - params.length_m,
        params: params.clone(),
        modes: all_modes,
        frequencies_hz: frequencies,
        responses,
        wall_s,
        written,
    })
}
