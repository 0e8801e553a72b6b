//! The chromosome of docs/model.md §7: three genes of `bits_per_gene` bits, gene i
//! mapped linearly onto the winch period T_i ∈ [period_min_s, period_max_s].

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::scenario::winch::{MAX_PERIOD_S, MIN_PERIOD_S};

/// Genes per chromosome: one per winch move.
pub const GENES: usize = 3;
/// At most 10 bits a gene, so a chromosome fits a u32 and an exhaustive
/// landscape stays countable (2^30 at the very most).
pub const MAX_BITS_PER_GENE: u32 = 10;

/// How a chromosome encodes (T1, T2, T3). The bit string is read gene 1
/// first: chromosome = x1·2^(2b) + x2·2^b + x3, so the written value of a
/// chromosome, in binary, is the paper's 15-bit string.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeneCoding {
    pub bits_per_gene: u32,
    pub period_min_s: f64,
    pub period_max_s: f64,
}

impl Default for GeneCoding {
    /// docs/model.md §7: 5 bits a gene, T ∈ [0.25, 1.0] s.
    fn default() -> Self {
        Self {
            bits_per_gene: 5,
            period_min_s: 0.25,
            period_max_s: 1.0,
        }
    }
}

impl GeneCoding {
    pub fn validate(&self) -> Result<(), InputError> {
        if !(1..=MAX_BITS_PER_GENE).contains(&self.bits_per_gene) {
            return Err(InputError::new(
                "bits_per_gene",
                self.bits_per_gene,
                format!("1..={MAX_BITS_PER_GENE}"),
            ));
        }
        for (field, value) in [
            ("period_min_s", self.period_min_s),
            ("period_max_s", self.period_max_s),
        ] {
            if !(MIN_PERIOD_S..=MAX_PERIOD_S).contains(&value) {
                return Err(InputError::new(
                    field,
                    value,
                    format!("a winch period between {MIN_PERIOD_S} and {MAX_PERIOD_S} s"),
                ));
            }
        }
        if self.period_max_s <= self.period_min_s {
            return Err(InputError::new(
                "period_max_s",
                self.period_max_s,
                format!("greater than period_min_s = {} s", self.period_min_s),
            ));
        }
        Ok(())
    }

    /// Bits in a chromosome.
    pub fn bits(&self) -> u32 {
        GENES as u32 * self.bits_per_gene
    }

    /// Number of distinct chromosomes, 2^bits.
    pub fn space_size(&self) -> u64 {
        1u64 << self.bits()
    }

    /// Largest gene value, 2^b − 1 (31 for the paper's 5 bits).
    pub fn gene_max(&self) -> u32 {
        (1u32 << self.bits_per_gene) - 1
    }

    /// Gene values x1, x2, x3 of a chromosome.
    pub fn genes(&self, chromosome: u32) -> [u32; GENES] {
        let b = self.bits_per_gene;
        let mask = self.gene_max();
        std::array::from_fn(|i| (chromosome >> (b * (GENES - 1 - i) as u32)) & mask)
    }

    pub fn chromosome(&self, genes: [u32; GENES]) -> u32 {
        genes
            .iter()
            .fold(0, |c, &x| (c << self.bits_per_gene) | (x & self.gene_max()))
    }

    /// T_i = (T_max − T_min) x_i / (2^b − 1) + T_min (docs/model.md §7).
    pub fn period_s(&self, gene: u32) -> f64 {
        (self.period_max_s - self.period_min_s) * gene as f64 / self.gene_max() as f64
            + self.period_min_s
    }

    pub fn periods_s(&self, chromosome: u32) -> [f64; GENES] {
        self.genes(chromosome).map(|x| self.period_s(x))
    }

    /// The chromosome as its bit string, gene 1 first, genes separated by
    /// spaces ("01101 00010 11111").
    pub fn bit_string(&self, chromosome: u32) -> String {
        self.genes(chromosome)
            .iter()
            .map(|x| format!("{x:0width$b}", width = self.bits_per_gene as usize))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_mapping_end_points_and_steps() {
        let c = GeneCoding::default();
        assert_eq!(c.bits(), 15);
        assert_eq!(c.space_size(), 32_768);
        assert_eq!(c.periods_s(0), [0.25; 3]);
        assert_eq!(c.periods_s(0x7fff), [1.0; 3]);
        // x = 1 is one step of (1.0 − 0.25)/31 s.
        let one_each = c.chromosome([1, 1, 1]);
        for t in c.periods_s(one_each) {
            assert!((t - (0.25 + 0.75 / 31.0)).abs() < 1e-15);
        }
    }

    #[test]
    fn gene_order_and_round_trip() {
        let c = GeneCoding::default();
        let chromosome = c.chromosome([3, 17, 30]);
        assert_eq!(chromosome, (3 << 10) | (17 << 5) | 30);
        assert_eq!(c.genes(chromosome), [3, 17, 30]);
        assert_eq!(c.bit_string(chromosome), "00011 10001 11110");
        for chromosome in 0..c.space_size() as u32 {
            assert_eq!(c.chromosome(c.genes(chromosome)), chromosome);
        }
    }

    #[test]
    fn bad_codings_name_their_field() {
        let bad = |c: GeneCoding| c.validate().unwrap_err().field;
        let spec = GeneCoding::default();
        assert_eq!(
            bad(GeneCoding {
                bits_per_gene: 0,
                ..spec
            }),
            "bits_per_gene"
        );
        assert_eq!(
            bad(GeneCoding {
                period_min_s: 0.0,
                ..spec
            }),
            "period_min_s"
        );
        assert_eq!(
            bad(GeneCoding {
                period_max_s: 0.2,
                ..spec
            }),
            "period_max_s"
        );
    }
}
