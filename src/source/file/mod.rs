//! Reading snapshots from files: mdiag's own format, `kubectl get -o
//! yaml|json` output (a `List` or a single object) and multi-document YAML,
//! gzip-compressed when the name ends in `.gz`; and the one capped reader
//! every named input goes through (`input`: snapshots and alerts).

mod bookkeeping;
mod decode;
mod error;
mod input;
mod read;
mod tree;
mod versions;
mod yaml;

pub use super::objects::Keep;
pub use bookkeeping::COMPLETE_DUMP_RESOURCES;
pub use error::SourceError;
pub use input::{Input, MAX_ALERT_BYTES, MAX_SNAPSHOT_BYTES, read_text};
pub use read::{
    parse_snapshot_text, read_snapshot_file, read_snapshot_file_kept, read_snapshot_opened,
};
