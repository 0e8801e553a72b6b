//! The drop the candidates are compared in, made from the film's scenario
//! and the measured file, and checked against it: the clock, the declared
//! frames, the markers and every axis value.

use super::{FilmContext, WorkflowError};
use crate::error::{InputError, decimal};
use crate::model::TetherParams;
use crate::scenario::{DeclaredFrames, Frames, Scenario, ScenarioKind, median_interval_s};
use crate::sweep::{Axis, Grid, Parameter};
use crate::track::MeasuredTrack;

/// The release-time axis.
const RELEASE: Axis = Axis::Parameter(Parameter::ReleaseTimeS);

/// The drop the candidates are compared in: the film's scenario (or
/// the paper's), with the measured file's markers and its last frame as the
/// duration.
pub(super) fn experiment(
    context: &FilmContext<'_>,
    measured: &MeasuredTrack,
) -> Result<Scenario, WorkflowError> {
    let mut scenario = context
        .film
        .scenario
        .clone()
        .unwrap_or_else(|| Scenario::new(ScenarioKind::Drop, context.base.length_m));
    if scenario.kind() != ScenarioKind::Drop {
        return Err(InputError::new(
            "scenario",
            format!("{:?}", scenario.kind()).to_lowercase(),
            "drop: identify compares a released tether's drop",
        )
        .into());
    }
    let file_arcs = measured.marker_arc_lengths_m.as_ref();
    match (&context.film.marker_arc_lengths_m, file_arcs) {
        (Some(given), Some(file))
            if given.len() != file.len()
                || given.iter().zip(file).any(|(a, b)| (a - b).abs() > 1e-6) =>
        {
            return Err(InputError::new(
                "marker_arc_lengths_m",
                format!("{given:?}"),
                format!("the measured file's markers, whose `s` column says {file:?} m (to 1 µm)"),
            )
            .into());
        }
        (Some(given), _) => scenario.marker_arc_lengths_m = given.clone(),
        (None, Some(file)) => {
            // Named as the file's: the config says nothing of them.
            let length_m = context.base.length_m;
            if let Some(s) = file.iter().find(|&&s| !(0.0..=length_m).contains(&s)) {
                return Err(InputError::new(
                    "s (a column of the measured file)",
                    // To the nanometre: 0.54, not 0.5399999999999999.
                    (s * 1e9).round() / 1e9,
                    format!("arc lengths from the pin, between 0 and the tether's length {length_m} m (length_m, or --length; an s column in another unit needs [camera] unit)"),
                )
                .into());
            }
            scenario.marker_arc_lengths_m = file.clone();
        }
        (None, None) => {}
    }
    // The file's own frames, wherever they fall (docs/model.md §4.1).
    let times = measured.times_s();
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return Err(InputError::new("measured", "no rows", "a measured track").into());
    };
    if first < 0.0 {
        return Err(InputError::new(
            "measured",
            format!("a frame at t = {first} s"),
            "times from 0 s on (shift the file's clock; the release is release_time_s on it)",
        )
        .into());
    }
    if last <= scenario.release_time_s() {
        return Err(InputError::new(
            "release_time_s",
            scenario.release_time_s(),
            format!("a time before the measured file's last frame, t = {last} s"),
        )
        .into());
    }
    check_clock(&scenario, context.grid, &times)?;
    check_declared_frames(
        &context.film.declared_frames,
        &times,
        &scenario,
        context.grid,
    )?;
    check_marker_count(
        measured,
        &scenario,
        context.film.marker_arc_lengths_m.is_some(),
    )?;
    scenario.frames = Frames::film(times);
    scenario.validate(context.base.length_m)?;
    scenario.check_track_memory()?;
    Ok(scenario)
}

/// The config's declared frames against the file's `times` (on the
/// file's clock, in seconds). A duration agrees when the file's last frame
/// falls within a frame interval before the release plus the duration, for
/// some release the run can use (the config's, or a release axis's range).
fn check_declared_frames(
    declared: &DeclaredFrames,
    times: &[f64],
    scenario: &Scenario,
    grid: &Grid,
) -> Result<(), WorkflowError> {
    let named = |key: &str| format!("{key} (in {})", declared.source);
    let (first, last) = (times[0], times[times.len() - 1]);
    let interval = median_interval_s(times).unwrap_or(f64::INFINITY);
    if let Some(given) = &declared.frame_times_s
        && (given.len() != times.len()
            || given.iter().zip(times).any(|(a, b)| (a - b).abs() > 1e-6))
    {
        return Err(InputError::new(
            named("frame_times_s"),
            format!(
                "{} times from {} to {} s",
                given.len(),
                given.first().unwrap_or(&f64::NAN),
                given.last().unwrap_or(&f64::NAN)
            ),
            format!(
                "the measured file's frames ({} from {} to {} s, to 1 µs), or left out",
                times.len(),
                decimal(first),
                decimal(last)
            ),
        )
        .into());
    }
    if let Some(given) = declared.frame_interval_s
        && times.len() > 1
        && (given - interval).abs() > 0.01 * interval
    {
        return Err(InputError::new(
            named("frame_interval_s"),
            given,
            format!(
                "the measured file's frame interval, {} s (its median, to 1 %), or left out",
                decimal(interval)
            ),
        )
        .into());
    }
    if let Some(duration) = declared.duration_s {
        let releases = match grid.values(RELEASE) {
            Some(values) => values.to_vec(),
            None => vec![scenario.release_time_s()],
        };
        let (low, high) = releases
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &r| {
                (l.min(r), h.max(r))
            });
        // last ∈ [release + duration − interval, release + duration] for
        // some release in [low, high].
        let slack = 1e-6 + if interval.is_finite() { interval } else { 0.0 };
        if last > high + duration + 1e-6 || last < low + duration - slack {
            return Err(InputError::new(
                named("duration_s"),
                duration,
                format!(
                    "the measured file's last frame less the release: {} s less {} ({}), or left out",
                    decimal(last),
                    if low == high {
                        format!("{} s", decimal(low))
                    } else {
                        format!("{} … {} s", decimal(low), decimal(high))
                    },
                    if releases.len() > 1 {
                        "the release axis"
                    } else {
                        "release_time_s"
                    }
                ),
            )
            .into());
        }
    }
    Ok(())
}

/// A film whose clock starts more than a frame interval after 0 was not
/// released at its t = 0: without a release time (or an axis over it)
/// every candidate would be compared from the wrong instant, and the sweep
/// would still find a best one.
fn check_clock(scenario: &Scenario, grid: &Grid, times: &[f64]) -> Result<(), WorkflowError> {
    let has_release_axis = grid.has(RELEASE);
    if scenario.release_time_s() != 0.0 || has_release_axis {
        return Ok(());
    }
    let (Some(&first), Some(interval)) = (times.first(), median_interval_s(times)) else {
        return Ok(());
    };
    if first > interval * (1.0 + 1e-6) {
        return Err(InputError::new(
            "release_time_s",
            "not given",
            format!(
                "the release on the measured file's clock, which starts at t = {} s, more than a frame interval ({} s) after 0: set release_time_s in [settings] of --config, or give it an axis (--axis release_time_s=START:STOP:STEP)", decimal(first), decimal(interval)
            ),
        )
        .into());
    }
    Ok(())
}

/// The file's markers must be the experiment's: a file with other markers
/// than the default eleven, and neither an `s` column nor
/// marker_arc_lengths_m to say where they sit, would be matched to the
/// wrong arc lengths. A config that lists fewer markers than the file has
/// says which to use.
fn check_marker_count(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    markers_given: bool,
) -> Result<(), WorkflowError> {
    let in_file = measured.marker_count();
    let in_experiment = scenario.marker_arc_lengths_m.len();
    // Markers 1..=N where the experiment has N, 0..N−1: numbered from 1
    // (a file that only leaves out the pin's marker 0 is fine).
    if in_file == in_experiment + 1 && !measured.names_marker(0) {
        return Err(InputError::new(
            "measured",
            format!("markers 1..{}", in_file - 1),
            "a marker 0 at the pin's end: a file whose markers are numbered from 1 says so with first_marker = 1 in [camera] of --config",
        )
        .into());
    }
    let described = markers_given || measured.marker_arc_lengths_m.is_some();
    if in_file != in_experiment && !(described && in_file > in_experiment) {
        return Err(InputError::new(
            "marker_arc_lengths_m",
            if described {
                format!("{in_experiment} markers")
            } else {
                format!("not given (the default {in_experiment} at s = j L/10)")
            },
            format!(
                "the measured file's {in_file} markers (0..{}): give their arc lengths as marker_arc_lengths_m in [settings] of --config, or an `s` column in the file",
                in_file.saturating_sub(1)
            ),
        )
        .into());
    }
    Ok(())
}

/// Every value of every parameter axis, set in the experiment, must make a
/// valid tether and drop: a length that holds the markers, a release before
/// the last frame, … Checked per value, before anything runs.
pub(super) fn check_parameter_axes(
    grid: &Grid,
    base: &TetherParams,
    scenario: &Scenario,
) -> Result<(), WorkflowError> {
    for (parameter, values) in grid.parameters() {
        for &value in values {
            let (mut tether, mut experiment) = (base.clone(), scenario.clone());
            parameter.set(value, &mut tether, &mut experiment);
            tether
                .validate()
                .and_then(|()| experiment.validate(tether.length_m))
                .map_err(|e| {
                    InputError::new(
                        "axis",
                        format!("{parameter}={}", crate::error::number(value)),
                        format!("values that make a valid experiment: {e}"),
                    )
                })?;
        }
    }
    Ok(())
}
