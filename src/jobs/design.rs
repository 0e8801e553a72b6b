//! `design`: a film planned and said.

use anyhow::Result;

use super::say;
use crate::text::design as text;
use crate::workflow::design::{DesignInputs, run as run_design};
use crate::workflow::keywords::Door;

/// The design of `inputs`, said through `text::console`; an error names
/// the input as `door`'s user wrote it. The command line's and the Python
/// package's `design` both run it.
pub fn execute(inputs: &DesignInputs, door: Door) -> Result<()> {
    let (request, notes) = inputs.request(door)?;
    for note in &notes {
        say(|out| text::write_release(out, &note.planned, &note.release, &note.config));
    }
    let design = &request.design;
    say(|out| text::write_header(out, design));
    let report = run_design(&request).map_err(|e| DesignInputs::error(e, design, door))?;
    say(|out| text::write_report(out, design, &report));
    Ok(())
}
