//! `plot`: an identification's figures drawn again.

use std::path::Path;

use anyhow::Result;

use crate::workflow::{count, redraw};

/// An identification's figures in `dir` drawn again, said through
/// `text::console`. The command line's `plot` and the Python package's
/// both run it.
pub fn execute(dir: &Path) -> Result<()> {
    let report = redraw::run(dir)?;
    outln!(
        "redrew {} (.svg, .png) in {} from {}",
        report.figures.join(", "),
        dir.display(),
        count(report.candidates, "candidate")
    );
    Ok(())
}
