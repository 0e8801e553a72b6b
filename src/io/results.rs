//! The identification results table: one row per candidate.

use std::collections::BTreeMap;
use std::path::Path;

use super::IoError;
use super::table::{Column, write_columns};
use crate::camera::Camera;
use crate::gpu::GpuLayout;
use crate::least_squares::profile::{Profile, ProfileEnd};
use crate::named::Named;
use crate::solver::ImplicitMethod;
use crate::status::RunStatus;
use crate::sweep::joint::{FilmAxes, FilmScore};
use crate::sweep::{Axis, CandidateResult};

/// Writes `results` with the documented schema: `elements`, `damping_pa_s`,
/// `drag_coefficient`, one column per parameter axis named as the parameter
/// (`release_time_s`, `youngs_modulus_pa`, …), `j_e_m2` (null unless ok), `status` (ok | diverged),
/// `step_s` (null for the adaptive reference solver), `steps`,
/// `tolerance_m` (the reference solver's, null for a fixed step), `backend`
/// and `precision` (per row: the CPU's and f64 for a GPU run's rows
/// re-run on the CPU), `solver`, `gpu_layout` (`thread` or `workgroup`,
/// null on the CPU).
pub fn write_results(
    path: &Path,
    results: &[CandidateResult],
    backend: &str,
    precision: &str,
    solver: &str,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    write_joint_results(path, results, &[], backend, precision, solver, metadata)
}

/// `Some("cpu")` for a row of a GPU run that the CPU ran: a row the GPU
/// ran has its layout; one without is a GPU first pass's candidate near
/// the best, re-run on the reference solver at the data's tolerance.
fn on_cpu(r: &CandidateResult, backend: &str) -> Option<&'static str> {
    (backend == "gpu" && r.gpu_layout.is_none()).then_some("cpu")
}

fn backend_column(results: &[CandidateResult], backend: &str) -> Column {
    Column::text(
        "backend",
        results
            .iter()
            .map(|r| on_cpu(r, backend).unwrap_or(backend).to_string())
            .collect(),
    )
}

fn precision_column(results: &[CandidateResult], backend: &str, precision: &str) -> Column {
    Column::text(
        "precision",
        results
            .iter()
            .map(|r| on_cpu(r, backend).map_or(precision, |_| "f64").to_string())
            .collect(),
    )
}

/// [`write_results`] of a joint identification (`sweep::joint`): `j_e_m2`
/// is the joint J_e, and each film adds `FILM.j_e_m2` (its J_e at its best
/// own values) and `FILM.NAME` for each of its own axes (those values).
pub fn write_joint_results(
    path: &Path,
    results: &[CandidateResult],
    films: &[(&FilmAxes, &[FilmScore])],
    backend: &str,
    precision: &str,
    solver: &str,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let rows = results.len();
    let mut ran: BTreeMap<&str, usize> = BTreeMap::new();
    for layout in results.iter().filter_map(|r| r.gpu_layout) {
        *ran.entry(layout.name()).or_default() += 1;
    }
    let mut metadata = metadata.clone();
    if !ran.is_empty() {
        metadata.insert(
            crate::metadata::GPU_LAYOUTS_RAN.into(),
            crate::metadata::json(&ran),
        );
    }
    let parameter_columns: Vec<Column> = results
        .first()
        .map(|r| {
            r.candidate
                .parameters
                .iter()
                .map(|(p, _)| p)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .map(|p| {
            Column::f64(
                p.name(),
                p.unit(),
                results
                    .iter()
                    .map(|r| r.candidate.parameters.get(p).unwrap_or(f64::NAN))
                    .collect(),
            )
        })
        .collect();
    let mut columns = vec![
        Column::i32(
            Axis::Elements.column(),
            results
                .iter()
                .map(|r| r.candidate.elements as i32)
                .collect(),
        ),
        Column::f64(
            Axis::Damping.column(),
            Axis::Damping.unit(),
            results.iter().map(|r| r.candidate.damping_pa_s).collect(),
        ),
        Column::f64(
            Axis::Drag.column(),
            Axis::Drag.unit(),
            results
                .iter()
                .map(|r| r.candidate.drag_coefficient)
                .collect(),
        ),
    ];
    columns.extend(parameter_columns);
    columns.extend([
        Column::optional_f64("j_e_m2", "m^2", results.iter().map(|r| r.j_e_m2).collect()),
        Column::text(
            "status",
            results
                .iter()
                .map(|r| r.status.name().to_string())
                .collect(),
        ),
        abandoned_at_column(results),
        Column::optional_f64("step_s", "s", results.iter().map(|r| r.step_s).collect()),
        Column::i64("steps", results.iter().map(|r| r.steps as i64).collect()),
        Column::optional_f64(
            "tolerance_m",
            "m",
            results.iter().map(|r| r.tolerance_m).collect(),
        ),
        method_column(results),
        backend_column(results, backend),
        precision_column(results, backend, precision),
        Column::text("solver", vec![solver.to_string(); rows]),
        Column::optional_text(
            "gpu_layout",
            results
                .iter()
                .map(|r| r.gpu_layout.map(GpuLayout::name))
                .collect(),
        ),
    ]);
    columns.extend(film_columns(films));
    write_columns(path, columns, &metadata)
}

/// The reference solver's method per row (null for a fixed-step scheme).
fn method_column(results: &[CandidateResult]) -> Column {
    let names = results
        .iter()
        .map(|r| r.implicit_method.map(|m| m.name()))
        .collect();
    Column::optional_text("implicit_method", names)
}

/// Where an abandoned row stopped (its `j_e_m2` is then a lower bound).
fn abandoned_at_column(results: &[CandidateResult]) -> Column {
    let at = results.iter().map(|r| r.status.abandoned_at()).collect();
    Column::optional_f64("abandoned_at_s", "s", at)
}

/// Each film's `FILM.j_e_m2` and `FILM.NAME` per own axis.
fn film_columns(films: &[(&FilmAxes, &[FilmScore])]) -> Vec<Column> {
    let mut columns = Vec::new();
    for (film, scores) in films {
        columns.push(Column::optional_f64(
            film.column("j_e_m2"),
            "m^2",
            scores.iter().map(|s| s.j_e_m2).collect(),
        ));
        for p in film.own.iter().filter_map(|a| a.axis.parameter()) {
            columns.push(Column::f64(
                film.column(p.name()),
                p.unit(),
                scores
                    .iter()
                    .map(|s| s.own.get(p).unwrap_or(f64::NAN))
                    .collect(),
            ));
        }
    }
    columns
}

/// A named column of `batch` as f64 (nulls as None), or a format error.
fn optional_f64s(
    batch: &arrow::record_batch::RecordBatch,
    name: &str,
    path: &Path,
) -> Result<Vec<Option<f64>>, IoError> {
    use arrow::array::{Array, Float64Array};
    let column = batch.column_by_name(name).ok_or_else(|| IoError::Format {
        path: path.to_owned(),
        message: format!("missing column `{name}`"),
    })?;
    let cast = arrow::compute::cast(column, &arrow::datatypes::DataType::Float64).map_err(|e| {
        IoError::Format {
            path: path.to_owned(),
            message: format!("column `{name}`: {e}"),
        }
    })?;
    let values = cast
        .as_any()
        .downcast_ref::<Float64Array>()
        .expect("cast to Float64 gives Float64Array");
    Ok((0..values.len())
        .map(|i| values.is_valid(i).then(|| values.value(i)))
        .collect())
}

fn required(values: Vec<Option<f64>>, name: &str, path: &Path) -> Result<Vec<f64>, IoError> {
    values
        .into_iter()
        .enumerate()
        .map(|(row, v)| {
            v.ok_or_else(|| IoError::Format {
                path: path.to_owned(),
                message: format!("column `{name}` is empty in row {row}"),
            })
        })
        .collect()
}

/// Reads a results table written by [`write_results`] (the diverged
/// reason is not stored, so it comes back empty).
pub fn read_results(path: &Path) -> Result<Vec<CandidateResult>, IoError> {
    use crate::sweep::Candidate;
    let batch = super::track::read_table(path)?;
    let col = |name: &str| optional_f64s(&batch, name, path);
    let axis = |a: Axis| required(col(a.column())?, a.column(), path);
    let (elements, damping, drag) = (
        axis(Axis::Elements)?,
        axis(Axis::Damping)?,
        axis(Axis::Drag)?,
    );
    // The parameter axes: the columns named as a parameter, in the
    // table's order (the grid's).
    let parameters: Vec<(crate::sweep::Parameter, Vec<f64>)> = batch
        .schema()
        .fields()
        .iter()
        .filter_map(|f| crate::sweep::Parameter::parse(f.name()).ok())
        .map(|p| Ok((p, required(col(p.name())?, p.name(), path)?)))
        .collect::<Result<_, IoError>>()?;
    let j_e = col("j_e_m2")?;
    let step = col("step_s")?;
    let steps = required(col("steps")?, "steps", path)?;
    // Tables from before the tolerance was chosen per row have none.
    let tolerance = match batch.column_by_name("tolerance_m") {
        Some(_) => col("tolerance_m")?,
        None => vec![None; batch.num_rows()],
    };
    let methods = read_methods(&batch, &tolerance, path)?;
    // Tables from before candidates were abandoned have none.
    let abandoned_at = match batch.column_by_name("abandoned_at_s") {
        Some(_) => col("abandoned_at_s")?,
        None => vec![None; batch.num_rows()],
    };
    let status = batch
        .column_by_name("status")
        .and_then(|c| {
            c.as_any()
                .downcast_ref::<arrow::array::StringArray>()
                .cloned()
        })
        .ok_or_else(|| IoError::Format {
            path: path.to_owned(),
            message: "missing text column `status`".into(),
        })?;
    // Tables from before the workgroup layout have no such column.
    let layouts = batch.column_by_name("gpu_layout").and_then(|c| {
        c.as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .cloned()
    });
    (0..batch.num_rows())
        .map(|i| {
            use arrow::array::Array;
            let status = match status.value(i) {
                "ok" => RunStatus::Ok,
                "diverged" => RunStatus::diverged(""),
                "cancelled" => RunStatus::Cancelled,
                "abandoned" => RunStatus::Abandoned {
                    time_s: abandoned_at[i].unwrap_or(f64::NAN),
                },
                other => {
                    return Err(IoError::Format {
                        path: path.to_owned(),
                        message: format!("row {i}: unknown status `{other}`"),
                    });
                }
            };
            let mut candidate = Candidate::new(elements[i] as usize, damping[i], drag[i]);
            for (p, values) in &parameters {
                candidate.parameters.set(*p, values[i]);
            }
            Ok(CandidateResult {
                candidate,
                j_e_m2: j_e[i],
                status,
                step_s: step[i],
                steps: steps[i] as u64,
                tolerance_m: tolerance[i],
                implicit_method: methods[i],
                gpu_layout: match layouts.as_ref().map(|l| l.is_valid(i).then(|| l.value(i))) {
                    None | Some(None) => None,
                    Some(Some(name)) => Some(
                        GpuLayout::ALL
                            .into_iter()
                            .find(|l| l.name() == name)
                            .ok_or_else(|| IoError::Format {
                                path: path.to_owned(),
                                message: format!("row {i}: unknown gpu_layout `{name}`"),
                            })?,
                    ),
                },
            })
        })
        .collect()
}

/// Each row's `implicit_method`; tables from before the method was
/// chosen per row have none, and their reference rows (those with a
/// tolerance) ran generalized-α.
fn read_methods(
    batch: &arrow::record_batch::RecordBatch,
    tolerance: &[Option<f64>],
    path: &Path,
) -> Result<Vec<Option<ImplicitMethod>>, IoError> {
    use arrow::array::Array;
    let format = |message: String| IoError::Format {
        path: path.to_owned(),
        message,
    };
    let Some(column) = batch.column_by_name("implicit_method") else {
        return Ok(tolerance
            .iter()
            .map(|t| t.map(|_| ImplicitMethod::GeneralizedAlpha))
            .collect());
    };
    let names = column
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .ok_or_else(|| format("column `implicit_method` is not text".into()))?;
    (0..names.len())
        .map(|i| {
            names
                .is_valid(i)
                .then(|| names.value(i).parse())
                .transpose()
                .map_err(|_| {
                    format(format!(
                        "row {i}: unknown implicit_method `{}`",
                        names.value(i)
                    ))
                })
        })
        .collect()
}

/// The best candidate's simulated markers beside the measured ones, at every
/// frame and marker the measured track has: columns `t`, `marker`,
/// `x_measured`, `y_measured`, `x_fit`, `y_fit`.
#[derive(Debug, Clone, PartialEq)]
pub struct BestFit {
    pub times_s: Vec<f64>,
    pub markers: Vec<usize>,
    pub measured_m: Vec<[f64; 2]>,
    pub fitted_m: Vec<[f64; 2]>,
    /// The refined optimum's markers at the same rows, when refined.
    pub refined_m: Option<Vec<[f64; 2]>>,
}

impl BestFit {
    /// Pairs the fitted track with the measured points of the same frame and
    /// marker; frames the measurement lacks (t = 0 may be) are left out.
    pub fn new(measured: &crate::track::MeasuredTrack, fitted: &crate::track::Track) -> Self {
        let mut fit = Self {
            times_s: Vec::new(),
            markers: Vec::new(),
            measured_m: Vec::new(),
            fitted_m: Vec::new(),
            refined_m: None,
        };
        for (f, &t) in fitted.times_s.iter().enumerate() {
            for j in 0..fitted.markers() {
                if let Some(m) = measured.get(t, j) {
                    fit.times_s.push(t);
                    fit.markers.push(j);
                    fit.measured_m.push(m);
                    fit.fitted_m.push(fitted.at(f, j));
                }
            }
        }
        fit
    }

    /// Adds the refined optimum's track (the same frames and markers).
    pub fn with_refined(mut self, refined: &crate::track::Track) -> Self {
        let frame = |t: f64| {
            refined
                .times_s
                .iter()
                .position(|&r| (r - t).abs() < 1e-9)
                .expect("the refined run has the best fit's frames")
        };
        self.refined_m = Some(
            self.times_s
                .iter()
                .zip(&self.markers)
                .map(|(&t, &j)| refined.at(frame(t), j))
                .collect(),
        );
        self
    }
}

/// Writes the best fit: `t`, `marker`, `x_measured`, `y_measured`,
/// `x_fit`, `y_fit`, and when refined `x_refined`, `y_refined`, all in the
/// model's frame; then the same fit in the measured file's own numbers
/// through `camera` (a drop pinned at `model_pin_m`), to draw over the
/// video: `t_file`, `marker_file`, `x_file`, `y_file` (and
/// `x_refined_file`, `y_refined_file`).
pub fn write_best_fit(
    path: &Path,
    fit: &BestFit,
    camera: &Camera,
    model_pin_m: [f64; 2],
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let coordinate = |points: &[[f64; 2]], axis: usize| points.iter().map(|p| p[axis]).collect();
    let map = camera.map(model_pin_m);
    let in_file =
        |points: &[[f64; 2]]| -> Vec<[f64; 2]> { points.iter().map(|&p| map.to_file(p)).collect() };
    let fitted_file = in_file(&fit.fitted_m);
    let length_unit = camera.unit.name();
    let mut columns = vec![
        Column::f64("t", "s", fit.times_s.clone()),
        Column::i32("marker", fit.markers.iter().map(|&j| j as i32).collect()),
        Column::f64("x_measured", "m", coordinate(&fit.measured_m, 0)),
        Column::f64("y_measured", "m", coordinate(&fit.measured_m, 1)),
        Column::f64("x_fit", "m", coordinate(&fit.fitted_m, 0)),
        Column::f64("y_fit", "m", coordinate(&fit.fitted_m, 1)),
    ];
    if let Some(r) = &fit.refined_m {
        columns.push(Column::f64("x_refined", "m", coordinate(r, 0)));
        columns.push(Column::f64("y_refined", "m", coordinate(r, 1)));
    }
    columns.extend([
        Column::f64(
            "t_file",
            camera.time_unit.name(),
            fit.times_s.iter().map(|&t| camera.file_time(t)).collect(),
        ),
        Column::i32(
            "marker_file",
            fit.markers
                .iter()
                .map(|&j| (j + camera.first_marker) as i32)
                .collect(),
        ),
        Column::f64("x_file", length_unit, coordinate(&fitted_file, 0)),
        Column::f64("y_file", length_unit, coordinate(&fitted_file, 1)),
    ]);
    if let Some(r) = &fit.refined_m {
        let refined_file = in_file(r);
        columns.push(Column::f64(
            "x_refined_file",
            length_unit,
            coordinate(&refined_file, 0),
        ));
        columns.push(Column::f64(
            "y_refined_file",
            length_unit,
            coordinate(&refined_file, 1),
        ));
    }
    write_columns(path, columns, metadata)
}

/// A refined parameter's profile end (unresolved when it was not profiled).
fn end(
    r: &crate::sweep::refine::RefinedParameter,
    side: impl Fn(&Profile) -> &ProfileEnd,
) -> ProfileEnd {
    r.profile.as_ref().map_or(
        ProfileEnd::Unresolved {
            value: f64::NAN,
            why: "not profiled".into(),
        },
        |p| side(p).clone(),
    )
}

/// How a profile end is written in `profile_lower_end`/`profile_upper_end`.
fn end_kind(end: &ProfileEnd) -> String {
    match end {
        ProfileEnd::Crossed { .. } => "crossed",
        ProfileEnd::Bound { .. } => "bound",
        ProfileEnd::Unresolved { .. } => "unresolved",
    }
    .into()
}

/// Writes the refined optimum: one row per refined parameter, `parameter`
/// (its column in results.parquet), `value`, `standard_error`,
/// `grid_best`, `at_bound`, the profile interval's ends `profile_lower` and
/// `profile_upper` (null unless the profile crosses the threshold there)
/// and how each ended, `profile_lower_end`/`profile_upper_end`: "crossed",
/// "bound" (the profile stays below the threshold to the grid's bound) or
/// "unresolved"; with J_e, σ, the covariance and the profiles' points in
/// `metadata`.
pub fn write_refined(
    path: &Path,
    refined: &crate::sweep::refine::Refined,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let p = &refined.parameters;
    write_columns(
        path,
        vec![
            Column::text("parameter", p.iter().map(|r| r.name()).collect()),
            Column::f64("value", "", p.iter().map(|r| r.value).collect()),
            Column::f64(
                "standard_error",
                "",
                p.iter().map(|r| r.standard_error).collect(),
            ),
            Column::f64("grid_best", "", p.iter().map(|r| r.grid_best).collect()),
            Column::boolean("at_bound", p.iter().map(|r| r.at_bound).collect()),
            Column::optional_f64(
                "profile_lower",
                "",
                p.iter().map(|r| end(r, |p| &p.lower).crossed()).collect(),
            ),
            Column::optional_f64(
                "profile_upper",
                "",
                p.iter().map(|r| end(r, |p| &p.upper).crossed()).collect(),
            ),
            Column::text(
                "profile_lower_end",
                p.iter().map(|r| end_kind(&end(r, |p| &p.lower))).collect(),
            ),
            Column::text(
                "profile_upper_end",
                p.iter().map(|r| end_kind(&end(r, |p| &p.upper))).collect(),
            ),
        ],
        metadata,
    )
}

pub fn read_best_fit(path: &Path) -> Result<BestFit, IoError> {
    let batch = super::track::read_table(path)?;
    let col = |name: &str| -> Result<Vec<f64>, IoError> {
        required(optional_f64s(&batch, name, path)?, name, path)
    };
    let pair = |x: Vec<f64>, y: Vec<f64>| x.into_iter().zip(y).map(|(x, y)| [x, y]).collect();
    Ok(BestFit {
        times_s: col("t")?,
        markers: col("marker")?.into_iter().map(|m| m as usize).collect(),
        measured_m: pair(col("x_measured")?, col("y_measured")?),
        fitted_m: pair(col("x_fit")?, col("y_fit")?),
        refined_m: match batch.column_by_name("x_refined") {
            Some(_) => Some(pair(col("x_refined")?, col("y_refined")?)),
            None => None,
        },
    })
}
