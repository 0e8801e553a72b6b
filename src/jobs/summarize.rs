//! `summarize`: a sharded identification's parts merged and said.

use anyhow::Result;

use super::say;
use crate::text::identify as text;
use crate::workflow::identify::check_outcome;
use crate::workflow::summarize::SummarizeRequest;

/// The merge `request` asks for, said through `text::console`; an
/// implausible merged fit is an error (exit 4) unless allowed. The
/// command line's and the Python package's `summarize` both run it.
pub fn execute(request: &SummarizeRequest) -> Result<()> {
    let merged = crate::workflow::summarize::run(request)?;
    say(|out| text::write_merge(out, &merged, &request.dir));
    Ok(check_outcome(&merged.identification)?)
}
