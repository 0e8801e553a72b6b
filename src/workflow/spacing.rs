//! The film's scale from its own geometry: the markers' distances from one
//! another against the tether between them. A chord is never longer than
//! its arc (the tether stretches by a fraction of a per mille under its
//! own weight), and at its straightest — the first frames of a drop, a
//! hanging tether — the tether's markers lie their arc lengths apart. A
//! film read in the wrong unit (millimetres declared for metres, a
//! pixel scale off by its zoom) is off by that factor everywhere, which
//! no fit can mend and which a misfit ratio alone need not show.

use super::WorkflowError;
use crate::camera::Camera;
use crate::track::MeasuredTrack;

/// The range the straightest frame's spacing ratio must fall in: at most
/// 10 % over its arcs (a stretch the model cannot make, noise apart), and
/// at least half of them (no drop, swing or hanging tether keeps every
/// marker bunched to half its spacing in every frame).
pub const SPACING_RATIO_RANGE: (f64, f64) = (0.5, 1.1);
/// The noise allowance on the measured spacing: this many standard
/// deviations of the sum of the pairs' chords (each chord's noise is
/// √2 σ of one coordinate).
pub const SPACING_NOISE_SIGMAS: f64 = 5.0;

/// The film's straightest frame: the one whose neighbouring markers' chords
/// sum to the largest share of the tether between them; and the median
/// frame's share.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spacing {
    /// The upper quartile over the frames of their share: every frame's is
    /// at most one, and a tracker's lost-marker code or a jump to another
    /// marker lengthens a few frames' chords only.
    pub upper_quartile_ratio: f64,
    /// The frame \[s, model clock\].
    pub time_s: f64,
    /// Σ chords between neighbouring markers seen in it \[m\].
    pub measured_m: f64,
    /// Σ arc lengths between the same markers \[m\].
    pub declared_m: f64,
    /// The neighbouring pairs compared.
    pub pairs: usize,
}

impl Spacing {
    pub fn ratio(&self) -> f64 {
        self.measured_m / self.declared_m
    }
}

/// The straightest frame of `measured`, its markers at `arcs_m` along the
/// tether; None when no frame shows two markers at different arc lengths.
pub fn straightest(measured: &MeasuredTrack, arcs_m: &[f64]) -> Option<Spacing> {
    let mut order: Vec<usize> = (0..arcs_m.len()).collect();
    order.sort_by(|&a, &b| arcs_m[a].total_cmp(&arcs_m[b]));
    let mut best: Option<Spacing> = None;
    let mut ratios = Vec::new();
    for time_s in measured.times_s() {
        let seen: Vec<(f64, [f64; 2])> = order
            .iter()
            .filter_map(|&j| Some((arcs_m[j], measured.get(time_s, j)?)))
            .collect();
        let (mut measured_m, mut declared_m, mut pairs) = (0.0, 0.0, 0);
        for w in seen.windows(2) {
            let ((s0, p0), (s1, p1)) = (w[0], w[1]);
            if s1 > s0 {
                measured_m += (p1[0] - p0[0]).hypot(p1[1] - p0[1]);
                declared_m += s1 - s0;
                pairs += 1;
            }
        }
        let frame = Spacing {
            upper_quartile_ratio: f64::NAN,
            time_s,
            measured_m,
            declared_m,
            pairs,
        };
        if pairs == 0 {
            continue;
        }
        ratios.push(frame.ratio());
        if best.is_none_or(|b| frame.ratio() > b.ratio()) {
            best = Some(frame);
        }
    }
    ratios.sort_by(f64::total_cmp);
    best.map(|b| Spacing {
        upper_quartile_ratio: ratios[(3 * ratios.len() / 4).min(ratios.len() - 1)],
        ..b
    })
}

/// The farthest marker must lie at least this share of the tether's length
/// from the pin: markers within a tenth of it hardly move in a drop, and an
/// `s` column read in a unit a thousand times too small (millimetres
/// declared for metres) puts them all within a thousandth.
pub const MIN_MARKER_REACH: f64 = 0.1;

/// Refuses a film whose markers all sit within [`MIN_MARKER_REACH`] of the
/// tether's `length_m` from the pin, or whose spacing is outside
/// [`SPACING_RATIO_RANGE`] of the declared arcs (beyond the noise
/// allowance): the straightest frame's below it, or the upper quartile's
/// above it. Its coordinates are then not in the unit `camera` declares.
/// `noise_m`: the film's noise on one coordinate, where known.
pub fn check(
    measured: &MeasuredTrack,
    arcs_m: &[f64],
    camera: &Camera,
    noise_m: Option<f64>,
    length_m: f64,
    film: &str,
) -> Result<Option<Spacing>, WorkflowError> {
    // `film`: the film's name, or empty.
    let whose = match film {
        "" => "the film".to_string(),
        name => format!("film {name}"),
    };
    let declared = match camera.unit {
        crate::camera::LengthUnit::Px => format!(
            "unit = \"px\", metres_per_unit = {}",
            camera.metres_per_unit.unwrap_or(f64::NAN)
        ),
        unit => format!("unit = \"{}\"", unit.name()),
    };
    let reach_m = arcs_m.iter().copied().fold(0.0, f64::max);
    if reach_m < MIN_MARKER_REACH * length_m {
        return Err(WorkflowError::Usage(format!(
            "{whose}'s farthest marker is {reach_m} m along the tether from the pin, under {} of the tether's {length_m} m: its markers' arc lengths are not in metres? (an s column is read in [camera] unit, here {declared}; check [camera] unit and metres_per_unit, and marker_arc_lengths_m). --allow-implausible sweeps anyway",
            MIN_MARKER_REACH
        )));
    }
    let Some(spacing) = straightest(measured, arcs_m) else {
        return Ok(None);
    };
    let allowance = noise_m.unwrap_or(0.0).max(0.0)
        * SPACING_NOISE_SIGMAS
        * (2.0 * spacing.pairs as f64).sqrt()
        / spacing.declared_m;
    let (low, high) = SPACING_RATIO_RANGE;
    // Too short at the straightest frame, or too long in most frames.
    let (ratio, at) = match spacing.ratio() < low - allowance {
        true => (spacing.ratio(), "at their straightest"),
        false => (
            spacing.upper_quartile_ratio,
            "in a quarter of the frames, where a chord is never longer than its arc",
        ),
    };
    if spacing.ratio() >= low - allowance && spacing.upper_quartile_ratio <= high + allowance {
        return Ok(Some(spacing));
    }
    Err(WorkflowError::Usage(format!(
        "{whose}'s markers are {ratio:.4} × their declared spacing {at} (the straightest frame, t = {} s: {:.6} m between its {} neighbouring pairs against {:.6} m of tether between them), outside {low}–{high} ×: its coordinates are not in the unit [camera] declares ({declared}). A scale of {:.6e} m per file unit (metres_per_unit) would make them match; check [camera] unit and metres_per_unit of the film's config, and the markers' arc lengths (marker_arc_lengths_m, or the file's s column). --allow-implausible sweeps anyway",
        crate::error::decimal(spacing.time_s),
        spacing.measured_m,
        spacing.pairs,
        spacing.declared_m,
        camera.scale_m() / ratio,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARCS: [f64; 4] = [0.0, 0.1, 0.2, 0.3];

    /// Straight along x in the first of eight frames, folded in half in
    /// the others (at 0.7 of the spacing), all coordinates times `scale`.
    fn straight_then_folded(scale: f64) -> MeasuredTrack {
        let mut m = MeasuredTrack::default();
        for f in 0..8 {
            for (j, &s) in ARCS.iter().enumerate() {
                let p = match f {
                    0 => [s, 0.0],
                    _ => [f64::min(s, 0.3 - s), -0.01 * j as f64],
                };
                m.insert(0.04 * f as f64, j, [scale * p[0], scale * p[1]]);
            }
        }
        m
    }

    fn checked(m: &MeasuredTrack, noise_m: Option<f64>) -> Result<Option<Spacing>, WorkflowError> {
        check(m, &ARCS, &Camera::default(), noise_m, 0.3, "")
    }

    #[test]
    fn the_straightest_frame_is_found_and_a_wrong_unit_refused() {
        let right = straightest(&straight_then_folded(1.0), &ARCS).unwrap();
        assert_eq!(right.time_s, 0.0);
        assert_eq!(right.pairs, 3);
        assert!((right.ratio() - 1.0).abs() < 1e-12);
        assert!((right.upper_quartile_ratio - 0.7).abs() < 5e-3, "{right:?}");
        assert!(checked(&straight_then_folded(1.0), None).is_ok());
        // Millimetres read as metres: a thousandth of the spacing.
        let mm = checked(&straight_then_folded(1e-3), Some(1e-6))
            .unwrap_err()
            .to_string();
        assert!(
            mm.contains("0.0010 ×") && mm.contains("at their straightest"),
            "{mm}"
        );
        assert!(mm.contains("unit = \"m\""), "{mm}");
        assert!(mm.contains("1.000000e3"), "{mm}");
        // Twice the spacing (a pixel scale off by its zoom): most frames'
        // chords longer than their arcs.
        let twice = checked(&straight_then_folded(2.0), None)
            .unwrap_err()
            .to_string();
        assert!(twice.contains("in a quarter of the frames"), "{twice}");
        // Within the range.
        assert!(checked(&straight_then_folded(1.05), None).is_ok());
        assert!(checked(&straight_then_folded(0.6), None).is_ok());
    }

    #[test]
    fn noise_widens_the_range_and_a_lost_marker_or_one_marker_says_nothing() {
        // 0.45× is refused without noise, kept with 5 mm of it (5σ·√6 =
        // 61 mm over 0.3 m of tether).
        assert!(checked(&straight_then_folded(0.45), None).is_err());
        assert!(checked(&straight_then_folded(0.45), Some(5e-3)).is_ok());
        // A lost-marker code in one frame moves the straightest frame, not
        // the upper quartile.
        let mut lost = straight_then_folded(1.0);
        lost.insert(0.04, 3, [5.0, 5.0]);
        assert!(checked(&lost, None).is_ok());
        // Markers all within a thousandth of the 0.3 m tether: arcs in
        // millimetres read as metres.
        let near = check(
            &straight_then_folded(1e-3),
            &ARCS.map(|s| 1e-3 * s),
            &Camera::default(),
            None,
            0.3,
            "drop",
        )
        .unwrap_err()
        .to_string();
        assert!(near.contains("film drop's farthest marker"), "{near}");
        let mut one = MeasuredTrack::default();
        one.insert(0.0, 2, [5.0, 5.0]);
        assert_eq!(straightest(&one, &ARCS), None);
    }
}
