//! Ring 2: targets that help (docs/lone-objects.md#around-it): a kind a
//! kubectl dump holds in some namespaces is read there only, `svc/NAME`
//! traces the workload its Pods belong to, and a target that is not there
//! says where it is (another namespace of the file, another kind).

use crate::common::mdiag;
use serde_json::Value;

const CRASH_LOOP: &str = "fixtures/demo/crash-loop.yaml";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = mdiag().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = run(args);
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{args:?} exited {code}: {e}\n{stdout}\n{stderr}"));
    (code, value)
}

/// The crash-loop dump holds the controller's Deployment in
/// `modeldock-system` and nothing else of that namespace: its Pods and
/// ReplicaSets were not asked for there, so the Deployment is judged by its
/// own status (1/1 available), not called NOT READY for Pods the file
/// never held.
#[test]
fn a_deployment_alone_in_its_namespace_is_judged_by_its_status() {
    let (code, report) = json(&[
        "trace",
        "deploy/modeldock-controller",
        "--snapshot",
        CRASH_LOOP,
        "-o",
        "json",
    ]);
    assert_eq!(report["verdict"]["basis"], "workload-status", "{report:#}");
    assert_eq!(report["verdict"]["state"], "serving", "{report:#}");
    assert_eq!(code, 0, "{report:#}");
    // The gaps it rests on are of its own namespace, each with the
    // kubectl get that would complete the dump there.
    let gaps = report["gaps"].as_array().unwrap();
    let pods = gaps
        .iter()
        .find(|g| g["resource"] == "pods")
        .unwrap_or_else(|| panic!("no pods gap: {gaps:#?}"));
    assert_eq!(pods["namespace"], "modeldock-system");
    assert_eq!(
        pods["complete_with"],
        "kubectl get pods -n modeldock-system -o yaml"
    );
}

/// Its neighbour: the workload of the namespace whose kinds are all in the
/// file is judged on its Pods and endpoints as before, with no gap of
/// another namespace in its report.
#[test]
fn the_namespace_the_dump_was_taken_of_keeps_its_endpoints_basis() {
    let (code, report) = json(&[
        "trace",
        "chart-demo",
        "--snapshot",
        CRASH_LOOP,
        "-o",
        "json",
    ]);
    assert_eq!(report["verdict"]["basis"], "endpoints", "{report:#}");
    assert_eq!(report["verdict"]["state"], "not-serving");
    assert_eq!(code, 1);
    assert_eq!(report["gaps"], serde_json::json!([]), "{report:#}");
}

#[test]
fn a_service_target_traces_the_workload_its_pods_belong_to() {
    let (code, by_service) = json(&[
        "trace",
        "svc/chart-demo",
        "--snapshot",
        CRASH_LOOP,
        "-o",
        "json",
    ]);
    let (same_code, by_name) = json(&[
        "trace",
        "chart-demo",
        "--snapshot",
        CRASH_LOOP,
        "-o",
        "json",
    ]);
    assert_eq!(code, same_code);
    assert_eq!(by_service["target"], by_name["target"]);
    assert_eq!(by_service["verdict"], by_name["verdict"]);
    assert_eq!(by_service["target"]["kind"], "ModelService");
}

/// A Service whose selector matches no Pod says so, with its selector: the
/// first thing to check when it answers 503.
#[test]
fn a_service_that_selects_nothing_names_its_selector() {
    let (code, _, stderr) = run(&[
        "trace",
        "svc/chart-demo",
        "--snapshot",
        "fixtures/demo/selector-mismatch.yaml",
    ]);
    assert_eq!(code, 5, "{stderr}");
    assert!(stderr.contains("selects no Pod"), "{stderr}");
    assert!(stderr.contains("selector "), "{stderr}");
}

#[test]
fn a_name_in_another_namespace_of_the_file_is_named_with_its_flag() {
    let (code, _, stderr) = run(&[
        "trace",
        "chart-demo",
        "-n",
        "default",
        "--snapshot",
        CRASH_LOOP,
    ]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("it is in namespace \"modeldock-lab\": add -n modeldock-lab"),
        "{stderr}"
    );
}

#[test]
fn a_pasted_pod_name_is_offered_as_a_pod() {
    let (code, _, stderr) = run(&[
        "trace",
        "chart-demo-ntmp458kfb-ltbsl",
        "--snapshot",
        CRASH_LOOP,
    ]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("did you mean pod/chart-demo-ntmp458kfb-ltbsl?"),
        "{stderr}"
    );
    // And taken as one, it traces its workload.
    let (code, report) = json(&[
        "trace",
        "pod/chart-demo-ntmp458kfb-ltbsl",
        "--snapshot",
        CRASH_LOOP,
        "-o",
        "json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"]["state"], "not-serving");
}

/// A target whose kind the dump was not asked for in its namespace may be
/// there: exit 4 (a gap hides the answer), naming the `kubectl get` that
/// would tell; not exit 5.
#[test]
fn a_target_of_a_kind_the_dump_lacks_there_is_a_gap_not_an_absence() {
    let (code, _, stderr) = run(&[
        "trace",
        "pod/nope",
        "-n",
        "modeldock-system",
        "--snapshot",
        CRASH_LOOP,
    ]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("the file holds no pods in namespace \"modeldock-system\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("kubectl get pods -n modeldock-system -o yaml"),
        "{stderr}"
    );
    // Its neighbour: a kind the dump holds there, and the name is not: 5.
    let (code, _, stderr) = run(&[
        "trace",
        "deploy/nope",
        "-n",
        "modeldock-system",
        "--snapshot",
        CRASH_LOOP,
    ]);
    assert_eq!(code, 5, "{stderr}");
}

/// A snapshot that records its ModelService list as forbidden cannot say
/// the ModelService is absent: exit 4, as the denial, not 5.
#[test]
fn a_target_whose_list_was_denied_is_an_access_problem() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denied.yaml");
    std::fs::write(
        &file,
        r#"format: mdiag.dev/snapshot
version: 1
captured_at: "2026-11-28T10:00:00Z"
captured_by: a test
gaps:
- resource: modelservices
  namespace: lab
  verb: list
  reason: "modelservices.modeldock.io is forbidden: User cannot list"
objects:
- apiVersion: v1
  kind: Service
  metadata: {name: other, namespace: lab, uid: u1}
"#,
    )
    .unwrap();
    let (code, _, stderr) = run(&[
        "trace",
        "chart-demo",
        "-n",
        "lab",
        "--snapshot",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("denied access"), "{stderr}");
}
