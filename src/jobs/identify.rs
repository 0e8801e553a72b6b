//! `identify`: an identification run and said.

use anyhow::Result;

use super::say;
use crate::text::identify as text;
use crate::workflow::Hooks;
use crate::workflow::identify::{IdentifyInputs, IdentifyReport, prepare};
use crate::workflow::keywords::Door;
use crate::workflow::keywords::rename;

/// An identification of one film, or of several configs' films of one
/// tether: the request `inputs` make, checked and prepared (an error names
/// the input as `door`'s user wrote it), then run with `hooks`, its plan
/// and report said through `text::console` (the terminal, or the Python
/// package's kept text). The command below and the Python package's
/// `identify` both run it; whether the outcome is plausible is theirs to
/// say ([`check_outcome`](crate::workflow::identify::check_outcome)).
pub fn execute(inputs: &IdentifyInputs, door: Door, hooks: Hooks) -> Result<IdentifyReport> {
    let request = inputs.request(door)?;
    let names = inputs.names(door);
    let prepared = prepare(request.clone()).map_err(|e| rename(e, &names))?;
    if let Some(reason) = &prepared.plan.engine_reason {
        noteln!("{reason}");
    }
    say(|out| text::write_plan(out, &request, &prepared.plan, inputs.configured()));
    let report = prepared.run(hooks)?;
    say(|out| text::write_report(out, &report));
    Ok(report)
}
