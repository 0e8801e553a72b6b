//! The swing-up winch (docs/model.md §4.2): half-cosine moves through waypoints.

use serde::{Deserialize, Serialize};

use crate::error::{InputError, require_finite};
use crate::model::PinMotion;

/// Shortest and longest move accepted. The GA's range is 0.25–1.0 s; the
/// bounds here only keep the winch physical (a 1 ms move through 0.2 m would
/// need 2e5 m/s² of acceleration).
pub const MIN_PERIOD_S: f64 = 0.01;
pub const MAX_PERIOD_S: f64 = 100.0;

/// x_w(t) through `waypoints_m` (one more than `periods_s`), y fixed; node 0
/// of the tether follows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WinchMotion {
    /// Winch x at the start of each move and at the end of the last \[m\].
    pub waypoints_m: Vec<f64>,
    /// Duration of each move T_i \[s\].
    pub periods_s: Vec<f64>,
    /// The winch's (constant) height \[m\].
    pub height_m: f64,
}

impl WinchMotion {
    /// docs/model.md §4.2's waypoints 0, −A, +A, 0 with the given periods.
    pub fn spec(amplitude_m: f64, periods_s: [f64; 3]) -> Self {
        Self {
            waypoints_m: Self::spec_waypoints(amplitude_m),
            periods_s: periods_s.to_vec(),
            height_m: 0.0,
        }
    }

    /// docs/model.md §4.2's waypoints for amplitude A: 0, −A, +A, 0.
    pub fn spec_waypoints(amplitude_m: f64) -> Vec<f64> {
        vec![0.0, -amplitude_m, amplitude_m, 0.0]
    }

    pub fn validate(&self) -> Result<(), InputError> {
        if self.periods_s.is_empty() || self.waypoints_m.len() != self.periods_s.len() + 1 {
            return Err(InputError::new(
                "waypoints_m",
                format!(
                    "{} waypoints for {} periods",
                    self.waypoints_m.len(),
                    self.periods_s.len()
                ),
                "one more waypoint than winch periods (at least one period)",
            ));
        }
        for (i, &t) in self.periods_s.iter().enumerate() {
            if !(MIN_PERIOD_S..=MAX_PERIOD_S).contains(&t) {
                return Err(InputError::new(
                    format!("winch period T{}", i + 1),
                    t,
                    format!("between {MIN_PERIOD_S} and {MAX_PERIOD_S} s"),
                ));
            }
        }
        for &w in &self.waypoints_m {
            require_finite("waypoints_m", w)?;
        }
        require_finite("winch height_m", self.height_m)
    }

    /// The move active at t, its start time and duration; None before the
    /// first or after the last move.
    fn active_move(&self, t: f64) -> Option<(usize, f64, f64)> {
        if t < 0.0 {
            return None;
        }
        let mut start = 0.0;
        for (i, &period) in self.periods_s.iter().enumerate() {
            if t < start + period {
                return Some((i, start, period));
            }
            start += period;
        }
        None
    }

    fn x(&self, t: f64) -> (f64, f64, f64) {
        match self.active_move(t) {
            Some((i, start, period)) => {
                let delta = self.waypoints_m[i + 1] - self.waypoints_m[i];
                let phase = std::f64::consts::PI * (t - start) / period;
                let rate = std::f64::consts::PI / period;
                (
                    self.waypoints_m[i] + delta * (1.0 - phase.cos()) / 2.0,
                    delta * rate * phase.sin() / 2.0,
                    delta * rate * rate * phase.cos() / 2.0,
                )
            }
            None if t < 0.0 => (self.waypoints_m[0], 0.0, 0.0),
            None => (*self.waypoints_m.last().expect("validated"), 0.0, 0.0),
        }
    }
}

impl PinMotion for WinchMotion {
    fn position(&self, t: f64) -> [f64; 2] {
        [self.x(t).0, self.height_m]
    }
    fn velocity(&self, t: f64) -> [f64; 2] {
        [self.x(t).1, 0.0]
    }
    fn acceleration(&self, t: f64) -> [f64; 2] {
        [self.x(t).2, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_through_waypoints_and_rests_after() {
        let w = WinchMotion::spec(0.2, [0.5, 0.4, 0.6]);
        for (t, x) in [(0.0, 0.0), (0.5, -0.2), (0.9, 0.2), (1.5, 0.0), (2.7, 0.0)] {
            assert!((w.position(t)[0] - x).abs() < 1e-12, "t={t}");
        }
        assert_eq!(w.velocity(2.0), [0.0, 0.0]);
        assert!((w.velocity(0.25)[0] - (-0.2 * std::f64::consts::PI / 0.5 / 2.0)).abs() < 1e-12);
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let w = WinchMotion::spec(0.2, [0.37, 0.81, 0.25]);
        let h = 1e-6;
        for i in 1..140 {
            let t = i as f64 * 0.0103;
            let fd_v = (w.position(t + h)[0] - w.position(t - h)[0]) / (2.0 * h);
            let fd_a = (w.velocity(t + h)[0] - w.velocity(t - h)[0]) / (2.0 * h);
            assert!((fd_v - w.velocity(t)[0]).abs() < 1e-6, "v at {t}");
            // Acceleration jumps at move boundaries; skip points within h of one.
            let near_boundary = [0.37, 1.18, 1.43].iter().any(|b| (t - b).abs() < 2.0 * h);
            if !near_boundary {
                assert!((fd_a - w.acceleration(t)[0]).abs() < 1e-4, "a at {t}");
            }
        }
    }

    #[test]
    fn bad_periods_are_named() {
        let w = WinchMotion::spec(0.2, [0.5, -1.0, 0.5]);
        let e = w.validate().unwrap_err();
        assert_eq!(e.field, "winch period T2");
    }
}
