//! Finding the workloads of a snapshot: every one triage looks at, the
//! ReplicaSets that stand alone, what could be traced in a namespace, and
//! the namespaces that hold a named target.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{controller_ref, name, ns_of, owner_uid_of_kind, uid};
use crate::model::{Snapshot, TargetKind, TargetSpec};

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

/// Targets a user could trace in a namespace, for "not found" messages.
pub fn available_targets(snapshot: &Snapshot, namespace_name: &str) -> Vec<String> {
    let mut out: Vec<String> = super::PLATFORMS
        .iter()
        .flat_map(|p| {
            p.objects(&snapshot.objects)
                .into_iter()
                .filter(|m| ns_of(&m.object.metadata) == namespace_name)
                .map(|m| m.target_text())
        })
        .collect();
    out.extend(
        snapshot
            .objects
            .deployments
            .iter()
            .filter(|d| ns_of(&d.metadata) == namespace_name)
            .map(|d| format!("deploy/{}", name(&d.metadata))),
    );
    out.extend(
        snapshot
            .objects
            .stateful_sets
            .iter()
            .filter(|s| ns_of(&s.metadata) == namespace_name)
            .map(|s| format!("sts/{}", name(&s.metadata))),
    );
    out.extend(
        snapshot
            .objects
            .daemon_sets
            .iter()
            .filter(|d| ns_of(&d.metadata) == namespace_name)
            .map(|d| format!("ds/{}", name(&d.metadata))),
    );
    // Only the ReplicaSets that are workloads: a Deployment's are traced
    // through it.
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
    let metas: Vec<&ObjectMeta> = match target.kind {
        TargetKind::ModelService
        | TargetKind::InferenceService
        | TargetKind::Rollout
        | TargetKind::LeaderWorkerSet
        | TargetKind::KnativeService => super::Platform::of_target(target.kind)
            .map(|p| p.objects(&snapshot.objects))
            .unwrap_or_default()
            .into_iter()
            .map(|m| &m.object.metadata)
            .collect(),
        TargetKind::Deployment => snapshot
            .objects
            .deployments
            .iter()
            .map(|d| &d.metadata)
            .collect(),
        TargetKind::StatefulSet => snapshot
            .objects
            .stateful_sets
            .iter()
            .map(|s| &s.metadata)
            .collect(),
        TargetKind::DaemonSet => snapshot
            .objects
            .daemon_sets
            .iter()
            .map(|d| &d.metadata)
            .collect(),
        TargetKind::ReplicaSet => snapshot
            .objects
            .replica_sets
            .iter()
            .map(|r| &r.metadata)
            .collect(),
        TargetKind::Pod => snapshot.objects.pods.iter().map(|p| &p.metadata).collect(),
        TargetKind::Job => snapshot.objects.jobs.iter().map(|j| &j.metadata).collect(),
        TargetKind::CronJob => snapshot
            .objects
            .cron_jobs
            .iter()
            .map(|c| &c.metadata)
            .collect(),
        TargetKind::Service => snapshot
            .objects
            .services
            .iter()
            .map(|s| &s.metadata)
            .collect(),
    };
    let mut out: Vec<String> = metas
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
    TargetKind::ALL
        .iter()
        .filter(|kind| **kind != target.kind)
        .filter(|kind| {
            let other = TargetSpec {
                kind: **kind,
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

/// Every workload of a namespace (or of all): each platform object
/// (ModelService, InferenceService), each Deployment no platform object
/// owns, each StatefulSet and DaemonSet that no platform object owns
/// (nor, for a LeaderWorkerSet's worker sets, its leader Pod), each
/// ReplicaSet no Deployment owns (see [`lone_replica_sets`]), and each Pod
/// with no owner.
pub fn workloads(snapshot: &Snapshot, namespace: Option<&str>) -> Vec<Workload> {
    let wanted = |meta: &ObjectMeta| namespace.is_none_or(|ns| ns_of(meta) == ns);
    let target = |kind, meta: &ObjectMeta| Workload {
        target: TargetSpec {
            kind,
            namespace: Some(ns_of(meta).to_string()),
            name: name(meta).to_string(),
        },
        labels: meta.labels.clone().unwrap_or_default(),
    };
    let platform_uids: std::collections::HashSet<&str> = super::PLATFORMS
        .iter()
        .flat_map(|p| p.objects(&snapshot.objects))
        .map(|m| uid(&m.object.metadata))
        .collect();
    // The predictor's Knative Service of an InferenceService in Knative
    // mode is traced through the InferenceService, when that is in the input.
    let under_inference_service = |m: &super::PlatformObject| {
        m.platform.kind == crate::model::Kind::KnativeService
            && owner_uid_of_kind(&m.object.metadata, "InferenceService")
                .is_some_and(|o| platform_uids.contains(o))
    };
    let mut out: Vec<Workload> = super::PLATFORMS
        .iter()
        .flat_map(|p| {
            p.objects(&snapshot.objects)
                .into_iter()
                .filter(|m| wanted(&m.object.metadata) && !under_inference_service(m))
                .map(|m| target(p.target, &m.object.metadata))
        })
        .collect();
    // A Deployment a platform object owns is traced through that object:
    // a ModelService's always (as before the table: its Deployment is its
    // own, read or not), another platform's when the object is in the
    // input, since a dump without KServe's kinds still holds the predictor
    // Deployment, which must not vanish from triage.
    let under_platform = |meta: &ObjectMeta| {
        meta.owner_references.iter().flatten().any(|o| {
            super::Platform::of_owner_kind(&o.kind).is_some()
                && (o.kind == "ModelService" || platform_uids.contains(o.uid.as_str()))
        })
    };
    // A Knative Revision's Deployment is traced through its Service,
    // when that is in the input.
    let ksvc_uids: Vec<&str> = snapshot
        .objects
        .knative_services
        .iter()
        .map(|k| uid(&k.metadata))
        .collect();
    let under_knative = |d: &k8s_openapi::api::apps::v1::Deployment| {
        ksvc_uids
            .iter()
            .any(|k| super::knative::runs_revision_of(d, k))
    };
    out.extend(
        snapshot
            .objects
            .deployments
            .iter()
            .filter(|d| wanted(&d.metadata))
            .filter(|d| !under_platform(&d.metadata) && !under_knative(d))
            .map(|d| target(TargetKind::Deployment, &d.metadata)),
    );
    let sets = snapshot
        .objects
        .stateful_sets
        .iter()
        .map(|s| (TargetKind::StatefulSet, &s.metadata))
        .chain(
            snapshot
                .objects
                .daemon_sets
                .iter()
                .map(|d| (TargetKind::DaemonSet, &d.metadata)),
        );
    // A LeaderWorkerSet's sets (its leader set, and the worker sets its
    // leader Pods own) are traced through it.
    let lws = super::groups::lws_by_name(&snapshot.objects);
    let lws_sets: std::collections::HashSet<&str> = snapshot
        .objects
        .stateful_sets
        .iter()
        .filter(|s| super::groups::lws_of_set(&lws, s).is_some())
        .map(|s| uid(&s.metadata))
        .collect();
    out.extend(
        sets.filter(|(_, meta)| wanted(meta))
            .filter(|(_, meta)| owner_uid_of_kind(meta, "ModelService").is_none())
            .filter(|(_, meta)| !lws_sets.contains(uid(meta)))
            .map(|(kind, meta)| target(kind, meta)),
    );
    out.extend(
        lone_replica_sets(snapshot, namespace)
            .into_iter()
            .map(|rs| target(TargetKind::ReplicaSet, &rs.metadata)),
    );
    // Jobs no CronJob of the snapshot owns, and CronJobs (judged by
    // their last Job).
    let cron_uids: std::collections::HashSet<&str> = snapshot
        .objects
        .cron_jobs
        .iter()
        .map(|c| uid(&c.metadata))
        .collect();
    out.extend(
        snapshot
            .objects
            .jobs
            .iter()
            .filter(|j| wanted(&j.metadata))
            .filter(|j| {
                owner_uid_of_kind(&j.metadata, "CronJob").is_none_or(|o| !cron_uids.contains(o))
            })
            .map(|j| target(TargetKind::Job, &j.metadata)),
    );
    out.extend(
        snapshot
            .objects
            .cron_jobs
            .iter()
            .filter(|c| wanted(&c.metadata))
            .map(|c| target(TargetKind::CronJob, &c.metadata)),
    );
    // A Pod nobody owns fails on its own: nothing will replace it.
    out.extend(
        snapshot
            .objects
            .pods
            .iter()
            .filter(|p| wanted(&p.metadata))
            .filter(|p| {
                p.metadata
                    .owner_references
                    .as_ref()
                    .is_none_or(Vec::is_empty)
            })
            .map(|p| target(TargetKind::Pod, &p.metadata)),
    );
    out
}
