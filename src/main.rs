//! The `tether-sweep` binary: see `cli` for the commands.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// 2: the input is wrong; 3: a simulation diverged; 1: anything else.
fn exit_code(err: &anyhow::Error) -> u8 {
    use tether_sweep::error::InputError;
    use tether_sweep::io::IoError;
    use tether_sweep::solver::SolverError;
    for cause in err.chain() {
        if cause.is::<cli::UsageError>() || cause.is::<InputError>() {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<IoError>() {
            return if e.is_input_error() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<SolverError>() {
            return match e {
                SolverError::Input(_) => 2,
                SolverError::Diverged { .. } => 3,
                _ => 1,
            };
        }
    }
    1
}
