//! What an object's metadata says: its name, namespace and UID, its owners,
//! its revision and generation, the labels the controllers set, and whether
//! a selector selects it.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube_core::DynamicObject;

pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
const POD_TEMPLATE_HASH: &str = "pod-template-hash";
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The label a StatefulSet or DaemonSet puts on its Pods and
/// ControllerRevisions: a StatefulSet's Pods carry the revision's name, a
/// DaemonSet's Pods only its hash.
pub(crate) const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// A DaemonSet Pod's template generation, and where its DaemonSet keeps
/// the current one: the fallback when no ControllerRevision was read.
pub(crate) const POD_TEMPLATE_GENERATION: &str = "pod-template-generation";
pub(crate) const DAEMONSET_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Whether a ControllerRevision (its metadata) of the set `set_name` is the
/// one a Pod's `controller-revision-hash` label `pod_hash` names: by the
/// revision's name, its own hash label, or its name less the set's prefix.
pub fn revision_matches(meta: &ObjectMeta, set_name: &str, pod_hash: &str) -> bool {
    let own = name(meta);
    !pod_hash.is_empty()
        && (own == pod_hash
            || meta
                .labels
                .as_ref()
                .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
                .is_some_and(|h| h == pod_hash)
            || own.strip_prefix(set_name).and_then(|r| r.strip_prefix('-')) == Some(pod_hash))
}

/// A StatefulSet Pod's ordinal: the number after the last `-` of its name.
pub(crate) fn ordinal(pod: &Pod) -> Option<i32> {
    name(&pod.metadata).rsplit_once('-')?.1.parse().ok()
}

/// The `controller-revision-hash` label of a Pod.
pub(crate) fn pod_revision_hash(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(CONTROLLER_REVISION_HASH)
        .map(String::as_str)
}

pub(super) fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

pub(super) fn ns_of(meta: &ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("")
}

pub(super) fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

/// The UIDs `meta` names as owners (of a given kind).
pub(super) fn owned_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    !owner_uid.is_empty()
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid)
}

pub(super) fn owner_uid_of_kind<'m>(meta: &'m ObjectMeta, kind: &str) -> Option<&'m str> {
    let owners = meta.owner_references.as_deref().unwrap_or(&[]);
    owners
        .iter()
        .filter(|o| o.kind == kind)
        .max_by_key(|o| o.controller.unwrap_or(false))
        .map(|o| o.uid.as_str())
}

/// The ownerReference that controls the object (`controller: true`).
pub(super) fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// Whether a controller observed the object's current generation. An
/// object that records no generation (hand-written data; the apiserver
/// always sets one) is no evidence that it did not.
pub fn generation_observed(generation: Option<i64>, observed: Option<i64>) -> bool {
    match generation {
        None => true,
        Some(g) => observed.is_some_and(|o| o >= g),
    }
}

/// The generation a ModelService's controller last observed:
/// `status.observedGeneration`, else the newest `observedGeneration` its
/// conditions carry (controllers built on metav1.Condition often set only those).
pub fn observed_generation(msvc: &DynamicObject) -> Option<i64> {
    let status = &msvc.data["status"];
    status["observedGeneration"].as_i64().or_else(|| {
        status["conditions"]
            .as_array()?
            .iter()
            .filter_map(|c| c["observedGeneration"].as_i64())
            .max()
    })
}

/// The revision a Deployment's (or a Rollout's) controller wrote on a
/// ReplicaSet: `deployment.kubernetes.io/revision`, or Argo's
/// `rollout.argoproj.io/revision`.
pub(crate) fn revision_of(meta: &ObjectMeta) -> Option<i64> {
    let annotations = meta.annotations.as_ref()?;
    annotations
        .get(REVISION_ANNOTATION)
        .or_else(|| annotations.get(crate::model::ROLLOUT_REVISION_ANNOTATION))?
        .parse()
        .ok()
}

/// Whether a ReplicaSet runs the Deployment's current template: the same
/// template once the pod-template-hash label the controller adds is removed.
pub(super) fn runs_template(rs: &ReplicaSet, deployment: &Deployment) -> bool {
    let (Some(rs_template), Some(d_template)) = (
        rs.spec.as_ref().and_then(|s| s.template.as_ref()),
        deployment.spec.as_ref().map(|s| &s.template),
    ) else {
        return false;
    };
    let mut rs_template = rs_template.clone();
    if let Some(labels) = rs_template
        .metadata
        .as_mut()
        .and_then(|m| m.labels.as_mut())
    {
        labels.remove(POD_TEMPLATE_HASH);
        labels.remove(crate::model::ROLLOUT_HASH_LABEL);
    }
    let normalise = |t: &k8s_openapi::api::core::v1::PodTemplateSpec| {
        let mut v = serde_json::to_value(t).unwrap_or_default();
        strip_empty(&mut v);
        v
    };
    normalise(&rs_template) == normalise(d_template)
}

/// Drops nulls, empty maps and empty lists so that `labels: {}` and a
/// missing `labels` compare equal.
fn strip_empty(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for child in map.values_mut() {
                strip_empty(child);
            }
            map.retain(|_, c| match c {
                Value::Null => false,
                Value::Object(m) => !m.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(strip_empty),
        _ => {}
    }
}

/// Whether a Service's selector selects the labels.
pub fn selector_matches(
    service: &Service,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return false;
    };
    map_selector_matches(selector, labels)
}

/// Whether a Service's selector (a plain map) selects the labels; an empty
/// one selects nothing.
pub fn map_selector_matches(
    selector: &std::collections::BTreeMap<String, String>,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    if selector.is_empty() {
        return false;
    }
    let Some(labels) = labels else { return false };
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Whether a LabelSelector (matchLabels and matchExpressions) selects the
/// labels. An empty selector selects nothing here: adoption needs intent.
pub fn label_selector_matches(
    selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    let empty = std::collections::BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let match_labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_deref().unwrap_or(&[]);
    if match_labels.is_none_or(|m| m.is_empty()) && expressions.is_empty() {
        return false;
    }
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions_ok = expressions.iter().all(|e| {
        let values = e.values.as_deref().unwrap_or(&[]);
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    labels_ok && expressions_ok
}

/// The value of one label of an object, if it has it.
pub(crate) fn label_of<'m>(meta: &'m ObjectMeta, key: &str) -> Option<&'m str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}
