//! Ready endpoints counted per revision.

use mdiag_core::chain::walk;
use mdiag_core::model::TargetSpec;
use mdiag_source::read_snapshot_file;

#[test]
fn ready_endpoints_are_counted_per_revision() {
    // An upgrade stuck on OOMKilled while the old revision still serves.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/oom-killed.yaml");
    let snapshot = read_snapshot_file(&path).unwrap();
    let target = TargetSpec::parse("chart-demo", None).unwrap();
    let chain = walk(&snapshot, &target, "modeldock-lab", None).unwrap();
    let now = snapshot.origin.newest_seen.unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    let counts: Vec<(Option<i64>, bool, i32, i32)> = d
        .revisions
        .iter()
        .map(|r| (r.revision, r.current, r.pods, r.serving))
        .collect();
    assert_eq!(counts, vec![(Some(2), true, 1, 0), (Some(1), false, 2, 2)]);
    // The tree facts name the current ReplicaSet and its Pod.
    let current = d.chain.replica_sets.iter().find(|r| r.current).unwrap();
    assert_eq!(current.revision, Some(2));
    assert_eq!(current.pod_uids.len(), 1);
    assert_eq!(d.chain.services.len(), 1);
}
