//! `resource-claim-pending` against `pod-unschedulable` on the demo whose
//! Pods ask for `nvidia.com/gpu: 1` on two nodes without one
//! (fixtures/demo/unschedulable.yaml), changed one fact at a time: a node
//! that offers the GPU (then it is only taken: capacity), Nodes that were
//! not read (then whether any offers it is unknown), and a DRA claim in
//! place of the extended resource.

use crate::common::{self, diagnose, ids};
use k8s_openapi::api::core::v1::PodResourceClaim;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use mdiag_core::analysis::Diagnosis;
use mdiag_core::model::{EventRecord, EventText, Gap, Snapshot};

fn demo() -> Snapshot {
    common::load("unschedulable")
}

fn lead(d: &Diagnosis) -> &str {
    d.verdict.lead.map_or("", |i| d.findings[i].id.as_str())
}

#[test]
fn a_gpu_no_node_offers_leads_with_the_request_and_the_nodes() {
    let d = diagnose(&demo());
    assert_eq!(lead(&d), "resource-claim-pending", "{:?}", ids(&d));
    assert!(ids(&d).contains(&"pod-unschedulable"));
    let f = &d.findings[d.verdict.lead.unwrap()];
    assert_eq!(
        f.detail.en(),
        "container server asks for nvidia.com/gpu: 1, and none of the 2 nodes offers nvidia.com/gpu"
    );
    let values: Vec<(&str, &str)> = f
        .evidence
        .iter()
        .map(|e| (e.field.as_str(), e.value.as_str()))
        .collect();
    assert!(
        values.contains(&("spec.containers[server].resources[nvidia.com/gpu]", "1")),
        "{values:#?}"
    );
    assert!(
        values.contains(&(
            "status.allocatable[nvidia.com/gpu]",
            "no node of 2 has nvidia.com/gpu allocatable"
        )),
        "{values:#?}"
    );
}

#[test]
fn a_gpu_some_node_offers_but_is_taken_is_capacity_not_a_missing_resource() {
    let mut s = demo();
    let node = &mut s.objects.nodes[0];
    node.status
        .as_mut()
        .unwrap()
        .allocatable
        .get_or_insert_default()
        .insert("nvidia.com/gpu".into(), Quantity("1".into()));
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"pod-unschedulable"), "{:?}", ids(&d));
    assert!(
        !ids(&d).contains(&"resource-claim-pending"),
        "{:?}",
        ids(&d)
    );
}

#[test]
fn without_the_nodes_whether_one_offers_it_is_unknown() {
    let mut s = demo();
    s.objects.nodes.clear();
    s.gaps.push(Gap {
        contexts: Vec::new(),
        verb: "list".into(),
        resource: "nodes".into(),
        namespace: None,
        name: None,
        reason: "forbidden".into(),
        complete_with: None,
        read_in: Vec::new(),
    });
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"pod-unschedulable"), "{:?}", ids(&d));
    assert!(
        !ids(&d).contains(&"resource-claim-pending"),
        "{:?}",
        ids(&d)
    );
}

#[test]
fn a_dra_claim_the_scheduler_cannot_allocate_is_named() {
    let mut s = demo();
    for pod in &mut s.objects.pods {
        let spec = pod.spec.as_mut().unwrap();
        for c in &mut spec.containers {
            c.resources = None;
        }
        spec.resource_claims = Some(vec![PodResourceClaim {
            name: "gpu".into(),
            resource_claim_template_name: Some("single-gpu".into()),
            ..PodResourceClaim::default()
        }]);
    }
    let words = "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    for e in &mut s.objects.events {
        if e.reason() != "FailedScheduling" {
            continue;
        }
        match e {
            EventRecord::Core(c) => c.message = Some(words.into()),
            EventRecord::New(n) => n.note = Some(words.into()),
            EventRecord::Brief(b) => b.set(EventText::Message, words),
        }
    }
    for pod in &mut s.objects.pods {
        for c in pod.status.as_mut().unwrap().conditions.iter_mut().flatten() {
            if c.type_ == "PodScheduled" {
                c.message = Some(words.into());
            }
        }
    }
    let d = diagnose(&s);
    assert_eq!(lead(&d), "resource-claim-pending", "{:?}", ids(&d));
    let f = &d.findings[d.verdict.lead.unwrap()];
    assert_eq!(
        f.detail.en(),
        format!(
            "its resource claims (gpu (from template single-gpu)) cannot be allocated: {words}"
        )
    );
}
