//! Writing a snapshot file: YAML or JSON by the name, gzip for `.gz`,
//! atomically (a temporary file in the same folder, then a rename), so a
//! failed or interrupted capture never leaves half a file behind.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::{FORMAT_ID, FORMAT_VERSION, SnapshotFile};
use super::objects::all_values;
use super::redact::Redactor;
use mdiag_core::model::Snapshot;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot encode the snapshot: {0}")]
    Encode(String),
}

/// Builds the file contents from a snapshot, redacting as it goes.
pub fn to_file(snapshot: &Snapshot, redactor: &Redactor) -> SnapshotFile {
    let mut objects = all_values(&snapshot.objects);
    let mut logs = snapshot.logs.clone();
    let mut redactions = snapshot.redactions.clone();
    redactions.extend(redactor.redact(&mut objects, &mut logs));
    let mut gaps = snapshot.gaps.clone();
    redactions.extend(redactor.redact_gaps(&mut gaps));
    let origin = &snapshot.origin;
    SnapshotFile {
        format: FORMAT_ID.to_string(),
        version: FORMAT_VERSION,
        captured_at: origin.captured_at,
        captured_by: origin.captured_by.clone(),
        context: origin.context.clone(),
        server_version: origin.server_version.clone(),
        namespace: origin.namespace.clone(),
        target: origin.target.clone(),
        objects,
        logs,
        gaps,
        redactions,
    }
}

/// Whether a path asks for JSON (`.json`, `.json.gz`); YAML otherwise.
fn wants_json(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.trim_end_matches(".gz").ends_with(".json")
}

fn encode(file: &SnapshotFile, json: bool) -> Result<Vec<u8>, WriteError> {
    if json {
        serde_json::to_vec_pretty(file).map_err(|e| WriteError::Encode(e.to_string()))
    } else {
        serde_saphyr::to_string(file)
            .map(String::into_bytes)
            .map_err(|e| WriteError::Encode(e.to_string()))
    }
}

/// Writes `file` to `path` atomically. Returns the bytes written.
pub fn write_file(path: &Path, file: &SnapshotFile) -> Result<u64, WriteError> {
    let bytes = encode(file, wants_json(path))?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    write_atomic(path, &bytes, gz)
}

/// Writes `bytes` (gzip-compressed when `gzip`) to a temporary file beside
/// `path`, then renames it: the file is whole or absent, never cut.
/// Returns the bytes on disk.
pub fn write_atomic(path: &Path, bytes: &[u8], gzip: bool) -> Result<u64, WriteError> {
    let io = |cause| WriteError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".mdiag-")
        .tempfile_in(&dir)
        .map_err(io)?;
    if gzip {
        let mut encoder =
            flate2::write::GzEncoder::new(temp.as_file_mut(), flate2::Compression::default());
        encoder.write_all(bytes).map_err(io)?;
        encoder.finish().map_err(io)?;
    } else {
        temp.write_all(bytes).map_err(io)?;
    }
    temp.as_file().sync_all().map_err(io)?;
    let written = temp.as_file().metadata().map_err(io)?.len();
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::read_snapshot_file;

    #[test]
    fn a_written_snapshot_reads_back_with_its_objects_logs_and_gaps() {
        let original = read_snapshot_file(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join("fixtures/demo/snapshot-crash-loop.yaml"),
        )
        .unwrap();
        let file = to_file(&original, &Redactor::new(&[], true).unwrap());
        let dir = tempfile::tempdir().unwrap();
        for name in ["s.yaml", "s.json", "s.yaml.gz", "s.json.gz"] {
            let path = dir.path().join(name);
            write_file(&path, &file).unwrap();
            let back = read_snapshot_file(&path).unwrap();
            assert_eq!(back.objects.len(), original.objects.len(), "{name}");
            assert_eq!(back.logs, original.logs, "{name}");
            assert_eq!(back.gaps, original.gaps, "{name}");
            assert_eq!(
                back.origin.captured_at, original.origin.captured_at,
                "{name}"
            );
        }
        // Nothing but the four files: no temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn a_failed_write_leaves_no_file() {
        let file = to_file(&Snapshot::default(), &Redactor::new(&[], true).unwrap());
        let err = write_file(Path::new("/nonexistent-dir/x.yaml"), &file).unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir/x.yaml"));
    }
}
