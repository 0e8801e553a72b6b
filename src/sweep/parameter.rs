//! The parameters a grid axis may vary besides n, D and C_D: every number of
//! a config's `[tether]` and `[settings]` tables that a drop uses, named as
//! there (and as its column in results.parquet).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::InputError;
use crate::model::TetherParams;
use crate::scenario::Scenario;

/// A parameter a grid axis may vary (`--axis NAME=AXIS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parameter {
    LengthM,
    WidthM,
    ThicknessM,
    YoungsModulusPa,
    DensityKgM3,
    AirDensityKgM3,
    GravityMS2,
    TipMassKg,
    InitialAngleDeg,
    ReleaseTimeS,
    PinXM,
    PinYM,
}

impl Parameter {
    pub const ALL: [Parameter; 12] = [
        Parameter::LengthM,
        Parameter::WidthM,
        Parameter::ThicknessM,
        Parameter::YoungsModulusPa,
        Parameter::DensityKgM3,
        Parameter::AirDensityKgM3,
        Parameter::GravityMS2,
        Parameter::TipMassKg,
        Parameter::InitialAngleDeg,
        Parameter::ReleaseTimeS,
        Parameter::PinXM,
        Parameter::PinYM,
    ];

    /// Its key in the config (`pin_m`'s two coordinates as `pin_x_m` and
    /// `pin_y_m`) and its column in results.parquet.
    pub const fn name(self) -> &'static str {
        match self {
            Parameter::LengthM => "length_m",
            Parameter::WidthM => "width_m",
            Parameter::ThicknessM => "thickness_m",
            Parameter::YoungsModulusPa => "youngs_modulus_pa",
            Parameter::DensityKgM3 => "density_kg_m3",
            Parameter::AirDensityKgM3 => "air_density_kg_m3",
            Parameter::GravityMS2 => "gravity_m_s2",
            Parameter::TipMassKg => "tip_mass_kg",
            Parameter::InitialAngleDeg => "initial_angle_deg",
            Parameter::ReleaseTimeS => "release_time_s",
            Parameter::PinXM => "pin_x_m",
            Parameter::PinYM => "pin_y_m",
        }
    }

    /// Whether it belongs to each film rather than to the tether: a joint
    /// identification or a design of several films has one per film.
    pub fn is_films_own(self) -> bool {
        matches!(
            self,
            Parameter::ReleaseTimeS
                | Parameter::InitialAngleDeg
                | Parameter::PinXM
                | Parameter::PinYM
        )
    }

    /// Its unit, as results.parquet's column metadata writes it.
    pub const fn unit(self) -> &'static str {
        match self {
            Parameter::LengthM
            | Parameter::WidthM
            | Parameter::ThicknessM
            | Parameter::PinXM
            | Parameter::PinYM => "m",
            Parameter::YoungsModulusPa => "Pa",
            Parameter::DensityKgM3 | Parameter::AirDensityKgM3 => "kg/m^3",
            Parameter::GravityMS2 => "m/s^2",
            Parameter::TipMassKg => "kg",
            Parameter::InitialAngleDeg => "deg",
            Parameter::ReleaseTimeS => "s",
        }
    }

    /// The parameter named `name`, or an error that lists them all.
    pub fn parse(name: &str) -> Result<Self, InputError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                InputError::new(
                    "axis",
                    format!("'{name}'"),
                    format!("one of {}", Self::ALL.map(Self::name).join(", ")),
                )
            })
    }

    /// Sets it to `value` in a candidate's tether and experiment.
    /// Sets it on `tether` if it is the tether's own (a `[tether]`
    /// number); false for the experiment's.
    pub fn set_tether(self, value: f64, tether: &mut TetherParams) -> bool {
        match self {
            Parameter::LengthM => tether.length_m = value,
            Parameter::WidthM => tether.width_m = value,
            Parameter::ThicknessM => tether.thickness_m = value,
            Parameter::YoungsModulusPa => tether.youngs_modulus_pa = value,
            Parameter::DensityKgM3 => tether.density_kg_m3 = value,
            Parameter::AirDensityKgM3 => tether.air_density_kg_m3 = value,
            Parameter::GravityMS2 => tether.gravity_m_s2 = value,
            Parameter::TipMassKg => tether.tip_mass_kg = value,
            Parameter::ReleaseTimeS
            | Parameter::InitialAngleDeg
            | Parameter::PinXM
            | Parameter::PinYM => return false,
        }
        true
    }

    pub fn set(self, value: f64, tether: &mut TetherParams, scenario: &mut Scenario) {
        if self.set_tether(value, tether) {
            return;
        }
        match self {
            // The last frame stays where the film has it.
            Parameter::ReleaseTimeS => scenario.set_release_time_s(value),
            Parameter::InitialAngleDeg | Parameter::PinXM | Parameter::PinYM => {
                // A swing-up has none of these; the grid is a drop's.
                if let Some(drop) = scenario.as_drop_mut() {
                    match self {
                        Parameter::InitialAngleDeg => drop.initial_angle_deg = value,
                        Parameter::PinXM => drop.pin_m[0] = value,
                        _ => drop.pin_m[1] = value,
                    }
                }
            }
            // The tether's own, set above.
            _ => {}
        }
    }

    /// Its value in a tether and experiment.
    pub fn get(self, tether: &TetherParams, scenario: &Scenario) -> f64 {
        match self {
            Parameter::LengthM => tether.length_m,
            Parameter::WidthM => tether.width_m,
            Parameter::ThicknessM => tether.thickness_m,
            Parameter::YoungsModulusPa => tether.youngs_modulus_pa,
            Parameter::DensityKgM3 => tether.density_kg_m3,
            Parameter::AirDensityKgM3 => tether.air_density_kg_m3,
            Parameter::GravityMS2 => tether.gravity_m_s2,
            Parameter::TipMassKg => tether.tip_mass_kg,
            Parameter::ReleaseTimeS => scenario.release_time_s(),
            // NaN for a swing-up, which has none of these.
            Parameter::InitialAngleDeg => {
                scenario.as_drop().map_or(f64::NAN, |d| d.initial_angle_deg)
            }
            Parameter::PinXM => scenario.as_drop().map_or(f64::NAN, |d| d.pin_m[0]),
            Parameter::PinYM => scenario.as_drop().map_or(f64::NAN, |d| d.pin_m[1]),
        }
    }
}

impl std::fmt::Display for Parameter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Parameter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Parameter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Parameter::parse(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioKind;

    #[test]
    fn every_parameter_is_set_and_read_back_under_its_config_name() {
        let mut tether = TetherParams::default();
        let mut scenario = Scenario::new(ScenarioKind::Drop, tether.length_m);
        for (i, p) in Parameter::ALL.into_iter().enumerate() {
            assert_eq!(Parameter::parse(p.name()).unwrap(), p);
            let value = 0.01 * (i + 1) as f64;
            p.set(value, &mut tether, &mut scenario);
            assert_eq!(p.get(&tether, &scenario), value, "{p}");
        }
        // Each set reached its own field: the earlier ones still hold.
        for (i, p) in Parameter::ALL.into_iter().enumerate() {
            assert_eq!(p.get(&tether, &scenario), 0.01 * (i + 1) as f64, "{p}");
        }
        // The release keeps the last frame where it was.
        assert!((scenario.release_time_s() + scenario.duration_s() - 2.0).abs() < 1e-12);
        let e = Parameter::parse("youngs_modulus").unwrap_err();
        assert_eq!(e.field, "axis");
        assert!(e.to_string().contains("youngs_modulus_pa"), "{e}");
    }
}
