//! StatefulSet and DaemonSet chains, read from fixtures.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use mdiag_core::chain::*;
use mdiag_core::model::{Snapshot, TargetSpec};
use mdiag_source::read_snapshot_file;

fn load(name: &str) -> Snapshot {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cases")
        .join(format!("{name}.yaml"));
    read_snapshot_file(&path).unwrap()
}

fn target(text: &str) -> TargetSpec {
    TargetSpec::parse(text, None).unwrap()
}

/// (name, revision, current, held) of each Pod, in the chain's order.
fn pods(chain: &Chain) -> Vec<(String, Option<i64>, bool, bool)> {
    chain
        .pods
        .iter()
        .map(|p| {
            (
                name(&p.pod.metadata).to_string(),
                p.revision,
                p.current,
                p.held,
            )
        })
        .collect()
}

fn row(name: &str, revision: i64, current: bool, held: bool) -> (String, Option<i64>, bool, bool) {
    (name.to_string(), Some(revision), current, held)
}

#[test]
fn a_statefulsets_pods_are_current_by_the_update_revision_not_by_name() {
    let s = load("statefulset-crash-loop");
    let chain = walk(&s, &target("sts/shard"), "serve", None).unwrap();
    assert!(chain.replica_sets.is_empty() && chain.deployment.is_none());
    assert_eq!(
        pods(&chain),
        [
            row("shard-2", 2, true, false),
            row("shard-0", 1, false, false),
            row("shard-1", 1, false, false),
        ]
    );
    let current = chain.current_set_revision().unwrap();
    assert_eq!((current.revision, current.name()), (2, "shard-5f6d8c9b7d"));
    // The governing (headless) Service is the workload's Service.
    let services: Vec<&str> = chain.services.iter().map(|s| name(&s.metadata)).collect();
    assert_eq!(services, ["shard"]);
    assert_eq!(chain.endpoint_slices.len(), 1);
    assert_eq!(chain.desired_replicas(), 3);
}

#[test]
fn ordinals_below_the_partition_and_on_delete_pods_are_held_not_stale() {
    let s = load("statefulset-partition");
    let chain = walk(&s, &target("statefulset/shard"), "serve", None).unwrap();
    assert_eq!(
        chain.pod_set.unwrap().strategy(),
        SetStrategy::RollingUpdate { partition: 2 }
    );
    assert_eq!(chain.pod_set.unwrap().expected_updated(), 1);
    assert_eq!(
        pods(&chain),
        [
            row("shard-2", 2, true, false),
            row("shard-0", 1, true, true),
            row("shard-1", 1, true, true),
        ]
    );
    let s = load("statefulset-on-delete");
    let chain = walk(&s, &target("sts/shard"), "serve", None).unwrap();
    assert_eq!(chain.pod_set.unwrap().strategy(), SetStrategy::OnDelete);
    assert_eq!(chain.pod_set.unwrap().expected_updated(), 0);
    assert!(pods(&chain).iter().all(|(_, _, current, _)| *current));
    assert_eq!(pods(&chain).iter().filter(|p| p.3).count(), 2);
    // Without the partition the same old ordinals are simply old.
    let mut s = load("statefulset-partition");
    s.objects.stateful_sets[0]
        .spec
        .as_mut()
        .unwrap()
        .update_strategy
        .as_mut()
        .unwrap()
        .rolling_update = None;
    let chain = walk(&s, &target("sts/shard"), "serve", None).unwrap();
    assert_eq!(pods(&chain)[1], row("shard-0", 1, false, false));
}

#[test]
fn a_daemonsets_current_revision_is_its_newest_controller_revision() {
    let s = load("daemonset-image-pull");
    let chain = walk(&s, &target("ds/model-prefetch"), "modeldock-nodes", None).unwrap();
    let revisions: Vec<(i64, bool)> = chain
        .set_revisions
        .iter()
        .map(|r| (r.revision, r.current))
        .collect();
    assert_eq!(revisions, [(2, true), (1, false)]);
    assert_eq!(
        pods(&chain),
        [
            row("model-prefetch-t4mzn", 2, true, false),
            row("model-prefetch-k7x2p", 1, false, false),
        ]
    );
    // The nodes its controller wants a Pod on, not spec.replicas.
    assert_eq!(chain.desired_replicas(), 2);
    // A DaemonSet Pod carries only the hash, a StatefulSet Pod the name.
    let cr = chain.set_revisions[0].object;
    assert!(revision_matches(
        &cr.metadata,
        "model-prefetch",
        "84d5b6f7c9"
    ));
    assert!(!revision_matches(
        &cr.metadata,
        "model-prefetch",
        "6c8f7d9b5"
    ));
    assert!(!revision_matches(&cr.metadata, "model-prefetch", ""));
}

#[test]
fn without_controller_revisions_a_daemonset_pod_is_matched_by_its_template_generation() {
    let mut s = load("daemonset-image-pull");
    s.objects.controller_revisions.clear();
    let chain = walk(&s, &target("ds/model-prefetch"), "modeldock-nodes", None).unwrap();
    let current: Vec<(String, bool)> = chain
        .pods
        .iter()
        .map(|p| (name(&p.pod.metadata).to_string(), p.current))
        .collect();
    assert_eq!(
        current,
        [
            ("model-prefetch-t4mzn".to_string(), true),
            ("model-prefetch-k7x2p".to_string(), false)
        ]
    );
    assert!(chain.pods.iter().all(|p| p.revision.is_none()));
}

#[test]
fn a_pod_of_a_set_is_traced_through_its_set_and_sets_are_triage_rows() {
    let s = load("statefulset-crash-loop");
    let chain = walk(&s, &target("pod/shard-0"), "serve", None).unwrap();
    assert!(matches!(chain.pod_set, Some(PodSet::StatefulSet(_))));
    assert_eq!(chain.pods.len(), 3);
    let rows: Vec<String> = workloads(&s, None)
        .into_iter()
        .map(|w| format!("{}/{}", w.target.kind.short(), w.target.name))
        .collect();
    assert_eq!(rows, ["sts/shard"]);
    assert_eq!(available_targets(&s, "serve"), ["sts/shard"]);
    assert_eq!(namespaces_holding(&s, &target("sts/shard")), ["serve"]);
    let s = load("daemonset-healthy");
    let rows: Vec<String> = workloads(&s, Some("modeldock-nodes"))
        .into_iter()
        .map(|w| format!("{}/{}", w.target.kind.short(), w.target.name))
        .collect();
    assert_eq!(rows, ["ds/model-prefetch"]);
    assert!(workloads(&s, Some("elsewhere")).is_empty());
}

#[test]
fn a_set_a_model_service_owns_is_not_a_row_of_its_own() {
    let mut s = load("statefulset-healthy");
    s.objects.stateful_sets[0].metadata.owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "modeldock.io/v1alpha1".into(),
            kind: "ModelService".into(),
            name: "shard".into(),
            uid: "msvc-uid".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        },
    ]);
    assert!(workloads(&s, None).is_empty());
}

#[test]
fn a_snapshot_of_a_sets_chain_keeps_the_set_and_its_revisions() {
    let s = load("daemonset-image-pull");
    let chain = walk(&s, &target("ds/model-prefetch"), "modeldock-nodes", None).unwrap();
    let kept = chain_objects(&s, &chain);
    assert_eq!(kept.daemon_sets.len(), 1);
    assert_eq!(kept.controller_revisions.len(), 2);
    assert_eq!(kept.pods.len(), 2);
    // The DaemonSet controller's events about the set are kept.
    assert!(kept.events.iter().any(|e| e.subject().kind == "DaemonSet"));
    let replay = Snapshot {
        objects: kept,
        ..s.clone()
    };
    let again = walk(
        &replay,
        &target("ds/model-prefetch"),
        "modeldock-nodes",
        None,
    )
    .unwrap();
    assert_eq!(pods(&again), pods(&chain));
}

#[test]
fn a_service_that_publishes_not_ready_addresses_does_not_make_a_failing_pod_serve() {
    // Governing Services of StatefulSets often set
    // publishNotReadyAddresses: every endpoint is then ready=true.
    let mut s = load("statefulset-crash-loop");
    s.objects.services[0]
        .spec
        .as_mut()
        .unwrap()
        .publish_not_ready_addresses = Some(true);
    for e in &mut s.objects.endpoint_slices[0].endpoints {
        e.conditions.as_mut().unwrap().ready = Some(true);
    }
    let chain = walk(&s, &target("sts/shard"), "serve", None).unwrap();
    let now = s.origin.newest_seen.unwrap();
    let d = mdiag_core::analysis::analyze(&s, &chain, now);
    let serving: Vec<(&str, bool)> = d
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.serving))
        .collect();
    assert_eq!(
        serving,
        [("shard-2", false), ("shard-0", true), ("shard-1", true)]
    );
    assert_eq!(d.verdict.state, mdiag_core::analysis::State::Degraded);
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}
