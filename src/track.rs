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

/// A film's own noise: the standard deviation of one measured coordinate
/// about the true motion, estimated from the film alone, before and
/// independently of any fit (docs/identify.md, "Does the fit explain the
/// data?").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NoiseEstimate {
    /// \[m\], one coordinate.
    pub sigma_m: f64,
    /// How it was found.
    pub source: NoiseSource,
}

/// Where a [`NoiseEstimate`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// From the film's differences of this order (each marker's
    /// coordinates over `order + 1` consecutive frames), over this many of
    /// them.
    Differences { order: usize, differences: usize },
    /// `[camera] noise`, as the user knows their tracker.
    Declared,
}

impl NoiseEstimate {
    /// The orders tried: a difference of order k cancels every polynomial
    /// of degree below k in time, so the motion leaves only its k-th
    /// derivative times the frame interval to the k-th power. Order 3
    /// leaves millimetres at 25 fps (the shipped drop's swing); the
    /// estimate settles within 5–20 % of the true noise from order 5 to 8
    /// on the shipped films (0.4–0.5 mm at 25–60 fps). Each order's
    /// estimate can only overstate the noise by the motion it leaves, so
    /// the smallest is kept.
    pub const ORDERS: std::ops::RangeInclusive<usize> = 3..=8;
    /// Fewer differences than this give an estimate good to no better than
    /// a third (the median of n squares of Gaussians has a relative
    /// spread of about 1.1/√n): no estimate.
    pub const MIN_DIFFERENCES: usize = 10;
    /// The median of χ²₁: the median of a Gaussian's squares over σ².
    const MEDIAN_CHI2_1: f64 = 0.454_936_423_119_572_7;

    /// A declared noise \[m\].
    pub fn declared(sigma_m: f64) -> Self {
        Self {
            sigma_m,
            source: NoiseSource::Declared,
        }
    }

    /// Differences per effective degree of freedom of the estimate, by
    /// order from 3: a median of squares is 2.72× less efficient than their
    /// mean, and overlapping differences share frames. Measured on white
    /// noise (scripts/noise_dof.py: 40 series of 60 frames, 3,000 repeats).
    const DIFFERENCES_PER_DOF: [f64; 6] = [4.53, 4.99, 5.53, 5.97, 6.18, 6.54];

    /// ν: the estimate's σ₀² spreads as σ² χ²(ν)/ν would; None for a
    /// declared noise, taken as exact.
    pub fn degrees_of_freedom(&self) -> Option<f64> {
        match self.source {
            NoiseSource::Differences { order, differences } => {
                let per = Self::DIFFERENCES_PER_DOF[order.clamp(3, 8) - *Self::ORDERS.start()];
                Some(differences as f64 / per)
            }
            NoiseSource::Declared => None,
        }
    }

    /// How it was found, in words.
    pub fn how(&self) -> String {
        match self.source {
            NoiseSource::Differences { order, differences } => format!(
                "the film's own, from {differences} differences of order {order} along each marker's frames"
            ),
            NoiseSource::Declared => "as declared by [camera] noise".into(),
        }
    }
}

impl MeasuredTrack {
    /// The film's own noise, from each marker's coordinates over runs of
    /// consecutive frames: over every `k + 1` frames in a row where the
    /// marker is seen, the combination that cancels any polynomial of
    /// degree below k in time (the k-th divided difference, scaled to unit
    /// norm, so uneven clocks are exact) leaves the noise with its own
    /// variance σ² plus what the motion's k-th derivative leaves. The
    /// median of the squares over the median of χ²₁ is robust to a few
    /// lost markers and jerks (the release); the smallest over
    /// [`NoiseEstimate::ORDERS`] is kept. None when no order has
    /// [`NoiseEstimate::MIN_DIFFERENCES`] differences.
    pub fn noise_estimate(&self) -> Option<NoiseEstimate> {
        let times = self.times_s();
        // Each marker's position at each frame, looked up once for every order.
        let tracks: Vec<Vec<Option<[f64; 2]>>> = (0..self.marker_count())
            .map(|marker| times.iter().map(|&t| self.get(t, marker)).collect())
            .collect();
        let mut best: Option<NoiseEstimate> = None;
        for order in NoiseEstimate::ORDERS {
            // Every marker shares the frames' clock: each window's weights once.
            let windows: Vec<Vec<f64>> = (0..times.len().saturating_sub(order))
                .map(|start| unit_difference_weights(&times[start..start + order + 1]))
                .collect();
            let mut squares = Vec::new();
            for seen in &tracks {
                for (start, weights) in windows.iter().enumerate() {
                    let Some(points) = seen[start..start + order + 1]
                        .iter()
                        .copied()
                        .collect::<Option<Vec<[f64; 2]>>>()
                    else {
                        continue;
                    };
                    for axis in 0..2 {
                        let d: f64 = weights.iter().zip(&points).map(|(w, p)| w * p[axis]).sum();
                        squares.push(d * d);
                    }
                }
            }
            if squares.len() < NoiseEstimate::MIN_DIFFERENCES {
                continue;
            }
            let middle = squares.len() / 2;
            let (_, median, _) = squares.select_nth_unstable_by(middle, f64::total_cmp);
            let sigma_m = (*median / NoiseEstimate::MEDIAN_CHI2_1).sqrt();
            if best.is_none_or(|b| sigma_m < b.sigma_m) {
                best = Some(NoiseEstimate {
                    sigma_m,
                    source: NoiseSource::Differences {
                        order,
                        differences: squares.len(),
                    },
                });
            }
        }
        best
    }

    /// Where `marker` sits: the coordinate-wise median of its positions over
    /// the frames, and the RMS distance of those positions from it \[m\].
    /// None with fewer than three positions.
    pub fn resting_place(&self, marker: usize) -> Option<([f64; 2], f64)> {
        let seen: Vec<[f64; 2]> = self
            .times_s()
            .into_iter()
            .filter_map(|t| self.get(t, marker))
            .collect();
        if seen.len() < 3 {
            return None;
        }
        let median = |axis: usize| {
            let mut v: Vec<f64> = seen.iter().map(|p| p[axis]).collect();
            v.sort_by(f64::total_cmp);
            let k = v.len() / 2;
            match v.len() % 2 {
                1 => v[k],
                _ => 0.5 * (v[k - 1] + v[k]),
            }
        };
        let place = [median(0), median(1)];
        let mean_square = seen
            .iter()
            .map(|p| (p[0] - place[0]).powi(2) + (p[1] - place[1]).powi(2))
            .sum::<f64>()
            / seen.len() as f64;
        Some((place, mean_square.sqrt()))
    }
}

/// The weights of the divided difference over `times` (distinct), scaled to
/// unit Euclidean norm: Σ wᵢ p(tᵢ) = 0 for every polynomial p of degree
/// below `times.len() − 1`, and Σ wᵢ eᵢ has the variance of one eᵢ for
/// independent noise of equal variance.
fn unit_difference_weights(times: &[f64]) -> Vec<f64> {
    let raw: Vec<f64> = times
        .iter()
        .enumerate()
        .map(|(i, &ti)| {
            let product: f64 = times
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, &tk)| ti - tk)
                .product();
            1.0 / product
        })
        .collect();
    let norm = raw.iter().map(|w| w * w).sum::<f64>().sqrt();
    raw.into_iter().map(|w| w / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    /// A swinging marker track (a smooth motion of a few decimetres at a
    /// few rad/s, as the shipped drops) with Gaussian noise of `sigma_m`.
    fn swinging(sigma_m: f64, fps: f64, frames: usize, jitter_s: f64) -> MeasuredTrack {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let noise = Normal::new(0.0, 1.0).unwrap();
        let mut track = MeasuredTrack::default();
        for f in 0..frames {
            // Uneven clocks: each frame late by up to `jitter_s`, known.
            let t = f as f64 / fps + jitter_s * ((f * 7919) % 13) as f64 / 13.0;
            for marker in 0..6 {
                let r = 0.1 * marker as f64;
                let angle = 0.6 * (4.0 * t).cos() * (-0.3 * t).exp();
                let x = r * angle.sin() + sigma_m * noise.sample(&mut rng);
                let y = -r * angle.cos() + sigma_m * noise.sample(&mut rng);
                track.insert(t, marker, [x, y]);
            }
        }
        track
    }

    #[test]
    fn estimates_the_noise_it_was_given_within_a_fifth() {
        for &(sigma_m, fps, jitter_s) in &[
            (1e-4, 25.0, 0.0),
            (5e-4, 25.0, 0.0),
            (2e-3, 25.0, 0.0),
            (4e-4, 60.0, 2e-4),
            (1e-4, 120.0, 0.0),
        ] {
            let estimate = swinging(sigma_m, fps, 60, jitter_s)
                .noise_estimate()
                .expect("enough frames");
            let ratio = estimate.sigma_m / sigma_m;
            assert!(
                (0.8..1.2).contains(&ratio),
                "σ = {sigma_m} m at {fps} fps: estimated {} m ({:?})",
                estimate.sigma_m,
                estimate.source
            );
        }
    }

    #[test]
    fn a_noiseless_track_estimates_far_below_a_tracker() {
        let estimate = swinging(0.0, 60.0, 60, 0.0).noise_estimate().unwrap();
        assert!(estimate.sigma_m < 1e-6, "{estimate:?}");
    }

    #[test]
    fn a_few_lost_markers_do_not_move_it() {
        let mut track = swinging(5e-4, 30.0, 60, 0.0);
        let clean = track.noise_estimate().unwrap().sigma_m;
        // A tracker's jumps to another marker: decimetres, at three frames.
        for (f, marker) in [(10, 2), (30, 4), (45, 5)] {
            let t = f as f64 / 30.0;
            let p = track.get(t, marker).unwrap();
            track.insert(t, marker, [p[0] + 0.2, p[1]]);
        }
        let jumped = track.noise_estimate().unwrap().sigma_m;
        assert!((jumped / clean - 1.0).abs() < 0.15, "{clean} → {jumped}");
    }

    #[test]
    fn occluded_frames_break_the_runs_and_too_few_frames_give_none() {
        let mut short = MeasuredTrack::default();
        for f in 0..4 {
            short.insert(f as f64 * 0.04, 0, [0.0, 0.0]);
        }
        // One window of order 3, two coordinates: too few.
        assert_eq!(short.noise_estimate(), None);
        let mut gappy = MeasuredTrack::default();
        for f in 0..16 {
            let t = f as f64 * 0.04;
            gappy.insert(t, 1, [0.0, 0.0]);
            // Marker 0 lost at every fourth frame: runs of three frames,
            // none long enough for an order-3 difference.
            if f % 4 != 3 {
                gappy.insert(t, 0, [0.0, 0.0]);
            }
        }
        let estimate = gappy.noise_estimate().unwrap();
        assert_eq!(
            estimate.source,
            NoiseSource::Differences {
                order: 3,
                differences: (16 - 3) * 2
            },
            "only marker 1's windows count"
        );
    }

    #[test]
    fn a_resting_marker_is_placed_at_its_median_and_its_wander_measured() {
        let mut track = MeasuredTrack::default();
        for (f, p) in [
            [1.0, 2.0],
            [1.002, 2.0],
            [0.998, 2.001],
            [1.0, 1.999],
            [1.5, 2.0],
        ]
        .into_iter()
        .enumerate()
        {
            track.insert(f as f64 * 0.04, 0, p);
        }
        let (place, wander) = track.resting_place(0).unwrap();
        // The median ignores the one jump to 1.5.
        assert_eq!(place, [1.0, 2.0]);
        let expected = ((0.002f64.powi(2) * 2.0 + 0.001f64.powi(2) * 2.0 + 0.25) / 5.0).sqrt();
        assert!((wander - expected).abs() < 1e-12, "{wander} vs {expected}");
        assert_eq!(track.resting_place(1), None);
    }

    #[test]
    fn unit_differences_cancel_polynomials_on_uneven_clocks() {
        let times = [0.0, 0.1, 0.3, 0.35];
        let weights = unit_difference_weights(&times);
        let norm: f64 = weights.iter().map(|w| w * w).sum();
        assert!((norm - 1.0).abs() < 1e-12);
        for power in 0..4 {
            let sum: f64 = weights
                .iter()
                .zip(times)
                .map(|(w, t)| w * t.powi(power))
                .sum();
            match power {
                3 => assert!(sum.abs() > 1e-3, "t^3 is not cancelled: {sum}"),
                _ => assert!(sum.abs() < 1e-12, "t^{power}: {sum}"),
            }
        }
    }
}
