//! `probe-kills-startup` against its neighbours on one case, changed one
//! fact at a time: a container killed by its liveness probe before it was
//! ever healthy (fixtures/cases/crash-loop-137-error.yaml), a server that
//! served and then hung, an OOM kill, and the kill's Events expired.

use crate::common::{self, diagnose, ids};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use mdiag_core::model::Snapshot;

const CASE: &str = "fixtures/cases/crash-loop-137-error.yaml";

fn case() -> Snapshot {
    common::load_file(CASE)
}

/// Every Pod's last terminated run, changed by `change`.
fn each_last_run(
    snapshot: &mut Snapshot,
    change: impl Fn(&mut k8s_openapi::api::core::v1::ContainerStateTerminated),
) {
    for pod in &mut snapshot.objects.pods {
        for s in pod
            .status
            .as_mut()
            .unwrap()
            .container_statuses
            .as_mut()
            .unwrap()
        {
            change(s.last_state.as_mut().unwrap().terminated.as_mut().unwrap());
        }
    }
}

#[test]
fn a_liveness_kill_before_the_first_healthy_moment_names_the_probe_its_budget_and_the_run() {
    let d = diagnose(&case());
    let lead = d.verdict.lead.map(|i| &d.findings[i]).unwrap();
    assert_eq!(lead.id.as_str(), "probe-kills-startup");
    assert!(!ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
    let f = lead;
    let values: Vec<(&str, &str)> = f
        .evidence
        .iter()
        .map(|e| (e.field.as_str(), e.value.as_str()))
        .collect();
    assert!(
        values.contains(&(
            "spec.containers[server].livenessProbe",
            "45s (initialDelaySeconds 15 + failureThreshold 3 x periodSeconds 10)"
        )),
        "{values:#?}"
    );
    assert!(
        values.contains(&(
            "status.containerStatuses[server].lastState.terminated",
            "lasted 1m5s, exitCode 137 reason Error"
        )),
        "{values:#?}"
    );
    assert!(
        values.contains(&(
            "event Killing",
            "Container server failed liveness probe, will be restarted (x4)"
        )),
        "{values:#?}"
    );
}

#[test]
fn a_server_that_served_and_then_hung_is_a_crash_loop_not_a_startup_kill() {
    let mut s = case();
    // The killed run began 25 minutes before its kill: the probe passed
    // for most of it.
    each_last_run(&mut s, |t| {
        let finished = t.finished_at.as_ref().unwrap().0;
        t.started_at = Some(Time(finished - jiff::SignedDuration::from_mins(25)));
    });
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"probe-kills-startup"), "{:?}", ids(&d));
}

#[test]
fn an_oom_kill_stays_an_oom_kill_whatever_the_probe_said() {
    let mut s = case();
    each_last_run(&mut s, |t| t.reason = Some("OOMKilled".into()));
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"oom-killed"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"probe-kills-startup"), "{:?}", ids(&d));
}

#[test]
fn without_the_kubelets_killing_event_the_cause_is_not_claimed() {
    let mut s = case();
    s.objects.events.retain(|e| e.reason() != "Killing");
    let d = diagnose(&s);
    assert!(ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"probe-kills-startup"), "{:?}", ids(&d));
}

#[test]
fn the_gate_fails_on_it_by_default_once_the_restarts_are_spent() {
    use mdiag_core::analysis::crashes::CrashHistory;
    use mdiag_core::analysis::gate::GatePolicy;
    let s = case();
    let crashes = CrashHistory::default();
    // Three restarts, the default allowance: final.
    let (d, view) = common::gate_view(&s, &crashes, &GatePolicy::default());
    assert_eq!(
        common::failed_on(&d, &view).map(|(id, _)| id),
        Some("probe-kills-startup")
    );
    // A cache the killed run warmed may let the next one load in time:
    // below the allowance, the gate waits.
    let patient = GatePolicy {
        max_restarts: 10,
        ..GatePolicy::default()
    };
    let (d, view) = common::gate_view(&s, &crashes, &patient);
    assert_eq!(common::failed_on(&d, &view), None);
}
