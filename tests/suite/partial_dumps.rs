//! Ring 2: the binary on dumps that hold only some kinds (docs/contract.md#findings:
//! a kind a kubectl dump was not asked for is unknown, not empty), and
//! triage on every bundled healthy fixture.

use crate::common;
use common::mdiag;

use std::path::PathBuf;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn json_of(args: &[&str]) -> (Value, i32) {
    let out = mdiag().args(args).output().unwrap();
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    (value, out.status.code().unwrap())
}

fn finding_ids(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// The service-missing demo's objects as a plain kubectl `List` (what a
/// user with `kubectl get ... -o yaml` has), and as it would be with the
/// API's empty typed lists for Services and EndpointSlices beside it.
fn service_missing_as_list(with_typed_empty_lists: bool) -> String {
    let text = std::fs::read_to_string(root().join("fixtures/demo/service-missing.yaml")).unwrap();
    let snapshot: Value = serde_saphyr::from_str(&text).unwrap();
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": snapshot["objects"],
    });
    let mut out = serde_json::to_string(&list).unwrap();
    if with_typed_empty_lists {
        out.push_str(r#"{"apiVersion": "v1", "kind": "ServiceList", "items": []}"#);
        out.push_str(
            r#"{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSliceList", "items": []}"#,
        );
    }
    out
}

/// Without its ReplicaSets (so without a Pod tied to it) the Deployment is
/// judged from its own status, complete here, and the headline says so
/// (docs/contract.md#basis); the gaps still say how to complete the dump.
#[test]
fn a_dump_without_replicasets_and_services_is_judged_by_the_deployments_status_and_says_how_to_complete_it()
 {
    let file = "fixtures/cases/partial-dump-no-replicasets.yaml";
    let (report, code) = json_of(&["trace", "chart-demo", "--snapshot", file, "-o", "json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["verdict"]["state"], "serving");
    assert_eq!(report["verdict"]["basis"], "workload-status");
    assert_eq!(report["verdict"]["serving"]["status"]["stage"], "complete");
    let ids = finding_ids(&report);
    for absent in [
        "service-missing",
        "selector-mismatch",
        "endpoints-not-ready",
    ] {
        assert!(
            !ids.contains(&absent.to_string()),
            "{absent} from a kind not in the file"
        );
    }
    let gaps = report["gaps"].as_array().unwrap();
    for resource in ["replicasets", "services", "endpointslices", "events"] {
        let gap = gaps
            .iter()
            .find(|g| g["resource"] == resource)
            .unwrap_or_else(|| panic!("no gap for {resource}: {gaps:?}"));
        assert_eq!(
            gap["complete_with"],
            format!("kubectl get {resource} -A -o yaml"),
            "{gap}"
        );
    }
    // Pods and Deployments are in the file: not gaps.
    assert!(!gaps.iter().any(|g| g["resource"] == "pods"), "{gaps:?}");
    assert!(!gaps.iter().any(|g| g["resource"] == "deployments"));
    // Healthy by its status: nothing to run next.
    assert_eq!(report["verdict"]["next"], Value::Null);

    let text = mdiag()
        .args(["trace", "chart-demo", "--snapshot", file, "--width", "300"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("✔ SERVING  2/2 available, rollout complete (by Deployment status; ReplicaSets, Services, EndpointSlices: not in the file)"),
        "{text}"
    );
    assert!(text.contains("not in the file"), "{text}");
    assert!(
        text.contains("add it to the dump: kubectl get replicasets,services,endpointslices,events,leases -A -o yaml"),
        "{text}"
    );
    assert!(text.contains("Service: not read"), "{text}");
    assert!(!text.contains("Service: none"), "{text}");
}

#[test]
fn a_list_cannot_prove_there_is_no_service_but_a_typed_empty_list_can() {
    let (_dir, plain) = write_temp("plain.json", &service_missing_as_list(false));
    let (report, code) = json_of(&[
        "trace",
        "chart-demo",
        "--snapshot",
        plain.to_str().unwrap(),
        "-o",
        "json",
    ]);
    // Without the Services, the Ready Pods are what the verdict rests on
    // (docs/contract.md#basis): never a claim that there is no Service.
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["verdict"]["state"], "serving");
    assert_eq!(report["verdict"]["basis"], "pods");
    assert_eq!(report["verdict"]["serving"]["ready_endpoints"], Value::Null);
    assert!(!finding_ids(&report).contains(&"service-missing".to_string()));
    assert!(
        report["verdict"]["summary"]
            .as_str()
            .unwrap()
            .contains("(by Pod readiness; Services, EndpointSlices: not in the file)"),
        "{report}"
    );

    // The neighbour: the API said there are none.
    let (_dir2, typed) = write_temp("typed.json", &service_missing_as_list(true));
    let (report, code) = json_of(&[
        "trace",
        "chart-demo",
        "--snapshot",
        typed.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["verdict"]["state"], "not-serving");
    assert!(finding_ids(&report).contains(&"service-missing".to_string()));
    let gaps = report["gaps"].as_array().unwrap();
    assert!(
        !gaps
            .iter()
            .any(|g| g["resource"] == "services" || g["resource"] == "endpointslices"),
        "{gaps:?}"
    );
}

/// Every fixture expected.yaml calls healthy, by folder.
fn healthy_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in ["fixtures/demo", "fixtures/cases"] {
        let text = std::fs::read_to_string(root().join(folder).join("expected.yaml")).unwrap();
        let expected: std::collections::BTreeMap<String, Value> =
            serde_saphyr::from_str(&text).unwrap();
        for (name, want) in expected {
            if want["healthy"] == true {
                out.push(root().join(folder).join(format!("{name}.yaml")));
            }
        }
    }
    assert!(out.len() >= 5, "{out:?}");
    out
}

#[test]
fn triage_on_every_healthy_fixture_exits_0_and_ranks_no_controller_context() {
    for file in healthy_fixtures() {
        let f = file.to_str().unwrap();
        let out = mdiag()
            .args(["triage", "-A", "--snapshot", f])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "{f}:\n{text}");
        assert!(
            !text.contains("modeldock-controller"),
            "{f}: the controller's Deployment without its Pods is context:\n{text}"
        );
    }
}

#[test]
fn the_controller_with_its_pods_in_the_file_is_a_workload_again() {
    // Give the controller's Deployment a ReplicaSet in the file: then the
    // file holds its workload, and triage judges it.
    let text = std::fs::read_to_string(root().join("fixtures/demo/healthy.yaml")).unwrap();
    let mut list: Value = serde_saphyr::from_str(&text).unwrap();
    let items = list["items"].as_array_mut().unwrap();
    let controller = items
        .iter()
        .find(|i| i["kind"] == "Deployment" && i["metadata"]["name"] == "modeldock-controller")
        .cloned()
        .expect("the demo holds the controller's Deployment");
    items.push(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "modeldock-controller-7d9f8",
            "namespace": controller["metadata"]["namespace"],
            "uid": "rs-of-the-controller",
            "creationTimestamp": controller["metadata"]["creationTimestamp"],
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "controller": true,
                "name": "modeldock-controller", "uid": controller["metadata"]["uid"],
            }],
        },
        "spec": {"replicas": 1, "selector": controller["spec"]["selector"], "template": controller["spec"]["template"]},
        "status": {"replicas": 0},
    }));
    let (_dir, path) = write_temp(
        "with-controller.json",
        &serde_json::to_string(&list).unwrap(),
    );
    let (report, _) = json_of(&[
        "triage",
        "-A",
        "--snapshot",
        path.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let names: Vec<&str> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["target"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"modeldock-controller"), "{names:?}");
}

#[test]
fn the_complete_dump_command_in_the_docs_names_every_judged_kind() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let command = format!(
        "kubectl get {} -n NAMESPACE -o yaml",
        mdiag_source::file::COMPLETE_DUMP_RESOURCES
    );
    assert!(
        readme.contains(&command),
        "README.md should show the complete dump command: {command}"
    );
}
