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
        for (field, value, positive, max, unit) in self.ranged() {
            match positive {
                true => require_positive(field, value)?,
                false => require_non_negative(field, value)?,
            }
            if value > max {
                return Err(InputError::number(
                    field,
                    value,
                    format!("at most {} {unit}", crate::error::number(max)).trim_end(),
                ));
            }
        }
        Ok(())
    }

    /// Every real field with its range: wide enough for any tether a
    /// laboratory films (a hair to a hawser, foam to steel, in air or
    /// water), narrow enough that the products the model forms (ρ b h,
    /// E b h³/12, ½ ρ_air C_D b) stay finite in f64 and f32. Each: (field,
    /// value, whether it must be positive rather than only not negative,
    /// its largest value, unit).
    fn ranged(&self) -> [(&'static str, f64, bool, f64, &'static str); 9] {
        [
            ("width_m", self.width_m, true, 10.0, "m"),
            ("thickness_m", self.thickness_m, true, 1.0, "m"),
            (
                "youngs_modulus_pa",
                self.youngs_modulus_pa,
                true,
                1e13,
                "Pa",
            ),
            ("density_kg_m3", self.density_kg_m3, true, 1e5, "kg/m³"),
            (
                "air_density_kg_m3",
                self.air_density_kg_m3,
                false,
                1e4,
                "kg/m³",
            ),
            ("gravity_m_s2", self.gravity_m_s2, false, 1e3, "m/s²"),
            (Self::DAMPING_PA_S, self.damping_pa_s, false, 1e12, "Pa·s"),
            (
                Self::DRAG_COEFFICIENT,
                self.drag_coefficient,
                false,
                1e3,
                "",
            ),
            ("tip_mass_kg", self.tip_mass_kg, false, 1e6, "kg"),
        ]
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
    fn every_real_field_is_bounded_and_named() {
        let fields = [
            "width_m",
            "thickness_m",
            "youngs_modulus_pa",
            "density_kg_m3",
            "air_density_kg_m3",
            "gravity_m_s2",
            "damping_pa_s",
            "drag_coefficient",
            "tip_mass_kg",
        ];
        for field in fields {
            for bad in [1e200, -1.0, f64::NAN, f64::INFINITY] {
                let mut p = TetherParams::default();
                set(&mut p, field, bad);
                let e = p.validate().unwrap_err();
                assert_eq!(e.field, field, "{field} = {bad}");
                let expected = match bad > 0.0 && bad.is_finite() {
                    true => "at most",
                    false => "a finite number",
                };
                assert!(e.allowed.contains(expected), "{e}");
            }
        }
        // The largest of every field together still builds a tether whose
        // mass and gravity are finite: no input passes validation and
        // then overflows.
        let mut p = TetherParams::default();
        for (field, _, _, max, _) in TetherParams::default().ranged() {
            set(&mut p, field, max);
        }
        p.validate().unwrap();
        crate::model::Tether::new(p).unwrap();
    }

    fn set(p: &mut TetherParams, field: &str, v: f64) {
        match field {
            "width_m" => p.width_m = v,
            "thickness_m" => p.thickness_m = v,
            "youngs_modulus_pa" => p.youngs_modulus_pa = v,
            "density_kg_m3" => p.density_kg_m3 = v,
            "air_density_kg_m3" => p.air_density_kg_m3 = v,
            "gravity_m_s2" => p.gravity_m_s2 = v,
            "damping_pa_s" => p.damping_pa_s = v,
            "drag_coefficient" => p.drag_coefficient = v,
            "tip_mass_kg" => p.tip_mass_kg = v,
            _ => unreachable!("{field}"),
        }
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
