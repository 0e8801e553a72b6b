//! A swing-up design's inputs as a user gives them ([`SwingupInputs`]):
//! the one builder both doors fill (`keywords::KEYWORDS` names and
//! describes each); every error names the input as its door's user wrote
//! it ([`Door::key`]).

use std::path::PathBuf;

use super::SwingupRequest;
use crate::engine::EngineOptions;
use crate::ga::{GaSettings, GeneCoding, SwingupProblem};
use crate::model::TetherParams;
use crate::scenario::winch::WinchMotion;
use crate::scenario::{SWINGUP_TIP_MASS_KG, Scenario, ScenarioKind};
use crate::workflow::WorkflowError;
use crate::workflow::keywords::{Door, TetherInputs, rename};

#[derive(Debug, Clone)]
pub struct SwingupInputs {
    pub elements: usize,
    pub damping_pa_s: f64,
    pub drag_coefficient: f64,
    pub tip_mass_kg: f64,
    pub winch_amplitude_m: f64,
    /// w0..w3, over the amplitude's.
    pub waypoints_m: Option<Vec<f64>>,
    pub duration_s: f64,
    pub bits_per_gene: u32,
    pub period_min_s: f64,
    pub period_max_s: f64,
    pub population: usize,
    pub generations: usize,
    pub seed: u64,
    pub tournament_size: usize,
    pub crossover_rate: f64,
    /// Default 1/bits.
    pub mutation_rate: Option<f64>,
    pub exhaustive: bool,
    /// Where it runs; its `solver` is the `solver` input.
    pub engine: EngineOptions,
    pub tolerance_m: f64,
    pub out: PathBuf,
    pub force: bool,
}

impl Default for SwingupInputs {
    /// `keywords::KEYWORDS`' defaults.
    fn default() -> Self {
        Self {
            elements: 40,
            damping_pa_s: 2000.0,
            drag_coefficient: 0.8,
            tip_mass_kg: SWINGUP_TIP_MASS_KG,
            winch_amplitude_m: 0.2,
            waypoints_m: None,
            duration_s: 3.0,
            bits_per_gene: 5,
            period_min_s: 0.25,
            period_max_s: 1.0,
            population: 10,
            generations: 30,
            seed: 2010,
            tournament_size: 2,
            crossover_rate: 0.8,
            mutation_rate: None,
            exhaustive: false,
            engine: EngineOptions::default(),
            tolerance_m: 1e-7,
            out: PathBuf::from("swingup-results"),
            force: false,
        }
    }
}

/// The request's fields that an input of its own sets (the tether's
/// besides: [`TetherInputs::names`]), and the input.
const FIELD_KEYWORDS: [(&str, &str); 11] = [
    ("waypoints_m", "waypoints"),
    ("duration_s", "duration"),
    ("bits_per_gene", "bits_per_gene"),
    ("period_min_s", "period_min"),
    ("period_max_s", "period_max"),
    ("population", "population"),
    ("generations", "generations"),
    ("tournament_size", "tournament_size"),
    ("crossover_rate", "crossover_rate"),
    ("mutation_rate", "mutation_rate"),
    ("tolerance_m", "tolerance"),
];

impl SwingupInputs {
    /// The request these inputs make (checked when it is prepared:
    /// [`Self::error`] names what that finds).
    pub fn request(&self) -> SwingupRequest {
        let params = TetherParams {
            elements: self.elements,
            damping_pa_s: self.damping_pa_s,
            drag_coefficient: self.drag_coefficient,
            tip_mass_kg: self.tip_mass_kg,
            ..TetherParams::default()
        };
        let mut scenario =
            Scenario::new(ScenarioKind::Swingup, params.length_m).with_duration_s(self.duration_s);
        if let Some(swingup) = scenario.as_swingup_mut() {
            swingup.winch.waypoints_m = self
                .waypoints_m
                .clone()
                .unwrap_or_else(|| WinchMotion::spec_waypoints(self.winch_amplitude_m));
        }
        SwingupRequest {
            problem: SwingupProblem {
                params,
                scenario,
                coding: GeneCoding {
                    bits_per_gene: self.bits_per_gene,
                    period_min_s: self.period_min_s,
                    period_max_s: self.period_max_s,
                },
            },
            settings: GaSettings {
                population: self.population,
                generations: self.generations,
                seed: self.seed,
                tournament_size: self.tournament_size,
                crossover_rate: self.crossover_rate,
                mutation_rate: self.mutation_rate,
            },
            exhaustive: self.exhaustive,
            engine: self.engine.clone(),
            tolerance_m: self.tolerance_m,
            out: self.out.clone(),
            force: self.force,
        }
    }

    /// The design's error in the words of `door`.
    pub fn error(e: WorkflowError, door: Door) -> WorkflowError {
        let mut names = TetherInputs::names(door);
        names.extend(FIELD_KEYWORDS.map(|(field, keyword)| (field, door.key(keyword))));
        rename(e, &names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_input_as_its_door_wrote_it() {
        let population = SwingupInputs {
            population: 1,
            ..SwingupInputs::default()
        };
        // A tether's value too, named by its flag's name.
        let damping = SwingupInputs {
            damping_pa_s: -1.0,
            ..SwingupInputs::default()
        };
        for (inputs, field) in [(population, "population"), (damping, "damping")] {
            for (door, name) in [
                (Door::CommandLine, format!("--{field}")),
                (Door::Python, field.to_string()),
            ] {
                let e = super::super::prepare(inputs.request())
                    .err()
                    .expect("refused");
                let named = SwingupInputs::error(e, door).to_string();
                assert!(named.starts_with(&format!("invalid {name} = ")), "{named}");
            }
        }
    }
}
