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

/// 2: the input is wrong; 3: a simulation diverged; 130: interrupted;
/// 1: anything else.
fn exit_code(err: &anyhow::Error) -> u8 {
    use tether_sweep::error::InputError;
    use tether_sweep::gpu::GpuError;
    use tether_sweep::io::IoError;
    use tether_sweep::scenario::batch::BatchError;
    use tether_sweep::solver::SolverError;
    for cause in err.chain() {
        if cause.is::<cli::Interrupted>() {
            return 130;
        }
        if cause.is::<cli::UsageError>() || cause.is::<InputError>() {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<IoError>() {
            return if e.is_input_error() { 2 } else { 1 };
        }
        let solver = |e: &SolverError| match e {
            SolverError::Input(_) => 2,
            SolverError::Diverged { .. } => 3,
            _ => 1,
        };
        let gpu = |e: &GpuError| match e {
            GpuError::Input(_)
            | GpuError::NoAdapter
            | GpuError::AdapterNotFound { .. }
            | GpuError::NoF64 { .. }
            | GpuError::TooLarge { .. } => 2,
            _ => 1,
        };
        if let Some(e) = cause.downcast_ref::<SolverError>() {
            return solver(e);
        }
        if let Some(e) = cause.downcast_ref::<GpuError>() {
            return gpu(e);
        }
        // Transparent wrappers hide their inner error from the chain.
        if let Some(e) = cause.downcast_ref::<BatchError>() {
            return match e {
                BatchError::Solver(e) => solver(e),
                BatchError::Gpu(e) => gpu(e),
            };
        }
    }
    1
}
