//! The chain of a ReplicaSet that no Deployment owns, read from fixtures.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use mdiag_core::chain::*;
use mdiag_core::model::Gap;
use mdiag_core::model::{Snapshot, TargetSpec};
use mdiag_source::read_snapshot_file;

const NS: &str = "inference";

fn load() -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/triage/rs-without-deployment.yaml");
    read_snapshot_file(&path).unwrap()
}

fn target(text: &str) -> TargetSpec {
    TargetSpec::parse(text, None).unwrap()
}

fn rows(s: &Snapshot) -> Vec<String> {
    workloads(s, None)
        .into_iter()
        .map(|w| format!("{}/{}", w.target.kind.short(), w.target.name))
        .collect()
}

fn replica_set<'a>(s: &'a mut Snapshot, rs: &str) -> &'a mut ReplicaSet {
    s.objects
        .replica_sets
        .iter_mut()
        .find(|r| name(&r.metadata) == rs)
        .unwrap()
}

fn controlled_by(kind: &str, owner: &str, owner_uid: &str) -> Option<Vec<OwnerReference>> {
    Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: owner.into(),
        uid: owner_uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }])
}

#[test]
fn replica_sets_no_deployment_owns_are_rows_and_a_deployments_are_not() {
    let s = load();
    assert_eq!(
        rows(&s),
        [
            "deploy/gateway",
            "rs/embedder-7c9d5f8b6",
            "rs/reranker-5b6c7d8e9f"
        ]
    );
    // The old revision at 0 with no Pod is no row, but can be traced.
    let idle = walk(&s, &target("rs/embedder-6b8c7d9f5"), NS, None).unwrap();
    assert!(idle.lone_replica_set().is_some() && idle.pods.is_empty());
    assert_eq!(idle.desired_replicas(), 0);
    assert_eq!(
        available_targets(&s, NS),
        [
            "deploy/gateway",
            "rs/embedder-7c9d5f8b6",
            "rs/reranker-5b6c7d8e9f"
        ]
    );
    assert_eq!(
        namespaces_holding(&s, &target("rs/embedder-6b8c7d9f5")),
        [NS]
    );
}

#[test]
fn a_lone_replica_set_is_walked_by_owner_uid_with_its_service_and_no_deployment() {
    let s = load();
    let chain = walk(&s, &target("rs/embedder-7c9d5f8b6"), NS, None).unwrap();
    assert!(chain.deployment.is_none() && chain.model_service().is_none());
    let rs = chain.lone_replica_set().unwrap();
    assert_eq!(name(&rs.metadata), "embedder-7c9d5f8b6");
    assert_eq!(chain.replica_sets.len(), 1);
    assert!(chain.replica_sets[0].current);
    assert_eq!(chain.replica_sets[0].revision, Some(3));
    let pods: Vec<&str> = chain.pods.iter().map(|p| name(&p.pod.metadata)).collect();
    assert_eq!(pods, ["embedder-7c9d5f8b6-w5v7n"]);
    assert!(chain.pods[0].current);
    let services: Vec<&str> = chain.services.iter().map(|s| name(&s.metadata)).collect();
    assert_eq!(services, ["embedder"]);
    assert_eq!(chain.endpoint_slices.len(), 1);
    assert_eq!(chain.desired_replicas(), 2);
    assert!(!chain.bare_pod());
    // Its Pod is traced through it, not as a bare Pod.
    let chain = walk(&s, &target("pod/reranker-5b6c7d8e9f-m3x8c"), NS, None).unwrap();
    assert_eq!(
        chain.lone_replica_set().map(|r| name(&r.metadata)),
        Some("reranker-5b6c7d8e9f")
    );
    assert!(chain.services.is_empty());
    assert!(!chain.bare_pod());
}

#[test]
fn a_replica_set_its_deployment_owns_is_traced_through_that_deployment() {
    let s = load();
    let chain = walk(&s, &target("rs/gateway-5f7b8c9d4"), NS, None).unwrap();
    assert_eq!(chain.deployment.map(|d| name(&d.metadata)), Some("gateway"));
    assert!(chain.lone_replica_set().is_none());
    assert_eq!(chain.pods.len(), 1);
    // Gone, with the Deployments read: a workload of its own.
    let mut gone = load();
    gone.objects.deployments.clear();
    assert!(rows(&gone).contains(&"rs/gateway-5f7b8c9d4".to_string()));
    let chain = walk(&gone, &target("rs/gateway-5f7b8c9d4"), NS, None).unwrap();
    assert!(chain.lone_replica_set().is_some());
    // Not read (a dump without them): its unknown Deployment's, no row.
    gone.gaps.push(Gap {
        contexts: Vec::new(),
        resource: "deployments".into(),
        namespace: None,
        verb: "list".into(),
        name: None,
        reason: Gap::NOT_IN_DUMP.into(),
        complete_with: mdiag_core::command::Command::parse(
            "kubectl get deployments -n inference -o yaml",
        ),
        read_in: Vec::new(),
    });
    assert!(!rows(&gone).contains(&"rs/gateway-5f7b8c9d4".to_string()));
    // The orphans nothing controls stay rows whatever was read.
    assert!(rows(&gone).contains(&"rs/embedder-7c9d5f8b6".to_string()));
}

#[test]
fn a_replica_set_another_controller_owns_is_not_a_row() {
    // An Argo Rollout's ReplicaSet belongs to a workload mdiag does not read.
    let mut s = load();
    replica_set(&mut s, "reranker-5b6c7d8e9f")
        .metadata
        .owner_references = controlled_by("Rollout", "reranker", "rollout-uid");
    assert!(!rows(&s).contains(&"rs/reranker-5b6c7d8e9f".to_string()));
    // A Deployment named only as a non-controlling owner still owns it.
    let mut s = load();
    let mut refs = controlled_by(
        "Deployment",
        "gateway",
        "3e1f0a52-7c4b-4d1e-9a26-5b8c0d7e6f14",
    );
    refs.as_mut().unwrap()[0].controller = None;
    replica_set(&mut s, "reranker-5b6c7d8e9f")
        .metadata
        .owner_references = refs;
    assert!(!rows(&s).contains(&"rs/reranker-5b6c7d8e9f".to_string()));
}

#[test]
fn a_replica_set_at_zero_with_pods_left_is_still_a_row() {
    let mut s = load();
    let rs = replica_set(&mut s, "embedder-7c9d5f8b6");
    rs.spec.as_mut().unwrap().replicas = Some(0);
    rs.status.as_mut().unwrap().replicas = 0;
    // Its Pod is still there: the row shows what is left of it.
    assert!(rows(&s).contains(&"rs/embedder-7c9d5f8b6".to_string()));
    s.objects
        .pods
        .retain(|p| name(&p.metadata) != "embedder-7c9d5f8b6-w5v7n");
    assert!(!rows(&s).contains(&"rs/embedder-7c9d5f8b6".to_string()));
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}
