//! Swing-up design by genetic algorithm (docs/model.md §7) and by exhaustive search
//! over the whole chromosome space.
//!
//! The operators, all drawn from one ChaCha8 generator seeded by the user, so
//! that a seed fixes the whole run:
//! - generation 0: `population` chromosomes drawn uniformly;
//! - elitism: the best individual of a generation is copied unchanged into
//!   the next (individual 0), so the best fitness never gets worse;
//! - selection: tournaments of `tournament_size` individuals drawn with
//!   replacement; the fitter wins;
//! - crossover: with probability `crossover_rate`, one-point crossover of the
//!   two tournament winners at a uniformly drawn cut (child = first parent's
//!   bits above the cut, second's below); otherwise the first winner;
//! - mutation: every bit of a child flips with probability `mutation_rate`
//!   (default 1/bits: one flip per child on average).
//!
//! Fitness is J_a,min (lower is better); a diverged simulation ranks below
//! every finished one. Ties are broken by the smaller chromosome, so sorting
//! never depends on evaluation order. A chromosome is simulated once per run:
//! later occurrences reuse its evaluation.

pub mod coding;
pub mod confirm;
pub mod evaluate;

use std::collections::HashMap;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::InputError;
use crate::status::RunStatus;
pub use coding::GeneCoding;
pub use evaluate::{Evaluator, SwingupProblem};

/// The GA's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GaSettings {
    pub population: usize,
    pub generations: usize,
    pub seed: u64,
    pub tournament_size: usize,
    pub crossover_rate: f64,
    /// Per-bit flip probability; None: 1/bits.
    pub mutation_rate: Option<f64>,
}

impl Default for GaSettings {
    /// docs/model.md §7's population of 10; 30 generations (the paper converged
    /// after 17).
    fn default() -> Self {
        Self {
            population: 10,
            generations: 30,
            seed: 2010,
            tournament_size: 2,
            crossover_rate: 0.8,
            mutation_rate: None,
        }
    }
}

impl GaSettings {
    pub fn validate(&self) -> Result<(), InputError> {
        if self.population < 2 {
            return Err(InputError::new(
                "population",
                self.population,
                "at least 2 (one elite and one offspring)",
            ));
        }
        if self.generations < 1 {
            return Err(InputError::new(
                "generations",
                self.generations,
                "at least 1",
            ));
        }
        if self.tournament_size < 1 {
            return Err(InputError::new(
                "tournament_size",
                self.tournament_size,
                "at least 1",
            ));
        }
        let probability = |field: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(InputError::new(field, p, "a probability in [0, 1]"))
            }
        };
        probability("crossover_rate", self.crossover_rate)?;
        if let Some(p) = self.mutation_rate {
            probability("mutation_rate", p)?;
        }
        Ok(())
    }

    pub fn mutation_rate_for(&self, coding: &GeneCoding) -> f64 {
        self.mutation_rate.unwrap_or(1.0 / coding.bits() as f64)
    }
}

/// The score of one chromosome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// J_a,min \[m\]; None unless the simulation finished.
    pub j_a_min_m: Option<f64>,
    /// Time of J_a,min \[s\].
    pub t_at_min_s: Option<f64>,
    pub status: RunStatus,
}

impl Evaluation {
    /// The value the GA minimises: J_a,min, or +∞ without one.
    pub fn fitness(&self) -> f64 {
        self.j_a_min_m.unwrap_or(f64::INFINITY)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Individual {
    pub chromosome: u32,
    pub evaluation: Evaluation,
}

/// Orders individuals fittest first; ties by the smaller chromosome.
pub fn fitter(a: &Individual, b: &Individual) -> std::cmp::Ordering {
    a.evaluation
        .fitness()
        .total_cmp(&b.evaluation.fitness())
        .then(a.chromosome.cmp(&b.chromosome))
}

/// One generation as evaluated: individual 0 is the previous generation's
/// elite (from generation 1 on).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    pub index: usize,
    pub individuals: Vec<Individual>,
    /// Chromosomes simulated for this generation (not seen before).
    pub new_evaluations: usize,
}

impl Generation {
    pub fn best(&self) -> &Individual {
        self.individuals
            .iter()
            .min_by(|a, b| fitter(a, b))
            .expect("a generation has individuals")
    }

    /// Mean J_a,min of the finished individuals (None if none finished).
    pub fn mean_fitness(&self) -> Option<f64> {
        let finished: Vec<f64> = self
            .individuals
            .iter()
            .filter_map(|i| i.evaluation.j_a_min_m)
            .collect();
        (!finished.is_empty()).then(|| finished.iter().sum::<f64>() / finished.len() as f64)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaRun {
    pub generations: Vec<Generation>,
    pub best: Individual,
    /// The first generation in which `best` appeared.
    pub best_found_in: usize,
    /// Distinct chromosomes simulated.
    pub evaluations: usize,
    /// Stopped early because evaluations came back cancelled (Ctrl-C).
    pub cancelled: bool,
}

impl GaRun {
    /// The first generation `chromosome` appeared in, if any.
    pub fn found_in(&self, chromosome: u32) -> Option<usize> {
        self.generations
            .iter()
            .position(|g| g.individuals.iter().any(|i| i.chromosome == chromosome))
    }

    /// Every chromosome the run scored, once, with its score, in the order
    /// it was first scored.
    pub fn scored(&self) -> Vec<Individual> {
        let mut seen = std::collections::HashSet::new();
        self.generations
            .iter()
            .flat_map(|g| &g.individuals)
            .filter(|i| seen.insert(i.chromosome))
            .cloned()
            .collect()
    }
}

/// Runs the GA. `evaluate` scores a list of distinct, not yet seen
/// chromosomes (one batch per generation); `on_generation` sees each
/// generation as it completes. A generation with cancelled evaluations is
/// recorded and ends the run.
pub fn run<E, Err>(
    coding: &GeneCoding,
    settings: &GaSettings,
    mut evaluate: E,
    mut on_generation: impl FnMut(&Generation),
) -> Result<GaRun, Err>
where
    E: FnMut(&[u32]) -> Result<Vec<Evaluation>, Err>,
{
    let bits = coding.bits();
    let space = coding.space_size();
    let mutation_rate = settings.mutation_rate_for(coding);
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut seen: HashMap<u32, Evaluation> = HashMap::new();
    let mut population: Vec<u32> = (0..settings.population)
        .map(|_| rng.random_range(0..space) as u32)
        .collect();
    let mut generations: Vec<Generation> = Vec::new();
    let mut cancelled = false;
    for index in 0..settings.generations {
        let mut fresh: Vec<u32> = population
            .iter()
            .copied()
            .filter(|c| !seen.contains_key(c))
            .collect();
        fresh.sort_unstable();
        fresh.dedup();
        let scores = evaluate(&fresh)?;
        assert_eq!(scores.len(), fresh.len(), "one evaluation per chromosome");
        let mut this_round: HashMap<u32, Evaluation> = HashMap::new();
        for (&c, e) in fresh.iter().zip(scores) {
            if e.status == RunStatus::Cancelled {
                cancelled = true;
                this_round.insert(c, e);
            } else {
                seen.insert(c, e);
            }
        }
        let individuals: Vec<Individual> = population
            .iter()
            .map(|&chromosome| Individual {
                chromosome,
                evaluation: seen
                    .get(&chromosome)
                    .or_else(|| this_round.get(&chromosome))
                    .expect("evaluated above")
                    .clone(),
            })
            .collect();
        let generation = Generation {
            index,
            individuals,
            new_evaluations: fresh.len(),
        };
        on_generation(&generation);
        generations.push(generation);
        if cancelled || index + 1 == settings.generations {
            break;
        }
        population = next_population(
            &generations[index].individuals,
            settings,
            bits,
            mutation_rate,
            &mut rng,
        );
    }
    let best = generations
        .iter()
        .flat_map(|g| &g.individuals)
        .min_by(|a, b| fitter(a, b))
        .expect("at least one generation")
        .clone();
    let mut run = GaRun {
        generations,
        best,
        best_found_in: 0,
        evaluations: seen.len(),
        cancelled,
    };
    run.best_found_in = run
        .found_in(run.best.chromosome)
        .expect("best comes from a generation");
    Ok(run)
}

fn next_population(
    current: &[Individual],
    settings: &GaSettings,
    bits: u32,
    mutation_rate: f64,
    rng: &mut ChaCha8Rng,
) -> Vec<u32> {
    let elite = current
        .iter()
        .min_by(|a, b| fitter(a, b))
        .expect("non-empty population")
        .chromosome;
    let tournament = |rng: &mut ChaCha8Rng| {
        (0..settings.tournament_size)
            .map(|_| &current[rng.random_range(0..current.len())])
            .min_by(|a, b| fitter(a, b))
            .expect("tournament size ≥ 1")
            .chromosome
    };
    let mut next = vec![elite];
    while next.len() < settings.population {
        let first = tournament(rng);
        let second = tournament(rng);
        let mut child = first;
        if rng.random::<f64>() < settings.crossover_rate {
            let below_cut: u32 = rng.random_range(1..bits);
            let low_mask = (1u32 << below_cut) - 1;
            child = (first & !low_mask) | (second & low_mask);
        }
        for bit in 0..bits {
            if rng.random::<f64>() < mutation_rate {
                child ^= 1 << bit;
            }
        }
        next.push(child);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth synthetic fitness with its minimum at genes (20, 7, 13).
    fn bowl(coding: &GeneCoding) -> impl FnMut(&[u32]) -> Result<Vec<Evaluation>, ()> + '_ {
        move |chromosomes| {
            Ok(chromosomes
                .iter()
                .map(|&c| {
                    let g = coding.genes(c);
                    let d = (g[0] as f64 - 20.0).powi(2)
                        + (g[1] as f64 - 7.0).powi(2)
                        + (g[2] as f64 - 13.0).powi(2);
                    Evaluation {
                        j_a_min_m: Some(0.1 + d * 1e-3),
                        t_at_min_s: Some(1.0),
                        status: RunStatus::Ok,
                    }
                })
                .collect())
        }
    }

    #[test]
    fn same_seed_same_run_and_the_best_never_worsens() {
        let coding = GeneCoding::default();
        let settings = GaSettings {
            generations: 40,
            ..Default::default()
        };
        let a = run(&coding, &settings, bowl(&coding), |_| {}).unwrap();
        let b = run(&coding, &settings, bowl(&coding), |_| {}).unwrap();
        assert_eq!(a, b);
        let other = run(
            &coding,
            &GaSettings {
                seed: 7,
                ..settings
            },
            bowl(&coding),
            |_| {},
        )
        .unwrap();
        assert_ne!(a.generations[0], other.generations[0]);
        let bests: Vec<f64> = a
            .generations
            .iter()
            .map(|g| g.best().evaluation.fitness())
            .collect();
        assert!(bests.windows(2).all(|w| w[1] <= w[0]), "{bests:?}");
        // The elite is carried as individual 0.
        for w in a.generations.windows(2) {
            assert_eq!(w[1].individuals[0].chromosome, w[0].best().chromosome);
        }
        assert!(bests.last().unwrap() < &bests[0], "the GA made progress");
    }

    #[test]
    fn each_chromosome_is_evaluated_once() {
        let coding = GeneCoding {
            bits_per_gene: 2,
            ..Default::default()
        };
        let mut asked: Vec<u32> = Vec::new();
        let mut inner = bowl(&coding);
        let run = run(
            &coding,
            &GaSettings::default(),
            |c: &[u32]| {
                asked.extend_from_slice(c);
                inner(c)
            },
            |_| {},
        )
        .unwrap();
        let mut unique = asked.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), asked.len());
        assert_eq!(run.evaluations, asked.len());
        assert!(asked.len() <= 64);
    }

    #[test]
    fn diverged_individuals_rank_last() {
        let ok = Individual {
            chromosome: 9,
            evaluation: Evaluation {
                j_a_min_m: Some(0.6),
                t_at_min_s: Some(0.0),
                status: RunStatus::Ok,
            },
        };
        let diverged = Individual {
            chromosome: 1,
            evaluation: Evaluation {
                j_a_min_m: None,
                t_at_min_s: None,
                status: RunStatus::diverged("test"),
            },
        };
        assert_eq!(fitter(&ok, &diverged), std::cmp::Ordering::Less);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let bad = |s: GaSettings| s.validate().unwrap_err().field;
        let d = GaSettings::default();
        assert_eq!(bad(GaSettings { population: 0, ..d }), "population");
        assert_eq!(
            bad(GaSettings {
                generations: 0,
                ..d
            }),
            "generations"
        );
        assert_eq!(
            bad(GaSettings {
                mutation_rate: Some(1.5),
                ..d
            }),
            "mutation_rate"
        );
    }
}
