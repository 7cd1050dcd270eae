//! Small readers over objects that several rules share: conditions,
//! managedFields times, events of an object, lease freshness.

use std::collections::HashMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, ObjectMeta};

use crate::model::{EventRecord, Snapshot};

pub fn pod_condition<'a>(pod: &'a Pod, kind: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

pub fn deployment_condition<'a>(d: &'a Deployment, kind: &str) -> Option<&'a DeploymentCondition> {
    d.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

/// A RollingUpdate's limits resolved against the desired replicas, as the
/// Deployment controller resolves them: maxSurge rounds up, maxUnavailable
/// rounds down (25 % of 2 is 1 surge Pod and 0 unavailable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollingLimits {
    pub surge: i32,
    pub unavailable: i32,
}

/// `None` for a Recreate Deployment.
pub fn rolling_limits(d: &Deployment, desired: i32) -> Option<RollingLimits> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let strategy = d.spec.as_ref().and_then(|s| s.strategy.as_ref());
    if strategy
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("RollingUpdate")
        != "RollingUpdate"
    {
        return None;
    }
    let rolling = strategy
        .and_then(|s| s.rolling_update.clone())
        .unwrap_or_default();
    let percent = |s: &str| s.trim_end_matches('%').parse::<i32>().unwrap_or(0);
    let surge = match rolling.max_surge.as_ref() {
        Some(IntOrString::Int(i)) => *i,
        Some(IntOrString::String(s)) => (percent(s) * desired + 99) / 100,
        None => (25 * desired + 99) / 100,
    };
    let unavailable = match rolling.max_unavailable.as_ref() {
        Some(IntOrString::Int(i)) => *i,
        Some(IntOrString::String(s)) => percent(s) * desired / 100,
        None => 25 * desired / 100,
    };
    Some(RollingLimits { surge, unavailable })
}

pub fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or(&[])
}

/// Init containers first, then the main ones.
pub fn all_container_statuses(pod: &Pod) -> impl Iterator<Item = &ContainerStatus> {
    let status = pod.status.as_ref();
    let init = status
        .and_then(|s| s.init_container_statuses.as_deref())
        .unwrap_or(&[]);
    init.iter().chain(container_statuses(pod))
}

pub fn container_names(pod: &Pod) -> Vec<&str> {
    pod.spec
        .as_ref()
        .map(|s| s.containers.iter().map(|c| c.name.as_str()).collect())
        .unwrap_or_default()
}

pub fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

pub fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

pub fn created(meta: &ObjectMeta) -> Option<Timestamp> {
    meta.creation_timestamp.as_ref().map(|t| t.0)
}

/// The latest managedFields time of a write to the main resource (not the
/// status), optionally only by `manager`.
pub fn spec_write_time(meta: &ObjectMeta, manager: Option<&str>) -> Option<Timestamp> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|m| m.subresource.as_deref().unwrap_or("").is_empty())
        .filter(|m| manager.is_none_or(|want| m.manager.as_deref() == Some(want)))
        .filter_map(|m| m.time.as_ref().map(|t| t.0))
        .max()
}

/// The earliest time a file can be judged at (`--at`) for these declared
/// objects (kind, metadata): the file holds each one's spec as last
/// written (its newest write to the main resource, else its creation), and
/// not the spec before. The latest of those times, and the object.
pub fn spec_floor<'a>(
    objects: impl IntoIterator<Item = (&'a str, &'a ObjectMeta)>,
) -> Option<(Timestamp, String)> {
    objects
        .into_iter()
        .filter_map(|(kind, meta)| {
            let written = spec_write_time(meta, None).or(created(meta))?;
            Some((written, format!("{kind}/{}", name(meta))))
        })
        .max()
}

/// [`spec_floor`] of what declares a chain's rollout: its ModelService,
/// Deployment, StatefulSet or DaemonSet.
pub fn chain_spec_floor(chain: &crate::chain::Chain) -> Option<(Timestamp, String)> {
    let model_service = chain.platform.map(|p| {
        let kind = match p.platform.kind {
            crate::model::Kind::InferenceService => "inferenceservice",
            _ => "modelservice",
        };
        (kind, &p.object.metadata)
    });
    let deployment = chain.deployment.map(|d| ("deployment", &d.metadata));
    let pod_set = chain.pod_set.map(|s| match s {
        crate::chain::PodSet::StatefulSet(s) => ("statefulset", &s.metadata),
        crate::chain::PodSet::DaemonSet(d) => ("daemonset", &d.metadata),
    });
    spec_floor([model_service, deployment, pod_set].into_iter().flatten())
}

/// [`spec_floor`] of every ModelService, Deployment, StatefulSet and
/// DaemonSet of a snapshot (of one namespace, when given).
pub fn snapshot_spec_floor(
    snapshot: &Snapshot,
    namespace: Option<&str>,
) -> Option<(Timestamp, String)> {
    let o = &snapshot.objects;
    let model_services = o
        .model_services
        .iter()
        .map(|m| ("modelservice", &m.metadata));
    let deployments = o.deployments.iter().map(|d| ("deployment", &d.metadata));
    let sets = o.stateful_sets.iter().map(|s| ("statefulset", &s.metadata));
    let daemons = o.daemon_sets.iter().map(|d| ("daemonset", &d.metadata));
    spec_floor(
        model_services
            .chain(deployments)
            .chain(sets)
            .chain(daemons)
            .filter(|(_, m)| namespace.is_none_or(|ns| m.namespace.as_deref() == Some(ns))),
    )
}

/// The time of the last declaration: the newest Apply of the main resource,
/// else the newest write to it by anyone but `controller`.
pub fn declaration_time(meta: &ObjectMeta, controller: &str) -> Option<Timestamp> {
    let entries = || {
        meta.managed_fields
            .iter()
            .flatten()
            .filter(|m| m.subresource.as_deref().unwrap_or("").is_empty())
    };
    entries()
        .filter(|m| m.operation.as_deref() == Some("Apply"))
        .filter(|m| m.manager.as_deref() != Some(controller))
        .filter_map(|m| m.time.as_ref().map(|t| t.0))
        .max()
        .or_else(|| {
            entries()
                .filter(|m| m.manager.as_deref() != Some(controller))
                .filter_map(|m| m.time.as_ref().map(|t| t.0))
                .max()
        })
}

/// The latest time anything wrote the status subresource.
pub fn status_write_time(meta: &ObjectMeta) -> Option<Timestamp> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|m| m.subresource.as_deref() == Some("status"))
        .filter_map(|m| m.time.as_ref().map(|t| t.0))
        .max()
}

/// The leaf paths of the fields a managedFields entry says its manager
/// wrote (`spec.replicas`,
/// `spec.template.spec.containers[name=server].image`), in the tree's
/// order. Either worked out from the `fieldsV1` tree, or read from the
/// list [`keep_written_paths_only`] left in its place.
pub fn written_paths(entry: &ManagedFieldsEntry) -> Vec<String> {
    match entry.fields_v1.as_ref().map(|f| &f.0) {
        None => Vec::new(),
        Some(serde_json::Value::Array(paths)) => paths
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect(),
        Some(tree) => leaf_paths(tree),
    }
}

/// Replaces an entry's `fieldsV1` tree by the list of its leaf paths,
/// which is all the rules read of it ([`written_paths`]). The API only
/// ever sends an object there, so a list is never taken for a tree. As
/// serde_json maps a tree costs several times the paths (a Deployment's
/// entries were about 12 KB of maps for 2 KB of paths); only a read that
/// never writes its objects back may do this, since the result is no
/// longer a field set the API would take.
pub fn keep_written_paths_only(fields: &mut FieldsV1) {
    let FieldsV1(tree) = fields;
    if tree.is_object() {
        let paths = leaf_paths(tree).into_iter().map(serde_json::Value::String);
        *tree = serde_json::Value::Array(paths.collect());
    }
}

/// The first field of a path from [`written_paths`]: `spec` of
/// `spec.replicas` and of `spec[...]`.
pub fn top_field(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

fn leaf_paths(fields: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
        let Some(map) = v.as_object() else { return };
        let children: Vec<_> = map.iter().filter(|(k, _)| k.as_str() != ".").collect();
        if children.is_empty() {
            if !prefix.is_empty() {
                out.push(prefix.to_string());
            }
            return;
        }
        for (key, child) in children {
            let part = if let Some(field) = key.strip_prefix("f:") {
                if prefix.is_empty() {
                    field.to_string()
                } else {
                    format!("{prefix}.{field}")
                }
            } else if let Some(k) = key.strip_prefix("k:") {
                let k: serde_json::Value = serde_json::from_str(k).unwrap_or_default();
                let text = k
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(a, b)| {
                                format!("{a}={}", b.as_str().map_or(b.to_string(), str::to_string))
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default();
                format!("{prefix}[{text}]")
            } else {
                format!("{prefix}[{key}]")
            };
            walk(child, &part, out);
        }
    }
    let mut out = Vec::new();
    walk(fields, "", &mut out);
    out
}

/// Events indexed by the UID of the object they are about (and by
/// kind/name for events that carry no UID).
pub struct EventIndex<'a> {
    by_uid: HashMap<&'a str, Vec<&'a EventRecord>>,
    by_name: HashMap<(String, String, String), Vec<&'a EventRecord>>,
}

impl<'a> EventIndex<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let mut by_uid: HashMap<&str, Vec<&EventRecord>> = HashMap::new();
        let mut by_name: HashMap<_, Vec<&EventRecord>> = HashMap::new();
        for event in &snapshot.objects.events {
            match event.subject_uid() {
                Some(uid) => by_uid.entry(uid).or_default().push(event),
                None => {
                    let s = event.subject();
                    by_name
                        .entry((s.kind, s.namespace, s.name))
                        .or_default()
                        .push(event)
                }
            }
        }
        // Newest last, so `last()` is the latest observation.
        for list in by_uid.values_mut().chain(by_name.values_mut()) {
            list.sort_by_key(|e| e.last_seen());
        }
        EventIndex { by_uid, by_name }
    }

    /// Events about one object, oldest first.
    pub fn about(&self, kind: &str, meta: &ObjectMeta) -> Vec<&'a EventRecord> {
        let mut out: Vec<&EventRecord> = self.by_uid.get(uid(meta)).cloned().unwrap_or_default();
        let key = (
            kind.to_string(),
            meta.namespace.clone().unwrap_or_default(),
            name(meta).to_string(),
        );
        if let Some(extra) = self.by_name.get(&key) {
            out.extend(extra);
            out.sort_by_key(|e| e.last_seen());
        }
        out
    }
}

/// How a leader-election Lease stands at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseState {
    pub holder: Option<String>,
    pub renewed: Option<Timestamp>,
    pub duration_seconds: i64,
    /// No leader: not renewed within its duration, or released (no holder).
    pub stale: bool,
}

pub fn lease_state(lease: &Lease, now: Timestamp) -> LeaseState {
    let spec = lease.spec.as_ref();
    let renewed = spec
        .and_then(|s| s.renew_time.as_ref().or(s.acquire_time.as_ref()))
        .map(|t| t.0);
    let duration_seconds = spec
        .and_then(|s| s.lease_duration_seconds)
        .map(i64::from)
        .unwrap_or(15);
    let holder = spec
        .and_then(|s| s.holder_identity.clone())
        .filter(|h| !h.is_empty());
    // A released Lease (no holder) has no leader, however fresh its time.
    let stale = holder.is_none()
        || match renewed {
            None => true,
            Some(t) => seconds_between(t, now) > duration_seconds as f64,
        };
    LeaseState {
        holder,
        renewed,
        duration_seconds,
        stale,
    }
}

pub fn find_lease<'a>(
    snapshot: &'a Snapshot,
    namespace: &str,
    lease_name: &str,
) -> Option<&'a Lease> {
    snapshot.objects.leases.iter().find(|l| {
        l.metadata.namespace.as_deref() == Some(namespace) && name(&l.metadata) == lease_name
    })
}

pub fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()) as f64 / 1000.0
}

/// A human age like `2m30s`, for evidence texts.
pub fn age(from: Timestamp, now: Timestamp) -> String {
    let secs = seconds_between(from, now).max(0.0) as i64;
    crate::analysis::format_duration(secs)
}

/// A probe's timing, with core/v1's defaults for what it leaves unset:
/// (initialDelaySeconds 0, failureThreshold 3, periodSeconds 10).
pub fn probe_timing(p: &k8s_openapi::api::core::v1::Probe) -> (i32, i32, i32) {
    (
        p.initial_delay_seconds.unwrap_or(0),
        p.failure_threshold.unwrap_or(3),
        p.period_seconds.unwrap_or(10),
    )
}

/// How long a probe that never passes allows before it acts:
/// initialDelaySeconds + failureThreshold x periodSeconds.
pub fn probe_budget_seconds(p: &k8s_openapi::api::core::v1::Probe) -> i64 {
    let (delay, threshold, period) = probe_timing(p);
    i64::from(delay) + i64::from(threshold) * i64::from(period)
}

/// One condition of an untyped object's status, as written.
#[derive(Debug, Clone, Copy)]
pub struct DynamicCondition<'v> {
    pub status: &'v str,
    pub reason: &'v str,
    pub message: &'v str,
    pub at: Option<Timestamp>,
}

/// The condition of `type_` in an untyped object's `status.conditions`.
pub fn condition_of<'v>(
    object: &'v kube_core::DynamicObject,
    type_: &str,
) -> Option<DynamicCondition<'v>> {
    let c = object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str() == Some(type_))?;
    let text = |key: &str| c[key].as_str().unwrap_or("");
    Some(DynamicCondition {
        status: text("status"),
        reason: text("reason"),
        message: text("message"),
        at: text("lastTransitionTime").parse().ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(fields: serde_json::Value) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            fields_v1: Some(FieldsV1(fields)),
            ..Default::default()
        }
    }

    #[test]
    fn written_paths_read_the_tree_and_the_list_alike() {
        let mut e = entry(serde_json::json!({
            "f:metadata": {"f:labels": {".": {}, "f:team": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"server\"}": {".": {}, "f:image": {}},
                }}},
            },
        }));
        let paths = written_paths(&e);
        assert_eq!(
            paths,
            [
                "metadata.labels.team",
                "spec.replicas",
                "spec.template.spec.containers[name=server].image",
            ]
        );
        keep_written_paths_only(e.fields_v1.as_mut().unwrap());
        assert!(e.fields_v1.as_ref().unwrap().0.is_array());
        assert_eq!(written_paths(&e), paths);
        // A second time changes nothing.
        keep_written_paths_only(e.fields_v1.as_mut().unwrap());
        assert_eq!(written_paths(&e), paths);
        assert_eq!(top_field(&paths[2]), "spec");
        assert_eq!(top_field("spec[0]"), "spec");
        // A field set of one field, and none.
        assert_eq!(
            written_paths(&entry(serde_json::json!({"f:spec": {}}))),
            ["spec"]
        );
        assert!(written_paths(&ManagedFieldsEntry::default()).is_empty());
    }
}
