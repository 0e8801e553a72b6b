//! Every axis a grid may have, in one table: n, D and C_D, which every grid
//! has, and the further [`Parameter`]s. Each axis's results column (also
//! its name in `--axis NAME=…`, `--surface` and the metadata), its key in
//! a TOML grid file, its flag, its symbol in figures and its unit are
//! written here and nowhere else.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::parameter::Parameter;
use crate::error::InputError;
use crate::model::TetherParams;

/// A grid axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// n, the number of elements.
    Elements,
    /// D, the Kelvin–Voigt damping [Pa·s].
    Damping,
    /// C_D, the drag coefficient.
    Drag,
    /// Any other parameter (`--axis NAME=…`).
    Parameter(Parameter),
}

impl Axis {
    /// n, D and C_D, in the grid's order.
    pub const FIXED: [Axis; 3] = [Axis::Elements, Axis::Damping, Axis::Drag];

    /// Its column in results.parquet, and its name in `--axis`, `--surface`
    /// and the metadata: the tether's key for n, D and C_D (as a config's
    /// `[tether]` writes it), the parameter's name otherwise.
    pub const fn column(self) -> &'static str {
        match self {
            Axis::Elements => TetherParams::ELEMENTS,
            Axis::Damping => TetherParams::DAMPING_PA_S,
            Axis::Drag => TetherParams::DRAG_COEFFICIENT,
            Axis::Parameter(p) => p.name(),
        }
    }

    /// Its key in a TOML grid file.
    pub const fn grid_key(self) -> &'static str {
        match self {
            Axis::Damping => "damping",
            other => other.column(),
        }
    }

    /// Its own flag (the further parameters have `--axis NAME=…`, or
    /// their own where a command sets one alone).
    pub const fn flag(self) -> Option<&'static str> {
        match self {
            Axis::Elements => Some("--elements"),
            Axis::Damping => Some("--damping"),
            Axis::Drag => Some("--drag-coefficient"),
            Axis::Parameter(Parameter::TipMassKg) => Some("--tip-mass"),
            Axis::Parameter(Parameter::LengthM) => Some("--length"),
            Axis::Parameter(_) => None,
        }
    }

    /// `(column, flag)` of an axis with a flag, for the tables that name a
    /// library error's field by the flag the user typed.
    pub const fn column_and_flag(self) -> (&'static str, &'static str) {
        match self.flag() {
            Some(flag) => (self.column(), flag),
            None => panic!("an axis with a flag"),
        }
    }

    /// Its symbol in figures and on the terminal.
    pub const fn symbol(self) -> &'static str {
        match self {
            Axis::Elements => "n",
            Axis::Damping => "D",
            Axis::Drag => "C_D",
            Axis::Parameter(p) => p.name(),
        }
    }

    /// Its unit as the results' column metadata writes it ("1" for a pure
    /// number, "" for a count).
    pub const fn unit(self) -> &'static str {
        match self {
            Axis::Elements => "",
            Axis::Damping => "Pa*s",
            Axis::Drag => "1",
            Axis::Parameter(p) => p.unit(),
        }
    }

    /// Its unit as a figure prints it ("" for a pure number).
    pub const fn display_unit(self) -> &'static str {
        match self {
            Axis::Damping => "Pa·s",
            Axis::Elements | Axis::Drag => "",
            Axis::Parameter(p) => p.unit(),
        }
    }

    /// Whether its values are real numbers (every axis but n), which the
    /// refinement may move between grid points.
    pub fn is_continuous(self) -> bool {
        self != Axis::Elements
    }

    /// Every axis: n, D, C_D, then the parameters.
    pub fn all() -> impl Iterator<Item = Axis> {
        Self::FIXED
            .into_iter()
            .chain(Parameter::ALL.map(Axis::Parameter))
    }

    /// The axis whose column is `name`, or an error that lists them all.
    /// Two axes written `A,B` (the surface figure's: `damping_pa_s,release_time_s`).
    pub fn parse_pair(text: &str) -> Result<[Self; 2], InputError> {
        match text.split_once(',') {
            Some((a, b)) => Ok([Self::parse(a)?, Self::parse(b)?]),
            None => Err(InputError::new(
                "surface",
                format!("'{text}'"),
                "two axes A,B, e.g. damping_pa_s,release_time_s",
            )),
        }
    }

    pub fn parse(name: &str) -> Result<Self, InputError> {
        let name = name.trim();
        Self::all().find(|a| a.column() == name).ok_or_else(|| {
            InputError::new(
                "axis",
                format!("'{name}'"),
                format!(
                    "one of {}",
                    Self::all().map(Axis::column).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// The axis whose TOML grid key is `key`.
    pub fn from_grid_key(key: &str) -> Option<Self> {
        Self::all().find(|a| a.grid_key() == key)
    }
}

impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.column())
    }
}

impl Serialize for Axis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.column())
    }
}

impl<'de> Deserialize<'de> for Axis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Axis::parse(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_axis_reads_back_from_its_column_and_grid_key() {
        for axis in Axis::all() {
            assert_eq!(Axis::parse(axis.column()).unwrap(), axis);
            assert_eq!(Axis::from_grid_key(axis.grid_key()), Some(axis));
            let text = serde_json::to_string(&axis).unwrap();
            assert_eq!(serde_json::from_str::<Axis>(&text).unwrap(), axis);
            assert_eq!(axis.is_continuous(), axis != Axis::Elements);
        }
        assert_eq!(Axis::Damping.flag(), Some("--damping"));
        assert_eq!(
            Axis::Parameter(Parameter::TipMassKg).flag(),
            Some("--tip-mass")
        );
        assert_eq!(Axis::Parameter(Parameter::ReleaseTimeS).flag(), None);
        let e = Axis::parse("damping").unwrap_err();
        assert!(e.to_string().contains("damping_pa_s"), "{e}");
    }
}
