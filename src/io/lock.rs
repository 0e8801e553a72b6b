//! One live run per output directory: a lock file that a second run finds
//! held, naming the process that holds it. The operating system releases
//! the lock when that process ends, however it ends (a kill -9 included),
//! so a stale lock never blocks a resumed run.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::IoError;

/// The lock file's name in the directory it guards.
pub const LOCK_FILE: &str = ".tether-sweep.lock";

/// A held lock on a directory's outputs; released when dropped.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{dir} is being written by another live tether-sweep run ({holder}): wait for it to end, or choose another --out"
    )]
    Held { dir: PathBuf, holder: String },
    #[error(
        "{} is a symbolic link: a run writes its lock there and will not write through a link to another file; remove it",
        path.display()
    )]
    Link { path: PathBuf },
    #[error(
        "{} is a file, not a folder: the outputs go into a folder (--out names it)",
        dir.display()
    )]
    NotAFolder { dir: PathBuf },
    #[error(transparent)]
    Io(#[from] IoError),
}

impl OutputLock {
    /// Locks `dir` (created if missing) for this process, and removes the
    /// temporary files a killed run left there (no live writer can own
    /// them once the lock is held).
    pub fn acquire(dir: &Path) -> Result<Self, LockError> {
        let io = |error| IoError::Write {
            path: dir.join(LOCK_FILE),
            error,
        };
        if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(LockError::NotAFolder {
                dir: dir.to_owned(),
            });
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(LOCK_FILE);
        // Never through a link: a link planted there would have the run
        // overwrite whatever it points at.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(LockError::Link { path });
        }
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
        let mut file = match options.open(&path) {
            Ok(file) => file,
            // A link made between the look and the open.
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(LockError::Link { path });
            }
            Err(e) => return Err(io(e).into()),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "a process that has not yet written its name".to_string(),
                    h => h.to_string(),
                };
                return Err(LockError::Held {
                    dir: dir.to_owned(),
                    holder,
                });
            }
            // A file system without locks (an NFS mount without its lock
            // daemon): the run goes on unguarded rather than not at all.
            Err(TryLockError::Error(e)) if unlockable(&e) => {}
            Err(TryLockError::Error(e)) => return Err(io(e).into()),
        }
        // A run that was ending removed the file after this one opened it:
        // the lock is then on a file no other run will see; start again.
        if !same_file(&file, &path) {
            return Self::acquire(dir);
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", holder_line()).map_err(io)?;
        file.sync_all().map_err(io)?;
        remove_stale_temporaries(dir);
        Ok(Self { file, path })
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held: a run waiting on it opens a fresh file.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `error` says the file system cannot lock at all.
fn unlockable(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    if matches!(
        error.raw_os_error(),
        Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP)
    ) {
        return true;
    }
    error.kind() == std::io::ErrorKind::Unsupported
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

/// "process 1234 on HOST: tether-sweep identify …".
fn holder_line() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "this host".into());
    let command: Vec<String> = std::env::args().collect();
    format!(
        "process {} on {host}: {}",
        std::process::id(),
        command.join(" ")
    )
}

/// The `.tether-sweep-*.tmp` files of `dir` (`PendingFile`s of a killed
/// run).
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(super::TEMP_PREFIX) && name.ends_with(super::TEMP_SUFFIX) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_first_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = OutputLock::acquire(&out).unwrap();
        let holder = std::fs::read_to_string(out.join(LOCK_FILE)).unwrap();
        assert!(
            holder.starts_with(&format!("process {} on ", std::process::id())),
            "{holder}"
        );
        match OutputLock::acquire(&out) {
            Err(LockError::Held { holder, .. }) => {
                assert!(holder.contains(&std::process::id().to_string()), "{holder}")
            }
            other => panic!("{other:?}"),
        }
        drop(first);
        assert!(!out.join(LOCK_FILE).exists());
        let again = OutputLock::acquire(&out).unwrap();
        drop(again);
    }

    #[test]
    fn a_killed_runs_temporaries_are_removed_and_other_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        for name in [".tether-sweep-abc123.tmp", "results.parquet", "notes.tmp"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let _lock = OutputLock::acquire(dir.path()).unwrap();
        assert!(!dir.path().join(".tether-sweep-abc123.tmp").exists());
        assert!(dir.path().join("results.parquet").exists());
        assert!(dir.path().join("notes.tmp").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_locks_place_is_refused_and_its_target_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join(LOCK_FILE)).unwrap();
        let e = OutputLock::acquire(&out).unwrap_err();
        assert!(matches!(e, LockError::Link { .. }), "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A dangling link is refused too, and creates nothing at its target.
        let gone = dir.path().join("gone.txt");
        std::fs::remove_file(out.join(LOCK_FILE)).unwrap();
        std::os::unix::fs::symlink(&gone, out.join(LOCK_FILE)).unwrap();
        assert!(matches!(
            OutputLock::acquire(&out),
            Err(LockError::Link { .. })
        ));
        assert!(!gone.exists());
    }

    #[test]
    fn a_file_given_as_the_folder_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("results");
        std::fs::write(&file, "mine").unwrap();
        let e = OutputLock::acquire(&file).unwrap_err();
        assert!(matches!(e, LockError::NotAFolder { .. }), "{e}");
        assert!(e.to_string().contains("is a file, not a folder"), "{e}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    }
}
