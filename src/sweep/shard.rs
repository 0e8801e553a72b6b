//! Shards: a grid split into N interleaved slices (candidate i belongs to
//! shard i mod N), so that every shard gets a fair share of cheap and
//! expensive candidates. One shard per job of a scheduler's array (Slurm's
//! `--array`), each writing `DIR/shard=K/part.parquet`; together they form a
//! Hive-partitioned dataset.

use serde::Serialize;

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

    /// Whether grid position `i` belongs to this shard.
    pub fn contains(&self, i: usize) -> bool {
        i % self.count == self.index
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
