//! Running the `tether-sweep` binary from integration tests.

use std::process::{Command, Output};

/// Runs the binary built for this test run with `args`.
#[allow(dead_code)] // not every test crate runs the binary
pub fn tether_sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// Runs the binary with `args`, sends it Ctrl-C (SIGINT, by the shell's
/// own `kill`: no procps needed) once `chunks` holds a saved chunk, and
/// checks that it stopped as an interrupted run does: exit 130, the saved
/// chunks and `--resume` named, no results table in `out`.
#[allow(dead_code)]
pub fn interrupt_once_a_chunk_is_saved<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    chunks: &std::path::Path,
    out: &std::path::Path,
) -> Output {
    use std::time::{Duration, Instant};
    let child = Command::new(env!("CARGO_BIN_EXE_tether-sweep"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::read_dir(chunks).map_or(0, |d| d.count()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no chunk saved"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
    result
}

/// A path as a command-line argument.
#[allow(dead_code)]
pub fn path_str(p: &std::path::Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[allow(dead_code)]
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A table's column `name` as the array type `A`, or a panic that names
/// the column and the type.
#[allow(dead_code)] // not every test crate reads tables
fn typed_column<'t, A: 'static>(table: &'t arrow::record_batch::RecordBatch, name: &str) -> &'t A {
    table
        .column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"))
        .as_any()
        .downcast_ref::<A>()
        .unwrap_or_else(|| panic!("{name} is not {}", std::any::type_name::<A>()))
}

/// A Float64 column of a results or track table, by name.
#[allow(dead_code)]
pub fn f64_column(table: &arrow::record_batch::RecordBatch, name: &str) -> Vec<f64> {
    typed_column::<arrow::array::Float64Array>(table, name)
        .values()
        .to_vec()
}

/// A nullable Float64 column of a table, by name.
#[allow(dead_code)]
pub fn optional_f64_column(
    table: &arrow::record_batch::RecordBatch,
    name: &str,
) -> Vec<Option<f64>> {
    typed_column::<arrow::array::Float64Array>(table, name)
        .iter()
        .collect()
}

/// An Int64 column of a table, by name.
#[allow(dead_code)]
pub fn i64_column(table: &arrow::record_batch::RecordBatch, name: &str) -> Vec<i64> {
    typed_column::<arrow::array::Int64Array>(table, name)
        .values()
        .to_vec()
}

/// A Utf8 column of a table, by name (nulls as "").
#[allow(dead_code)]
pub fn text_column(table: &arrow::record_batch::RecordBatch, name: &str) -> Vec<String> {
    typed_column::<arrow::array::StringArray>(table, name)
        .iter()
        .map(|s| s.unwrap_or_default().to_string())
        .collect()
}

/// An Int32 column of a table, by name.
#[allow(dead_code)]
pub fn i32_column(table: &arrow::record_batch::RecordBatch, name: &str) -> Vec<i32> {
    typed_column::<arrow::array::Int32Array>(table, name)
        .values()
        .to_vec()
}

/// Default tether parameters with n, D [Pa·s], C_D and the tip mass [kg] set.
#[allow(dead_code)] // not every test crate simulates
pub fn params(n: usize, damping: f64, drag: f64, tip: f64) -> tether_sweep::model::TetherParams {
    tether_sweep::model::TetherParams {
        elements: n,
        damping_pa_s: damping,
        drag_coefficient: drag,
        tip_mass_kg: tip,
        ..Default::default()
    }
}

/// The CPU solver of `sim`'s scheme on `sim`'s tether and step: what the GPU
/// engine and its mirror must reproduce up to precision.
#[allow(dead_code)] // only the GPU and mirror tests compare with it
pub fn cpu_on_the_same_step(
    scenario: &tether_sweep::scenario::Scenario,
    sim: &tether_sweep::gpu::GpuSimulation,
) -> tether_sweep::scenario::SimulationOutput {
    tether_sweep::scenario::simulate(
        scenario,
        &sim.params,
        &tether_sweep::scenario::SolverSettings {
            kind: sim.scheme.into(),
            step_s: Some(sim.step_s),
            ..Default::default()
        },
    )
    .unwrap()
}

/// The largest distance between corresponding points of two tracks [m].
#[allow(dead_code)] // not every test crate compares tracks
pub fn largest_distance(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x[0] - y[0]).hypot(x[1] - y[1]))
        .fold(0.0, f64::max)
}

/// Whether the GPU halves of the tests run: always, unless
/// TETHER_SWEEP_SKIP_GPU_TESTS says to skip them (and then the skip is
/// printed). Without it a test that needs an adapter fails when there is
/// none, because a silently skipped GPU test proves nothing.
#[allow(dead_code)] // not every test crate has GPU halves
pub fn gpu_tests_run(what: &str) -> bool {
    let run = std::env::var_os("TETHER_SWEEP_SKIP_GPU_TESTS").is_none();
    if !run {
        eprintln!("{what} skipped (TETHER_SWEEP_SKIP_GPU_TESTS)");
    }
    run
}

/// The adapter wgpu chooses, for a test that needs one; None when
/// [`gpu_tests_run`] says to skip.
#[allow(dead_code)]
pub fn open_gpu() -> Option<tether_sweep::gpu::Gpu> {
    if !gpu_tests_run("GPU tests") {
        return None;
    }
    let gpu = tether_sweep::gpu::Gpu::open(None).expect(
        "a GPU adapter (CI installs lavapipe: apt-get install mesa-vulkan-drivers); \
         set TETHER_SWEEP_SKIP_GPU_TESTS=1 to skip",
    );
    eprintln!("adapter: {}", gpu.adapter);
    Some(gpu)
}

/// The adaptive scheme's landings for `scenario`: its frames after the
/// release and, for a swing-up, every J_a sample.
#[allow(dead_code)] // only the adaptive scheme's tests land
pub fn landings(
    scenario: &tether_sweep::scenario::Scenario,
) -> tether_sweep::gpu::adaptive::Landings {
    use tether_sweep::scenario::ScenarioKind;
    tether_sweep::gpu::adaptive::Landings {
        frame_times_s: scenario
            .frame_times_s()
            .into_iter()
            .map(|t| scenario.model_time_s(t))
            .filter(|&t| t > 0.0)
            .collect(),
        samples: (scenario.kind() == ScenarioKind::Swingup)
            .then(|| (scenario.sample_interval_s(), scenario.sample_count() as u64)),
    }
}

/// The reference solver's options at `tolerance_m`, as the adaptive
/// scheme takes them.
#[allow(dead_code)]
pub fn adaptive_options(tolerance_m: f64) -> tether_sweep::gpu::adaptive::AdaptiveOptions {
    let r = tether_sweep::solver::ReferenceOptions {
        tolerance_m,
        ..Default::default()
    };
    tether_sweep::gpu::adaptive::AdaptiveOptions {
        tolerance_m: r.tolerance_m,
        spectral_radius: r.spectral_radius,
        max_step_s: r.max_step_s,
        initial_step_s: r.initial_step_s,
    }
}
