//! LeaderWorkerSet as a row of the platform table
//! (docs/platforms.md#leaderworkerset): its leader set walked by owner UID,
//! each leader Pod's worker set by the Pod's UID, and what serves counted
//! in whole groups, never in Pods or in the headless Service's endpoints.

use crate::common::{self, diagnose_target, failed_on, gate_view_of, ids};
use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, GateView, Judgement};
use mdiag_core::chain::walk;
use mdiag_core::model::{Snapshot, TargetSpec};

fn case(name: &str) -> Snapshot {
    common::load_file(&format!("fixtures/cases/{name}.yaml"))
}

fn gate(s: &Snapshot) -> (Diagnosis, GateView) {
    gate_view_of(
        s,
        "lws/vllm",
        &CrashHistory::default(),
        &GatePolicy::default(),
    )
}

/// Each group's leader and its Pods, as the walk found them.
fn groups(s: &Snapshot) -> Vec<(String, Vec<String>)> {
    let target = TargetSpec::parse("lws/vllm", None).unwrap();
    let chain = walk(s, &target, "serving", None).unwrap();
    chain
        .groups
        .iter()
        .map(|g| {
            let pods = chain
                .pods
                .iter()
                .filter(|p| g.holds(p.pod))
                .filter_map(|p| p.pod.metadata.name.clone())
                .collect();
            (g.name().to_string(), pods)
        })
        .collect()
}

#[test]
fn each_group_is_its_leader_and_the_workers_its_leader_pod_owns() {
    let s = case("lws-healthy");
    assert_eq!(
        groups(&s),
        [
            (
                "vllm-0".to_string(),
                vec!["vllm-0".into(), "vllm-0-1".into()]
            ),
            (
                "vllm-1".to_string(),
                vec!["vllm-1".into(), "vllm-1-1".into()]
            ),
        ]
    );
    // The worker set's selector matches its leader too; the walk goes by
    // owner, so a worker set owned by another Pod is not this group's.
    let mut s = case("lws-healthy");
    let leader_1 = s
        .objects
        .pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("vllm-1"))
        .and_then(|p| p.metadata.uid.clone())
        .unwrap();
    let set = s
        .objects
        .stateful_sets
        .iter_mut()
        .find(|x| x.metadata.name.as_deref() == Some("vllm-0"))
        .unwrap();
    for o in set.metadata.owner_references.iter_mut().flatten() {
        o.uid = leader_1.clone();
    }
    let walked = groups(&s);
    assert_eq!(walked[0].1, ["vllm-0"], "{walked:?}");
}

#[test]
fn a_group_with_one_pod_not_ready_serves_nothing() {
    // 3 of 4 Pods are Ready and the headless slice calls all 4 ready: one
    // group of two serves.
    let d = diagnose_target(&case("lws-group-not-ready-other-serves"), "lws/vllm");
    assert_eq!(d.pods.iter().filter(|p| p.moments.ready.reached).count(), 3);
    assert_eq!(
        (
            d.replicas.serving,
            d.replicas.desired,
            d.replicas.group_size
        ),
        (1, 2, Some(2))
    );
    assert_eq!(d.verdict.serving.ready_endpoints, Some(1));
    assert_eq!(d.verdict.state.as_str(), "degraded");
    // The member's own finding leads; the group's says what it costs.
    assert_eq!(d.lead().map(|f| f.id.as_str()), Some("readiness-failing"));
    let group = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "group-not-ready")
        .expect("group-not-ready");
    assert_eq!(group.subject.kind, "LeaderWorkerSet");
    assert_eq!(
        group.detail.en(),
        "1 of 2 groups cannot serve: vllm-1 has 1 of 2 Pods Ready"
    );
    let evidence: Vec<(&str, &str)> = group
        .evidence
        .iter()
        .map(|e| (e.object.as_str(), e.value.as_str()))
        .collect();
    assert_eq!(
        evidence,
        [
            ("pod/vllm-1-1", "Running · Ready=False ContainersNotReady"),
            ("leaderworkerset/vllm", "1 / 2"),
        ]
    );
    // The tree shows the groups, the broken one as not serving.
    let groups: Vec<(&str, i32, bool)> = d
        .chain
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.ready, g.serving))
        .collect();
    assert_eq!(groups, [("vllm-0", 2, true), ("vllm-1", 1, false)]);
}

#[test]
fn a_group_still_inside_its_probe_delay_is_not_called_broken() {
    let d = diagnose_target(&case("lws-starting-quiet"), "lws/vllm");
    assert!(!ids(&d).contains(&"group-not-ready"), "{:?}", ids(&d));
    assert_eq!(d.replicas.serving, 0);
    // The same Pods a minute later, nothing Ready yet: now it is.
    let s = case("lws-starting-quiet");
    let target = TargetSpec::parse("lws/vllm", None).unwrap();
    let chain = walk(&s, &target, "serving", None).unwrap();
    let later: jiff::Timestamp = "2026-11-28T10:01:09Z".parse().unwrap();
    let d = mdiag_core::analysis::analyze(&s, &chain, later);
    assert!(ids(&d).contains(&"group-not-ready"), "{:?}", ids(&d));
}

#[test]
fn groups_that_no_node_can_place_lead_with_the_resource() {
    let d = diagnose_target(&case("lws-serves-nothing"), "lws/vllm");
    assert_eq!(
        d.lead().map(|f| f.id.as_str()),
        Some("resource-claim-pending")
    );
    let group = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "group-not-ready")
        .unwrap();
    assert_eq!(
        group.detail.en(),
        "2 of 2 groups cannot serve: vllm-0 has 0 of 2 Pods Ready; vllm-1 has 0 of 2 Pods Ready"
    );
    let text = mdiag_render::headline::text(&d, mdiag_core::catalogue::Lang::En);
    assert!(text.contains("0/2 groups serving"), "{text}");
}

#[test]
fn findings_and_commands_name_the_leader_worker_set() {
    let d = diagnose_target(&case("lws-group-not-ready-other-serves"), "lws/vllm");
    let group = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "group-not-ready")
        .unwrap();
    let checks: Vec<String> = mdiag_core::catalogue::catalogue()
        .get(group.id.as_str())
        .unwrap()
        .checks_for(&group.vars)
        .iter()
        .map(|c| c.shell())
        .collect();
    assert!(
        checks[0].contains("-l leaderworkerset.sigs.k8s.io/name=vllm"),
        "{checks:?}"
    );
    assert!(
        checks
            .iter()
            .all(|c| !c.contains('<') && !c.contains("deployment")),
        "{checks:?}"
    );
    // A first rollout with nothing Ready is the LeaderWorkerSet's, in groups.
    let d = diagnose_target(&case("lws-starting-quiet"), "lws/vllm");
    let moving = d.lead().unwrap();
    assert_eq!(
        (moving.id.as_str(), moving.subject.kind.as_str()),
        ("rollout-in-progress", "LeaderWorkerSet")
    );
    assert!(
        moving.detail.en().contains("0 of 2 groups"),
        "{}",
        moving.detail.en()
    );
    let next = d.verdict.next.as_ref().unwrap().shell();
    assert!(next.contains("get leaderworkerset vllm"), "{next}");
}

#[test]
fn the_gate_fails_on_the_members_finding_and_converges_when_whole() {
    let (d, view) = gate(&case("lws-serves-nothing"));
    assert_eq!(
        failed_on(&d, &view).map(|(id, _)| id),
        Some("resource-claim-pending"),
        "{:#?}",
        view.checks
    );
    let (_, view) = gate(&case("lws-healthy"));
    assert!(
        matches!(view.judgement, Judgement::Converged),
        "{:?}",
        view.judgement
    );
    // A group not whole inside its budget: the gate waits, it does not fail.
    let (d, view) = gate(&case("lws-starting-quiet"));
    assert_eq!(failed_on(&d, &view), None);
    assert!(
        matches!(view.judgement, Judgement::Waiting { .. }),
        "{:?}",
        view.judgement
    );
}

#[test]
fn triage_lists_the_leader_worker_set_not_its_sets() {
    assert_eq!(
        common::triage_workloads("fixtures/cases/lws-group-not-ready-other-serves.yaml"),
        ["LeaderWorkerSet/vllm"]
    );
}

#[test]
fn a_lone_leader_worker_set_is_judged_from_its_group_counts() {
    let traced = |file: &str| {
        common::trace_json("lws/vllm", "serving", &format!("fixtures/lone/{file}.yaml"))
    };
    let (code, r) = traced("lws-ready");
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["verdict"]["state"], "serving", "{r:#}");
    assert_eq!(r["verdict"]["basis"], "workload-status", "{r:#}");
    // Available=False keeps the reason it had when True: the counts say
    // 1 of 2 groups ready, and nothing says why.
    let (code, r) = traced("lws-group-not-ready");
    assert_eq!(code, Some(3), "{r:#}");
    assert_eq!(r["verdict"]["state"], "progressing", "{r:#}");
    assert_eq!(r["findings"], serde_json::json!([]), "{r:#}");
}

#[test]
fn a_hand_written_group_size_of_one_is_its_leader_alone() {
    // size 1: no worker set; each leader Pod is a whole group.
    let mut s = case("lws-healthy");
    s.objects.leader_worker_sets[0].data["spec"]["leaderWorkerTemplate"]["size"] = 1.into();
    s.objects
        .stateful_sets
        .retain(|x| x.metadata.name.as_deref() == Some("vllm"));
    s.objects
        .pods
        .retain(|p| !p.metadata.name.as_deref().unwrap_or("").ends_with("-1-1"));
    s.objects
        .pods
        .retain(|p| p.metadata.name.as_deref() != Some("vllm-0-1"));
    let d = diagnose_target(&s, "lws/vllm");
    assert_eq!(d.replicas.group_size, Some(1));
    assert_eq!((d.replicas.serving, d.replicas.desired), (2, 2));
    assert_eq!(d.verdict.state.as_str(), "serving");
}

#[test]
fn a_snapshot_of_the_chain_keeps_every_groups_workers() {
    let s = case("lws-group-not-ready-other-serves");
    let kept = common::kept_for_replay(&s, "lws/vllm", "serving");
    let mut sets: Vec<&str> = kept
        .stateful_sets
        .iter()
        .filter_map(|x| x.metadata.name.as_deref())
        .collect();
    sets.sort();
    assert_eq!(sets, ["vllm", "vllm-0", "vllm-1"]);
    assert_eq!(kept.leader_worker_sets.len(), 1);
}

#[test]
fn a_leader_worker_set_list_refused_matters_to_its_own_chains_only() {
    // A read-only identity that may not list leaderworkersets (a Role
    // written before LWS was installed) still gates a ModelService: that
    // refusal hides nothing of its chain. An LWS's own chain is unknown.
    let refused = |s: &mut Snapshot, namespace: &str| {
        s.gaps.push(mdiag_core::model::Gap {
            contexts: Vec::new(),
            resource: "leaderworkersets".into(),
            namespace: Some(namespace.into()),
            verb: "watch".into(),
            name: None,
            reason: "leaderworkersets.leaderworkerset.x-k8s.io is forbidden".into(),
            complete_with: None,
            read_in: Vec::new(),
        })
    };
    let mut s = common::load_file("fixtures/demo/healthy.yaml");
    let namespace = s.objects.model_services[0]
        .metadata
        .namespace
        .clone()
        .unwrap();
    refused(&mut s, &namespace);
    let d = diagnose_target(&s, "chart-demo");
    assert!(d.gaps.is_empty(), "{:?}", d.gaps);
    assert!(d.healthy);
    let mut s = case("lws-healthy");
    refused(&mut s, "serving");
    let d = diagnose_target(&s, "lws/vllm");
    assert_eq!(d.gaps.len(), 1, "{:?}", d.gaps);
}

#[test]
fn a_group_missing_a_pod_is_not_whole() {
    // Group 1's worker Pod is gone (deleted, not yet made again): its
    // leader is Ready, and the group still serves nothing.
    let mut s = case("lws-healthy");
    s.objects
        .pods
        .retain(|p| p.metadata.name.as_deref() != Some("vllm-1-1"));
    let d = diagnose_target(&s, "lws/vllm");
    assert_eq!((d.replicas.serving, d.replicas.desired), (1, 2));
    let group = d
        .findings
        .iter()
        .find(|f| f.id.as_str() == "group-not-ready")
        .unwrap_or_else(|| panic!("{:?}", ids(&d)));
    assert_eq!(
        group.detail.en(),
        "1 of 2 groups cannot serve: vllm-1 has 1 of 2 Pods Ready"
    );
    assert!(
        group
            .evidence
            .iter()
            .any(|e| e.object == "pod/vllm-1" && e.value == "1 / 2"),
        "{:?}",
        group.evidence
    );
}
