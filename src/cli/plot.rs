//! `tether-sweep plot`: an identification's figures drawn again.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A directory written by `identify`: the figures are redrawn from its
    /// results.parquet (and best_fit.parquet, when present).
    pub dir: PathBuf,
}

pub fn run(args: PlotArgs) -> Result<()> {
    crate::jobs::plot::execute(&args.dir)
}
