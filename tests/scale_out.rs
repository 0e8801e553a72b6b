//! Scale-out and interruption safety of `tether-sweep identify`: shards
//! (`--shard K/N`, Slurm's array variables) whose union is the single run,
//! `summarize`, a killed run finished by `--resume`, and TOML grid files.
//! CPU backend, small grids on the shipped dataset. Results are checked
//! through the library's workflows; the binary runs where its own part is
//! under test (Slurm's variables, Ctrl-C and kill, flags, messages).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{stderr, tether_sweep as run};

use tether_sweep::engine::EngineOptions;
use tether_sweep::io::results::read_results;
use tether_sweep::sweep::accuracy::SCOUT_TOLERANCE_M;
use tether_sweep::sweep::{CandidateResult, Grid, Shard};
use tether_sweep::workflow::identify::{IdentifyRequest, shipped_dataset};
use tether_sweep::workflow::summarize::{self, SummarizeRequest};
use tether_sweep::workflow::{Hooks, WorkflowError};

const GRID: [&str; 6] = [
    "--elements",
    "3,4",
    "--damping",
    "0:3000:1000",
    "--drag-coefficient",
    "0.7,0.8",
];

/// `identify` on the CPU. The grids here are coarse for speed (n = 3–8
/// on the shipped drop, made at n = 80): their fits are flagged as not
/// explaining the data (exit 4), which is not these tests' question.
fn identify(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "identify",
        "--backend",
        "cpu",
        "--allow-implausible",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn results(path: &Path) -> Vec<CandidateResult> {
    read_results(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The identification of the shipped dataset over [`GRID`] into `out`, on
/// the CPU, through the library.
fn identify_request(out: &Path) -> IdentifyRequest {
    IdentifyRequest {
        engine: EngineOptions::cpu(),
        ..IdentifyRequest::new(
            shipped_dataset().unwrap(),
            Grid::parse(GRID[1], GRID[3], GRID[5]).unwrap(),
            out,
        )
    }
}

/// `summarize` of the parts in `dir`, refined, into `dir/_summary`.
fn summarize_dir(dir: &Path) -> Result<summarize::SummarizeReport, WorkflowError> {
    summarize::run(&SummarizeRequest {
        dir: dir.to_path_buf(),
        measured: None,
        out: None,
        refine: true,
        allow_implausible: false,
        force: false,
    })
}

#[test]
fn the_union_of_the_shards_is_the_single_run_and_summarize_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    let single_report = identify_request(&single).run(Hooks::default()).unwrap();
    let whole = results(&single.join("results.parquet"));
    assert_eq!(whole.len(), 16);
    assert_eq!(single_report.results, whole);

    // Shard 0 through the library, shards 1 and 2 as Slurm array tasks
    // through the binary, which reads the task from Slurm's variables.
    let sharded = dir.path().join("sharded");
    IdentifyRequest {
        shard: Some(Shard { index: 0, count: 3 }),
        ..identify_request(&sharded)
    }
    .run(Hooks::default())
    .unwrap();
    let slurm_task = |k: usize| {
        let mut args = vec![
            "identify",
            "--backend",
            "cpu",
            "--out",
            sharded.to_str().unwrap(),
        ];
        args.extend_from_slice(&GRID);
        // --array=1-3: task ids 1..3 are shards 0..2.
        let o = Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
            .env("SLURM_ARRAY_TASK_ID", (k + 1).to_string())
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "shard {k}: {}", stderr(&o));
    };
    slurm_task(2);
    // Before every shard is done, summarize names what is missing.
    let summarize = || summarize_dir(&sharded);
    let early = summarize().unwrap_err();
    assert_eq!(early.exit_code(), 2, "{early}");
    assert!(early.to_string().contains("missing: 1"), "{early}");
    slurm_task(1);

    let mut union = Vec::new();
    for k in 0..3 {
        let part = results(&sharded.join(format!("shard={k}/part.parquet")));
        // Interleaved: shard k holds grid positions k, k + 3, …
        let expected: Vec<&CandidateResult> = whole.iter().skip(k).step_by(3).collect();
        let candidates =
            |rows: &[&CandidateResult]| -> Vec<_> { rows.iter().map(|r| r.candidate).collect() };
        assert_eq!(
            candidates(&part.iter().collect::<Vec<_>>()),
            candidates(&expected),
            "shard {k}"
        );
        // A part is a first pass: the single run's rows, but for those it
        // re-ran near the best at the data's tolerance.
        for (p, w) in part.iter().zip(&expected) {
            assert_eq!(p.tolerance_m, Some(SCOUT_TOLERANCE_M), "shard {k}: {p:?}");
            if w.tolerance_m == p.tolerance_m {
                assert_eq!(p, *w, "shard {k}");
            }
        }
        union.extend(part);
    }
    assert_eq!(union.len(), whole.len());
    assert!(
        whole
            .iter()
            .any(|r| r.tolerance_m.is_some_and(|t| t < SCOUT_TOLERANCE_M)),
        "the single run re-ran none at the data's tolerance, so the merge's re-runs go untested"
    );

    let summarized = summarize().unwrap();
    assert_eq!(summarized.shards, 3);
    let merged = summarized.identification;
    assert_eq!(results(&merged.table_path), whole, "row for row");
    assert_eq!(merged.summary, single_report.summary);
    // The merge refines as the single run does: its scenario and tether
    // come back from the parts' metadata exactly.
    assert_eq!(merged.refined, single_report.refined);
    assert!(sharded.join("_summary/refined.parquet").exists());
    for file in [
        "best_fit.parquet",
        "surface.svg",
        "per_elements.png",
        "shapes.png",
    ] {
        assert!(sharded.join("_summary").join(file).exists(), "{file}");
    }
    // The CLI prints the merged best fit as the single run's.
    let o = run(&[
        "summarize",
        sharded.to_str().unwrap(),
        "--force",
        "--allow-implausible",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let single_stdout =
        String::from_utf8_lossy(&identify(&single, &[&GRID[..], &["--force"]].concat()).stdout)
            .into_owned();
    let best = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("best:"))
            .map(str::to_owned)
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(best(&stdout).is_some(), "{stdout}");
    assert_eq!(best(&stdout), best(&single_stdout), "{stdout}");

    // A shard swept at another tolerance is another sweep.
    IdentifyRequest {
        shard: Some(Shard { index: 0, count: 3 }),
        tolerance_m: Some(1e-9),
        force: true,
        ..identify_request(&sharded)
    }
    .run(Hooks::default())
    .unwrap();
    let mixed = summarize_dir(&sharded).unwrap_err().to_string();
    assert!(
        mixed.contains("tether_sweep.solver_settings") && mixed.contains("--tolerance"),
        "{mixed}"
    );
}

/// With a release-time axis, a shard runs whole release groups (the
/// candidates that share one simulation): together the shards make the
/// single run's simulations once, and `summarize` writes what the single
/// run writes, J_e bit for bit and the same refined optimum.
#[test]
fn shards_split_release_groups_and_summarize_is_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let request = |out: &Path| IdentifyRequest {
        grid: Grid::parse("3", "1000:3000:1000", "0.7,0.8")
            .unwrap()
            .with_axis("release_time_s", "0,0.005,0.01")
            .unwrap(),
        ..identify_request(out)
    };
    let single = dir.path().join("single");
    let whole = request(&single).run(Hooks::default()).unwrap();
    assert_eq!(whole.results.len(), 18);
    assert_eq!(whole.simulations, 6, "one per release group");

    let sharded = dir.path().join("sharded");
    let mut simulations = 0;
    for index in 0..4 {
        let part = IdentifyRequest {
            shard: Some(Shard { index, count: 4 }),
            ..request(&sharded)
        }
        .run(Hooks::default())
        .unwrap();
        // Groups 0..6 dealt to 4 shards: 2, 2, 1, 1 groups of 3.
        let groups = if index < 2 { 2 } else { 1 };
        assert_eq!(part.simulations, groups, "shard {index}");
        assert_eq!(part.results.len(), 3 * groups, "shard {index}");
        simulations += part.simulations;
    }
    assert_eq!(simulations, whole.simulations, "no group simulated twice");

    let merged = summarize_dir(&sharded).unwrap().identification;
    assert_eq!(merged.results, whole.results, "J_e bit for bit");
    assert_eq!(merged.summary, whole.summary);
    assert!(merged.refined.is_some());
    assert_eq!(merged.refined, whole.refined);
}

#[test]
fn a_killed_run_resumes_to_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("uninterrupted");
    let grid = [
        "--elements",
        "6,8",
        "--damping",
        "0:4000:1000",
        "--drag-coefficient",
        "0.7,0.8",
    ];
    let o = identify(&reference, &grid);
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = results(&reference.join("results.parquet"));

    let out = dir.path().join("killed");
    let mut args = vec![
        "identify",
        "--backend",
        "cpu",
        "--chunk-size",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(&grid);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it as soon as a chunk is saved: 10 chunks of 2.
    let chunks = out.join(".chunks");
    let saved = |dir: &Path| {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("chunk-") && name.ends_with(".parquet")
                })
                .count()
        })
    };
    let started = std::time::Instant::now();
    while saved(&chunks) == 0 {
        assert!(started.elapsed().as_secs() < 60, "no chunk saved in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !out.join("results.parquet").exists(),
        "the run finished before it was killed"
    );
    let kept = saved(&chunks);
    assert!((1..10).contains(&kept), "{kept} chunks");

    // The same command again without --resume refuses to mix or discard.
    let again = identify(&out, &[&grid[..], &["--chunk-size", "2"]].concat());
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--resume"), "{}", stderr(&again));
    // Resuming with another grid is refused too.
    let other = identify(
        &out,
        &[
            "--elements",
            "6",
            "--damping",
            "0",
            "--drag-coefficient",
            "0.7",
            "--resume",
        ],
    );
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("different run"),
        "{}",
        stderr(&other)
    );

    let resumed = identify(
        &out,
        &[&grid[..], &["--chunk-size", "2", "--resume"]].concat(),
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        stdout.contains(&format!("from {kept} saved chunks")),
        "{stdout}"
    );
    assert_eq!(results(&out.join("results.parquet")), expected);
    assert!(
        !chunks.exists(),
        "chunks are removed once the table is written"
    );
}

#[test]
fn a_toml_grid_file_is_the_same_grid_as_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let flags = dir.path().join("flags");
    let o = identify(&flags, &GRID);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = dir.path().join("grid.toml");
    std::fs::write(
        &file,
        "elements = [3, 4]\ndamping = \"0:3000:1000\"  # Pa·s\ndrag_coefficient = [0.7, 0.8]\n",
    )
    .unwrap();
    let toml = dir.path().join("toml");
    let o = identify(&toml, &["--grid", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        results(&toml.join("results.parquet")),
        results(&flags.join("results.parquet"))
    );
    // A file and an axis flag together, a bad file: exit 2, nothing written.
    let both = identify(
        &dir.path().join("both"),
        &["--grid", file.to_str().unwrap(), "--damping", "0"],
    );
    assert_eq!(both.status.code(), Some(2));
    std::fs::write(&file, "elements = [3]\ndamping = \"0\"\n").unwrap();
    let bad = identify(&dir.path().join("bad"), &["--grid", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("drag_coefficient"),
        "{}",
        stderr(&bad)
    );
    assert!(!dir.path().join("bad").exists());
    let shard = identify(
        &dir.path().join("shard"),
        &[&GRID[..], &["--shard", "3/3"]].concat(),
    );
    assert_eq!(shard.status.code(), Some(2));
    assert!(stderr(&shard).contains("shard"), "{}", stderr(&shard));
}

/// The largest grid the command takes (10⁷ candidates) starts at once: its
/// candidates are made chunk by chunk, so memory does not grow with the
/// grid; it prints an estimate of its time after its first chunk, and
/// Ctrl-C (SIGINT) at any moment ends it with exit code 130 and a message
/// that says what was saved: the chunks, or nothing at all (and no
/// directory left behind) before the first one.
#[test]
fn a_ten_million_candidate_grid_starts_in_bounded_memory_and_stops_on_ctrl_c() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let grid = [
        "--elements",
        "10:19:1",
        "--damping",
        "0:9999:1",
        "--drag-coefficient",
        "0.01:1:0.01",
    ];
    let dir = tempfile::tempdir().unwrap();
    // Runs the grid into `out` until stderr (or stdout) shows a line that
    // starts with `wait_for`, then sends SIGINT; returns the peak resident
    // memory [kB] seen until then, the exit code and everything printed.
    let interrupt_after = |out: &Path, extra: &[&str], wait_for: &'static str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
            .args([
                "identify",
                "--backend",
                "cpu",
                "--out",
                out.to_str().unwrap(),
            ])
            .args(grid)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let readers: Vec<_> = [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ]
        .into_iter()
        .map(|stream| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let _ = tx.send(line.unwrap());
                }
            })
        })
        .collect();
        drop(tx);
        let mut printed = String::new();
        // A guard against a hang, not a speed target.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
                .unwrap_or_else(|_| panic!("no line starting {wait_for:?}:\n{printed}"));
            printed.push_str(&line);
            printed.push('\n');
            if line.starts_with(wait_for) {
                break;
            }
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let peak_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status");
        let kill = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let code = child.wait().unwrap().code();
        for r in readers {
            r.join().unwrap();
        }
        printed.extend(rx.iter().map(|l| l + "\n"));
        (peak_kb, code, printed)
    };

    // After the first chunk: the estimate, then Ctrl-C keeps the chunks.
    let out = dir.path().join("big");
    let (peak_kb, code, printed) = interrupt_after(&out, &["--chunk-size", "4"], "estimate:");
    assert!(
        printed.contains("10000000 candidates"),
        "the plan names the grid:\n{printed}"
    );
    assert!(
        printed.contains("candidates left ≈"),
        "an estimate after the first chunk:\n{printed}"
    );
    // The grid's candidates alone would take 10⁷ × 88 bytes.
    assert!(peak_kb < 200_000, "peak memory {peak_kb} kB:\n{printed}");
    assert_eq!(code, Some(130), "{printed}");
    assert!(printed.contains("finished and saved in"), "{printed}");
    assert!(printed.contains("--resume"), "{printed}");
    assert!(std::fs::read_dir(out.join(".chunks")).unwrap().count() >= 1);

    // Before the first chunk: nothing to resume, and no directory left.
    let out = dir.path().join("early");
    let (_, code, printed) = interrupt_after(&out, &["--chunk-size", "100000"], "identify:");
    assert_eq!(code, Some(130), "{printed}");
    assert!(printed.contains("nothing written"), "{printed}");
    assert!(!out.exists(), "{} left behind", out.display());
}

/// A run's outputs are a set: results.parquet is written last, so a run
/// stopped anywhere in its output phase (here a figure that cannot be
/// written, as a full disk or a kill would stop it) leaves no results
/// table and its saved chunks, and `--resume`, without `--force`, finishes
/// the whole set. A `--force` run over a complete set removes the old table
/// as its output phase begins, so it too leaves either a complete set or
/// one `--resume` completes.
#[test]
fn an_output_phase_cut_short_leaves_a_set_that_resume_completes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let quick = [&GRID[..], &["--no-refine", "--validate", "0"]].concat();
    // A directory where a figure goes: its write fails.
    let block = || {
        let _ = std::fs::remove_file(out.join("residuals.svg"));
        std::fs::create_dir_all(out.join("residuals.svg")).unwrap()
    };
    let unblock = || std::fs::remove_dir(out.join("residuals.svg")).unwrap();
    let complete = |o: &Output| {
        assert!(o.status.success(), "{}", stderr(o));
        for file in [
            "results.parquet",
            "best_fit.parquet",
            "residuals.svg",
            "shapes.png",
        ] {
            assert!(out.join(file).is_file(), "{file} missing");
        }
        assert!(!out.join(".chunks").exists(), "chunks left");
        assert!(!out.join(".tether-sweep.lock").exists(), "lock left");
    };
    block();
    let o = identify(&out, &quick);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !out.join("results.parquet").exists(),
        "a table beside a cut-short set"
    );
    assert!(
        out.join("best_fit.parquet").exists(),
        "the phase ran up to the figure"
    );
    assert!(out.join(".chunks").exists());
    unblock();
    complete(&identify(&out, &[&quick[..], &["--resume"]].concat()));
    let first = results(&out.join("results.parquet"));
    // Replacing the complete set, cut short again.
    block();
    let o = identify(&out, &[&quick[..], &["--force"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !out.join("results.parquet").exists(),
        "the old table beside a new set"
    );
    unblock();
    complete(&identify(&out, &[&quick[..], &["--resume"]].concat()));
    assert_eq!(results(&out.join("results.parquet")), first);
}

/// A second run on the same `--out` while the first lives is refused
/// (exit 2, naming the first's process), and takes none of its chunks.
#[test]
fn a_second_live_run_on_the_same_out_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let held = tether_sweep::io::lock::OutputLock::acquire(&out).unwrap();
    let o = identify(&out, &GRID);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("another live tether-sweep run")
            && err.contains(&format!("process {} on", std::process::id())),
        "{err}"
    );
    assert!(!out.join("results.parquet").exists());
    assert!(!out.join(".chunks").exists());
    // Once the first ends, the second runs (a killed holder's lock ends
    // with it too: `a_killed_run_resumes_to_the_same_table`).
    drop(held);
    let o = identify(&out, &GRID);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A run none of whose candidates can be simulated (a tether of 1e-30 Pa
/// blows up at once) has no answer: exit code 3, no table, no figure, its
/// rows kept in the saved chunks.
#[test]
fn a_run_whose_every_candidate_diverged_writes_nothing_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = identify(
        &out,
        &[
            "--elements",
            "3,4",
            "--damping",
            "0",
            "--drag-coefficient",
            "0.8",
            "--axis",
            "youngs_modulus_pa=1e-30",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing written"), "{}", stderr(&o));
    let written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, [".chunks"], "only the saved chunks");
}

/// A shard of another cut of the sweep beside the parts is named as such,
/// not reported as a missing shard with none named (issue 54).
#[test]
fn a_shard_of_another_cut_is_named_by_summarize() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sharded");
    for shard in ["0/2", "1/2", "2/3"] {
        let mut args = vec!["--shard", shard];
        args.extend(GRID);
        let o = identify(&out, &args);
        assert!(o.status.success(), "{shard}: {}", stderr(&o));
    }
    let e = summarize_dir(&out).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let e = e.to_string();
    assert!(
        e.contains("cut into 2") && e.contains("shard=2 belongs to another sweep"),
        "{e}"
    );
}

/// A shard with no candidate (more shards than candidates) says so, exits
/// 0 and writes an empty part that `summarize` merges (issue 54).
#[test]
fn an_empty_shard_says_so_and_its_part_merges() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sharded");
    let one = [
        "--elements",
        "4",
        "--damping",
        "1000",
        "--drag-coefficient",
        "0.8",
    ];
    for shard in ["0/2", "1/2"] {
        let mut args = vec!["--shard", shard];
        args.extend(one);
        let o = identify(&out, &args);
        assert!(o.status.success(), "{shard}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(text.contains("is empty"), shard == "1/2", "{shard}: {text}");
    }
    assert!(results(&out.join("shard=1/part.parquet")).is_empty());
    let merged = summarize_dir(&out).unwrap();
    assert_eq!(merged.identification.results.len(), 1);
}

/// Ctrl-C after the sweep (here, as its last candidate is scored) stops
/// the run before the refinement, with exit 130's error, the chunks kept
/// and no results table; `--resume` then finishes it to the same rows
/// (issue 54).
#[test]
fn ctrl_c_after_the_sweep_stops_and_resume_finishes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let request = IdentifyRequest {
        tolerance_m: Some(1e-6),
        ..identify_request(&out)
    };
    let flag = AtomicBool::new(false);
    let progress = |done: u64, total: u64| {
        if done == total {
            flag.store(true, Ordering::Relaxed);
        }
    };
    let hooks = Hooks {
        progress: Some(&progress),
        cancel: Some(&flag),
        estimate: None,
    };
    let e = request.clone().run(hooks).unwrap_err();
    assert_eq!(e.exit_code(), 130);
    let e = e.to_string();
    assert!(
        e.contains("before refining") && e.contains("--resume") && e.contains(".chunks"),
        "{e}"
    );
    assert!(!out.join("results.parquet").exists());
    assert!(out.join(".chunks").exists());
    let resumed = IdentifyRequest {
        resume: true,
        ..request.clone()
    }
    .run(Hooks::default())
    .unwrap();
    assert_eq!(resumed.scored, 0, "every candidate came from the chunks");
    let whole = IdentifyRequest {
        out: dir.path().join("whole"),
        ..request
    }
    .run(Hooks::default())
    .unwrap();
    assert_eq!(resumed.results, whole.results);
}
