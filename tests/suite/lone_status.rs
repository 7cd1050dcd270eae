//! A lone workload judged from its own status (docs/lone-objects.md), each
//! stage as the peers answer it: `kubectl rollout status` (its status
//! viewers check, in order: the generation observed, the progress
//! deadline, updated against desired, old replicas pending termination,
//! available against updated; for a StatefulSet ready against desired,
//! the partition, the update revision; for a DaemonSet updated and
//! available against desiredNumberScheduled) and kstatus for a
//! ReplicaSet. Each file is what `kubectl get KIND NAME -o yaml` prints:
//! the workload and nothing below it.

use crate::common::mdiag;
use serde_json::Value;

/// (file, target, namespace, the peer's answer, mdiag's state, its exit).
const CASES: &[(&str, &str, &str, &str, &str, i32)] = &[
    (
        "deployment-complete",
        "deploy/web",
        "shop",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "deployment-not-observed",
        "deploy/web",
        "shop",
        "waiting for spec update to be observed",
        "progressing",
        3,
    ),
    (
        "deployment-updating",
        "deploy/web",
        "shop",
        "1 out of 3 new replicas have been updated",
        "progressing",
        3,
    ),
    (
        "deployment-old-pending",
        "deploy/web",
        "shop",
        "1 old replicas are pending termination",
        "progressing",
        3,
    ),
    (
        "deployment-unavailable",
        "deploy/web",
        "shop",
        "2 of 3 updated replicas are available",
        "progressing",
        3,
    ),
    (
        "deployment-deadline",
        "deploy/web",
        "shop",
        "error: exceeded its progress deadline",
        "degraded",
        1,
    ),
    (
        "deployment-deadline-none-available",
        "deploy/web",
        "shop",
        "error: exceeded its progress deadline",
        "not-serving",
        1,
    ),
    (
        "deployment-scaled-to-zero",
        "deploy/web",
        "shop",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "statefulset-complete",
        "sts/shard",
        "serve",
        "rolling update complete 3 pods at revision shard-7c9d",
        "serving",
        0,
    ),
    (
        "statefulset-not-observed",
        "sts/shard",
        "serve",
        "waiting for statefulset spec update to be observed",
        "progressing",
        3,
    ),
    (
        "statefulset-not-ready",
        "sts/shard",
        "serve",
        "Waiting for 2 pods to be ready",
        "progressing",
        3,
    ),
    (
        "statefulset-rolling",
        "sts/shard",
        "serve",
        "waiting for statefulset rolling update to complete",
        "progressing",
        3,
    ),
    (
        "statefulset-partition-done",
        "sts/shard",
        "serve",
        "partitioned roll out complete: 1 new pods have been updated",
        "serving",
        0,
    ),
    (
        "daemonset-complete",
        "ds/model-prefetch",
        "modeldock-nodes",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "daemonset-not-observed",
        "ds/model-prefetch",
        "modeldock-nodes",
        "waiting for daemon set spec update to be observed",
        "progressing",
        3,
    ),
    (
        "daemonset-updating",
        "ds/model-prefetch",
        "modeldock-nodes",
        "2 out of 4 new pods have been updated",
        "progressing",
        3,
    ),
    (
        "daemonset-unavailable",
        "ds/model-prefetch",
        "modeldock-nodes",
        "3 of 4 updated pods are available",
        "progressing",
        3,
    ),
    (
        "replicaset-complete",
        "rs/cache",
        "shop",
        "kstatus: Current",
        "serving",
        0,
    ),
    (
        "replicaset-not-observed",
        "rs/cache",
        "shop",
        "kstatus: InProgress",
        "progressing",
        3,
    ),
    (
        "replicaset-unavailable",
        "rs/cache",
        "shop",
        "kstatus: InProgress (Available: 1/2)",
        "progressing",
        3,
    ),
    (
        "replicaset-scaling",
        "rs/cache",
        "shop",
        "kstatus: InProgress (Replicas: 2/3)",
        "progressing",
        3,
    ),
];

fn traced(file: &str, target: &str, ns: &str, json: bool) -> (i32, String) {
    let path = format!("fixtures/lone/{file}.yaml");
    let mut args = vec![
        "-n",
        ns,
        "trace",
        target,
        "--snapshot",
        path.as_str(),
        "--width",
        "400",
    ];
    if json {
        args.extend(["-o", "json"]);
    }
    let out = mdiag().args(&args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn every_stage_of_a_lone_workload_judges_as_its_peer_answers() {
    let mut wrong = Vec::new();
    for (file, target, ns, peer, state, exit) in CASES {
        let (code, text) = traced(file, target, ns, true);
        let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let verdict = &report["verdict"];
        let got = (verdict["state"].as_str().unwrap_or("?"), code);
        if got != (*state, *exit) || verdict["basis"] != "workload-status" {
            wrong.push(format!(
                "{file} (peer: {peer}): want {state}/{exit} by workload-status, got {}/{} by {}",
                got.0, got.1, verdict["basis"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The headline says what the verdict rests on, and the stage in the
/// words the peer uses.
#[test]
fn the_headline_says_it_rests_on_the_workloads_status() {
    for (file, target, ns, want) in [
        (
            "deployment-complete",
            "deploy/web",
            "shop",
            "SERVING  3/3 available, rollout complete (by Deployment status; ReplicaSets, Pods, Services, EndpointSlices: not in the file)",
        ),
        (
            "deployment-old-pending",
            "deploy/web",
            "shop",
            "PROGRESSING  1 old replica pending termination (by Deployment status;",
        ),
        (
            "deployment-deadline",
            "deploy/web",
            "shop",
            "progress deadline exceeded, 3/3 available; ",
        ),
        (
            "statefulset-not-ready",
            "sts/shard",
            "serve",
            "PROGRESSING  1 of 3 Pods ready (by StatefulSet status;",
        ),
        (
            "daemonset-updating",
            "ds/model-prefetch",
            "modeldock-nodes",
            "PROGRESSING  2 of 4 new replicas updated (by DaemonSet status;",
        ),
    ] {
        let (_, text) = traced(file, target, ns, false);
        // The headline is the line after the file's name and clock.
        let headline = text.lines().nth(2).unwrap_or("");
        assert!(headline.contains(want), "{file}: {want:?} not in\n{text}");
    }
}

/// With the Pods in the input, the Pods decide, not the status: a
/// Deployment whose status says complete while its new Pods crash-loop is
/// not serving (the status is stale or summarises too kindly); this is
/// where mdiag's answer is better than the status alone.
#[test]
fn with_the_pods_there_the_pods_decide() {
    let out = mdiag()
        .args([
            "trace",
            "deploy/web",
            "-n",
            "shop",
            "--snapshot",
            "fixtures/cases/plain-deployment-broken.yaml",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(report["verdict"]["basis"], "workload-status");
    assert_ne!(report["verdict"]["state"], "serving");
}

/// A Pod Running and Ready without `spec.nodeName` (a test table's shape)
/// was bound all the same: it reaches ready, not `stored`.
#[test]
fn a_ready_pod_without_a_node_name_is_ready() {
    let (code, text) = traced("pod-ready-no-node", "pod/probe-runner", "shop", true);
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["verdict"]["state"], "serving", "{report}");
    assert_eq!(report["verdict"]["basis"], "pods");
    assert_eq!(report["verdict"]["last_step"], "ready");
    assert_eq!(code, 0);
}
