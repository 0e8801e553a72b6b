//! Interruption-safe sweeps. A sweep writes its results chunk by chunk into
//! a hidden directory beside its final table (`.chunks/`), each chunk one
//! Parquet file written atomically (a temporary file renamed into place). A
//! killed run keeps every finished chunk; restarted with `--resume` it reads
//! them back, runs only the candidates no chunk holds, and ends with the
//! same table as an uninterrupted run. The chunks go once the final table is
//! written. The leading dot keeps Hive readers (pyarrow, Spark) from taking
//! the directory for data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::IoError;
use super::results::{read_results, write_results};
use crate::metadata::RUN_KEY;
use crate::sweep::CandidateResult;

use super::CHUNKS_DIR;

#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error(
        "{dir} holds the finished chunks of an interrupted run: pass --resume to finish it, or --force to start over"
    )]
    Unfinished { dir: PathBuf },
    #[error(
        "{path} belongs to a different run (another grid, shard, measured file, tether or engine): --resume continues only the same command; --force starts over"
    )]
    Mismatch { path: PathBuf },
    #[error(transparent)]
    Io(#[from] IoError),
}

/// The finished chunks of one run. `run_key` identifies the run: everything
/// that decides its results (grid, shard, measured file's checksum,
/// parameters, engine), so that a resume cannot mix two runs. A chunk
/// records the key's SHA-256, not the key: the grid can be long, and a
/// chunk's size must not grow with it (the run's tables record the grid
/// once).
pub struct ChunkStore {
    dir: PathBuf,
    run_key: String,
    chunks: usize,
}

impl ChunkStore {
    /// Opens the chunk directory beside the final table in `out_dir`, and
    /// returns the results its chunks hold. Without `resume`, existing
    /// chunks are an error unless `force` removes them.
    pub fn open(
        out_dir: &Path,
        run_key: &str,
        resume: bool,
        force: bool,
    ) -> Result<(Self, Vec<CandidateResult>), CheckpointError> {
        Self::open_dir(out_dir.join(CHUNKS_DIR), run_key, resume, force)
    }

    /// [`ChunkStore::open`] for one film of a joint identification: its
    /// chunks in `.chunks/film=NAME/` beside the final table.
    pub fn open_film(
        out_dir: &Path,
        film: &str,
        run_key: &str,
        resume: bool,
        force: bool,
    ) -> Result<(Self, Vec<CandidateResult>), CheckpointError> {
        let dir = out_dir.join(CHUNKS_DIR).join(format!("film={film}"));
        Self::open_dir(dir, run_key, resume, force)
    }

    fn open_dir(
        dir: PathBuf,
        run_key: &str,
        resume: bool,
        force: bool,
    ) -> Result<(Self, Vec<CandidateResult>), CheckpointError> {
        let mut done = Vec::new();
        let mut chunks = 0;
        if dir.exists() {
            if !resume {
                if !force {
                    return Err(CheckpointError::Unfinished { dir });
                }
                std::fs::remove_dir_all(&dir).map_err(|source| IoError::Write {
                    path: dir.clone(),
                    error: source,
                })?;
            } else {
                for path in Self::chunk_files(&dir)? {
                    let metadata = super::track::read_parquet_metadata(&path)?;
                    // An earlier version's chunk holds the whole key.
                    let saved = metadata.get(RUN_KEY).map(String::as_str);
                    if saved != Some(&key_digest(run_key)) && saved != Some(run_key) {
                        return Err(CheckpointError::Mismatch { path });
                    }
                    done.extend(read_results(&path)?);
                    chunks += 1;
                }
            }
        }
        std::fs::create_dir_all(&dir).map_err(|source| IoError::Write {
            path: dir.clone(),
            error: source,
        })?;
        Ok((
            Self {
                dir,
                run_key: run_key.to_owned(),
                chunks,
            },
            done,
        ))
    }

    fn chunk_files(dir: &Path) -> Result<Vec<PathBuf>, IoError> {
        let read_err = |source| IoError::Read {
            path: dir.to_owned(),
            error: source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read_err)? {
            let path = entry.map_err(read_err)?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            // Temporary files of an interrupted write are not chunks.
            if name.starts_with("chunk-") && name.ends_with(".parquet") {
                files.push(path);
            }
        }
        files.sort();
        Ok(files)
    }

    /// Chunks read back or written so far.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// Writes one finished chunk atomically, its metadata the run key's
    /// digest and the provenance alone.
    pub fn save(
        &mut self,
        results: &[CandidateResult],
        engine: (&str, &str, &str),
    ) -> Result<(), IoError> {
        let mut metadata: BTreeMap<String, String> = crate::metadata::base();
        metadata.insert(RUN_KEY.into(), key_digest(&self.run_key));
        let path = self.dir.join(format!("chunk-{:06}.parquet", self.chunks));
        let (backend, precision, solver) = engine;
        write_results(&path, results, backend, precision, solver, &metadata)?;
        self.chunks += 1;
        Ok(())
    }

    /// Removes the chunks once the final table is written.
    /// Removes the chunk directory if no chunk was saved in it (a run
    /// stopped before its first chunk leaves nothing behind).
    pub fn discard_empty(&self) {
        // remove_dir fails on a directory that holds anything: then the
        // chunks are kept, as they must be.
        let _ = std::fs::remove_dir(&self.dir);
        if let Some(parent) = self.dir.parent().filter(|p| p.ends_with(CHUNKS_DIR)) {
            let _ = std::fs::remove_dir(parent);
        }
    }

    pub fn finish(self) -> Result<(), IoError> {
        std::fs::remove_dir_all(&self.dir).map_err(|source| IoError::Write {
            path: self.dir.clone(),
            error: source,
        })?;
        // A film's directory inside `.chunks`: the last one out removes it.
        if let Some(parent) = self.dir.parent().filter(|p| p.ends_with(CHUNKS_DIR)) {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(())
    }
}

/// The run key's SHA-256, in hex.
fn key_digest(run_key: &str) -> String {
    super::sha256_bytes(run_key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::RunStatus;
    use crate::sweep::Candidate;

    fn row(damping_pa_s: f64) -> CandidateResult {
        CandidateResult {
            candidate: Candidate::new(4, damping_pa_s, 0.8),
            j_e_m2: Some(1e-4),
            status: RunStatus::Ok,
            step_s: None,
            steps: 100,
            gpu_layout: None,
            tolerance_m: Some(1e-7),
            implicit_method: Some(crate::solver::ImplicitMethod::GeneralizedAlpha),
        }
    }

    #[test]
    fn a_chunk_does_not_grow_with_the_run_key_and_resumes_only_its_run() {
        let dir = tempfile::tempdir().unwrap();
        // A run whose key holds a grid of a hundred thousand values.
        let grid: Vec<f64> = (0..100_000).map(f64::from).collect();
        let key = serde_json::to_string(&grid).unwrap();
        let (mut store, done) = ChunkStore::open(dir.path(), &key, false, false).unwrap();
        assert!(done.is_empty());
        store
            .save(&[row(1000.0), row(2000.0)], ("cpu", "f64", "reference"))
            .unwrap();
        let chunk = dir.path().join(CHUNKS_DIR).join("chunk-000000.parquet");
        let bytes = std::fs::metadata(&chunk).unwrap().len();
        assert!(bytes < 16_384, "a chunk of two rows is {bytes} bytes");
        let (store, done) = ChunkStore::open(dir.path(), &key, true, false).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(store.chunks(), 1);
        let other = format!("{key} ");
        let e = ChunkStore::open(dir.path(), &other, true, false)
            .err()
            .expect("refused");
        assert!(matches!(e, CheckpointError::Mismatch { .. }), "{e}");
    }
}
