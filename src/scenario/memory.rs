//! Memory a track needs, held to what the machine has before anything
//! is allocated.

use crate::error::InputError;

/// The bytes a track holds per frame and marker: its position (two f64),
/// and as much again for the measured copy or the GPU's readback beside it.
pub const TRACK_BYTES_PER_SAMPLE: u64 = 32;

/// Refuses `count` samples of `what` at `bytes_each` (`per`) beyond a
/// quarter of the memory available (`/proc/meminfo`; 4 GiB taken where
/// that cannot be read), naming `field` = `value` and what to reduce:
/// fewer frames, or `fewer`.
pub(super) fn within_memory(
    (field, value): (&str, String),
    (what, count, bytes_each, per): (&str, u64, u64, &str),
    fewer: &str,
) -> Result<(), InputError> {
    let bytes = count.saturating_mul(bytes_each);
    let budget = available_memory_bytes().unwrap_or(4 << 30) / 4;
    if bytes <= budget {
        return Ok(());
    }
    Err(InputError::new(
        field,
        value,
        format!(
            "{what} within a quarter of this machine's available memory, {:.1} GB (this one needs {:.1} GB at {bytes_each} bytes {per}): fewer frames (a longer frame_interval_s or a shorter duration_s) or {fewer}",
            budget as f64 / 1e9,
            bytes as f64 / 1e9
        ),
    ))
}

/// `MemAvailable` of `/proc/meminfo` \[bytes\], where it can be read.
fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
