//! `tether-sweep summarize`: merge a sharded identification's parts.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::workflow::summarize::SummarizeRequest;

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// A directory of `identify --shard K/N` runs: DIR/shard=K/part.parquet
    /// for every K from 0 to N−1 (a joint identification's:
    /// DIR/shard=K/film=FILM/part.parquet for every film).
    pub dir: PathBuf,
    /// The measured track, when it is no longer at the path the shards
    /// recorded (its SHA-256 must match).
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// Output directory of the merged results.parquet, best_fit.parquet and
    /// figures. Default DIR/_summary (the leading underscore keeps Hive
    /// readers of DIR from taking it for data).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Skip the refined optimum (refined.parquet), as `identify
    /// --no-refine` does.
    #[arg(long)]
    pub no_refine: bool,
    /// Exit 0 when the merged best fit misses the data by more than 5 % of
    /// the tether's length or 5× the film's own noise (by default exit code
    /// 4, the results written and marked implausible), as `identify
    /// --allow-implausible`.
    #[arg(long)]
    pub allow_implausible: bool,
    /// Replace an existing merged results.parquet.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: SummarizeArgs) -> Result<()> {
    crate::jobs::summarize::execute(&SummarizeRequest {
        dir: args.dir.clone(),
        measured: args.measured,
        out: args.out,
        refine: !args.no_refine,
        allow_implausible: args.allow_implausible,
        force: args.force,
    })
}
