//! `tether-sweep identify --config a.toml --config b.toml`: one tether
//! fitted to several films (the work is `tether_sweep::workflow::identify`).

use anyhow::Result;

use super::UsageError;
use super::args::name_flags;
use super::identify::{IdentifyArgs, say};
use super::progress::{ProgressBar, interrupt_flag};
use tether_sweep::text::identify as text;
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::{IdentifyRequest, check_outcome, prepare};

/// The flags of the values the workflow checks, by their field names.
const FLAGS: [(&str, &str); 6] = [
    ("chunk_size", "--chunk-size"),
    ("tolerance_m", "--tolerance"),
    ("validate_marker_tolerance_m", "--validate-marker-tolerance"),
    ("validate_j_e_tolerance", "--validate-j-e-tolerance"),
    ("surface", "--surface"),
    ("axis", "--axis"),
];

pub fn run(args: &IdentifyArgs) -> Result<()> {
    let request = joint_request(args)?;
    let cancel = interrupt_flag();
    let prepared = prepare(request.clone()).map_err(|e| name_flags(e, &FLAGS))?;
    if let Some(reason) = &prepared.plan.engine_reason {
        eprintln!("{reason}");
    }
    say(|out| text::write_joint_plan(out, &request, &prepared.plan));
    let progress = ProgressBar::new("film candidates");
    let report = |done: u64, total: u64| progress.report(done, total);
    let result = prepared.run(Hooks {
        progress: Some(&report),
        cancel: Some(cancel),
        estimate: None,
    });
    progress.finish();
    let report = result?;
    say(|out| text::write_joint_report(out, &report));
    Ok(check_outcome(&report)?)
}

/// The joint request: the single-film request's shared settings (grid,
/// engine, tether, checks, output), and one film per config.
fn joint_request(args: &IdentifyArgs) -> Result<IdentifyRequest> {
    if args.measured.is_some() {
        Err(UsageError(
            "--measured names one film's file; with several --config, give each config its file as measured = \"FILE\" in [settings]".into(),
        ))?;
    }
    let single = args.request()?;
    let mut configs = Vec::with_capacity(args.config.len());
    for path in &args.config {
        let config = args.film_of(path)?;
        if config.measured.is_none() {
            Err(UsageError(format!(
                "{}: no measured = \"FILE\" in [settings]: with several --config, each names its film's file",
                path.display()
            )))?
        }
        configs.push(config);
    }
    let films = IdentifyRequest::of_configs(configs, single.grid.clone(), &single.out)?.films;
    let mut request = IdentifyRequest { films, ..single };
    args.add_axes(&mut request)?;
    Ok(request)
}
