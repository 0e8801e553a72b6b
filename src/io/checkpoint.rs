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
/// parameters, engine), so that a resume cannot mix two runs.
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
                    if metadata.get(RUN_KEY).map(String::as_str) != Some(run_key) {
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

    /// Writes one finished chunk atomically.
    pub fn save(
        &mut self,
        results: &[CandidateResult],
        engine: (&str, &str, &str),
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), IoError> {
        let mut metadata = metadata.clone();
        metadata.insert(RUN_KEY.into(), self.run_key.clone());
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
