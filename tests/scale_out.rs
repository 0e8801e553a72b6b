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

use tether_sweep::engine::Backend;
use tether_sweep::io::results::read_results;
use tether_sweep::sweep::{CandidateResult, Grid, Shard};
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::{IdentifyRequest, shipped_dataset};
use tether_sweep::workflow::summarize::{self, SummarizeRequest};

const GRID: [&str; 6] = [
    "--elements",
    "3,4",
    "--damping",
    "0:3000:1000",
    "--drag-coefficient",
    "0.7,0.8",
];

fn identify(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "identify",
        "--backend",
        "cpu",
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
        backend: Backend::Cpu,
        ..IdentifyRequest::new(
            shipped_dataset().unwrap(),
            Grid::parse(GRID[1], GRID[3], GRID[5]).unwrap(),
            out,
        )
    }
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
    let summarize = || {
        summarize::run(&SummarizeRequest {
            dir: sharded.clone(),
            measured: None,
            out: None,
            refine: true,
            allow_implausible: false,
            force: false,
        })
    };
    let early = summarize().unwrap_err();
    assert_eq!(early.exit_code(), 2, "{early}");
    assert!(early.to_string().contains("missing: 1"), "{early}");
    slurm_task(1);

    let mut union = Vec::new();
    for k in 0..3 {
        let part = results(&sharded.join(format!("shard={k}/part.parquet")));
        // Interleaved: shard k holds grid positions k, k + 3, …
        let expected: Vec<&CandidateResult> = whole.iter().skip(k).step_by(3).collect();
        assert_eq!(part.iter().collect::<Vec<_>>(), expected, "shard {k}");
        union.extend(part);
    }
    assert_eq!(union.len(), whole.len());

    let merged = summarize().unwrap();
    assert_eq!(merged.shards, 3);
    assert_eq!(results(&merged.results_path), whole, "row for row");
    assert_eq!(Some(merged.summary), single_report.summary);
    // The merge refines as the single run does, to the same values (its
    // scenario and tether come back from the parts' metadata, and the
    // reference solver's sums round alike to about 1e-13).
    let (m, s) = (merged.refined.unwrap(), single_report.refined.unwrap());
    for (a, b) in m.parameters.iter().zip(&s.parameters) {
        assert_eq!(a.parameter, b.parameter);
        assert!(
            (a.value - b.value).abs() <= 1e-9 * b.value.abs(),
            "{a:?} vs {b:?}"
        );
        assert!(
            (a.standard_error - b.standard_error).abs() <= 1e-6 * b.standard_error,
            "{a:?} vs {b:?}"
        );
    }
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
    let o = run(&["summarize", sharded.to_str().unwrap(), "--force"]);
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
