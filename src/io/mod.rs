//! Reading and writing: marker tracks as Parquet or CSV, simulation configs
//! as TOML. Every output is written to a temporary file beside its target and
//! renamed into place only when complete, so a failed or interrupted run
//! never leaves a half-written file.

pub mod capture;
pub mod checkpoint;
pub mod config;
pub mod design;
pub mod linear;
pub mod lock;
pub mod results;
pub mod states;
pub mod swingup;
pub mod table;
pub mod track;
mod tracker;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::metadata::{self, Metadata};

#[derive(Debug, Error)]
pub enum IoError {
    #[error("cannot write {path}: {error}")]
    Write {
        path: PathBuf,
        /// Not a `source()`: the message already holds it, and a
        /// reporter that prints the chain would print it twice.
        error: std::io::Error,
    },
    #[error("cannot read {path}: {error}")]
    Read {
        path: PathBuf,
        /// Not a `source()`: the message already holds it, and a
        /// reporter that prints the chain would print it twice.
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    #[error(
        "{path}: a table's file name must end in .parquet or .csv (tab-separated and spreadsheet files are neither read nor written)"
    )]
    UnknownExtension { path: PathBuf },
}

impl IoError {
    /// Whether the error is the user's input (exit code 2) rather than the
    /// machine's (1).
    pub fn is_input_error(&self) -> bool {
        match self {
            IoError::Read { .. } => false,
            IoError::Write { error, .. } => !machine_full(error),
            _ => true,
        }
    }
}

/// Whether a write failed because the machine has no room (a full disk, a
/// spent quota): not the user's input, whatever path it was.
fn machine_full(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded
    )
}

/// SHA-256 of a file's bytes, as lowercase hex: recorded with results so
/// that the exact input can be recognised later.
pub fn sha256_hex(path: &Path) -> Result<String, IoError> {
    let bytes = std::fs::read(path).map_err(|source| IoError::Read {
        path: path.to_owned(),
        error: source,
    })?;
    Ok(sha256_bytes(&bytes))
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Metadata of a marker-track file: the version and the columns' units.
pub fn track_metadata() -> Metadata {
    let mut m = metadata::base();
    m.insert(
        metadata::UNITS.into(),
        r#"{"t":"s","marker":"index","s":"m","x":"m","y":"m"}"#.into(),
    );
    m
}

/// Table file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Parquet,
    Csv,
}

impl TableFormat {
    pub fn from_path(path: &Path) -> Result<Self, IoError> {
        if path.is_dir() {
            return Err(IoError::Format {
                path: path.to_owned(),
                message: "is a directory: give a table file (.parquet or .csv)".into(),
            });
        }
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("parquet") => Ok(Self::Parquet),
            Some("csv") => Ok(Self::Csv),
            _ => Err(IoError::UnknownExtension {
                path: path.to_owned(),
            }),
        }
    }
}

/// The chunk directory's name, beside the final table (`checkpoint`): its
/// tables are a run's progress, not its results (`capture`).
pub const CHUNKS_DIR: &str = ".chunks";

/// The name a [`PendingFile`]'s temporary file starts and ends with, which
/// `lock` recognizes as a killed run's.
pub const TEMP_PREFIX: &str = ".tether-sweep-";
pub const TEMP_SUFFIX: &str = ".tmp";

/// A file being written: a temporary file in the target's directory that
/// becomes the target on `commit` and disappears if dropped uncommitted.
/// Creating it first also proves the target is writable before any
/// simulation time is spent.
pub struct PendingFile {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl PendingFile {
    pub fn create(target: &Path) -> Result<Self, IoError> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        let write_err = |source| IoError::Write {
            path: target.to_owned(),
            error: source,
        };
        if target.is_dir() {
            return Err(write_err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory",
            )));
        }
        let mut builder = tempfile::Builder::new();
        builder.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
        // tempfile creates 0600 files; outputs are ordinary files, so ask for
        // 0666 and let the umask decide as it would for any other file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(&dir).map_err(write_err)?;
        Ok(Self {
            temp,
            target: target.to_owned(),
        })
    }

    pub fn file(&mut self) -> &mut std::fs::File {
        self.temp.as_file_mut()
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes and renames onto the target; under [`capture::Keep::MemoryOnly`]
    /// the temporary file is removed instead.
    pub fn commit(self) -> Result<(), IoError> {
        if !capture::writes_files() {
            return Ok(());
        }
        let target = self.target.clone();
        self.temp
            .as_file()
            .sync_all()
            .map_err(|source| IoError::Write {
                path: target.clone(),
                error: source,
            })?;
        self.temp.persist(&target).map_err(|e| IoError::Write {
            path: target,
            error: e.error,
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn a_write_error_names_the_path_and_says_the_reason_once() {
        let error = IoError::Write {
            path: PathBuf::from("/data/out.parquet"),
            error: std::io::Error::from_raw_os_error(28),
        };
        // As the binary prints it: the whole chain.
        let printed = format!("{:#}", anyhow::Error::new(error));
        let reason = std::io::Error::from_raw_os_error(28).to_string();
        assert!(printed.contains("/data/out.parquet"), "{printed}");
        assert_eq!(printed.matches(&reason).count(), 1, "{printed}");
    }
}
