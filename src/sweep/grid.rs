//! Identification grids over (n, D, C_D) and any further parameters
//! ([`Parameter`]): axes given as `start:stop:step` (inclusive) or comma
//! lists.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use super::axis::Axis;
use super::parameter::Parameter;
use crate::error::InputError;
use crate::model::TetherParams;
use crate::model::params::MAX_ELEMENTS;
use crate::scenario::Scenario;

/// Most parameter axes a grid may have besides n, D and C_D.
pub const MAX_PARAMETER_AXES: usize = 4;

/// Largest number of candidates in one grid (far above docs/model.md §6's 3,535).
pub const MAX_CANDIDATES: usize = 10_000_000;

/// Parses one axis. `start:stop:step` includes `stop` when it lies on the
/// grid (within 1e-9 of a step); a comma list is taken as given.
pub fn parse_axis(field: &str, text: &str) -> Result<Vec<f64>, InputError> {
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
    // A value twice would be a candidate twice: duplicate rows, and a
    // refinement that divides by the axis's spread.
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(err(&format!("distinct values ({} is given twice)", w[0])));
    }
    Ok(values)
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

/// An axis of element counts: whole numbers from 1 to MAX_ELEMENTS.
fn parse_elements(field: &str, text: &str) -> Result<Vec<usize>, InputError> {
    parse_axis(field, text)?
        .iter()
        .map(|&v| {
            if v.fract() == 0.0 && (1.0..=MAX_ELEMENTS as f64).contains(&v) {
                Ok(v as usize)
            } else {
                Err(InputError::new(
                    field,
                    v,
                    format!("whole numbers from 1 to {MAX_ELEMENTS}"),
                ))
            }
        })
        .collect()
}

/// An axis of D or C_D. Out-of-range values are the user's mistake, not
/// simulations that diverged: they are rejected before anything runs.
fn parse_non_negative(field: &str, text: &str) -> Result<Vec<f64>, InputError> {
    let values = parse_axis(field, text)?;
    match values.iter().find(|v| **v < 0.0) {
        Some(&v) => Err(InputError::new(field, v, "values >= 0")),
        None => Ok(values),
    }
}

/// x × 10^places as an integer, when x is the double nearest a decimal of
/// that many places.
fn decimal(x: f64, places: u32) -> Option<f64> {
    let scale = 10f64.powi(places as i32);
    let scaled = (x * scale).round();
    (scaled.abs() < 2f64.powi(53) && scaled / scale == x).then_some(scaled)
}

/// The cartesian product of the axes: n, D, C_D, then the parameter axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub elements: Vec<usize>,
    pub damping_pa_s: Vec<f64>,
    pub drag_coefficient: Vec<f64>,
    /// Axes over further parameters, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<ParameterAxis>,
}

/// An axis over a [`Parameter`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterAxis {
    pub parameter: Parameter,
    pub values: Vec<f64>,
}

/// A candidate's values on its grid's parameter axes, in the grid's order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ParameterValues([Option<(Parameter, f64)>; MAX_PARAMETER_AXES]);

impl ParameterValues {
    pub const NONE: Self = Self([None; MAX_PARAMETER_AXES]);

    pub fn iter(&self) -> impl Iterator<Item = (Parameter, f64)> + '_ {
        self.0.iter().map_while(|x| *x)
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    pub fn get(&self, parameter: Parameter) -> Option<f64> {
        self.iter().find(|(p, _)| *p == parameter).map(|(_, v)| v)
    }

    /// Sets `parameter` (which must be one of its axes, or a new one while
    /// there is room).
    pub fn set(&mut self, parameter: Parameter, value: f64) {
        let slot = self
            .0
            .iter()
            .position(|x| x.is_none_or(|(p, _)| p == parameter))
            .expect("at most MAX_PARAMETER_AXES parameter axes");
        self.0[slot] = Some((parameter, value));
    }
}

impl Serialize for ParameterValues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (p, v) in self.iter() {
            map.serialize_entry(p.name(), &v)?;
        }
        map.end()
    }
}

/// One grid point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    pub elements: usize,
    pub damping_pa_s: f64,
    pub drag_coefficient: f64,
    /// Its values on the grid's parameter axes.
    #[serde(skip_serializing_if = "ParameterValues::is_empty")]
    pub parameters: ParameterValues,
}

impl Candidate {
    /// A candidate of a grid without parameter axes.
    pub const fn new(elements: usize, damping_pa_s: f64, drag_coefficient: f64) -> Self {
        Self {
            elements,
            damping_pa_s,
            drag_coefficient,
            parameters: ParameterValues::NONE,
        }
    }

    /// The tether and the experiment of this candidate: `base` and
    /// `scenario` with its values set.
    pub fn setup(&self, base: &TetherParams, scenario: &mut Scenario) -> TetherParams {
        let mut tether = TetherParams {
            elements: self.elements,
            damping_pa_s: self.damping_pa_s,
            drag_coefficient: self.drag_coefficient,
            ..base.clone()
        };
        for (p, v) in self.parameters.iter() {
            p.set(v, &mut tether, scenario);
        }
        tether
    }

    /// Its value on `axis`, if it has that axis.
    pub fn value(&self, axis: Axis) -> Option<f64> {
        match axis {
            Axis::Elements => Some(self.elements as f64),
            Axis::Damping => Some(self.damping_pa_s),
            Axis::Drag => Some(self.drag_coefficient),
            Axis::Parameter(p) => self.parameters.get(p),
        }
    }

    /// [`Candidate::setup`] into a copy of `scenario`.
    pub fn experiment(&self, base: &TetherParams, scenario: &Scenario) -> (TetherParams, Scenario) {
        let mut scenario = scenario.clone();
        let tether = self.setup(base, &mut scenario);
        (tether, scenario)
    }
}

impl Grid {
    /// The grid of three axes; an error names the axis's column.
    pub fn parse(elements: &str, damping: &str, drag: &str) -> Result<Self, InputError> {
        Self {
            elements: parse_elements(Axis::Elements.column(), elements)?,
            damping_pa_s: parse_non_negative(Axis::Damping.column(), damping)?,
            drag_coefficient: parse_non_negative(Axis::Drag.column(), drag)?,
            parameters: Vec::new(),
        }
        .checked_size()
    }

    fn checked_size(self) -> Result<Self, InputError> {
        let len = self.parameters.iter().map(|a| a.values.len()).try_fold(
            self.elements.len() * self.damping_pa_s.len() * self.drag_coefficient.len(),
            |n, k| n.checked_mul(k),
        );
        match len {
            Some(len) if len <= MAX_CANDIDATES => Ok(self),
            _ => Err(InputError::new(
                "grid",
                len.map_or("too many".to_string(), |l| l.to_string()),
                format!("at most {MAX_CANDIDATES} candidates"),
            )),
        }
    }

    /// This grid with the axis `name = text` (`--axis NAME=AXIS`): n, D or
    /// C_D replace that axis; any other [`Parameter`] adds one (once each,
    /// at most [`MAX_PARAMETER_AXES`]), after the others but before a
    /// release-time axis, which stays last. Whether its values suit the
    /// experiment is the workflow's check.
    pub fn with_axis(mut self, name: &str, text: &str) -> Result<Self, InputError> {
        let axis = Axis::parse(name)?;
        let field = axis.column();
        match axis {
            Axis::Elements => self.elements = parse_elements(field, text)?,
            Axis::Damping => self.damping_pa_s = parse_non_negative(field, text)?,
            Axis::Drag => self.drag_coefficient = parse_non_negative(field, text)?,
            Axis::Parameter(parameter) => {
                let values = parse_axis(field, text)?;
                return self.with_parameter_axis(ParameterAxis { parameter, values });
            }
        }
        self.checked_size()
    }

    /// This grid with a parameter axis added (once each parameter, at most
    /// [`MAX_PARAMETER_AXES`]), after the others but before a
    /// release-time axis, which stays last.
    pub fn with_parameter_axis(mut self, axis: ParameterAxis) -> Result<Self, InputError> {
        let (parameter, field) = (axis.parameter, axis.parameter.name());
        if self.parameters.iter().any(|a| a.parameter == parameter) {
            return Err(InputError::new(
                "axis",
                format!("'{field}' twice"),
                "each parameter on one axis",
            ));
        }
        if self.parameters.len() == MAX_PARAMETER_AXES {
            return Err(InputError::new(
                "axis",
                format!("'{field}'"),
                format!("at most {MAX_PARAMETER_AXES} axes besides n, D and C_D"),
            ));
        }
        // The release time innermost, whatever the order given: its
        // values then sit side by side in the candidates' order (and
        // in a chunk), where they share one simulation
        // (`sweep::release`).
        let at = self
            .parameters
            .iter()
            .position(|a| a.parameter == Parameter::ReleaseTimeS)
            .unwrap_or(self.parameters.len());
        self.parameters.insert(at, axis);
        self.checked_size()
    }

    /// The values of `axis`, if the grid has it.
    pub fn axis_values(&self, axis: Axis) -> Option<Vec<f64>> {
        match axis {
            Axis::Elements => Some(self.elements.iter().map(|&n| n as f64).collect()),
            Axis::Damping => Some(self.damping_pa_s.clone()),
            Axis::Drag => Some(self.drag_coefficient.clone()),
            Axis::Parameter(p) => self
                .parameters
                .iter()
                .find(|a| a.parameter == p)
                .map(|a| a.values.clone()),
        }
    }

    /// Candidates in a row of the candidates' order that differ only in the
    /// release time: the release axis's length (1 without one).
    pub fn release_run(&self) -> usize {
        self.parameters
            .last()
            .filter(|a| a.parameter == Parameter::ReleaseTimeS)
            .map_or(1, |a| a.values.len())
    }

    /// The release axis's values, where the grid has one of two values or
    /// more: each release group's shared simulation samples them all
    /// ([`super::release::whole_group`]), however a chunk or shard cuts
    /// the group.
    pub fn release_axis(&self) -> Option<&[f64]> {
        self.parameters
            .iter()
            .find(|a| a.parameter == Parameter::ReleaseTimeS)
            .filter(|a| a.values.len() > 1)
            .map(|a| a.values.as_slice())
    }

    /// Every axis, n, D and C_D first.
    pub fn axes(&self) -> Vec<Axis> {
        let mut axes = Axis::FIXED.to_vec();
        axes.extend(self.parameters.iter().map(|a| Axis::Parameter(a.parameter)));
        axes
    }

    pub fn len(&self) -> usize {
        self.parameters
            .iter()
            .map(|a| a.values.len())
            .product::<usize>()
            * self.elements.len()
            * self.damping_pa_s.len()
            * self.drag_coefficient.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads a TOML grid file: each axis under its grid key
    /// ([`Axis::grid_key`]: `elements`, `damping`, `drag_coefficient`, and
    /// each parameter's name), an axis string as on the command line
    /// (`"0:10000:100"`) or an array of numbers; n, D and C_D are required:
    ///
    /// ```toml
    /// elements = [10, 20, 30, 40, 50]
    /// damping = "0:10000:100"        # Pa·s
    /// drag_coefficient = "0.6:0.9:0.05"
    /// release_time_s = "0:0.03:0.005"
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, InputError> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum AxisText {
            Text(String),
            Values(Vec<f64>),
        }
        let keys = || Axis::FIXED.map(Axis::grid_key).join(", ");
        let mut file: std::collections::BTreeMap<String, AxisText> = toml::from_str(text)
            .map_err(|e| {
                InputError::new(
                    "grid",
                    e.message(),
                    format!(
                        "a TOML file with the keys {} and any parameter axes by name, each an axis string (\"0:10000:100\") or an array of numbers",
                        keys()
                    ),
                )
            })?;
        let text = |axis: AxisText| match axis {
            AxisText::Text(t) => t,
            AxisText::Values(v) => v.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
        };
        let fixed = Axis::FIXED.map(|axis| file.remove(axis.grid_key()).map(text));
        let [Some(elements), Some(damping), Some(drag)] = &fixed else {
            let missing: Vec<&str> = Axis::FIXED
                .into_iter()
                .zip(&fixed)
                .filter(|(_, t)| t.is_none())
                .map(|(a, _)| a.grid_key())
                .collect();
            return Err(InputError::new(
                "grid",
                format!("no {}", missing.join(", ")),
                format!("the keys {}", keys()),
            ));
        };
        let mut grid = Self::parse(elements, damping, drag)?;
        for (name, axis) in file {
            let Some(Axis::Parameter(parameter)) = Axis::from_grid_key(&name) else {
                return Err(InputError::new(
                    "grid",
                    format!("key '{name}'"),
                    format!(
                        "the keys {} and parameter axes named as one of {}",
                        keys(),
                        Parameter::ALL.map(Parameter::name).join(", ")
                    ),
                ));
            };
            grid = grid.with_axis(parameter.name(), &text(axis))?;
        }
        Ok(grid)
    }

    /// The position of `candidate` in [`Grid::candidates`], if it is a grid point.
    pub fn index_of(&self, candidate: &Candidate) -> Option<usize> {
        let n = self
            .elements
            .iter()
            .position(|&n| n == candidate.elements)?;
        let d = self
            .damping_pa_s
            .iter()
            .position(|&d| d == candidate.damping_pa_s)?;
        let c = self
            .drag_coefficient
            .iter()
            .position(|&c| c == candidate.drag_coefficient)?;
        let mut index = (n * self.damping_pa_s.len() + d) * self.drag_coefficient.len() + c;
        if candidate.parameters.iter().count() != self.parameters.len() {
            return None;
        }
        for axis in &self.parameters {
            let value = candidate.parameters.get(axis.parameter)?;
            let i = axis.values.iter().position(|&v| v == value)?;
            index = index * axis.values.len() + i;
        }
        Some(index)
    }

    /// The candidate at position `i` of the candidates' order (n, D, C_D,
    /// parameter axes…, the last axis fastest): the inverse of
    /// [`Grid::index_of`]. A run makes its candidates from their positions
    /// as it runs them, so that a grid of millions takes no memory before
    /// its first chunk.
    pub fn candidate(&self, i: usize) -> Candidate {
        assert!(i < self.len(), "candidate {i} of a grid of {}", self.len());
        let mut rest = i;
        let mut digit = |radix: usize| {
            let d = rest % radix;
            rest /= radix;
            d
        };
        let mut on_axes = [0usize; MAX_PARAMETER_AXES];
        for (k, axis) in self.parameters.iter().enumerate().rev() {
            on_axes[k] = digit(axis.values.len());
        }
        let c = digit(self.drag_coefficient.len());
        let d = digit(self.damping_pa_s.len());
        let n = digit(self.elements.len());
        let mut candidate = Candidate::new(
            self.elements[n],
            self.damping_pa_s[d],
            self.drag_coefficient[c],
        );
        for (axis, &k) in self.parameters.iter().zip(&on_axes) {
            candidate.parameters.set(axis.parameter, axis.values[k]);
        }
        candidate
    }

    /// Every candidate, in the order of [`Grid::candidate`] (for small
    /// grids: a run makes its candidates chunk by chunk).
    pub fn candidates(&self) -> Vec<Candidate> {
        (0..self.len()).map(|i| self.candidate(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_twice_is_refused_with_the_value() {
        for text in ["0.8,0.8", "4,5,4", "0.8,0.80"] {
            let e = parse_axis(Axis::Drag.column(), text)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("distinct values") && e.contains("given twice"),
                "{text}: {e}"
            );
        }
        assert_eq!(parse_axis("x", "0.7,0.8").unwrap(), [0.7, 0.8]);
        let e = Grid::parse("4,4", "0", "0.8").unwrap_err().to_string();
        assert!(e.contains("4 is given twice"), "{e}");
    }

    #[test]
    fn ranges_are_inclusive_and_lists_literal() {
        assert_eq!(parse_axis("d", "0:10000:100").unwrap().len(), 101);
        let cd = parse_axis("c", "0.6:0.9:0.05").unwrap();
        assert_eq!(cd.len(), 7);
        assert!((cd[6] - 0.9).abs() < 1e-12);
        assert_eq!(parse_axis("n", "10,30").unwrap(), vec![10.0, 30.0]);
        assert_eq!(parse_axis("n", "5").unwrap(), vec![5.0]);
        let g = Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap();
        assert_eq!(g.len(), 3535, "docs/model.md §6");
    }

    #[test]
    fn range_values_are_the_decimals_typed() {
        // Accumulated steps would give 0.7999999999999999 and
        // 0.7000000000000001 here.
        assert_eq!(parse_axis("d", "0.7:0.9:0.1").unwrap(), vec![0.7, 0.8, 0.9]);
        let spec = parse_axis("d", "0.6:0.9:0.05").unwrap();
        assert_eq!(spec.len(), 7);
        for (i, v) in spec.iter().enumerate() {
            let typed: f64 = format!("0.{}", 60 + 5 * i).parse().unwrap();
            assert_eq!(*v, typed, "value {i}");
        }
        assert_eq!(
            parse_axis("d", "-100:1000:250").unwrap(),
            vec![-100.0, 150.0, 400.0, 650.0, 900.0]
        );
        assert_eq!(
            parse_axis("d", "1e-3:3e-3:1e-3").unwrap(),
            vec![1e-3, 2e-3, 3e-3]
        );
        // No short decimal: the plain sum.
        let third = 1.0 / 3.0;
        assert_eq!(
            parse_axis("d", &format!("0:1:{third}")).unwrap(),
            vec![0.0, third, 2.0 * third, 3.0 * third]
        );
    }

    #[test]
    fn toml_grid_files_take_axis_strings_or_arrays() {
        let g = Grid::from_toml(
            "elements = [10, 30]\ndamping = \"0:1000:500\"\ndrag_coefficient = [0.7, 0.8]\n",
        )
        .unwrap();
        assert_eq!(g, Grid::parse("10,30", "0,500,1000", "0.7,0.8").unwrap());
        for (i, c) in g.candidates().iter().enumerate() {
            assert_eq!(g.index_of(c), Some(i));
        }
        for (text, field) in [
            ("elements = [10]\ndamping = \"0\"\n", "grid"),
            (
                "elements = [10]\ndamping = 1\ndrag_coefficient = [0.8]\n",
                "grid",
            ),
            (
                "elements = [10]\ndamping = \"0\"\ndrag_coefficient = [0.8]\nsteps = 3\n",
                "grid",
            ),
            (
                "elements = [10]\ndamping = \"5:1:1\"\ndrag_coefficient = [0.8]\n",
                Axis::Damping.column(),
            ),
        ] {
            let e = Grid::from_toml(text).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
    }

    #[test]
    fn parameter_axes_multiply_the_grid_and_index_every_candidate() {
        let grid = Grid::parse("10", "0,500", "0.8")
            .and_then(|g| g.with_axis("release_time_s", "0:0.02:0.01"))
            .and_then(|g| g.with_axis("youngs_modulus_pa", "8e6,9.4e6"))
            .unwrap();
        assert_eq!(grid.len(), 2 * 3 * 2);
        let candidates = grid.candidates();
        assert_eq!(candidates.len(), 12);
        for (i, c) in candidates.iter().enumerate() {
            assert_eq!(grid.index_of(c), Some(i));
        }
        // The last axis fastest, in the order given, but the release time
        // innermost.
        assert_eq!(
            grid.axes()[3..],
            [
                Axis::Parameter(Parameter::YoungsModulusPa),
                Axis::Parameter(Parameter::ReleaseTimeS)
            ]
        );
        assert_eq!(grid.release_run(), 3);
        assert_eq!(
            candidates[1].value(Axis::Parameter(Parameter::ReleaseTimeS)),
            Some(0.01)
        );
        assert_eq!(
            candidates[3].value(Axis::Parameter(Parameter::YoungsModulusPa)),
            Some(9.4e6)
        );
        assert_eq!(candidates[6].value(Axis::Damping), Some(500.0));
        // A candidate without the grid's parameter values is not its point.
        assert_eq!(grid.index_of(&Candidate::new(10, 0.0, 0.8)), None);
        // The short forms' axes by name; the TOML file takes the same names.
        let g = Grid::parse("10", "0", "0.8")
            .and_then(|g| g.with_axis(Axis::Damping.column(), "0:1000:500"))
            .unwrap();
        assert_eq!(g.damping_pa_s, vec![0.0, 500.0, 1000.0]);
        let t = Grid::from_toml(
            "elements = [10]\ndamping = \"0,500\"\ndrag_coefficient = [0.8]\nrelease_time_s = \"0:0.02:0.01\"\nyoungs_modulus_pa = [8e6, 9.4e6]\n",
        )
        .unwrap();
        assert_eq!(t.len(), grid.len());
        for (e, field) in [
            (
                Grid::parse("10", "0", "0.8")
                    .unwrap()
                    .with_axis("youngs", "1"),
                "axis",
            ),
            (grid.clone().with_axis("release_time_s", "0"), "axis"),
            (
                Grid::from_toml(
                    "elements = [10]\ndamping = \"0\"\ndrag_coefficient = [0.8]\nsteps = 3\n",
                ),
                "grid",
            ),
        ] {
            assert_eq!(e.unwrap_err().field, field);
        }
    }

    #[test]
    fn bad_axes_name_the_field() {
        for (text, needle) in [
            ("0:10:0", "step > 0"),
            ("10:0:1", "stop >= start"),
            ("a,b", "comma list"),
            ("1:2", "start:stop:step"),
        ] {
            let e = parse_axis("an_axis", text).unwrap_err();
            assert_eq!(e.field, "an_axis");
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
        let field = |e: &str, d: &str, c: &str| Grid::parse(e, d, c).unwrap_err().field;
        assert_eq!(field("10.5", "0", "0.8"), Axis::Elements.column());
        assert_eq!(field("0", "0", "0.8"), Axis::Elements.column());
        assert_eq!(field("2000", "0", "0.8"), Axis::Elements.column());
        assert_eq!(field("10", "-100,0", "0.8"), Axis::Damping.column());
        assert_eq!(field("10", "0", "-0.1:0.5:0.1"), Axis::Drag.column());
    }
}
