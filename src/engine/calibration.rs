//! Saved calibrations: the cost model's rates measured on an adapter's
//! own stages ([`super::calibrate::calibrate_layouts`],
//! [`super::calibrate::calibrate_adaptive`]) kept in a small JSON file, so
//! that `--backend auto` measures once per machine, adapter, driver and
//! build, and reuses the rates thereafter.
//!
//! The file is keyed by everything that changes the rates: the adapter
//! (name, backend, driver and its version, PCI address) and the build
//! (version and git commit, since shaders change between commits); inside,
//! by what was measured (stage, precision, scheme or tolerance, n and
//! batch). `TETHER_SWEEP_CALIBRATION` names another file, or `off` to
//! measure every time; deleting the file measures again. A file that cannot
//! be read (corrupt, from an incompatible build) is measured over, never
//! an error: a calibration only steers the choice of engine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::gpu::Gpu;

/// Names the file (`off`: none).
pub const CALIBRATION_VARIABLE: &str = "TETHER_SWEEP_CALIBRATION";

/// Where calibrations are kept: `TETHER_SWEEP_CALIBRATION`, else
/// `$XDG_CACHE_HOME/tether-sweep/calibration.json`, else
/// `~/.cache/tether-sweep/calibration.json`; None for `off` or without a
/// home.
pub fn default_path() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(path) = var(CALIBRATION_VARIABLE) {
        return (path != "off").then(|| PathBuf::from(path));
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(cache.join("tether-sweep").join("calibration.json"))
}

/// One measurement as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Saved {
    /// Seconds since 1970 when it was measured.
    measured_unix_s: u64,
    rates: serde_json::Value,
}

/// Per adapter and build, per measurement.
type SavedFile = BTreeMap<String, BTreeMap<String, Saved>>;

/// Where a calibration's rates came from, for the reason `auto` prints.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Measured now; saved in the file, or why not.
    Measured { saved: Result<PathBuf, String> },
    /// Measured on an earlier run, saved in the file.
    Saved { path: PathBuf, measured_unix_s: u64 },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Measured { saved: Ok(path) } => {
                write!(f, "measured now, saved in {}", path.display())
            }
            Source::Measured { saved: Err(why) } => write!(f, "measured now, not saved: {why}"),
            Source::Saved {
                path,
                measured_unix_s,
            } => {
                // The age, not the date: whether the driver or the machine
                // may have changed since is what the reader weighs.
                let age_s = now_unix_s().saturating_sub(*measured_unix_s);
                let age = indicatif::HumanDuration(std::time::Duration::from_secs(age_s));
                write!(
                    f,
                    "as measured on an earlier run {age} ago, saved in {} (delete it to measure again)",
                    path.display()
                )
            }
        }
    }
}

fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The adapter and build a calibration belongs to.
fn adapter_key(gpu: &Gpu) -> String {
    let a = &gpu.adapter;
    format!(
        "{} | {} | {} {} | {} | tether-sweep {} ({})",
        a.name,
        a.backend,
        a.driver,
        a.driver_info,
        a.pci_bus_id,
        crate::VERSION,
        crate::GIT_COMMIT
    )
}

/// The rates saved in `path` for `gpu` and `measurement`, else measured
/// by `measure` and saved there (`path` None: measured, not saved).
pub fn saved_or_measured<T, E>(
    path: Option<&Path>,
    gpu: &Gpu,
    measurement: &str,
    measure: impl FnOnce() -> Result<T, E>,
) -> Result<(T, Source), E>
where
    T: Serialize + DeserializeOwned,
{
    let adapter = adapter_key(gpu);
    let mut file: SavedFile = path.and_then(read).unwrap_or_default();
    if let Some(path) = path
        && let Some(saved) = file.get(&adapter).and_then(|m| m.get(measurement))
        && let Ok(rates) = serde_json::from_value::<T>(saved.rates.clone())
    {
        let source = Source::Saved {
            path: path.to_path_buf(),
            measured_unix_s: saved.measured_unix_s,
        };
        return Ok((rates, source));
    }
    let rates = measure()?;
    let saved = match path {
        None => Err(format!("{CALIBRATION_VARIABLE} is off")),
        Some(path) => {
            let entry = Saved {
                measured_unix_s: now_unix_s(),
                rates: serde_json::to_value(&rates).expect("rates serialize"),
            };
            file.entry(adapter)
                .or_default()
                .insert(measurement.to_string(), entry);
            write(path, &file).map(|()| path.to_path_buf())
        }
    };
    Ok((rates, Source::Measured { saved }))
}

/// The file's calibrations, or None where there are none to read.
/// A calibration file past this is not read but measured over (and so
/// replaced): each entry takes a few hundred bytes, and every build adds
/// its own, so only a file that is not ours, or years of builds, reach it.
const MAX_FILE_BYTES: u64 = 4 << 20;

fn read(path: &Path) -> Option<SavedFile> {
    if std::fs::metadata(path).ok()?.len() > MAX_FILE_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the file whole, through a temporary file beside it, so that
/// jobs sharing it (a Slurm array on one node) never read half of one.
fn write(path: &Path, file: &SavedFile) -> Result<(), String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(file).expect("calibrations serialize");
    let mut temporary = tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new(".")))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    std::io::Write::write_all(&mut temporary, text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    temporary
        .persist(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}
