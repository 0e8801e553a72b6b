//! Synthetic "measured" marker tracks: a drop simulated by the reference
//! solver on a finer mesh than any identification candidate, with Gaussian
//! marker noise from a seeded generator, so that the shipped dataset can be
//! regenerated bit for bit and identification can be checked against a known
//! truth.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::Serialize;

use crate::error::{InputError, require_non_negative};
use crate::model::TetherParams;
use crate::scenario::{Scenario, SimulationOutput, SolverSettings, simulate};
use crate::solver::{ReferenceOptions, SolverError, SolverKind};
use crate::track::Track;

/// What defines a synthetic dataset; stored in its metadata.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthSpec {
    pub tether: TetherParams,
    pub scenario: Scenario,
    /// Standard deviation of the noise added to each marker coordinate \[m\].
    pub noise_std_m: f64,
    pub seed: u64,
    /// Reference solver's local error tolerance \[m\].
    pub tolerance_m: f64,
    /// Name of the noise generator, so a reader can reproduce the draws.
    pub generator: &'static str,
}

/// The generator: ChaCha8 seeded with `seed_from_u64`, normal variates from
/// rand_distr's `Normal` (versions pinned by Cargo.lock), drawn frame by
/// frame, marker by marker, x then y.
pub const GENERATOR: &str =
    "rand_chacha::ChaCha8Rng::seed_from_u64 + rand_distr::Normal, order (frame, marker, x|y)";

impl SynthSpec {
    pub fn validate(&self) -> Result<(), InputError> {
        require_non_negative("noise", self.noise_std_m)?;
        if !(self.tolerance_m.is_finite() && self.tolerance_m > 0.0) {
            return Err(InputError::new(
                "tolerance",
                self.tolerance_m,
                "a length > 0 m",
            ));
        }
        self.tether.validate()?;
        self.scenario.validate(self.tether.length_m)?;
        self.scenario.check_track_memory()
    }
}

/// Simulates the noise-free track and adds the noise. Returns the noisy
/// track and the solver's output (with the noise-free track).
pub fn synthesize(spec: &SynthSpec) -> Result<(Track, SimulationOutput), SolverError> {
    spec.validate()?;
    let settings = SolverSettings {
        kind: SolverKind::Reference,
        step_s: None,
        reference: ReferenceOptions {
            tolerance_m: spec.tolerance_m,
            ..Default::default()
        },
    };
    let clean = simulate(&spec.scenario, &spec.tether, &settings)?;
    let mut noisy = clean.track.clone();
    add_noise(&mut noisy, spec.noise_std_m, spec.seed);
    Ok((noisy, clean))
}

/// Adds independent N(0, σ²) noise to every coordinate, in a fixed order.
pub fn add_noise(track: &mut Track, std_m: f64, seed: u64) {
    if std_m == 0.0 {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let normal = Normal::new(0.0, std_m).expect("validated: finite and >= 0");
    for p in track.positions_m.iter_mut() {
        p[0] += normal.sample(&mut rng);
        p[1] += normal.sample(&mut rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioKind;

    fn track() -> Track {
        Track {
            times_s: vec![0.0, 0.04],
            marker_arc_lengths_m: vec![0.0, 0.6],
            positions_m: vec![[0.0; 2]; 4],
        }
    }

    #[test]
    fn noise_is_reproducible_and_has_the_requested_spread() {
        let (mut a, mut b) = (track(), track());
        add_noise(&mut a, 5e-4, 7);
        add_noise(&mut b, 5e-4, 7);
        assert_eq!(a, b);
        let mut c = track();
        add_noise(&mut c, 5e-4, 8);
        assert_ne!(a, c);
        // Spread over many draws.
        let mut big = Track {
            times_s: (0..1000).map(|i| i as f64).collect(),
            marker_arc_lengths_m: vec![0.0; 10],
            positions_m: vec![[0.0; 2]; 10_000],
        };
        add_noise(&mut big, 5e-4, 1);
        let values: Vec<f64> = big.positions_m.iter().flatten().copied().collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
        assert!(mean.abs() < 2e-5, "{mean}");
        assert!((var.sqrt() / 5e-4 - 1.0).abs() < 0.02, "{}", var.sqrt());
    }

    #[test]
    fn negative_noise_is_rejected() {
        let tether = TetherParams::default();
        let spec = SynthSpec {
            scenario: Scenario::new(ScenarioKind::Drop, tether.length_m),
            tether,
            noise_std_m: -1.0,
            seed: 0,
            tolerance_m: 1e-10,
            generator: GENERATOR,
        };
        assert_eq!(spec.validate().unwrap_err().field, "noise");
    }
}
