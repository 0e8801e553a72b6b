//! A planar pin path from a table of times and positions (docs/model.md
//! §3): the natural cubic spline through the points in x and in y, so the
//! velocity and the acceleration the rheonomic partition needs come from
//! the path itself, continuous. Outside the table the path goes on in a
//! straight line at its end velocity: the natural spline's end
//! acceleration is zero, so position, velocity and acceleration stay
//! continuous there too. A straight line at constant speed (the arm's end
//! point on its line) is reproduced exactly by two points.

use crate::error::{InputError, require_finite};
use crate::gpu::abi::MAX_PATH_SEGMENTS;
use crate::gpu::batch::GridPath;
use crate::model::PinMotion;

/// Most points a path may hold: a million 1 ms samples is 17 minutes.
pub const MAX_PATH_POINTS: usize = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct PathMotion {
    times_s: Vec<f64>,
    positions_m: Vec<[f64; 2]>,
    /// The spline's second derivatives at the points, per coordinate.
    curvature: Vec<[f64; 2]>,
}

impl PathMotion {
    /// The path through `positions_m` at `times_s` (strictly increasing,
    /// at least two).
    pub fn new(times_s: Vec<f64>, positions_m: Vec<[f64; 2]>) -> Result<Self, InputError> {
        let n = times_s.len();
        if n != positions_m.len() || !(2..=MAX_PATH_POINTS).contains(&n) {
            return Err(InputError::new(
                "pin path",
                format!("{n} times and {} positions", positions_m.len()),
                format!("as many positions as times, from 2 to {MAX_PATH_POINTS}"),
            ));
        }
        for (t, p) in times_s.iter().zip(&positions_m) {
            require_finite("pin path time", *t)?;
            require_finite("pin path x", p[0])?;
            require_finite("pin path y", p[1])?;
        }
        if let Some(w) = times_s.windows(2).find(|w| w[1] <= w[0]) {
            return Err(InputError::new(
                "pin path times",
                format!("{} then {}", w[0], w[1]),
                "strictly increasing times",
            ));
        }
        let curvature = natural_second_derivatives(&times_s, &positions_m);
        Ok(Self {
            times_s,
            positions_m,
            curvature,
        })
    }

    /// The path on a uniform time grid, as the GPU engine follows it
    /// ([`GridPath`]): the coarsest grid from the first time to the last
    /// on which every time of the table lies (within 1e-9 of a step), of
    /// at most `MAX_PATH_SEGMENTS` segments. Each segment then lies within
    /// one interval of the spline, whose cubic it is, from its ends'
    /// positions and velocities. A table whose times fall on no such grid
    /// (irregular times, not multiples of a common step) is refused.
    pub fn on_grid(&self) -> Result<GridPath, InputError> {
        let times = &self.times_s;
        let (first, last) = (times[0], times[times.len() - 1]);
        let shortest = times
            .windows(2)
            .map(|w| w[1] - w[0])
            .fold(f64::INFINITY, f64::min);
        // The grid's step divides the shortest interval: a j-th of it.
        let segments = (1..=64)
            .map(|j| (j as f64 * (last - first) / shortest).round())
            .take_while(|&m| m <= MAX_PATH_SEGMENTS as f64)
            .find(|&m| {
                let step = (last - first) / m;
                times.iter().all(|t| {
                    let k = (t - first) / step;
                    (k - k.round()).abs() < 1e-9 * m.max(1.0)
                })
            })
            .ok_or_else(|| {
                InputError::new(
                    "pin path times",
                    format!("{} times from {first} to {last} s", times.len()),
                    format!(
                        "times on a uniform grid of at most {MAX_PATH_SEGMENTS} steps for the GPU engine (multiples of one step; the CPU takes any)"
                    ),
                )
            })? as usize;
        let step_s = (last - first) / segments as f64;
        let cubics = (0..segments)
            .map(|k| {
                let (t0, t1) = (first + k as f64 * step_s, first + (k + 1) as f64 * step_s);
                let ([p0, v0, _], [p1, v1, _]) = (self.state(t0), self.state(t1));
                std::array::from_fn(|d| {
                    let slope = (p1[d] - p0[d]) / step_s;
                    let c = (3.0 * slope - 2.0 * v0[d] - v1[d]) / step_s;
                    let e = (v0[d] + v1[d] - 2.0 * slope) / (step_s * step_s);
                    [p0[d], v0[d], c, e]
                })
            })
            .collect();
        Ok(GridPath {
            start_s: first,
            step_s,
            cubics,
        })
    }

    /// (position, velocity, acceleration) at t.
    fn state(&self, t: f64) -> [[f64; 2]; 3] {
        let last = self.times_s.len() - 1;
        let (ends, end_time) = if t < self.times_s[0] {
            (Some(0), self.times_s[0])
        } else if t > self.times_s[last] {
            (Some(last - 1), self.times_s[last])
        } else {
            (None, t)
        };
        let i = match ends {
            Some(i) => i,
            None => self.times_s.partition_point(|&ti| ti <= t).clamp(1, last) - 1,
        };
        let h = self.times_s[i + 1] - self.times_s[i];
        let b = (end_time - self.times_s[i]) / h;
        let a = 1.0 - b;
        let coordinate = |k: usize| {
            let (y0, y1) = (self.positions_m[i][k], self.positions_m[i + 1][k]);
            let (m0, m1) = (self.curvature[i][k], self.curvature[i + 1][k]);
            let position =
                a * y0 + b * y1 + ((a * a * a - a) * m0 + (b * b * b - b) * m1) * h * h / 6.0;
            let velocity = (y1 - y0) / h - (3.0 * a * a - 1.0) / 6.0 * h * m0
                + (3.0 * b * b - 1.0) / 6.0 * h * m1;
            // Past an end: on in a straight line (the end's curvature is 0).
            let acceleration = if ends.is_some() { 0.0 } else { a * m0 + b * m1 };
            [position + velocity * (t - end_time), velocity, acceleration]
        };
        let [x, y] = [coordinate(0), coordinate(1)];
        std::array::from_fn(|d| [x[d], y[d]])
    }
}

/// The natural spline's second derivatives at the knots (zero at both
/// ends), by the tridiagonal (Thomas) solve, for x and y at once.
fn natural_second_derivatives(t: &[f64], y: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let n = t.len();
    let mut m = vec![[0.0; 2]; n];
    if n < 3 {
        return m;
    }
    // Interior rows i = 1..n-1: h_{i-1} m_{i-1} + 2(h_{i-1}+h_i) m_i + h_i m_{i+1} = r_i.
    let mut diag = vec![0.0; n];
    let mut rhs = vec![[0.0; 2]; n];
    for i in 1..n - 1 {
        let (h0, h1) = (t[i] - t[i - 1], t[i + 1] - t[i]);
        diag[i] = 2.0 * (h0 + h1);
        rhs[i] = std::array::from_fn(|k| {
            6.0 * ((y[i + 1][k] - y[i][k]) / h1 - (y[i][k] - y[i - 1][k]) / h0)
        });
    }
    for i in 2..n - 1 {
        let lower = t[i] - t[i - 1];
        let factor = lower / diag[i - 1];
        diag[i] -= factor * lower;
        let previous = rhs[i - 1];
        for (r, p) in rhs[i].iter_mut().zip(previous) {
            *r -= factor * p;
        }
    }
    for i in (1..n - 1).rev() {
        let upper = t[i + 1] - t[i];
        for k in 0..2 {
            m[i][k] = (rhs[i][k] - upper * m[i + 1][k]) / diag[i];
        }
    }
    m
}

impl PinMotion for PathMotion {
    fn position(&self, t: f64) -> [f64; 2] {
        self.state(t)[0]
    }
    fn velocity(&self, t: f64) -> [f64; 2] {
        self.state(t)[1]
    }
    fn acceleration(&self, t: f64) -> [f64; 2] {
        self.state(t)[2]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_points_are_a_straight_line_at_constant_speed() {
        let path = PathMotion::new(vec![0.0, 2.0], vec![[0.3, 0.5], [-0.9, 0.5]]).unwrap();
        for t in [-1.0, 0.0, 0.7, 2.0, 3.5] {
            let p = path.position(t);
            assert!((p[0] - (0.3 - 0.6 * t)).abs() < 1e-15 && p[1] == 0.5, "{t}");
            assert_eq!(path.velocity(t), [-0.6, 0.0]);
            assert_eq!(path.acceleration(t), [0.0, 0.0]);
        }
    }

    #[test]
    fn passes_through_its_points_with_continuous_derivatives() {
        let times: Vec<f64> = (0..12)
            .map(|i| 0.1 * i as f64 + 0.01 * (i % 3) as f64)
            .collect();
        let points: Vec<[f64; 2]> = times.iter().map(|t| [t.sin(), (2.0 * t).cos()]).collect();
        let path = PathMotion::new(times.clone(), points.clone()).unwrap();
        for (t, p) in times.iter().zip(&points) {
            assert!((path.position(*t)[0] - p[0]).abs() < 1e-14);
            assert!((path.position(*t)[1] - p[1]).abs() < 1e-14);
        }
        // Derivatives are those of the position, and continuous at the
        // knots and past the ends.
        let h = 1e-6;
        for i in 0..=140 {
            let t = -0.1 + i as f64 * 0.0097;
            for k in 0..2 {
                let fd_v = (path.position(t + h)[k] - path.position(t - h)[k]) / (2.0 * h);
                let fd_a = (path.velocity(t + h)[k] - path.velocity(t - h)[k]) / (2.0 * h);
                assert!((fd_v - path.velocity(t)[k]).abs() < 1e-7, "v at {t}");
                assert!((fd_a - path.acceleration(t)[k]).abs() < 1e-5, "a at {t}");
            }
        }
        // A smooth path's samples give its derivatives to the spline's order.
        let t = 0.55;
        assert!((path.velocity(t)[0] - t.cos()).abs() < 1e-3);
        assert!((path.acceleration(t)[1] + 4.0 * (2.0 * t).cos()).abs() < 0.05);
    }

    /// A grid path's state at t as motion.wgsl forms it (in f64).
    fn on_the_grid(path: &GridPath, t: f64) -> [[f64; 2]; 3] {
        let k = (((t - path.start_s).max(0.0) / path.step_s).floor() as usize)
            .min(path.cubics.len() - 1);
        let tau = t - path.start_s - k as f64 * path.step_s;
        let u = tau.clamp(0.0, path.step_s);
        let mut out = [[0.0; 2]; 3];
        for (d, c) in path.cubics[k].iter().enumerate() {
            let v = c[1] + u * (2.0 * c[2] + 3.0 * u * c[3]);
            out[0][d] = c[0] + u * (c[1] + u * (c[2] + u * c[3])) + v * (tau - u);
            out[1][d] = v;
            out[2][d] = if tau == u {
                2.0 * c[2] + 6.0 * u * c[3]
            } else {
                0.0
            };
        }
        out
    }

    #[test]
    fn on_a_grid_it_is_the_spline_exactly() {
        // Uniform times, times on a common step (0.05 s), and two points.
        let tables: [Vec<f64>; 3] = [
            (0..9).map(|i| 0.1 * i as f64).collect(),
            vec![0.0, 0.1, 0.25, 0.4, 0.45, 0.7],
            vec![0.2, 1.7],
        ];
        for (times, segments) in tables.into_iter().zip([8, 14, 1]) {
            let points: Vec<[f64; 2]> = times.iter().map(|t| [t.sin(), (3.0 * t).cos()]).collect();
            let path = PathMotion::new(times.clone(), points).unwrap();
            let grid = path.on_grid().unwrap();
            assert_eq!(grid.cubics.len(), segments, "{times:?}");
            for i in 0..=300 {
                let t =
                    times[0] - 0.3 + i as f64 * (times[times.len() - 1] - times[0] + 0.6) / 300.0;
                let (exact, gridded) = (path.state(t), on_the_grid(&grid, t));
                for (e, g) in exact.iter().flatten().zip(gridded.iter().flatten()) {
                    assert!(
                        (e - g).abs() < 1e-11,
                        "{times:?} at {t}: {exact:?} against {gridded:?}"
                    );
                }
            }
        }
        // Irregular times: on no grid.
        let path = PathMotion::new(
            vec![0.0, 0.1, 0.1 + std::f64::consts::PI / 100.0],
            vec![[0.0; 2]; 3],
        )
        .unwrap();
        let refused = path.on_grid().unwrap_err();
        assert!(refused.allowed.contains("uniform grid"), "{refused}");
    }

    #[test]
    fn refuses_a_table_that_is_no_path() {
        let e = PathMotion::new(vec![0.0, 0.0], vec![[0.0; 2]; 2]).unwrap_err();
        assert!(e.allowed.contains("increasing"), "{e}");
        let e = PathMotion::new(vec![0.0], vec![[0.0; 2]]).unwrap_err();
        assert!(e.allowed.contains("from 2"), "{e}");
        let e = PathMotion::new(vec![0.0, 1.0], vec![[0.0, f64::NAN]; 2]).unwrap_err();
        assert!(e.field.contains("y"), "{e}");
    }
}
