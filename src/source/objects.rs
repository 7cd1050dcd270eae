//! Turning untyped Kubernetes objects (JSON values) into the typed
//! [`Objects`] the analysis reads.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::plan::{
    LAST_APPLIED, ManagedFields, Planned, UNREAD_CONTAINER_FIELDS, UNREAD_POD_SPEC_FIELDS,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
use mdiag_core::analysis::keep_written_paths_only;
use mdiag_core::catalogue::{Localized, Message};
use mdiag_core::model::{EventRecord, Kind, Objects};

/// An object whose fields do not fit its kind.
#[derive(Debug, thiserror::Error)]
#[error("{}", Localized::message(self).en())]
pub struct ObjectError {
    pub kind: String,
    pub name: String,
    pub detail: String,
}

impl Localized for ObjectError {
    fn message(&self) -> Message {
        Message::new("error.object")
            .arg("kind", self.kind.as_str())
            .arg("name", format!("{:?}", self.name))
            .arg("detail", self.detail.as_str())
    }
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ObjectError> {
    let kind = value["kind"].as_str().unwrap_or("?").to_string();
    let name = value["metadata"]["name"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    serde_json::from_value(value).map_err(|e| ObjectError {
        kind,
        name,
        detail: e.to_string(),
    })
}

/// The API group of an `apiVersion` (`apps/v1` -> `apps`, `v1` -> ``).
fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map(|(group, _)| group)
        .unwrap_or("")
}

/// Files one object under its kind, whole. A ModelService is taken from
/// any API group, as discovery would find it by its short name.
pub fn sort_object(objects: &mut Objects, value: Value) -> Result<(), ObjectError> {
    sort_object_kept(objects, value, Keep::Whole)
}

/// What a read keeps of each object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// What the analysis reads, as a live read keeps it: managedFields only
    /// for the kinds whose rules read them, no last-applied copy, no Events
    /// about kinds nothing reads (see [`Planned::keep`]); and, as a triage
    /// in parts keeps them, Events brief and Pod specs and templates
    /// without what no rule reads ([`super::plan::UNREAD_POD_SPEC_FIELDS`]).
    /// Trace, triage and the gate read files this way: none writes its
    /// objects back.
    #[default]
    Analysed,
    /// Every field, for `mdiag snapshot --snapshot`, which writes the
    /// objects back out.
    Whole,
}

/// [`sort_object`], trimmed as `keep` says before the object is typed
/// (a Pod's managedFields are never parsed when they are not kept).
pub fn sort_object_kept(
    objects: &mut Objects,
    value: Value,
    keep: Keep,
) -> Result<(), ObjectError> {
    let kind = value["kind"].as_str().unwrap_or("").to_string();
    let api_version = value["apiVersion"].as_str().unwrap_or("").to_string();
    let group = group_of(&api_version);
    let trim = keep == Keep::Analysed;
    // Secrets are never kept, whoever handed them to us.
    if (group, kind.as_str()) == ("", "Secret") {
        return Ok(());
    }
    let typed_kind = match (group, kind.as_str()) {
        // Found by discovery in any group.
        (_, "ModelService") => Some(Kind::ModelService),
        // Its other shape, told apart below.
        ("events.k8s.io", "Event") => Some(Kind::Event),
        // Only autoscaling/v2 is typed: a file's older versions are
        // converted before they get here (`file::versions`).
        ("autoscaling", "HorizontalPodAutoscaler") if api_version != "autoscaling/v2" => None,
        (group, kind) => Kind::ALL
            .iter()
            .copied()
            .find(|k| k.group() == group && k.name() == kind),
    };
    let mut value = value;
    if trim && let Some(kind) = typed_kind {
        trim_unread_spec_value(&mut value, kind);
    }
    let Some(typed_kind) = typed_kind else {
        // v1 Endpoints become EndpointSlices later (`slices_from_endpoints`):
        // kept whole, as nothing else reads them.
        if (group, kind.as_str()) == ("", "Endpoints") {
            objects.other.push(value);
        } else {
            objects
                .other
                .push(trimmed(value, trim, ManagedFields::Drop));
        }
        return Ok(());
    };
    match typed_kind {
        Kind::ModelService => {
            objects
                .model_services
                .push(typed(trimmed(value, trim, ManagedFields::Writes))?)
        }
        Kind::InferenceService => {
            objects
                .inference_services
                .push(typed(trimmed(value, trim, ManagedFields::Drop))?)
        }
        Kind::LeaderWorkerSet => {
            objects
                .leader_worker_sets
                .push(typed(trimmed(value, trim, ManagedFields::Drop))?)
        }
        Kind::KnativeService => {
            objects
                .knative_services
                .push(typed(trimmed(value, trim, ManagedFields::Drop))?)
        }
        // Its writers are kept as a Deployment's are: the same rules read them.
        Kind::Rollout => objects
            .rollouts
            .push(mdiag_core::model::Rollout::new(typed(trimmed(
                value,
                trim,
                ManagedFields::Writes,
            ))?)),
        Kind::Deployment => objects.deployments.extend(planned(value, trim)?),
        Kind::ReplicaSet => objects.replica_sets.extend(planned(value, trim)?),
        Kind::StatefulSet => objects.stateful_sets.extend(planned(value, trim)?),
        Kind::DaemonSet => objects.daemon_sets.extend(planned(value, trim)?),
        Kind::ControllerRevision => objects.controller_revisions.extend(planned(value, trim)?),
        Kind::Pod => objects.pods.extend(planned(value, trim)?),
        Kind::Service => objects.services.extend(planned(value, trim)?),
        Kind::EndpointSlice => objects.endpoint_slices.extend(planned(value, trim)?),
        Kind::Event if group == "events.k8s.io" => objects.events.push(kept_event(
            EventRecord::New(Box::new(typed(trimmed(value, trim, ManagedFields::Drop))?)),
            trim,
        )),
        Kind::Event => objects.events.extend(
            planned::<k8s_openapi::api::core::v1::Event>(value, trim)?
                .map(|e| kept_event(EventRecord::Core(Box::new(e)), trim)),
        ),
        Kind::Node => objects.nodes.extend(planned(value, trim)?),
        Kind::Lease => objects.leases.extend(planned(value, trim)?),
        Kind::HorizontalPodAutoscaler => objects.hpas.extend(planned(value, trim)?),
        Kind::PodDisruptionBudget => objects.pdbs.extend(planned(value, trim)?),
        Kind::Job => objects.jobs.extend(planned(value, trim)?),
        Kind::CronJob => objects.cron_jobs.extend(planned(value, trim)?),
        Kind::HttpRoute => {
            objects
                .http_routes
                .push(typed(trimmed(value, trim, ManagedFields::Writes))?)
        }
    }
    Ok(())
}

/// Drops what no rule reads of a Pod's spec or a controller's Pod
/// template ([`UNREAD_POD_SPEC_FIELDS`]) before the object is typed, so it
/// is never parsed; the same as [`super::plan::trim_unread_pod_spec`].
pub(crate) fn trim_unread_spec_value(value: &mut Value, kind: Kind) {
    let at = match kind {
        Kind::Pod => "/spec",
        Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet | Kind::Job => {
            "/spec/template/spec"
        }
        Kind::CronJob => "/spec/jobTemplate/spec/template/spec",
        _ => return,
    };
    let Some(spec) = value.pointer_mut(at).and_then(Value::as_object_mut) else {
        return;
    };
    for field in UNREAD_POD_SPEC_FIELDS {
        spec.remove(field);
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            if let Some(container) = container.as_object_mut() {
                for field in UNREAD_CONTAINER_FIELDS {
                    container.remove(field);
                }
            }
        }
    }
}

/// An Event as the analysis reads it ([`EventRecord::brief`]) when the
/// read is trimmed: such a read never writes its objects back, and a dump
/// holds Events by the ten thousand (a brief one is a third of the size).
fn kept_event(event: EventRecord, trim: bool) -> EventRecord {
    if trim { event.brief() } else { event }
}

/// Files an object the analysis does not type, trimmed as `keep` says.
pub(crate) fn keep_other(objects: &mut Objects, value: Value, keep: Keep) {
    let trim = keep == Keep::Analysed;
    objects
        .other
        .push(trimmed(value, trim, ManagedFields::Drop));
}

/// A kind of the read plan, trimmed as a live read trims it; `None` when
/// the plan drops it (an Event about a kind nothing reads).
fn planned<K: Planned>(value: Value, trim: bool) -> Result<Option<K>, ObjectError> {
    let mut object: K = typed(trimmed(value, trim, K::MANAGED_FIELDS))?;
    Ok((!trim || object.keep()).then_some(object))
}

/// The object without the fields [`trim_meta`] drops, removed while it is
/// still untyped, so they are never parsed.
fn trimmed(mut value: Value, trim: bool, managed: ManagedFields) -> Value {
    if !trim {
        return value;
    }
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        match managed {
            ManagedFields::Drop => {
                meta.remove("managedFields");
            }
            _ => {
                let entries = meta.get_mut("managedFields").and_then(Value::as_array_mut);
                for entry in entries.into_iter().flatten() {
                    let keeps = managed.keeps_fields_of(entry["subresource"].as_str());
                    let Some(entry) = entry.as_object_mut() else {
                        continue;
                    };
                    if !keeps {
                        entry.remove("fieldsV1");
                    } else if let Some(fields) = entry.get_mut("fieldsV1") {
                        // Judged, never written back: the paths are all the
                        // rules read of the tree.
                        let mut kept = FieldsV1(fields.take());
                        keep_written_paths_only(&mut kept);
                        *fields = kept.0;
                    }
                }
            }
        }
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(LAST_APPLIED);
            if annotations.is_empty() {
                meta.remove("annotations");
            }
        }
    }
    value
}

/// Every object back as JSON values, in a stable order (for writing files):
/// the order of [`Kind::ALL`], then the kinds nothing reads.
pub fn all_values(objects: &Objects) -> Vec<Value> {
    fn push<T: serde::Serialize>(out: &mut Vec<Value>, items: &[T]) {
        out.extend(items.iter().filter_map(|i| serde_json::to_value(i).ok()));
    }
    // Taken apart with no `..`: a new kind does not build until it is
    // written back out too.
    let Objects {
        model_services,
        inference_services,
        rollouts,
        leader_worker_sets,
        knative_services,
        deployments,
        replica_sets,
        stateful_sets,
        daemon_sets,
        controller_revisions,
        pods,
        services,
        endpoint_slices,
        events,
        nodes,
        leases,
        hpas,
        pdbs,
        http_routes,
        jobs,
        cron_jobs,
        other,
    } = objects;
    let mut out = Vec::with_capacity(objects.len());
    for kind in Kind::ALL {
        match kind {
            Kind::ModelService => push(&mut out, model_services),
            Kind::InferenceService => push(&mut out, inference_services),
            Kind::Rollout => out.extend(
                rollouts
                    .iter()
                    .filter_map(|r| serde_json::to_value(r.object()).ok()),
            ),
            Kind::LeaderWorkerSet => push(&mut out, leader_worker_sets),
            Kind::KnativeService => push(&mut out, knative_services),
            Kind::Deployment => push(&mut out, deployments),
            Kind::ReplicaSet => push(&mut out, replica_sets),
            Kind::StatefulSet => push(&mut out, stateful_sets),
            Kind::DaemonSet => push(&mut out, daemon_sets),
            Kind::ControllerRevision => push(&mut out, controller_revisions),
            Kind::Pod => push(&mut out, pods),
            Kind::Service => push(&mut out, services),
            Kind::EndpointSlice => push(&mut out, endpoint_slices),
            Kind::Event => out.extend(events.iter().map(EventRecord::to_value)),
            Kind::Node => push(&mut out, nodes),
            Kind::Lease => push(&mut out, leases),
            Kind::HorizontalPodAutoscaler => push(&mut out, hpas),
            Kind::PodDisruptionBudget => push(&mut out, pdbs),
            Kind::HttpRoute => push(&mut out, http_routes),
            Kind::Job => push(&mut out, jobs),
            Kind::CronJob => push(&mut out, cron_jobs),
        }
    }
    out.extend(other.iter().cloned());
    out
}

/// A dump may carry the older v1 Endpoints of a Service and no
/// EndpointSlice (as `kubectl get endpoints` prints them). Those say the
/// same thing; turn each into a slice, marked as converted, when the
/// Service has no slice of its own in the file.
pub fn slices_from_endpoints(objects: &mut Objects) {
    use mdiag_core::chain::SERVICE_NAME_LABEL;
    let has_slice = |objects: &Objects, ns: &str, name: &str| {
        objects.endpoint_slices.iter().any(|s| {
            s.metadata.namespace.as_deref() == Some(ns)
                && s.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .map(String::as_str)
                    == Some(name)
        })
    };
    let converted: Vec<Value> = objects
        .other
        .iter()
        .filter(|v| v["kind"] == "Endpoints" && v["apiVersion"] == "v1")
        .filter_map(|v| {
            let name = v["metadata"]["name"].as_str()?;
            let ns = v["metadata"]["namespace"].as_str()?;
            if has_slice(objects, ns, name) {
                return None;
            }
            let mut endpoints = Vec::new();
            let mut ports = Vec::new();
            for subset in v["subsets"].as_array().into_iter().flatten() {
                for (key, ready) in [("addresses", true), ("notReadyAddresses", false)] {
                    for a in subset[key].as_array().into_iter().flatten() {
                        endpoints.push(serde_json::json!({
                            "addresses": [a["ip"]],
                            "conditions": {"ready": ready, "serving": ready, "terminating": false},
                            "nodeName": a["nodeName"],
                            "targetRef": a["targetRef"],
                        }));
                    }
                }
                if let Some(p) = subset["ports"].as_array() {
                    ports.extend(p.iter().cloned());
                }
            }
            Some(serde_json::json!({
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": format!("{name}-from-endpoints"),
                    "namespace": ns,
                    "uid": v["metadata"]["uid"],
                    "labels": {SERVICE_NAME_LABEL: name},
                    "annotations": {"mdiag.dev/converted-from": "v1/Endpoints"},
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            }))
        })
        .collect();
    for slice in converted {
        if let Ok(slice) = serde_json::from_value(slice) {
            objects.endpoint_slices.push(slice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's objects lose, before they are typed, what a live triage
    /// drops from its typed Pods and templates: the same fields.
    #[test]
    fn unread_spec_fields_go_the_same_way_typed_or_not() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let (mut specs, mut dropped) = (0, 0);
        for file in [
            "demo/healthy.yaml",
            "demo/oom-killed.yaml",
            "cases/cronjob-last-failed.yaml",
        ] {
            let path = root.join(file);
            let whole = crate::file::read_snapshot_file_kept(&path, Keep::Whole).unwrap();
            let mut typed_then_trimmed = whole.objects.clone();
            crate::plan::trim_unread_pod_specs(&mut typed_then_trimmed);
            let mut trimmed_then_typed = Objects::default();
            for value in all_values(&whole.objects) {
                let kind = Kind::ALL
                    .iter()
                    .copied()
                    .find(|k| Some(k.name()) == value["kind"].as_str());
                let mut value = value;
                if let Some(kind) = kind {
                    trim_unread_spec_value(&mut value, kind);
                }
                sort_object_kept(&mut trimmed_then_typed, value, Keep::Whole).unwrap();
            }
            for (a, b) in [
                (
                    serde_json::to_value(&typed_then_trimmed.pods).unwrap(),
                    serde_json::to_value(&trimmed_then_typed.pods).unwrap(),
                ),
                (
                    serde_json::to_value(&typed_then_trimmed.deployments).unwrap(),
                    serde_json::to_value(&trimmed_then_typed.deployments).unwrap(),
                ),
                (
                    serde_json::to_value(&typed_then_trimmed.replica_sets).unwrap(),
                    serde_json::to_value(&trimmed_then_typed.replica_sets).unwrap(),
                ),
                (
                    serde_json::to_value(&typed_then_trimmed.jobs).unwrap(),
                    serde_json::to_value(&trimmed_then_typed.jobs).unwrap(),
                ),
            ] {
                assert_eq!(a, b, "{file}");
            }
            // And something was there to drop.
            let before = serde_json::to_string(&whole.objects.pods).unwrap();
            let after = serde_json::to_string(&typed_then_trimmed.pods).unwrap();
            dropped += before.len() - after.len();
            let specs_after = typed_then_trimmed.pods.iter().map(|p| &p.spec);
            let specs_after = serde_json::to_string(&specs_after.collect::<Vec<_>>()).unwrap();
            for field in UNREAD_POD_SPEC_FIELDS
                .iter()
                .chain(&UNREAD_CONTAINER_FIELDS)
            {
                assert!(
                    !specs_after.contains(&format!("\"{field}\"")),
                    "{file}: {field}"
                );
            }
            specs += typed_then_trimmed.pods.len();
        }
        assert!(specs > 3, "{specs}");
        assert!(dropped > 1000, "{dropped} bytes dropped");
    }

    /// Every field the lists name, in every kind of container, goes both
    /// ways alike, and what the rules read stays.
    #[test]
    fn every_unread_field_goes_typed_or_not() {
        let mut container = serde_json::json!({
            "name": "c", "image": "i",
            "readinessProbe": {"tcpSocket": {"port": 80}},
        });
        let samples = serde_json::json!({
            "env": [{"name": "A", "value": "1"}],
            "envFrom": [{"configMapRef": {"name": "m"}}],
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
            "volumeDevices": [{"name": "d", "devicePath": "/d"}],
        });
        for field in UNREAD_CONTAINER_FIELDS {
            container[field] = samples[field].clone();
        }
        let mut spec = serde_json::json!({
            "containers": [container.clone()],
            "initContainers": [container.clone()],
            "ephemeralContainers": [container],
        });
        for field in UNREAD_POD_SPEC_FIELDS {
            spec[field] = serde_json::json!([{"name": "v", "emptyDir": {}}]);
        }
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns"}, "spec": spec,
        });
        let mut untyped = pod.clone();
        trim_unread_spec_value(&mut untyped, Kind::Pod);
        let mut typed: k8s_openapi::api::core::v1::Pod = serde_json::from_value(pod).unwrap();
        crate::plan::trim_unread_pod_spec(typed.spec.as_mut().unwrap());
        assert_eq!(serde_json::to_value(&typed).unwrap(), untyped);
        let text = untyped.to_string();
        for field in UNREAD_POD_SPEC_FIELDS
            .iter()
            .chain(&UNREAD_CONTAINER_FIELDS)
        {
            assert!(!text.contains(&format!("\"{field}\"")), "{field}: {text}");
        }
        for kept in [
            "image",
            "readinessProbe",
            "initContainers",
            "ephemeralContainers",
        ] {
            assert!(text.contains(kept), "{kept}: {text}");
        }
    }

    /// A Deployment's field owners, read to judge, keep only their leaf
    /// paths, before typing (a file) or after (a live triage), and the
    /// rules read the same paths as from the whole tree.
    #[test]
    fn field_owners_keep_the_same_paths_as_the_tree() {
        use mdiag_core::analysis::written_paths;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut compared = 0;
        for file in [
            "cases/managed-edited.yaml",
            "cases/field-conflict.yaml",
            "cases/managed-rollout-undo.yaml",
        ] {
            let path = root.join(file);
            let whole = crate::file::read_snapshot_file_kept(&path, Keep::Whole).unwrap();
            let analysed = crate::file::read_snapshot_file_kept(&path, Keep::Analysed).unwrap();
            let mut typed_then_trimmed = whole.objects.clone();
            crate::plan::trim_judged(&mut typed_then_trimmed);
            let deployments = whole.objects.deployments.iter().zip(
                analysed
                    .objects
                    .deployments
                    .iter()
                    .zip(&typed_then_trimmed.deployments),
            );
            for (tree, (untyped, typed)) in deployments {
                let entries = |d: &k8s_openapi::api::apps::v1::Deployment| {
                    let all = d.metadata.managed_fields.iter().flatten();
                    all.filter(|m| m.subresource.as_deref() != Some("status"))
                        .cloned()
                        .collect::<Vec<_>>()
                };
                let (tree, untyped, typed) = (entries(tree), entries(untyped), entries(typed));
                assert_eq!(tree.len(), untyped.len(), "{file}");
                for ((tree, untyped), typed) in tree.iter().zip(&untyped).zip(&typed) {
                    let paths = written_paths(tree);
                    assert!(tree.fields_v1.as_ref().is_some_and(|f| f.0.is_object()));
                    for kept in [untyped, typed] {
                        assert!(kept.fields_v1.as_ref().is_some_and(|f| f.0.is_array()));
                        assert_eq!(written_paths(kept), paths, "{file}");
                        assert_eq!(
                            (&kept.manager, kept.time.as_ref()),
                            (&tree.manager, tree.time.as_ref())
                        );
                    }
                    compared += usize::from(!paths.is_empty());
                }
            }
        }
        assert!(compared >= 4, "{compared} entries with paths compared");
    }
}
