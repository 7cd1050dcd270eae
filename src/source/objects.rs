//! Turning untyped Kubernetes objects (JSON values) into the typed
//! [`Objects`] the analysis reads.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::model::{EventRecord, Objects};

/// An object whose fields do not fit its kind.
#[derive(Debug, thiserror::Error)]
#[error("{kind} {name:?} does not fit its schema: {detail}")]
pub struct ObjectError {
    pub kind: String,
    pub name: String,
    pub detail: String,
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

/// Files one object under its kind. A ModelService is taken from any API
/// group, as discovery would find it by its short name.
pub fn sort_object(objects: &mut Objects, value: Value) -> Result<(), ObjectError> {
    let kind = value["kind"].as_str().unwrap_or("").to_string();
    let api_version = value["apiVersion"].as_str().unwrap_or("").to_string();
    let group = group_of(&api_version);
    match (group, kind.as_str()) {
        (_, "ModelService") => objects.model_services.push(typed(value)?),
        ("apps", "Deployment") => objects.deployments.push(typed(value)?),
        ("apps", "ReplicaSet") => objects.replica_sets.push(typed(value)?),
        ("apps", "StatefulSet") => objects.stateful_sets.push(typed(value)?),
        ("apps", "DaemonSet") => objects.daemon_sets.push(typed(value)?),
        ("apps", "ControllerRevision") => objects.controller_revisions.push(typed(value)?),
        ("", "Pod") => objects.pods.push(typed(value)?),
        ("", "Service") => objects.services.push(typed(value)?),
        ("discovery.k8s.io", "EndpointSlice") => objects.endpoint_slices.push(typed(value)?),
        ("", "Event") => objects
            .events
            .push(EventRecord::Core(Box::new(typed(value)?))),
        ("events.k8s.io", "Event") => objects
            .events
            .push(EventRecord::New(Box::new(typed(value)?))),
        ("", "Node") => objects.nodes.push(typed(value)?),
        ("coordination.k8s.io", "Lease") => objects.leases.push(typed(value)?),
        ("autoscaling", "HorizontalPodAutoscaler") if api_version == "autoscaling/v2" => {
            objects.hpas.push(typed(value)?)
        }
        ("policy", "PodDisruptionBudget") => objects.pdbs.push(typed(value)?),
        ("gateway.networking.k8s.io", "HTTPRoute") => objects.http_routes.push(typed(value)?),
        // Secrets are never kept, whoever handed them to us.
        ("", "Secret") => {}
        _ => objects.other.push(value),
    }
    Ok(())
}

/// Every object back as JSON values, in a stable order (for writing files).
pub fn all_values(objects: &Objects) -> Vec<Value> {
    fn push<T: serde::Serialize>(out: &mut Vec<Value>, items: &[T]) {
        out.extend(items.iter().filter_map(|i| serde_json::to_value(i).ok()));
    }
    let mut out = Vec::with_capacity(objects.len());
    push(&mut out, &objects.model_services);
    push(&mut out, &objects.deployments);
    push(&mut out, &objects.replica_sets);
    push(&mut out, &objects.stateful_sets);
    push(&mut out, &objects.daemon_sets);
    push(&mut out, &objects.controller_revisions);
    push(&mut out, &objects.pods);
    push(&mut out, &objects.services);
    push(&mut out, &objects.endpoint_slices);
    out.extend(objects.events.iter().map(EventRecord::to_value));
    push(&mut out, &objects.nodes);
    push(&mut out, &objects.leases);
    push(&mut out, &objects.hpas);
    push(&mut out, &objects.pdbs);
    push(&mut out, &objects.http_routes);
    out.extend(objects.other.iter().cloned());
    out
}

/// A dump may carry the older v1 Endpoints of a Service and no
/// EndpointSlice (as `kubectl get endpoints` prints them). Those say the
/// same thing; turn each into a slice, marked as converted, when the
/// Service has no slice of its own in the file.
pub fn slices_from_endpoints(objects: &mut Objects) {
    use crate::chain::SERVICE_NAME_LABEL;
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
