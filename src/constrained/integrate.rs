//! An implicit integrator with error control for the small dense systems
//! of this module: the L-stable, stiffly accurate SDIRK method of order 4
//! with an embedded order-3 solution (Hairer and Wanner, *Solving ODEs
//! II*, §IV.6, the method of Table 6.5, γ = 1/4). Each stage is solved by
//! a simplified Newton iteration whose matrix I − hγJ (J a
//! finite-difference Jacobian, taken once a step) is factored once and
//! shared by the five stages. The step is chosen from the embedded error
//! against `atol + rtol·|y|`, and shortened to land on each output time,
//! so the outputs need no interpolation.
//!
//! A right-hand side may refuse a state (a singular constraint matrix):
//! the step is then retried shorter, and a run that cannot get past a time
//! with steps above [`MIN_STEP_FRACTION`] of its span ends as failed there,
//! with the right-hand side's reason, never with NaN.

use nalgebra::{DMatrix, DVector};

/// γ and the Butcher tableau (A lower triangular with γ on its diagonal;
/// b is its last row: stiffly accurate).
const GAMMA: f64 = 0.25;
const C: [f64; 5] = [0.25, 0.75, 11.0 / 20.0, 0.5, 1.0];
const A: [[f64; 5]; 5] = [
    [0.25, 0.0, 0.0, 0.0, 0.0],
    [0.5, 0.25, 0.0, 0.0, 0.0],
    [17.0 / 50.0, -1.0 / 25.0, 0.25, 0.0, 0.0],
    [371.0 / 1360.0, -137.0 / 2720.0, 15.0 / 544.0, 0.25, 0.0],
    [25.0 / 24.0, -49.0 / 48.0, 125.0 / 16.0, -85.0 / 12.0, 0.25],
];
/// The embedded order-3 weights.
const B_HAT: [f64; 5] = [59.0 / 48.0, -17.0 / 96.0, 225.0 / 32.0, -85.0 / 12.0, 0.0];

/// Below this fraction of the run's span a step is not tried: the run
/// fails there.
pub const MIN_STEP_FRACTION: f64 = 1e-12;
const MAX_NEWTON: usize = 8;

/// What a right-hand side says of a state it cannot evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused(pub String);

/// A system ẏ = f(t, y).
pub trait Rhs {
    fn rhs(&self, t: f64, y: &DVector<f64>) -> Result<DVector<f64>, Refused>;
}

/// Tolerances and limits of a run.
#[derive(Debug, Clone, Copy)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
    /// The longest step \[s\].
    pub max_step_s: f64,
}

impl Default for Tolerances {
    fn default() -> Self {
        Self {
            rtol: 1e-9,
            atol: 1e-11,
            max_step_s: 0.01,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Finished,
    /// No step could pass `t_s`: the right-hand side's reason, or the
    /// step's collapse.
    Failed {
        t_s: f64,
        reason: String,
    },
}

/// A run: the state at each output time reached, how it ended, and its
/// cost.
#[derive(Debug, Clone)]
pub struct Trajectory {
    pub times_s: Vec<f64>,
    pub states: Vec<DVector<f64>>,
    pub ending: Ending,
    pub steps: usize,
    pub rejected: usize,
    pub evaluations: usize,
}

/// Integrates `system` from `y0` at `outputs_s[0]` through every output
/// time (ascending), the first output being the start.
pub fn integrate(
    system: &dyn Rhs,
    y0: DVector<f64>,
    outputs_s: &[f64],
    tol: Tolerances,
) -> Trajectory {
    let t0 = outputs_s.first().copied().unwrap_or(0.0);
    let span = outputs_s.last().copied().unwrap_or(t0) - t0;
    let mut run = Trajectory {
        times_s: vec![t0],
        states: vec![y0.clone()],
        ending: Ending::Finished,
        steps: 0,
        rejected: 0,
        evaluations: 0,
    };
    let (mut t, mut y) = (t0, y0);
    let mut h = (tol.max_step_s).min(span.max(f64::MIN_POSITIVE) * 1e-3);
    let min_step = MIN_STEP_FRACTION * span.max(1.0);
    let mut last_reason = String::from("the step size collapsed");
    for &target in &outputs_s[1..] {
        while t < target {
            let landing = target - t <= h * (1.0 + 1e-9);
            let step = if landing { target - t } else { h };
            if step < min_step {
                run.ending = Ending::Failed {
                    t_s: t,
                    reason: last_reason,
                };
                return run;
            }
            match try_step(system, t, &y, step, tol, &mut run.evaluations) {
                Ok((next, error)) => {
                    let factor = if error == 0.0 {
                        5.0
                    } else {
                        (0.9 * error.powf(-0.25)).clamp(0.2, 5.0)
                    };
                    if error <= 1.0 {
                        t = if landing { target } else { t + step };
                        y = next;
                        run.steps += 1;
                        if !landing || factor < 1.0 {
                            h = (step * factor).min(tol.max_step_s);
                        }
                    } else {
                        run.rejected += 1;
                        h = step * factor.min(0.9);
                        last_reason =
                            format!("the error estimate stayed above tolerance at t = {t} s");
                    }
                }
                Err(reason) => {
                    run.rejected += 1;
                    h = step * 0.25;
                    last_reason = reason;
                }
            }
        }
        run.times_s.push(target);
        run.states.push(y.clone());
    }
    run
}

/// One SDIRK step of size `h` from (t, y): the order-4 solution and its
/// error norm (≤ 1 accepts), or why the stages could not be solved.
fn try_step(
    system: &dyn Rhs,
    t: f64,
    y: &DVector<f64>,
    h: f64,
    tol: Tolerances,
    evaluations: &mut usize,
) -> Result<(DVector<f64>, f64), String> {
    let n = y.len();
    let mut eval = |t: f64, y: &DVector<f64>| {
        *evaluations += 1;
        match system.rhs(t, y) {
            Ok(f) if f.iter().all(|v| v.is_finite()) => Ok(f),
            Ok(_) => Err(format!("the accelerations are not finite at t = {t} s")),
            Err(Refused(reason)) => Err(reason),
        }
    };
    let f0 = eval(t, y)?;
    // The Jacobian by forward differences, once a step.
    let mut jacobian = DMatrix::zeros(n, n);
    for j in 0..n {
        let delta = 1e-7 * y[j].abs().max(1e-3);
        let mut shifted = y.clone();
        shifted[j] += delta;
        let column = (eval(t, &shifted)? - &f0) / delta;
        jacobian.set_column(j, &column);
    }
    let iteration = DMatrix::identity(n, n) - jacobian * (h * GAMMA);
    let lu = iteration.lu();
    let scale = y.map(|v| tol.atol + tol.rtol * v.abs());
    let mut stages: Vec<DVector<f64>> = Vec::with_capacity(5);
    for i in 0..5 {
        // Y_i = y + h Σ_{j<i} a_ij k_j + hγ k_i, k_i = f(t + c_i h, Y_i).
        let mut known = y.clone();
        for (j, k) in stages.iter().enumerate() {
            known += k * (h * A[i][j]);
        }
        let mut k = stages.last().cloned().unwrap_or_else(|| f0.clone());
        let mut converged = false;
        for _ in 0..MAX_NEWTON {
            let stage = &known + &k * (h * GAMMA);
            let residual = eval(t + C[i] * h, &stage)? - &k;
            let correction = lu
                .solve(&residual)
                .ok_or_else(|| format!("the Newton matrix is singular at t = {t} s"))?;
            k += &correction;
            let size = (&correction * (h * GAMMA)).component_div(&scale).amax();
            if size < 1e-3 {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(format!("Newton's iteration did not converge at t = {t} s"));
        }
        stages.push(k);
    }
    let mut next = y.clone();
    let mut embedded = y.clone();
    for (i, k) in stages.iter().enumerate() {
        next += k * (h * A[4][i]);
        embedded += k * (h * B_HAT[i]);
    }
    let error = (&next - &embedded)
        .component_div(&next.map(|v| tol.atol + tol.rtol * v.abs()))
        .amax();
    Ok((next, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tableau's order conditions: order 4 for b (the last row of A),
    /// order 3 for the embedded b̂, and c the row sums of A.
    #[test]
    fn the_tableau_has_its_orders() {
        let b = A[4];
        for (i, row) in A.iter().enumerate() {
            assert!((row.iter().sum::<f64>() - C[i]).abs() < 1e-14, "row {i}");
        }
        let sum = |w: &[f64; 5], f: &dyn Fn(usize) -> f64| (0..5).map(|i| w[i] * f(i)).sum::<f64>();
        let ac = |i: usize| (0..5).map(|j| A[i][j] * C[j]).sum::<f64>();
        let ac2 = |i: usize| (0..5).map(|j| A[i][j] * C[j] * C[j]).sum::<f64>();
        let aac = |i: usize| (0..5).map(|j| A[i][j] * ac(j)).sum::<f64>();
        for (w, order) in [(&b, 4), (&B_HAT, 3)] {
            let mut conditions = vec![
                (sum(w, &|_| 1.0), 1.0),
                (sum(w, &|i| C[i]), 0.5),
                (sum(w, &|i| C[i] * C[i]), 1.0 / 3.0),
                (sum(w, &ac), 1.0 / 6.0),
            ];
            if order == 4 {
                conditions.extend([
                    (sum(w, &|i| C[i].powi(3)), 0.25),
                    (sum(w, &|i| C[i] * ac(i)), 1.0 / 8.0),
                    (sum(w, &ac2), 1.0 / 12.0),
                    (sum(w, &aac), 1.0 / 24.0),
                ]);
            }
            for (k, (got, want)) in conditions.iter().enumerate() {
                assert!(
                    (got - want).abs() < 1e-13,
                    "order {order}, condition {k}: {got} vs {want}"
                );
            }
        }
        // The embedded solution is of order 3, not 4: its error estimate
        // is not zero.
        assert!((sum(&B_HAT, &|i| C[i].powi(3)) - 0.25).abs() > 1e-6);
    }

    struct Oscillator;
    impl Rhs for Oscillator {
        fn rhs(&self, _: f64, y: &DVector<f64>) -> Result<DVector<f64>, Refused> {
            Ok(DVector::from_vec(vec![y[1], -y[0]]))
        }
    }

    #[test]
    fn an_oscillator_keeps_its_closed_form_to_the_tolerance() {
        let outputs: Vec<f64> = (0..=100).map(|k| k as f64 * 0.1).collect();
        let tol = Tolerances {
            rtol: 1e-10,
            atol: 1e-12,
            max_step_s: 0.05,
        };
        let run = integrate(
            &Oscillator,
            DVector::from_vec(vec![1.0, 0.0]),
            &outputs,
            tol,
        );
        assert_eq!(run.ending, Ending::Finished);
        for (t, y) in run.times_s.iter().zip(&run.states) {
            assert!((y[0] - t.cos()).abs() < 1e-8, "t = {t}: {}", y[0] - t.cos());
        }
        // Order 4: a tolerance 1e4 looser costs about 10× fewer steps.
        let loose = integrate(
            &Oscillator,
            DVector::from_vec(vec![1.0, 0.0]),
            &outputs,
            Tolerances {
                rtol: 1e-6,
                atol: 1e-8,
                ..tol
            },
        );
        let ratio = run.steps as f64 / loose.steps as f64;
        assert!(
            (5.0..20.0).contains(&ratio),
            "{} / {} steps",
            run.steps,
            loose.steps
        );
    }

    struct Wall;
    impl Rhs for Wall {
        fn rhs(&self, t: f64, y: &DVector<f64>) -> Result<DVector<f64>, Refused> {
            match t < 0.5 {
                true => Ok(DVector::from_vec(vec![1.0 + 0.0 * y[0]])),
                false => Err(Refused("a wall at t = 0.5 s".into())),
            }
        }
    }

    #[test]
    fn a_refused_state_ends_the_run_where_it_is_with_its_reason() {
        let run = integrate(
            &Wall,
            DVector::from_vec(vec![0.0]),
            &[0.0, 0.25, 1.0],
            Tolerances::default(),
        );
        let Ending::Failed { t_s, reason } = &run.ending else {
            panic!("{:?}", run.ending)
        };
        assert!(
            (t_s - 0.5).abs() < 1e-6 && reason.contains("wall"),
            "{t_s} {reason}"
        );
        assert_eq!(run.times_s, [0.0, 0.25]);
    }
}
