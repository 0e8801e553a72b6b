//! What a new user tripped over, trying the README (issue 16): each test
//! here failed on the main branch before it was fixed.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{stderr, tether_sweep};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One candidate, the truth of the shipped dataset's neighbourhood: a
/// second's work.
const ONE_CANDIDATE: [&str; 6] = [
    "--elements",
    "4",
    "--damping",
    "2000",
    "--drag-coefficient",
    "0.8",
];

#[test]
fn ctrl_c_on_a_cpu_identify_saves_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    // Enough candidates that the run is still going when Ctrl-C comes.
    let child = binary()
        .args([
            "identify",
            "--backend",
            "cpu",
            "--elements",
            "10:30:10",
            "--damping",
            "0:5000:250",
            "--chunk-size",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first chunk is saved, then interrupt.
    let chunks = out.join(".chunks");
    let started = Instant::now();
    while std::fs::read_dir(&chunks).map_or(0, |d| d.count()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no chunk saved"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The shell's own `kill`: no procps needed.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
    let result = child.wait_with_output().unwrap();
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(130), "{err}");
    assert!(
        err.contains("--resume") && err.contains("saved in"),
        "{err}"
    );
    assert!(!out.join("results.parquet").exists());
}

#[test]
fn a_negative_axis_start_parses_and_meets_the_range_check() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let result = tether_sweep(&[
        "identify",
        "--damping",
        "-100:1000:100",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(2), "{err}");
    assert!(!err.contains("unexpected argument"), "{err}");
    assert!(err.contains("--damping") && err.contains(">= 0"), "{err}");
    assert!(!out.exists());
}

#[test]
fn dataset_synth_help_shows_the_shipped_defaults() {
    let help = stdout(&tether_sweep(&["dataset", "synth", "--help"]));
    for default in ["[default: 80]", "[default: 2000]", "[default: 0.8]"] {
        assert!(help.contains(default), "{default} missing:\n{help}");
    }
}

#[test]
fn the_shipped_default_dataset_is_found_from_another_directory() {
    let dir = tempfile::tempdir().unwrap();
    let result = binary()
        .current_dir(dir.path())
        .args(["identify", "--backend", "cpu"])
        .args(ONE_CANDIDATE)
        .output()
        .unwrap();
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(dir.path().join("identify-results/results.parquet").exists());
}

#[test]
fn gpu_commands_do_not_print_mesa_runtime_dir_warnings() {
    let result = binary()
        .env_remove("XDG_RUNTIME_DIR")
        .arg("adapters")
        .output()
        .unwrap();
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(
        !stderr(&result).contains("XDG_RUNTIME_DIR"),
        "{}",
        stderr(&result)
    );
}

#[test]
fn simulate_replaces_its_output_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("drop.csv");
    let args = [
        "simulate",
        "--elements",
        "2",
        "--duration",
        "0.04",
        "--out",
        out.to_str().unwrap(),
    ];
    assert!(tether_sweep(&args).status.success());
    let before = std::fs::read(&out).unwrap();
    let again = tether_sweep(&args);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
    assert!(tether_sweep(&forced).status.success());
}

#[test]
fn progress_reaches_a_log_that_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let result = binary()
        .env("TETHER_SWEEP_PROGRESS_INTERVAL_S", "0")
        .args(["identify", "--backend", "cpu"])
        .args(ONE_CANDIDATE)
        .args(["--out", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(
        stderr(&result).contains("progress: 1/1 simulations"),
        "{}",
        stderr(&result)
    );
}

#[test]
fn the_slurm_example_logs_where_slurm_can_open_the_file() {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/identify_slurm.sh"),
    )
    .unwrap();
    let output = script
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --output="))
        .expect("an --output line");
    // Slurm opens it before the script runs: no folder the script makes.
    assert!(!output.contains('/'), "{output}");
}

#[test]
fn the_auto_notice_is_one_short_line_and_counts_are_singular_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let result = binary()
        .args(["identify"])
        .args(ONE_CANDIDATE)
        .args(["--out", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(result.status.success(), "{}", stderr(&result));
    let err = stderr(&result);
    let notice = err
        .lines()
        .find(|l| l.starts_with("backend auto"))
        .unwrap_or_else(|| panic!("no notice in {err}"));
    assert!(notice.chars().count() <= 160, "{notice}");
    let out = stdout(&result);
    assert!(out.contains("identify: 1 candidate "), "{out}");
    assert!(
        !out.contains("1 candidates") && !out.contains("1 simulations"),
        "{out}"
    );
}
