//! The film's first frame, before the release, against the initial shape
//! every candidate starts from: data in other units, mirrored axes or of
//! another experiment are refused here before anything runs.

use super::{FilmContext, WorkflowError};
use crate::error::decimal;
use crate::model::TetherParams;
use crate::scenario::Scenario;
use crate::sweep::Grid;
use crate::track::MeasuredTrack;

/// How far the measured first frame, before the release, is from the experiment's initial
/// shape (straight, from the pin at the release angle, its markers at
/// their arc lengths).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StartOffset {
    /// The frame's time on the file's clock \[s\].
    pub time_s: f64,
    /// RMS over the markers \[m\].
    pub rms_m: f64,
    /// The marker farthest off, and by how much \[m\].
    pub worst_marker: usize,
    pub worst_m: f64,
    pub markers: usize,
}

/// The thresholds of the plausibility checks, as fractions of the tether's
/// length L. Marker noise is a fraction of a millimetre and L is tens of
/// centimetres, so a first frame 1 % of L off the initial shape is worth a
/// look, and 10 % (6 cm for the paper's tether) is another experiment: other
/// units, mirrored axes, another length or release angle. A best fit that
/// misses the data by an RMS of 5 % of L is no fit of this experiment.
pub struct Plausibility;

impl Plausibility {
    pub const START_WARNING: f64 = 0.01;
    pub const START_ERROR: f64 = 0.10;
    pub const FIT_WARNING: f64 = 0.05;
}

/// The measured first frame, when it is at or before the release, against
/// the initial shape that every candidate starts from (the scenario's
/// initial state of `tether`), over the markers the frame has; None without
/// such a frame.
pub fn start_offset(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    tether: &TetherParams,
) -> Result<Option<StartOffset>, WorkflowError> {
    let Some(time_s) = scenario
        .frame_times_s()
        .first()
        .copied()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
    else {
        return Ok(None);
    };
    let tether = crate::model::Tether::new(tether.clone())?;
    let (q0, _) = scenario
        .initial_state(&tether)
        .map_err(crate::workflow::solver("the initial shape"))?;
    let offsets: Vec<(usize, f64)> = scenario
        .marker_arc_lengths_m
        .iter()
        .enumerate()
        .filter_map(|(j, &s)| {
            let m = measured.get(time_s, j)?;
            let initial = tether.point(&q0, s);
            Some((j, (m[0] - initial[0]).hypot(m[1] - initial[1])))
        })
        .collect();
    let Some((worst_marker, worst_m)) = offsets.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Ok(None);
    };
    let rms_m = (offsets.iter().map(|(_, d)| d * d).sum::<f64>() / offsets.len() as f64).sqrt();
    Ok(Some(StartOffset {
        time_s,
        rms_m,
        worst_marker,
        worst_m,
        markers: offsets.len(),
    }))
}

/// Initial shapes the start check compares with at most: the product of
/// the shaping axes' values (an axis that would pass it stays at its base
/// value).
const MAX_START_SHAPES: usize = 4096;

/// The start check for every experiment the grid can make. The measured
/// first frame shows the held initial shape if it is at or before the
/// latest release time the run uses (the config's, or a release axis's
/// largest value: a clock starting after 0 is then checked too); the
/// offset reported is the smallest over the values of the axes that move
/// that shape (angle, pin, length), so that only data no candidate can
/// start from is refused.
fn start_offset_over_axes(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    base: &TetherParams,
    grid: &Grid,
) -> Result<Option<StartOffset>, WorkflowError> {
    use crate::sweep::Parameter;
    let values = |p: Parameter| {
        grid.values(crate::sweep::Axis::Parameter(p))
            .map_or_else(|| vec![p.get(base, scenario)], <[f64]>::to_vec)
    };
    let latest_release = values(Parameter::ReleaseTimeS)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    let (mut tether, mut latest) = (base.clone(), scenario.clone());
    Parameter::ReleaseTimeS.set(latest_release, &mut tether, &mut latest);
    let mut experiments = vec![(tether, latest)];
    for p in [
        Parameter::InitialAngleDeg,
        Parameter::PinXM,
        Parameter::PinYM,
        Parameter::LengthM,
    ] {
        let vs = values(p);
        if vs.len() < 2 || experiments.len() * vs.len() > MAX_START_SHAPES {
            continue;
        }
        experiments = experiments
            .into_iter()
            .flat_map(|(t, s)| {
                vs.iter().map(move |&v| {
                    let (mut t, mut s) = (t.clone(), s.clone());
                    p.set(v, &mut t, &mut s);
                    (t, s)
                })
            })
            .collect();
    }
    let mut closest: Option<StartOffset> = None;
    for (tether, experiment) in &experiments {
        if let Some(offset) = start_offset(measured, experiment, tether)?
            && closest.as_ref().is_none_or(|c| offset.rms_m < c.rms_m)
        {
            closest = Some(offset);
        }
    }
    Ok(closest)
}

impl StartOffset {
    /// The finding in words, for a warning or an error.
    pub fn describe(&self, scenario: &Scenario) -> String {
        let angle_deg = scenario.as_drop().map_or(f64::NAN, |d| d.initial_angle_deg);
        format!(
            "the measured frame at t = {} s, before the release, is {:.4} m RMS over {} markers (marker {}: {:.4} m) from the experiment's initial shape (straight from the pin at ({}, {}) m, released at {}°): data in other units, mirrored axes, another length or release angle? (a tracker's pixels, an image's y axis pointing down, a pin elsewhere: say so in [camera] of --config, docs/conventions.md)",
            decimal(self.time_s),
            self.rms_m,
            self.markers,
            self.worst_marker,
            self.worst_m,
            scenario.pin_m()[0],
            scenario.pin_m()[1],
            angle_deg
        )
    }
}

/// The start of the film against the model's initial shape over every
/// release the run can use; a start no candidate can fit is refused unless
/// the user allows it.
pub(super) fn checked_start(
    context: &FilmContext<'_>,
    measured: &MeasuredTrack,
    scenario: &Scenario,
) -> Result<Option<StartOffset>, WorkflowError> {
    let start = start_offset_over_axes(measured, scenario, context.base, context.grid)?;
    let length_m = context.base.length_m;
    if let Some(offset) = start
        && offset.rms_m > Plausibility::START_ERROR * length_m
        && !context.allow_implausible
    {
        return Err(WorkflowError::Usage(format!(
            "{}; that is more than {} % of the tether's {} m, so no candidate can fit (pass --allow-implausible to sweep anyway)",
            offset.describe(scenario),
            100.0 * Plausibility::START_ERROR,
            length_m
        )));
    }
    Ok(start)
}
