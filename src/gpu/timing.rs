//! Where a GPU batch's time goes, stage by stage: the device's own clock
//! (wgpu timestamp queries, where the adapter has `TIMESTAMP_QUERY`) from
//! the first pass's start to the last pass's end of every submission, and
//! the host's clock around the upload, each submission (submit to its
//! progress read back) and the final read back. One wall time says how
//! long; these say whether it went to the device's work or to the host's
//! submissions, waits and copies. Off unless asked for
//! (`Gpu::time_stages`): `bench` and the device script ask.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::GpuError;
use super::readback::map_and_collect;

/// One stage's times over the batches run while timing \[s\].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageTime {
    /// Creating and filling its buffers, on the host.
    pub upload_s: f64,
    /// Submissions, from each submit until its progress was read back.
    pub submissions_s: f64,
    /// The device's own time in those submissions' passes, first pass's
    /// start to last pass's end; None where the adapter has no timestamp
    /// queries.
    pub device_s: Option<f64>,
    /// Reading the objectives (and tracks) back after the last submission.
    pub readback_s: f64,
    pub submissions: u64,
    pub dispatches: u64,
}

impl StageTime {
    /// The host's share of its submissions: submitting, waiting and mapping
    /// beyond the device's own time \[s\].
    pub fn submission_overhead_s(&self) -> Option<f64> {
        self.device_s.map(|d| (self.submissions_s - d).max(0.0))
    }

    /// The host's time around the device's work: upload, submission
    /// overhead and read back \[s\]; None without the device's time.
    pub fn host_s(&self) -> Option<f64> {
        Some(self.upload_s + self.submission_overhead_s()? + self.readback_s)
    }

    /// Several stages' times together; None for none.
    pub fn sum<'a>(times: impl IntoIterator<Item = &'a StageTime>) -> Option<StageTime> {
        times.into_iter().fold(None, |sum, t| {
            let mut sum = sum.unwrap_or_default();
            sum.add(t);
            Some(sum)
        })
    }

    fn add(&mut self, other: &StageTime) {
        self.upload_s += other.upload_s;
        self.submissions_s += other.submissions_s;
        self.device_s = match (self.device_s, other.device_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.readback_s += other.readback_s;
        self.submissions += other.submissions;
        self.dispatches += other.dispatches;
    }
}

/// Each stage's times, by the stage's name (`step (thread layout)`,
/// `step (workgroup layout)`, `adaptive`: `GpuLayout::stage_name`,
/// `adaptive::ADAPTIVE_STAGE`).
pub type StageTimes = BTreeMap<String, StageTime>;

/// The times of one chunk of one stage, recorded into the GPU's
/// [`StageTimes`] when it is dropped (an error on the way loses only its
/// own times).
pub(super) struct ChunkClock<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    sink: &'a Mutex<Option<StageTimes>>,
    stage: &'static str,
    time: StageTime,
    queries: Option<Queries>,
}

/// A query set of two timestamps per submission, and where they resolve.
struct Queries {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    staging: wgpu::Buffer,
}

/// One submission's start on the host.
pub(super) struct Submission {
    started: Instant,
}

impl<'a> ChunkClock<'a> {
    /// A clock for a chunk of `stage` that adds its times to `sink`, the
    /// device's with timestamp queries where it has them.
    pub fn new(
        (device, queue): (&'a wgpu::Device, &'a wgpu::Queue),
        sink: &'a Mutex<Option<StageTimes>>,
        timestamps: bool,
        stage: &'static str,
    ) -> Self {
        let queries = timestamps.then(|| {
            let bytes = 2 * size_of::<u64>() as u64;
            let buffer = |label, usage| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes,
                    usage,
                    mapped_at_creation: false,
                })
            };
            Queries {
                set: device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("stage timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                resolved: buffer(
                    "timestamps",
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                ),
                staging: buffer(
                    "timestamps readback",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
            }
        });
        Self {
            device,
            queue,
            sink,
            stage,
            time: StageTime::default(),
            queries,
        }
    }

    pub fn uploaded(&mut self, since: Instant) {
        self.time.upload_s += since.elapsed().as_secs_f64();
    }

    /// The timestamp writes of pass `pass` of `passes` in a submission: the
    /// first pass's start and the last pass's end.
    pub fn pass_writes(
        &self,
        pass: u32,
        passes: u32,
    ) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let queries = self.queries.as_ref()?;
        let first = pass == 0;
        let last = pass + 1 == passes;
        (first || last).then_some(wgpu::ComputePassTimestampWrites {
            query_set: &queries.set,
            beginning_of_pass_write_index: first.then_some(0),
            end_of_pass_write_index: last.then_some(1),
        })
    }

    /// Resolves the submission's timestamps into the staging buffer, in
    /// its encoder, after its passes; the start of its host time.
    pub fn submitting(&self, encoder: &mut wgpu::CommandEncoder) -> Submission {
        if let Some(q) = &self.queries {
            encoder.resolve_query_set(&q.set, 0..2, &q.resolved, 0);
            encoder.copy_buffer_to_buffer(&q.resolved, 0, &q.staging, 0, q.resolved.size());
        }
        Submission {
            started: Instant::now(),
        }
    }

    /// A submission of `passes` dispatches whose progress has been read back
    /// (so its timestamps are written too).
    pub fn submitted(&mut self, submission: Submission, passes: u32) -> Result<(), GpuError> {
        self.time.submissions_s += submission.started.elapsed().as_secs_f64();
        self.time.submissions += 1;
        self.time.dispatches += passes as u64;
        if let Some(q) = &self.queries {
            let ticks: Vec<u64> = map_and_collect(self.device, &q.staging)?;
            let period_ns = self.queue.get_timestamp_period() as f64;
            let device_s = ticks[1].saturating_sub(ticks[0]) as f64 * period_ns * 1e-9;
            *self.time.device_s.get_or_insert(0.0) += device_s;
        }
        Ok(())
    }

    pub fn read_back(&mut self, since: Instant) {
        self.time.readback_s += since.elapsed().as_secs_f64();
    }
}

impl Drop for ChunkClock<'_> {
    fn drop(&mut self) {
        if let Some(times) = self.sink.lock().expect("timing lock").as_mut() {
            times
                .entry(self.stage.to_string())
                .or_default()
                .add(&self.time);
        }
    }
}
