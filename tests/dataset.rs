//! The shipped synthetic dataset: regenerated bit for bit by the command its
//! README gives, and its noise is what it claims.

mod common;

use std::path::Path;

use arrow::array::{Array, Float64Array, Int32Array};
use tether_sweep::io::track::{read_parquet_metadata, read_table};

fn synth(out: &Path, extra: &[&str]) {
    let mut args = vec!["dataset", "synth", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = common::tether_sweep(&args);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

fn columns(path: &Path) -> (Vec<f64>, Vec<i32>, Vec<f64>, Vec<f64>) {
    let batch = read_table(path).unwrap();
    let f = |name: &str| {
        let c = batch.column_by_name(name).unwrap();
        c.as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
            .values()
            .to_vec()
    };
    let marker = batch
        .column_by_name("marker")
        .unwrap()
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap()
        .values()
        .to_vec();
    (f("t"), marker, f("x"), f("y"))
}

#[test]
fn shipped_dataset_regenerates_bit_for_bit() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/drop_synthetic.parquet");
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("d.parquet");
    synth(&fresh, &[]);
    let (a, b) = (columns(&shipped), columns(&fresh));
    assert_eq!(a.0.len(), 51 * 11);
    assert_eq!(a, b, "data differ from the shipped file");
    let meta = read_parquet_metadata(&shipped).unwrap();
    let spec = &meta["tether_sweep.dataset"];
    for needle in [
        "\"elements\":80",
        "\"damping_pa_s\":2000.0",
        "\"drag_coefficient\":0.8",
        "\"noise_std_m\":0.0005",
        "\"seed\":2010",
    ] {
        assert!(spec.contains(needle), "metadata lacks {needle}: {spec}");
    }
}

#[test]
fn noise_has_the_stated_spread() {
    let dir = tempfile::tempdir().unwrap();
    let (noisy, clean) = (dir.path().join("n.parquet"), dir.path().join("c.parquet"));
    synth(&noisy, &["--elements", "20"]);
    synth(&clean, &["--elements", "20", "--noise", "0"]);
    let (n, c) = (columns(&noisy), columns(&clean));
    let residuals: Vec<f64> =
        n.2.iter()
            .zip(&c.2)
            .chain(n.3.iter().zip(&c.3))
            .map(|(a, b)| a - b)
            .collect();
    let count = residuals.len() as f64;
    let mean = residuals.iter().sum::<f64>() / count;
    let std = (residuals.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / count).sqrt();
    // 1122 draws: the sample σ is within ~4 % (two standard errors) of 0.5 mm.
    assert!((std / 5e-4 - 1.0).abs() < 0.06, "σ = {std:e}");
    assert!(mean.abs() < 4.0 * 5e-4 / count.sqrt(), "mean {mean:e}");
}

/// The filmed drop of the worked example in docs/identify.md: frames at
/// the camera's times (30 fps, jittered) and a release between frames, as
/// `dataset synth --config` makes it.
#[test]
fn filmed_dataset_regenerates_bit_for_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped = root.join("datasets/filmed_synthetic.parquet");
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("f.parquet");
    let config = root.join("examples/filmed_drop_truth.toml");
    synth(
        &fresh,
        &[
            "--config",
            config.to_str().unwrap(),
            "--elements",
            "12",
            "--damping",
            "2300",
            "--drag-coefficient",
            "0.77",
            "--noise",
            "0.0004",
            "--seed",
            "18",
        ],
    );
    let (a, b) = (columns(&shipped), columns(&fresh));
    assert_eq!(a.0.len(), 31 * 7);
    assert_eq!(a, b, "data differ from the shipped file");
    // The camera's own times, jitter included, and the held shape before
    // the release at 0.02 s: frame 0 is the straight tether at 30°.
    assert_eq!(
        a.0[2 * 7],
        0.066669667,
        "2/30 s + 3 µs, as the config writes it"
    );
    let tip = a.1.iter().position(|&m| m == 6).unwrap();
    let angle = 30f64.to_radians();
    assert!((a.2[tip] - (0.1 + 0.5 * angle.sin())).abs() < 0.002);
    assert!((a.3[tip] - (0.2 - 0.5 * angle.cos())).abs() < 0.002);
}

/// The tracker's export of docs/identify.md ("A tracker's export"): a wide
/// CSV in pixels, y down, on a clock that starts at 7.5 s, regenerated bit
/// for bit by the command in examples/tracker_film.toml.
#[test]
fn tracker_film_regenerates_bit_for_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = root.join("examples/tracker_film.toml");
    let command = std::fs::read_to_string(&config).unwrap();
    assert!(
        command.contains("--seed 23 --layout wide"),
        "the command is documented"
    );
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("film.csv");
    synth(
        &fresh,
        &[
            "--config",
            config.to_str().unwrap(),
            "--elements",
            "8",
            "--damping",
            "2300",
            "--drag-coefficient",
            "0.77",
            "--noise",
            "0.0004",
            "--seed",
            "23",
            "--layout",
            "wide",
        ],
    );
    let shipped = std::fs::read_to_string(root.join("datasets/tracker_film.csv")).unwrap();
    assert!(shipped.starts_with("t,x0,y0,x1,y1,"), "a wide export");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), shipped);
}

/// The two films of docs/identify.md's joint example ("Several films of
/// one tether"), regenerated bit for bit by the commands in their configs.
#[test]
fn the_joint_examples_films_regenerate_bit_for_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (film, seed) in [("shallow", "1"), ("steep", "2")] {
        let config = root.join(format!("examples/joint_{film}.toml"));
        let command = std::fs::read_to_string(&config).unwrap();
        assert!(
            command.contains(&format!("--seed {seed} --out datasets/joint_{film}.csv")),
            "the command is documented"
        );
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("film.csv");
        synth(
            &fresh,
            &[
                "--config",
                config.to_str().unwrap(),
                "--elements",
                "24",
                "--damping",
                "2000",
                "--drag-coefficient",
                "0.8",
                "--noise",
                "0.0004",
                "--seed",
                seed,
            ],
        );
        let shipped =
            std::fs::read_to_string(root.join(format!("datasets/joint_{film}.csv"))).unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), shipped, "{film}");
    }
}
