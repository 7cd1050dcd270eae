//! Ring 1: dumps written by other tools lack what a live read has:
//! `kubectl get` drops managedFields, hand-made data omits ownerReferences on
//! Pods, targetRef UIDs, defaulted template fields, or keeps the observed
//! generation only in conditions. The verdicts must not depend on those.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use mdiag_source::file::parse_snapshot_text;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Expected {
    healthy: bool,
    last_step: String,
    missing: Option<String>,
    must: Vec<String>,
    must_not: Vec<String>,
}

fn walk_mut(v: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    match v {
        Value::Object(map) => {
            f(map);
            for child in map.values_mut() {
                walk_mut(child, f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| walk_mut(i, f)),
        _ => {}
    }
}

fn degrade(list: &mut Value) {
    // kubectl get drops managedFields unless asked.
    walk_mut(list, &mut |m| {
        m.remove("managedFields");
    });
    // mdiag's own snapshot keeps its objects under `objects`.
    let key = if list.get("format").is_some() {
        "objects"
    } else {
        "items"
    };
    for item in list[key].as_array_mut().unwrap() {
        match item["kind"].as_str().unwrap_or("") {
            "Pod" => {
                item["metadata"]
                    .as_object_mut()
                    .unwrap()
                    .remove("ownerReferences");
            }
            "EndpointSlice" => {
                for e in item["endpoints"].as_array_mut().into_iter().flatten() {
                    if let Some(t) = e.get_mut("targetRef").and_then(Value::as_object_mut) {
                        t.remove("uid");
                    }
                }
            }
            "ReplicaSet" => {
                walk_mut(&mut item["spec"]["template"], &mut |m| {
                    m.remove("terminationMessagePath");
                    m.remove("terminationMessagePolicy");
                });
            }
            "ModelService" => {
                let status = item["status"].as_object_mut().unwrap();
                if let Some(observed) = status.remove("observedGeneration") {
                    for c in status
                        .get_mut("conditions")
                        .and_then(Value::as_array_mut)
                        .into_iter()
                        .flatten()
                    {
                        c["observedGeneration"] = observed.clone();
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn verdicts_hold_on_dumps_missing_what_only_a_live_read_has() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/expected.yaml"),
    )
    .unwrap();
    let expected: BTreeMap<String, Expected> = serde_saphyr::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for (name, want) in expected {
        if name.starts_with("snapshot-") {
            continue;
        }
        let raw = std::fs::read_to_string(fixture_path(&name)).unwrap();
        let mut list: Value = serde_saphyr::from_str(&raw).unwrap();
        degrade(&mut list);
        let snapshot = parse_snapshot_text(
            &serde_json::to_string(&list).unwrap(),
            std::path::Path::new(&name),
        )
        .unwrap();
        let d = diagnose(&snapshot);
        let got = ids(&d);
        let mut problems = Vec::new();
        if d.healthy != want.healthy {
            problems.push(format!("healthy {}", d.healthy));
        }
        if d.verdict.last_step.as_str() != want.last_step {
            problems.push(format!("last_step {}", d.verdict.last_step.as_str()));
        }
        if d.verdict.missing.map(|m| m.as_str().to_string()) != want.missing {
            problems.push(format!("missing {:?}", d.verdict.missing));
        }
        problems.extend(
            want.must
                .iter()
                .filter(|id| !got.contains(&id.as_str()))
                .map(|id| format!("{id} not found")),
        );
        problems.extend(
            want.must_not
                .iter()
                .filter(|id| got.contains(&id.as_str()))
                .map(|id| format!("{id} false alarm")),
        );
        if !problems.is_empty() {
            failures.push(format!("{name}: {} (got {got:?})", problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Replaces every EndpointSlice of a List by the v1 Endpoints that says
/// the same (as an older `kubectl get endpoints` dump would have it).
fn slices_to_endpoints(list: &mut Value) {
    let items = list["items"].as_array_mut().unwrap();
    let mut converted = Vec::new();
    items.retain(|item| {
        if item["kind"] != "EndpointSlice" {
            return true;
        }
        let mut ready = Vec::new();
        let mut not_ready = Vec::new();
        for e in item["endpoints"].as_array().into_iter().flatten() {
            let address = serde_json::json!({
                "ip": e["addresses"][0], "nodeName": e["nodeName"], "targetRef": e["targetRef"],
            });
            if e["conditions"]["ready"] == false {
                not_ready.push(address);
            } else {
                ready.push(address);
            }
        }
        converted.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {
                "name": item["metadata"]["labels"]["kubernetes.io/service-name"],
                "namespace": item["metadata"]["namespace"],
            },
            "subsets": [{"addresses": ready, "notReadyAddresses": not_ready,
                         "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}],
        }));
        false
    });
    items.extend(converted);
}

#[test]
fn v1_endpoints_stand_in_for_missing_endpoint_slices() {
    for (name, healthy, selector_mismatch) in [
        ("healthy", true, false),
        ("readiness-failing", false, false),
        ("selector-mismatch", false, true),
    ] {
        let raw = std::fs::read_to_string(fixture_path(name)).unwrap();
        let mut list: Value = serde_saphyr::from_str(&raw).unwrap();
        slices_to_endpoints(&mut list);
        let text = serde_json::to_string(&list).unwrap();
        let snapshot = parse_snapshot_text(&text, std::path::Path::new(name)).unwrap();
        assert!(snapshot.objects.endpoint_slices.iter().all(|s| {
            s.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("mdiag.dev/converted-from"))
        }));
        let d = diagnose(&snapshot);
        assert_eq!(d.healthy, healthy, "{name}: {:?}", ids(&d));
        assert_eq!(
            ids(&d).contains(&"selector-mismatch"),
            selector_mismatch,
            "{name}"
        );
    }
}

#[test]
fn hand_written_objects_without_generations_are_not_called_unobserved() {
    let raw = std::fs::read_to_string(fixture_path("healthy")).unwrap();
    let mut list: Value = serde_saphyr::from_str(&raw).unwrap();
    for item in list["items"].as_array_mut().unwrap() {
        if matches!(item["kind"].as_str(), Some("Deployment" | "ModelService")) {
            item["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("generation");
            if let Some(status) = item.get_mut("status").and_then(Value::as_object_mut) {
                status.remove("observedGeneration");
                for c in status
                    .get_mut("conditions")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    c.as_object_mut().unwrap().remove("observedGeneration");
                }
            }
        }
    }
    let text = serde_json::to_string(&list).unwrap();
    let d = diagnose(&parse_snapshot_text(&text, std::path::Path::new("healthy")).unwrap());
    assert!(d.healthy, "{:?}", ids(&d));
}
