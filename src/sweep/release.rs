//! A release-time axis only shifts the comparison: candidates that differ
//! in nothing but `release_time_s` simulate the same motion from the same
//! held start, each compared at the file's frames less its own release. So
//! such a group shares one simulation, sampled at every model time any
//! value of the grid's release axis compares ([`whole_group`]: however a
//! chunk, a shard or a re-run cuts the group, so that a row's numbers do
//! not depend on the cut), and each member's J_e is scored from it.
//!
//! Sampling is the solvers' own at any time (a fixed step's expansion
//! within the step, the reference solver landing on it), so a member's
//! positions are those of its own simulation: to the last bit on a fixed
//! step (the step does not depend on the frames), to the reference
//! solver's tolerance on it (more targets, other step sizes). A member's
//! `steps` in results.parquet are the shared simulation's: to the latest
//! model time any member compares.

use std::collections::HashMap;

use super::{Candidate, Parameter};
use crate::model::TetherParams;
use crate::objective::frame_error;
use crate::scenario::{Frames, Scenario};
use crate::track::MeasuredTrack;
use crate::track::Track;

/// `candidates` grouped by everything but the release time, each group in
/// the candidates' order, the groups in the order of their first member:
/// indices into `candidates`. Without a release axis every group is one.
pub fn group_by_release(candidates: &[Candidate]) -> Vec<Vec<usize>> {
    let key = |c: &Candidate| {
        let mut c = *c;
        if c.parameters.get(Parameter::ReleaseTimeS).is_some() {
            c.parameters.set(Parameter::ReleaseTimeS, 0.0);
        }
        format!("{c:?}")
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let g = *index.entry(key(c)).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

/// Model times closer than this \[s\] are one sample of a shared simulation:
/// one file time less two release values can differ in the last bits
/// (1.04 − 1.02 against 1.0 − 0.98), and a solver asked to land on both
/// took a step of 1e-17 s, which it reported as divergence.
const SAME_SAMPLE_S: f64 = 1e-9;

/// The frame of `times` (increasing) within [`SAME_SAMPLE_S`] of `time_s`.
fn sample_of(times: &[f64], time_s: f64) -> Option<usize> {
    let after = times.partition_point(|&t| t < time_s);
    [after.checked_sub(1), Some(after)]
        .into_iter()
        .flatten()
        .filter(|&f| f < times.len() && (times[f] - time_s).abs() <= SAME_SAMPLE_S)
        .min_by(|&a, &b| {
            (times[a] - time_s)
                .abs()
                .total_cmp(&(times[b] - time_s).abs())
        })
}

/// A group's members as its shared simulation takes them: one per value
/// of the grid's release axis (`axis`) and of the members' own, so that the
/// simulation, and every member's J_e, are the same however a chunk, a
/// shard or a re-run cuts the group; the members alone without an axis.
pub fn whole_group(members: &[Candidate], axis: Option<&[f64]>) -> Vec<Candidate> {
    let Some(axis) = axis else {
        return members.to_vec();
    };
    let mut releases: Vec<f64> = axis
        .iter()
        .copied()
        .chain(
            members
                .iter()
                .filter_map(|m| m.parameters.get(Parameter::ReleaseTimeS)),
        )
        .collect();
    releases.sort_by(f64::total_cmp);
    releases.dedup();
    releases
        .into_iter()
        .map(|release| {
            let mut c = members[0];
            c.parameters.set(Parameter::ReleaseTimeS, release);
            c
        })
        .collect()
}

/// The simulation a group shares: its first member's tether and experiment,
/// released at 0 on a clock whose frames are 0 and every model time after
/// the release that any member compares.
pub fn shared_experiment(
    members: &[Candidate],
    base: &TetherParams,
    scenario: &Scenario,
) -> (TetherParams, Scenario) {
    let (tether, mut shared) = members[0].experiment(base, scenario);
    let mut times: Vec<f64> = members
        .iter()
        .flat_map(|m| {
            let (_, own) = m.experiment(base, scenario);
            own.compared_frame_times_s()
                .into_iter()
                .map(move |t| own.model_time_s(t))
                .filter(|&t| t > 0.0)
                .collect::<Vec<_>>()
        })
        .collect();
    times.push(0.0);
    times.sort_by(f64::total_cmp);
    times.dedup_by(|later, earlier| *later - *earlier <= SAME_SAMPLE_S);
    if let Some(drop) = shared.as_drop_mut() {
        drop.release_time_s = 0.0;
    }
    shared.frames = Frames::At {
        times_s: times,
        interval_s: scenario.frame_interval_s(),
    };
    (tether, shared)
}

/// J_e of `member` (docs/model.md §5) from the track of its group's shared
/// simulation ([`shared_experiment`]): each compared frame at its model
/// time, the held shape (the track's frame at 0) before the release.
pub fn member_error(
    member: &Candidate,
    base: &TetherParams,
    scenario: &Scenario,
    measured: &MeasuredTrack,
    shared: &Track,
) -> f64 {
    let (_, own) = member.experiment(base, scenario);
    let markers = shared.markers();
    own.compared_frame_times_s()
        .into_iter()
        .map(|t| {
            let f = sample_of(&shared.times_s, own.model_time_s(t))
                .expect("the shared simulation samples every member's model times");
            frame_error(measured, t, &shared.positions_m[f * markers..][..markers])
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{SolverSettings, simulate};
    use crate::solver::SolverKind;
    use crate::sweep::Grid;

    /// Each member's J_e from the group's shared simulation and from its
    /// own, with `settings`: (member, shared, alone).
    fn shared_and_alone(
        members: &[Candidate],
        base: &TetherParams,
        scenario: &Scenario,
        measured: &MeasuredTrack,
        settings: &SolverSettings,
    ) -> Vec<(Candidate, f64, f64)> {
        let (tether, shared) = shared_experiment(members, base, scenario);
        let track = simulate(&shared, &tether, settings).unwrap().track;
        members
            .iter()
            .map(|m| {
                let (own_tether, own) = m.experiment(base, scenario);
                let alone = simulate(&own, &own_tether, settings).unwrap();
                let j_alone = crate::objective::identification_error(measured, &alone.track);
                let j_shared = member_error(m, base, scenario, measured, &track);
                assert!(j_alone > 1e-8, "{m:?}: {j_alone}");
                (*m, j_shared, j_alone)
            })
            .collect()
    }

    #[test]
    fn a_release_group_shares_one_simulation_and_scores_each_member_as_its_own() {
        let grid = Grid::parse("4", "500,1000", "0.8")
            .and_then(|g| g.with_axis("release_time_s", "0,0.013,0.03"))
            .unwrap();
        let candidates = grid.candidates();
        let groups = group_by_release(&candidates);
        assert_eq!(groups, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        let base = TetherParams::default();
        let times: Vec<f64> = (0..=6).map(|p| p as f64 / 30.0).collect();
        let scenario = Scenario::film(times, 0.0, base.length_m);
        // Measured: another candidate's drop, so that J_e is not zero.
        let (truth_tether, truth_scenario) =
            Candidate::new(4, 700.0, 0.5).experiment(&base, &scenario);
        let settings = SolverSettings {
            kind: SolverKind::SemiImplicit,
            ..Default::default()
        };
        let truth = simulate(&truth_scenario, &truth_tether, &settings).unwrap();
        let measured = MeasuredTrack::from_track(&truth.track);
        let members: Vec<Candidate> = groups[1].iter().map(|&i| candidates[i]).collect();
        for (m, j_shared, j_alone) in
            shared_and_alone(&members, &base, &scenario, &measured, &settings)
        {
            // The same fixed step and the same sampling: the same bits.
            assert_eq!(j_shared, j_alone, "{m:?}");
        }
    }

    /// A clock that starts at 1 s and releases around it: 1.14 − 1.0 and
    /// 1.16 − 1.02 differ in the last bits. As two samples, the reference
    /// solver had to step 1e-16 s between them and every member
    /// "diverged"; as one, each member scores as its own simulation does.
    #[test]
    fn model_times_that_differ_in_the_last_bits_are_one_sample() {
        let grid = Grid::parse("4", "1000", "0.8")
            .and_then(|g| g.with_axis("release_time_s", "0.98,1,1.02"))
            .unwrap();
        let members = grid.candidates();
        let base = TetherParams::default();
        let times: Vec<f64> = (0..=20)
            .map(|k| format!("{:.2}", 1.0 + 0.04 * k as f64).parse().unwrap())
            .collect();
        let scenario = Scenario::film(times, 0.0, base.length_m);
        let (_, shared) = shared_experiment(&members, &base, &scenario);
        let samples = shared.frame_times_s();
        assert!(
            samples.windows(2).all(|w| w[1] - w[0] > SAME_SAMPLE_S),
            "{samples:?}"
        );
        let settings = SolverSettings::reference();
        // Measured: another drop released at 1 s, on the file's clock.
        let (truth_tether, truth) = members[1].experiment(&base, &scenario);
        let truth_tether = TetherParams {
            damping_pa_s: 700.0,
            ..truth_tether
        };
        let measured =
            MeasuredTrack::from_track(&simulate(&truth, &truth_tether, &settings).unwrap().track);
        for (m, j_shared, j_alone) in
            shared_and_alone(&members, &base, &scenario, &measured, &settings)
        {
            // Within the reference solver's tolerance of the lone run (its
            // steps differ: more targets): positions within 1e-8 m move
            // J_e by at most 2 √(J_e N) 1e-8 over N compared coordinates.
            let n = 2.0 * 20.0 * 11.0;
            let allowed = 2.0 * (j_alone * n).sqrt() * 1e-8;
            assert!(
                (j_shared - j_alone).abs() < allowed,
                "{m:?}: {j_shared} vs {j_alone} (allowed {allowed:.1e})"
            );
        }
    }
}
