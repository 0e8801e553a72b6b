//! `dataset synth`: a synthetic drop made and said.

use anyhow::Result;

use crate::workflow::keywords::Door;
use crate::workflow::synth::{SynthInputs, run as synthesize};

/// A synthetic drop of `inputs`, said through `text::console`; an error
/// names the input as `door`'s user wrote it. The command line's and the
/// Python package's `dataset_synth` both run it.
pub fn execute(inputs: &SynthInputs, door: Door) -> Result<()> {
    let request = inputs.request(door)?;
    let report = synthesize(&request).map_err(|e| SynthInputs::error(e, door))?;
    let spec = &request.spec;
    outln!(
        "synthetic drop: n = {}, D = {} Pa·s, C_D = {}, noise σ = {} m, seed {} | {:.2} s",
        spec.tether.elements,
        spec.tether.damping_pa_s,
        spec.tether.drag_coefficient,
        spec.noise_std_m,
        spec.seed,
        report.wall_s
    );
    let track = &report.track;
    let rows = request.layout.rows(track);
    let frame = match request.camera.is_default() {
        true => "",
        false => " in the [camera]'s frame, unit and clock",
    };
    outln!(
        "wrote {rows} rows ({} frames × {} markers, {} layout) to {}{frame}",
        track.times_s.len(),
        track.markers(),
        request.layout,
        request.out.display()
    );
    Ok(())
}
