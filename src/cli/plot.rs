//! `tether-sweep plot`: an identification's figures drawn again.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::workflow::{count, redraw};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A directory written by `identify`: the figures are redrawn from its
    /// results.parquet (and best_fit.parquet, when present).
    pub dir: PathBuf,
}

pub fn run(args: PlotArgs) -> Result<()> {
    let report = redraw::run(&args.dir)?;
    outln!(
        "redrew {} (.svg, .png) in {} from {}",
        report.figures.join(", "),
        args.dir.display(),
        count(report.candidates, "candidate")
    );
    Ok(())
}
