//! The robot's run: its table (the centre of mass's path, heading,
//! speeds, wheel torques, tracking error, the rolling constraints'
//! residual) and its figure (the path against the programmed circle, the
//! tracking error against time).

use super::{BodyReport, BodyRequest, SETTLED_M, body_metadata};
use crate::constrained::integrate::{Tolerances, Trajectory, integrate};
use crate::constrained::robot::{Program, Robot};
use crate::io::table::{Column, write_columns};
use crate::plot::series::{Panel, Panels, Series};
use crate::workflow::WorkflowError;

/// A robot's run at each output time.
#[derive(Default)]
pub(super) struct RobotRows {
    pub t: Vec<f64>,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub heading: Vec<f64>,
    pub speed: Vec<f64>,
    pub turn_rate: Vec<f64>,
    pub torque: [Vec<f64>; 2],
    pub error: Vec<f64>,
    pub rolling: Vec<f64>,
}

impl RobotRows {
    /// The first output time from which the tracking error stays under
    /// [`SETTLED_M`] (None: not by the end).
    pub fn settled_at_s(&self) -> Option<f64> {
        match self.error.iter().rposition(|e| e.abs() >= SETTLED_M) {
            None => Some(0.0),
            Some(k) => self.t.get(k + 1).copied(),
        }
    }

    pub fn max_error_m(&self) -> f64 {
        self.error.iter().fold(0.0f64, |m, e| m.max(e.abs()))
    }

    fn columns(self) -> Vec<Column> {
        let [right, left] = self.torque;
        vec![
            Column::f64("t_s", "s", self.t),
            Column::f64("x_m", "m", self.x),
            Column::f64("y_m", "m", self.y),
            Column::f64("heading_rad", "rad", self.heading),
            Column::f64("speed_m_s", "m/s", self.speed),
            Column::f64("turn_rate_rad_s", "rad/s", self.turn_rate),
            Column::f64("torque_right_n_m", "N*m", right),
            Column::f64("torque_left_n_m", "N*m", left),
            Column::f64("tracking_error_m", "m", self.error),
            Column::f64("rolling_residual_m_s", "m/s", self.rolling),
        ]
    }
}

/// The robot's run from `start_offset_m` off its program's circle.
pub(super) fn simulate(
    robot: &Robot,
    program: &Program,
    start_offset_m: f64,
    outputs: &[f64],
    tolerances: Tolerances,
) -> (Trajectory, RobotRows) {
    let y0 = robot.start(program, start_offset_m);
    let run = integrate(&robot.closed_loop(*program), y0, outputs, tolerances);
    let mut rows = RobotRows {
        t: run.times_s.clone(),
        ..RobotRows::default()
    };
    for state in &run.states {
        let centre = robot.centre(state);
        rows.x.push(centre[0]);
        rows.y.push(centre[1]);
        rows.heading.push(state[2]);
        rows.speed.push(state[5]);
        rows.turn_rate.push(state[6]);
        let torques = robot.torques(program, state);
        for (column, value) in rows.torque.iter_mut().zip(torques) {
            column.push(value);
        }
        rows.error.push(robot.tracking_error_m(program, state));
        let qd = robot.velocities(state[2], state[5], state[6]);
        let residual = robot.rolling_residuals(state[2], &qd);
        rows.rolling
            .push(residual.iter().fold(0.0f64, |m, r| m.max(r.abs())));
    }
    (run, rows)
}

pub(super) fn run(
    request: &BodyRequest,
    robot: &Robot,
    program: &Program,
    start_offset_m: f64,
    outputs: &[f64],
) -> Result<BodyReport, WorkflowError> {
    let (run, rows) = simulate(robot, program, start_offset_m, outputs, request.tolerances);
    let mut metadata = body_metadata(&run, "robot", None);
    metadata.insert(
        "tether_sweep.body".into(),
        serde_json::json!({
            "robot": format!("{robot:?}"), "curvature_per_m": program.curvature_per_m,
            "speed_m_s": program.speed_m_s, "kp_per_s2": program.kp_per_s2,
            "kd_per_s": program.kd_per_s, "start_offset_m": start_offset_m,
        })
        .to_string(),
    );
    let figure = figure(program, request.duration_s, &rows);
    let (max_error, final_error) = (rows.max_error_m(), rows.error.last().copied());
    let settled_at_s = rows.settled_at_s();
    write_columns(&request.out, rows.columns(), &metadata)?;
    crate::plot::save(&request.out.with_extension(""), &figure)?;
    Ok(BodyReport {
        body: super::BodyKind::Robot,
        formulation: None,
        rows: run.times_s.len(),
        ending: run.ending,
        max_drift_m: None,
        max_drift_rate_m_s: None,
        max_tracking_error_m: Some(max_error),
        final_tracking_error_m: final_error,
        settled_at_s,
        max_pull_n: None,
        tether_solver: None,
        steps: run.steps,
        evaluations: run.evaluations,
        out: request.out.clone(),
    })
}

/// The path against the programmed circle, and the tracking error.
fn figure(program: &Program, duration_s: f64, rows: &RobotRows) -> Panels {
    let (times_s, x, y, error) = (&rows.t, &rows.x, &rows.y, &rows.error);
    let radius = 1.0 / program.curvature_per_m;
    let circle: Vec<(f64, f64)> = (0..=360)
        .map(|k| {
            let a = (k as f64).to_radians();
            (radius * a.sin(), radius - radius * a.cos())
        })
        .collect();
    Panels {
        title: format!(
            "Mobile robot on a circle of curvature {} 1/m (K_P = {}, K_D = {})",
            program.curvature_per_m, program.kp_per_s2, program.kd_per_s
        ),
        x_label: "x [m] (top); t [s] (below)".into(),
        panels: vec![
            Panel {
                y_label: "y [m]".into(),
                series: vec![
                    Series {
                        faint: true,
                        ..Series::new("programmed", circle)
                    },
                    Series::new(
                        "centre of mass",
                        x.iter().copied().zip(y.iter().copied()).collect(),
                    ),
                ],
                marks: Vec::new(),
                x_range: Some((-1.5 * radius, 1.5 * radius)),
            },
            Panel {
                y_label: "tracking error [m]".into(),
                series: vec![Series::new(
                    "e",
                    times_s.iter().copied().zip(error.iter().copied()).collect(),
                )],
                marks: Vec::new(),
                x_range: Some((0.0, duration_s)),
            },
        ],
    }
}
