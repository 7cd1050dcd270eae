//! Where objects come from. Every source ends as one [`Snapshot`]: the live
//! cluster, an mdiag snapshot file, or what kubectl printed. Read failures on
//! single lists become [`Gap`](mdiag_core::model::Gap)s, not errors.

pub mod file;
pub mod format;
pub mod live;
mod objects;
pub mod plan;

pub use file::{SourceError, read_snapshot_file};
pub use objects::{ObjectError, all_values, sort_object};
pub mod redact;
mod times;
pub mod watch;
pub mod write;
