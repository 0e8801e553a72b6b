//! The profile figures (J_e against one parameter, the others minimized
//! over the grid or re-fitted), and what they annotate: the threshold and
//! the refined values and profiles the identification recorded in the
//! results' metadata.

use super::super::series::{Panel, Panels, Series};
use super::{at_best_n, axis_label, axis_title, best, other_axes, sorted_unique};
use crate::least_squares::profile::Profile;
use crate::sweep::{Axis, CandidateResult};

/// What the identification found beyond the table, for the figures: the
/// confidence region's J_e threshold and the refined values, read from the
/// results' metadata (so `plot DIR` draws them too).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    pub threshold_m2: Option<f64>,
    /// (axis, refined value).
    pub refined: Vec<(Axis, f64)>,
    /// The refined parameters' profiles (the others re-fitted).
    pub profiles: Vec<RefitProfile>,
    /// The surface figure's axes (`--surface`); None: [`DEFAULT_SURFACE_AXES`](super::DEFAULT_SURFACE_AXES).
    pub surface_axes: Option<[Axis; 2]>,
}

/// A refined parameter's profile, as the metadata records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RefitProfile {
    pub axis: Axis,
    /// The refined n.
    pub elements: usize,
    /// (value, J_e) with the others re-fitted, by value.
    pub points: Vec<(f64, f64)>,
    /// The refined J_e plus the profile's rise, and its level.
    pub threshold_m2: f64,
    pub confidence_level: f64,
    /// The interval's ends where the profile crosses the threshold.
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

/// The part of the metadata's refined optimum (`sweep::refine::Refined`
/// as JSON) the profile figures draw.
#[derive(serde::Deserialize)]
struct RefinedRecord {
    elements: usize,
    j_e_m2: f64,
    profile_rise_m2: f64,
    confidence_level: f64,
    parameters: Vec<RefinedParameterRecord>,
}

#[derive(serde::Deserialize)]
struct RefinedParameterRecord {
    parameter: String,
    /// A film's own parameter (a joint run): no axis of the results.
    #[serde(default)]
    film: Option<String>,
    profile: Option<Profile>,
}

impl RefitProfile {
    /// Every profiled parameter of the metadata's refined optimum.
    fn from_refined(text: &str) -> Vec<RefitProfile> {
        let Ok(r) = serde_json::from_str::<RefinedRecord>(text) else {
            return Vec::new();
        };
        r.parameters
            .into_iter()
            .filter(|p| p.film.is_none())
            .filter_map(|p| {
                let profile = p.profile?;
                Some(RefitProfile {
                    axis: Axis::parse(&p.parameter).ok()?,
                    elements: r.elements,
                    points: profile.points.iter().map(|q| (q.value, q.cost)).collect(),
                    threshold_m2: r.j_e_m2 + r.profile_rise_m2,
                    confidence_level: r.confidence_level,
                    lower: profile.lower.crossed(),
                    upper: profile.upper.crossed(),
                })
            })
            .collect()
    }
}

impl Annotations {
    pub fn from_metadata(metadata: &std::collections::BTreeMap<String, String>) -> Self {
        let parse = |key: &str| {
            metadata
                .get(key)
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        };
        let threshold_m2 =
            parse(crate::metadata::SUMMARY).and_then(|s| s["confidence"]["threshold_m2"].as_f64());
        let profiles = metadata
            .get(crate::metadata::REFINED)
            .map(|text| RefitProfile::from_refined(text))
            .unwrap_or_default();
        let refined = parse(crate::metadata::REFINED)
            .and_then(|r| {
                r["parameters"].as_array().map(|ps| {
                    ps.iter()
                        .filter(|p| p["film"].is_null())
                        .filter_map(|p| {
                            let axis = Axis::parse(p["parameter"].as_str()?).ok()?;
                            Some((axis, p["value"].as_f64()?))
                        })
                        .collect()
                })
            })
            .unwrap_or_default();
        let surface_axes = metadata
            .get(crate::metadata::SURFACE_AXES)
            .and_then(|text| serde_json::from_str::<[Axis; 2]>(text).ok());
        Self {
            threshold_m2,
            refined,
            profiles,
            surface_axes,
        }
    }
}

/// J_e against one continuous axis at the best n, minimized over the other
/// axes, with the confidence region's threshold and the refined value: how
/// sharply the data pin that parameter down. None unless the axis varies.
pub fn profile(
    results: &[CandidateResult],
    column: Axis,
    annotations: &Annotations,
) -> Option<Panels> {
    let best = best(results)?;
    let n = best.candidate.elements;
    let at_n = at_best_n(results, best, &[column]);
    let axis = sorted_unique(at_n.iter().filter_map(|r| r.candidate.value(column)));
    if axis.len() < 2 {
        return None;
    }
    let points: Vec<(f64, f64)> = axis
        .iter()
        .filter_map(|&x| {
            at_n.iter()
                .filter(|r| r.candidate.value(column) == Some(x))
                .filter_map(|r| r.j_e_m2)
                .min_by(f64::total_cmp)
                .map(|j| (x, j))
        })
        .collect();
    let others = other_axes(&at_n, &[column]);
    let refit = annotations.profiles.iter().find(|p| p.axis == column);
    // Labelled apart from the re-fitted profile: the grid's points miss the
    // optimum in the other axes, so its curve lies above the profile.
    let curve_name = match (others.is_empty(), refit.is_some()) {
        (true, _) => "the grid's J_e".to_string(),
        (false, false) => format!("min J_e over {}", others.join(", ")),
        (false, true) => format!(
            "the grid's J_e, min over its {} (above the re-fitted profile where its points miss the optimum)",
            others.join(", ")
        ),
    };
    let (label, unit) = axis_label(column);
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let grid_best = best.candidate.value(column)?;
    let mut marks = vec![(format!("grid best {label} = {grid_best}{unit}"), grid_best)];
    if let Some((_, v)) = annotations.refined.iter().find(|(c, _)| *c == column) {
        marks.push((
            format!("refined {label} = {}{unit}", significant(*v, 5)),
            *v,
        ));
    }
    let threshold = |threshold: f64| {
        let mut line = Series::new(
            "≈95 % region threshold (grid, two parameters)",
            vec![(axis[0], threshold), (axis[axis.len() - 1], threshold)],
        );
        line.faint = true;
        line
    };
    let refit_series =
        |clip: Option<f64>| refit.map_or_else(Vec::new, |p| refit_series(p, &unit, clip));
    let mut panels = vec![Panel {
        x_range: None,
        y_label: "J_e [m²]".into(),
        series: vec![Series::new(curve_name.clone(), points.clone())],
        marks: marks.clone(),
    }];
    if let Some(t) = annotations.threshold_m2 {
        panels[0].series.push(threshold(t));
        panels[0].series.extend(refit_series(None));
        panels.extend(near_minimum(
            &points,
            curve_name,
            (threshold(t), t),
            refit.map(|p| (p, unit.as_str())),
            marks,
        ));
    }
    Some(Panels {
        title: format!(
            "J_e against {label} at n = {n}{}",
            if others.is_empty() {
                String::new()
            } else {
                format!(", minimized over {}", others.join(", "))
            }
        ),
        x_label: axis_title(column),
        panels,
    })
}

/// A second panel where the grid's curve spans far more than the
/// threshold's height above its minimum (a release time's steep walls),
/// so that the first lays the threshold on the axis: the neighbourhood of
/// the re-fitted profile's minimum where there is one (the grid's curve
/// may lie wholly above it, and is then left out), else the grid's.
fn near_minimum(
    points: &[(f64, f64)],
    curve_name: String,
    (threshold, threshold_m2): (Series, f64),
    refit: Option<(&RefitProfile, &str)>,
    marks: Vec<(String, f64)>,
) -> Option<Panel> {
    let lowest = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let j_min = lowest(points);
    let j_max = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let height = threshold_m2 - j_min;
    if !(height > 0.0 && j_max - j_min > ZOOM_BEYOND_THRESHOLDS * height) {
        return None;
    }
    let (floor, rise) = match refit {
        Some((p, _)) => (lowest(&p.points), p.threshold_m2 - lowest(&p.points)),
        None => (j_min, height),
    };
    let top = floor + ZOOM_THRESHOLDS * rise;
    // Every series in its place, drawn or not, so that each keeps the
    // first panel's colour (an empty one draws nothing and no legend).
    let mut series = vec![Series::new(curve_name, clip_above(points, top))];
    series.push(match threshold_m2 <= top {
        true => threshold,
        false => Series::new(threshold.name, Vec::new()),
    });
    if let Some((p, unit)) = refit {
        series.extend(refit_series(p, unit, Some(top)));
    }
    // The re-fitted profile's x span (its interval's ends and beyond), with
    // a margin: a release time's interval is a hundredth of its axis.
    let x_range = refit.map(|(p, _)| {
        let xs = p.points.iter().map(|q| q.0);
        let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let pad = 0.1 * (hi - lo);
        (lo - pad, hi + pad)
    });
    Some(Panel {
        x_range,
        y_label: match refit {
            Some(_) => "J_e [m²], near the re-fitted minimum".into(),
            None => "J_e [m²], near the minimum".into(),
        },
        series,
        marks,
    })
}

/// The re-fitted profile (cut above `clip`) and its interval, drawn at its
/// own threshold's height (one parameter, from the refined J_e): where the
/// curve stays below it. An end that is not crossed is the farthest point
/// (the grid's bound, or where the walk stopped).
fn refit_series(p: &RefitProfile, unit: &str, clip: Option<f64>) -> Vec<Series> {
    let points = match clip {
        Some(top) => clip_above(&p.points, top),
        None => p.points.clone(),
    };
    let mut curve = Series::new(
        format!("J_e, the others re-fitted (n = {})", p.elements),
        points,
    );
    curve.dots = true;
    let (first, last) = (p.points[0].0, p.points[p.points.len() - 1].0);
    let (lower, upper) = (p.lower.unwrap_or(first), p.upper.unwrap_or(last));
    let show = |end: Option<f64>, v: f64| match end {
        Some(_) => significant(v, 4),
        None => format!("{} (not crossed)", significant(v, 4)),
    };
    let line = Series::new(
        format!(
            "{} % profile interval [{}, {}]{unit}: J_e ≤ refined + σ² χ²₁",
            100.0 * p.confidence_level,
            show(p.lower, lower),
            show(p.upper, upper),
        ),
        vec![(lower, p.threshold_m2), (upper, p.threshold_m2)],
    );
    vec![curve, line]
}

/// `value` to `digits` significant digits (1982.4, 0.80008).
fn significant(value: f64, digits: i32) -> String {
    if value == 0.0 || !value.is_finite() {
        return value.to_string();
    }
    let decimals = (digits - 1 - value.abs().log10().floor() as i32).max(0) as usize;
    format!("{value:.decimals$}")
}

/// A profile gets a zoomed panel when it rises more than this many
/// threshold heights (threshold − J_min) above its minimum…
const ZOOM_BEYOND_THRESHOLDS: f64 = 20.0;
/// …and that panel shows this many threshold heights above the minimum.
const ZOOM_THRESHOLDS: f64 = 3.0;

/// The polyline `points` where its y is at most `limit`: crossings are
/// interpolated onto the limit, and a point with y = NaN breaks the line
/// where it leaves.
fn clip_above(points: &[(f64, f64)], limit: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let crossing = |a: (f64, f64), b: (f64, f64)| {
        let f = (limit - a.1) / (b.1 - a.1);
        (a.0 + f * (b.0 - a.0), limit)
    };
    for (k, &p) in points.iter().enumerate() {
        let inside = p.1 <= limit;
        if let Some(&q) = k.checked_sub(1).map(|j| &points[j]) {
            let was_inside = q.1 <= limit;
            if was_inside && !inside {
                out.push(crossing(q, p));
                out.push((p.0, f64::NAN));
            } else if !was_inside && inside {
                out.push(crossing(q, p));
            }
        }
        if inside {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::results;
    use super::*;
    use crate::sweep::Grid;

    #[test]
    fn a_profile_minimizes_over_the_other_axis_and_marks_the_refined_value() {
        let annotations = Annotations {
            threshold_m2: Some(2.5),
            refined: vec![(Axis::Damping, 510.0)],
            profiles: Vec::new(),
            surface_axes: None,
        };
        let p = profile(&results(None), Axis::Damping, &annotations).unwrap();
        let panel = &p.panels[0];
        // Five D values, each at its best C_D (0.8): 1 + ((D − 500)/250)².
        assert_eq!(
            panel.series[0].points,
            vec![
                (0.0, 5.0),
                (250.0, 2.0),
                (500.0, 1.0),
                (750.0, 2.0),
                (1000.0, 5.0)
            ]
        );
        assert_eq!(panel.series[1].points, vec![(0.0, 2.5), (1000.0, 2.5)]);
        assert_eq!(
            panel.marks,
            vec![
                ("grid best D = 500 Pa·s".to_string(), 500.0),
                ("refined D = 510.00 Pa·s".to_string(), 510.0)
            ]
        );
        // The curve rises 4 threshold heights: one panel shows it all.
        assert_eq!(p.panels.len(), 1);
        assert_eq!(p.title, "J_e against D at n = 10, minimized over C_D");
        // A threshold 0.1 above the minimum, which the curve exceeds 40
        // times: a second panel shows 3 heights above the minimum, the
        // curve cut where it leaves.
        let steep = Annotations {
            threshold_m2: Some(1.1),
            ..annotations.clone()
        };
        let p = profile(&results(None), Axis::Damping, &steep).unwrap();
        assert_eq!(p.panels.len(), 2);
        let zoomed = &p.panels[1].series[0].points;
        assert!(
            zoomed
                .iter()
                .filter(|q| q.1.is_finite())
                .all(|q| q.1 <= 1.3 + 1e-12)
        );
        assert!(
            zoomed.iter().any(|q| q.0 == 500.0 && q.1 == 1.0),
            "{zoomed:?}"
        );
        // One C_D value fewer than two: no profile of an axis that does not vary.
        let one = Grid::parse("10", "0:1000:250", "0.8").unwrap();
        let flat: Vec<CandidateResult> = results(None)
            .into_iter()
            .filter(|r| one.index_of(&r.candidate).is_some())
            .collect();
        assert!(profile(&flat, Axis::Drag, &annotations).is_none());
    }

    #[test]
    fn clipping_interpolates_the_crossings_and_breaks_the_line() {
        let points = [(0.0, 3.0), (1.0, 1.0), (2.0, 3.0), (3.0, 1.0)];
        let clipped = clip_above(&points, 2.0);
        assert_eq!(clipped[0], (0.5, 2.0));
        assert_eq!(clipped[1], (1.0, 1.0));
        assert_eq!(clipped[2], (1.5, 2.0));
        assert!(clipped[3].1.is_nan());
        assert_eq!(&clipped[4..], &[(2.5, 2.0), (3.0, 1.0)]);
        assert_eq!(significant(1982.367618, 5), "1982.4");
        assert_eq!(significant(0.800082, 5), "0.80008");
    }

    #[test]
    fn annotations_come_from_the_metadata_the_workflow_writes() {
        let metadata = std::collections::BTreeMap::from([
            (
                crate::metadata::SUMMARY.to_string(),
                r#"{"confidence":{"threshold_m2":2.5e-4}}"#.to_string(),
            ),
            (
                crate::metadata::REFINED.to_string(),
                format!(
                    r#"{{"parameters":[{{"parameter":"{}","value":0.8001}}]}}"#,
                    Axis::Drag.column()
                ),
            ),
        ]);
        let a = Annotations::from_metadata(&metadata);
        assert_eq!(a.threshold_m2, Some(2.5e-4));
        assert_eq!(a.refined, vec![(Axis::Drag, 0.8001)]);
        assert_eq!(
            Annotations::from_metadata(&Default::default()),
            Annotations::default()
        );
    }

    #[test]
    fn the_refitted_profile_is_drawn_with_its_interval_at_its_threshold() {
        use crate::least_squares::profile::{self as refit, ProfileEnd, ProfilePoint};
        let point = |value, cost| ProfilePoint {
            value,
            cost,
            others: vec![0.8],
        };
        // As the workflow writes it: the profile serialized by serde.
        let refitted = refit::Profile {
            lower: ProfileEnd::Bound { value: 0.0 },
            upper: ProfileEnd::Crossed { value: 800.0 },
            points: vec![point(0.0, 1.5), point(510.0, 1.0), point(800.0, 2.0)],
            below_fit: None,
            evaluations: 9,
        };
        let refined = serde_json::json!({
            (Axis::Elements.column()): 10,
            "j_e_m2": 1.0,
            "profile_rise_m2": 1.0,
            "confidence_level": 0.95,
            "parameters": [{
                "parameter": Axis::Damping.column(),
                "value": 510.0,
                "profile": serde_json::to_value(&refitted).unwrap(),
            }],
        });
        let metadata = std::collections::BTreeMap::from([
            (
                crate::metadata::SUMMARY.to_string(),
                r#"{"confidence":{"threshold_m2":2.5}}"#.to_string(),
            ),
            (crate::metadata::REFINED.to_string(), refined.to_string()),
        ]);
        let a = Annotations::from_metadata(&metadata);
        assert_eq!(
            a.profiles,
            vec![RefitProfile {
                axis: Axis::Damping,
                elements: 10,
                points: vec![(0.0, 1.5), (510.0, 1.0), (800.0, 2.0)],
                threshold_m2: 2.0,
                confidence_level: 0.95,
                lower: None,
                upper: Some(800.0),
            }]
        );
        let p = profile(&results(None), Axis::Damping, &a).unwrap();
        let series = &p.panels[0].series;
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names[2..],
            [
                "J_e, the others re-fitted (n = 10)",
                "95 % profile interval [0 (not crossed), 800.0] Pa·s: J_e ≤ refined + σ² χ²₁"
            ]
        );
        // The interval at its threshold's height, from the bound to the
        // crossing.
        assert_eq!(series[3].points, vec![(0.0, 2.0), (800.0, 2.0)]);
        // No profile for an axis that was not profiled.
        let drag = profile(&results(None), Axis::Drag, &a).unwrap();
        assert_eq!(drag.panels[0].series.len(), 2);
    }
}
