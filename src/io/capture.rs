//! Tables and figures kept for a caller in the same process (the Python
//! package) as they are written: the very record batch that goes into the
//! file, with the file's metadata on its schema, so that the caller hands
//! its buffers on (the Arrow C data interface) instead of reading the file
//! back; a figure's PNG and SVG as drawn. With [`Keep::MemoryOnly`] no
//! output file is written at all.
//!
//! The capture belongs to the thread that runs the job ([`capturing`]):
//! two jobs on two threads keep their own tables.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::CHUNKS_DIR;

/// Whether a captured job's files are written as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The files are written as the command line writes them.
    Files,
    /// Nothing is written: tables stay in memory, and a file that is not a
    /// table (a figure) is dropped unwritten.
    MemoryOnly,
}

/// One table as written: its file's path and its batch, whose schema
/// carries the file's key-value metadata.
#[derive(Debug, Clone)]
pub struct CapturedTable {
    pub path: PathBuf,
    pub batch: RecordBatch,
}

/// One figure as drawn: its path without extension (the `.png` and
/// `.svg` files' stem) and both images.
#[derive(Debug, Clone)]
pub struct CapturedFigure {
    pub stem: PathBuf,
    pub png: Vec<u8>,
    pub svg: String,
}

/// What a captured job wrote, in the order written.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub tables: Vec<CapturedTable>,
    pub figures: Vec<CapturedFigure>,
}

thread_local! {
    static CAPTURE: RefCell<Option<(Keep, Captured)>> = const { RefCell::new(None) };
}

/// Runs `job` with the tables and figures it writes kept, in the order
/// written (a path written twice: its last only). A resumable run's chunk
/// files are not its results and are not kept.
pub fn capturing<T>(keep: Keep, job: impl FnOnce() -> T) -> (T, Captured) {
    CAPTURE.with(|c| *c.borrow_mut() = Some((keep, Captured::default())));
    let answer = job();
    let captured = CAPTURE
        .with(|c| c.borrow_mut().take())
        .map(|(_, captured)| captured)
        .unwrap_or_default();
    (answer, captured)
}

/// Whether this thread's job writes its files ([`Keep`]).
pub fn writes_files() -> bool {
    CAPTURE.with(|c| !matches!(c.borrow().as_ref(), Some((Keep::MemoryOnly, _))))
}

/// Offers a figure being drawn to this thread's capture, if any.
pub(crate) fn offer_figure(stem: &Path, png: &[u8], svg: &str) {
    CAPTURE.with(|c| {
        let mut capture = c.borrow_mut();
        let Some((_, captured)) = capture.as_mut() else {
            return;
        };
        captured.figures.retain(|f| f.stem != stem);
        captured.figures.push(CapturedFigure {
            stem: stem.to_owned(),
            png: png.to_vec(),
            svg: svg.to_owned(),
        });
    });
}

/// Offers a table being written to this thread's capture, if any. The
/// batch's columns are shared, not copied.
pub(crate) fn offer(path: &Path, batch: &RecordBatch, metadata: &BTreeMap<String, String>) {
    if path.components().any(|c| c.as_os_str() == CHUNKS_DIR) {
        return;
    }
    CAPTURE.with(|c| {
        let mut capture = c.borrow_mut();
        let Some((_, Captured { tables, .. })) = capture.as_mut() else {
            return;
        };
        let mut schema_metadata = batch.schema().metadata().clone();
        schema_metadata.extend(metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
        let schema = Arc::new(
            batch
                .schema()
                .as_ref()
                .clone()
                .with_metadata(schema_metadata),
        );
        let batch = batch
            .clone()
            .with_schema(schema)
            .expect("the same fields with more metadata");
        tables.retain(|t| t.path != path);
        tables.push(CapturedTable {
            path: path.to_owned(),
            batch,
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::table::{Column, write_columns};

    fn metadata() -> BTreeMap<String, String> {
        BTreeMap::from([("tether_sweep.command".to_string(), "test".to_string())])
    }

    #[test]
    fn a_captured_table_is_the_files_table_with_its_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let (result, Captured { tables, .. }) = capturing(Keep::Files, || {
            write_columns(
                &path,
                vec![Column::f64("x_m", "m", vec![1.0, 2.0])],
                &metadata(),
            )
        });
        result.unwrap();
        assert_eq!(tables.len(), 1);
        let read = crate::io::track::read_table(&path).unwrap();
        assert_eq!(tables[0].path, path);
        assert_eq!(tables[0].batch.columns(), read.columns());
        assert_eq!(tables[0].batch.schema().fields(), read.schema().fields());
        assert_eq!(
            tables[0].batch.schema().metadata()["tether_sweep.command"],
            "test"
        );
    }

    #[test]
    fn memory_only_writes_no_file_and_chunks_are_not_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let chunk = dir.path().join(CHUNKS_DIR).join("chunk-000000.parquet");
        std::fs::create_dir_all(chunk.parent().unwrap()).unwrap();
        let (result, Captured { tables, .. }) = capturing(Keep::MemoryOnly, || {
            for p in [&chunk, &path, &path] {
                write_columns(p, vec![Column::i32("k", vec![1, 2, 3])], &metadata())?;
            }
            Ok::<_, crate::io::IoError>(())
        });
        result.unwrap();
        assert_eq!(tables.len(), 1, "one table per path, chunks left out");
        assert_eq!(tables[0].batch.num_rows(), 3);
        assert!(!path.exists() && !chunk.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path().join(CHUNKS_DIR))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "no temporary file is left: {left:?}");
        // Outside the capture, files are written again.
        assert!(writes_files());
    }
}
