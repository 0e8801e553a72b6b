//! When an experiment is looked at: its frames, on the clock of the file
//! that holds them (docs/model.md §4.1).

use crate::error::InputError;

/// Frames a simulation records at most: a million (over 16 minutes at
/// 1,000 fps), whose track of eleven markers takes 176 MB. A duration or
/// frame interval beyond it is refused before anything is allocated.
pub const MAX_FRAMES: usize = 1_000_000;

/// The shortest frame interval taken \[s\]: a million frames a second,
/// beyond any camera that films a tether. A shorter one is a unit slip
/// (`frame_interval_s = 1e-9`), named as such before the duration's frame
/// count is.
pub const MIN_FRAME_INTERVAL_S: f64 = 1e-6;

/// The longest motion simulated \[s\]: an hour, where a drop or a swing-up
/// lasts seconds. A longer span is a clock in other units (milliseconds,
/// a timestamp) and would run without end.
pub const MAX_SIMULATED_S: f64 = 3600.0;

/// The frames of an experiment: one value, so that a duration, an interval
/// and a list of times can never disagree.
#[derive(Debug, Clone, PartialEq)]
pub enum Frames {
    /// Every `interval_s` from 0 on the clock until the release plus
    /// `duration_s` (the paper's drop: every 0.04 s for 2 s).
    Every { interval_s: f64, duration_s: f64 },
    /// A film's own times \[s\], increasing from 0 on: 30 fps, jittered,
    /// with dropped frames. The simulated duration runs from the release
    /// to the last. `interval_s` is the film's typical interval (the
    /// median, [`Frames::film`]), which the automatic fixed step divides;
    /// a release group's shared simulation, at other times, keeps its
    /// film's, so that it takes its members' step.
    At { times_s: Vec<f64>, interval_s: f64 },
}

impl Frames {
    /// The paper's: every 0.04 s for `duration_s`.
    pub fn every(interval_s: f64, duration_s: f64) -> Self {
        Frames::Every {
            interval_s,
            duration_s,
        }
    }

    /// A film's frames at `times_s`.
    pub fn film(times_s: Vec<f64>) -> Self {
        let interval_s = median_interval_s(&times_s).unwrap_or(f64::NAN);
        Frames::At {
            times_s,
            interval_s,
        }
    }

    /// The times on the clock \[s\], for a release at `release_time_s`.
    pub fn times_s(&self, release_time_s: f64) -> Vec<f64> {
        match self {
            Frames::At { times_s, .. } => times_s.clone(),
            Frames::Every {
                interval_s,
                duration_s,
            } => {
                let last = release_time_s + duration_s;
                let count = (last / interval_s + 1e-9).floor() as usize;
                (0..=count).map(|p| p as f64 * interval_s).collect()
            }
        }
    }

    /// The simulated time from the release to the last frame \[s\].
    pub fn duration_s(&self, release_time_s: f64) -> f64 {
        match self {
            Frames::Every { duration_s, .. } => *duration_s,
            Frames::At { times_s, .. } => times_s.last().map_or(0.0, |last| last - release_time_s),
        }
    }

    /// The interval between frames \[s\]: a film's typical one (the median,
    /// which a jittered clock or a dropped frame leaves alone). The
    /// automatic fixed step divides it.
    pub fn interval_s(&self) -> f64 {
        match self {
            Frames::Every { interval_s, .. } | Frames::At { interval_s, .. } => *interval_s,
        }
    }

    /// The frames when the release moves to `release_time_s` from
    /// `from_s`: a film's times stay; frames every interval keep their
    /// last frame, so that a release axis looks at one film.
    pub fn with_release_moved(self, from_s: f64, release_time_s: f64) -> Self {
        match self {
            Frames::Every {
                interval_s,
                duration_s,
            } => Frames::Every {
                interval_s,
                duration_s: from_s + duration_s - release_time_s,
            },
            at => at,
        }
    }

    /// Checks the frames for a release at `release_time_s`.
    pub fn validate(&self, release_time_s: f64) -> Result<(), InputError> {
        match self {
            Frames::Every {
                interval_s,
                duration_s,
            } => {
                crate::error::require_positive("frame_interval_s", *interval_s)?;
                if *interval_s < MIN_FRAME_INTERVAL_S {
                    return Err(InputError::new(
                        "frame_interval_s",
                        *interval_s,
                        format!(
                            "at least {MIN_FRAME_INTERVAL_S} s (a million frames a second): a frame interval in seconds"
                        ),
                    ));
                }
                crate::error::require_positive("duration_s", *duration_s)?;
                if *duration_s > MAX_SIMULATED_S {
                    return Err(InputError::number(
                        "duration_s",
                        *duration_s,
                        format!("at most {MAX_SIMULATED_S} s of motion: a duration in seconds"),
                    ));
                }
                // Checked before a track of that many frames is allocated.
                if *duration_s / *interval_s > MAX_FRAMES as f64 {
                    return Err(InputError::new(
                        "duration_s",
                        *duration_s,
                        format!(
                            "at most {MAX_FRAMES} frames: at frame_interval_s = {interval_s} s, a duration up to {} s (or a longer frame interval)",
                            MAX_FRAMES as f64 * interval_s
                        ),
                    ));
                }
                if !whole_multiple(*duration_s, *interval_s) {
                    return Err(InputError::new(
                        "duration_s",
                        *duration_s,
                        format!("a whole multiple of the frame interval {interval_s} s"),
                    ));
                }
                Ok(())
            }
            Frames::At {
                times_s: times,
                interval_s,
            } => validate_film_times(times, *interval_s, release_time_s),
        }
    }
}

/// [`Frames::validate`] of a film's frames: at least two, increasing,
/// finite from 0 s on, the release before the last, and at most
/// [`MAX_SIMULATED_S`] of motion.
fn validate_film_times(
    times: &[f64],
    interval_s: f64,
    release_time_s: f64,
) -> Result<(), InputError> {
    let Some(&last) = times.last() else {
        return Err(InputError::new(
            "frame_times_s",
            "[]",
            "at least two frames",
        ));
    };
    if let Some(w) = times
        .windows(2)
        .find(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
    {
        return Err(InputError::new(
            "frame_times_s",
            format!("{} s after {} s", w[1], w[0]),
            "increasing times",
        ));
    }
    if !(times[0].is_finite() && times[0] >= 0.0 && last.is_finite()) {
        return Err(InputError::new(
            "frame_times_s",
            times[0],
            "finite times from 0 s on",
        ));
    }
    if times.len() < 2 {
        return Err(InputError::new(
            "frame_times_s",
            format!("one frame, at {last} s"),
            "at least two frames",
        ));
    }
    crate::error::require_positive("frame_interval_s", interval_s)?;
    if last - release_time_s.max(times[0]) > MAX_SIMULATED_S {
        return Err(InputError::new(
            "frame_times_s",
            format!(
                "{} s to {} s",
                crate::error::number(times[0]),
                crate::error::number(last)
            ),
            format!(
                "at most {MAX_SIMULATED_S} s of motion from the release ({} s) to the last frame: times in seconds ([camera] time_unit for a clock in ms or µs)",
                crate::error::number(release_time_s)
            ),
        ));
    }
    if release_time_s >= last {
        return Err(InputError::new(
            "release_time_s",
            release_time_s,
            format!("a time before the last frame, {last} s"),
        ));
    }
    Ok(())
}

/// Whether `span_s` is a whole number (at least one) of `unit_s`, to the
/// rounding of decimal inputs.
pub(super) fn whole_multiple(span_s: f64, unit_s: f64) -> bool {
    let ratio = span_s / unit_s;
    (ratio - ratio.round()).abs() < 1e-9 * ratio.max(1.0) && ratio.round() >= 1.0
}

/// The typical interval of frames at `times` \[s\]: the median of their
/// intervals (a jittered clock, a dropped frame); None for one frame.
pub fn median_interval_s(times: &[f64]) -> Option<f64> {
    let mut intervals: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    intervals.sort_by(f64::total_cmp);
    intervals.get(intervals.len() / 2).copied()
}

/// The frames a config declares, each optional: the config that made a
/// film may say them, and `identify` then checks them against the film.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredFrames {
    pub duration_s: Option<f64>,
    pub frame_interval_s: Option<f64>,
    pub frame_times_s: Option<Vec<f64>>,
    /// Where they were written (the config's path), for messages.
    pub source: String,
}

impl DeclaredFrames {
    /// The frames they make, the rest from `default` (the experiment's):
    /// given times are the frames; otherwise an interval and a duration.
    /// A duration beside given times must be theirs less the release,
    /// which [`crate::scenario::Scenario::validate`] cannot see, so it is
    /// checked here.
    pub fn frames(&self, default: &Frames, release_time_s: f64) -> Result<Frames, InputError> {
        if let Some(times) = &self.frame_times_s {
            let frames = Frames::film(times.clone());
            if let Some(given) = self.frame_interval_s {
                let typical = frames.interval_s();
                if (given - typical).abs() > 0.01 * typical {
                    return Err(InputError::new(
                        "frame_interval_s",
                        given,
                        format!(
                            "the typical interval of frame_times_s, {typical} s (their median, to 1 %), or left out"
                        ),
                    ));
                }
            }
            if let Some(duration) = self.duration_s {
                let from_times = frames.duration_s(release_time_s);
                if (duration - from_times).abs() > 1e-9 * from_times.abs().max(1.0) {
                    return Err(InputError::new(
                        "duration_s",
                        duration,
                        format!("the last frame less the release, {from_times} s, or left out"),
                    ));
                }
            }
            return Ok(frames);
        }
        Ok(Frames::Every {
            interval_s: self.frame_interval_s.unwrap_or(default.interval_s()),
            duration_s: self
                .duration_s
                .unwrap_or(default.duration_s(release_time_s)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_every_interval_end_at_the_release_plus_the_duration() {
        let frames = Frames::every(0.04, 2.0);
        let times = frames.times_s(0.1);
        assert_eq!(times.len(), 53);
        assert!((times[52] - 2.08).abs() < 1e-12);
        assert_eq!(frames.duration_s(0.1), 2.0);
    }

    #[test]
    fn a_films_interval_is_its_median_and_its_duration_runs_from_the_release() {
        let frames = Frames::film(vec![1.0, 1.03, 1.06, 1.10, 1.13]);
        assert!((frames.interval_s() - 0.03).abs() < 1e-12);
        assert!((frames.duration_s(1.05) - 0.08).abs() < 1e-12);
        // A moved release keeps a film's frames, and an interval's last one.
        assert_eq!(frames.clone().with_release_moved(1.05, 1.1), frames);
        let every = Frames::every(0.04, 2.0).with_release_moved(0.0, 0.4);
        assert!((every.times_s(0.4).last().unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn declared_frames_agree_with_each_other_or_are_refused() {
        let default = Frames::every(0.04, 2.0);
        let times = vec![0.0, 0.5, 1.0];
        let declared = DeclaredFrames {
            duration_s: Some(0.75),
            frame_times_s: Some(times.clone()),
            ..Default::default()
        };
        assert_eq!(
            declared.frames(&default, 0.25).unwrap(),
            Frames::film(times.clone())
        );
        let disagreeing = DeclaredFrames {
            frame_interval_s: Some(0.04),
            frame_times_s: Some(times.clone()),
            ..Default::default()
        };
        let e = disagreeing.frames(&default, 0.0).unwrap_err();
        assert_eq!(e.field, "frame_interval_s");
        let e = declared.frames(&default, 0.0).unwrap_err();
        assert_eq!(e.field, "duration_s");
        let interval_only = DeclaredFrames {
            frame_interval_s: Some(0.05),
            ..Default::default()
        };
        assert_eq!(
            interval_only.frames(&default, 0.0).unwrap(),
            Frames::every(0.05, 2.0)
        );
    }

    #[test]
    fn a_clock_that_spans_more_than_an_hour_is_refused_before_it_runs() {
        // A timestamp clock starting far from 0 is a film of seconds.
        let stamped = Frames::film(vec![1e9, 1e9 + 0.04, 1e9 + 0.08]);
        stamped.validate(1e9).unwrap();
        // A film over 1e12 s is no drop: refused, naming the unit's key.
        let e = Frames::film(vec![0.0, 1e12]).validate(0.0).unwrap_err();
        assert_eq!(e.field, "frame_times_s");
        assert!(
            e.allowed.contains("time_unit") && e.value.contains("1e12"),
            "{e}"
        );
        let e = Frames::every(0.04, 7200.0).validate(0.0).unwrap_err();
        assert_eq!(e.field, "duration_s");
        Frames::every(0.04, 3600.0).validate(0.0).unwrap();
        for bad in [f64::NAN, f64::INFINITY, -0.04, 0.0] {
            assert_eq!(
                Frames::every(bad, 2.0).validate(0.0).unwrap_err().field,
                "frame_interval_s"
            );
        }
    }
}
