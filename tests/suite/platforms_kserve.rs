//! KServe's InferenceService as a row of the platform table
//! (docs/platforms.md#kserve): its chain found by owner UID and label, its
//! model status judged only as current as its Pods, and the gate failing
//! fast on what waiting cannot fix while it waits, and says so, on a model
//! still loading.

use crate::common::{self, diagnose_target, failed_on, gate_view_of, ids, mdiag};
use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, GateView, Judgement};
use mdiag_core::chain::walk;
use mdiag_core::model::{Snapshot, TargetSpec};

fn case(name: &str) -> Snapshot {
    common::load_file(&format!("fixtures/cases/{name}.yaml"))
}

/// The gate's judgement of `isvc/llama` in `s`, with no crash history.
fn gate(s: &Snapshot, policy: &GatePolicy) -> (Diagnosis, GateView) {
    gate_view_of(s, "isvc/llama", &CrashHistory::default(), policy)
}

fn predictor(s: &Snapshot) -> Option<String> {
    let target = TargetSpec::parse("isvc/llama", None).unwrap();
    let chain = walk(s, &target, "serving", None).unwrap();
    chain.deployment.and_then(|d| d.metadata.name.clone())
}

#[test]
fn the_predictor_is_found_by_owner_and_label_not_by_name() {
    let mut s = case("kserve-healthy");
    assert_eq!(predictor(&s).as_deref(), Some("llama-predictor"));
    // A transformer the InferenceService also owns is not what serves.
    let mut transformer = s.objects.deployments[0].clone();
    transformer.metadata.name = Some("llama-transformer".into());
    transformer.metadata.uid = Some("0b9e0c55-transformer".into());
    transformer
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("component".into(), "transformer".into());
    s.objects.deployments.insert(0, transformer);
    assert_eq!(predictor(&s).as_deref(), Some("llama-predictor"));
    // Renamed, the predictor is still the InferenceService's by UID; a
    // Deployment merely named like it, owned by nothing, is not.
    let mut s = case("kserve-healthy");
    let d = s
        .objects
        .deployments
        .iter_mut()
        .find(|d| d.metadata.name.as_deref() == Some("llama-predictor"))
        .unwrap();
    d.metadata.name = Some("serving-pool-a".into());
    let mut lookalike = d.clone();
    lookalike.metadata.name = Some("llama-predictor".into());
    lookalike.metadata.uid = Some("5d1c-lookalike".into());
    lookalike.metadata.owner_references = None;
    s.objects.deployments.push(lookalike);
    assert_eq!(predictor(&s).as_deref(), Some("serving-pool-a"));
}

#[test]
fn a_model_status_older_than_ready_pods_is_not_claimed() {
    // The healthy case with a status left from a failed load before the
    // current Pods: Ready Pods on every desired replica win.
    let mut s = case("kserve-healthy");
    let status = &mut s.objects.inference_services[0].data["status"]["modelStatus"];
    status["states"]["targetModelState"] = "FailedToLoad".into();
    status["transitionStatus"] = "BlockedByFailedLoad".into();
    status["lastFailureInfo"] = serde_json::json!({"reason": "ModelLoadFailed", "exitCode": 1});
    let d = diagnose_target(&s, "isvc/llama");
    assert!(!ids(&d).contains(&"model-not-loaded"), "{:?}", ids(&d));
    assert_eq!(d.verdict.state.as_str(), "serving");
    // A runtime that cannot serve it is the declaration's fault: claimed
    // whatever the Pods do.
    let mut s = case("kserve-healthy");
    let status = &mut s.objects.inference_services[0].data["status"]["modelStatus"];
    status["transitionStatus"] = "InvalidSpec".into();
    status["states"]["targetModelState"] = "FailedToLoad".into();
    status["lastFailureInfo"] = serde_json::json!({"reason": "RuntimeDisabled"});
    assert!(ids(&diagnose_target(&s, "isvc/llama")).contains(&"model-not-loaded"));
}

#[test]
fn the_pods_own_cause_leads_the_models_account() {
    let d = diagnose_target(&case("kserve-download-failing"), "isvc/llama");
    let got = ids(&d);
    assert_eq!(got.first(), Some(&"init-container-failing"), "{got:?}");
    let model = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "model-not-loaded")
        .expect("model-not-loaded beside it");
    assert_eq!(model.subject.kind, "InferenceService");
    let evidence: Vec<String> = model
        .evidence
        .iter()
        .map(|e| format!("{} = {}", e.field, e.value))
        .collect();
    assert!(
        evidence.contains(
            &"status.modelStatus.transitionStatus / states.targetModelState = BlockedByFailedLoad / FailedToLoad"
                .to_string()
        ),
        "{evidence:?}"
    );
    assert!(
        evidence.contains(&"status.modelStatus.lastFailureInfo.exitCode = 1".to_string()),
        "{evidence:?}"
    );
}

#[test]
fn the_gate_fails_fast_on_a_model_no_runtime_serves() {
    let s = case("kserve-no-runtime");
    let (d, view) = gate(&s, &GatePolicy::default());
    assert_eq!(
        failed_on(&d, &view).map(|(id, _)| id),
        Some("model-not-loaded")
    );
}

#[test]
fn the_gate_fails_on_a_failing_download_by_the_pods_own_finding() {
    let s = case("kserve-download-failing");
    let (d, view) = gate(&s, &GatePolicy::default());
    assert_eq!(
        failed_on(&d, &view).map(|(id, _)| id),
        Some("init-container-failing"),
        "{:#?}",
        view.checks
    );
    // Before the restarts the policy allows, the download may still work
    // on a retry: the model's own failure is not final on its own.
    let policy = GatePolicy {
        max_restarts: 10,
        ..GatePolicy::default()
    };
    let (d, view) = gate(&s, &policy);
    assert_eq!(failed_on(&d, &view), None, "{:?}", view.judgement);
}

#[test]
fn the_gate_waits_on_a_model_still_loading_and_says_so() {
    let s = case("kserve-loading-quiet");
    let (d, view) = gate(&s, &GatePolicy::default());
    assert_eq!(failed_on(&d, &view), None);
    match &view.judgement {
        Judgement::Waiting { check, detail } => {
            assert_eq!(*check, "model-loaded");
            assert_eq!(detail.en(), "model Loading (InProgress)");
        }
        other => panic!("{other:?}"),
    }
    let (_, view) = gate(&case("kserve-healthy"), &GatePolicy::default());
    assert!(
        matches!(view.judgement, Judgement::Converged),
        "{:?}",
        view.judgement
    );
}

#[test]
fn triage_lists_the_inference_service_not_its_deployment() {
    assert_eq!(
        common::triage_workloads("fixtures/cases/kserve-rollout-old-serves.yaml"),
        ["InferenceService/llama"]
    );
}

#[test]
fn a_missing_inference_service_names_the_ones_there() {
    let out = mdiag()
        .args(["trace", "isvc/mistral", "-n", "serving", "--snapshot"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/cases/kserve-healthy.yaml"
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("isvc/llama"), "{err}");
}

/// `kubectl get isvc llama -o yaml` alone: the verdict rests on its own
/// status only where that status can carry it.
#[test]
fn a_lone_inference_service_is_judged_from_its_own_status_where_it_can_be() {
    let traced = |file: &str| {
        common::trace_json(
            "isvc/llama",
            "serving",
            &format!("fixtures/lone/{file}.yaml"),
        )
    };
    // No runtime: KServe says no Deployment will come. Nothing serves.
    let (code, r) = traced("inferenceservice-no-runtime");
    assert_eq!(code, Some(1));
    assert_eq!(r["verdict"]["state"], "not-serving", "{r:#}");
    assert_eq!(r["verdict"]["basis"], "workload-status", "{r:#}");
    assert_eq!(r["verdict"]["lead"], "model-not-loaded", "{r:#}");
    // Ready=True is its Deployment's Available: true also while a new
    // revision is stuck. Unknown, with the command that completes it.
    let (code, r) = traced("inferenceservice-ready");
    assert_eq!(code, Some(4));
    assert_eq!(r["verdict"]["state"], "unknown", "{r:#}");
}
