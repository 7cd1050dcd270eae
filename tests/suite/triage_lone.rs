//! Triage rows of lone ReplicaSets and HPAs, read from fixtures.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use mdiag_core::analysis::Step;
use mdiag_core::analysis::triage::*;
use mdiag_core::analysis::{Diagnosis, State};
use mdiag_core::model::Clock;
use mdiag_core::model::Snapshot;
use mdiag_source::read_snapshot_file;

fn load() -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/triage/rs-without-deployment.yaml");
    read_snapshot_file(&path).unwrap()
}

fn judged(s: &Snapshot) -> Triage {
    let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
    triage(s, None, None, None, now)
}

fn item<'a>(t: &'a Triage, name: &str) -> &'a Diagnosis {
    t.items.iter().find(|d| d.target.name == name).unwrap()
}

fn hpa(name: &str, kind: &str, target: &str) -> HorizontalPodAutoscaler {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "inference", "uid": format!("hpa-{name}")},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
            "minReplicas": 1,
            "maxReplicas": 3
        }
    }))
    .unwrap()
}

#[test]
fn a_lone_replica_set_climbs_a_ladder_without_the_deployment_step() {
    let t = judged(&load());
    let d = item(&t, "embedder-7c9d5f8b6");
    assert_eq!(d.target.kind, "ReplicaSet");
    let steps: Vec<Step> = d.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        steps,
        [
            Step::ReplicaSet,
            Step::Stored,
            Step::Bound,
            Step::Started,
            Step::Ready,
            Step::Serving
        ]
    );
    assert!(d.steps[0].reached, "{:?}", d.steps[0]);
    assert_eq!(d.replicas.desired, 2);
    assert_eq!(d.verdict.state, State::Degraded);
    let lead = d.lead().unwrap();
    assert_eq!(lead.id.as_str(), "pods-not-created");
    assert_eq!(lead.subject.name, "embedder-7c9d5f8b6");
    assert_eq!(
        lead.vars.get("transient").map(String::as_str),
        Some("false")
    );
    assert_eq!(
        lead.vars.get("target").map(String::as_str),
        Some("rs/embedder-7c9d5f8b6")
    );
    assert!(
        lead.detail.en().contains("exceeded quota: pods-cap"),
        "{}",
        lead.detail.en()
    );
    // A worker ReplicaSet (no Service selects it) ends at ready.
    let d = item(&t, "reranker-5b6c7d8e9f");
    assert_eq!(d.steps.last().map(|s| s.step), Some(Step::Ready));
    assert_eq!(d.lead().map(|f| f.id.as_str()), Some("crash-loop"));
    assert_eq!(d.verdict.state, State::NotServing);
    // The Deployment's own ReplicaSet is judged once, in its chain.
    let d = item(&t, "gateway");
    assert!(d.healthy, "{:?}", d.findings);
    assert_eq!(t.items.len(), 3);
    assert!(t.outside.is_empty(), "{:?}", t.outside);
}

#[test]
fn an_hpa_that_scales_a_lone_replica_set_is_its_own_and_one_whose_replica_set_is_gone_is_a_row() {
    let mut s = load();
    s.objects
        .hpas
        .push(hpa("reranker", "ReplicaSet", "reranker-5b6c7d8e9f"));
    s.objects
        .hpas
        .push(hpa("tokenizer", "ReplicaSet", "tokenizer-8d9e0f1a2b"));
    let t = judged(&s);
    let outside: Vec<(&str, Option<&str>)> = t
        .outside
        .iter()
        .map(|o| (o.name.as_str(), o.lead().map(|f| f.id.as_str())))
        .collect();
    assert_eq!(outside, [("tokenizer", Some("hpa-target-missing"))]);
}
