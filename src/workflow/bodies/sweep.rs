//! A sweep over a constrained body's parameters (`simulate --scenario
//! arm|robot --axis NAME=AXIS`): every combination of the axes' values
//! run as its own simulation on all CPU cores, one row per candidate with
//! its evaluation functions. Each row depends only on its candidate, so
//! the table does not depend on how the work is cut.

use rayon::prelude::*;

use super::arm::simulate as simulate_arm;
use super::carried::{CARRIED_MARKERS, TetherRun, carried_group, run_tethers};
use super::robot::simulate as simulate_robot;
use super::{Body, BodyRequest};
use crate::constrained::Formulation;
use crate::constrained::integrate::{Ending, Trajectory};
use crate::error::InputError;
use crate::io::table::{Column, write_columns};
use crate::metadata;
use crate::sweep::axis::{Axis, parse_values};
use crate::workflow::WorkflowError;

/// The most candidates one sweep runs.
pub const MAX_BODY_CANDIDATES: usize = 100_000;

/// A swept parameter: its name as `--axis` takes it, its unit, and its
/// place in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyParameter {
    Kp,
    Kd,
    Alpha,
    Speed,
    Curvature,
    StartOffset,
    /// One of the carried tether's own numbers (n, D, C_D, a `[tether]`
    /// parameter), named as a grid names it.
    Tether(Axis),
}

impl BodyParameter {
    const ARM: [Self; 4] = [Self::Kp, Self::Kd, Self::Alpha, Self::Speed];
    const ROBOT: [Self; 5] = [
        Self::Kp,
        Self::Kd,
        Self::Speed,
        Self::Curvature,
        Self::StartOffset,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Kp => "kp_per_s2",
            Self::Kd => "kd_per_s",
            Self::Alpha => "alpha",
            Self::Speed => "speed_m_s",
            Self::Curvature => "curvature_per_m",
            Self::StartOffset => "start_offset_m",
            Self::Tether(axis) => axis.column(),
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Self::Kp => "1/s^2",
            Self::Kd => "1/s",
            Self::Alpha => "1",
            Self::Speed => "m/s",
            Self::Curvature => "1/m",
            Self::StartOffset => "m",
            Self::Tether(axis) => axis.unit(),
        }
    }

    /// `body` with this parameter at `value`.
    fn set(self, body: &mut Body, value: f64) {
        match body {
            Body::Arm {
                arm,
                formulation,
                tether,
            } => match (self, formulation) {
                (Self::Tether(axis), _) => {
                    if let Some(tether) = tether {
                        axis.set_tether(value, &mut tether.params);
                    }
                }
                (Self::Speed, _) => arm.speed_m_s = value,
                (Self::Kp, Formulation::Baumgarte { kp, .. })
                | (Self::Kp, Formulation::ModifiedLagrange { kp, .. }) => *kp = value,
                (Self::Kd, Formulation::Baumgarte { kd, .. })
                | (Self::Kd, Formulation::ModifiedLagrange { kd, .. }) => *kd = value,
                (Self::Alpha, Formulation::ModifiedLagrange { alpha, .. }) => *alpha = value,
                _ => {}
            },
            Body::Robot {
                program,
                start_offset_m,
                ..
            } => match self {
                Self::Kp => program.kp_per_s2 = value,
                Self::Kd => program.kd_per_s = value,
                Self::Speed => program.speed_m_s = value,
                Self::Curvature => program.curvature_per_m = value,
                Self::StartOffset => *start_offset_m = value,
                Self::Alpha | Self::Tether(_) => {}
            },
        }
    }
}

/// One axis: `NAME=AXIS` with the identification's axis syntax
/// (`start:stop:step` inclusive, or a comma list).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyAxis {
    pub parameter: BodyParameter,
    pub values: Vec<f64>,
}

impl BodyAxis {
    /// `text` as an axis of `body`'s parameters; an error names `axis` and
    /// lists them.
    pub fn parse(text: &str, body: &Body) -> Result<Self, InputError> {
        let allowed = match body {
            Body::Arm {
                formulation,
                tether,
                ..
            } => BodyParameter::ARM
                .iter()
                .copied()
                .filter(|p| {
                    *p != BodyParameter::Alpha
                        || matches!(formulation, Formulation::ModifiedLagrange { .. })
                })
                .chain(
                    Axis::tethers()
                        .filter(|_| tether.is_some())
                        .map(BodyParameter::Tether),
                )
                .collect::<Vec<_>>(),
            Body::Robot { .. } => BodyParameter::ROBOT.to_vec(),
        };
        let names = || {
            let names: Vec<&str> = allowed.iter().map(|p| p.name()).collect();
            format!("NAME=AXIS with NAME one of {}", names.join(", "))
        };
        let Some((name, values)) = text.split_once('=') else {
            return Err(InputError::new("axis", format!("'{text}'"), names()));
        };
        let Some(parameter) = allowed.iter().copied().find(|p| p.name() == name.trim()) else {
            let tethers = Axis::tethers().any(|a| a.column() == name.trim());
            let hint = match body {
                Body::Arm { tether: None, .. } if tethers => {
                    " (the carried tether's numbers are axes where the arm carries one: --tether)"
                }
                _ => "",
            };
            return Err(InputError::new(
                "axis",
                format!("'{}'", name.trim()),
                names() + hint,
            ));
        };
        let field = format!("axis {}", parameter.name());
        let values = parse_values(&field, values)?;
        if let BodyParameter::Tether(axis) = parameter {
            for &value in &values {
                axis.check(value).map_err(|e| InputError {
                    field: field.clone(),
                    ..e
                })?;
            }
        }
        Ok(Self { parameter, values })
    }
}

/// What a sweep did.
#[derive(Debug, Clone)]
pub struct BodySweepReport {
    pub candidates: usize,
    pub failed: usize,
    pub wall_s: f64,
    /// What ran the carried tethers, in words.
    pub tether_solver: Option<String>,
}

/// Runs every candidate of `axes` over `base` and writes one row each.
pub fn sweep(base: &BodyRequest, axes: &[BodyAxis]) -> Result<BodySweepReport, WorkflowError> {
    base.check()?;
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|n| *n <= MAX_BODY_CANDIDATES)
        .ok_or_else(|| {
            InputError::new(
                "axis",
                "their product",
                format!("at most {MAX_BODY_CANDIDATES} candidates"),
            )
        })?;
    // Each value checked alone, so that an error names its axis.
    for axis in axes {
        for &value in &axis.values {
            let mut one = base.clone();
            axis.parameter.set(&mut one.body, value);
            one.check().map_err(|e| match e {
                WorkflowError::Input(input) => WorkflowError::Input(InputError {
                    field: format!("axis {}", axis.parameter.name()),
                    ..input
                }),
                other => other,
            })?;
        }
    }
    let mut seen = Vec::new();
    for axis in axes {
        if seen.contains(&axis.parameter) {
            return Err(InputError::new(
                "axis",
                axis.parameter.name(),
                "each parameter on one axis",
            )
            .into());
        }
        seen.push(axis.parameter);
    }
    let candidates: Vec<BodyRequest> = (0..total)
        .map(|k| {
            let mut request = base.clone();
            let mut rest = k;
            for axis in axes.iter().rev() {
                let n = axis.values.len();
                axis.parameter.set(&mut request.body, axis.values[rest % n]);
                rest /= n;
            }
            request
        })
        .collect();
    for candidate in &candidates {
        candidate.check()?;
    }
    let started = std::time::Instant::now();
    let outputs = base.outputs();
    // The carried tethers' runs a group at a time, within a memory budget
    // (a GPU batch's readback included), each group's arms then evaluated.
    let group = carried_group(outputs.len(), &base.engine)?;
    let mut rows: Vec<BodyEvaluation> = Vec::with_capacity(candidates.len());
    let mut tether_solver = None;
    for chunk in candidates.chunks(group) {
        let carried = carried_tethers(base, chunk, &outputs)?;
        tether_solver = tether_solver.or_else(|| {
            carried
                .iter()
                .flatten()
                .find_map(|run| run.as_ref().ok().map(|run| run.solver.clone()))
        });
        rows.par_extend(
            chunk
                .par_iter()
                .zip(carried)
                .map(|(c, carried)| match carried {
                    Some(Err(e)) => BodyEvaluation::refused(e),
                    Some(Ok(run)) => evaluate(c, &outputs, Some(&run)),
                    None => evaluate(c, &outputs, None),
                }),
        );
    }
    let wall_s = started.elapsed().as_secs_f64();
    let failed = rows.iter().filter(|r| r.failed_at_s.is_some()).count();
    write(base, axes, &candidates, rows)?;
    Ok(BodySweepReport {
        candidates: total,
        failed,
        wall_s,
        tether_solver,
    })
}

/// A candidate's evaluation functions.
struct BodyEvaluation {
    failed_at_s: Option<f64>,
    /// Why it failed, in words.
    failure: Option<String>,
    max_drift_m: Option<f64>,
    final_drift_m: Option<f64>,
    max_tracking_error_m: Option<f64>,
    final_tracking_error_m: Option<f64>,
    settled_at_s: Option<f64>,
    peak_torque_n_m: f64,
    /// The carried tether's largest pull on the end point \[N\], and its
    /// free end's horizontal distance from the pin \[m\].
    peak_pull_n: Option<f64>,
    max_tip_swing_m: Option<f64>,
    final_tip_swing_m: Option<f64>,
}

impl BodyEvaluation {
    /// A candidate whose tether could not be set up (no hanging
    /// equilibrium): failed at the start, nothing measured.
    fn refused(error: WorkflowError) -> Self {
        Self {
            failed_at_s: Some(0.0),
            failure: Some(error.to_string()),
            max_drift_m: None,
            final_drift_m: None,
            max_tracking_error_m: None,
            final_tracking_error_m: None,
            settled_at_s: None,
            peak_torque_n_m: f64::NAN,
            peak_pull_n: None,
            max_tip_swing_m: None,
            final_tip_swing_m: None,
        }
    }
}

/// Where and why a run failed.
fn failure(run: &Trajectory) -> (Option<f64>, Option<String>) {
    match &run.ending {
        Ending::Finished => (None, None),
        Ending::Failed { t_s, reason } => (Some(*t_s), Some(reason.clone())),
    }
}

/// Each candidate's carried tether run along its arm's program, all in
/// one batch of `base`'s engine (None for a body that carries none).
#[allow(clippy::type_complexity)]
fn carried_tethers(
    base: &BodyRequest,
    candidates: &[BodyRequest],
    outputs: &[f64],
) -> Result<Vec<Option<Result<TetherRun, WorkflowError>>>, WorkflowError> {
    let carried: Vec<_> = candidates
        .iter()
        .filter_map(|c| match &c.body {
            Body::Arm {
                arm,
                tether: Some(tether),
                ..
            } => Some((arm, tether)),
            _ => None,
        })
        .collect();
    if carried.is_empty() {
        return Ok(candidates.iter().map(|_| None).collect());
    }
    // A sweep's candidates all carry one, or none.
    debug_assert_eq!(carried.len(), candidates.len());
    let runs = run_tethers(&carried, outputs, &base.engine)?;
    Ok(runs.into_iter().map(Some).collect())
}

fn evaluate(request: &BodyRequest, outputs: &[f64], carried: Option<&TetherRun>) -> BodyEvaluation {
    let peak = |columns: &[Vec<f64>; 2]| {
        columns
            .iter()
            .flatten()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    match &request.body {
        Body::Arm {
            arm,
            formulation,
            tether,
        } => {
            let (run, rows) = simulate_arm(arm, *formulation, outputs, request.tolerances, carried);
            let swing: Vec<f64> = rows
                .markers
                .iter()
                .map(|m| (m[CARRIED_MARKERS - 1][0] - m[0][0]).abs())
                .collect();
            let carried = carried.is_some();
            debug_assert_eq!(carried, tether.is_some());
            BodyEvaluation {
                failed_at_s: failure(&run).0,
                failure: failure(&run).1,
                max_drift_m: Some(rows.max(&rows.drift)),
                final_drift_m: rows.drift.last().copied(),
                max_tracking_error_m: None,
                final_tracking_error_m: None,
                settled_at_s: None,
                peak_torque_n_m: peak(&rows.torque),
                peak_pull_n: carried.then(|| peak(&rows.pull)),
                max_tip_swing_m: carried.then(|| rows.max(&swing)),
                final_tip_swing_m: swing.last().copied(),
            }
        }
        Body::Robot {
            robot,
            program,
            start_offset_m,
        } => {
            let (run, rows) =
                simulate_robot(robot, program, *start_offset_m, outputs, request.tolerances);
            BodyEvaluation {
                failed_at_s: failure(&run).0,
                failure: failure(&run).1,
                max_drift_m: None,
                final_drift_m: None,
                max_tracking_error_m: Some(rows.max_error_m()),
                final_tracking_error_m: rows.error.last().copied(),
                settled_at_s: rows.settled_at_s(),
                peak_torque_n_m: peak(&rows.torque),
                peak_pull_n: None,
                max_tip_swing_m: None,
                final_tip_swing_m: None,
            }
        }
    }
}

fn write(
    base: &BodyRequest,
    axes: &[BodyAxis],
    candidates: &[BodyRequest],
    rows: Vec<BodyEvaluation>,
) -> Result<(), WorkflowError> {
    let mut columns: Vec<Column> = axes
        .iter()
        .enumerate()
        .map(|(k, axis)| {
            let values = (0..candidates.len())
                .map(|i| {
                    let stride: usize = axes[k + 1..].iter().map(|a| a.values.len()).product();
                    axis.values[(i / stride) % axis.values.len()]
                })
                .collect();
            Column::f64(axis.parameter.name(), axis.parameter.unit(), values)
        })
        .collect();
    let status = rows
        .iter()
        .map(|r| match r.failed_at_s {
            None => "finished".to_string(),
            Some(_) => "failed".to_string(),
        })
        .collect();
    columns.push(Column::text("status", status));
    columns.push(Column::optional_f64(
        "failed_at_s",
        "s",
        rows.iter().map(|r| r.failed_at_s).collect(),
    ));
    columns.push(Column::optional_text(
        "failure",
        rows.iter().map(|r| r.failure.as_deref()).collect(),
    ));
    columns.extend(evaluation_columns(&base.body, &rows));
    let mut m = metadata::base();
    m.insert(
        "tether_sweep.body_sweep".into(),
        serde_json::json!({
            "body": format!("{:?}", base.body),
            "axes": axes.iter().map(|a| (a.parameter.name(), a.values.clone())).collect::<Vec<_>>(),
            "duration_s": base.duration_s,
            "output_interval_s": base.output_interval_s,
            "rtol": base.tolerances.rtol,
            "settled_below_m": super::SETTLED_M,
        })
        .to_string(),
    );
    write_columns(&base.out, columns, &m)?;
    Ok(())
}

/// An evaluation function's column: its name, unit and value.
type EvaluationColumn = (
    &'static str,
    &'static str,
    fn(&BodyEvaluation) -> Option<f64>,
);

const ROBOT_EVALUATIONS: [EvaluationColumn; 3] = [
    ("max_tracking_error_m", "m", |r| r.max_tracking_error_m),
    ("final_tracking_error_m", "m", |r| r.final_tracking_error_m),
    ("settling_time_s", "s", |r| r.settled_at_s),
];
const ARM_EVALUATIONS: [EvaluationColumn; 2] = [
    ("max_drift_m", "m", |r| r.max_drift_m),
    ("final_drift_m", "m", |r| r.final_drift_m),
];
const TETHER_EVALUATIONS: [EvaluationColumn; 3] = [
    ("peak_pull_n", "N", |r| r.peak_pull_n),
    ("max_tip_swing_m", "m", |r| r.max_tip_swing_m),
    ("final_tip_swing_m", "m", |r| r.final_tip_swing_m),
];

/// The evaluation functions' columns of `body`'s sweep.
fn evaluation_columns(body: &Body, rows: &[BodyEvaluation]) -> Vec<Column> {
    let column = |(name, unit, f): &EvaluationColumn| {
        Column::optional_f64(*name, unit, rows.iter().map(f).collect())
    };
    let (own, tether): (&[EvaluationColumn], &[EvaluationColumn]) = match body {
        Body::Robot { .. } => (&ROBOT_EVALUATIONS, &[]),
        Body::Arm { tether: None, .. } => (&ARM_EVALUATIONS, &[]),
        Body::Arm { .. } => (&ARM_EVALUATIONS, &TETHER_EVALUATIONS),
    };
    let torque = Column::f64(
        "peak_torque_n_m",
        "N*m",
        rows.iter().map(|r| r.peak_torque_n_m).collect(),
    );
    own.iter()
        .map(column)
        .chain([torque])
        .chain(tether.iter().map(column))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::bodies::{BodyInputs, BodyKind};

    #[test]
    fn an_axis_names_its_bodys_parameters() {
        let arm = BodyInputs::default().request(BodyKind::Arm).unwrap();
        let axis = BodyAxis::parse("alpha=10,100", &arm.body).unwrap();
        assert_eq!(axis.values, [10.0, 100.0]);
        let e = BodyAxis::parse("curvature_per_m=1", &arm.body).unwrap_err();
        assert!(
            e.allowed.contains("kp_per_s2, kd_per_s, alpha, speed_m_s"),
            "{e}"
        );
        let robot = BodyInputs::default().request(BodyKind::Robot).unwrap();
        assert!(BodyAxis::parse("alpha=1", &robot.body).is_err());
        assert!(
            BodyAxis::parse("kp_per_s2=0:8:2", &robot.body)
                .unwrap()
                .values
                .len()
                == 5
        );
    }
}
