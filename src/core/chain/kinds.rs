//! The table of owner kinds: one row for every kind a target can name,
//! saying how its chain reaches the Pods by owner UID. A serving
//! platform's row points at its row in `platforms.rs` (what its own object
//! says); a built-in kind's names its way down. The walk dispatches on the
//! row, and the namespaces a file holds a target in, the targets a "not
//! found" message offers and the other kinds a name could mean are read off
//! it (docs/contract.md#the-chain).

use super::platforms::Platform;
use crate::model::{Kind, TargetKind};

/// How a kind's chain reaches its Pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Through the platform object: its own Deployment (or itself, when it
    /// is the workload), a leader set per group, or a Deployment per
    /// Revision, as its row says.
    Platform(&'static Platform),
    /// Its ReplicaSets, one per revision (`deployment.kubernetes.io/revision`,
    /// the current one running its template), then their Pods.
    ReplicaSets,
    /// Its Pods, owned directly, its revisions kept in ControllerRevisions
    /// (`controller-revision-hash`).
    ControllerRevisions,
    /// Its own Pods, one revision; the chain of the Deployment that owns
    /// it, when that Deployment is in the input.
    OwnPods,
    /// Its Pods, run to completion.
    Completions,
    /// Its Jobs, the newest judged.
    Runs,
    /// The Pods its selector selects, and the chain of their workload.
    Selected,
    /// The chain of the workload that owns it, or itself alone.
    Owners,
}

/// One kind a target can name.
#[derive(Debug, PartialEq, Eq)]
pub struct OwnerKind {
    pub target: TargetKind,
    /// Its objects in a snapshot.
    pub kind: Kind,
    pub reach: Reach,
    /// Every object of it is a workload a "not found" message can offer
    /// by name. A ReplicaSet is offered only when it stands alone; a Pod,
    /// Job, CronJob or Service is not a rollout one names by mistake.
    pub offered: bool,
}

const fn platform(p: &'static Platform) -> OwnerKind {
    OwnerKind {
        target: p.target,
        kind: p.kind,
        reach: Reach::Platform(p),
        offered: true,
    }
}

const fn built_in(target: TargetKind, kind: Kind, reach: Reach, offered: bool) -> OwnerKind {
    OwnerKind {
        target,
        kind,
        reach,
        offered,
    }
}

/// Every kind a target can name, in [`TargetKind::ALL`]'s order.
pub const OWNER_KINDS: &[OwnerKind] = &[
    platform(&super::platforms::MODEL_SERVICE),
    platform(&super::platforms::INFERENCE_SERVICE),
    platform(&super::platforms::ROLLOUT),
    platform(&super::platforms::LEADER_WORKER_SET),
    platform(&super::platforms::KNATIVE_SERVICE),
    built_in(
        TargetKind::Deployment,
        Kind::Deployment,
        Reach::ReplicaSets,
        true,
    ),
    built_in(
        TargetKind::StatefulSet,
        Kind::StatefulSet,
        Reach::ControllerRevisions,
        true,
    ),
    built_in(
        TargetKind::DaemonSet,
        Kind::DaemonSet,
        Reach::ControllerRevisions,
        true,
    ),
    built_in(
        TargetKind::ReplicaSet,
        Kind::ReplicaSet,
        Reach::OwnPods,
        false,
    ),
    built_in(TargetKind::Pod, Kind::Pod, Reach::Owners, false),
    built_in(TargetKind::Job, Kind::Job, Reach::Completions, false),
    built_in(TargetKind::CronJob, Kind::CronJob, Reach::Runs, false),
    built_in(TargetKind::Service, Kind::Service, Reach::Selected, false),
];

impl OwnerKind {
    /// The row of a target's kind; every kind a target can name has one.
    pub fn of_target(target: TargetKind) -> &'static OwnerKind {
        OWNER_KINDS
            .iter()
            .find(|k| k.target == target)
            .expect("every target kind has a row in OWNER_KINDS")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_kind_is_one_row_in_its_order() {
        let targets: Vec<TargetKind> = OWNER_KINDS.iter().map(|k| k.target).collect();
        assert_eq!(targets, TargetKind::ALL);
        for row in OWNER_KINDS {
            assert_eq!(OwnerKind::of_target(row.target), row);
        }
    }

    #[test]
    fn every_platform_is_a_row_reached_through_itself() {
        for p in super::super::PLATFORMS {
            let row = OwnerKind::of_target(p.target);
            assert_eq!(row.reach, Reach::Platform(p));
            assert_eq!(row.kind, p.kind);
        }
        let platforms = OWNER_KINDS
            .iter()
            .filter(|k| matches!(k.reach, Reach::Platform(_)))
            .count();
        assert_eq!(platforms, super::super::PLATFORMS.len());
    }
}
