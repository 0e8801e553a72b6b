//! `tether-sweep summarize`: merge a sharded identification's parts.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::identify::{
    print_accuracy, print_allowed_implausible, print_goodness, print_refined, print_summary,
    print_validation,
};
use tether_sweep::workflow::count;
use tether_sweep::workflow::identify::check_outcome;
use tether_sweep::workflow::summarize::{SummarizeReport, SummarizeRequest};

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
    let merged = tether_sweep::workflow::summarize::run(&SummarizeRequest {
        dir: args.dir.clone(),
        measured: args.measured,
        out: args.out,
        refine: !args.no_refine,
        allow_implausible: args.allow_implausible,
        force: args.force,
    })?;
    let report = &merged.identification;
    if !report.weights.is_empty() {
        println!(
            "summarize: a joint identification of {} films ({}), {} shared candidates of {}",
            report.weights.len(),
            report
                .weights
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            report.results.len(),
            args.dir.display(),
        );
        super::joint::print_joint(report);
    } else {
        print_merge(&merged, &args.dir);
    }
    Ok(check_outcome(report)?)
}

/// A single film's merge, as `identify` prints its run.
fn print_merge(merged: &SummarizeReport, dir: &std::path::Path) {
    let report = &merged.identification;
    let e = &report.engine;
    println!(
        "summarize: {} shards, {} of {} | {} {} solver, {}",
        merged.shards,
        count(report.results.len(), "candidate"),
        dir.display(),
        e.backend.to_uppercase(),
        e.solver,
        e.precision
    );
    if let Some(s) = &report.summary {
        print_summary(s, false);
    }
    if let Some(c) = &report.accuracy {
        print_accuracy(c);
    }
    if let Some(r) = &report.refined {
        print_refined(r);
    }
    for g in &report.goodness {
        print_goodness(&g.test, None);
    }
    for (_, v) in &report.validations {
        print_validation(v);
    }
    print_allowed_implausible(report.fit_warning.as_deref(), report.implausible_allowed);
    println!(
        "wrote {}, best_fit.parquet{} and figures {} (.svg, .png)",
        report.table_path.display(),
        if report.refined.is_some() {
            ", refined.parquet"
        } else {
            ""
        },
        report.figures.join(", ")
    );
}
