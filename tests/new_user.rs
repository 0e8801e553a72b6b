//! What a new user tripped over, trying the README (issue 16): each test
//! here failed on the main branch before it was fixed.

mod common;

use std::path::Path;
use std::process::{Command, Output};

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
    common::interrupt_once_a_chunk_is_saved(
        &[
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
        ],
        &out.join(".chunks"),
        &out,
    );
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

/// A copy of the binary, run in an empty directory (as on a compute node
/// that cannot see the build's checkout), finds its default data: it is
/// compiled in.
#[test]
fn the_shipped_default_dataset_is_found_from_a_copy_of_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("tether-sweep");
    std::fs::copy(env!("CARGO_BIN_EXE_tether-sweep"), &copy).unwrap();
    let result = Command::new(&copy)
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
        stderr(&result).contains("progress: 1/1 candidates"),
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
    // Word by word: "28.1 simulations/s" is a rate, not a count of one.
    let words: Vec<&str> = out.split_whitespace().collect();
    assert!(
        !words
            .windows(2)
            .any(|w| w[0] == "1" && (w[1] == "candidates" || w[1] == "simulations")),
        "{out}"
    );
}

/// The console blocks of README.md and docs/*.md that run a command: (the
/// file, the command's arguments, the lines it is shown printing).
fn console_blocks() -> Vec<(String, Vec<String>, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    let mut blocks = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line != "```console" {
                continue;
            }
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            let mut body = body.into_iter();
            let Some(first) = body.next().and_then(|l| l.strip_prefix("$ tether-sweep ")) else {
                continue;
            };
            // A command continued over lines with a trailing backslash.
            let mut command = first.trim_end().to_string();
            while let Some(head) = command.strip_suffix('\\') {
                command = format!("{head} {}", body.next().unwrap_or("").trim());
            }
            let args = command.split_whitespace().map(String::from).collect();
            let printed = body.map(String::from).collect();
            blocks.push((file.display().to_string(), args, printed));
        }
    }
    blocks
}

/// A line that reports a wall time: compared with its numbers masked.
fn reports_a_time(line: &str) -> bool {
    line.contains(" s wall")
        || line.contains(" s on all cores")
        || line.contains("simulations/s")
        || line.rsplit(" | ").next().is_some_and(|last| {
            last.strip_suffix(" s")
                .is_some_and(|n| n.parse::<f64>().is_ok())
        })
}

fn numbers_masked(line: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in line.chars() {
        let numeric = c.is_ascii_digit() || (in_number && (c == '.' || c == 'e' || c == '-'));
        if numeric && !in_number {
            out.push('#');
        }
        if !numeric {
            out.push(c);
        }
        in_number = numeric;
    }
    out
}

/// The documented console output is what the binary prints now, for the
/// cheap examples: one drop and one swing-up (`simulate`), the linear
/// model (`linearize`) and the filmed, tracker and joint worked examples
/// (`identify`), and the constrained bodies (`simulate --scenario
/// arm|robot`, a documented failure included). Lines that report a wall
/// time are compared with their numbers masked; `...` stands for lines
/// left out.
#[test]
fn the_documented_examples_print_what_the_docs_show() {
    let dir = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for (file, mut args, printed) in console_blocks() {
        let cheap = matches!(args[0].as_str(), "simulate" | "linearize")
            || args.iter().any(|a| {
                a == "examples/filmed_experiment.toml"
                    || a == "examples/tracker_film.toml"
                    || a == "examples/joint_shallow.toml"
            });
        if !cheap {
            continue;
        }
        let out_at = args.iter().position(|a| a == "--out").unwrap() + 1;
        let out = dir.path().join(format!("{ran}-{}", args[out_at]));
        let prefix = format!("{}/{ran}-", dir.path().display());
        args[out_at] = out.display().to_string();
        let result = binary()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .output()
            .unwrap();
        // A block that shows an `error:` line documents a failure: the
        // run must fail, and say it.
        let fails = printed.iter().any(|l| l.starts_with("error: "));
        assert_eq!(
            result.status.success(),
            !fails,
            "{file}: {args:?}: {}",
            stderr(&result)
        );
        let actual: Vec<String> = format!("{}{}", stdout(&result), stderr(&result))
            .lines()
            .map(|l| l.replace(&prefix, ""))
            .collect();
        for line in printed.iter().filter(|l| l.as_str() != "...") {
            let found = if reports_a_time(line) {
                let masked = numbers_masked(line);
                actual.iter().any(|a| numbers_masked(a) == masked)
            } else {
                actual.contains(line)
            };
            assert!(
                found,
                "{file}: `tether-sweep {}` no longer prints\n  {line}\nit prints:\n{}",
                args.join(" "),
                actual.join("\n")
            );
        }
        ran += 1;
    }
    // docs/simulate.md's two, docs/linearize.md's and docs/identify.md's
    // filmed, tracker and joint examples.
    assert!(ran >= 6, "only {ran} documented examples found");
}

#[test]
fn a_wall_time_is_masked_and_nothing_else() {
    assert!(reports_a_time(
        "explicit: step 1.6142e-5 s, 123900 steps, 0.454 s wall"
    ));
    assert!(reports_a_time("linearized about … | 0.781 s"));
    assert!(!reports_a_time(
        "tip (marker 10) at t = 2.000 s: x = -0.346971 m"
    ));
    assert_eq!(
        numbers_masked("686 candidates in 0.8 s (115.6 simulations/s)"),
        "# candidates in # s (# simulations/s)"
    );
}

/// The default run's block is printed whole in docs/identify.md and
/// abbreviated in the README (up to the best candidate, "…", then from the
/// confidence region on), both written by scripts/default_run_block.py from
/// one run: a hand edit of one that the other lacks fails here.
#[test]
fn the_readme_shows_the_guides_default_run_abbreviated() {
    let blocks = console_blocks();
    let default_run = |file: &str| -> Vec<String> {
        blocks
            .iter()
            .find(|(f, args, _)| f.ends_with(file) && args == &["identify"])
            .unwrap_or_else(|| panic!("{file} shows no `$ tether-sweep identify` block"))
            .2
            .clone()
    };
    let whole = default_run("docs/identify.md");
    let readme = default_run("README.md");
    let best = whole.iter().position(|l| l.starts_with("best: ")).unwrap();
    let region = whole.iter().position(|l| l.starts_with("≈95 %")).unwrap();
    let mut expected = whole[..=best].to_vec();
    expected.push("…".to_string());
    expected.extend_from_slice(&whole[region..]);
    assert_eq!(
        readme, expected,
        "README.md's default run is not docs/identify.md's abbreviated: run python3 scripts/default_run_block.py"
    );
}
