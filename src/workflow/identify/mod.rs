//! Identification: one tether fitted to one film or several. Every
//! candidate of the grid (n, D, C_D and any parameter axis, times each
//! film's own axes) is simulated on each film's experiment and scored by
//! J_e against its measured track, whole or as one shard of N, chunk by
//! chunk so that a killed run can resume. Then the first pass is confirmed
//! at the data's tolerance, the films' J_e combined (each film at its best
//! own values, weighed by the inverse of its noise variance:
//! `sweep::joint`; one film's J_e is its own), summarized, refined,
//! validated against the f64 reference solver, judged against the data's
//! noise and written with the best fits and the figures.
//!
//! A single film is a study of one film: the same path, whose tables keep
//! a single film's layout (no `FILM.` columns, `best_fit.parquet`).
//! [`prepare`] checks the request, claims the output, opens the saved
//! chunks and chooses the engine, and says what it will do ([`Plan`]);
//! [`PreparedIdentification::run`] runs it; [`merge`] finishes a sharded
//! run's parts (`summarize`) as a whole run finishes its own sweep.
//!
//! One file a job: the inputs as a user gives them, through either door
//! (`inputs`, each named and described in `keywords`), the request (`request`), its checks (`checks`), the
//! engine and chunk choice (`engine`), the chunked sweep with resume
//! (`sweep`) and shards (`shard`), finishing (`finish`, `outputs`), which
//! known input to free when the fit does not explain the data (`free`),
//! the tables' metadata (`record`), merging a sharded run (`merge`).

mod checks;
mod engine;
mod finish;
mod free;
mod inputs;
mod keywords;
mod merge;
mod outputs;
mod record;
mod report;
mod request;
mod shard;
mod shipped;
mod sweep;

pub use engine::{CHOICE_SAMPLE_GROUPS, CPU_CHUNK_CANDIDATES_PER_THREAD, GPU_CHUNK_CANDIDATES};
pub use free::FreedInput;
pub use inputs::{AxisInput, GridInput, IdentifyInputs, config_error};
pub use keywords::{KEYWORDS, keyword};
pub use merge::merge;
pub use outputs::{best_fit_path, check_outcome};
pub use record::{engine_names, sweep_tether, sweep_tether_json};
pub use report::{FilmKey, FilmOutliers, FilmPlan, IdentifyReport, Plan};
pub use request::IdentifyRequest;
pub use shipped::{SHIPPED_DATASET, shipped_dataset};
pub use sweep::{PreparedIdentification, prepare};

pub(crate) use checks::{check_settings, film_grid};
pub(crate) use engine::choose_sweep_engine;
