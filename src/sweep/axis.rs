//! Every axis, in one table: what it varies ([`Axis`]: n, D and C_D, which
//! every grid has, the further [`Parameter`]s, and the shape of a planned
//! film, which only `design` varies), its values ([`AxisValues`]: one
//! type for a grid's axes, a film's own, a design's and the refinement's),
//! and where it applies ([`ScopedAxis`]: every film, or one). Each axis's
//! results column (also its name in `--axis NAME=…`, `--surface` and the
//! metadata), its key in a TOML grid file, its flag, its symbol in figures,
//! its unit and the values it may take are written here and nowhere else.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::parameter::Parameter;
use crate::error::InputError;
use crate::model::TetherParams;
use crate::model::params::MAX_ELEMENTS;

/// Largest number of candidates in one grid (far above docs/model.md §6's
/// 3,535), and of values on one axis.
pub const MAX_CANDIDATES: usize = 10_000_000;

/// Why a planned film's shape is no grid's axis, wherever one is refused.
pub const NOT_A_GRID_AXIS: &str = "an axis of the tether or its experiment (a film's frames and markers are what it measured: `design` varies a planned film's)";

/// The most markers a design axis may ask for: far beyond what a tracker
/// follows on one tether.
pub const MAX_DESIGN_MARKERS: usize = 1000;

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
    /// A planned film's frame interval \[s\] (its duration kept): `design`
    /// only, as a measured film's frames are what it measured.
    FrameIntervalS,
    /// A planned film's duration from the release \[s\] (its interval
    /// kept): `design` only.
    DurationS,
    /// How many markers a planned film tracks, evenly spaced from the pin
    /// to the free end (s = L j / (M − 1), j = 0 … M − 1): `design` only.
    Markers,
}

impl Axis {
    /// n, D and C_D, in the grid's order.
    pub const FIXED: [Axis; 3] = [Axis::Elements, Axis::Damping, Axis::Drag];
    /// A planned film's shape, which only `design` varies.
    pub const FILM_SHAPE: [Axis; 3] = [Axis::FrameIntervalS, Axis::DurationS, Axis::Markers];

    /// Its column in results.parquet, and its name in `--axis`, `--surface`
    /// and the metadata: the tether's key for n, D and C_D (as a config's
    /// `[tether]` writes it), the parameter's name otherwise.
    pub const fn column(self) -> &'static str {
        match self {
            Axis::Elements => TetherParams::ELEMENTS,
            Axis::Damping => TetherParams::DAMPING_PA_S,
            Axis::Drag => TetherParams::DRAG_COEFFICIENT,
            Axis::Parameter(p) => p.name(),
            Axis::FrameIntervalS => "frame_interval_s",
            Axis::DurationS => "duration_s",
            Axis::Markers => "markers",
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
            Axis::Parameter(_) | Axis::FrameIntervalS | Axis::DurationS | Axis::Markers => None,
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
            other => other.column(),
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
            Axis::FrameIntervalS | Axis::DurationS => "s",
            Axis::Markers => "",
        }
    }

    /// Its unit as a figure prints it ("" for a pure number).
    pub const fn display_unit(self) -> &'static str {
        match self {
            Axis::Damping => "Pa·s",
            Axis::Drag => "",
            other => other.unit(),
        }
    }

    /// Whether its values are real numbers (every axis but n and a marker
    /// count), which the refinement may move between grid points.
    pub fn is_continuous(self) -> bool {
        !matches!(self, Axis::Elements | Axis::Markers)
    }

    /// A value it cannot take, refused (naming its column): one not
    /// finite; n not whole from 1 to `MAX_ELEMENTS`; D or C_D below zero
    /// (the user's mistake, not a simulation that diverged); a marker
    /// count not whole from 2 to [`MAX_DESIGN_MARKERS`].
    pub fn check(self, value: f64) -> Result<(), InputError> {
        let whole = |range: std::ops::RangeInclusive<usize>| {
            value.fract() == 0.0 && (*range.start() as f64..=*range.end() as f64).contains(&value)
        };
        let allowed = match self {
            _ if !value.is_finite() => "finite numbers".to_string(),
            Axis::Elements if !whole(1..=MAX_ELEMENTS) => {
                format!("whole numbers from 1 to {MAX_ELEMENTS}")
            }
            Axis::Damping | Axis::Drag if value < 0.0 => "values >= 0".into(),
            Axis::Markers if !whole(2..=MAX_DESIGN_MARKERS) => {
                format!("a whole number of markers from 2 to {MAX_DESIGN_MARKERS}")
            }
            _ => return Ok(()),
        };
        Err(InputError::new(self.column(), value, allowed))
    }

    /// Sets it on `tether` if it is the tether's own (n, D, C_D or a
    /// `[tether]` number, `value` checked by [`Axis::check`]); false for
    /// the experiment's and a film's.
    pub fn set_tether(self, value: f64, tether: &mut TetherParams) -> bool {
        match self {
            Axis::Elements => tether.elements = value as usize,
            Axis::Damping => tether.damping_pa_s = value,
            Axis::Drag => tether.drag_coefficient = value,
            Axis::Parameter(p) => return p.set_tether(value, tether),
            Axis::FrameIntervalS | Axis::DurationS | Axis::Markers => return false,
        }
        true
    }

    /// The axes of the tether's own numbers, in the grid's order.
    pub fn tethers() -> impl Iterator<Item = Axis> {
        let mut probe = TetherParams::default();
        Self::all().filter(move |a| a.set_tether(1.0, &mut probe))
    }

    /// The further parameter it is, if it is one.
    pub const fn parameter(self) -> Option<Parameter> {
        match self {
            Axis::Parameter(p) => Some(p),
            _ => None,
        }
    }

    /// Whether a grid may have it: every axis but a planned film's shape.
    pub fn is_grid_axis(self) -> bool {
        !Self::FILM_SHAPE.contains(&self)
    }

    /// Whether it belongs to each film rather than to the tether: a joint
    /// identification or a design of several films has one per film.
    pub fn is_films_own(self) -> bool {
        match self {
            Axis::Parameter(p) => p.is_films_own(),
            other => !other.is_grid_axis(),
        }
    }

    /// Every grid axis: n, D, C_D, then the parameters.
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
            let shape = Self::FILM_SHAPE.iter().any(|a| a.column() == name);
            InputError::new(
                "axis",
                format!("'{name}'"),
                format!(
                    "{}one of {}",
                    match shape {
                        true => format!("{NOT_A_GRID_AXIS}: "),
                        false => String::new(),
                    },
                    Self::all().map(Axis::column).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// An axis a design may vary, by its column: a planned film's shape
    /// or a parameter, or an error that lists them.
    pub fn parse_design(name: &str) -> Result<Self, InputError> {
        let name = name.trim();
        Self::FILM_SHAPE
            .into_iter()
            .chain(Parameter::ALL.map(Axis::Parameter))
            .find(|a| a.column() == name)
            .ok_or_else(|| {
                InputError::new(
                    "design axis",
                    format!("'{name}'"),
                    format!(
                        "frame_interval_s, duration_s, markers or one of {}",
                        Parameter::ALL.map(Parameter::name).join(", ")
                    ),
                )
            })
    }

    /// The axis whose TOML grid key is `key`.
    pub fn from_grid_key(key: &str) -> Option<Self> {
        Self::all().find(|a| a.grid_key() == key)
    }
}

/// An axis and its values, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "AxisValuesForm", try_from = "AxisValuesForm")]
pub struct AxisValues {
    pub axis: Axis,
    pub values: Vec<f64>,
}

/// An axis as the metadata (a grid's, a shard's film's own axes) has
/// always written it.
#[derive(Serialize, Deserialize)]
struct AxisValuesForm {
    parameter: Axis,
    values: Vec<f64>,
}

impl From<AxisValues> for AxisValuesForm {
    fn from(a: AxisValues) -> Self {
        Self {
            parameter: a.axis,
            values: a.values,
        }
    }
}

impl TryFrom<AxisValuesForm> for AxisValues {
    type Error = InputError;

    fn try_from(form: AxisValuesForm) -> Result<Self, InputError> {
        Self::new(form.parameter, form.values)
    }
}

impl AxisValues {
    /// `values` on `axis`: at least one, distinct, each as the axis allows
    /// ([`Axis::check`]); an error names the axis's column. Whether they
    /// suit the experiment is the workflow's check.
    pub fn new(axis: Axis, values: Vec<f64>) -> Result<Self, InputError> {
        let field = axis.column();
        if values.is_empty() {
            return Err(InputError::new(field, "no values", "at least one value"));
        }
        if values.len() > MAX_CANDIDATES {
            return Err(InputError::new(field, values.len(), "fewer values"));
        }
        for &v in &values {
            axis.check(v)?;
        }
        if let Some(twice) = repeated(&values) {
            return Err(InputError::new(field, values_text(&values), twice));
        }
        Ok(Self { axis, values })
    }

    /// `text` as values of `axis`: `start:stop:step` (inclusive: `stop`
    /// when it lies on the grid, within 1e-9 of a step) or a comma list,
    /// checked as [`AxisValues::new`] checks them.
    pub fn parse(axis: Axis, text: &str) -> Result<Self, InputError> {
        Self::new(axis, parse_values(axis.column(), text)?)
    }

    /// The values as whole numbers (n, a marker count).
    pub fn whole(&self) -> Vec<usize> {
        self.values.iter().map(|&v| v as usize).collect()
    }
}

fn values_text(values: &[f64]) -> String {
    let list: Vec<String> = values.iter().map(f64::to_string).collect();
    format!("[{}]", list.join(", "))
}

/// An axis as `--axis` gives it: `NAME=AXIS` over every film, or
/// `FILM.NAME=AXIS` over one film's own (`film`: its index).
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedAxis {
    pub film: Option<usize>,
    pub values: AxisValues,
}

impl ScopedAxis {
    /// What it varies.
    pub fn axis(&self) -> Axis {
        self.values.axis
    }

    /// `text` (`NAME=AXIS` or `FILM.NAME=AXIS`) among the films named
    /// `films` (one film may be named too, as the advice for a planned
    /// film's release names it), its name read by `parse_name` (the grid's
    /// axes: [`Axis::parse`]; a design's: [`Axis::parse_design`]). An error
    /// names `axis` where the text's form or film is wrong, and `axis NAME`
    /// where its name or values are.
    pub fn parse(
        text: &str,
        films: &[&str],
        parse_name: fn(&str) -> Result<Axis, InputError>,
    ) -> Result<Self, InputError> {
        let Some((name, values)) = text.split_once('=') else {
            return Err(InputError::new(
                "axis",
                format!("'{text}'"),
                "NAME=AXIS, e.g. release_time_s=0:0.03:0.005",
            ));
        };
        let name = name.trim();
        let (film, own) = match name.split_once('.') {
            None => (None, name),
            Some((film, own)) => match films.iter().position(|&f| f == film) {
                Some(k) => (Some(k), own),
                None => {
                    return Err(InputError::new(
                        "axis",
                        name,
                        format!(
                            "an axis of a film: no film is named '{film}' (the films: {})",
                            films.join(", ")
                        ),
                    ));
                }
            },
        };
        let named = |e: InputError| match e.field.as_str() {
            "axis" | "design axis" if film.is_none() => InputError {
                field: "axis".into(),
                ..e
            },
            _ => InputError {
                field: format!("axis {name}"),
                ..e
            },
        };
        let axis = parse_name(own).map_err(named)?;
        let values = AxisValues::parse(axis, values).map_err(named)?;
        Ok(Self { film, values })
    }
}

/// Parses one axis's text. `start:stop:step` includes `stop` when it lies
/// on the grid (within 1e-9 of a step); a comma list is taken as given.
pub fn parse_values(field: &str, text: &str) -> Result<Vec<f64>, InputError> {
    let err = |allowed: &str| InputError::new(field, format!("'{text}'"), allowed);
    let number = |s: &str| -> Result<f64, InputError> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| err("start:stop:step (inclusive) or a comma list of finite numbers"))
    };
    let parts: Vec<&str> = text.split(':').collect();
    let values = match parts.as_slice() {
        [start, stop, step] => {
            let (start, stop, step) = (number(start)?, number(stop)?, number(step)?);
            if step <= 0.0 {
                return Err(err("a step > 0 in start:stop:step"));
            }
            if stop < start {
                return Err(err("stop >= start in start:stop:step"));
            }
            let count = ((stop - start) / step + 1e-9).floor() as usize + 1;
            if count > MAX_CANDIDATES {
                return Err(err("fewer values"));
            }
            range_values(start, step, count)
        }
        [list] => list.split(',').map(number).collect::<Result<Vec<_>, _>>()?,
        _ => return Err(err("start:stop:step (inclusive) or a comma list")),
    };
    if values.is_empty() {
        return Err(err("at least one value"));
    }
    // Checked here too ([`AxisValues::new`]), to name the text as typed.
    match repeated(&values) {
        Some(twice) => Err(err(&twice)),
        None => Ok(values),
    }
}

/// A value given twice, as the allowed range says it: a value twice would
/// be a candidate twice (duplicate rows, and a refinement that divides by
/// the axis's spread).
fn repeated(values: &[f64]) -> Option<String> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let w = sorted.windows(2).find(|w| w[0] == w[1])?;
    Some(format!("distinct values ({} is given twice)", w[0]))
}

/// `start + i step` for i < `count`, as the decimal the user typed: when
/// start and step are decimals of at most 15 places (0.7 and 0.1), each value
/// is the double nearest its decimal (0.8, where 0.7 + 0.1 is
/// 0.7999999999999999), so that tables and keys hold what was asked for.
fn range_values(start: f64, step: f64, count: usize) -> Vec<f64> {
    let places = |x: f64| (0..=15).find(|&d| decimal(x, d).is_some());
    let exact = places(start).zip(places(step)).and_then(|(a, b)| {
        let d = a.max(b);
        let scale = 10f64.powi(d as i32);
        let (first, stride) = (decimal(start, d)?, decimal(step, d)?);
        // Integers below 2⁵³ are exact in f64, and so is their quotient's
        // rounding: one correctly rounded division per value.
        let last = first + stride * count.saturating_sub(1) as f64;
        (last.abs() < 2f64.powi(53)).then_some((first, stride, scale))
    });
    (0..count)
        .map(|i| match exact {
            Some((first, stride, scale)) => (first + stride * i as f64) / scale,
            None => start + i as f64 * step,
        })
        .collect()
}

/// x × 10^places as an integer, when x is the double nearest a decimal of
/// that many places.
fn decimal(x: f64, places: u32) -> Option<f64> {
    let scale = 10f64.powi(places as i32);
    let scaled = (x * scale).round();
    (scaled.abs() < 2f64.powi(53) && scaled / scale == x).then_some(scaled)
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
        match Self::FILM_SHAPE.into_iter().find(|a| a.column() == name) {
            Some(shape) => Ok(shape),
            None => Axis::parse(&name).map_err(serde::de::Error::custom),
        }
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

    #[test]
    fn a_grid_is_written_as_it_always_was_and_read_back() {
        // Its metadata and the chunks' run keys: n, D and C_D by their
        // columns, then the parameter axes.
        let grid = super::super::Grid::parse("10,20", "0,500", "0.8")
            .unwrap()
            .with_axis("release_time_s", "0,0.01")
            .unwrap();
        let text = serde_json::to_string(&grid).unwrap();
        assert_eq!(
            text,
            r#"{"elements":[10,20],"damping_pa_s":[0.0,500.0],"drag_coefficient":[0.8],"parameters":[{"parameter":"release_time_s","values":[0.0,0.01]}]}"#
        );
        assert_eq!(
            serde_json::from_str::<super::super::Grid>(&text).unwrap(),
            grid
        );
        let plain = super::super::Grid::parse("4", "1", "0.8").unwrap();
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"elements":[4],"damping_pa_s":[1.0],"drag_coefficient":[0.8]}"#
        );
        // A table's grid that could not be typed is refused, not taken.
        let bad = r#"{"elements":[0],"damping_pa_s":[1.0],"drag_coefficient":[0.8]}"#;
        assert!(serde_json::from_str::<super::super::Grid>(bad).is_err());
    }

    #[test]
    fn values_are_checked_as_their_axis_allows_whether_parsed_or_given() {
        for (axis, values) in [
            (Axis::Elements, vec![2.5]),
            (Axis::Elements, vec![0.0]),
            (Axis::Damping, vec![-1.0]),
            (Axis::Drag, vec![f64::NAN]),
            (Axis::Markers, vec![1.0]),
            (Axis::Parameter(Parameter::LengthM), vec![0.5, 0.5]),
            (Axis::Damping, Vec::new()),
        ] {
            let e = AxisValues::new(axis, values.clone()).unwrap_err();
            assert_eq!(e.field, axis.column(), "{axis} {values:?}: {e}");
        }
        let n = AxisValues::parse(Axis::Elements, "10:30:10").unwrap();
        assert_eq!(n.whole(), [10, 20, 30]);
        let e = AxisValues::parse(Axis::Drag, "0.8,0.80").unwrap_err();
        assert!(e.to_string().contains("'0.8,0.80'"), "{e}");
        assert!(AxisValues::parse(Axis::Markers, "2:8:2").is_ok());
    }

    #[test]
    fn a_scoped_axis_names_its_film_or_every_film() {
        let films = ["shallow", "steep"];
        let every = ScopedAxis::parse("damping_pa_s=0,10", &films, Axis::parse).unwrap();
        assert_eq!((every.film, every.axis()), (None, Axis::Damping));
        let own =
            ScopedAxis::parse("steep.release_time_s=0:0.01:0.005", &films, Axis::parse).unwrap();
        assert_eq!(own.film, Some(1));
        assert_eq!(own.values.values, [0.0, 0.005, 0.01]);
        let shape = ScopedAxis::parse("markers=4", &films, Axis::parse_design).unwrap();
        assert_eq!(shape.axis(), Axis::Markers);
        // A grid takes no film's shape; a design takes no n.
        let e = ScopedAxis::parse("markers=4", &films, Axis::parse).unwrap_err();
        assert_eq!(e.field, "axis");
        assert!(e.allowed.contains("`design` varies"), "{e}");
        let e = ScopedAxis::parse("elements=4", &films, Axis::parse_design).unwrap_err();
        assert_eq!(e.field, "axis");
        let e = ScopedAxis::parse("steep.markers=1", &films, Axis::parse_design).unwrap_err();
        assert_eq!(e.field, "axis steep.markers");
        let e = ScopedAxis::parse("flat.markers=4", &films, Axis::parse_design).unwrap_err();
        assert!(e.allowed.contains("the films: shallow, steep"), "{e}");
        let e = ScopedAxis::parse("markers", &films, Axis::parse_design).unwrap_err();
        assert!(e.allowed.contains("NAME=AXIS"), "{e}");
    }
}
