//! mdiag's own snapshot file format (docs/contract.md#snapshot-file): versioned, with the
//! capture metadata, every object in full, logs, gaps and redactions.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use mdiag_core::model::{Gap, LogRecord, Redaction, TargetSpec};

/// The value of `format` that marks an mdiag snapshot file.
pub const FORMAT_ID: &str = "mdiag.dev/snapshot";
/// The newest format version this build reads and the one it writes.
/// Version 2 lists each redaction as `{path, rule, count}`; version 1
/// listed paths only, and is still read (docs/snapshot-format.md).
pub const FORMAT_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotFile {
    pub format: String,
    pub version: u32,
    #[serde(default)]
    pub captured_at: Option<Timestamp>,
    #[serde(default)]
    pub captured_by: Option<String>,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub server_version: Option<String>,
    /// The namespace captured (for a whole-namespace snapshot there is no target).
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub target: Option<TargetSpec>,
    #[serde(default)]
    pub objects: Vec<serde_json::Value>,
    #[serde(default)]
    pub logs: Vec<LogRecord>,
    #[serde(default)]
    pub gaps: Vec<Gap>,
    /// Where values were replaced: path, rule and count, never the value.
    #[serde(default)]
    pub redactions: Vec<Redaction>,
}
