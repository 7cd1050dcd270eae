//! Ring 1: `pods-not-created` and its neighbours. Each test takes the
//! quota-blocked upgrade of fixtures/cases (or its history twin), changes the
//! one fact that decides the judgement, and checks what the finding says.

use crate::common;

use common::*;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::GatePolicy;
use mdiag_core::analysis::{Diagnosis, Finding, Step};
use mdiag_core::catalogue::Severity;
use mdiag_core::model::{EventRecord, EventText, Snapshot};

const NEW_RS: &str = "chart-demo-mcvj9xnw6c";
const QUOTA_ERROR: &str = r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: exceeded quota: pods-per-namespace, requested: pods=1, used: pods=2, limited: pods=2"#;

fn case(name: &str) -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cases")
        .join(format!("{name}.yaml"));
    mdiag_source::read_snapshot_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn quota() -> Snapshot {
    case("pods-not-created-quota")
}

fn finding(d: &Diagnosis) -> &Finding {
    d.findings
        .iter()
        .find(|f| f.id.as_str() == "pods-not-created")
        .unwrap_or_else(|| panic!("pods-not-created missing in {:?}", ids(d)))
}

fn new_rs(s: &mut Snapshot) -> &mut ReplicaSet {
    s.objects
        .replica_sets
        .iter_mut()
        .find(|r| r.metadata.name.as_deref() == Some(NEW_RS))
        .unwrap()
}

fn deployment(s: &mut Snapshot) -> &mut Deployment {
    s.objects
        .deployments
        .iter_mut()
        .find(|d| {
            d.metadata.name.as_deref() == Some("chart-demo")
                && d.metadata.namespace.as_deref() == Some(NAMESPACE)
        })
        .unwrap()
}

/// Puts `error` wherever the cluster recorded the refusal: the ReplicaSet's
/// and the Deployment's condition and every FailedCreate event.
fn refuse_with(s: &mut Snapshot, error: &str) {
    for c in new_rs(s)
        .status
        .as_mut()
        .unwrap()
        .conditions
        .iter_mut()
        .flatten()
    {
        c.message = Some(error.to_string());
    }
    for c in deployment(s)
        .status
        .as_mut()
        .unwrap()
        .conditions
        .iter_mut()
        .flatten()
        .filter(|c| c.type_ == "ReplicaFailure")
    {
        c.message = Some(error.to_string());
    }
    for e in &mut s.objects.events {
        if e.reason() == "FailedCreate" {
            let text = format!("Error creating: {error}");
            match e {
                EventRecord::Core(e) => e.message = Some(text),
                EventRecord::New(e) => e.note = Some(text),
                EventRecord::Brief(e) => e.set(EventText::Message, &text),
            }
        }
    }
}

/// Sets the Deployment's rolling maxUnavailable.
fn allow_unavailable(s: &mut Snapshot, n: i32) {
    deployment(s)
        .spec
        .as_mut()
        .unwrap()
        .strategy
        .as_mut()
        .unwrap()
        .rolling_update
        .as_mut()
        .unwrap()
        .max_unavailable = Some(IntOrString::Int(n));
}

fn drop_conditions(s: &mut Snapshot) {
    new_rs(s).status.as_mut().unwrap().conditions = None;
    if let Some(list) = deployment(s).status.as_mut().unwrap().conditions.as_mut() {
        list.retain(|c| c.type_ != "ReplicaFailure");
    }
}

#[test]
fn a_quota_blocked_upgrade_leads_with_the_refusal_and_quotes_it() {
    let d = diagnose(&quota());
    let f = finding(&d);
    assert_eq!(d.lead().map(|f| f.id.as_str()), Some("pods-not-created"));
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.subject.kind, "ReplicaSet");
    assert_eq!(f.subject.name, NEW_RS);
    assert_eq!(f.step, Step::Stored);
    assert_eq!(d.verdict.last_step, Step::ReplicaSet);
    assert_eq!(d.verdict.missing, Some(Step::Stored));
    assert!(f.detail.en().contains(QUOTA_ERROR), "{}", f.detail.en());
    assert!(
        f.detail.en().contains("has 0 of 1 Pods"),
        "{}",
        f.detail.en()
    );
    assert!(
        f.detail.en().contains("ResourceQuota is exhausted"),
        "{}",
        f.detail.en()
    );
    // maxUnavailable 25 % of 2 rounds down to 0: nothing frees the quota.
    assert!(
        f.detail
            .en()
            .contains("will not clear by itself: maxUnavailable is 0"),
        "{}",
        f.detail.en()
    );
    let fields: Vec<&str> = f.evidence.iter().map(|e| e.field.as_str()).collect();
    assert!(fields.contains(&"status.conditions[ReplicaFailure]"));
    assert!(fields.contains(&"event FailedCreate"));
    // The folded event counts every refusal after the first ten.
    let event = f
        .evidence
        .iter()
        .find(|e| e.field == "event FailedCreate")
        .unwrap();
    assert!(
        event
            .value
            .starts_with("(combined from similar events): Error creating: "),
        "{}",
        event.value
    );
    assert!(event.value.contains("17 refusals"), "{}", event.value);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.object == "deployment/chart-demo"
                && e.field == "status.conditions[ReplicaFailure]")
    );
    assert_eq!(f.vars.get("replicaset").map(String::as_str), Some(NEW_RS));
    // The old revision still serves both replicas beside it.
    assert_eq!(d.replicas.old, 2);
    assert!(!d.healthy);
}

#[test]
fn a_quota_hit_is_transient_when_max_unavailable_lets_old_pods_go_first() {
    let mut s = quota();
    allow_unavailable(&mut s, 1);
    let d = diagnose(&s);
    let f = finding(&d);
    assert!(
        f.detail.en().contains(
            "transient: maxUnavailable 1 lets the Deployment controller remove old Pods first"
        ),
        "{}",
        f.detail.en()
    );
    // Transient is said, not hidden: the finding stays an error until it clears.
    assert_eq!(f.severity, Severity::Error);
}

#[test]
fn a_quota_hit_is_transient_while_an_old_pod_is_terminating() {
    let mut s = quota();
    let now = clock(&s).now;
    let old = s
        .objects
        .pods
        .iter_mut()
        .find(|p| {
            p.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("chart-demo-7492tsbpvx-"))
        })
        .unwrap();
    old.metadata.deletion_timestamp = Some(Time(now));
    let d = diagnose(&s);
    let f = finding(&d);
    assert!(
        f.detail
            .en()
            .contains("transient: 1 Pod of other revisions is terminating"),
        "{}",
        f.detail.en()
    );
}

#[test]
fn with_the_deadline_also_exceeded_both_appear_and_the_refusal_leads() {
    let mut s = quota();
    for c in deployment(&mut s)
        .status
        .as_mut()
        .unwrap()
        .conditions
        .iter_mut()
        .flatten()
        .filter(|c| c.type_ == "Progressing")
    {
        c.status = "False".into();
        c.reason = Some("ProgressDeadlineExceeded".into());
        c.message = Some(format!(
            "ReplicaSet \"{NEW_RS}\" has timed out progressing."
        ));
    }
    let d = diagnose(&s);
    let got = ids(&d);
    assert!(got.contains(&"progress-deadline-exceeded"), "{got:?}");
    assert_eq!(d.lead().map(|f| f.id.as_str()), Some("pods-not-created"));
}

#[test]
fn every_admission_refusal_is_named_and_none_clears_by_itself() {
    let cases = [
        (
            r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: violates PodSecurity "restricted:latest": privileged (container "server" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "server" must set securityContext.allowPrivilegeEscalation=false)"#,
            "PodSecurity level forbids the Pod",
        ),
        (
            r#"admission webhook "images.policy.example.com" denied the request: image registry.example.com/modeldock/chart-demo:v1.5.0 is not signed"#,
            "an admission webhook denied the Pod",
        ),
        (
            r#"pods "chart-demo-mcvj9xnw6c-" is forbidden: error looking up service account modeldock-lab/model-runner: serviceaccount "model-runner" not found"#,
            "ServiceAccount does not exist",
        ),
        (
            r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: maximum memory usage per Container is 512Mi, but limit is 1Gi"#,
            "a LimitRange forbids",
        ),
        (
            r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: failed quota: compute: must specify limits.nvidia.com/gpu for: server"#,
            "requires requests or limits the template does not set",
        ),
    ];
    for (error, label) in cases {
        let mut s = quota();
        refuse_with(&mut s, error);
        let d = diagnose(&s);
        let f = finding(&d);
        assert!(f.detail.en().contains(error), "{}", f.detail.en());
        assert!(f.detail.en().contains(label), "{label}: {}", f.detail.en());
        assert!(
            f.detail.en().contains("will not clear by itself"),
            "{}",
            f.detail.en()
        );
        assert_eq!(d.lead().map(|f| f.id.as_str()), Some("pods-not-created"));
    }
}

#[test]
fn events_alone_are_evidence_while_the_replicaset_still_lacks_pods() {
    let mut s = quota();
    drop_conditions(&mut s);
    let d = diagnose(&s);
    let f = finding(&d);
    // The newest event's error, without the recorder's prefixes.
    assert!(
        f.detail
            .en()
            .contains(r#"is forbidden: exceeded quota: pods-per-namespace"#),
        "{}",
        f.detail.en()
    );
    assert!(!f.detail.en().contains("combined from similar events"));
    assert!(!f.detail.en().contains("Error creating"));
}

#[test]
fn once_the_replicaset_has_its_pods_old_failed_create_events_are_history() {
    let mut s = quota();
    drop_conditions(&mut s);
    new_rs(&mut s).status.as_mut().unwrap().replicas = 1;
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"pods-not-created"), "{:?}", ids(&d));
}

#[test]
fn a_condition_the_counts_contradict_is_stale_and_only_info() {
    let mut s = quota();
    new_rs(&mut s).status.as_mut().unwrap().replicas = 1;
    let d = diagnose(&s);
    let f = finding(&d);
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.detail.en().contains("the condition is stale"),
        "{}",
        f.detail.en()
    );
}

#[test]
fn without_replicasets_in_the_file_the_deployments_copy_is_the_evidence() {
    let mut s = quota();
    s.objects.replica_sets.clear();
    let d = diagnose(&s);
    let f = finding(&d);
    assert_eq!(f.subject.kind, "Deployment");
    assert!(f.detail.en().contains(QUOTA_ERROR), "{}", f.detail.en());
}

#[test]
fn the_history_twin_is_quiet_even_while_its_status_lags() {
    let s = case("pods-not-created-history");
    let d = diagnose(&s);
    assert!(d.healthy, "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"pods-not-created"));
    // Even if the status had not caught up yet, a Pod was created after the
    // last refusal: the refusals are history.
    let mut s = s;
    for rs in &mut s.objects.replica_sets {
        if rs.metadata.name.as_deref() == Some("chart-demo-xvwcnjzfw5") {
            rs.status.as_mut().unwrap().replicas = 1;
        }
    }
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"pods-not-created"), "{:?}", ids(&d));
}

#[test]
fn with_some_new_pods_the_missing_ones_keep_the_rollout_from_serving() {
    // Half-way: the new ReplicaSet wants 2 and has 1 (one Pod moved over
    // from the old revision), and the deadline has passed meanwhile.
    let mut s = quota();
    let (new_uid, old_uid) = {
        let uid = |name: &str| {
            s.objects
                .replica_sets
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(name))
                .and_then(|r| r.metadata.uid.clone())
                .unwrap()
        };
        (uid(NEW_RS), uid("chart-demo-7492tsbpvx"))
    };
    let rs = new_rs(&mut s);
    rs.spec.as_mut().unwrap().replicas = Some(2);
    rs.status.as_mut().unwrap().replicas = 1;
    let moved = s
        .objects
        .pods
        .iter_mut()
        .find(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == old_uid)
        })
        .unwrap();
    for o in moved.metadata.owner_references.iter_mut().flatten() {
        o.uid = new_uid.clone();
        o.name = NEW_RS.to_string();
    }
    for c in deployment(&mut s)
        .status
        .as_mut()
        .unwrap()
        .conditions
        .iter_mut()
        .flatten()
        .filter(|c| c.type_ == "Progressing")
    {
        c.status = "False".into();
        c.reason = Some("ProgressDeadlineExceeded".into());
    }
    let d = diagnose(&s);
    let f = finding(&d);
    assert!(
        f.detail.en().contains("has 1 of 2 Pods"),
        "{}",
        f.detail.en()
    );
    assert_eq!(f.step, Step::Serving);
    assert_eq!(d.verdict.missing, Some(Step::Serving), "{:?}", ids(&d));
    assert!(ids(&d).contains(&"progress-deadline-exceeded"));
    assert_eq!(d.lead().map(|f| f.id.as_str()), Some("pods-not-created"));
}

/// The gate's judgement of the refused upgrade under the default policy.
fn gate_judges(s: &Snapshot) -> Option<(&'static str, Option<String>)> {
    let (d, view) = gate_view(s, &CrashHistory::default(), &GatePolicy::default());
    failed_on(&d, &view)
}

#[test]
fn the_gate_fails_fast_on_a_refusal_no_retry_clears_and_says_why() {
    // The quota that nothing in the rollout frees (maxUnavailable 0).
    let (id, why) = gate_judges(&quota()).expect("the gate fails");
    assert_eq!(id, "pods-not-created");
    let why = why.expect("a reason for the report");
    assert!(why.contains("ResourceQuota is exhausted"), "{why}");
    assert!(why.contains("same answer until someone acts"), "{why}");
    // Policy and admission denials, a missing ServiceAccount, a LimitRange.
    for (error, label) in [
        (
            r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: violates PodSecurity "restricted:latest": privileged (container "server" must not set securityContext.privileged=true)"#,
            "PodSecurity",
        ),
        (
            r#"admission webhook "policy.example.dev" denied the request: images must come from registry.example.dev"#,
            "admission webhook denied",
        ),
        (
            r#"pods "chart-demo-mcvj9xnw6c-sf67f" is forbidden: error looking up service account demo/model-runner: serviceaccount "model-runner" not found"#,
            "ServiceAccount does not exist",
        ),
    ] {
        let mut s = quota();
        refuse_with(&mut s, error);
        let (id, why) = gate_judges(&s).unwrap_or_else(|| panic!("not failed on {error}"));
        assert_eq!(id, "pods-not-created");
        assert!(why.as_deref().unwrap_or("").contains(label), "{why:?}");
    }
}

#[test]
fn the_gate_waits_on_a_refusal_that_may_clear() {
    // A quota the surge frees: old Pods may go first.
    let mut s = quota();
    allow_unavailable(&mut s, 1);
    assert_eq!(gate_judges(&s), None);
    // A webhook that could not be called may answer the next retry, and an
    // apiserver hiccup is not known to be final.
    for error in [
        r#"Internal error occurred: failed calling webhook "policy.example.dev": failed to call webhook: Post "https://policy.example.svc:443/validate": dial tcp 10.96.0.12:443: connect: connection refused"#,
        "etcdserver: request timed out",
    ] {
        let mut s = quota();
        refuse_with(&mut s, error);
        assert_eq!(gate_judges(&s), None, "{error}");
    }
}
