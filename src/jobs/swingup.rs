//! `swingup`: the swing-up design run and said, generation by generation.

use anyhow::Result;

use super::progress::{ProgressBar, interrupt_flag};
use super::say;
use crate::ga::Generation;
use crate::text::swingup as text;
use crate::workflow::keywords::Door;
use crate::workflow::swingup::{SwingupHooks, SwingupInputs, prepare};

/// The swing-up design of `inputs`, said through `text::console` (its
/// generations as they finish, a landscape's progress); an error names
/// the input as `door`'s user wrote it. The command line's and the Python
/// package's `swingup` both run it.
pub fn execute(inputs: &SwingupInputs, door: Door) -> Result<()> {
    let request = inputs.request();
    let prepared = prepare(request.clone()).map_err(|e| SwingupInputs::error(e, door))?;
    if let Some(reason) = prepared.choice().reason.as_deref() {
        noteln!("{reason}");
    }
    say(|out| text::write_header(out, &request, &prepared));
    let coding = request.problem.coding;
    let mut on_generation = |g: &Generation, wall_s: f64| {
        let best = g.best();
        outln!(
            "generation {:>3}: best {} {} ({}), mean {}, {} new, {wall_s:.1} s",
            g.index,
            coding.bit_string(best.chromosome),
            text::periods_text(&coding.periods_s(best.chromosome)),
            text::fitness_text(&best.evaluation),
            g.mean_fitness().map_or("-".into(), |m| format!("{m:.4} m")),
            g.new_evaluations,
        );
    };
    if request.exhaustive {
        outln!(
            "exhaustive: scoring all {} chromosomes",
            coding.space_size()
        );
    }
    let progress = ProgressBar::new("chromosomes");
    let report_progress = |done: u64, total: u64| progress.report(done, total);
    let result = prepared.run(SwingupHooks {
        on_generation: Some(&mut on_generation),
        landscape_progress: Some(&report_progress),
        cancel: Some(interrupt_flag()),
    });
    progress.finish();
    let report = result?;
    say(|out| text::write_report(out, &request, &report));
    Ok(())
}
