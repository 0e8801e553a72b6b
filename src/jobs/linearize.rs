//! `linearize`: the linearized model computed and said.

use anyhow::Result;

use super::say;
use crate::text::linearize as text;
use crate::workflow::keywords::Door;
use crate::workflow::linearize::{LinearizeInputs, run as linearize};

/// The linearization of `inputs`, said through `text::console`; an
/// error names the input as `door`'s user wrote it. The command line's
/// and the Python package's `linearize` both run it.
pub fn execute(inputs: &LinearizeInputs, door: Door) -> Result<()> {
    let request = inputs.request(door)?;
    let report = linearize(&request).map_err(|e| LinearizeInputs::error(e, door))?;
    say(|out| text::write_report(out, &report, inputs.modes));
    Ok(())
}
