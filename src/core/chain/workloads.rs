//! Finding the workloads of a snapshot: every one triage looks at, the
//! ReplicaSets that stand alone, what could be traced in a namespace, and
//! the namespaces that hold a named target.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Reach;
use super::{controller_ref, name, ns_of, owner_uid_of_kind, uid};
use crate::model::{Kind, Snapshot, TargetSpec};

/// Whether a ReplicaSet is a workload of its own: no Deployment of the
/// snapshot owns it, and either nothing controls it (created by hand, or
/// orphaned by `kubectl delete deployment --cascade=orphan`, which removes
/// the ownerReference), or its controller is a Deployment the snapshot does
/// not hold although it read the Deployments of its namespace (deleted,
/// its ReplicaSets not yet collected). A ReplicaSet whose Deployment was
/// not read is that unknown Deployment's, and one controlled by another
/// kind (an Argo Rollout) belongs to a workload mdiag does not read: neither
/// is a workload here.
pub fn replica_set_stands_alone(
    snapshot: &Snapshot,
    rs: &ReplicaSet,
    deployment_present: impl Fn(&str) -> bool,
) -> bool {
    let meta = &rs.metadata;
    let owned = meta
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Deployment" && deployment_present(&o.uid));
    if owned {
        return false;
    }
    match controller_ref(meta) {
        None => true,
        Some(o) if o.kind == "Deployment" => !snapshot
            .gaps
            .iter()
            .any(|g| g.hides("deployments", ns_of(meta))),
        Some(_) => false,
    }
}

/// A ReplicaSet that wants no Pod and has none (an old revision left at
/// zero): nothing to judge, so no triage row; `trace rs/NAME` still walks it.
fn idle_replica_set(rs: &ReplicaSet, has_pods: bool) -> bool {
    let wants = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let has = rs.status.as_ref().map_or(0, |s| s.replicas);
    wants == 0 && has == 0 && !has_pods
}

/// The ReplicaSets of a namespace (or of all) that are workloads of their
/// own and want or have Pods, in the snapshot's order.
pub fn lone_replica_sets<'a>(
    snapshot: &'a Snapshot,
    namespace: Option<&str>,
) -> Vec<&'a ReplicaSet> {
    if snapshot.objects.replica_sets.is_empty() {
        return Vec::new();
    }
    let deployments: HashSet<&str> = snapshot
        .objects
        .deployments
        .iter()
        .map(|d| uid(&d.metadata))
        .filter(|u| !u.is_empty())
        .collect();
    let pod_owners: HashSet<&str> = snapshot
        .objects
        .pods
        .iter()
        .flat_map(|p| p.metadata.owner_references.iter().flatten())
        .map(|o| o.uid.as_str())
        .collect();
    snapshot
        .objects
        .replica_sets
        .iter()
        .filter(|rs| namespace.is_none_or(|ns| ns_of(&rs.metadata) == ns))
        .filter(|rs| replica_set_stands_alone(snapshot, rs, |u| deployments.contains(u)))
        .filter(|rs| {
            let id = uid(&rs.metadata);
            !idle_replica_set(rs, !id.is_empty() && pod_owners.contains(id))
        })
        .collect()
}

/// Targets a user could trace in a namespace, for "not found" messages:
/// every object of the kinds the table offers by name, and the ReplicaSets
/// that stand alone (a Deployment's are traced through it).
pub fn available_targets(snapshot: &Snapshot, namespace_name: &str) -> Vec<String> {
    let mut out: Vec<String> = super::OWNER_KINDS
        .iter()
        .filter(|k| k.offered)
        .flat_map(|k| {
            snapshot
                .objects
                .metas(k.kind)
                .into_iter()
                .filter(|m| ns_of(m) == namespace_name)
                .map(|m| format!("{}/{}", k.target.short(), name(m)))
        })
        .collect();
    out.extend(
        lone_replica_sets(snapshot, Some(namespace_name))
            .into_iter()
            .map(|rs| format!("rs/{}", name(&rs.metadata))),
    );
    out.sort();
    out.dedup();
    out
}

/// The namespaces a file holds the named target in (to default `-n`).
pub fn namespaces_holding(snapshot: &Snapshot, target: &TargetSpec) -> Vec<String> {
    let kind = super::OwnerKind::of_target(target.kind).kind;
    let mut out: Vec<String> = snapshot
        .objects
        .metas(kind)
        .into_iter()
        .filter(|m| name(m) == target.name)
        .map(|m| ns_of(m).to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The same name as a target of another kind, in `namespace` (or in any
/// namespace of a file), as `pod/NAME`: what a user who pasted a Pod's or
/// a Deployment's name without its kind may have meant.
pub fn same_name_as_other_kinds(
    snapshot: &Snapshot,
    target: &TargetSpec,
    namespace: Option<&str>,
) -> Vec<String> {
    super::OWNER_KINDS
        .iter()
        .map(|k| k.target)
        .filter(|kind| *kind != target.kind)
        .filter(|kind| {
            let other = TargetSpec {
                kind: *kind,
                namespace: None,
                name: target.name.clone(),
            };
            let holding = namespaces_holding(snapshot, &other);
            match namespace {
                Some(ns) => holding.iter().any(|h| h == ns),
                None => !holding.is_empty(),
            }
        })
        .map(|kind| format!("{}/{}", kind.short(), target.name))
        .collect()
}

/// A workload triage looks at.
#[derive(Debug, Clone)]
pub struct Workload {
    pub target: TargetSpec,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Every workload of a namespace (or of all), one kind of the table after
/// the other: each object of a kind, unless it is traced through an owner
/// the input holds (docs/contract.md#the-chain). A platform object's
/// Deployment or sets, a Knative Revision's Deployment, the predictor's
/// Knative Service of an InferenceService, a Deployment's ReplicaSets
/// ([`lone_replica_sets`]) and a CronJob's Jobs are traced through their
/// owner; a Pod only when nothing owns it. A Service is not a workload.
pub fn workloads(snapshot: &Snapshot, namespace: Option<&str>) -> Vec<Workload> {
    let objects = &snapshot.objects;
    let wanted = |meta: &ObjectMeta| namespace.is_none_or(|ns| ns_of(meta) == ns);
    let target = |kind, meta: &ObjectMeta| Workload {
        target: TargetSpec {
            kind,
            namespace: Some(ns_of(meta).to_string()),
            name: name(meta).to_string(),
        },
        labels: meta.labels.clone().unwrap_or_default(),
    };
    let uids_of = |kind: Kind| -> HashSet<&str> {
        objects
            .metas(kind)
            .into_iter()
            .map(uid)
            .filter(|u| !u.is_empty())
            .collect()
    };
    let platform_uids: HashSet<&str> = super::PLATFORMS
        .iter()
        .flat_map(|p| uids_of(p.kind))
        .collect();
    let knative_uids = uids_of(Kind::KnativeService);
    let cron_job_uids = uids_of(Kind::CronJob);
    // A LeaderWorkerSet's sets (its leader set, and the worker sets its
    // leader Pods own) are traced through it.
    let lws = super::groups::lws_by_name(objects);
    let lws_sets: HashSet<&str> = objects
        .stateful_sets
        .iter()
        .filter(|s| super::groups::lws_of_set(&lws, s).is_some())
        .map(|s| uid(&s.metadata))
        .collect();

    let traced_through_owner = |row: &super::OwnerKind, meta: &ObjectMeta| -> bool {
        match row.reach {
            // The predictor's Knative Service of an InferenceService in
            // Knative mode, when the InferenceService is in the input.
            Reach::Platform(p) => {
                p.kind == Kind::KnativeService
                    && owner_uid_of_kind(meta, "InferenceService")
                        .is_some_and(|o| platform_uids.contains(o))
            }
            // A ModelService's Deployment always (its Deployment is its
            // own, read or not); another platform's when the object is in
            // the input, since a dump without KServe's kinds still holds
            // the predictor Deployment, which must not vanish from triage.
            // A Knative Revision's, when its Service is in the input.
            Reach::ReplicaSets => {
                meta.owner_references.iter().flatten().any(|o| {
                    super::Platform::of_owner_kind(&o.kind).is_some()
                        && (o.kind == "ModelService" || platform_uids.contains(o.uid.as_str()))
                }) || knative_uids
                    .iter()
                    .any(|k| super::knative::runs_revision_of(meta, k))
            }
            Reach::ControllerRevisions => {
                owner_uid_of_kind(meta, "ModelService").is_some() || lws_sets.contains(uid(meta))
            }
            Reach::Completions => {
                owner_uid_of_kind(meta, "CronJob").is_some_and(|o| cron_job_uids.contains(o))
            }
            // A Pod nobody owns fails on its own: nothing will replace it.
            Reach::Owners => meta
                .owner_references
                .as_ref()
                .is_some_and(|o| !o.is_empty()),
            Reach::Runs => false,
            Reach::OwnPods | Reach::Selected => true,
        }
    };
    let mut out = Vec::new();
    for row in super::OWNER_KINDS {
        if row.reach == Reach::OwnPods {
            out.extend(
                lone_replica_sets(snapshot, namespace)
                    .into_iter()
                    .map(|rs| target(row.target, &rs.metadata)),
            );
            continue;
        }
        out.extend(
            objects
                .metas(row.kind)
                .into_iter()
                .filter(|meta| wanted(meta) && !traced_through_owner(row, meta))
                .map(|meta| target(row.target, meta)),
        );
    }
    out
}
