//! `tether-sweep bench`: throughput of the engines (the work is
//! `crate::workflow::bench`).

use super::args::named;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use crate::engine::{EngineKind, LayoutRequest};
use crate::gpu::flops::{PER_ELEMENT_STEP, SEMI_IMPLICIT_PER_ELEMENT_STEP};
use crate::jobs::say;
use crate::sweep::Axis;
use crate::text::bench as text;
use crate::workflow::bench::{BenchRequest, engine_names, prepare};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Element counts n, comma-separated.
    #[arg(
        long,
        value_name = "N,..",
        value_delimiter = ',',
        default_value = "10,40"
    )]
    pub elements: Vec<usize>,
    /// Batch sizes, comma-separated; a batch spreads D over 0–10000 Pa·s and
    /// C_D over 0.6–0.9.
    #[arg(
        long,
        value_name = "B,..",
        value_delimiter = ',',
        default_value = "1,8,64"
    )]
    pub batch: Vec<usize>,
    /// Simulated time per drop [s], a whole number of frames (0.04 s).
    #[arg(long, value_name = "S", default_value_t = 0.04)]
    pub duration: f64,
    /// Timed runs per configuration (1–100); the fastest is reported. On a
    /// shared machine, whose neighbours only ever slow a run down, 3 or
    /// more.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeats: usize,
    /// Engines to run, comma-separated. [default: all that this machine has]
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(engine_names())
            .map(|name| EngineKind::from_bench_name(&name).expect("a listed name"))
    )]
    pub engines: Option<Vec<EngineKind>>,
    /// GPU layouts, comma-separated: each GPU engine runs in each (`auto`:
    /// the cost model's choice).
    #[arg(
        long,
        value_parser = named::<LayoutRequest>(),
        value_delimiter = ',',
        default_value = "thread,workgroup"
    )]
    pub gpu_layout: Vec<LayoutRequest>,
    /// Lanes a simulation for the GPU reference solver's engines,
    /// comma-separated: each runs once with each (powers of two from 1 to
    /// 64; `auto`: the cost model's choice per batch).
    #[arg(
        long,
        value_name = "L,..",
        value_delimiter = ',',
        default_value = "auto",
        value_parser = parse_lanes
    )]
    pub lanes: Vec<Lanes>,
    /// GPU adapter: its index or part of its name.
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Parquet file for the results.
    #[arg(long, value_name = "FILE", default_value = "bench.parquet")]
    pub out: PathBuf,
    /// Replace an existing results file.
    #[arg(long)]
    pub force: bool,
}

/// A `--lanes` value: a lane count, or None for `auto`.
#[derive(Debug, Clone, Copy)]
pub struct Lanes(Option<u32>);

fn parse_lanes(value: &str) -> Result<Lanes, String> {
    if value == "auto" {
        return Ok(Lanes(None));
    }
    value
        .parse::<u32>()
        .map(|lanes| Lanes(Some(lanes)))
        .map_err(|_| format!("`{value}` is neither a number of lanes nor auto"))
}

/// The flags of the values the bench checks, by the library's field names.
const FLAGS: [(&str, &str); 5] = [
    Axis::Elements.column_and_flag(),
    ("batch", "--batch"),
    ("repeats", "--repeats"),
    ("duration_s", "--duration"),
    ("adaptive_lanes", "--lanes"),
];

pub fn run(args: BenchArgs) -> Result<()> {
    let prepared = prepare(BenchRequest {
        elements: args.elements.clone(),
        batch: args.batch.clone(),
        duration_s: args.duration,
        repeats: args.repeats,
        engines: args.engines.clone(),
        gpu_layouts: args.gpu_layout.clone(),
        adaptive_lanes: args.lanes.iter().map(|l| l.0).collect(),
        adapter: args.adapter.clone(),
        out: args.out.clone(),
        force: args.force,
    })
    .map_err(|e| super::args::name_flags(e, &FLAGS))?;
    if let Some(why) = &prepared.no_gpu {
        noteln!("no GPU engines: {why}");
    }
    if let Some(label) = prepared.gpu_label() {
        outln!("GPU: {label}");
    }
    let peaks = &prepared.peaks;
    outln!(
        "measured multiply-add peak [GFLOP/s]: GPU f32 {}, GPU f64 {}, CPU f64 {}; flops per element-step: explicit {PER_ELEMENT_STEP}, GPU semi-implicit {SEMI_IMPLICIT_PER_ELEMENT_STEP}",
        text::gflops(peaks.gpu_f32),
        text::gflops(peaks.gpu_f64),
        text::gflops(peaks.cpu_f64),
    );
    if args.repeats > 1 {
        outln!("wall s: the fastest of {} runs", args.repeats);
    }
    say(text::write_columns);
    let report = prepared.run(|o| say(|out| text::write_outcome(out, o)))?;
    outln!(
        "multiply-add peak again after the runs [GFLOP/s]: GPU f32 {}, GPU f64 {}",
        text::gflops(report.peaks_after.gpu_f32),
        text::gflops(report.peaks_after.gpu_f64),
    );
    if report.shortfall > 0.05 {
        outln!(
            "warning: the peak measured {:.0} % higher after the runs than before; the % peak column may be that much too high (a busy machine?). Rerun, or use --repeats.",
            100.0 * report.shortfall
        );
    }
    outln!("wrote {}", args.out.display());
    Ok(())
}
