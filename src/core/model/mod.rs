//! The in-memory snapshot every data source produces, and the small value
//! types the rest of the crate shares. No IO here.
//!
//! `as_of.rs` cuts a snapshot back to an earlier time (`--at`);
//! `kinds.rs` declares every kind a snapshot holds typed, once;
//! `snapshot.rs` holds the snapshot, its origin and the clock; `events.rs`
//! the Events; `gaps.rs` what could not be read and what was redacted;
//! `targets.rs` the target and object references; `selectors.rs` kubectl's
//! label selectors.

use std::collections::BTreeMap;

mod as_of;
mod events;
mod gaps;
mod kinds;
mod rollout;
mod selectors;
mod snapshot;
mod targets;

pub use as_of::as_of;
pub use events::{BriefEvent, EventRecord, EventSubject, Text as EventText};
pub use gaps::{Gap, Redaction};
pub use kinds::Kind;
pub use rollout::{
    ROLLOUT_HASH_LABEL, ROLLOUT_MANAGED_BY_ANNOTATION, ROLLOUT_REVISION_ANNOTATION,
    ROLLOUT_STEP_PAUSES, Rollout, waits_at_a_step,
};
pub use selectors::{LabelFilter, SelectorError};
pub use snapshot::{
    Clock, ClockSource, HelmRelease, LogRecord, Objects, Origin, OriginKind, STDIN_LOCATION,
    Snapshot,
};
pub use targets::{ObjectRef, TargetKind, TargetParseError, TargetSpec, kubectl_kind};

/// Values used to fill catalogue command templates (`{pod}`, `{namespace}`...).
pub type TemplateVars = BTreeMap<String, String>;

/// A port or a port name, as written.
pub(crate) fn int_or_string(
    v: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}
