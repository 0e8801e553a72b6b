//! Running the `tether-sweep` binary from integration tests.

use std::process::{Command, Output};

/// Runs the binary built for this test run with `args`.
pub fn tether_sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
        .args(args)
        .output()
        .expect("binary runs")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
