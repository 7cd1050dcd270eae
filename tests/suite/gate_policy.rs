//! Gate policy on fixtures: which findings are final, which checks pass.

use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::*;
use mdiag_core::catalogue::FindingId;
use mdiag_core::chain::Chain;
use mdiag_core::chain::walk;
use mdiag_core::model::HelmRelease;
use mdiag_core::model::{Snapshot, TargetSpec};
use mdiag_source::read_snapshot_file;
use std::collections::BTreeSet;

static NO_CRASHES: std::sync::LazyLock<CrashHistory> =
    std::sync::LazyLock::new(CrashHistory::default);

fn at<'m>(
    snapshot: &'m Snapshot,
    chain: &'m Chain<'m>,
    diagnosis: &'m Diagnosis,
    crashes: &'m CrashHistory,
) -> Observation<'m> {
    Observation {
        snapshot,
        chain,
        diagnosis,
        crashes,
    }
}

fn view_of(file: &str, policy: &GatePolicy) -> (Diagnosis, GateView) {
    view_of_target(file, "chart-demo", policy)
}

/// A fixture, the target's namespace in it, and its clock.
fn fixture(file: &str, target: &str) -> (Snapshot, TargetSpec, String, jiff::Timestamp) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let snapshot = read_snapshot_file(&path).unwrap();
    let target = TargetSpec::parse(target, None).unwrap();
    let ns = mdiag_core::chain::namespaces_holding(&snapshot, &target).remove(0);
    let now = snapshot
        .origin
        .captured_at
        .or(snapshot.origin.newest_seen)
        .unwrap();
    (snapshot, target, ns, now)
}

fn view_of_target(file: &str, target: &str, policy: &GatePolicy) -> (Diagnosis, GateView) {
    let (snapshot, target, ns, now) = fixture(file, target);
    let chain = walk(&snapshot, &target, &ns, None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    let view = judge(at(&snapshot, &chain, &d, &NO_CRASHES), policy);
    (d, view)
}

fn failed_id(d: &Diagnosis, v: &GateView) -> Option<FindingId> {
    match v.judgement {
        Judgement::Failed { finding, .. } => Some(d.findings[finding].id),
        _ => None,
    }
}

#[test]
fn a_serving_rollout_converges_with_every_check_passed() {
    let (_, v) = view_of("fixtures/demo/healthy.yaml", &GatePolicy::default());
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
    assert!(v.checks.iter().all(|c| c.passed));
    assert_eq!(v.checks.len(), 6);
}

#[test]
fn a_crash_loop_fails_once_restarts_reach_the_limit() {
    let (d, v) = view_of("fixtures/demo/crash-loop.yaml", &GatePolicy::default());
    assert_eq!(failed_id(&d, &v), Some(FindingId::CRASH_LOOP));
    let patient = GatePolicy {
        max_restarts: 1000,
        ..GatePolicy::default()
    };
    let (d, v) = view_of("fixtures/demo/crash-loop.yaml", &patient);
    // Still failed, by the Deployment's progress deadline, not the loop.
    assert_ne!(failed_id(&d, &v), Some(FindingId::CRASH_LOOP));
}

#[test]
fn a_plain_deployment_fails_fast_once_its_one_controller_observed_it() {
    let (d, v) = view_of_target(
        "fixtures/cases/plain-deployment-broken.yaml",
        "deploy/web",
        &GatePolicy::default(),
    );
    assert!(!v.checks.iter().any(|c| c.name == "modelservice-observed"));
    assert_eq!(
        failed_id(&d, &v),
        Some(FindingId::IMAGE_PULL_NOT_FOUND),
        "{:?}",
        v.checks
    );
    let (_, v) = view_of_target(
        "fixtures/cases/plain-deployment-healthy.yaml",
        "deploy/web",
        &GatePolicy::default(),
    );
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
}

#[test]
fn a_failed_helm_release_fails_and_a_pending_one_is_awaited() {
    let (snapshot, target, ns, now) = fixture("fixtures/demo/healthy.yaml", "chart-demo");
    let chain = walk(&snapshot, &target, &ns, None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    let release = |status: &str| HelmRelease {
        name: "chart-demo".into(),
        namespace: ns.clone(),
        read: true,
        revision: Some(3),
        status: Some(status.into()),
        ..HelmRelease::default()
    };
    let policy = GatePolicy::default();
    let ok = decide(
        at(&snapshot, &chain, &d, &NO_CRASHES),
        &policy,
        Some(&release("deployed")),
    );
    assert_eq!(ok.outcome, Some(Outcome::Converged));
    assert_eq!(ok.view.checks[0].name, HELM_CHECK);
    let pending = decide(
        at(&snapshot, &chain, &d, &NO_CRASHES),
        &policy,
        Some(&release("pending-upgrade")),
    );
    assert_eq!(pending.outcome, None);
    assert!(matches!(
        pending.view.judgement,
        Judgement::Waiting {
            check: HELM_CHECK,
            ..
        }
    ));
    let failed = decide(
        at(&snapshot, &chain, &d, &NO_CRASHES),
        &policy,
        Some(&release("failed")),
    );
    assert_eq!(failed.outcome, Some(Outcome::Failed));
    assert_eq!(
        decided_by(Outcome::Failed, Some(&failed), Some(&d)).as_deref(),
        Some(HELM_CHECK)
    );
}

#[test]
fn fail_on_decides_which_findings_are_final() {
    let none = GatePolicy {
        fail_on: BTreeSet::new(),
        ..GatePolicy::default()
    };
    let (_, v) = view_of("fixtures/demo/crash-loop.yaml", &none);
    assert!(
        matches!(v.judgement, Judgement::Waiting { .. }),
        "{:?}",
        v.judgement
    );
}

#[test]
fn each_demo_rollout_gets_the_judgement_a_ci_job_needs() {
    let cases = [
        (
            "image-pull-not-found",
            Some(FindingId::IMAGE_PULL_NOT_FOUND),
        ),
        ("image-pull-denied", Some(FindingId::IMAGE_PULL_DENIED)),
        ("oom-killed", Some(FindingId::OOM_KILLED)),
        // No node offers the GPU: why the Pods cannot be placed.
        ("unschedulable", Some(FindingId::RESOURCE_CLAIM_PENDING)),
        (
            "controller-paused",
            Some(FindingId::CONTROLLER_NOT_CONVERGING),
        ),
        // Transient: they wait for the timeout.
        ("image-pull-timeout", None),
        ("readiness-failing", None),
        ("rollout-in-progress", None),
    ];
    for (name, want) in cases {
        let (d, v) = view_of(
            &format!("fixtures/demo/{name}.yaml"),
            &GatePolicy::default(),
        );
        assert_eq!(failed_id(&d, &v), want, "{name}: {:?}", v.judgement);
    }
}

fn check<'v>(v: &'v GateView, name: &str) -> &'v Check {
    v.checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} check in {:?}", v.checks))
}

#[test]
fn a_statefulset_is_judged_by_its_own_counts_and_fails_on_its_new_revision() {
    let policy = GatePolicy::default();
    let (_, v) = view_of_target(
        "fixtures/cases/statefulset-healthy.yaml",
        "sts/shard",
        &policy,
    );
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
    let names: Vec<&str> = v.checks.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "statefulset-observed",
            "replicas-updated",
            "replicas-available",
            "endpoints-ready"
        ]
    );
    // The update revision crash-loops past the restart budget while
    // ordinals 0 and 1 still serve the old one.
    let (d, v) = view_of_target(
        "fixtures/cases/statefulset-crash-loop.yaml",
        "sts/shard",
        &policy,
    );
    assert_eq!(
        failed_id(&d, &v),
        Some(FindingId::CRASH_LOOP),
        "{:?}",
        v.checks
    );
    assert_eq!(check(&v, "replicas-updated").detail.en(), "1 of 3 updated");
    assert!(!check(&v, "endpoints-ready").passed);
    // With a budget it has not used up yet, it waits instead.
    let patient = GatePolicy {
        max_restarts: 10,
        ..GatePolicy::default()
    };
    let (_, v) = view_of_target(
        "fixtures/cases/statefulset-crash-loop.yaml",
        "sts/shard",
        &patient,
    );
    assert!(
        matches!(
            v.judgement,
            Judgement::Waiting {
                check: "replicas-updated",
                ..
            }
        ),
        "{:?}",
        v.judgement
    );
}

#[test]
fn a_partition_reached_and_an_on_delete_set_converge() {
    let (_, v) = view_of_target(
        "fixtures/cases/statefulset-partition.yaml",
        "sts/shard",
        &GatePolicy::default(),
    );
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
    // Only ordinal 2 is expected at the update revision.
    let updated = check(&v, "replicas-updated");
    assert!(
        updated.detail.en().starts_with("1 of 1 updated"),
        "{}",
        updated.detail.en()
    );
    let (_, v) = view_of_target(
        "fixtures/cases/statefulset-on-delete.yaml",
        "sts/shard",
        &GatePolicy::default(),
    );
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
    assert!(
        check(&v, "replicas-updated")
            .detail
            .en()
            .contains("OnDelete")
    );
}

#[test]
fn a_daemonset_fails_fast_on_a_missing_image_and_converges_when_every_node_serves() {
    let (d, v) = view_of_target(
        "fixtures/cases/daemonset-image-pull.yaml",
        "ds/model-prefetch",
        &GatePolicy::default(),
    );
    assert_eq!(
        check(&v, "daemonset-observed").detail.en(),
        "generation 2, observed 2"
    );
    assert_eq!(
        failed_id(&d, &v),
        Some(FindingId::IMAGE_PULL_NOT_FOUND),
        "{:?}",
        v.checks
    );
    let (_, v) = view_of_target(
        "fixtures/cases/daemonset-healthy.yaml",
        "ds/model-prefetch",
        &GatePolicy::default(),
    );
    assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
    assert_eq!(
        check(&v, "replicas-available").detail.en(),
        "2 of 2 ready on the revision the declaration asks for, 2 available"
    );
}

#[test]
fn an_unobserved_set_waits_and_its_old_pods_symptoms_do_not_fail_it() {
    // The StatefulSet controller has not seen generation 3 yet: the
    // crash-looping Pod may be the previous declaration's.
    let (mut snapshot, target, ns, now) =
        fixture("fixtures/cases/statefulset-crash-loop.yaml", "sts/shard");
    snapshot.objects.stateful_sets[0].metadata.generation = Some(3);
    let chain = walk(&snapshot, &target, &ns, None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    let v = judge(
        at(&snapshot, &chain, &d, &NO_CRASHES),
        &GatePolicy::default(),
    );
    assert!(
        matches!(
            v.judgement,
            Judgement::Waiting {
                check: "statefulset-observed",
                ..
            }
        ),
        "{:?}",
        v.judgement
    );
}
