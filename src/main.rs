//! The `tether-sweep` binary: see `tether_sweep::cli` for the commands.

use tether_sweep::cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    end_quietly_on_a_closed_pipe();
    quiet_mesa_runtime_dir();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// A reader that closes the pipe early (`tether-sweep identify | head -1`)
/// ends the process as it ends `grep` or `cat`: by SIGPIPE's default
/// action, silently. Rust's runtime ignores SIGPIPE, so that the next
/// `println!` would panic with a backtrace (exit 101). What a run writes to
/// files is written before its terminal summary, and a sweep ended early
/// keeps its saved chunks for `--resume`.
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: called first thing in main, before any other thread exists;
    // setting a signal's disposition to its default has no other effect.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Mesa's drivers (lavapipe among them) print `XDG_RUNTIME_DIR is invalid
/// or not set` on every device open without it, though compute needs no
/// runtime directory: point it at a private temporary one when it is unset
/// or unusable.
fn quiet_mesa_runtime_dir() {
    let usable = std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .is_some_and(|d| d.is_dir());
    if usable {
        return;
    }
    // One directory per user, reused by every run.
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    let dir = std::env::temp_dir().join(format!("tether-sweep-runtime-{user}"));
    #[cfg(unix)]
    let created = {
        use std::os::unix::fs::DirBuilderExt;
        dir.is_dir() || std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok()
    };
    #[cfg(not(unix))]
    let created = dir.is_dir() || std::fs::create_dir(&dir).is_ok();
    if created {
        // SAFETY: called first thing in main, before any other thread exists.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

/// 2: the input is wrong; 3: a simulation diverged; 130: interrupted;
/// 1: anything else.
fn exit_code(err: &anyhow::Error) -> u8 {
    use tether_sweep::workflow::WorkflowError;
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<WorkflowError>() {
            return e.exit_code();
        }
    }
    1
}
