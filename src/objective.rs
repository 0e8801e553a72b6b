//! The objectives of docs/model.md §5: J_e for identification, J_a,min for swing-up.

use std::collections::HashMap;

use serde::Serialize;

use crate::track::Track;

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

/// Times are matched by value to this resolution (1 µs: far below any frame
/// interval, far above the rounding of times written as text).
const TIME_MATCH_S: f64 = 1e-6;
const TICKS_PER_S: f64 = 1e6;

/// Measured marker positions keyed by (time, marker index), and what the
/// file says of its markers.
#[derive(Debug, Clone, Default)]
pub struct MeasuredTrack {
    points: HashMap<(i64, usize), [f64; 2]>,
    /// Each marker's arc length from the pin \[m\], when the file has an `s`
    /// column (marker j at index j).
    pub marker_arc_lengths_m: Option<Vec<f64>>,
    /// Rows whose position is empty or NaN (an occluded marker): read, not
    /// held.
    pub occluded_rows: usize,
    /// The markers of those rows.
    pub occluded_markers: std::collections::BTreeSet<usize>,
}

impl MeasuredTrack {
    pub fn insert(&mut self, time_s: f64, marker: usize, position_m: [f64; 2]) {
        self.points
            .insert(((time_s / TIME_MATCH_S).round() as i64, marker), position_m);
    }

    /// Rows held (one per time and marker).
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The distinct times of its rows, increasing \[s\], to the matching
    /// resolution.
    pub fn times_s(&self) -> Vec<f64> {
        let mut keys: Vec<i64> = self.points.keys().map(|&(t, _)| t).collect();
        keys.sort_unstable();
        keys.dedup();
        // A division by 1e6 (exact) gives the double nearest the decimal
        // time, as the file wrote it: 0.04 s, not 0.04 + 7e-18.
        keys.into_iter().map(|t| t as f64 / TICKS_PER_S).collect()
    }

    /// Markers 0.. up to the highest the file names (occluded rows count:
    /// their marker exists).
    pub fn marker_count(&self) -> usize {
        self.points
            .keys()
            .map(|&(_, j)| j + 1)
            .chain(self.occluded_markers.iter().map(|&j| j + 1))
            .max()
            .unwrap_or(0)
    }

    /// Whether the file names `marker` (seen or occluded) at any frame.
    pub fn names_marker(&self, marker: usize) -> bool {
        self.occluded_markers.contains(&marker) || self.points.keys().any(|&(_, j)| j == marker)
    }

    pub fn get(&self, time_s: f64, marker: usize) -> Option<[f64; 2]> {
        self.points
            .get(&((time_s / TIME_MATCH_S).round() as i64, marker))
            .copied()
    }

    pub fn from_track(track: &Track) -> Self {
        let mut m = Self::default();
        for (f, &t) in track.times_s.iter().enumerate() {
            for j in 0..track.markers() {
                m.insert(t, j, track.at(f, j));
            }
        }
        m
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
