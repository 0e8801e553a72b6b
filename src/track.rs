//! Marker tracks: the positions of points at fixed arc lengths along the
//! tether, frame by frame, as a simulation makes them ([`Track`]) and as a
//! film measured them ([`MeasuredTrack`], compared with one by J_e). The
//! readers and writers (`io::track`) move them to and from Parquet and
//! CSV, through a tracker's camera (`camera`).

use std::collections::HashMap;

/// Marker positions at every frame (frame-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    pub times_s: Vec<f64>,
    pub marker_arc_lengths_m: Vec<f64>,
    /// positions[frame * markers + marker]
    pub positions_m: Vec<[f64; 2]>,
}

impl Track {
    pub fn markers(&self) -> usize {
        self.marker_arc_lengths_m.len()
    }

    pub fn at(&self, frame: usize, marker: usize) -> [f64; 2] {
        self.positions_m[frame * self.markers() + marker]
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
