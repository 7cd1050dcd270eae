//! Knative Serving's Service as a row of the platform table
//! (docs/platforms.md#knative-serving): each Revision in a Deployment of its
//! own, the latest created one current, what serves counted on the
//! Revisions' private Services, scaled to zero not an outage, and a
//! Revision Knative gave up on named from the Service's own status.

use crate::common::{self, diagnose_target, failed_on, gate_view_of, ids, lead};
use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, GateView, Judgement};
use mdiag_core::chain::walk;
use mdiag_core::model::{Gap, Snapshot, TargetSpec};

fn case(name: &str) -> Snapshot {
    common::load_file(&format!("fixtures/cases/{name}.yaml"))
}

fn gate(s: &Snapshot) -> (Diagnosis, GateView) {
    gate_view_of(
        s,
        "ksvc/llama",
        &CrashHistory::default(),
        &GatePolicy::default(),
    )
}

#[test]
fn the_chain_is_every_revisions_deployment_with_the_latest_created_current() {
    let s = case("knative-new-revision-broken-old-serves");
    let target = TargetSpec::parse("ksvc/llama", None).unwrap();
    let chain = walk(&s, &target, "serving", None).unwrap();
    assert_eq!(
        chain.deployment.and_then(|d| d.metadata.name.as_deref()),
        Some("llama-00002-deployment")
    );
    let sets: Vec<(&str, Option<i64>, bool)> = chain
        .replica_sets
        .iter()
        .map(|r| {
            (
                r.replica_set.metadata.name.as_deref().unwrap(),
                r.revision,
                r.current,
            )
        })
        .collect();
    assert_eq!(
        sets,
        [
            ("llama-00002-deployment-8c4f6d9b7f", Some(2), true),
            ("llama-00001-deployment-6b9d7f8c5d", Some(1), false),
        ]
    );
    // The private Services select the Pods; the public ones (no selector,
    // the activator's endpoints) and the Route's placeholder are not walked.
    let services: Vec<&str> = chain
        .services
        .iter()
        .filter_map(|s| s.metadata.name.as_deref())
        .collect();
    assert_eq!(services, ["llama-00002-private", "llama-00001-private"]);
    assert_eq!(chain.revisions_in_traffic(), ["llama-00001"]);
}

#[test]
fn healthy_through_the_activator_is_serving_with_no_finding() {
    let d = diagnose_target(&case("knative-healthy"), "ksvc/llama");
    assert_eq!(d.verdict.state.as_str(), "serving", "{:?}", ids(&d));
    assert_eq!(ids(&d), Vec::<&str>::new());
    assert_eq!(d.verdict.serving.ready_endpoints, Some(2));
    assert_eq!(d.target.kind, "KnativeService");
}

#[test]
fn a_new_revision_that_cannot_start_while_the_old_serves_is_stuck_on_its_pod() {
    let d = diagnose_target(
        &case("knative-new-revision-broken-old-serves"),
        "ksvc/llama",
    );
    assert_eq!(d.verdict.state.as_str(), "degraded");
    assert_eq!(lead(&d), Some("container-config-error"));
    let found = ids(&d);
    assert!(found.contains(&"model-not-loaded"), "{found:?}");
    // The new Revision's private Service takes no traffic before it is
    // Ready: its empty endpoints are by design.
    assert!(!found.contains(&"endpoints-not-ready"), "{found:?}");
    assert!(!found.contains(&"readiness-failing"), "{found:?}");
    // Each Revision is counted against its own Deployment: the old one
    // serves 2 of its 2 while the new one wants its first Pod.
    let old: Vec<(Option<i64>, i32, Option<i32>)> = d
        .revisions
        .iter()
        .filter(|r| !r.current)
        .map(|r| (r.revision, r.serving, r.desired))
        .collect();
    assert_eq!(old, [(Some(1), 2, Some(2))]);
    assert_eq!(d.replicas.desired, 1);
}

#[test]
fn once_the_failed_revision_is_scaled_away_the_service_says_why() {
    // 30 s after its deadline the autoscaler scales the Revision to zero
    // and its Pod is gone: zero desired is not a rest for a Revision that
    // never was Ready, and the Service's condition is the evidence.
    let d = diagnose_target(&case("knative-failed-revision-scaled-away"), "ksvc/llama");
    assert_eq!(d.verdict.state.as_str(), "degraded", "{:?}", ids(&d));
    assert_eq!(lead(&d), Some("model-not-loaded"));
    assert_eq!(d.replicas.desired, 1);
    let f = d.lead().unwrap();
    assert_eq!(f.subject.to_string(), "ksvc/llama");
    let evidence: Vec<String> = f.evidence.iter().map(|e| e.value.clone()).collect();
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("RevisionFailed") && e.contains("secret \"hf-token\" not found")),
        "{evidence:?}"
    );
    assert!(
        evidence.iter().any(|e| e == "llama-00002 / llama-00001"),
        "{evidence:?}"
    );
    let next = d.verdict.next.as_ref().unwrap().shell();
    assert!(
        next.starts_with("kubectl -n serving get ksvc llama"),
        "{next}"
    );
}

#[test]
fn scaled_to_zero_is_not_an_outage() {
    let (code, r) = common::trace_json(
        "ksvc/llama",
        "serving",
        "fixtures/cases/knative-scaled-to-zero-quiet.yaml",
    );
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["verdict"]["state"], "serving", "{r:#}");
    assert_eq!(r["findings"], serde_json::json!([]), "{r:#}");
}

#[test]
fn the_gate_fails_fast_on_a_failed_revision_and_converges_when_ready() {
    for (file, id) in [
        (
            "knative-new-revision-broken-old-serves",
            "container-config-error",
        ),
        ("knative-serves-nothing", "image-pull-not-found"),
        ("knative-failed-revision-scaled-away", "model-not-loaded"),
    ] {
        let (d, view) = gate(&case(file));
        assert_eq!(
            failed_on(&d, &view).map(|(id, _)| id),
            Some(id),
            "{file}: {:#?}",
            view.checks
        );
    }
    for file in ["knative-healthy", "knative-scaled-to-zero-quiet"] {
        let (_, view) = gate(&case(file));
        assert!(
            matches!(view.judgement, Judgement::Converged),
            "{file}: {:?}",
            view.judgement
        );
    }
}

#[test]
fn triage_lists_the_knative_service_not_its_revisions_deployments() {
    assert_eq!(
        common::triage_workloads("fixtures/cases/knative-new-revision-broken-old-serves.yaml"),
        ["KnativeService/llama"]
    );
}

#[test]
fn a_lone_knative_service_is_judged_from_its_conditions_and_traffic() {
    let traced = |file: &str| {
        common::trace_json(
            "ksvc/llama",
            "serving",
            &format!("fixtures/lone/{file}.yaml"),
        )
    };
    let (code, r) = traced("ksvc-ready");
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["verdict"]["state"], "serving", "{r:#}");
    assert_eq!(r["verdict"]["basis"], "workload-status", "{r:#}");
    // The latest Revision failed and the Route keeps the older one: what
    // serves is not the declaration.
    let (code, r) = traced("ksvc-failed");
    assert_eq!(code, Some(1), "{r:#}");
    assert_eq!(r["verdict"]["state"], "degraded", "{r:#}");
    assert_eq!(r["verdict"]["lead"], "model-not-loaded", "{r:#}");
    // A first Revision that failed: no traffic anywhere, nothing serves.
    let mut s = common::load_file("fixtures/lone/ksvc-failed.yaml");
    let status = &mut s.objects.knative_services[0].data["status"];
    status["traffic"] = serde_json::json!([]);
    status["latestReadyRevisionName"] = serde_json::Value::Null;
    let d = diagnose_target(&s, "ksvc/llama");
    assert_eq!(d.verdict.state.as_str(), "not-serving");
    assert_eq!(lead(&d), Some("model-not-loaded"));
}

#[test]
fn the_core_service_kind_is_not_a_knative_service() {
    // `service/llama` on a file holding only the Knative Service names
    // the target it meant.
    let out = common::mdiag()
        .args([
            "trace",
            "service/llama",
            "--snapshot",
            "fixtures/lone/ksvc-ready.yaml",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(said.contains("ksvc/llama"), "{said}");
}

#[test]
fn a_snapshot_of_the_chain_keeps_every_revisions_deployment() {
    let s = case("knative-new-revision-broken-old-serves");
    let kept = common::kept_for_replay(&s, "ksvc/llama", "serving");
    let mut deployments: Vec<&str> = kept
        .deployments
        .iter()
        .filter_map(|d| d.metadata.name.as_deref())
        .collect();
    deployments.sort();
    assert_eq!(
        deployments,
        ["llama-00001-deployment", "llama-00002-deployment"]
    );
    assert_eq!(kept.knative_services.len(), 1);
}

#[test]
fn a_refused_knative_service_list_is_not_the_core_services() {
    let refused = |resource: &str, namespace: &str| Gap {
        contexts: Vec::new(),
        resource: resource.into(),
        namespace: Some(namespace.into()),
        verb: "list".into(),
        name: None,
        reason: format!("{resource} is forbidden"),
        complete_with: None,
        read_in: Vec::new(),
    };
    // Knative's services refused: a ModelService's chain loses nothing.
    let mut s = common::load_file("fixtures/demo/healthy.yaml");
    let namespace = s.objects.model_services[0]
        .metadata
        .namespace
        .clone()
        .unwrap();
    s.gaps
        .push(refused("services.serving.knative.dev", &namespace));
    let d = diagnose_target(&s, "chart-demo");
    assert!(d.gaps.is_empty(), "{:?}", d.gaps);
    assert!(d.healthy);
    // The core services refused still hide the ModelService's Service.
    let mut s = common::load_file("fixtures/demo/healthy.yaml");
    s.gaps.push(refused("services", &namespace));
    let d = diagnose_target(&s, "chart-demo");
    assert_eq!(d.gaps.len(), 1, "{:?}", d.gaps);
    // And a Knative chain says what it could not read.
    let mut s = case("knative-healthy");
    s.gaps
        .push(refused("services.serving.knative.dev", "serving"));
    let d = diagnose_target(&s, "ksvc/llama");
    assert_eq!(d.gaps.len(), 1, "{:?}", d.gaps);
}

/// knative-new-revision-broken-old-serves as if Revision 2 had come up,
/// with the traffic split as `split` says (the latest's share, and a share
/// pinned to Revision 1 by name).
fn split(latest: i64, pinned: i64) -> Snapshot {
    use serde_json::{Value, json};
    let mut s = case("knative-new-revision-broken-old-serves");
    let o = &mut s.objects;
    let ready_status = serde_json::to_value(
        o.pods
            .iter()
            .find(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .unwrap()
                    .starts_with("llama-00001")
            })
            .unwrap()
            .status
            .clone(),
    )
    .unwrap();
    let new_pod = o
        .pods
        .iter_mut()
        .find(|p| {
            p.metadata
                .name
                .as_deref()
                .unwrap()
                .starts_with("llama-00002")
        })
        .unwrap();
    let mut status: Value = ready_status;
    status["podIP"] = json!("10.244.2.7");
    status["podIPs"] = json!([{"ip": "10.244.2.7"}]);
    new_pod.status = serde_json::from_value(status).unwrap();
    for slice in &mut o.endpoint_slices {
        if slice
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("llama-00002-private")
        {
            for e in &mut slice.endpoints {
                e.conditions = serde_json::from_value(
                    json!({"ready": true, "serving": true, "terminating": false}),
                )
                .unwrap();
            }
        }
    }
    let d = o
        .deployments
        .iter_mut()
        .find(|d| d.metadata.name.as_deref() == Some("llama-00002-deployment"))
        .unwrap();
    d.status = serde_json::from_value(json!({"observedGeneration": 1, "replicas": 1,
        "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
        "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
            "lastTransitionTime": "2026-11-28T10:10:40Z"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
            "lastTransitionTime": "2026-11-28T10:10:40Z"}]}))
    .unwrap();
    for rs in &mut o.replica_sets {
        if rs
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("llama-00002")
        {
            rs.status = serde_json::from_value(json!({"replicas": 1, "fullyLabeledReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 1}))
            .unwrap();
        }
    }
    let status = &mut o.knative_services[0].data["status"];
    status["latestReadyRevisionName"] = json!("llama-00002");
    status["conditions"] = json!([
        {"type": "ConfigurationsReady", "status": "True", "lastTransitionTime": "2026-11-28T10:10:41Z"},
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:10:41Z"},
        {"type": "RoutesReady", "status": "True", "lastTransitionTime": "2026-11-28T10:10:41Z"}]);
    status["traffic"] = json!([
        {"revisionName": "llama-00002", "latestRevision": true, "percent": latest},
        {"revisionName": "llama-00001", "latestRevision": false, "percent": pinned}]);
    s
}

#[test]
fn a_traffic_split_pinning_an_older_revision_is_a_declaration_not_a_rollout() {
    // 80 % to the latest, 20 % pinned to Revision 1 by name: both are
    // declared to serve, and all of it serves.
    let d = diagnose_target(&split(80, 20), "ksvc/llama");
    assert_eq!(d.verdict.state.as_str(), "serving", "{:?}", ids(&d));
    assert!(d.healthy, "{:?}", ids(&d));
    assert_eq!((d.replicas.serving, d.replicas.desired), (3, 3));
    let held: Vec<&str> = d
        .pods
        .iter()
        .filter(|p| p.held)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(
        held.iter().all(|n| n.starts_with("llama-00001")),
        "{held:?}"
    );
    let (_, view) = gate(&split(80, 20));
    assert!(
        matches!(view.judgement, Judgement::Converged),
        "{:?}",
        view.judgement
    );
    // All of it on the latest: Revision 1 keeps its Pods only until the
    // autoscaler lets them go, and they are old ones, not declared.
    let d = diagnose_target(&split(100, 0), "ksvc/llama");
    assert!(d.pods.iter().all(|p| !p.held));
    assert_eq!(d.replicas.desired, 1);
}

#[test]
fn a_revision_whose_image_cannot_be_resolved_gets_no_deployment_and_says_why() {
    // Knative resolves a tag to a digest before it makes the Deployment:
    // a tag that does not exist leaves the latest Revision with none, and
    // only the Service's status says why, beside the older Revision that
    // still serves.
    let mut s = case("knative-new-revision-broken-old-serves");
    let new = |name: Option<&String>| name.is_some_and(|n| n.starts_with("llama-00002"));
    let o = &mut s.objects;
    o.deployments.retain(|d| !new(d.metadata.name.as_ref()));
    o.replica_sets.retain(|r| !new(r.metadata.name.as_ref()));
    o.pods.retain(|p| !new(p.metadata.name.as_ref()));
    o.services.retain(|x| !new(x.metadata.name.as_ref()));
    o.endpoint_slices.retain(|x| !new(x.metadata.name.as_ref()));
    let message = "Revision \"llama-00002\" failed with message: Unable to fetch image \
        \"registry.example.com/modeldock/llama:v1.6.0\": failed to resolve image to digest: \
        MANIFEST_UNKNOWN: manifest unknown.";
    for c in o.knative_services[0].data["status"]["conditions"]
        .as_array_mut()
        .unwrap()
    {
        if c["type"] == "ConfigurationsReady" || c["type"] == "Ready" {
            c["message"] = message.into();
        }
    }
    let d = diagnose_target(&s, "ksvc/llama");
    assert_eq!(d.verdict.state.as_str(), "degraded", "{:?}", ids(&d));
    assert_eq!(lead(&d), Some("model-not-loaded"));
    assert!(d.chain.deployment.is_none());
    let evidence = &d.lead().unwrap().evidence[0].value;
    assert!(evidence.contains("MANIFEST_UNKNOWN"), "{evidence}");
    // The older Revision's ReplicaSet is no workload of its own.
    assert!(
        !d.steps
            .iter()
            .any(|s| s.step == mdiag_core::analysis::Step::ReplicaSet && s.reached),
        "{:#?}",
        d.steps
    );
}
