//! `design`: the standard errors it predicts before filming are those the
//! refinement reports on the film's data, a steep release pins D down far
//! better than the paper's 45°, and several films add their information.

mod common;

use std::path::Path;

use common::{f64_column, path_str as path, stderr, tether_sweep};
use tether_sweep::io::track::read_table;

/// A planned film at `angle_deg`: 25 fps for 2 s, the paper's eleven
/// markers, n = 6 (the grid's n below, so that the mesh adds no error).
fn planned(dir: &Path, angle_deg: f64) -> std::path::PathBuf {
    let config = dir.join(format!("at{angle_deg}.toml"));
    std::fs::write(
        &config,
        format!("[tether]\nelements = 6\n[settings]\ninitial_angle_deg = {angle_deg}\n"),
    )
    .unwrap();
    config
}

/// The films' tether and noise: the designed values, and the truth of
/// the synthetic films.
const TRUTH: [&str; 8] = [
    "--elements",
    "6",
    "--damping",
    "2000",
    "--drag-coefficient",
    "0.8",
    "--noise",
    "0.0005",
];

/// The refined standard errors of D and C_D from identifying a synthetic
/// film of `config` (truth D = 2000 Pa·s, C_D = 0.8, 0.5 mm noise).
fn refined_errors(dir: &Path, config: &Path, seed: &str) -> [f64; 2] {
    let measured = dir.join(format!("m{seed}.parquet"));
    let mut args = vec!["dataset", "synth", "--config", path(config)];
    args.extend(TRUTH);
    args.extend(["--seed", seed, "--out", path(&measured)]);
    let o = tether_sweep(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join(format!("id{seed}"));
    let o = tether_sweep(&[
        "identify",
        "--config",
        path(config),
        "--measured",
        path(&measured),
        "--elements",
        "6",
        "--damping",
        "1000:3000:250",
        "--drag-coefficient",
        "0.78:0.82:0.01",
        "--backend",
        "cpu",
        "--validate",
        "0",
        "--out",
        path(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let refined = read_table(&out.join("refined.parquet")).unwrap();
    let se = f64_column(&refined, "standard_error");
    [se[0], se[1]]
}

#[test]
fn predicted_errors_are_the_refinements_and_a_steep_release_wins() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("design");
    let mut args = vec!["design"];
    args.extend(TRUTH);
    args.extend(["--axis", "initial_angle_deg=45,90", "--out", path(&out)]);
    let o = tether_sweep(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("best for damping_pa_s: initial_angle_deg = 90"),
        "{stdout}"
    );
    let table = read_table(&out.join("design.parquet")).unwrap();
    assert_eq!(f64_column(&table, "initial_angle_deg"), [45.0, 90.0]);
    let se_d = f64_column(&table, "se_damping_pa_s");
    let se_c = f64_column(&table, "se_drag_coefficient");
    // At n = 6, 90° determines D three times better than 45°; on the
    // finer mesh of the measurements (n = 20: 563 against 53
    // Pa·s, refined on synthetic films) ten times.
    assert!(se_d[1] < se_d[0] / 3.0, "{se_d:?}");
    let fine = dir.path().join("fine");
    let o = tether_sweep(&[
        "design",
        "--elements",
        "20",
        "--damping",
        "2000",
        "--drag-coefficient",
        "0.8",
        "--axis",
        "initial_angle_deg=45,90",
        "--out",
        path(&fine),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fine_d = f64_column(
        &read_table(&fine.join("design.parquet")).unwrap(),
        "se_damping_pa_s",
    );
    assert!((fine_d[0] / 563.0 - 1.0).abs() < 0.1, "{fine_d:?}");
    assert!((fine_d[1] / 53.0 - 1.0).abs() < 0.1, "{fine_d:?}");
    assert!(out.join("design.svg").exists() && out.join("design.png").exists());
    // Each film's data, identified: the refinement's standard errors are
    // the prediction's within a factor of 1.5.
    for (i, angle) in [45.0, 90.0].into_iter().enumerate() {
        let [d, c] = refined_errors(
            dir.path(),
            &planned(dir.path(), angle),
            &format!("{}", 7 + i),
        );
        eprintln!(
            "{angle}°: D predicted {} refined {d}; C_D predicted {} refined {c}",
            se_d[i], se_c[i]
        );
        for (predicted, refined) in [(se_d[i], d), (se_c[i], c)] {
            let ratio = refined / predicted;
            assert!(
                (1.0 / 1.5..1.5).contains(&ratio),
                "{angle}°: {refined} against {predicted}"
            );
        }
    }
}

#[test]
fn several_films_add_their_information_and_each_has_its_own_release() {
    let dir = tempfile::tempdir().unwrap();
    let shallow = planned(dir.path(), 45.0);
    let steep = dir.path().join("steep.toml");
    std::fs::write(
        &steep,
        "[tether]\nelements = 6\n[settings]\nname = \"high\"\ninitial_angle_deg = 90.0\nrelease_time_s = 0.013\n",
    )
    .unwrap();
    let design = |configs: &[&Path], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec!["design"];
        for c in configs {
            args.extend(["--config", path(c)]);
        }
        args.extend([
            "--damping",
            "2000",
            "--drag-coefficient",
            "0.8",
            "--estimate",
            "release_time_s",
            "--out",
            path(&out),
        ]);
        let o = tether_sweep(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        read_table(&out.join("design.parquet")).unwrap()
    };
    let alone = design(&[&shallow], "alone");
    let joint = design(&[&shallow, &steep], "joint");
    // One release per film, named after it (the stem, or [settings] name).
    assert!(joint.column_by_name("se_at45.release_time_s").is_some());
    assert!(joint.column_by_name("se_high.release_time_s").is_some());
    assert!(alone.column_by_name("se_release_time_s").is_some());
    let d = |t| f64_column(t, "se_damping_pa_s")[0];
    assert!(d(&joint) < d(&alone) / 2.0, "{} {}", d(&joint), d(&alone));
    // The shallow film's own release is no better known for the other film.
    let release = f64_column(&alone, "se_release_time_s")[0];
    let joint_release = f64_column(&joint, "se_at45.release_time_s")[0];
    assert!(joint_release <= release * 1.0001 && joint_release > 0.5 * release);
}

#[test]
fn a_design_without_the_values_it_assumes_or_with_a_bad_axis_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let o = tether_sweep(&["design", "--drag-coefficient", "0.8", "--out", path(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --damping"), "{}", stderr(&o));
    let o = tether_sweep(&[
        "design",
        "--damping",
        "2000",
        "--drag-coefficient",
        "0.8",
        "--axis",
        "duration_s=0.9,1.03",
        "--out",
        path(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "invalid --axis duration_s = 0.9: must be a whole multiple of the frame interval 0.04 s"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // A config's solver keys: design chooses its own solver (--tolerance),
    // so a key it would ignore is refused by name.
    for key in [
        "implicit_method = \"esdirk43\"",
        "tolerance_m = 1e-6",
        "solver = \"explicit\"",
    ] {
        let config = dir.path().join("solver.toml");
        let planned = std::fs::read_to_string(planned(dir.path(), 90.0)).unwrap();
        std::fs::write(&config, format!("{key}\n{planned}")).unwrap();
        let o = tether_sweep(&["design", "--config", path(&config), "--out", path(&out)]);
        let name = key.split(' ').next().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("`{name}` is not read by design"))
                && stderr(&o).contains("--tolerance the solver"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
}

/// The standard errors of one design run (one row per point), by column.
fn predicted(args: &[&str], out: &Path) -> arrow::record_batch::RecordBatch {
    let mut all = vec!["design"];
    all.extend(args);
    all.extend(["--out", path(out)]);
    let o = tether_sweep(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    read_table(&out.join("design.parquet")).unwrap()
}

#[test]
fn more_markers_tell_more_and_eleven_are_the_papers() {
    let dir = tempfile::tempdir().unwrap();
    let table = predicted(
        &[
            "--elements",
            "6",
            "--damping",
            "2000",
            "--drag-coefficient",
            "0.8",
            "--axis",
            "markers=3,6,11,21",
        ],
        &dir.path().join("markers"),
    );
    assert_eq!(f64_column(&table, "markers"), [3.0, 6.0, 11.0, 21.0]);
    let se = f64_column(&table, "se_damping_pa_s");
    assert!(se.windows(2).all(|w| w[1] < w[0]), "{se:?}");
    // Eleven evenly spaced markers are the paper's drop as planned.
    let paper = predicted(
        &[
            "--elements",
            "6",
            "--damping",
            "2000",
            "--drag-coefficient",
            "0.8",
        ],
        &dir.path().join("paper"),
    );
    let paper_se = f64_column(&paper, "se_damping_pa_s")[0];
    assert!(
        (se[2] / paper_se - 1.0).abs() < 1e-9,
        "{} {paper_se}",
        se[2]
    );
    // A marker count that is not a whole number from 2 is refused, and a
    // frame interval or a duration beyond its range (issue 43's crashes).
    for bad in [
        "markers=1",
        "markers=4.5",
        "frame_interval_s=1e-9",
        "duration_s=1e9",
    ] {
        let out = dir.path().join("bad");
        let o = tether_sweep(&[
            "design",
            "--elements",
            "6",
            "--damping",
            "2000",
            "--drag-coefficient",
            "0.8",
            "--axis",
            bad,
            "--out",
            path(&out),
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let name = bad.split('=').next().unwrap();
        assert!(
            stderr(&o).contains(&format!("--axis {name}")),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
}

/// examples/tracker_film.toml as a plan from the shipped tracker's file:
/// `measured` names the file (whose frames replace `frame_times_s`), the
/// film is named `tracker`, and the keys `without` are left out.
fn tracker_config_from_file(without: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("examples/tracker_film.toml")).unwrap();
    text.lines()
        .filter(|l| {
            !l.starts_with("frame_times_s") && !without.iter().any(|key| l.starts_with(key))
        })
        .map(|l| match l {
            "[settings]" => format!(
                "[settings]\nname = \"tracker\"\nmeasured = \"{}\"",
                root.join("datasets/tracker_film.csv").display()
            ),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_planned_film_takes_its_frames_from_a_film_already_taken() {
    // The tracker's export (pixels, y down, a tilted camera, the camera's
    // clock): named as `measured`, its frames are those its config
    // declares, so the prediction is the same. (A wide file has no `s`
    // column: the markers' arc lengths stay in the config.)
    let dir = tempfile::tempdir().unwrap();
    let declared = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tracker_film.toml");
    let measured = dir.path().join("from_file.toml");
    std::fs::write(&measured, tracker_config_from_file(&[])).unwrap();
    let args = |config: &Path| {
        vec![
            "--config".to_string(),
            path(config).to_string(),
            "--elements".into(),
            "8".into(),
            "--damping".into(),
            "2300".into(),
            "--drag-coefficient".into(),
            "0.77".into(),
            "--estimate".into(),
            "release_time_s".into(),
        ]
    };
    let run = |config: &Path, out: &str| {
        let a = args(config);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        predicted(&refs, &dir.path().join(out))
    };
    let (a, b) = (run(&declared, "declared"), run(&measured, "measured"));
    assert_eq!(b.num_rows(), 1);
    for column in [
        "se_damping_pa_s",
        "se_drag_coefficient",
        "se_release_time_s",
    ] {
        let (x, y) = (f64_column(&a, column)[0], f64_column(&b, column)[0]);
        assert!(
            (x / y - 1.0).abs() < 1e-6,
            "{column}: {x} declared, {y} from the file"
        );
    }
}

#[test]
fn the_gpu_predicts_what_the_cpu_does() {
    if !common::gpu_tests_run("this test") {
        return;
    }
    // The two films of docs/identify.md's joint example, each with its
    // own release estimated, over two angles of the steep film: the GPU's
    // fixed-step scheme in f64 against the reference solver.
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (shallow, steep) = (
        root.join("examples/joint_shallow.toml"),
        root.join("examples/joint_steep.toml"),
    );
    let on = |backend: &str| {
        predicted(
            &[
                "--config",
                path(&shallow),
                "--config",
                path(&steep),
                "--elements",
                "12",
                "--damping",
                "2000",
                "--drag-coefficient",
                "0.8",
                "--noise",
                "0.0004",
                "--estimate",
                "release_time_s",
                "--axis",
                "steep.initial_angle_deg=60,90",
                "--backend",
                backend,
            ],
            &dir.path().join(backend),
        )
    };
    let (cpu, gpu) = (on("cpu"), on("gpu"));
    let engine = |backend: &str| {
        let path = dir.path().join(backend).join("design.parquet");
        tether_sweep::io::track::read_parquet_metadata(&path).unwrap()
            [tether_sweep::metadata::ENGINE]
            .clone()
    };
    assert!(engine("gpu").contains("gpu"), "{}", engine("gpu"));
    for column in [
        "se_damping_pa_s",
        "se_drag_coefficient",
        "se_shallow.release_time_s",
        "se_steep.release_time_s",
    ] {
        for (c, g) in f64_column(&cpu, column)
            .iter()
            .zip(f64_column(&gpu, column))
        {
            assert!((g / c - 1.0).abs() < 0.02, "{column}: {g} GPU, {c} CPU");
        }
    }
}

/// A planned film from a tracker's file whose config gives no release
/// (the camera's clock starts at 7.5 s): released at the first frame, with
/// a note; an `--axis FILM.release_time_s` (the advice) or a value in the
/// config are taken as given, and the config's value predicts what the
/// axis at the same value does.
#[test]
fn a_planned_films_release_is_a_value_an_axis_or_its_first_frame() {
    let dir = tempfile::tempdir().unwrap();
    let config = |release: bool| match release {
        true => tracker_config_from_file(&[]),
        false => tracker_config_from_file(&["release_time_s"]),
    };
    let (with, without) = (
        dir.path().join("with.toml"),
        dir.path().join("without.toml"),
    );
    std::fs::write(&with, config(true)).unwrap();
    std::fs::write(&without, config(false)).unwrap();
    let design = |config: &Path, extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec!["design", "--config", path(config), "--backend", "cpu"];
        args.extend_from_slice(&[
            "--elements",
            "8",
            "--damping",
            "2300",
            "--drag-coefficient",
            "0.77",
        ]);
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", path(&out)]);
        let output = tether_sweep(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let table = read_table(&out.join("design.parquet")).unwrap();
        (
            String::from_utf8_lossy(&output.stdout).to_string(),
            f64_column(&table, "se_damping_pa_s"),
        )
    };
    let (note, first_frame) = design(&without, &[], "first");
    assert!(
        note.contains("film tracker: released at its first frame, t = 7.4998 s"),
        "{note}"
    );
    let (axis_out, on_axis) = design(
        &without,
        &["--axis", "tracker.release_time_s=7.5083"],
        "axis",
    );
    assert!(!axis_out.contains("first frame"), "{axis_out}");
    let (value_out, as_given) = design(&with, &[], "value");
    assert!(!value_out.contains("first frame"), "{value_out}");
    assert_eq!(on_axis.len(), 1);
    assert!(
        (on_axis[0] / as_given[0] - 1.0).abs() < 1e-9,
        "the axis at the config's value: {} against {}",
        on_axis[0],
        as_given[0]
    );
    // A release 8.5 ms earlier is another experiment.
    assert!(
        (first_frame[0] / as_given[0] - 1.0).abs() > 1e-6,
        "{} against {}",
        first_frame[0],
        as_given[0]
    );
}
