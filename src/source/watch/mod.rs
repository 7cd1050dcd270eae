//! Watching one namespace for `gate`: one kube-runtime watcher per resource,
//! each feeding an in-memory store, copied into a [`Snapshot`](mdiag_core::model::Snapshot) whenever the
//! gate judges. The watcher resumes from the last resourceVersion after a
//! disconnect and lists again on 410 Gone; this module only reports what
//! happened to each watch, so the gate knows when its view is whole.
//! Only list and watch requests: mdiag never writes.

mod feed;
mod health;
mod scope;
mod set;

pub use feed::{Feed, FeedEvent};
pub use health::WatchId;
