//! Ring 2: StatefulSets and DaemonSets as targets, through the binary on the
//! case fixtures: the ladder without a ReplicaSet, partition and OnDelete
//! judged as such, triage rows, and the target's aliases.

use crate::common;
use common::mdiag;

use std::path::Path;

use serde_json::Value;

fn case(name: &str) -> String {
    format!("fixtures/cases/{name}.yaml")
}

/// `trace TARGET --snapshot FILE -o json`: the exit code and the report.
fn trace(target: &str, file: &str) -> (i32, Value) {
    let out = mdiag()
        .args(["trace", target, "--snapshot", &case(file), "-o", "json"])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{target} on {file}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

fn ids(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

fn steps(report: &Value) -> Vec<&str> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect()
}

#[test]
fn each_set_fixture_gets_its_state_exit_code_and_a_ladder_without_a_replicaset() {
    let cases = [
        (
            "sts/shard",
            "statefulset-healthy",
            0,
            "serving",
            "StatefulSet",
        ),
        (
            "sts/shard",
            "statefulset-crash-loop",
            1,
            "degraded",
            "StatefulSet",
        ),
        (
            "sts/shard",
            "statefulset-partition",
            0,
            "serving",
            "StatefulSet",
        ),
        (
            "sts/shard",
            "statefulset-on-delete",
            0,
            "serving",
            "StatefulSet",
        ),
        (
            "ds/model-prefetch",
            "daemonset-healthy",
            0,
            "serving",
            "DaemonSet",
        ),
        (
            "ds/model-prefetch",
            "daemonset-image-pull",
            1,
            "degraded",
            "DaemonSet",
        ),
    ];
    for (target, file, code, state, kind) in cases {
        let (got, report) = trace(target, file);
        assert_eq!(got, code, "{file}: {report}");
        assert_eq!(report["verdict"]["state"], state, "{file}");
        assert_eq!(report["target"]["kind"], kind, "{file}");
        let rung = kind.to_ascii_lowercase();
        assert_eq!(
            steps(&report),
            [
                rung.as_str(),
                "stored",
                "bound",
                "started",
                "ready",
                "serving"
            ],
            "{file}"
        );
    }
}

#[test]
fn kubectls_names_for_the_kinds_are_accepted() {
    let (_, short) = trace("sts/shard", "statefulset-healthy");
    // The Service in front of the set traces the set.
    let (code, by_service) = trace("svc/shard", "statefulset-healthy");
    assert_eq!(code, 0);
    assert_eq!(by_service["target"], short["target"]);
    for alias in [
        "statefulset/shard",
        "statefulsets/shard",
        "statefulsets.apps/shard",
    ] {
        let (code, report) = trace(alias, "statefulset-healthy");
        assert_eq!(code, 0, "{alias}");
        assert_eq!(report["target"], short["target"], "{alias}");
    }
    let (_, short) = trace("ds/model-prefetch", "daemonset-healthy");
    for alias in ["daemonset/model-prefetch", "daemonsets.apps/model-prefetch"] {
        let (_, report) = trace(alias, "daemonset-healthy");
        assert_eq!(report["target"], short["target"], "{alias}");
    }
    // A kind mdiag does not trace is a usage error that names the ones it does.
    let out = mdiag()
        .args([
            "trace",
            "ingress/shard",
            "--snapshot",
            &case("statefulset-healthy"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sts/NAME") && err.contains("ds/NAME"), "{err}");
    // A set that is not there: exit 5, naming the one that is.
    let out = mdiag()
        .args([
            "trace",
            "sts/other",
            "-n",
            "serve",
            "--snapshot",
            &case("statefulset-healthy"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("StatefulSet \"other\" not found") && err.contains("sts/shard"),
        "{err}"
    );
}

#[test]
fn a_crash_loop_on_the_update_revision_is_stuck_while_the_old_ordinals_serve() {
    let out = mdiag()
        .args([
            "trace",
            "sts/shard",
            "--snapshot",
            &case("statefulset-crash-loop"),
            // One headline line to match (the view wraps at 80 when piped).
            "--width",
            "200",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "ROLLOUT STUCK  revision 2 stopped at bound: CrashLoopBackOff [crash-loop]; revision 1 still serving 2/3"
        ),
        "{text}"
    );
    assert!(
        text.contains("next: kubectl -n serve logs shard-2 -c server --previous"),
        "{text}"
    );
    let (_, report) = trace("sts/shard", "statefulset-crash-loop");
    assert_eq!(report["verdict"]["serving"]["ready_endpoints"], 2);
    assert_eq!(report["replicas"]["current"], 1);
    assert_eq!(report["replicas"]["old"], 2);
    assert_eq!(report["findings"][0]["subject"]["name"], "shard-2");
    // The Pod of a set is traced through the set.
    let (code, by_pod) = trace("pod/shard-0", "statefulset-crash-loop");
    assert_eq!(code, 1);
    assert_eq!(by_pod["target"]["kind"], "StatefulSet");
    assert_eq!(ids(&by_pod), ids(&report));
}

#[test]
fn a_partition_that_was_reached_is_done_and_says_where_each_pod_is() {
    let (code, report) = trace("sts/shard", "statefulset-partition");
    assert_eq!(code, 0);
    assert_eq!(report["healthy"], true);
    assert!(ids(&report).is_empty(), "{:?}", ids(&report));
    let held: Vec<(&str, bool, i64)> = report["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["held"].as_bool().unwrap(),
                p["revision"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        held,
        [
            ("shard-2", false, 2),
            ("shard-0", true, 1),
            ("shard-1", true, 1)
        ]
    );
    let summary = report["verdict"]["summary"].as_str().unwrap();
    assert_eq!(
        summary,
        "SERVING  3/3 serving: 1 on revision 2, 2 kept on an older revision by the update strategy, rollout complete"
    );
    assert!(steps(&report).contains(&"statefulset"));
    assert!(
        report["steps"][0]["note"]
            .as_str()
            .unwrap()
            .ends_with("partition 2"),
        "{}",
        report["steps"][0]
    );
}

#[test]
fn an_on_delete_set_says_its_pods_wait_to_be_deleted_without_calling_it_stuck() {
    let (code, report) = trace("sts/shard", "statefulset-on-delete");
    assert_eq!(code, 0, "info only: {report}");
    assert_eq!(ids(&report), ["update-on-delete"]);
    let f = &report["findings"][0];
    assert_eq!(f["severity"], "info");
    assert_eq!(f["subject"]["kind"], "StatefulSet");
    let detail = f["detail"].as_str().unwrap();
    assert!(
        detail.contains("OnDelete") && detail.contains("shard-0, shard-1"),
        "{detail}"
    );
    let checks: Vec<&str> = f["check"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        checks
            .iter()
            .any(|c| c.starts_with("kubectl -n serve get statefulset/shard -o 'jsonpath=")),
        "{checks:?}"
    );
    assert!(checks.iter().all(|c| !c.contains('<')), "{checks:?}");
    assert!(
        checks.contains(
            &"mdiag trace sts/shard -n serve --snapshot fixtures/cases/statefulset-on-delete.yaml"
        ),
        "{checks:?}"
    );
    // The entry explains itself.
    let out = mdiag().args(["explain", "OnDelete"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("update-on-delete"));
}

#[test]
fn a_daemonset_that_cannot_pull_its_new_image_is_stuck_on_one_node() {
    let (code, report) = trace("ds/model-prefetch", "daemonset-image-pull");
    assert_eq!(code, 1);
    assert_eq!(report["verdict"]["lead"], "image-pull-not-found");
    assert_eq!(report["verdict"]["last_step"], "bound");
    assert_eq!(report["verdict"]["serving"]["desired"], 2);
    assert_eq!(report["verdict"]["serving"]["ready_endpoints"], 1);
    assert!(
        report["steps"][0]["note"]
            .as_str()
            .unwrap()
            .contains("update revision 2 (model-prefetch-84d5b6f7c9)"),
        "{}",
        report["steps"][0]
    );
}

#[test]
fn triage_ranks_sets_as_rows_and_names_them_as_kubectl_does() {
    let out = mdiag()
        .args([
            "triage",
            "-A",
            "--snapshot",
            &case("statefulset-crash-loop"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sts/shard"), "{text}");
    assert!(text.contains("trace sts/shard -n serve"), "{text}");
    let out = mdiag()
        .args([
            "triage",
            "-A",
            "--snapshot",
            &case("daemonset-image-pull"),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{report}");
    assert_eq!(items[0]["target"]["kind"], "DaemonSet");
    assert_eq!(items[0]["target"]["name"], "model-prefetch");
    // The healthy neighbours exit 0.
    for file in [
        "daemonset-healthy",
        "statefulset-healthy",
        "statefulset-partition",
    ] {
        let out = mdiag()
            .args(["triage", "-A", "--snapshot", &case(file)])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn a_set_still_moving_with_nothing_wrong_is_progressing_and_points_at_its_rollout_status() {
    // The partition fixture with the partition taken away: ordinals 0 and 1
    // are simply old now, and the controller has yet to replace them.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(case("statefulset-partition"));
    let mut snapshot = mdiag_source::read_snapshot_file(&path).unwrap();
    let spec = snapshot.objects.stateful_sets[0].spec.as_mut().unwrap();
    spec.update_strategy.as_mut().unwrap().rolling_update = None;
    let target = mdiag_core::model::TargetSpec::parse("sts/shard", None).unwrap();
    let chain = mdiag_core::chain::walk(&snapshot, &target, "serve", None).unwrap();
    let now = snapshot.origin.newest_seen.unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    assert_eq!(d.verdict.state, mdiag_core::analysis::State::Progressing);
    assert_eq!(mdiag::exit::for_diagnosis(&d).code(), 3);
    let lead = d.lead().unwrap();
    assert_eq!(lead.id.as_str(), "rollout-in-progress");
    assert!(
        lead.detail.en().contains("2 Pods of older revisions"),
        "{}",
        lead.detail.en()
    );
    assert_eq!(
        d.verdict.next.as_ref().map(|c| c.shell()).as_deref(),
        Some("kubectl -n serve rollout status statefulset/shard")
    );
}

#[test]
fn an_hpa_that_scales_the_statefulset_is_judged_with_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(case("statefulset-healthy"));
    let mut snapshot = mdiag_source::read_snapshot_file(&path).unwrap();
    let hpa = |kind: &str| -> k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "shard-autoscale", "namespace": "serve"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": "shard"},
                     "minReplicas": 3, "maxReplicas": 6},
            "status": {"currentReplicas": 3, "desiredReplicas": 0, "conditions": [{
                "type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric",
                "message": "the HPA was unable to compute the replica count: failed to get cpu utilization",
                "lastTransitionTime": "2026-11-28T10:45:00Z"}]}
        }))
        .unwrap()
    };
    let target = mdiag_core::model::TargetSpec::parse("sts/shard", None).unwrap();
    let now = snapshot.origin.newest_seen.unwrap();
    snapshot.objects.hpas.push(hpa("StatefulSet"));
    let chain = mdiag_core::chain::walk(&snapshot, &target, "serve", None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    let found: Vec<&str> = d.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(found, ["hpa-metrics-unavailable"]);
    // An HPA of another kind's workload of the same name is not this one's.
    snapshot.objects.hpas = vec![hpa("Deployment")];
    let chain = mdiag_core::chain::walk(&snapshot, &target, "serve", None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    assert!(d.findings.is_empty(), "{:?}", d.findings);
}
