//! `simulate`: one simulation (the tether's, or a constrained body's) run and said.

use anyhow::Result;

use super::say;
use crate::named::Named;
use crate::text::simulate as text;
use crate::workflow::WorkflowError;
use crate::workflow::bodies::{self, BodyInputs, BodyKind, BodyOutcome};
use crate::workflow::keywords::Door;
use crate::workflow::simulate::{SimulateInputs, SimulateJob, prepare};

/// One simulation of `inputs` (the tether's, or a constrained body's),
/// said through `text::console` (the terminal, or the Python package's
/// kept text); an error names the input as `door`'s user wrote it. The
/// command line's and the Python package's `simulate` both run it.
pub fn execute(inputs: &SimulateInputs, door: Door) -> Result<()> {
    let request = match inputs.job(door)? {
        SimulateJob::Tether(request) => request,
        SimulateJob::Body(body, body_inputs) => return run_body(&body_inputs, body, door),
    };
    let prepared = prepare(request.clone(), door)?;
    if let Some(reason) = prepared.choice().reason.as_deref() {
        noteln!("{reason}");
    }
    if let Some(adapter) = prepared.choice().engine.adapter_name() {
        outln!("GPU: {adapter} ({})", request.engine.precision.name());
    }
    say(|out| text::write_header(out, &request));
    if let Some(note) = text::camera_note(&request) {
        noteln!("{note}");
    }
    let report = prepared.run()?;
    say(|out| text::write_summary(out, &request, &report, &request.out));
    Ok(())
}

/// A constrained body's run (`workflow::bodies`), its failure exit code 3.
fn run_body(inputs: &BodyInputs, body: BodyKind, door: Door) -> Result<()> {
    let outcome = bodies::execute(inputs, body).map_err(|e| SimulateInputs::body_error(e, door))?;
    let report = match outcome {
        BodyOutcome::Sweep(report) => {
            let out = &inputs.out;
            say(|o| crate::text::bodies::write_sweep(o, body.name(), &report, out));
            return Ok(());
        }
        BodyOutcome::Run(report) => report,
    };
    say(|out| crate::text::bodies::write_summary(out, &report));
    match crate::text::bodies::failure(&report) {
        Some(message) => Err(WorkflowError::NothingSimulated(message).into()),
        None => Ok(()),
    }
}
