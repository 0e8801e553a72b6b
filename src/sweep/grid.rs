//! Identification grids: the cartesian product of n, D, C_D and any
//! further parameters ([`Parameter`]), each an [`AxisValues`] given as
//! `start:stop:step` (inclusive) or a comma list.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

pub use super::axis::MAX_CANDIDATES;
use super::axis::{Axis, AxisValues, NOT_A_GRID_AXIS};
use super::parameter::Parameter;
use crate::error::InputError;
use crate::model::TetherParams;
use crate::scenario::Scenario;

/// Most parameter axes a grid may have besides n, D and C_D.
pub const MAX_PARAMETER_AXES: usize = 4;

/// The cartesian product of its axes: n, D and C_D first (every grid has
/// them), then the further parameters in the order given, a release-time
/// axis last; the last axis varies fastest in the candidates' order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "GridForm", try_from = "GridForm")]
pub struct Grid {
    axes: Vec<AxisValues>,
}

/// A grid as its metadata (`grid`) and the chunks' run keys have always
/// written it: n, D and C_D by name, then the parameter axes.
#[derive(Serialize, Deserialize)]
struct GridForm {
    elements: Vec<usize>,
    damping_pa_s: Vec<f64>,
    drag_coefficient: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<AxisValues>,
}

impl From<Grid> for GridForm {
    fn from(grid: Grid) -> Self {
        Self {
            elements: grid.elements(),
            damping_pa_s: grid.axes[1].values.clone(),
            drag_coefficient: grid.axes[2].values.clone(),
            parameters: grid.parameter_axes().to_vec(),
        }
    }
}

impl TryFrom<GridForm> for Grid {
    type Error = InputError;

    fn try_from(form: GridForm) -> Result<Self, InputError> {
        let mut grid = Self::of_fixed(
            form.elements.iter().map(|&n| n as f64).collect(),
            form.damping_pa_s,
            form.drag_coefficient,
        )?;
        for axis in form.parameters {
            grid = grid.with(axis)?;
        }
        Ok(grid)
    }
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

    /// Sets its value on `axis`: n, D, C_D, or a parameter (a new axis
    /// while there is room). A planned film's shape is no candidate's and
    /// no grid's ([`Grid::with`] refuses it): nothing is set.
    pub fn set(&mut self, axis: Axis, value: f64) {
        match axis {
            Axis::Elements => self.elements = value as usize,
            Axis::Damping => self.damping_pa_s = value,
            Axis::Drag => self.drag_coefficient = value,
            Axis::Parameter(p) => self.parameters.set(p, value),
            Axis::FrameIntervalS | Axis::DurationS | Axis::Markers => {}
        }
    }

    /// Its value on `axis`, if it has that axis.
    pub fn value(&self, axis: Axis) -> Option<f64> {
        match axis {
            Axis::Elements => Some(self.elements as f64),
            Axis::Damping => Some(self.damping_pa_s),
            Axis::Drag => Some(self.drag_coefficient),
            Axis::Parameter(p) => self.parameters.get(p),
            Axis::FrameIntervalS | Axis::DurationS | Axis::Markers => None,
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
            axes: vec![
                AxisValues::parse(Axis::Elements, elements)?,
                AxisValues::parse(Axis::Damping, damping)?,
                AxisValues::parse(Axis::Drag, drag)?,
            ],
        }
        .checked_size()
    }

    /// The grid of n, D and C_D with these values, checked as each axis
    /// allows.
    pub fn of_fixed(
        elements: Vec<f64>,
        damping_pa_s: Vec<f64>,
        drag_coefficient: Vec<f64>,
    ) -> Result<Self, InputError> {
        Self {
            axes: vec![
                AxisValues::new(Axis::Elements, elements)?,
                AxisValues::new(Axis::Damping, damping_pa_s)?,
                AxisValues::new(Axis::Drag, drag_coefficient)?,
            ],
        }
        .checked_size()
    }

    fn checked_size(self) -> Result<Self, InputError> {
        let len = self
            .axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
        match len {
            Some(len) if len <= MAX_CANDIDATES => Ok(self),
            _ => Err(InputError::new(
                "grid",
                len.map_or("too many".to_string(), |l| l.to_string()),
                format!("at most {MAX_CANDIDATES} candidates"),
            )),
        }
    }

    /// This grid with the axis `name = text` (`--axis NAME=AXIS`):
    /// [`Grid::with`] the axis parsed.
    pub fn with_axis(self, name: &str, text: &str) -> Result<Self, InputError> {
        self.with(AxisValues::parse(Axis::parse(name)?, text)?)
    }

    /// This grid with `axis`: n, D or C_D replace that axis; any other
    /// parameter adds one (once each, at most [`MAX_PARAMETER_AXES`]),
    /// after the others but before a release-time axis, which stays last.
    /// A planned film's shape is no grid's axis. Whether its values suit
    /// the experiment is the workflow's check.
    pub fn with(mut self, axis: AxisValues) -> Result<Self, InputError> {
        let field = axis.axis.column();
        if !axis.axis.is_grid_axis() {
            return Err(InputError::new(
                "axis",
                format!("'{field}'"),
                NOT_A_GRID_AXIS,
            ));
        }
        if let Some(fixed) = self.axes[..3].iter_mut().find(|a| a.axis == axis.axis) {
            *fixed = axis;
            return self.checked_size();
        }
        if self.parameter_axes().iter().any(|a| a.axis == axis.axis) {
            return Err(InputError::new(
                "axis",
                format!("'{field}' twice"),
                "each parameter on one axis",
            ));
        }
        if self.parameter_axes().len() == MAX_PARAMETER_AXES {
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
        let release = Axis::Parameter(Parameter::ReleaseTimeS);
        let at = self
            .axes
            .iter()
            .position(|a| a.axis == release)
            .unwrap_or(self.axes.len());
        self.axes.insert(at, axis);
        self.checked_size()
    }

    /// Every axis: n, D and C_D, then the parameters'.
    pub fn axes(&self) -> &[AxisValues] {
        &self.axes
    }

    /// The axes after n, D and C_D.
    pub fn parameter_axes(&self) -> &[AxisValues] {
        &self.axes[3..]
    }

    /// Each further parameter and its values, in the grid's order.
    pub fn parameters(&self) -> impl Iterator<Item = (Parameter, &[f64])> + '_ {
        self.parameter_axes()
            .iter()
            .filter_map(|a| Some((a.axis.parameter()?, a.values.as_slice())))
    }

    /// The values of `axis`, if the grid has it.
    pub fn values(&self, axis: Axis) -> Option<&[f64]> {
        self.axes
            .iter()
            .find(|a| a.axis == axis)
            .map(|a| a.values.as_slice())
    }

    /// Whether the grid has an axis over `axis`.
    pub fn has(&self, axis: Axis) -> bool {
        self.values(axis).is_some()
    }

    /// n's values.
    pub fn elements(&self) -> Vec<usize> {
        self.axes[0].whole()
    }

    /// Candidates in a row of the candidates' order that differ only in the
    /// release time: the release axis's length (1 without one).
    pub fn release_run(&self) -> usize {
        self.parameter_axes()
            .last()
            .filter(|a| a.axis == Axis::Parameter(Parameter::ReleaseTimeS))
            .map_or(1, |a| a.values.len())
    }

    /// The release axis's values, where the grid has one of two values or
    /// more: each release group's shared simulation samples them all
    /// ([`super::release::whole_group`]), however a chunk or shard cuts
    /// the group.
    pub fn release_axis(&self) -> Option<&[f64]> {
        self.values(Axis::Parameter(Parameter::ReleaseTimeS))
            .filter(|v| v.len() > 1)
    }

    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
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
        let keys = || Axis::FIXED.map(Axis::grid_key).join(", ");
        let form_error = |message: String| {
            InputError::new(
                "grid",
                message,
                format!(
                    "a TOML file with the keys {} and any parameter axes by name, each an axis string (\"0:10000:100\") or an array of numbers",
                    keys()
                ),
            )
        };
        let mut file: toml::Table =
            toml::from_str(text).map_err(|e| form_error(e.message().into()))?;
        // An axis string, or an array of numbers as a comma list.
        let text_of = |key: &str, value: toml::Value| -> Result<String, InputError> {
            match value {
                toml::Value::String(t) => Ok(t),
                toml::Value::Array(values) => values
                    .iter()
                    .map(|v| match v {
                        toml::Value::Integer(i) => Ok(i.to_string()),
                        toml::Value::Float(x) => Ok(x.to_string()),
                        other => Err(form_error(format!("{key} holds {other}"))),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|v| v.join(",")),
                other => Err(form_error(format!("{key} = {other}"))),
            }
        };
        let mut fixed = Vec::with_capacity(3);
        for key in Axis::FIXED.map(Axis::grid_key) {
            fixed.push(file.remove(key).map(|v| text_of(key, v)).transpose()?);
        }
        let [Some(elements), Some(damping), Some(drag)] = fixed.as_slice() else {
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
        for (name, value) in file {
            let Some(axis @ Axis::Parameter(_)) = Axis::from_grid_key(&name) else {
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
            grid = grid.with(AxisValues::parse(axis, &text_of(&name, value)?)?)?;
        }
        Ok(grid)
    }

    /// The position of `candidate` in [`Grid::candidates`], if it is a grid point.
    pub fn index_of(&self, candidate: &Candidate) -> Option<usize> {
        if candidate.parameters.iter().count() != self.parameter_axes().len() {
            return None;
        }
        self.axes.iter().try_fold(0usize, |index, axis| {
            let value = candidate.value(axis.axis)?;
            let i = axis.values.iter().position(|&v| v == value)?;
            Some(index * axis.values.len() + i)
        })
    }

    /// The candidate at position `i` of the candidates' order (n, D, C_D,
    /// parameter axes…, the last axis fastest): the inverse of
    /// [`Grid::index_of`]. A run makes its candidates from their positions
    /// as it runs them, so that a grid of millions takes no memory before
    /// its first chunk.
    pub fn candidate(&self, i: usize) -> Candidate {
        assert!(i < self.len(), "candidate {i} of a grid of {}", self.len());
        let mut rest = i;
        let mut on_axes = [0usize; 3 + MAX_PARAMETER_AXES];
        for (k, axis) in self.axes.iter().enumerate().rev() {
            on_axes[k] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        let value = |k: usize| self.axes[k].values[on_axes[k]];
        let mut candidate = Candidate::new(value(0) as usize, value(1), value(2));
        for (k, axis) in self.axes.iter().enumerate().skip(3) {
            if let Axis::Parameter(p) = axis.axis {
                candidate.parameters.set(p, value(k));
            }
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
    use super::super::axis::parse_values;
    use super::*;

    #[test]
    fn n_d_and_c_d_are_axes_like_the_others_and_a_films_shape_is_none() {
        let grid = Grid::parse("4", "1", "0.8")
            .unwrap()
            .with(AxisValues::new(Axis::Damping, vec![2.0, 3.0]).unwrap())
            .unwrap();
        assert_eq!(grid.values(Axis::Damping).unwrap(), [2.0, 3.0]);
        assert_eq!(grid.axes().len(), 3);
        let e = grid
            .clone()
            .with(AxisValues::new(Axis::Markers, vec![4.0]).unwrap())
            .unwrap_err();
        assert!(e.allowed.contains("design"), "{e}");
        let mut c = grid.candidate(1);
        assert_eq!(c.damping_pa_s, 3.0);
        c.set(Axis::Damping, 2.0);
        assert_eq!(grid.index_of(&c), Some(0));
    }

    #[test]
    fn a_value_twice_is_refused_with_the_value() {
        for text in ["0.8,0.8", "4,5,4", "0.8,0.80"] {
            let e = parse_values(Axis::Drag.column(), text)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("distinct values") && e.contains("given twice"),
                "{text}: {e}"
            );
        }
        assert_eq!(parse_values("x", "0.7,0.8").unwrap(), [0.7, 0.8]);
        let e = Grid::parse("4,4", "0", "0.8").unwrap_err().to_string();
        assert!(e.contains("4 is given twice"), "{e}");
    }

    #[test]
    fn ranges_are_inclusive_and_lists_literal() {
        assert_eq!(parse_values("d", "0:10000:100").unwrap().len(), 101);
        let cd = parse_values("c", "0.6:0.9:0.05").unwrap();
        assert_eq!(cd.len(), 7);
        assert!((cd[6] - 0.9).abs() < 1e-12);
        assert_eq!(parse_values("n", "10,30").unwrap(), vec![10.0, 30.0]);
        assert_eq!(parse_values("n", "5").unwrap(), vec![5.0]);
        let g = Grid::parse("10:50:10", "0:10000:100", "0.6:0.9:0.05").unwrap();
        assert_eq!(g.len(), 3535, "docs/model.md §6");
    }

    #[test]
    fn range_values_are_the_decimals_typed() {
        // Accumulated steps would give 0.7999999999999999 and
        // 0.7000000000000001 here.
        assert_eq!(
            parse_values("d", "0.7:0.9:0.1").unwrap(),
            vec![0.7, 0.8, 0.9]
        );
        let spec = parse_values("d", "0.6:0.9:0.05").unwrap();
        assert_eq!(spec.len(), 7);
        for (i, v) in spec.iter().enumerate() {
            let typed: f64 = format!("0.{}", 60 + 5 * i).parse().unwrap();
            assert_eq!(*v, typed, "value {i}");
        }
        assert_eq!(
            parse_values("d", "-100:1000:250").unwrap(),
            vec![-100.0, 150.0, 400.0, 650.0, 900.0]
        );
        assert_eq!(
            parse_values("d", "1e-3:3e-3:1e-3").unwrap(),
            vec![1e-3, 2e-3, 3e-3]
        );
        // No short decimal: the plain sum.
        let third = 1.0 / 3.0;
        assert_eq!(
            parse_values("d", &format!("0:1:{third}")).unwrap(),
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
            grid.parameter_axes()
                .iter()
                .map(|a| a.axis)
                .collect::<Vec<_>>(),
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
        assert_eq!(g.values(Axis::Damping).unwrap(), [0.0, 500.0, 1000.0]);
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
            let e = parse_values("an_axis", text).unwrap_err();
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
