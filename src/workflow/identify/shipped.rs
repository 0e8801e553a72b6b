//! The shipped measured drop, the default film of `identify`.

use std::path::PathBuf;

use crate::workflow::WorkflowError;

/// The shipped synthetic measured drop, as the repository names it.
pub const SHIPPED_DATASET: &str = "datasets/drop_synthetic.parquet";

/// The shipped drop, compiled in: a copy of the binary on a machine that
/// cannot see the build's checkout (a cluster's compute node) still has
/// its default data.
pub(super) const SHIPPED_DATASET_BYTES: &[u8] =
    include_bytes!("../../../datasets/drop_synthetic.parquet");

/// The shipped dataset from wherever the command runs: the repository's
/// relative path when it is there (so the metadata records it as before),
/// else the compiled-in copy, written once into the temporary directory
/// under this version's name (rewritten when it is not the same bytes).
pub fn shipped_dataset() -> Result<PathBuf, WorkflowError> {
    let relative = PathBuf::from(SHIPPED_DATASET);
    if relative.exists() {
        return Ok(relative);
    }
    let copy = std::env::temp_dir().join(format!(
        "tether-sweep-{}-drop_synthetic.parquet",
        crate::VERSION
    ));
    if std::fs::read(&copy).ok().as_deref() == Some(SHIPPED_DATASET_BYTES) {
        return Ok(copy);
    }
    let failed = |e: std::io::Error| {
        WorkflowError::Usage(format!(
            "cannot write the shipped dataset to {}: {e} (give --measured FILE)",
            copy.display()
        ))
    };
    // Beside its target and renamed into place: two runs starting at once
    // never read a half-written file.
    let partial = copy.with_extension(format!("{}.partial", std::process::id()));
    std::fs::write(&partial, SHIPPED_DATASET_BYTES).map_err(failed)?;
    std::fs::rename(&partial, &copy).map_err(failed)?;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_dataset_is_its_compiled_in_copy() {
        // The test runs in the package root, where the file is.
        assert_eq!(shipped_dataset().unwrap(), PathBuf::from(SHIPPED_DATASET));
        assert_eq!(
            std::fs::read(SHIPPED_DATASET).unwrap(),
            SHIPPED_DATASET_BYTES
        );
    }
}
