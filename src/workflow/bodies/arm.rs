//! The arm's run: its table (angles, rates, torques, the end point, the
//! drift) and its figure (the thesis's Fig. 2.2–2.3: angles, rates and
//! drift against time).

use nalgebra::DVector;

use super::carried::{
    CARRIED_MARKERS, CarriedTether, PULL_SAMPLES_PER_OUTPUT, TetherRun, run_tethers,
};
use super::{BodyReport, BodyRequest, body_metadata};
use crate::constrained::arm::{Arm, Loaded};
use crate::constrained::integrate::{Ending, Tolerances, Trajectory, integrate};
use crate::constrained::{FirstOrder, Formulation, Holonomic, accelerations, drift};
use crate::io::table::{Column, write_columns};
use crate::plot::series::{Panel, Panels, Series};
use crate::workflow::WorkflowError;

/// The arm's run under `formulation`, up to its end or its failure;
/// carrying `tether`'s run (its pull at the end point, its markers) up to
/// where that reached.
pub(super) fn simulate(
    arm: &Arm,
    formulation: Formulation,
    outputs: &[f64],
    tolerances: Tolerances,
    tether: Option<&TetherRun>,
) -> (Trajectory, ArmRows) {
    let (q0, rates0, _) = arm.start();
    let y0 = DVector::from_iterator(4, q0.iter().chain(rates0.iter()).copied());
    let pull = |t: f64| tether.map_or([0.0; 2], |run| run.pull_n(t));
    let loaded = Loaded {
        arm,
        tip_force_n: &pull,
    };
    let reached = tether.map_or(outputs.len(), |run| run.markers_m.len());
    let system = FirstOrder {
        system: &loaded,
        formulation,
    };
    let mut run = integrate(&system, y0, &outputs[..reached], tolerances);
    if let (Ending::Finished, Some((t_s, reason))) =
        (&run.ending, tether.and_then(|r| r.failure.clone()))
    {
        run.ending = Ending::Failed { t_s, reason };
    }
    let mut rows = ArmRows::default();
    for (k, (t, y)) in run.times_s.iter().zip(&run.states).enumerate() {
        let (q, qd) = (y.rows(0, 2).into_owned(), y.rows(2, 2).into_owned());
        let torques = accelerations(&loaded, formulation, &q, &qd, *t)
            .map(|(_, lambda)| -(arm.jacobian(&q, *t).transpose() * lambda))
            .unwrap_or_else(|_| DVector::from_element(2, f64::NAN));
        let tip = arm.tip(&q);
        let (position, velocity) = drift(arm, &q, &qd, *t);
        rows.push(*t, &q, &qd, &torques, tip, position, velocity);
        if let Some(tether) = tether {
            rows.push_tether(tether.pull_at_output(k), &tether.markers_m[k]);
        }
    }
    (run, rows)
}

pub(super) fn run(
    request: &BodyRequest,
    arm: &Arm,
    formulation: Formulation,
    tether: Option<&CarriedTether>,
    outputs: &[f64],
) -> Result<BodyReport, WorkflowError> {
    let carried = match tether {
        Some(tether) => Some(run_tethers(&[(arm, tether)], outputs, &request.engine)?.remove(0)?),
        None => None,
    };
    let (run, rows) = simulate(
        arm,
        formulation,
        outputs,
        request.tolerances,
        carried.as_ref(),
    );
    let mut metadata = body_metadata(&run, "arm", Some(formulation.name()));
    metadata.insert(
        "tether_sweep.body".into(),
        serde_json::json!({
            "link1_m": arm.link1_m, "link2_m": arm.link2_m, "mass_kg": arm.mass_kg,
            "gravity_m_s2": arm.gravity_m_s2, "line_y_m": arm.line_y_m, "speed_m_s": arm.speed_m_s,
            "start_angle_deg": arm.start_angle_rad.to_degrees(), "start_x_m": arm.start().2,
            "fold_time_s": arm.fold_time_s(), "formulation": format!("{formulation:?}"),
        })
        .to_string(),
    );
    if let (Some(tether), Some(carried)) = (tether, &carried) {
        metadata.insert(
            "tether_sweep.carried_tether".into(),
            serde_json::json!({
                "tether": tether.params,
                "tolerance_m": carried.tolerance_m,
                "solver": carried.solver, "steps": carried.steps,
                "pin": "the arm's programmed end point, (x0 - v t, line_y_m)",
                "start": "hanging equilibrium under the pin, moving with it",
                "pull_samples_per_output": PULL_SAMPLES_PER_OUTPUT,
                "markers": "11 at j L/10",
            })
            .to_string(),
        );
    }
    let figure = rows.figure(formulation.name(), &run.ending, arm.fold_time_s());
    let (max_drift, max_rate) = (rows.max(&rows.drift), rows.max(&rows.drift_rate));
    let max_pull_n = carried.as_ref().map(|_| {
        rows.pull[0]
            .iter()
            .zip(&rows.pull[1])
            .fold(0.0f64, |m, (x, y)| m.max(x.hypot(*y)))
    });
    write_columns(&request.out, rows.columns(), &metadata)?;
    crate::plot::save(&request.out.with_extension(""), &figure)?;
    Ok(BodyReport {
        body: super::BodyKind::Arm,
        formulation: Some(formulation.kind()),
        rows: run.times_s.len(),
        ending: run.ending,
        max_drift_m: Some(max_drift),
        max_drift_rate_m_s: Some(max_rate),
        max_tracking_error_m: None,
        final_tracking_error_m: None,
        settled_at_s: None,
        max_pull_n,
        tether_solver: carried.map(|c| c.solver),
        steps: run.steps,
        evaluations: run.evaluations,
        out: request.out.clone(),
    })
}

#[derive(Default)]
pub(super) struct ArmRows {
    pub t: Vec<f64>,
    pub q: [Vec<f64>; 2],
    pub rate: [Vec<f64>; 2],
    pub torque: [Vec<f64>; 2],
    pub tip: [Vec<f64>; 2],
    pub drift: Vec<f64>,
    pub drift_rate: Vec<f64>,
    /// The carried tether's pull on the end point \[N\] and its markers
    /// (empty without one).
    pub pull: [Vec<f64>; 2],
    pub markers: Vec<[[f64; 2]; CARRIED_MARKERS]>,
}

impl ArmRows {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        t: f64,
        q: &DVector<f64>,
        qd: &DVector<f64>,
        torques: &DVector<f64>,
        tip: [f64; 2],
        drift: f64,
        drift_rate: f64,
    ) {
        self.t.push(t);
        for k in 0..2 {
            self.q[k].push(q[k]);
            self.rate[k].push(qd[k]);
            self.torque[k].push(torques[k]);
            self.tip[k].push(tip[k]);
        }
        self.drift.push(drift);
        self.drift_rate.push(drift_rate);
    }

    fn push_tether(&mut self, pull_n: [f64; 2], markers: &[[f64; 2]; CARRIED_MARKERS]) {
        self.pull[0].push(pull_n[0]);
        self.pull[1].push(pull_n[1]);
        self.markers.push(*markers);
    }

    pub fn max(&self, v: &[f64]) -> f64 {
        v.iter().copied().fold(0.0, f64::max)
    }

    fn columns(self) -> Vec<Column> {
        let [q1, q2] = self.q;
        let [r1, r2] = self.rate;
        let [t1, t2] = self.torque;
        let [x, y] = self.tip;
        let [pull_x, pull_y] = self.pull;
        let carried = !self.markers.is_empty();
        let markers = self.markers;
        let mut columns = vec![
            Column::f64("t_s", "s", self.t),
            Column::f64("q1_rad", "rad", q1),
            Column::f64("q2_rad", "rad", q2),
            Column::f64("q1_rate_rad_s", "rad/s", r1),
            Column::f64("q2_rate_rad_s", "rad/s", r2),
            Column::f64("torque1_n_m", "N*m", t1),
            Column::f64("torque2_n_m", "N*m", t2),
            Column::f64("tip_x_m", "m", x),
            Column::f64("tip_y_m", "m", y),
            Column::f64("drift_m", "m", self.drift),
            Column::f64("drift_rate_m_s", "m/s", self.drift_rate),
        ];
        if carried {
            columns.push(Column::f64("tether_pull_x_n", "N", pull_x));
            columns.push(Column::f64("tether_pull_y_n", "N", pull_y));
            for j in 0..CARRIED_MARKERS {
                for (k, axis) in ["x", "y"].iter().enumerate() {
                    columns.push(Column::f64(
                        format!("tether_marker{j}_{axis}_m"),
                        "m",
                        markers.iter().map(|m| m[j][k]).collect(),
                    ));
                }
            }
        }
        columns
    }

    fn figure(&self, formulation: &str, ending: &Ending, fold_s: f64) -> Panels {
        let line = |name: &str, v: &[f64]| {
            Series::new(
                name,
                self.t.iter().copied().zip(v.iter().copied()).collect(),
            )
        };
        let mut marks = vec![(format!("folded (x = 0) at {fold_s:.4} s"), fold_s)];
        if let Ending::Failed { t_s, .. } = ending {
            marks.push((format!("failed at {t_s:.4} s"), *t_s));
        }
        let panel = |y_label: &str, series: Vec<Series>| Panel {
            y_label: y_label.into(),
            series,
            marks: marks.clone(),
            x_range: None,
        };
        Panels {
            title: format!("Two-link arm on its line: {formulation}"),
            x_label: "t [s]".into(),
            panels: vec![
                panel(
                    "angle [rad]",
                    vec![line("q1", &self.q[0]), line("q2", &self.q[1])],
                ),
                panel(
                    "rate [rad/s]",
                    vec![line("q1'", &self.rate[0]), line("q2'", &self.rate[1])],
                ),
                panel("drift [m]", vec![line("|Φ|", &self.drift)]),
            ]
            .into_iter()
            .chain((!self.markers.is_empty()).then(|| {
                let trail: Vec<f64> = self
                    .markers
                    .iter()
                    .map(|m| m[CARRIED_MARKERS - 1][0] - m[0][0])
                    .collect();
                panel(
                    "tether: free end's x − pin's [m]",
                    vec![line("x₁₀ − x₀", &trail)],
                )
            }))
            .collect(),
        }
    }
}
