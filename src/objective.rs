//! The objectives of docs/model.md §5: J_e for identification, J_a,min for swing-up.

use serde::Serialize;

use crate::track::{MeasuredTrack, Track};

/// Swing-up objective J_a(t) = |W − r_tip| + k1 |ṙ_tip| + k2 t, minimised over
/// the samples it observes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SwingupObjective {
    pub weights: [f64; 2],
    /// J_a,min \[m\]
    pub j_a_min: f64,
    /// Time of the minimum \[s\]
    pub t_at_min_s: f64,
}

impl SwingupObjective {
    /// An objective with weights k1 \[s\] and k2 [m/s] that has seen no
    /// sample yet.
    pub fn new(weights: [f64; 2]) -> Self {
        Self {
            weights,
            j_a_min: f64::INFINITY,
            t_at_min_s: f64::NAN,
        }
    }

    pub fn value(&self, t: f64, winch: [f64; 2], tip: [f64; 2], tip_velocity: [f64; 2]) -> f64 {
        (winch[0] - tip[0]).hypot(winch[1] - tip[1])
            + self.weights[0] * tip_velocity[0].hypot(tip_velocity[1])
            + self.weights[1] * t
    }

    /// Records one sample; ties keep the earlier time.
    pub fn observe(&mut self, t: f64, winch: [f64; 2], tip: [f64; 2], tip_velocity: [f64; 2]) {
        let j = self.value(t, winch, tip, tip_velocity);
        if j < self.j_a_min {
            self.j_a_min = j;
            self.t_at_min_s = t;
        }
    }
}

/// J_e = Σ over every frame but the first and all markers of the squared
/// distance between measured and simulated positions \[m²\] (docs/model.md §5,
/// eq. 25). The first frame is the start check's (`Scenario::compared_frame_times_s`)
/// and is left out, and so is every sample the measurement lacks (an
/// occluded marker, a dropped frame).
pub fn identification_error(measured: &MeasuredTrack, simulated: &Track) -> f64 {
    let markers = simulated.markers();
    simulated
        .times_s
        .iter()
        .enumerate()
        .skip(1)
        .map(|(f, &t)| {
            frame_error(
                measured,
                t,
                &simulated.positions_m[f * markers..][..markers],
            )
        })
        .sum()
}

/// One frame's part of J_e: the squared distances between the measured
/// markers at `time_s` and `positions` (marker j at index j), over the
/// markers the measurement has \[m²\].
pub fn frame_error(measured: &MeasuredTrack, time_s: f64, positions: &[[f64; 2]]) -> f64 {
    positions
        .iter()
        .enumerate()
        .filter_map(|(j, s)| {
            let m = measured.get(time_s, j)?;
            Some((m[0] - s[0]).powi(2) + (m[1] - s[1]).powi(2))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(offset: f64) -> Track {
        Track {
            times_s: vec![0.0, 0.04, 0.08],
            marker_arc_lengths_m: vec![0.0, 0.6],
            positions_m: (0..6).map(|i| [i as f64 + offset, -(i as f64)]).collect(),
        }
    }

    #[test]
    fn j_e_sums_squares_over_frames_after_the_first() {
        let measured = MeasuredTrack::from_track(&track(0.0));
        assert_eq!(identification_error(&measured, &track(0.0)), 0.0);
        // 2 frames × 2 markers, each off by 0.1 in x.
        let j = identification_error(&measured, &track(0.1));
        assert!((j - 4.0 * 0.01).abs() < 1e-12);
    }

    #[test]
    fn j_e_skips_samples_the_measurement_lacks() {
        // The last frame measured at another time: its two markers are not
        // compared, only frame 1's (off by 0.1 in x each).
        let mut t = track(0.1);
        t.times_s[2] = 0.12;
        let measured = MeasuredTrack::from_track(&track(0.0));
        assert!((identification_error(&measured, &t) - 2.0 * 0.01).abs() < 1e-12);
    }
}
