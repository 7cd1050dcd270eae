//! The object graph of one workload, walked by owner UID (never by name
//! prefix): ModelService -> Deployment -> ReplicaSets -> Pods, and the
//! Service with its EndpointSlices beside them. Pure: it only reads the
//! snapshot.
//!
//! One file per job: `types.rs` (what a chain is), `owners.rs` (what an
//! object's metadata says), `kinds.rs` (the table of owner kinds: how each
//! kind a target names reaches its Pods), `index.rs`, `walk.rs` and `pod_sets.rs` (the
//! walk), `groups.rs` (a LeaderWorkerSet's groups), `rollouts.rs` (what of a Rollout's walk is Argo's own),
//! `workloads.rs` (finding what to walk), `extract.rs` (a snapshot of one
//! chain), and [`shard`].

mod by_service;
mod extract;
mod groups;
mod index;
mod jobs;
mod kinds;
pub mod knative;
mod owners;
mod platforms;
mod pod_sets;
mod rollouts;
mod types;
mod walk;
mod workloads;

pub mod shard;

pub use extract::chain_objects;
pub use index::Index;
pub use jobs::JobRun;
pub use kinds::{OWNER_KINDS, OwnerKind, Reach};
pub(crate) use owners::{
    CONTROLLER_REVISION_HASH, DAEMONSET_TEMPLATE_GENERATION, POD_TEMPLATE_GENERATION,
    REVISION_ANNOTATION, ordinal, pod_revision_hash, revision_of,
};
pub use owners::{
    SERVICE_NAME_LABEL, generation_observed, label_selector_matches, map_selector_matches,
    observed_generation, revision_matches, selector_matches,
};
pub use platforms::{
    INFERENCE_SERVICE, KNATIVE_SERVICE, LEADER_WORKER_SET, MODEL_SERVICE, PLATFORMS, Platform,
    PlatformObject, kserve_knative_mode,
};
pub use types::{
    CONTROLLER_NAME, CONTROLLER_NAMESPACE, Chain, ChainPod, ControllerLocation, ControllerParts,
    Group, NotFoundHints, PodSet, RevisionSet, SetRevision, SetStrategy, TargetNotFound,
};
pub use walk::walk;
pub use workloads::{
    Workload, available_targets, lone_replica_sets, namespaces_holding, replica_set_stands_alone,
    same_name_as_other_kinds, workloads,
};

use owners::{
    controller_ref, label_of, name, ns_of, owned_by, owner_uid_of_kind, runs_template, uid,
};
