//! Shards: a grid split into N interleaved slices of its release groups
//! (the candidates that share one simulation, `sweep::release`; one
//! candidate each without a release-time axis): group g belongs to shard
//! g mod N, so that every shard gets a fair share of cheap and expensive
//! candidates and no shard simulates what another one does. One shard per
//! job of a scheduler's array (Slurm's `--array`), each writing
//! `DIR/shard=K/part.parquet`; together they form a Hive-partitioned
//! dataset.

use std::collections::HashSet;

use serde::Serialize;

use super::grid::{Candidate, Grid};
use crate::error::InputError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// K, from 0.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with 0 ≤ K < N.
    pub fn parse(text: &str) -> Result<Self, InputError> {
        let err = || {
            InputError::new(
                "shard",
                format!("'{text}'"),
                "K/N with whole numbers 0 <= K < N",
            )
        };
        let (k, n) = text.split_once('/').ok_or_else(err)?;
        let index: usize = k.trim().parse().map_err(|_| err())?;
        let count: usize = n.trim().parse().map_err(|_| err())?;
        if count == 0 || index >= count {
            return Err(err());
        }
        Ok(Self { index, count })
    }

    /// The shard of a Slurm array job: K = SLURM_ARRAY_TASK_ID −
    /// SLURM_ARRAY_TASK_MIN (0 when unset), N = SLURM_ARRAY_TASK_COUNT.
    /// None outside an array job. `var` reads the environment.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, InputError> {
        let (Some(id), Some(count)) = (var("SLURM_ARRAY_TASK_ID"), var("SLURM_ARRAY_TASK_COUNT"))
        else {
            return Ok(None);
        };
        let number = |name: &str, value: &str| {
            value.trim().parse::<usize>().map_err(|_| {
                InputError::new(name, format!("'{value}'"), "a whole number (Slurm sets it)")
            })
        };
        let id = number("SLURM_ARRAY_TASK_ID", &id)?;
        let min = match var("SLURM_ARRAY_TASK_MIN") {
            Some(m) => number("SLURM_ARRAY_TASK_MIN", &m)?,
            None => 0,
        };
        let count = number("SLURM_ARRAY_TASK_COUNT", &count)?;
        let max = min + count.saturating_sub(1);
        let index = id.checked_sub(min).filter(|&k| k < count).ok_or_else(|| {
            InputError::new(
                "SLURM_ARRAY_TASK_ID",
                id,
                format!(
                    "an id from SLURM_ARRAY_TASK_MIN = {min} to {max} (one job per shard: --array={min}-{max})"
                ),
            )
        })?;
        Ok(Some(Self { index, count }))
    }

    /// Whether release group `group` (grid position ÷
    /// [`Grid::release_run`](super::Grid::release_run)) belongs to this
    /// shard ([`Selection`] walks a shard's groups).
    pub fn contains(&self, group: usize) -> bool {
        group % self.count == self.index
    }

    /// The Hive partition directory of this shard's part: `shard=K`.
    pub fn directory(&self) -> String {
        format!("shard={}", self.index)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The candidates a run makes: a grid's positions in one shard (all of
/// them without one), less those a resumed run found done. They are made
/// from their positions as they are run, so that a grid of millions costs
/// no memory before its first chunk.
#[derive(Debug, Clone)]
pub struct Selection {
    grid: Grid,
    shard: Option<Shard>,
    done: HashSet<usize>,
}

impl Selection {
    /// `shard`'s candidates of `grid` (all without one), less the positions
    /// in `done`.
    pub fn new(grid: Grid, shard: Option<Shard>, done: HashSet<usize>) -> Self {
        Self { grid, shard, done }
    }

    /// Candidates in a release group.
    fn run(&self) -> usize {
        self.grid.release_run()
    }

    /// The shard's first release group and the stride between its groups.
    fn stride(&self) -> (usize, usize) {
        self.shard.map_or((0, 1), |s| (s.index, s.count))
    }

    /// The release groups of the shard, in the grid's order.
    fn groups(&self) -> std::iter::StepBy<std::ops::Range<usize>> {
        let (first, step) = self.stride();
        (first..self.grid.len() / self.run()).step_by(step)
    }

    /// The shard's candidates, done or not.
    pub fn selected(&self) -> usize {
        self.groups().len() * self.run()
    }

    /// Candidates still to run.
    pub fn len(&self) -> usize {
        self.selected() - self.done.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The grid's mean n: the mean tether size of the candidates (exact
    /// for the whole grid, to a release group for a shard's share).
    pub fn mean_elements(&self) -> f64 {
        let n = self.grid.elements();
        n.iter().sum::<usize>() as f64 / n.len().max(1) as f64
    }

    /// The grid positions still to run, in the grid's order.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        let run = self.run();
        self.groups()
            .flat_map(move |g| g * run..(g + 1) * run)
            .filter(|i| !self.done.contains(i))
    }

    /// The candidates still to run, in the grid's order.
    pub fn candidates(&self) -> impl Iterator<Item = Candidate> + '_ {
        self.positions().map(|i| self.grid.candidate(i))
    }

    /// Up to `at_most` of the shard's release groups (each its candidates),
    /// spread evenly over its order: the work the engine choice weighs,
    /// which for a grid of millions is a sample. Returns the sample and how
    /// many groups the shard has.
    pub fn sample_groups(&self, at_most: usize) -> (Vec<Vec<Candidate>>, usize) {
        let count = self.groups().len();
        let take = at_most.min(count);
        let (first, step) = self.stride();
        let run = self.run();
        let sample = (0..take)
            .map(|k| first + step * ((2 * k + 1) * count / (2 * take)))
            .map(|g| {
                (g * run..(g + 1) * run)
                    .map(|i| self.grid.candidate(i))
                    .collect()
            })
            .collect();
        (sample, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_grid() {
        let shards: Vec<Shard> = (0..3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        for i in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.contains(i)).count(), 1);
        }
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert_eq!(Shard::parse(bad).unwrap_err().field, "shard", "{bad}");
        }
    }

    #[test]
    fn a_selection_makes_its_shards_candidates_by_whole_release_groups() {
        let grid = Grid::parse("3,4", "0,1000", "0.8")
            .and_then(|g| g.with_axis("release_time_s", "0,0.01,0.02"))
            .unwrap();
        let all = grid.candidates();
        let mut union = Vec::new();
        for index in 0..3 {
            let shard = Shard { index, count: 3 };
            let selection = Selection::new(grid.clone(), Some(shard), HashSet::new());
            let positions: Vec<usize> = selection.positions().collect();
            assert_eq!(positions.len(), selection.selected());
            // Whole groups of three: a release group is never split.
            for group in positions.chunks(3) {
                assert_eq!(group[0] % 3, 0);
                assert_eq!(group, [group[0], group[0] + 1, group[0] + 2]);
                assert!(shard.contains(group[0] / 3));
            }
            let made: Vec<Candidate> = selection.candidates().collect();
            let expected: Vec<Candidate> = positions.iter().map(|&i| all[i]).collect();
            assert_eq!(made, expected);
            union.extend(positions);
        }
        union.sort();
        assert_eq!(union, (0..grid.len()).collect::<Vec<_>>());

        // Resumed: what is done is left out, and counted.
        let selection = Selection::new(grid.clone(), None, HashSet::from([0, 5, 11]));
        assert_eq!(selection.selected(), 12);
        assert_eq!(selection.len(), 9);
        assert_eq!(selection.positions().count(), 9);
        assert!(selection.positions().all(|i| ![0, 5, 11].contains(&i)));

        // A sample spread over the order, whole groups.
        let (sample, groups) = selection.sample_groups(2);
        assert_eq!(groups, 4);
        assert_eq!(sample, vec![all[3..6].to_vec(), all[9..12].to_vec()]);
        let (sample, _) = selection.sample_groups(100);
        assert_eq!(sample.concat(), all);
    }

    /// docs/identify.md sizes a task's memory by this.
    #[test]
    fn a_result_held_for_the_summary_is_under_200_bytes() {
        let size = std::mem::size_of::<super::super::CandidateResult>();
        assert!(size < 200, "{size} bytes");
    }

    #[test]
    fn slurm_array_variables_give_the_shard() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Shard::from_slurm(env(&[])).unwrap(), None);
        assert_eq!(
            Shard::from_slurm(env(&[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ]))
            .unwrap(),
            Some(Shard { index: 2, count: 4 })
        );
        // --array=1-4: ids 1..4 are shards 0..3.
        assert_eq!(
            Shard::from_slurm(env(&[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ]))
            .unwrap(),
            Some(Shard { index: 3, count: 4 })
        );
        let e = Shard::from_slurm(env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]))
        .unwrap_err();
        assert_eq!(e.field, "SLURM_ARRAY_TASK_ID");
    }
}
