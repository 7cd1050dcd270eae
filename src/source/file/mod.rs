//! Reading snapshots from files: mdiag's own format, `kubectl get -o
//! yaml|json` output (a `List` or a single object) and multi-document YAML,
//! gzip-compressed when the name ends in `.gz`.

mod bookkeeping;
mod decode;
mod error;
mod read;

pub use super::objects::Keep;
pub use bookkeeping::COMPLETE_DUMP_RESOURCES;
pub use error::SourceError;
pub use read::{
    MAX_SNAPSHOT_BYTES, parse_snapshot_text, read_snapshot_file, read_snapshot_file_kept,
    read_snapshot_opened,
};
