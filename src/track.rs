//! A marker track: the positions of points at fixed arc lengths along the
//! tether, frame by frame. Simulations produce one, measured data is
//! compared with one, and the readers and writers move them to and from
//! Parquet and CSV.

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
