//! The `tether-sweep simulate` command as a user runs it: outputs, and every
//! bad input rejected with a message naming the field, exit code 2 and no
//! file left behind.

mod common;

use std::path::Path;

use common::{stderr, tether_sweep};

use tether_sweep::io::track::{read_measured, read_parquet_metadata, read_table};

/// Runs a bad command and checks exit code 2, the message, and that the
/// output directory is still empty (no output, no temporary file).
fn assert_rejected(dir: &Path, args: &[&str], expected: &[&str]) {
    let out = tether_sweep(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {err}");
    for e in expected {
        assert!(err.contains(e), "args {args:?}: expected {e:?} in {err:?}");
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "args {args:?} left files behind"
    );
}

#[test]
fn drop_writes_a_parquet_track_with_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop.parquet");
    let out = tether_sweep(&[
        "simulate",
        "--scenario",
        "drop",
        "--elements",
        "4",
        "--damping",
        "2000",
        "--drag-coefficient",
        "0.8",
        "--duration",
        "0.4",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let batch = read_table(&path).unwrap();
    let names: Vec<_> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["t", "marker", "s", "x", "y"]);
    assert_eq!(
        batch.num_rows(),
        11 * 11,
        "frames 0, 0.04, …, 0.4 × 11 markers"
    );
    for field in batch.schema().fields() {
        assert!(
            field.metadata().contains_key("unit"),
            "{} has a unit",
            field.name()
        );
    }
    let meta = read_parquet_metadata(&path).unwrap();
    for key in [
        "tether_sweep.version",
        "tether_sweep.tether",
        "tether_sweep.scenario",
        "tether_sweep.solver_report",
    ] {
        assert!(meta.contains_key(key), "metadata lacks {key}");
    }
    assert!(meta["tether_sweep.tether"].contains("\"damping_pa_s\":2000.0"));
    // Frame 0 is the initial shape: raised 45°, marker 10 at L (sin, −cos).
    let track = read_measured(&path).unwrap();
    let tip = track.get(0.0, 10).unwrap();
    assert!((tip[0] - 0.6 * 45f64.to_radians().sin()).abs() < 1e-12);
    assert!((tip[1] + 0.6 * 45f64.to_radians().cos()).abs() < 1e-12);
}

#[test]
fn swingup_from_a_toml_config_with_flag_overrides_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("swing.toml");
    std::fs::write(
        &config,
        "scenario = \"swingup\"\nsolver = \"reference\"\n[tether]\nelements = 3\ndamping_pa_s = 2000.0\n\
         [settings]\nduration_s = 0.2\nwinch_periods_s = [0.5, 0.4, 0.6]\n",
    )
    .unwrap();
    let path = dir.path().join("swing.csv");
    let out = tether_sweep(&[
        "simulate",
        "--config",
        config.to_str().unwrap(),
        "--elements",
        "4",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("n = 4"), "flag overrides file: {stdout}");
    assert!(
        stdout.contains("tip mass = 0.021 kg"),
        "swing-up default tip mass: {stdout}"
    );
    assert!(stdout.contains("J_a,min"), "{stdout}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("t,marker,s,x,y\n"));
    assert_eq!(text.lines().count(), 1 + 6 * 11);
}

#[test]
fn bad_inputs_are_rejected_with_named_fields_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.parquet");
    let out = out.to_str().unwrap();
    let base = ["simulate", "--out", out];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };
    assert_rejected(
        dir.path(),
        &with(&["--elements", "0"]),
        &["elements", "1 to 1024"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--damping", "-5"]),
        &["--damping", ">= 0"],
    );
    // Refused before it runs for ever.
    assert_rejected(
        dir.path(),
        &with(&["--solver", "explicit", "--step", "1e-30"]),
        &["step_s", "at most 1000000000 steps"],
    );
    // Refused before it runs for ever (or allocates 2.5e13 frames).
    assert_rejected(
        dir.path(),
        &with(&["--duration", "1e12"]),
        &["--duration = 1e12", "at most 3600 s of motion"],
    );
    // Within the hour, a million frames at most.
    let frames = dir.path().join("frames.toml");
    std::fs::write(&frames, "[settings]\nframe_interval_s = 0.001\n").unwrap();
    let mut args = base.to_vec();
    args.extend(["--config", frames.to_str().unwrap(), "--duration", "3000"]);
    let out = tether_sweep(&args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("at most 1000000 frames"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&frames).unwrap();
    assert_rejected(dir.path(), &with(&["--damping", "nan"]), &["--damping"]);
    assert_rejected(
        dir.path(),
        &with(&["--drag-coefficient", "-0.1"]),
        &["--drag-coefficient", ">= 0"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--drag-coefficient", "inf"]),
        &["--drag-coefficient"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--length", "-0.6"]),
        &["--length", "from 0.001 to 1000 m"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--length", "0"]),
        &["--length", "from 0.001 to 1000 m"],
    );
    // Named by its flag, not as the singular matrix it would make.
    assert_rejected(
        dir.path(),
        &with(&["--length", "1e-9"]),
        &["--length", "from 0.001 to 1000 m"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--step", "0.003"]),
        &["--step", "divides"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--duration", "0.05"]),
        &["--duration", "multiple"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--scenario", "swingup", "--winch-periods", "0.5,-1,0.5"]),
        &["T2", "between"],
    );
    assert_rejected(
        dir.path(),
        &with(&["--scenario", "swingup", "--winch-periods", "0.5,0.5"]),
        &["waypoints"],
    );
    // Output paths: unknown extension, missing directory.
    assert_rejected(
        dir.path(),
        &[
            "simulate",
            "--out",
            dir.path().join("x.txt").to_str().unwrap(),
        ],
        &[".parquet or .csv"],
    );
    assert_rejected(
        dir.path(),
        &[
            "simulate",
            "--out",
            dir.path().join("no/such/dir/x.csv").to_str().unwrap(),
        ],
        &["cannot write"],
    );
    // bench checks its own flags before it measures anything.
    let bench_out = dir.path().join("bench.parquet");
    let bench_out = bench_out.to_str().unwrap();
    for (extra, expected) in [
        (["--repeats", "0"], ["invalid --repeats", "1–100"]),
        (["--batch", "0"], ["invalid --batch", "≥ 1"]),
        (["--duration", "0"], ["invalid --duration", "> 0"]),
        (
            ["--lanes", "3"],
            ["invalid --lanes", "power of two from 1 to 64"],
        ),
        (
            ["--lanes", "128"],
            ["invalid --lanes", "power of two from 1 to 64"],
        ),
    ] {
        let mut args = vec!["bench", "--engines", "cpu-reference", "--out", bench_out];
        args.extend(extra);
        assert_rejected(dir.path(), &args, &expected);
    }
}

#[test]
fn a_tolerance_below_f32s_floor_is_refused_on_the_gpus_reference_solver() {
    // Needs no adapter: refused before any device opens. The default
    // tolerance (1e-9 m) is below what the scheme can hold in f32.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.parquet");
    assert_rejected(
        dir.path(),
        &[
            "simulate",
            "--backend",
            "gpu",
            "--solver",
            "reference",
            "--out",
            out.to_str().unwrap(),
        ],
        &["tolerance_m", "1e-7", "--precision f64"],
    );
}

#[test]
fn malformed_and_misspelled_configs_are_rejected() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("x.parquet");
    for (text, expected) in [
        ("[tether\nelements = 3", "not valid TOML"),
        ("[tether]\nelemnts = 3", "elemnts"),
        ("[tether]\nelements = \"ten\"", "elements"),
        ("scenario = \"flight\"", "flight"),
        ("[settings]\nduration_s = -1.0", "duration_s"),
        // A drop has no winch, a swing-up no release: not silently ignored.
        (
            "[settings]\nwinch_periods_s = [0.5, 0.4, 0.6]",
            "[settings] winch_periods_s is a setting of scenario = \"swingup\"",
        ),
        (
            "scenario = \"swingup\"\n[settings]\ninitial_angle_deg = 30.0",
            "[settings] initial_angle_deg is a setting of scenario = \"drop\"",
        ),
        (
            "[settings]\nframe_times_s = [0.0, 0.5, 1.0]\nframe_interval_s = 0.04",
            "frame_interval_s",
        ),
    ] {
        let cfg = cfg_dir.path().join("c.toml");
        std::fs::write(&cfg, text).unwrap();
        assert_rejected(
            out_dir.path(),
            &[
                "simulate",
                "--config",
                cfg.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[expected],
        );
    }
    assert_rejected(
        out_dir.path(),
        &[
            "simulate",
            "--config",
            "/no/such/config.toml",
            "--out",
            out.to_str().unwrap(),
        ],
        &["cannot read config"],
    );
}

#[test]
fn a_diverging_simulation_is_reported_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.parquet");
    // 1 ms is far beyond the stability limit of n = 10 (≈ 1.2e-4 s).
    let out = tether_sweep(&[
        "simulate",
        "--elements",
        "10",
        "--step",
        "0.001",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("diverged"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn help_explains_units_and_defaults() {
    let out = tether_sweep(&["simulate", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "[Pa·s]",
        "[default: 0.5,0.4,0.6]",
        ".parquet",
        "--no-rotary-inertia",
        "[m]",
        "[s]",
    ] {
        assert!(text.contains(needle), "help lacks {needle}");
    }
}

#[test]
fn linearize_writes_tables_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("lin");
    let out = tether_sweep(&[
        "linearize",
        "--elements",
        "10",
        "--tip-mass",
        "0",
        "--damping",
        "2000",
        "--frequency-points",
        "50",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // docs/model.md §8: ω₁ = 4.8638 rad/s for the bare tether.
    let modes = read_table(&out_dir.join("modes.parquet")).unwrap();
    let omega = modes
        .column_by_name("omega_rad_s")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow::array::Float64Array>()
        .unwrap();
    assert_eq!(omega.len(), 4 * 10 + 2);
    assert!(
        (omega.value(0) / 4.8638 - 1.0).abs() < 5e-4,
        "{}",
        omega.value(0)
    );
    for name in ["frequency_hz", "damping_ratio"] {
        assert!(modes.column_by_name(name).is_some(), "modes lacks {name}");
    }
    let response = read_table(&out_dir.join("frequency_response.parquet")).unwrap();
    assert_eq!(response.num_rows(), 2 * 50);
    let magnitude = response
        .column_by_name("magnitude")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow::array::Float64Array>()
        .unwrap();
    // Row 0: tip x at the lowest frequency (0.05 Hz, far below 0.77 Hz): ≈ 1.
    assert!(
        (magnitude.value(0) - 1.0).abs() < 0.01,
        "{}",
        magnitude.value(0)
    );
    let ss = read_parquet_metadata(&out_dir.join("statespace.parquet")).unwrap();
    assert!(ss["tether_sweep.statespace"].contains("winch position"));
    assert!(
        read_table(&out_dir.join("mode_shapes.parquet"))
            .unwrap()
            .num_rows()
            > 0
    );
    for plot in ["bode", "mode_shapes"] {
        let png = std::fs::read(out_dir.join(format!("{plot}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = std::fs::read_to_string(out_dir.join(format!("{plot}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("frequency") == (plot == "bode"));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("4.86"), "{stdout}");
}

#[test]
fn linearize_rejects_bad_frequency_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lin");
    let out = out.to_str().unwrap();
    for (args, expected) in [
        (vec!["--frequency-min", "0"], "invalid --frequency-min"),
        (
            vec!["--frequency-min", "5", "--frequency-max", "1"],
            "invalid --frequency-max",
        ),
        (
            vec!["--frequency-points", "1"],
            "invalid --frequency-points",
        ),
        (vec!["--modes", "0"], "invalid --modes"),
        (vec!["--elements", "0"], "--elements"),
        (vec!["--damping", "-1"], "--damping"),
    ] {
        let mut all = vec!["linearize", "--out", out];
        all.extend(args.iter().copied());
        let result = tether_sweep(&all);
        assert_eq!(
            result.status.code(),
            Some(2),
            "{all:?}: {}",
            stderr(&result)
        );
        assert!(
            stderr(&result).contains(expected),
            "{all:?}: {}",
            stderr(&result)
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

/// A reader that closes the pipe after the first line (`… | head -1`)
/// ends the run as it ends `cat`: by SIGPIPE, with no panic, and with the
/// files the run writes before its summary written.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("identify");
    // The header comes first, the summary after the sweep: by then the
    // reader has gone.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
        .args([
            "identify",
            "--backend",
            "cpu",
            "--elements",
            "5",
            "--damping",
            "1000,2000",
        ])
        .args(["--drag-coefficient", "0.8", "--no-refine", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .unwrap();
        // The reader goes: the pipe closes with lines still to print.
    }
    let output = child.wait_with_output().unwrap();
    let err = stderr(&output);
    assert!(first.starts_with("identify: 2 candidates"), "{first}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {err}",
        output.status
    );
    assert!(out.join("results.parquet").is_file());
}

/// A measured "file" that never ends (`/dev/zero` behind a .csv name) is
/// refused once the film's limit is read, not read until memory runs out.
#[cfg(unix)]
#[test]
fn a_measured_file_that_never_ends_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let endless = dir.path().join("film.csv");
    std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();
    let out = dir.path().join("out");
    let run = tether_sweep(&[
        "identify",
        "--measured",
        endless.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("film.csv") && err.contains("128 MiB"), "{err}");
    assert!(!out.exists(), "nothing written");
}

/// The fault injector's inputs (issue 54): each refused with exit 2 and
/// what it named, nothing written and no panic: a negative tolerance and
/// shard read as values, tolerances out of the solver's range, a tether key
/// out of its range, an axis value that would overflow the model, a file
/// given as the output folder, and a pasted value echoed only in part.
#[test]
fn hostile_values_are_refused_by_range_with_short_messages() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let out = out.to_str().unwrap();
    let grid = [
        "--elements",
        "4",
        "--damping",
        "1000",
        "--drag-coefficient",
        "0.8",
    ];
    let identify = |extra: &[&'static str]| -> Vec<String> {
        let mut args = vec!["identify", "--backend", "cpu", "--out", out];
        args.extend(grid);
        args.extend(extra);
        args.into_iter().map(String::from).collect()
    };
    for (extra, expected) in [
        (
            &["--tolerance", "-1e-7"][..],
            &["invalid --tolerance = -1e-7", "1e-13 to 1e-3 m"][..],
        ),
        (
            &["--tolerance", "1e-300"],
            &["invalid --tolerance = 1e-300", "1e-13 to 1e-3 m"],
        ),
        (&["--tolerance", "1e10"], &["invalid --tolerance = 1e10"]),
        (&["--shard", "-1/3"], &["invalid --shard = '-1/3'"]),
        (
            &["--axis", "thickness_m=1e300"],
            &["thickness_m=1e300", "at most 1 m"],
        ),
    ] {
        let args = identify(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_rejected(dir.path(), &args, expected);
    }
    // design takes the same tolerance range.
    let planned = dir.path().join("design");
    let args = [
        "design",
        "--elements",
        "4",
        "--damping",
        "2000",
        "--drag-coefficient",
        "0.8",
        "--tolerance",
        "1e-300",
        "--out",
        planned.to_str().unwrap(),
    ];
    assert_rejected(
        dir.path(),
        &args,
        &["invalid --tolerance = 1e-300", "1e-13 to 1e-3 m"],
    );
    let config = dir.path().join("thick.toml");
    std::fs::write(&config, "[tether]\nthickness_m = 1e200\n").unwrap();
    let track = dir.path().join("t.parquet");
    let args = [
        "simulate",
        "--config",
        config.to_str().unwrap(),
        "--out",
        track.to_str().unwrap(),
    ];
    let refused = tether_sweep(&args);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("invalid thickness_m (in"),
        "{}",
        stderr(&refused)
    );
    assert!(!track.exists());
    std::fs::remove_file(&config).unwrap();
    // A long value pasted by mistake is named, not echoed whole.
    let pasted = format!("length_m={}", "9".repeat(5000));
    let mut args = identify(&[]);
    args.extend(["--axis".to_string(), pasted]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let refused = tether_sweep(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).len() < 1000, "{}", stderr(&refused).len());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A file where the output folder belongs.
    let file = dir.path().join("results");
    std::fs::write(&file, "mine").unwrap();
    let mut args = vec![
        "identify",
        "--backend",
        "cpu",
        "--out",
        file.to_str().unwrap(),
    ];
    args.extend(grid);
    let refused = tether_sweep(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("is a file, not a folder"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// Lengths whose tenths round past them (0.11 · 10 / 10 > 0.11) take the
/// default markers (issue 54).
#[test]
fn lengths_whose_tenths_round_up_simulate() {
    let dir = tempfile::tempdir().unwrap();
    for length in ["0.11", "0.21", "0.42", "0.49"] {
        let out = dir.path().join(format!("{length}.parquet"));
        let args = [
            "simulate",
            "--length",
            length,
            "--elements",
            "4",
            "--out",
            out.to_str().unwrap(),
        ];
        let run = tether_sweep(&args);
        assert_eq!(run.status.code(), Some(0), "{length}: {}", stderr(&run));
        let track = read_measured(&out).unwrap();
        assert_eq!(track.marker_count(), 11);
    }
}

/// `--state FILE`: every frame's nodal state. Its node values are the
/// track's: the cubic Hermite interpolation of a frame's nodes and slopes
/// gives every marker (between nodes too), node 0 is the pin; its
/// velocities are the positions' rates (central differences over frames
/// 2 ms apart); and a run that cannot record it is refused before any
/// file is made.
#[test]
fn the_nodal_state_is_the_tracks_and_its_rates() {
    use common::{f64_column, i32_column};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("fine.toml");
    std::fs::write(
        &config,
        "solver = \"reference\"\ntolerance_m = 1e-11\n[tether]\nelements = 4\ndamping_pa_s = 2000\ndrag_coefficient = 0.8\n[settings]\nframe_interval_s = 0.002\nduration_s = 0.3\n",
    )
    .unwrap();
    let (track, state) = (dir.path().join("t.parquet"), dir.path().join("s.parquet"));
    let o = tether_sweep(&[
        "simulate",
        "--config",
        config.to_str().unwrap(),
        "--out",
        track.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (track, state) = (read_table(&track).unwrap(), read_table(&state).unwrap());
    let (nodes, markers) = (5, 11);
    let frames = state.num_rows() / nodes;
    assert_eq!(frames * markers, track.num_rows());
    assert_eq!(i32_column(&state, "node")[..nodes], [0, 1, 2, 3, 4]);
    let col = |name| f64_column(&state, name);
    let (x, y, sx, sy, vx, vy) = (
        col("x"),
        col("y"),
        col("slope_x"),
        col("slope_y"),
        col("vx"),
        col("vy"),
    );
    let (mx, my, ms) = (
        f64_column(&track, "x"),
        f64_column(&track, "y"),
        f64_column(&track, "s"),
    );
    let element_m = 0.6 / 4.0;
    for f in [0, frames / 2, frames - 1] {
        for j in 0..markers {
            let s = ms[f * markers + j];
            let k = ((s / element_m).floor() as usize).min(3);
            let xi = s / element_m - k as f64;
            let h = [
                1.0 - 3.0 * xi * xi + 2.0 * xi.powi(3),
                element_m * (xi - 2.0 * xi * xi + xi.powi(3)),
                3.0 * xi * xi - 2.0 * xi.powi(3),
                element_m * (-xi * xi + xi.powi(3)),
            ];
            let (a, b) = (f * nodes + k, f * nodes + k + 1);
            let px = h[0] * x[a] + h[1] * sx[a] + h[2] * x[b] + h[3] * sx[b];
            let py = h[0] * y[a] + h[1] * sy[a] + h[2] * y[b] + h[3] * sy[b];
            let m = f * markers + j;
            assert!(
                (px - mx[m]).abs() < 1e-12 && (py - my[m]).abs() < 1e-12,
                "frame {f} marker {j}"
            );
        }
        assert_eq!((x[f * nodes], y[f * nodes]), (0.0, 0.0), "the pin");
    }
    let h = 0.002;
    let mut worst: f64 = 0.0;
    for f in 1..frames - 1 {
        for k in 0..nodes {
            let (before, at, after) = ((f - 1) * nodes + k, f * nodes + k, (f + 1) * nodes + k);
            worst = worst
                .max(((x[after] - x[before]) / (2.0 * h) - vx[at]).abs())
                .max(((y[after] - y[before]) / (2.0 * h) - vy[at]).abs());
        }
    }
    let fastest = vx.iter().chain(&vy).fold(0.0_f64, |m, v| m.max(v.abs()));
    assert!(
        fastest > 1.0 && worst < 1e-3 * fastest,
        "{worst} of {fastest} m/s"
    );
    // Refused with nothing written: the GPU engine (markers only), a
    // body's run, the track's own file.
    let out = dir.path().join("refused");
    std::fs::create_dir(&out).unwrap();
    let file = |name: &str| out.join(name).to_str().unwrap().to_string();
    let (t, s) = (file("t.parquet"), file("s.parquet"));
    for (args, expected) in [
        (
            vec!["simulate", "--out", &t, "--state", &s, "--backend", "gpu"],
            "the GPU engine reads back markers only",
        ),
        (
            vec!["simulate", "--scenario", "arm", "--out", &t, "--state", &s],
            "--state is the tether's drop or swing-up run's",
        ),
        (
            vec!["simulate", "--out", &t, "--state", &t],
            "is the track's --out",
        ),
        (
            vec!["simulate", "--out", &t, "--state", &file("s.txt")],
            "--state",
        ),
    ] {
        assert_rejected(&out, &args, &[expected]);
    }
}
