//! Material, geometry and load parameters of the tether (docs/model.md §1, §2).

use serde::{Deserialize, Serialize};

use crate::error::{InputError, require_non_negative, require_positive};

/// The largest mesh the engine accepts. Far beyond what the identification
/// grid needs (50); it bounds memory and the O(n³) eigen-analysis used to
/// choose the explicit step.
pub const MAX_ELEMENTS: usize = 1024;

/// Every physical input of one tether. Defaults are docs/model.md §1 with no
/// damping, no drag and no tip mass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TetherParams {
    /// Number of ANCF elements n.
    pub elements: usize,
    pub length_m: f64,
    pub width_m: f64,
    pub thickness_m: f64,
    pub youngs_modulus_pa: f64,
    pub density_kg_m3: f64,
    pub air_density_kg_m3: f64,
    pub gravity_m_s2: f64,
    /// Kelvin–Voigt material damping D.
    pub damping_pa_s: f64,
    /// Air drag coefficient C_D.
    pub drag_coefficient: f64,
    /// Point mass at the free end (node n).
    pub tip_mass_kg: f64,
    /// Include ρ_t I ∫ S_xᵀ S_x ds in the mass matrix (docs/model.md §2).
    pub rotary_inertia: bool,
}

impl Default for TetherParams {
    fn default() -> Self {
        Self {
            elements: 10,
            length_m: 0.6,
            width_m: 0.020,
            thickness_m: 0.002,
            youngs_modulus_pa: 9.4e6,
            density_kg_m3: 920.0,
            air_density_kg_m3: 1.293,
            gravity_m_s2: 9.8,
            damping_pa_s: 0.0,
            drag_coefficient: 0.0,
            tip_mass_kg: 0.0,
            rotary_inertia: true,
        }
    }
}

/// The shortest and longest tether the model takes \[m\].
pub const MIN_LENGTH_M: f64 = 1e-3;
pub const MAX_LENGTH_M: f64 = 1e3;

impl TetherParams {
    /// Cross-section area a = b h.
    pub fn area_m2(&self) -> f64 {
        self.width_m * self.thickness_m
    }

    /// Second moment of area I = b h³ / 12.
    pub fn second_moment_m4(&self) -> f64 {
        self.width_m * self.thickness_m.powi(3) / 12.0
    }

    pub fn element_length_m(&self) -> f64 {
        self.length_m / self.elements as f64
    }

    /// ½ ρ_air C_D b: drag force per (projected length · speed²) [kg/m³ · m].
    pub fn drag_factor_kg_m3(&self) -> f64 {
        0.5 * self.air_density_kg_m3 * self.drag_coefficient * self.width_m
    }

    pub fn mass_per_length_kg_m(&self) -> f64 {
        self.density_kg_m3 * self.area_m2()
    }

    /// The keys of the fields an identification grid varies, as a config's
    /// `[tether]` and the results' columns name them (`sweep::Axis`).
    pub const ELEMENTS: &str = "elements";
    pub const DAMPING_PA_S: &str = "damping_pa_s";
    pub const DRAG_COEFFICIENT: &str = "drag_coefficient";

    /// Rejects anything the model cannot represent, naming the field.
    pub fn validate(&self) -> Result<(), InputError> {
        if self.elements == 0 || self.elements > MAX_ELEMENTS {
            return Err(InputError::new(
                Self::ELEMENTS,
                self.elements,
                format!("an integer from 1 to {MAX_ELEMENTS}"),
            ));
        }
        // From a millimetre to a kilometre: beyond, the mass matrix's
        // pivots fall below f64's resolution of its largest entry.
        if !(MIN_LENGTH_M..=MAX_LENGTH_M).contains(&self.length_m) {
            return Err(InputError::new(
                "length_m",
                self.length_m,
                format!("a length from {MIN_LENGTH_M} to {MAX_LENGTH_M} m"),
            ));
        }
        require_positive("width_m", self.width_m)?;
        require_positive("thickness_m", self.thickness_m)?;
        require_positive("youngs_modulus_pa", self.youngs_modulus_pa)?;
        require_positive("density_kg_m3", self.density_kg_m3)?;
        require_non_negative("air_density_kg_m3", self.air_density_kg_m3)?;
        require_non_negative("gravity_m_s2", self.gravity_m_s2)?;
        require_non_negative(Self::DAMPING_PA_S, self.damping_pa_s)?;
        require_non_negative(Self::DRAG_COEFFICIENT, self.drag_coefficient)?;
        require_non_negative("tip_mass_kg", self.tip_mass_kg)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_table_1() {
        let p = TetherParams::default();
        assert!((p.area_m2() - 4.0e-5).abs() < 1e-18);
        assert!((p.second_moment_m4() - 1.3333e-11).abs() < 1e-15);
        p.validate().unwrap();
    }

    #[test]
    fn invalid_fields_are_named() {
        let bad = TetherParams {
            damping_pa_s: -1.0,
            ..Default::default()
        };
        let err = bad.validate().unwrap_err();
        assert_eq!(err.field, TetherParams::DAMPING_PA_S);
        assert!(err.to_string().contains(">= 0"));
        let bad = TetherParams {
            elements: 0,
            ..Default::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, TetherParams::ELEMENTS);
        let bad = TetherParams {
            length_m: f64::NAN,
            ..Default::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "length_m");
    }
}
