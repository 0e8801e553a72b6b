//! What the identification examples share: the filmed drop's tether and a
//! synthetic film of it (`dataset synth`'s generator at 1e-10 m).

use std::path::Path;

use tether_sweep::dataset::{GENERATOR, SynthSpec};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::Scenario;
use tether_sweep::workflow::synth::{self, SynthRequest};

/// The filmed drop's tether (docs/identify.md): 0.5 m, 2.5 mm thick, E
/// 8 MPa, 1000 kg/m³, D 2300 Pa·s, C_D 0.77, at `elements`.
pub fn filmed_tether(elements: usize) -> TetherParams {
    TetherParams {
        elements,
        length_m: 0.5,
        thickness_m: 0.0025,
        youngs_modulus_pa: 8e6,
        density_kg_m3: 1000.0,
        damping_pa_s: 2300.0,
        drag_coefficient: 0.77,
        ..TetherParams::default()
    }
}

/// A film of `tether` in `scenario` with Gaussian marker noise of
/// `noise_m` (seed `seed`) written to `out`, recorded as made by
/// `command`.
pub fn film(
    scenario: &Scenario,
    tether: &TetherParams,
    noise_m: f64,
    seed: u64,
    out: &Path,
    command: &str,
) {
    synth::run(&SynthRequest {
        camera: Default::default(),
        layout: Default::default(),
        spec: SynthSpec {
            scenario: scenario.clone(),
            tether: tether.clone(),
            noise_std_m: noise_m,
            seed,
            tolerance_m: 1e-10,
            generator: GENERATOR,
        },
        command: command.into(),
        out: out.to_path_buf(),
        force: false,
    })
    .expect("synthesized");
}
