//! `tether-sweep identify` end to end on datasets made inside the test with
//! known truth on the grid (CPU backend).

mod common;

use std::path::Path;

use common::{stderr, tether_sweep as run};

use tether_sweep::io::track::{read_parquet_metadata, read_table};

fn synth(out: &Path, noise: &str) {
    let o = run(&[
        "dataset",
        "synth",
        "--elements",
        "6",
        "--damping",
        "2000",
        "--drag-coefficient",
        "0.8",
        "--noise",
        noise,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn identify(measured: &Path, out: &Path) -> String {
    let o = run(&[
        "identify",
        "--measured",
        measured.to_str().unwrap(),
        "--elements",
        "6",
        "--damping",
        "1000:3000:500",
        "--drag-coefficient",
        "0.7:0.9:0.1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn noise_free_truth_on_the_grid_is_recovered_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("m.parquet");
    synth(&measured, "0");
    let out = dir.path().join("id");
    let stdout = identify(&measured, &out);
    assert!(
        stdout.contains("best: n =   6, D =  2000.0 Pa·s, C_D = 0.800"),
        "{stdout}"
    );
    let table = read_table(&out.join("results.parquet")).unwrap();
    assert_eq!(table.num_rows(), 5 * 3);
    let names: Vec<String> = table
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    for expected in [
        "elements",
        "damping_pa_s",
        "drag_coefficient",
        "j_e_m2",
        "status",
        "step_s",
        "steps",
        "backend",
        "precision",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "results lack {expected}: {names:?}"
        );
    }
    let j = common::f64_column(&table, "j_e_m2");
    let status = common::text_column(&table, "status");
    assert!(status.iter().all(|s| s == "ok"));
    // At the truth J_e is the solvers' tolerance-level difference; elsewhere
    // it is the squared effect of a 500 Pa·s or 0.1 step: far larger.
    let (mut best, mut second) = (f64::INFINITY, f64::INFINITY);
    for v in j.iter() {
        if *v < best {
            second = best;
            best = *v;
        } else if *v < second {
            second = *v;
        }
    }
    assert!(
        best < 1e-10 && second > 100.0 * best,
        "best {best:e}, second {second:e}"
    );
    let meta = read_parquet_metadata(&out.join("results.parquet")).unwrap();
    for key in [
        "tether_sweep.grid",
        "tether_sweep.measured",
        "tether_sweep.tether",
        "tether_sweep.summary",
    ] {
        assert!(meta.contains_key(key), "metadata lacks {key}");
    }
}

#[test]
fn with_noise_the_truth_lies_in_the_confidence_region() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("m.parquet");
    synth(&measured, "0.0005");
    let stdout = identify(&measured, &dir.path().join("id"));
    let line = |prefix: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap()
            .to_string()
    };
    let bounds = |l: String| -> (f64, f64) {
        let inner = &l[l.find('[').unwrap() + 1..l.find(']').unwrap()];
        let mut it = inner.split(',').map(|v| v.trim().parse::<f64>().unwrap());
        (it.next().unwrap(), it.next().unwrap())
    };
    let (d_lo, d_hi) = bounds(line("D   in"));
    let (c_lo, c_hi) = bounds(line("C_D in"));
    assert!(d_lo <= 2000.0 && 2000.0 <= d_hi, "{stdout}");
    assert!(c_lo <= 0.8 + 1e-9 && 0.8 - 1e-9 <= c_hi, "{stdout}");
    // σ estimated from the residual at the optimum: the 0.5 mm put in.
    let sigma_mm: f64 = stdout
        .split("σ ≈ ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (sigma_mm / 0.5 - 1.0).abs() < 0.1,
        "σ ≈ {sigma_mm} mm: {stdout}"
    );
}

#[test]
fn bad_inputs_fail_before_any_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("id");
    let bad_csv = dir.path().join("bad.csv");
    std::fs::write(&bad_csv, "t,marker,x\n0.04,0,1.0\n").unwrap();
    let partial = dir.path().join("partial.csv");
    std::fs::write(&partial, "t,marker,x,y\n0.04,0,0.0,0.0\n").unwrap();
    let nan = dir.path().join("nan.csv");
    std::fs::write(&nan, "t,marker,x,y\n0.04,0,NaN,0.0\n").unwrap();
    let out_s = out.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["--measured", bad_csv.to_str().unwrap()],
            "missing column `y`",
        ),
        (
            vec!["--measured", partial.to_str().unwrap()],
            "no marker 1 at t = 0.0400",
        ),
        (vec!["--measured", nan.to_str().unwrap()], "non-finite"),
        (vec!["--measured", "/no/such.parquet"], "cannot read"),
        (vec!["--damping", "0:100:0"], "step > 0"),
        (vec!["--damping", "100:0:10"], "stop >= start"),
        (vec!["--elements", "0"], "elements"),
    ] {
        let mut all = vec!["identify", "--out", out_s];
        all.extend(args.iter().copied());
        let o = run(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(expected), "{all:?}: {err}");
        assert!(!out.exists(), "{all:?} created the output directory");
    }
}
