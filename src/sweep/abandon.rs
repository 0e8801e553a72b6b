//! Hopeless candidates: a candidate's J_e only grows frame by frame, so
//! once its partial sum passes a bound it can no longer come under, the
//! rest of its film cannot change what the run decides, and its
//! simulation stops there (docs/identify.md, "Hopeless candidates").
//!
//! **The bound.** A [`Pilot`], a coarse lattice of the whole grid (every
//! [`PILOT_STRIDE_DIVISOR`]-th value along each axis but n, and each
//! axis's last), is scored to the end first. Its best J_e at each n,
//! plus [`ABANDON_THRESHOLDS`] confidence thresholds, bounds that n's
//! candidates. The threshold is σ² χ²₂(95 %) with σ² = J_min / (N − 2)
//! from the pilot's best: the grid's best is no worse, so the pilot's σ²
//! and threshold are at least the run's. Every decision of the run lies
//! far below the bound: the best and each n's best (each at most its
//! pilot's best), the confidence region (one threshold above the best),
//! the candidates a first pass at the scouting tolerance re-runs (a
//! fraction of a threshold beyond it) and the surface figure, whose
//! colours stop at [`ABANDON_THRESHOLDS`].
//!
//! **Same answers however the work is cut.** The pilot is the whole
//! grid's, not a shard's or a chunk's, and it is scored before any bound
//! is used, so a row is abandoned, and where, the same way in a single
//! run, a shard and a resumed run. Every engine abandons, the CPU's
//! solvers and the GPU's stages alike (step_io.wgsl's `abandons`), each
//! judging the bound in its own arithmetic.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::{CONFIDENCE_LEVEL, Candidate, CandidateResult, Grid, Study, chi2_quantile, run};
use crate::engine::{Engine, RunHooks};
use crate::scenario::batch::BatchError;
use crate::status::RunStatus;

/// How far above its n's pilot best a candidate is abandoned, in
/// confidence thresholds.
pub const ABANDON_THRESHOLDS: f64 = 100.0;

/// A further threshold for the first pass's tolerance: at the scouting
/// tolerance J_e moves by about a fifth of a threshold
/// (`accuracy::SCOUT_TOLERANCE_M`), the pilot's best as much as any row.
pub const SCOUTING_MARGIN_THRESHOLDS: f64 = 1.0;

/// The pilot takes about this many values of each axis but n.
pub const PILOT_STRIDE_DIVISOR: usize = 5;

/// Each n's bound above which its candidates are abandoned \[m²\].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbandonBounds {
    /// The pilot's best J_e at each n plus the margin \[m²\]; an n whose
    /// pilot rows all diverged has none (its candidates run to the end).
    pub per_elements: BTreeMap<usize, f64>,
    /// The pilot's threshold σ² χ²₂ \[m²\].
    pub threshold_m2: f64,
    /// The pilot's rows.
    pub pilot: usize,
    /// The pilot's scored rows, (n, D, C_D, J_e), sorted by n, D, C_D: what a
    /// candidate's J_e is expected to be near ([`AbandonBounds::expected_m2`]),
    /// by which a batch is ordered so that the simulations likely to be
    /// abandoned share their workgroups and leave together. Scheduling
    /// only: no row's numbers depend on it.
    #[serde(default)]
    pub pilot_rows: Vec<(usize, f64, f64, f64)>,
}

impl AbandonBounds {
    /// The bound of `candidate`'s n (a pilot row itself runs to the end,
    /// without one).
    pub fn of(&self, candidate: &Candidate) -> Option<f64> {
        self.per_elements.get(&candidate.elements).copied()
    }

    /// The bounds the pilot's `results` set, over `observations` compared
    /// coordinates; None when no pilot row has a J_e.
    pub fn from_pilot(results: &[CandidateResult], observations: usize) -> Option<Self> {
        let mut best: BTreeMap<usize, f64> = BTreeMap::new();
        for r in results.iter().filter(|r| r.status.is_ok()) {
            let Some(j) = r.j_e_m2 else { continue };
            let entry = best.entry(r.candidate.elements).or_insert(j);
            *entry = entry.min(j);
        }
        let j_min = best.values().copied().fold(f64::INFINITY, f64::min);
        if !j_min.is_finite() {
            return None;
        }
        let sigma2 = j_min / observations.saturating_sub(2).max(1) as f64;
        let threshold_m2 = sigma2 * chi2_quantile(2, CONFIDENCE_LEVEL);
        let margin = (ABANDON_THRESHOLDS + SCOUTING_MARGIN_THRESHOLDS) * threshold_m2;
        let mut pilot_rows: Vec<(usize, f64, f64, f64)> = results
            .iter()
            .filter(|r| r.status.is_ok())
            .filter_map(|r| {
                let c = &r.candidate;
                Some((c.elements, c.damping_pa_s, c.drag_coefficient, r.j_e_m2?))
            })
            .collect();
        pilot_rows.sort_by(|a, b| {
            (a.0, a.1, a.2)
                .partial_cmp(&(b.0, b.1, b.2))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        Some(Self {
            per_elements: best.into_iter().map(|(n, j)| (n, j + margin)).collect(),
            threshold_m2,
            pilot: results.len(),
            pilot_rows,
        })
    }

    /// The J_e of the pilot row nearest `candidate` at its n (D and C_D
    /// each scaled by the pilot's span): about where its own lies.
    pub fn expected_m2(&self, candidate: &Candidate) -> Option<f64> {
        // The rows are sorted by n (`from_pilot`): the candidate's n's rows
        // by two binary searches, not a scan of every n's for each candidate.
        let n = candidate.elements;
        let first = self.pilot_rows.partition_point(|r| r.0 < n);
        let end = self.pilot_rows.partition_point(|r| r.0 <= n);
        let rows = self.pilot_rows[first..end.max(first)].iter();
        let span = |f: fn(&(usize, f64, f64, f64)) -> f64| {
            let (lo, hi) = rows
                .clone()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(v), h.max(v))
                });
            if hi > lo { hi - lo } else { 1.0 }
        };
        let (d_span, c_span) = (span(|r| r.1), span(|r| r.2));
        let distance = |r: &&(usize, f64, f64, f64)| {
            ((r.1 - candidate.damping_pa_s) / d_span).powi(2)
                + ((r.2 - candidate.drag_coefficient) / c_span).powi(2)
        };
        rows.clone()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .map(|r| r.3)
    }

    /// The order in which to run `candidates` (positions into it): by n,
    /// then by their expected J_e, so that neighbours in a workgroup or a
    /// SIMD group end together.
    pub fn schedule(&self, candidates: &[Candidate]) -> Vec<usize> {
        let mut order: Vec<(usize, f64, usize)> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.elements, self.expected_m2(c).unwrap_or(f64::INFINITY), i))
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        order.into_iter().map(|(_, _, i)| i).collect()
    }
}

/// The pilot: positions in a grid's candidates' order, at each n every
/// `len / PILOT_STRIDE_DIVISOR`-th value (rounded up) of each other axis
/// from its first, and its last.
pub struct Pilot {
    positions: HashSet<usize>,
}

/// `todo` (positions still to run) cut into chunks of `size`, made as
/// they are taken (a grid of millions takes no memory for them); with a
/// `pilot`, its rows first, and how many chunks they make (after them, the
/// bounds are known).
pub fn chunks<'a>(
    pilot: Option<&'a Pilot>,
    todo: &'a [usize],
    size: usize,
) -> (Box<dyn Iterator<Item = Vec<usize>> + 'a>, Option<usize>) {
    let Some(pilot) = pilot else {
        return (Box::new(todo.chunks(size).map(<[usize]>::to_vec)), None);
    };
    let in_pilot = |i: &usize| pilot.positions.contains(i);
    let first: Vec<usize> = todo.iter().copied().filter(in_pilot).collect();
    let first: Vec<Vec<usize>> = first.chunks(size).map(<[usize]>::to_vec).collect();
    let pilot_chunks = first.len();
    let mut rest = todo.iter().copied().filter(move |i| !in_pilot(i));
    let rest = std::iter::from_fn(move || {
        let chunk: Vec<usize> = rest.by_ref().take(size).collect();
        (!chunk.is_empty()).then_some(chunk)
    });
    (Box::new(first.into_iter().chain(rest)), Some(pilot_chunks))
}

/// The engine, grid and study a pilot runs on, and the cancel flag.
pub type PilotRun<'a> = (&'a Engine, &'a Grid, Study<'a>, Option<&'a AtomicBool>);

impl Pilot {
    pub fn of(grid: &Grid) -> Self {
        let lengths: Vec<usize> = grid.axes().iter().map(|a| a.values.len()).collect();
        let on_lattice = |i: usize| {
            let mut rest = i;
            lengths.iter().enumerate().rev().all(|(k, &len)| {
                let position = rest % len;
                rest /= len;
                let stride = len.div_ceil(PILOT_STRIDE_DIVISOR).max(1);
                k == 0 || position.is_multiple_of(stride) || position + 1 == len
            })
        };
        Self {
            positions: (0..grid.len()).filter(|&i| on_lattice(i)).collect(),
        }
    }

    /// The bounds the pilot sets, from its rows among `results` (resumed,
    /// or just run) and, where a shard lacks some, from those run here to
    /// the end and kept only for the bound. None when no pilot row has a
    /// J_e, or when the run is stopped meanwhile (its next chunk then
    /// stops it).
    pub fn bounds(
        &self,
        (engine, grid, study, cancel): PilotRun<'_>,
        results: &[CandidateResult],
        observations: usize,
    ) -> Result<Option<AbandonBounds>, BatchError> {
        let mut rows: Vec<CandidateResult> = Vec::with_capacity(self.positions.len());
        let mut have = HashSet::new();
        for r in results {
            if let Some(i) = grid
                .index_of(&r.candidate)
                .filter(|i| self.positions.contains(i))
            {
                rows.push(r.clone());
                have.insert(i);
            }
        }
        let mut elsewhere: Vec<usize> = self.positions.difference(&have).copied().collect();
        elsewhere.sort_unstable();
        if !elsewhere.is_empty() {
            let candidates: Vec<Candidate> = elsewhere.iter().map(|&i| grid.candidate(i)).collect();
            let hooks = RunHooks {
                progress: None,
                cancel,
            };
            let scored = run(engine, &candidates, study, grid.release_axis(), None, hooks)?;
            if scored.iter().any(|r| r.status == RunStatus::Cancelled) {
                return Ok(None);
            }
            rows.extend(scored);
        }
        Ok(AbandonBounds::from_pilot(&rows, observations))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pilot_is_a_lattice_with_each_axis_ends_at_every_n() {
        let grid = Grid::parse("10,20", "0:1000:100", "0.6,0.7,0.8").unwrap();
        let mut pilot: Vec<usize> = Pilot::of(&grid).positions.into_iter().collect();
        pilot.sort_unstable();
        let candidates: Vec<Candidate> = pilot.iter().map(|&i| grid.candidate(i)).collect();
        // D: 11 values, stride 3: 0, 300, 600, 900 and 1000; C_D: 3 values,
        // stride 1: all.
        assert_eq!(pilot.len(), 2 * 5 * 3);
        for n in [10, 20] {
            let ds: Vec<f64> = candidates
                .iter()
                .filter(|c| c.elements == n && c.drag_coefficient == 0.7)
                .map(|c| c.damping_pa_s)
                .collect();
            assert_eq!(ds, [0.0, 300.0, 600.0, 900.0, 1000.0]);
        }
    }

    #[test]
    fn each_n_is_bounded_by_its_own_pilot_best_plus_the_margin() {
        let row = |n, j: Option<f64>, status| CandidateResult {
            candidate: Candidate::new(n, 0.0, 0.7),
            j_e_m2: j,
            status,
            step_s: None,
            steps: 0,
            gpu_layout: None,
            tolerance_m: None,
            implicit_method: None,
        };
        let results = [
            row(10, Some(2.0), RunStatus::Ok),
            row(10, Some(1.0), RunStatus::Ok),
            row(20, Some(4.0), RunStatus::Ok),
            row(30, None, RunStatus::diverged("blew up")),
        ];
        let bounds = AbandonBounds::from_pilot(&results, 102).unwrap();
        let threshold = 0.01 * chi2_quantile(2, CONFIDENCE_LEVEL);
        assert!((bounds.threshold_m2 - threshold).abs() < 1e-15);
        let margin = 101.0 * threshold;
        assert_eq!(bounds.of(&Candidate::new(10, 5.0, 0.8)), Some(1.0 + margin));
        assert_eq!(bounds.of(&Candidate::new(20, 5.0, 0.8)), Some(4.0 + margin));
        assert_eq!(bounds.of(&Candidate::new(30, 5.0, 0.8)), None);
        let diverged = [row(10, None, RunStatus::diverged("x"))];
        assert!(AbandonBounds::from_pilot(&diverged, 102).is_none());
    }

    #[test]
    fn a_batch_is_scheduled_by_n_and_the_nearest_pilot_rows_j_e() {
        let row = |n, d, cd, j| CandidateResult {
            candidate: Candidate::new(n, d, cd),
            j_e_m2: Some(j),
            status: RunStatus::Ok,
            step_s: None,
            steps: 0,
            gpu_layout: None,
            tolerance_m: None,
            implicit_method: None,
        };
        // At n = 10, low D and C_D fit; far from them does not.
        let pilot = [
            row(10, 4000.0, 0.9, 9.0),
            row(10, 0.0, 0.6, 1.0),
            row(10, 4000.0, 0.6, 5.0),
            row(20, 0.0, 0.6, 0.5),
        ];
        let bounds = AbandonBounds::from_pilot(&pilot, 102).unwrap();
        assert_eq!(bounds.pilot_rows.len(), 4);
        assert_eq!(
            bounds.expected_m2(&Candidate::new(10, 3500.0, 0.85)),
            Some(9.0)
        );
        assert_eq!(
            bounds.expected_m2(&Candidate::new(10, 500.0, 0.65)),
            Some(1.0)
        );
        assert_eq!(
            bounds.expected_m2(&Candidate::new(20, 9000.0, 0.9)),
            Some(0.5)
        );
        assert_eq!(bounds.expected_m2(&Candidate::new(30, 500.0, 0.65)), None);
        assert_eq!(bounds.expected_m2(&Candidate::new(5, 500.0, 0.65)), None);
        let batch = [
            Candidate::new(20, 4000.0, 0.9),
            Candidate::new(10, 3500.0, 0.85),
            Candidate::new(10, 3500.0, 0.65),
            Candidate::new(10, 500.0, 0.65),
        ];
        assert_eq!(bounds.schedule(&batch), [3, 2, 1, 0]);
    }
}
