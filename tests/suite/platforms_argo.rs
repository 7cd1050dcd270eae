//! Argo Rollouts' Rollout as a row of the platform table
//! (docs/platforms.md#argo-rollouts): walked in the Deployment's place, its
//! current revision the one Argo names, its stable and canary Services
//! each judged on the Pods they are meant to select, and its pauses and
//! aborts said for what they are.

use crate::common::{self, diagnose_target, failed_on, gate_view_of, ids};
use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, GateView, Judgement};
use mdiag_core::catalogue::Severity;
use mdiag_core::chain::walk;
use mdiag_core::model::{Snapshot, TargetSpec};

fn case(name: &str) -> Snapshot {
    common::load_file(&format!("fixtures/cases/{name}.yaml"))
}

fn gate(s: &Snapshot) -> (Diagnosis, GateView) {
    gate_view_of(
        s,
        "rollout/llama",
        &CrashHistory::default(),
        &GatePolicy::default(),
    )
}

/// Changes the Rollout of `s` (and makes its Deployment view again).
fn edit_rollout(s: &mut Snapshot, change: impl FnOnce(&mut serde_json::Value)) {
    s.objects.rollouts[0].update(|o| change(&mut o.data));
}

/// The current ReplicaSet's name and each Service's, the first one first.
fn walked(s: &Snapshot) -> (Option<String>, Vec<String>) {
    let target = TargetSpec::parse("rollout/llama", None).unwrap();
    let chain = walk(s, &target, "serving", None).unwrap();
    (
        chain
            .current_replica_set()
            .and_then(|r| r.replica_set.metadata.name.clone()),
        chain
            .services
            .iter()
            .filter_map(|s| s.metadata.name.clone())
            .collect(),
    )
}

#[test]
fn the_current_revision_is_the_one_argo_names() {
    let mut s = case("argo-canary-stuck-old-serves");
    let (current, services) = walked(&s);
    assert_eq!(current.as_deref(), Some("llama-5c4b6c4bd5"));
    assert_eq!(services, ["llama-stable", "llama-canary"]);
    // Argo's currentPodHash decides, not the newest ReplicaSet.
    edit_rollout(&mut s, |d| {
        d["status"]["currentPodHash"] = "67b6767cf7".into()
    });
    assert_eq!(walked(&s).0.as_deref(), Some("llama-67b6767cf7"));
    // The Service the Rollout names stable comes first.
    edit_rollout(&mut s, |d| {
        d["spec"]["strategy"]["canary"]["stableService"] = "llama-canary".into();
    });
    assert_eq!(walked(&s).1, ["llama-canary", "llama-stable"]);
    // A blue-green Rollout: its active Service first; it has no surge.
    edit_rollout(&mut s, |d| {
        d["spec"]["strategy"] = serde_json::json!({"blueGreen": {
            "activeService": "llama-canary", "previewService": "llama-stable"}});
    });
    assert_eq!(walked(&s).1, ["llama-canary", "llama-stable"]);
    let view = s.objects.rollouts[0].workload();
    assert!(view.spec.as_ref().unwrap().strategy.is_none());
}

#[test]
fn findings_and_commands_name_the_rollout_not_a_deployment() {
    // The deadline passed: Argo writes what a Deployment would.
    let mut s = case("argo-canary-stuck-old-serves");
    edit_rollout(&mut s, |d| {
        let progressing = d["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|c| c["type"] == "Progressing")
            .unwrap();
        progressing["status"] = "False".into();
        progressing["reason"] = "ProgressDeadlineExceeded".into();
        progressing["message"] =
            "ReplicaSet \"llama-5c4b6c4bd5\" has timed out progressing.".into();
    });
    let d = diagnose_target(&s, "rollout/llama");
    let f = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "progress-deadline-exceeded")
        .unwrap_or_else(|| panic!("{:?}", ids(&d)));
    assert_eq!(f.subject.kind, "Rollout");
    assert!(
        f.evidence
            .iter()
            .all(|e| !e.object.starts_with("deployment/")),
        "{:?}",
        f.evidence
    );
    let entry = mdiag_core::catalogue::catalogue()
        .get(f.id.as_str())
        .unwrap();
    let checks: Vec<String> = entry
        .checks_for(&f.vars)
        .iter()
        .map(|c| c.shell())
        .collect();
    assert!(
        checks[0].starts_with("kubectl -n serving get rollout llama "),
        "{checks:?}"
    );
    assert!(
        checks.iter().all(|c| !c.contains("deployment")),
        "{checks:?}"
    );
}

#[test]
fn a_stable_service_on_the_stable_revision_is_not_a_mismatch() {
    // The stable Service selects revision 1's hash while revision 2's canary
    // is stuck: by design, and it serves.
    let d = diagnose_target(&case("argo-canary-stuck-old-serves"), "rollout/llama");
    assert_eq!(ids(&d), ["container-config-error"]);
    assert_eq!(d.verdict.state.as_str(), "degraded");
    // A Service whose selector (hash aside) does not match the template is
    // still a mismatch.
    let mut s = case("argo-canary-stuck-old-serves");
    for svc in &mut s.objects.services {
        let selector = svc.spec.as_mut().unwrap().selector.as_mut().unwrap();
        selector.insert("app.kubernetes.io/name".into(), "lama".into());
    }
    let d = diagnose_target(&s, "rollout/llama");
    assert!(ids(&d).contains(&"selector-mismatch"), "{:?}", ids(&d));
}

#[test]
fn a_canary_waiting_at_its_pause_step_serves_and_says_so() {
    let s = case("argo-paused-quiet");
    let d = diagnose_target(&s, "rollout/llama");
    assert_eq!(d.verdict.state.as_str(), "serving");
    assert!(d.healthy);
    let paused = &d.findings[0];
    assert_eq!(paused.id.as_str(), "rollout-paused");
    assert_eq!(paused.severity, Severity::Info);
    assert_eq!(
        paused.detail.en(),
        "rollout/llama waits at step 2 of 4 of its plan (CanaryPauseStep) with 1 of 2 \
         replicas on the new template: it goes on when promoted"
    );
    // The stable Pods are held by the plan.
    assert_eq!(d.pods.iter().filter(|p| p.held).count(), 2);
    // A blue-green waiting for promotion holds its active Pods the same way.
    let mut s = case("argo-paused-quiet");
    edit_rollout(&mut s, |d| {
        d["spec"]["strategy"] = serde_json::json!({"blueGreen": {
            "activeService": "llama-stable", "previewService": "llama-canary",
            "autoPromotionEnabled": false}});
        d["status"]["pauseConditions"][0]["reason"] = "BlueGreenPause".into();
    });
    let d = diagnose_target(&s, "rollout/llama");
    assert_eq!(d.verdict.state.as_str(), "serving");
    assert_eq!(d.pods.iter().filter(|p| p.held).count(), 2);
    assert!(
        d.findings[0].detail.en().contains("waits for promotion"),
        "{}",
        d.findings[0].detail.en()
    );
    // Paused by an inconclusive analysis is not the plan: a warning, and
    // the stable Pods are what is left, not what was declared.
    let mut s = case("argo-paused-quiet");
    edit_rollout(&mut s, |d| {
        d["status"]["pauseConditions"][0]["reason"] = "InconclusiveAnalysisRun".into();
    });
    let d = diagnose_target(&s, "rollout/llama");
    let paused = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "rollout-paused")
        .unwrap();
    assert_eq!(paused.severity, Severity::Warning);
    assert_eq!(d.pods.iter().filter(|p| p.held).count(), 0);
    assert_ne!(d.verdict.state.as_str(), "serving");
}

#[test]
fn an_abort_is_said_and_the_pods_own_cause_leads() {
    let d = diagnose_target(&case("argo-aborted-serves-nothing"), "rollout/llama");
    assert_eq!(d.verdict.state.as_str(), "not-serving");
    let lead = &d.findings[d.verdict.lead.unwrap()];
    assert_eq!(lead.id.as_str(), "init-container-failing");
    let aborted = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "rollout-paused")
        .unwrap();
    assert_eq!(aborted.severity, Severity::Warning);
    assert!(
        aborted
            .detail
            .en()
            .contains("no older stable revision to fall back to"),
        "{}",
        aborted.detail.en()
    );
}

#[test]
fn the_gate_fails_on_the_canarys_own_finding_and_waits_at_a_pause() {
    let (d, view) = gate(&case("argo-aborted-serves-nothing"));
    assert_eq!(
        failed_on(&d, &view).map(|(id, _)| id),
        Some("init-container-failing"),
        "{:#?}",
        view.checks
    );
    let (d, view) = gate(&case("argo-paused-quiet"));
    assert_eq!(failed_on(&d, &view), None);
    match &view.judgement {
        Judgement::Waiting { check, detail } => {
            assert_eq!(*check, "rollout-resumed");
            assert!(
                detail.en().contains("it goes on when promoted"),
                "{}",
                detail.en()
            );
        }
        other => panic!("{other:?}"),
    }
    let (_, view) = gate(&case("argo-healthy"));
    assert!(
        matches!(view.judgement, Judgement::Converged),
        "{:?}",
        view.judgement
    );
}

#[test]
fn triage_lists_the_rollout_not_its_replica_sets() {
    assert_eq!(
        common::triage_workloads("fixtures/cases/argo-canary-stuck-old-serves.yaml"),
        ["Rollout/llama"]
    );
}

#[test]
fn a_lone_rollout_is_judged_from_its_counts() {
    let traced = |file: &str| {
        common::trace_json(
            "rollout/llama",
            "serving",
            &format!("fixtures/lone/{file}.yaml"),
        )
    };
    let (code, r) = traced("rollout-healthy");
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["verdict"]["state"], "serving", "{r:#}");
    assert_eq!(r["verdict"]["basis"], "workload-status", "{r:#}");
    let (code, r) = traced("rollout-aborted");
    assert_eq!(code, Some(1), "{r:#}");
    assert_eq!(r["verdict"]["state"], "not-serving", "{r:#}");
    assert_eq!(r["verdict"]["lead"], "rollout-paused", "{r:#}");
}

#[test]
fn replayed_at_an_earlier_time_the_abort_is_not_yet_there() {
    // Before 10:03:20 nobody had aborted: the conditions written after are
    // cut, and the view made again from what is left.
    let mut s = case("argo-aborted-serves-nothing");
    mdiag_core::model::as_of(&mut s, "2026-11-28T10:03:00Z".parse().unwrap());
    let d = diagnose_target(&s, "rollout/llama");
    let status = d.chain.deployment.as_ref().unwrap();
    assert_ne!(
        status.progressing.as_ref().map(|(_, r)| r.as_str()),
        Some("RolloutAborted"),
        "{status:?}"
    );
}

#[test]
fn an_hpa_scaling_the_rollout_is_the_rollouts_whatever_its_name() {
    // The HPA targets `Rollout llama` through its scale subresource; renamed,
    // it is still found by its target, and at its maximum it says so.
    let mut s = case("argo-healthy");
    let hpa = &mut s.objects.hpas[0];
    hpa.metadata.name = Some("llama-autoscaler".into());
    let max = hpa.spec.as_ref().unwrap().max_replicas;
    let status = hpa.status.as_mut().unwrap();
    status.current_replicas = Some(max);
    status.desired_replicas = max;
    let d = diagnose_target(&s, "rollout/llama");
    assert!(ids(&d).contains(&"hpa-at-max"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"hpa-target-missing"), "{:?}", ids(&d));
}

#[test]
fn a_rollout_argo_has_not_observed_is_said_of_argos_controller() {
    // A spec written long before the clock (generation 2) and never
    // observed (observedGeneration "1").
    let mut s = case("argo-healthy");
    s.objects.rollouts[0].update(|o| o.metadata.generation = Some(2));
    let d = diagnose_target(&s, "rollout/llama");
    let f = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "deployment-not-observed")
        .unwrap_or_else(|| panic!("{:?}", ids(&d)));
    assert_eq!(f.subject.kind, "Rollout");
    let detail = f.detail.en();
    assert!(detail.contains("Argo Rollouts controller"), "{detail}");
    assert!(
        f.evidence
            .iter()
            .all(|e| !e.object.contains("kube-controller-manager")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn a_step_pause_with_spec_paused_too_holds_nothing_and_warns() {
    // Paused by hand as well as at its step: the walk and the rule agree
    // that this is not the plan waiting.
    let mut s = case("argo-paused-quiet");
    edit_rollout(&mut s, |d| d["spec"]["paused"] = true.into());
    let d = diagnose_target(&s, "rollout/llama");
    let paused = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "rollout-paused")
        .unwrap();
    assert_eq!(paused.severity, Severity::Warning);
    assert_eq!(d.pods.iter().filter(|p| p.held).count(), 0);
}
