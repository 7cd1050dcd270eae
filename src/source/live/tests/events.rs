//! Dropping the Events nothing reads: about kinds no rule reads, or about
//! objects the read did not bring.

use super::*;

#[test]
fn events_about_kinds_nothing_reads_are_dropped() {
    let event = |kind: &str| -> CoreEvent {
        serde_json::from_value(json!({
            "metadata": {"name": "e", "namespace": "a",
                         "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "involvedObject": {"kind": kind, "name": "x", "namespace": "a", "uid": "u"},
        }))
        .unwrap()
    };
    for kind in ["Job", "CronJob", "ConfigMap", "Lease"] {
        assert!(!event(kind).keep(), "{kind}");
    }
    for kind in [
        "Pod",
        "ReplicaSet",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "Node",
        "ModelService",
        "Service",
    ] {
        let mut e = event(kind);
        assert!(e.keep(), "{kind}");
        assert!(e.metadata.managed_fields.is_none());
    }
}

#[test]
fn events_about_objects_not_read_are_dropped_at_the_end() {
    let mut o = mdiag_core::model::Objects::default();
    o.pods.push(serde_json::from_value(pod("a", "p1")).unwrap());
    let event = |uid: &str, name: &str| -> EventRecord {
        EventRecord::Core(Box::new(
            serde_json::from_value(json!({
                "metadata": {"name": format!("{name}.1"), "namespace": "a"},
                "involvedObject": {"kind": "Pod", "name": name, "namespace": "a", "uid": uid},
            }))
            .unwrap(),
        ))
    };
    o.events = vec![
        event("uid-a-p1", "p1"),
        event("uid-of-another", "p9"),
        event("", "p1"),
        event("", "p9"),
    ];
    keep_events_about_read_objects(&mut o);
    let kept: Vec<(String, String)> = o
        .events
        .iter()
        .map(|e| (e.subject().uid, e.subject().name))
        .collect();
    assert_eq!(
        kept,
        [
            ("uid-a-p1".to_string(), "p1".to_string()),
            (String::new(), "p1".to_string())
        ]
    );
}
