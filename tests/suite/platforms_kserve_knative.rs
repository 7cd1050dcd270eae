//! KServe's Knative mode (docs/platforms.md#kserves-knative-mode): an
//! InferenceService whose predictor runs in a Knative Service it owns is
//! walked through that Knative Service's Revisions, judged as the Knative
//! Service would be, and named as the InferenceService.

use crate::common::{self, diagnose_target, failed_on, gate_view_of, ids, lead};
use mdiag_core::analysis::Step;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, Judgement};
use mdiag_core::chain::walk;
use mdiag_core::model::{Snapshot, TargetSpec};

fn case(name: &str) -> Snapshot {
    common::load_file(&format!("fixtures/cases/kserve-knative-{name}.yaml"))
}

#[test]
fn the_predictors_knative_service_is_walked_below_the_inference_service() {
    let s = case("new-revision-broken-old-serves");
    let target = TargetSpec::parse("isvc/llama", None).unwrap();
    let chain = walk(&s, &target, "serving", None).unwrap();
    let top = chain.platform.unwrap();
    assert_eq!(top.kind(), "InferenceService");
    let ksvc = chain.knative_service.unwrap();
    assert_eq!(
        ksvc.object.metadata.name.as_deref(),
        Some("llama-predictor")
    );
    assert_eq!(
        chain.deployment.and_then(|d| d.metadata.name.as_deref()),
        Some("llama-predictor-00002-deployment")
    );
    let sets: Vec<(Option<i64>, bool)> = chain
        .replica_sets
        .iter()
        .map(|r| (r.revision, r.current))
        .collect();
    assert_eq!(sets, [(Some(2), true), (Some(1), false)]);
    let services: Vec<&str> = chain
        .services
        .iter()
        .filter_map(|s| s.metadata.name.as_deref())
        .collect();
    assert_eq!(
        services,
        [
            "llama-predictor-00002-private",
            "llama-predictor-00001-private"
        ]
    );
}

#[test]
fn healthy_is_serving_and_the_tree_names_the_knative_service() {
    let d = diagnose_target(&case("healthy"), "isvc/llama");
    assert_eq!(d.verdict.state.as_str(), "serving", "{:?}", ids(&d));
    assert_eq!(ids(&d), Vec::<&str>::new());
    assert_eq!(d.verdict.serving.ready_endpoints, Some(2));
    assert_eq!(d.target.kind, "InferenceService");
    let out = common::mdiag()
        .args([
            "trace",
            "isvc/llama",
            "--snapshot",
            "fixtures/cases/kserve-knative-healthy.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let isvc = text.find("InferenceService llama ").expect(&text);
    let ksvc = text.find("KnativeService llama-predictor ").expect(&text);
    let deployment = text
        .find("Deployment llama-predictor-00001-deployment")
        .expect(&text);
    assert!(isvc < ksvc && ksvc < deployment, "{text}");
}

#[test]
fn a_new_revision_that_cannot_start_while_the_old_serves_is_stuck_on_its_pod() {
    let d = diagnose_target(&case("new-revision-broken-old-serves"), "isvc/llama");
    assert_eq!(d.verdict.state.as_str(), "degraded", "{:?}", ids(&d));
    assert_eq!(lead(&d), Some("container-config-error"));
    // The Knative Service's word on its Revision, with the Revision's
    // message (KServe's modelStatus only says Pending).
    let said = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "model-not-loaded")
        .expect("model-not-loaded");
    assert_eq!(said.subject.to_string(), "ksvc/llama-predictor");
    assert!(
        said.evidence
            .iter()
            .any(|e| e.value.contains("secret \"hf-token\" not found")),
        "{:?}",
        said.evidence
    );
    let found = ids(&d);
    assert!(!found.contains(&"endpoints-not-ready"), "{found:?}");
    let old: Vec<(Option<i64>, i32, Option<i32>)> = d
        .revisions
        .iter()
        .filter(|r| !r.current)
        .map(|r| (r.revision, r.serving, r.desired))
        .collect();
    assert_eq!(old, [(Some(1), 2, Some(2))]);
    // The commands name the InferenceService as the target.
    let f = d.lead().unwrap();
    assert!(
        f.vars.get("target").is_some_and(|t| t == "isvc/llama"),
        "{:?}",
        f.vars
    );
}

#[test]
fn the_inference_service_and_its_knative_service_get_one_verdict() {
    for name in [
        "healthy",
        "new-revision-broken-old-serves",
        "serves-nothing",
    ] {
        let s = case(name);
        let by_isvc = diagnose_target(&s, "isvc/llama");
        let by_ksvc = diagnose_target(&s, "ksvc/llama-predictor");
        assert_eq!(
            (
                by_isvc.verdict.state,
                lead(&by_isvc),
                by_isvc.replicas.serving,
                by_isvc.replicas.desired
            ),
            (
                by_ksvc.verdict.state,
                lead(&by_ksvc),
                by_ksvc.replicas.serving,
                by_ksvc.replicas.desired
            ),
            "{name}"
        );
    }
}

#[test]
fn the_gate_fails_fast_on_a_broken_predictor_and_converges_when_ready() {
    let gate = |s: &Snapshot| {
        gate_view_of(
            s,
            "isvc/llama",
            &CrashHistory::default(),
            &GatePolicy::default(),
        )
    };
    for (name, id) in [
        ("new-revision-broken-old-serves", "container-config-error"),
        ("serves-nothing", "image-pull-not-found"),
    ] {
        let (d, view) = gate(&case(name));
        assert_eq!(
            failed_on(&d, &view).map(|(id, _)| id),
            Some(id),
            "{name}: {:#?}",
            view.checks
        );
    }
    let (_, view) = gate(&case("healthy"));
    assert!(
        matches!(view.judgement, Judgement::Converged),
        "{:?}",
        view.judgement
    );
}

#[test]
fn triage_lists_the_inference_service_only() {
    assert_eq!(
        common::triage_workloads(
            "fixtures/cases/kserve-knative-new-revision-broken-old-serves.yaml"
        ),
        ["InferenceService/llama"]
    );
}

#[test]
fn without_its_knative_service_the_inference_service_is_unknown_and_says_what_to_read() {
    let d = diagnose_target(&case("predictor-not-read"), "isvc/llama");
    assert_eq!(d.verdict.state.as_str(), "unknown", "{:?}", ids(&d));
    assert_eq!(ids(&d), Vec::<&str>::new());
    // The Deployment step is unknown, not missing: it stands on the
    // Knative Service that was not read.
    let deployment = d.steps.iter().find(|s| s.step == Step::Deployment).unwrap();
    assert!(!deployment.reached);
    assert_eq!(
        deployment.unread.as_deref(),
        Some("services.serving.knative.dev")
    );
    let out = common::mdiag()
        .args([
            "trace",
            "isvc/llama",
            "--snapshot",
            "fixtures/cases/kserve-knative-predictor-not-read.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("its predictor's Knative Service is not in the input"),
        "{text}"
    );
    assert!(!flat.contains("no Deployment"), "{text}");
    assert_eq!(
        d.verdict.next.as_ref().map(|c| c.shell()).as_deref(),
        Some("kubectl -n serving get ksvc -l serving.kserve.io/inferenceservice=llama -o yaml")
    );
}

#[test]
fn a_snapshot_of_the_chain_keeps_the_knative_service_and_every_revision() {
    let kept = common::kept_for_replay(
        &case("new-revision-broken-old-serves"),
        "isvc/llama",
        "serving",
    );
    assert_eq!(kept.inference_services.len(), 1);
    assert_eq!(kept.knative_services.len(), 1);
    let mut deployments: Vec<&str> = kept
        .deployments
        .iter()
        .filter_map(|d| d.metadata.name.as_deref())
        .collect();
    deployments.sort();
    assert_eq!(
        deployments,
        [
            "llama-predictor-00001-deployment",
            "llama-predictor-00002-deployment"
        ]
    );
}
