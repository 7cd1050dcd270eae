//! Ring 1: close neighbours. Each test takes a demo fixture, changes the one
//! fact that separates two causes, and checks the right one fires and the
//! neighbour does not (docs/contract.md#findings).

use crate::common;

use common::*;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated, ContainerStatus, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use mdiag_core::catalogue::Severity;
use mdiag_core::model::{EventRecord, EventText, Gap, Snapshot};

fn statuses(pod: &mut Pod) -> &mut Vec<ContainerStatus> {
    pod.status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()
}

/// Sets the last termination of every crash-looping container.
fn set_last_exit(s: &mut Snapshot, code: i32, reason: &str) {
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if let Some(t) = c.last_state.as_mut().and_then(|l| l.terminated.as_mut()) {
                t.exit_code = code;
                t.reason = Some(reason.to_string());
            }
        }
    }
}

fn finding<'a>(
    d: &'a mdiag_core::analysis::Diagnosis,
    id: &str,
) -> &'a mdiag_core::analysis::Finding {
    d.findings
        .iter()
        .find(|f| f.id.as_str() == id)
        .unwrap_or_else(|| panic!("{id} missing in {:?}", ids(d)))
}

#[test]
fn exit_137_with_reason_error_is_a_kill_not_an_oom() {
    let mut s = load("crash-loop");
    set_last_exit(&mut s, 137, "Error");
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"oom-killed"), "{:?}", ids(&d));
    let f = finding(&d, "crash-loop");
    assert!(
        f.detail.en().contains("killed (exit 137"),
        "{}",
        f.detail.en()
    );
    assert!(f.detail.en().contains("not reported as OOMKilled"));
}

#[test]
fn oom_killed_is_its_own_finding_not_a_generic_crash_loop() {
    let mut s = load("crash-loop");
    set_last_exit(&mut s, 137, "OOMKilled");
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"oom-killed"));
    assert!(!ids(&d).contains(&"crash-loop"));
    assert_eq!(d.lead().unwrap().id.as_str(), "oom-killed");
}

#[test]
fn a_container_running_again_after_an_oom_kill_leads_with_the_kill() {
    // Between two kills the container runs and its probe fails while it
    // loads again: the kill says why it is not ready.
    let mut s = load("readiness-failing");
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            c.restart_count = 1;
            c.last_state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 137,
                    reason: Some("OOMKilled".into()),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
    }
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
    assert_eq!(d.lead().unwrap().id.as_str(), "oom-killed", "{:?}", ids(&d));
    // The neighbour: the same Pods without the kill lead with readiness.
    let d = diagnose(&load("readiness-failing"));
    assert_eq!(d.lead().unwrap().id.as_str(), "readiness-failing");
}

#[test]
fn a_crash_loop_that_exits_zero_is_a_process_that_keeps_exiting() {
    let mut s = load("crash-loop");
    set_last_exit(&mut s, 0, "Completed");
    let d = diagnose(&s);
    let f = finding(&d, "crash-loop");
    assert!(
        f.detail.en().contains("exiting with code 0"),
        "{}",
        f.detail.en()
    );
    assert!(f.detail.en().contains("does not fail"));
}

#[test]
fn exit_127_is_a_command_that_cannot_run_not_an_application_crash() {
    let mut s = load("crash-loop");
    set_last_exit(&mut s, 127, "Error");
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"container-cannot-run"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"crash-loop"));
}

#[test]
fn a_running_ready_pod_with_an_old_oom_kill_is_healthy() {
    let mut s = load("healthy");
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if let Some(t) = c.last_state.as_mut().and_then(|l| l.terminated.as_mut()) {
                t.exit_code = 137;
                t.reason = Some("OOMKilled".into());
            }
        }
    }
    let d = diagnose(&s);
    assert!(d.healthy, "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"oom-killed"));
    assert!(!ids(&d).contains(&"crash-loop"));
}

#[test]
fn an_old_failed_scheduling_event_of_a_bound_pod_is_history() {
    let mut s = load("healthy");
    let pod = s.objects.pods[0].clone();
    let event: k8s_openapi::api::core::v1::Event = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "x.1", "namespace": NAMESPACE, "uid": "5d0b8f1e-0000-4000-8000-000000000001"},
        "involvedObject": {"kind": "Pod", "namespace": NAMESPACE,
            "name": pod.metadata.name, "uid": pod.metadata.uid},
        "reason": "FailedScheduling", "type": "Warning",
        "message": "0/2 nodes are available: 2 Insufficient cpu.",
        "firstTimestamp": pod.metadata.creation_timestamp, "lastTimestamp": pod.metadata.creation_timestamp,
        "count": 1
    }))
    .unwrap();
    s.objects.events.push(EventRecord::Core(Box::new(event)));
    let d = diagnose(&s);
    assert!(d.healthy, "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"pod-unschedulable"));
}

#[test]
fn a_terminating_endpoint_is_draining_not_a_selector_problem() {
    let mut s = load("healthy");
    let slice = &mut s.objects.endpoint_slices[0];
    let mut draining = slice.endpoints[0].clone();
    draining.addresses = vec!["10.244.9.9".into()];
    if let Some(t) = draining.target_ref.as_mut() {
        t.uid = Some("0e7cbe5c-1111-4222-8333-444455556666".into());
        t.name = Some("chart-demo-old-zzzzz".into());
    }
    let c = draining.conditions.get_or_insert_with(Default::default);
    c.ready = Some(false);
    c.serving = Some(true);
    c.terminating = Some(true);
    slice.endpoints.push(draining);
    let d = diagnose(&s);
    assert!(d.healthy, "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"selector-mismatch"));
    assert!(!ids(&d).contains(&"endpoints-not-ready"));
    // Its Pod is gone, but a draining endpoint is not a stale one.
    assert!(!ids(&d).contains(&"endpoints-stale"));
}

#[test]
fn a_stale_progress_condition_loses_to_the_counts_and_says_so() {
    let mut s = load("healthy");
    let d0 = s
        .objects
        .deployments
        .iter_mut()
        .find(|d| d.metadata.name.as_deref() == Some("chart-demo"))
        .unwrap();
    for c in d0.status.as_mut().unwrap().conditions.as_mut().unwrap() {
        if c.type_ == "Progressing" {
            c.status = "False".into();
            c.reason = Some("ProgressDeadlineExceeded".into());
        }
    }
    let d = diagnose(&s);
    let f = finding(&d, "progress-deadline-exceeded");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.detail.en().contains("stale"), "{}", f.detail.en());
    assert!(d.healthy, "info findings do not make a rollout unhealthy");
}

#[test]
fn a_change_the_controller_has_not_observed_yet_is_not_a_stuck_controller() {
    let mut s = load("controller-paused");
    let now = clock(&s).now;
    let just_now = Time(now - SignedDuration::from_secs(5));
    // The declaration happened 5 s ago and the controller's Lease is fresh.
    let msvc = &mut s.objects.model_services[0];
    for m in msvc.metadata.managed_fields.iter_mut().flatten() {
        if m.subresource.is_none() {
            m.time = Some(just_now.clone());
        }
    }
    for lease in &mut s.objects.leases {
        if lease.metadata.name.as_deref() == Some("modeldock-controller") {
            lease.spec.as_mut().unwrap().renew_time = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(now),
            );
        }
    }
    let d = diagnose(&s);
    assert!(
        !ids(&d).contains(&"controller-not-converging"),
        "{:?}",
        ids(&d)
    );
    assert_eq!(d.verdict.missing.map(|m| m.as_str()), Some("observed"));
}

#[test]
fn a_registry_denial_is_told_apart_from_a_missing_tag() {
    let mut s = load("image-pull-not-found");
    let denied = "Failed to pull image \"registry.example.com/modeldock/chart-demo:v2.1.0-rc0\": \
                  failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized";
    let mut changed = 0;
    for e in &mut s.objects.events {
        if e.reason() != "Failed" || !e.message().contains("Failed to pull image") {
            continue;
        }
        match e {
            EventRecord::Core(ev) => ev.message = Some(denied.into()),
            EventRecord::New(ev) => ev.note = Some(denied.into()),
            EventRecord::Brief(ev) => ev.set(EventText::Message, denied),
        }
        changed += 1;
    }
    assert!(changed > 0);
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"image-pull-denied"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"image-pull-not-found"));
}

#[test]
fn without_the_registrys_words_the_pull_failure_stays_unclassified() {
    let mut s = load("image-pull-not-found");
    s.objects.events.clear();
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if let Some(w) = c.state.as_mut().and_then(|st| st.waiting.as_mut()) {
                w.message = Some(format!("Back-off pulling image \"{}\"", c.image));
            }
        }
    }
    let d = diagnose(&s);
    let f = finding(&d, "image-pull-failed");
    assert!(f.detail.en().contains("not recorded"), "{}", f.detail.en());
    assert!(!ids(&d).contains(&"image-pull-not-found"));
}

/// The readiness-failing demo with no probe failure recorded, its
/// containers started `running_for` ago, and a readiness probe that waits
/// `delay` seconds before its first run.
fn inside_the_initial_delay(running_for: i64, delay: i32) -> mdiag_core::analysis::Diagnosis {
    let mut s = load("readiness-failing");
    s.objects.events.retain(|e| e.reason() != "Unhealthy");
    diagnose(&started_with_delay(s, running_for, delay))
}

/// `s` with its containers started `running_for` ago under a readiness
/// probe that waits `delay` seconds.
fn started_with_delay(mut s: Snapshot, running_for: i64, delay: i32) -> Snapshot {
    let now = clock(&s).now;
    for pod in &mut s.objects.pods {
        for c in pod.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
            if let Some(p) = c.readiness_probe.as_mut() {
                p.initial_delay_seconds = Some(delay);
            }
        }
        for c in statuses(pod) {
            if let Some(r) = c.state.as_mut().and_then(|st| st.running.as_mut()) {
                r.started_at = Some(Time(now - SignedDuration::from_secs(running_for)));
            }
        }
    }
    s
}

#[test]
fn a_pod_inside_its_probes_initial_delay_is_starting_not_failing() {
    // A model server that waits 10 minutes before its first probe, 5 in.
    let d = inside_the_initial_delay(300, 600);
    assert!(!ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
    // The neighbour: the delay is over, and a grace more, with still no
    // Ready: it is failing now.
    let d = inside_the_initial_delay(700, 600);
    assert!(ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
}

#[test]
fn a_probe_failure_recorded_inside_the_initial_delay_is_still_evidence() {
    // The node's clock ran ahead of ours (or the delay was changed): the
    // kubelet recorded failures of this run although we count 5 s into a
    // 60 s delay. What it recorded wins over what we assume.
    let mut s = load("readiness-failing");
    let now = clock(&s).now;
    let last = now - SignedDuration::from_secs(2);
    let mut changed = 0;
    for e in &mut s.objects.events {
        if e.reason() != "Unhealthy" {
            continue;
        }
        match e {
            EventRecord::Core(core) => {
                core.series = None;
                core.last_timestamp = Some(Time(last));
            }
            EventRecord::New(new) => {
                new.series = None;
                new.deprecated_last_timestamp = Some(Time(last));
            }
            EventRecord::Brief(brief) => brief.last_seen = Some(last),
        }
        changed += 1;
    }
    assert!(changed > 0);
    let d = diagnose(&started_with_delay(s, 5, 60));
    assert!(ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
}

#[test]
fn a_container_that_just_started_is_not_yet_failing_readiness() {
    let mut s = load("readiness-failing");
    let now = clock(&s).now;
    s.objects.events.retain(|e| e.reason() != "Unhealthy");
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if let Some(r) = c.state.as_mut().and_then(|st| st.running.as_mut()) {
                r.started_at = Some(Time(now - SignedDuration::from_secs(3)));
            }
        }
    }
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
}

#[test]
fn a_forbidden_pod_list_is_a_gap_not_an_absence() {
    let mut s = load("crash-loop");
    s.objects.pods.clear();
    s.gaps.push(Gap {
        contexts: Vec::new(),
        resource: "pods".into(),
        namespace: Some(NAMESPACE.into()),
        verb: "list".into(),
        name: None,
        reason: "pods is forbidden".into(),
        complete_with: None,
        read_in: Vec::new(),
    });
    let d = diagnose(&s);
    assert!(d.gaps.iter().any(|g| g.resource == "pods"));
    assert!(d.chain_incomplete());
    assert!(!d.healthy);
    // No Pod finding can be made without the Pods, and none is invented.
    for id in ["crash-loop", "selector-mismatch", "endpoints-not-ready"] {
        assert!(!ids(&d).contains(&id), "{id} from missing evidence");
    }
}

#[test]
fn a_forbidden_service_list_does_not_claim_the_service_is_missing() {
    let mut s = load("service-missing");
    s.gaps.push(Gap {
        contexts: Vec::new(),
        resource: "services".into(),
        namespace: Some(NAMESPACE.into()),
        verb: "list".into(),
        name: None,
        reason: "services is forbidden".into(),
        complete_with: None,
        read_in: Vec::new(),
    });
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"service-missing"));
    // The Ready Pods decide, and nothing is said of endpoints
    // (docs/contract.md#basis).
    assert_eq!(d.verdict.serving.basis, mdiag_core::analysis::Basis::Pods);
    assert_eq!(d.verdict.serving.ready_endpoints, None);
}

#[test]
fn both_event_shapes_are_aged_by_their_own_fields() {
    let core: k8s_openapi::api::core::v1::Event = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "a"}, "involvedObject": {},
        "firstTimestamp": "2026-11-28T10:00:00Z", "lastTimestamp": "2026-11-28T10:05:00Z", "count": 7
    }))
    .unwrap();
    let new: k8s_openapi::api::events::v1::Event = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "b"}, "eventTime": "2026-11-28T10:00:00.000000Z",
        "series": {"count": 4, "lastObservedTime": "2026-11-28T10:07:00.000000Z"}
    }))
    .unwrap();
    let converted: k8s_openapi::api::events::v1::Event =
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c"}, "eventTime": null,
            "deprecatedFirstTimestamp": "2026-11-28T09:59:00Z",
            "deprecatedLastTimestamp": "2026-11-28T10:06:00Z", "deprecatedCount": 3
        }))
        .unwrap();
    let t = |s: &str| s.parse::<Timestamp>().unwrap();
    let core = EventRecord::Core(Box::new(core));
    let new = EventRecord::New(Box::new(new));
    let converted = EventRecord::New(Box::new(converted));
    assert_eq!(core.last_seen(), Some(t("2026-11-28T10:05:00Z")));
    assert_eq!(core.count(), 7);
    assert_eq!(new.last_seen(), Some(t("2026-11-28T10:07:00Z")));
    assert_eq!(new.first_seen(), Some(t("2026-11-28T10:00:00Z")));
    assert_eq!(new.count(), 4);
    assert_eq!(converted.last_seen(), Some(t("2026-11-28T10:06:00Z")));
    assert_eq!(converted.first_seen(), Some(t("2026-11-28T09:59:00Z")));
    assert_eq!(converted.count(), 3);
}

#[test]
fn a_surge_pod_short_of_what_no_old_pod_holds_is_plainly_unschedulable() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cases/surge-blocked.yaml");
    let mut s = mdiag_source::read_snapshot_file(&path).unwrap();
    let before = diagnose(&s);
    assert_eq!(before.lead().unwrap().id.as_str(), "rollout-surge-blocked");
    // The old revision asked for no GPU: removing its Pods would not free one.
    let current_hash = |p: &Pod| {
        p.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("pod-template-hash").cloned())
    };
    let new_hash = before
        .pods
        .iter()
        .find(|p| p.current)
        .and_then(|cur| {
            s.objects
                .pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(cur.name.as_str()))
        })
        .and_then(current_hash);
    for pod in &mut s.objects.pods {
        if current_hash(pod) == new_hash {
            continue;
        }
        for c in &mut pod.spec.as_mut().unwrap().containers {
            if let Some(r) = c.resources.as_mut() {
                for m in [&mut r.requests, &mut r.limits].into_iter().flatten() {
                    m.remove("nvidia.com/gpu");
                }
            }
        }
    }
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"rollout-surge-blocked"), "{:?}", ids(&d));
    assert_eq!(d.lead().unwrap().id.as_str(), "pod-unschedulable");
}

/// Puts every crash-looping container of the demo in `running`, started
/// `ago` before the file's clock, not ready: a loop caught between crashes.
fn running_since(s: &mut Snapshot, ago: SignedDuration) {
    let now = clock(s).now;
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if c.state.as_ref().is_some_and(|st| st.waiting.is_some()) {
                c.state = Some(k8s_openapi::api::core::v1::ContainerState {
                    running: Some(k8s_openapi::api::core::v1::ContainerStateRunning {
                        started_at: Some(Time(now - ago)),
                    }),
                    ..Default::default()
                });
                c.ready = false;
                c.started = Some(true);
            }
        }
    }
}

#[test]
fn a_crash_loop_caught_running_between_crashes_is_still_a_crash_loop() {
    let mut s = load("crash-loop");
    running_since(&mut s, SignedDuration::from_secs(4));
    let d = diagnose(&s);
    assert_eq!(d.lead().unwrap().id.as_str(), "crash-loop", "{:?}", ids(&d));
    assert!(
        d.lead()
            .unwrap()
            .detail
            .en()
            .contains("between two crashes"),
        "{}",
        d.lead().unwrap().detail.en()
    );
}

#[test]
fn a_container_running_long_after_its_last_crash_is_no_crash_loop() {
    let mut s = load("crash-loop");
    // Past the kubelet's 10-minute back-off memory: the loop is history.
    running_since(&mut s, SignedDuration::from_mins(15));
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
}

/// The current run terminated `ago` before the file's clock with `code`
/// (the kubelet has not written CrashLoopBackOff yet), after `restarts`.
fn terminated_now(s: &mut Snapshot, code: i32, reason: &str, restarts: i32) {
    let now = clock(s).now;
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if c.state.as_ref().is_some_and(|st| st.waiting.is_some()) {
                c.state = Some(k8s_openapi::api::core::v1::ContainerState {
                    terminated: Some(k8s_openapi::api::core::v1::ContainerStateTerminated {
                        exit_code: code,
                        reason: Some(reason.to_string()),
                        started_at: Some(Time(now - SignedDuration::from_secs(5))),
                        finished_at: Some(Time(now - SignedDuration::from_secs(3))),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                c.ready = false;
                c.started = Some(false);
                c.restart_count = restarts;
            }
        }
    }
}

#[test]
fn a_crash_loop_caught_terminated_before_its_back_off_is_still_a_crash_loop() {
    // What the real kubelet 1.35 writes for minutes after a crash.
    let mut s = load("crash-loop");
    terminated_now(&mut s, 1, "Error", 4);
    let d = diagnose(&s);
    assert_eq!(d.lead().unwrap().id.as_str(), "crash-loop", "{:?}", ids(&d));
    let f = finding(&d, "crash-loop");
    assert!(
        f.detail.en().contains("exits with code 1 (Error)"),
        "{}",
        f.detail.en()
    );
    assert!(
        f.detail.en().contains("waiting for its next restart"),
        "{}",
        f.detail.en()
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.field.ends_with(".state.terminated") && e.value.contains("exitCode 1")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn a_terminated_exit_zero_that_is_restarted_keeps_exiting() {
    let mut s = load("crash-loop");
    terminated_now(&mut s, 0, "Completed", 2);
    let d = diagnose(&s);
    let f = finding(&d, "crash-loop");
    assert!(
        f.detail.en().contains("exiting with code 0"),
        "{}",
        f.detail.en()
    );
}

#[test]
fn a_first_exit_before_any_restart_is_not_yet_a_loop() {
    let mut s = load("crash-loop");
    terminated_now(&mut s, 1, "Error", 0);
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
}

#[test]
fn a_loop_of_clean_exits_caught_running_is_still_a_crash_loop() {
    let mut s = load("crash-loop");
    set_last_exit(&mut s, 0, "Completed");
    running_since(&mut s, SignedDuration::from_secs(4));
    let d = diagnose(&s);
    let f = finding(&d, "crash-loop");
    assert!(
        f.detail.en().contains("keeps exiting with code 0"),
        "{}",
        f.detail.en()
    );
}

#[test]
fn an_oom_kill_of_a_child_process_is_oom_killed_whatever_the_exit_code() {
    // The kernel killed a worker, the main process then exited by itself:
    // reason OOMKilled, exit code 0 (as a real kubelet reported it).
    let mut s = load("oom-killed");
    for pod in &mut s.objects.pods {
        for c in statuses(pod) {
            if let Some(t) = c.last_state.as_mut().and_then(|l| l.terminated.as_mut())
                && t.reason.as_deref() == Some("OOMKilled")
            {
                t.exit_code = 0;
            }
        }
    }
    let d = diagnose(&s);
    let f = finding(&d, "oom-killed");
    assert!(f.detail.en().contains("exit 0"), "{}", f.detail.en());
    assert!(!ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
}

#[test]
fn evictions_are_their_own_finding_and_an_oom_kill_is_not_one() {
    // The neighbour of fixtures/cases/pod-evicted: an OOM kill restarts the
    // container inside its Pod; nothing was evicted.
    let d = diagnose(&load("oom-killed"));
    assert!(!ids(&d).contains(&"pod-evicted"), "{:?}", ids(&d));
    // And an ended Pod that was not evicted (Succeeded) is no eviction.
    let mut s = load("healthy");
    if let Some(status) = s.objects.pods[0].status.as_mut() {
        status.phase = Some("Succeeded".into());
    }
    let d = diagnose(&s);
    assert!(!ids(&d).contains(&"pod-evicted"), "{:?}", ids(&d));
}
