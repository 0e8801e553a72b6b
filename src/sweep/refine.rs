//! The refined optimum: from the grid's best candidate, a local
//! Levenberg–Marquardt fit ([`crate::least_squares`]) of the continuous grid
//! axes (D, C_D and the parameter axes, each when the grid varies it; n
//! stays the best's) to the measured marker coordinates, on the reference
//! solver, bounded by the grid's range, with standard errors and the
//! correlation from the Gauss–Newton covariance. Each residual evaluation
//! is a simulation.

use serde::Serialize;

use super::axis::Axis;
use super::{Candidate, Grid};
use crate::least_squares::{LmSettings, levenberg_marquardt};
use crate::model::TetherParams;
use crate::objective::MeasuredTrack;
use crate::scenario::{Scenario, SolverSettings, simulate};
use crate::solver::SolverError;

/// One refined parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedParameter {
    /// Its axis (written as its column in results.parquet).
    pub parameter: Axis,
    pub value: f64,
    /// From the Gauss–Newton covariance σ² (JᵀJ)⁻¹.
    pub standard_error: f64,
    /// The grid's best value at the refined n: where the refinement began.
    pub grid_best: f64,
    /// On the grid's bound: the data may want it beyond the range searched.
    pub at_bound: bool,
}

/// The refined optimum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refined {
    /// n: the grid's, of the refinement kept.
    pub elements: usize,
    /// The n refined (see [`refine_best`]); the one kept is `elements`.
    pub elements_tried: Vec<usize>,
    pub parameters: Vec<RefinedParameter>,
    /// J_e at the refined values \[m²\].
    pub j_e_m2: f64,
    /// Compared coordinates and σ = √(J_e / (N − p)) \[m\].
    pub observations: usize,
    pub sigma_m: f64,
    /// σ² (JᵀJ)⁻¹ in the parameters' order.
    pub covariance: Vec<Vec<f64>>,
    /// Correlation of the first two parameters, when there are two.
    pub correlation: Option<f64>,
    pub iterations: usize,
    pub simulations: usize,
    /// Why a parameter is not determined by the data, if one is not: a
    /// near-singular JᵀJ, or an estimate on a bound.
    pub undetermined: Option<String>,
    /// Every refined n's own fit, the kept one included, by n.
    pub per_elements: Vec<ElementsFit>,
}

/// One n's refinement: what the same data say at another mesh.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElementsFit {
    pub elements: usize,
    pub j_e_m2: f64,
    /// In [`Refined::parameters`]' order.
    pub values: Vec<f64>,
}

/// A refined parameter that moves between two refined n by more than its
/// standard error: the mesh's error is then comparable to the data's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshMove {
    pub parameter: Axis,
    /// The other n, and the value there.
    pub elements: usize,
    pub value: f64,
    /// |its value there − the kept value| in the kept standard errors.
    pub standard_errors: f64,
}

impl Refined {
    /// For each refined parameter, the other refined n at which it lies
    /// furthest from the kept value, when that is more than one standard
    /// error away (docs/identify.md, "The mesh").
    pub fn mesh_moves(&self) -> Vec<MeshMove> {
        self.parameters
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                self.per_elements
                    .iter()
                    .filter(|f| f.elements != self.elements)
                    .map(|f| MeshMove {
                        parameter: p.parameter,
                        elements: f.elements,
                        value: f.values[i],
                        standard_errors: (f.values[i] - p.value).abs() / p.standard_error,
                    })
                    .filter(|m| m.standard_errors > 1.0)
                    .max_by(|a, b| a.standard_errors.total_cmp(&b.standard_errors))
            })
            .collect()
    }

    /// The refined candidate: its n, its refined values, and `best`'s for
    /// the axes not refined.
    pub fn candidate(&self, best: &Candidate) -> Candidate {
        let mut c = Candidate {
            elements: self.elements,
            ..*best
        };
        for p in &self.parameters {
            set(p.parameter, &mut c, p.value);
        }
        c
    }
}

/// The grid's continuous axes, in its order, each when it varies.
fn varied(grid: &Grid) -> Vec<Axis> {
    let mut axes = grid.axes();
    axes.retain(|a| a.is_continuous() && values(*a, grid).len() > 1);
    axes
}

fn values(axis: Axis, grid: &Grid) -> Vec<f64> {
    grid.axis_values(axis).unwrap_or_default()
}

fn get(axis: Axis, c: &Candidate) -> f64 {
    c.value(axis).expect("the candidate is on the grid")
}

/// Sets a continuous axis's value in `c`.
fn set(axis: Axis, c: &mut Candidate, value: f64) {
    match axis {
        Axis::Damping => c.damping_pa_s = value,
        Axis::Drag => c.drag_coefficient = value,
        Axis::Parameter(p) => c.parameters.set(p, value),
        Axis::Elements => unreachable!("n is not refined: varied() leaves it out"),
    }
}

/// `best` with the `axes` set to `p`.
fn with_values(best: &Candidate, axes: &[Axis], p: &[f64]) -> Candidate {
    let mut c = *best;
    for (&axis, &v) in axes.iter().zip(p) {
        set(axis, &mut c, v);
    }
    c
}

/// The measured minus simulated coordinates of every compared sample.
fn residuals(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
) -> Result<Vec<f64>, SolverError> {
    let track = simulate(scenario, params, settings)?.track;
    let mut r = Vec::new();
    // Every frame but the first, as J_e (`Scenario::compared_frame_times_s`).
    for (f, &t) in track.times_s.iter().enumerate().skip(1) {
        for j in 0..track.markers() {
            if let Some(m) = measured.get(t, j) {
                let s = track.at(f, j);
                r.push(m[0] - s[0]);
                r.push(m[1] - s[1]);
            }
        }
    }
    Ok(r)
}

/// Refines the best candidate of every n whose grid J_e lies within the
/// confidence region's threshold (the grid's best always), and keeps the
/// refinement with the smallest J_e. A coarse grid can favour the wrong n
/// (its best (D, C_D) point happens to lie closer), and the refined J_e of
/// each n is the fair comparison; n far outside the region is not worth
/// its simulations.
pub fn refine_best(
    grid: &Grid,
    summary: &super::Summary,
    measured: &MeasuredTrack,
    scenario: &Scenario,
    base: &TetherParams,
    settings: &SolverSettings,
) -> Result<Option<Refined>, SolverError> {
    let threshold = summary.confidence.threshold_m2;
    let mut starts = vec![summary.best.candidate];
    starts.extend(
        summary
            .best_per_elements
            .iter()
            .filter(|r| r.candidate != summary.best.candidate)
            .filter(|r| r.j_e_m2.is_some_and(|j| j <= threshold))
            .map(|r| r.candidate),
    );
    let mut best: Option<Refined> = None;
    let mut simulations = 0;
    let mut per_elements = Vec::new();
    for start in &starts {
        if let Some(r) = refine(grid, start, measured, scenario, base, settings)? {
            simulations += r.simulations;
            per_elements.extend(r.per_elements.iter().cloned());
            if best.as_ref().is_none_or(|b| r.j_e_m2 < b.j_e_m2) {
                best = Some(r);
            }
        }
    }
    per_elements.sort_by_key(|f| f.elements);
    Ok(best.map(|b| Refined {
        simulations,
        elements_tried: starts.iter().map(|c| c.elements).collect(),
        per_elements,
        ..b
    }))
}

/// Refines `best` (the grid's best candidate) over the grid's continuous
/// axes; None when the grid has none.
pub fn refine(
    grid: &Grid,
    best: &Candidate,
    measured: &MeasuredTrack,
    scenario: &Scenario,
    base: &TetherParams,
    settings: &SolverSettings,
) -> Result<Option<Refined>, SolverError> {
    // The continuous axes the grid varies.
    let axes = varied(grid);
    if axes.is_empty() {
        return Ok(None);
    }
    let bounds: Vec<(f64, f64)> = axes
        .iter()
        .map(|a| {
            let v = values(*a, grid);
            (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        })
        .collect();
    let grid_best: Vec<f64> = axes.iter().map(|&a| get(a, best)).collect();
    let fit = levenberg_marquardt(
        |p: &[f64]| {
            let (tether, scenario) = with_values(best, &axes, p).experiment(base, scenario);
            residuals(measured, &scenario, &tether, settings)
        },
        &grid_best,
        &bounds,
        &LmSettings::DEFAULT,
    )?;
    let k = axes.len();
    let parameters: Vec<RefinedParameter> = (0..k)
        .map(|i| RefinedParameter {
            parameter: axes[i],
            value: fit.values[i],
            standard_error: fit
                .covariance
                .as_ref()
                .map_or(f64::NAN, |c| c[(i, i)].sqrt()),
            grid_best: grid_best[i],
            at_bound: fit.at_bound[i],
        })
        .collect();
    let undetermined = match fit.singular {
        Some((small, large)) => Some(format!(
            "JᵀJ is near singular (its correlation matrix's eigenvalues {small:.3e} and {large:.3e}): the data do not determine these parameters apart"
        )),
        None => fit.at_bound.iter().position(|&b| b).map(|i| {
            format!(
                "{} = {} is on the grid's bound: the data may want it beyond the range searched",
                axes[i].column(),
                fit.values[i]
            )
        }),
    };
    let correlation = fit
        .covariance
        .as_ref()
        .filter(|_| k == 2)
        .map(|c| c[(0, 1)] / (c[(0, 0)] * c[(1, 1)]).sqrt());
    Ok(Some(Refined {
        elements: best.elements,
        elements_tried: vec![best.elements],
        parameters,
        j_e_m2: fit.cost,
        observations: fit.observations,
        sigma_m: fit.sigma2.sqrt(),
        covariance: fit.covariance.map_or_else(
            || vec![vec![f64::NAN; k]; k],
            |c| {
                (0..k)
                    .map(|a| (0..k).map(|b| c[(a, b)]).collect())
                    .collect()
            },
        ),
        correlation,
        iterations: fit.iterations,
        simulations: fit.evaluations,
        undetermined,
        per_elements: vec![ElementsFit {
            elements: best.elements,
            j_e_m2: fit.cost,
            values: fit.values.clone(),
        }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refined(per_elements: Vec<ElementsFit>) -> Refined {
        let parameter = |axis, value, standard_error| RefinedParameter {
            parameter: axis,
            value,
            standard_error,
            grid_best: value,
            at_bound: false,
        };
        Refined {
            elements: 50,
            elements_tried: per_elements.iter().map(|f| f.elements).collect(),
            parameters: vec![
                parameter(Axis::Damping, 2000.0, 500.0),
                parameter(Axis::Drag, 0.8, 1e-3),
            ],
            j_e_m2: 1e-4,
            observations: 100,
            sigma_m: 1e-3,
            covariance: vec![vec![0.0; 2]; 2],
            correlation: None,
            iterations: 3,
            simulations: 30,
            undetermined: None,
            per_elements,
        }
    }

    #[test]
    fn a_parameter_that_moves_more_than_its_error_between_meshes_is_named() {
        let fit = |elements, damping, drag| ElementsFit {
            elements,
            j_e_m2: 1e-4,
            values: vec![damping, drag],
        };
        // D moves 0.8 SE (within its error), C_D 1.5 and 3 SE: the
        // largest is named, with its n.
        let r = refined(vec![
            fit(30, 2400.0, 0.803),
            fit(40, 1800.0, 0.8015),
            fit(50, 2000.0, 0.8),
        ]);
        let moves = r.mesh_moves();
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!(moves[0].parameter, Axis::Drag);
        assert_eq!(moves[0].elements, 30);
        assert!((moves[0].standard_errors - 3.0).abs() < 1e-9);
        // One n refined: nothing to compare.
        assert!(refined(vec![fit(50, 2000.0, 0.8)]).mesh_moves().is_empty());
    }
}
