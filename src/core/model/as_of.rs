//! A snapshot as it stood at an earlier time (`--at`): what the file dates
//! after that time is left out, so nothing judged at it comes from later.
//! What the file does not date (replica and restart counts, an Event's
//! count, a phase, the spec) stays as it was captured. The rule, field by
//! field, is in docs/contract.md ("Judging at an earlier time").

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, ContainerStatus, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};

use super::{EventRecord, LogRecord, Objects, Snapshot};

/// Leaves out of `snapshot` what happened after `at`:
///
/// - objects created after `at` (and the endpoints of Pods among them);
/// - Events first seen after `at`; one seen before and after is last seen at `at`;
/// - conditions whose status or reason changed after `at` (their
///   `lastTransitionTime` or `lastUpdateTime`): what they said at `at` is
///   not in the file, so they are left out, as if not reported;
/// - container runs: one that started after `at` is not running (its
///   state is unknown, which the API reads as waiting) and its log is left
///   out; one that ended after `at` was still running;
/// - what follows from those: a Pod whose `startTime` is later was
///   Pending and on no node if its scheduling came later; an endpoint of
///   a Pod that became Ready later was not ready; a deletion asked for
///   later had not begun; a taint added later was not there; a Lease
///   held since before `at` and renewed after was renewed at `at`; Job,
///   CronJob and HPA times after `at` are unset.
pub fn as_of(snapshot: &mut Snapshot, at: Timestamp) {
    let later = |t: Option<&Time>| t.is_some_and(|t| t.0 > at);
    let created_later = |m: &ObjectMeta| later(m.creation_timestamp.as_ref());

    let o = &mut snapshot.objects;
    let gone: BTreeSet<(String, String)> = o
        .pods
        .iter()
        .filter(|p| created_later(&p.metadata))
        .map(|p| pod_key(&p.metadata))
        .collect();
    // Taken apart field by field, with no `..`: a new kind does not build
    // until it is cut back here too. Events, Rollouts and the untyped
    // objects have rules of their own below.
    let Objects {
        model_services,
        inference_services,
        rollouts: _,
        leader_worker_sets,
        knative_services,
        deployments,
        replica_sets,
        stateful_sets,
        daemon_sets,
        controller_revisions,
        pods,
        services,
        endpoint_slices,
        events: _,
        nodes,
        leases,
        hpas,
        pdbs,
        http_routes,
        jobs,
        cron_jobs,
        other: _,
    } = &mut *o;
    macro_rules! drop_later {
        ($($field:ident),*) => {
            $($field.retain(|x| !created_later(&x.metadata));
            for x in $field.iter_mut() {
                undelete(&mut x.metadata, at);
            })*
        };
    }
    drop_later!(
        model_services,
        inference_services,
        leader_worker_sets,
        knative_services,
        deployments,
        replica_sets,
        stateful_sets,
        daemon_sets,
        controller_revisions,
        pods,
        services,
        endpoint_slices,
        nodes,
        leases,
        hpas,
        pdbs,
        http_routes,
        jobs,
        cron_jobs
    );
    o.other.retain(|v| {
        let created = v
            .pointer("/metadata/creationTimestamp")
            .and_then(|t| t.as_str())
            .and_then(|t| t.parse::<Timestamp>().ok());
        created.is_none_or(|t| t <= at)
    });

    o.events.retain(|e| e.first_seen().is_none_or(|t| t <= at));
    for e in &mut o.events {
        last_seen_by(e, at);
    }

    let mut became_ready: BTreeSet<(String, String)> = BTreeSet::new();
    for pod in &mut o.pods {
        if pod_as_of(pod, at, &mut snapshot.logs) {
            became_ready.insert(pod_key(&pod.metadata));
        }
    }
    for slice in &mut o.endpoint_slices {
        let namespace = slice.metadata.namespace.clone().unwrap_or_default();
        let of = |e: &k8s_openapi::api::discovery::v1::Endpoint| {
            e.target_ref
                .as_ref()
                .filter(|r| r.kind.as_deref().is_none_or(|k| k == "Pod"))
                .and_then(|r| r.name.clone())
                .map(|name| (r_namespace(e, &namespace), name))
        };
        slice
            .endpoints
            .retain(|e| of(e).is_none_or(|key| !gone.contains(&key)));
        for e in &mut slice.endpoints {
            if of(e).is_some_and(|key| became_ready.contains(&key)) {
                let c = e.conditions.get_or_insert_with(Default::default);
                c.ready = Some(false);
                c.serving = Some(false);
            }
        }
    }
    snapshot
        .logs
        .retain(|l| !gone.contains(&(l.namespace.clone(), l.pod.clone())));

    for d in &mut o.deployments {
        if let Some(s) = &mut d.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), c.last_update_time.as_ref()]
            });
        }
    }
    for r in &mut o.replica_sets {
        if let Some(s) = &mut r.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
        }
    }
    for s in &mut o.stateful_sets {
        if let Some(s) = &mut s.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
        }
    }
    for d in &mut o.daemon_sets {
        if let Some(s) = &mut d.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
        }
    }
    for j in &mut o.jobs {
        if let Some(s) = &mut j.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
            unset_later(&mut s.start_time, at);
            unset_later(&mut s.completion_time, at);
        }
    }
    for c in &mut o.cron_jobs {
        if let Some(s) = &mut c.status {
            unset_later(&mut s.last_schedule_time, at);
            unset_later(&mut s.last_successful_time, at);
        }
    }
    for h in &mut o.hpas {
        if let Some(s) = &mut h.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
            unset_later(&mut s.last_scale_time, at);
        }
    }
    for p in &mut o.pdbs {
        if let Some(s) = &mut p.status {
            keep(&mut s.conditions, at, |c| {
                [Some(&c.last_transition_time), None]
            });
        }
    }
    for s in &mut o.services {
        if let Some(s) = &mut s.status {
            keep(&mut s.conditions, at, |c| {
                [Some(&c.last_transition_time), None]
            });
        }
    }
    for n in &mut o.nodes {
        if let Some(s) = &mut n.status {
            keep(&mut s.conditions, at, |c| {
                [c.last_transition_time.as_ref(), None]
            });
        }
        if let Some(taints) = n.spec.as_mut().and_then(|s| s.taints.as_mut()) {
            taints.retain(|t| !later(t.time_added.as_ref()));
        }
    }
    // A holder that took the lease by `at` and renewed it after was
    // renewing it then: its renewal is not later than `at`.
    for l in &mut o.leases {
        if let Some(spec) = &mut l.spec
            && spec.renew_time.as_ref().is_some_and(|t| t.0 > at)
            && spec.acquire_time.as_ref().is_none_or(|t| t.0 <= at)
        {
            spec.renew_time = Some(MicroTime(at));
        }
    }
    // A Rollout's view is made again from the object cut back.
    o.rollouts.retain(|r| !created_later(&r.object().metadata));
    for r in o.rollouts.iter_mut() {
        r.update(|object| {
            undelete(&mut object.metadata, at);
            if let Some(status) = object.data.get_mut("status") {
                keep_json_conditions(status, at);
            }
        });
    }
    for d in o
        .model_services
        .iter_mut()
        .chain(o.inference_services.iter_mut())
        .chain(o.leader_worker_sets.iter_mut())
        .chain(o.knative_services.iter_mut())
        .chain(o.http_routes.iter_mut())
    {
        if let Some(status) = d.data.get_mut("status") {
            keep_json_conditions(status, at);
        }
    }
}

/// The namespace and name of a Pod, as endpoints and logs name it.
fn pod_key(m: &ObjectMeta) -> (String, String) {
    (
        m.namespace.clone().unwrap_or_default(),
        m.name.clone().unwrap_or_default(),
    )
}

/// The namespace an endpoint's Pod is in: its reference's, else the slice's.
fn r_namespace(e: &k8s_openapi::api::discovery::v1::Endpoint, slice: &str) -> String {
    e.target_ref
        .as_ref()
        .and_then(|r| r.namespace.clone())
        .unwrap_or_else(|| slice.to_string())
}

/// A deletion asked for after `at` (its deadline less its grace period)
/// had not begun.
fn undelete(m: &mut ObjectMeta, at: Timestamp) {
    let Some(deadline) = &m.deletion_timestamp else {
        return;
    };
    let grace = jiff::SignedDuration::from_secs(m.deletion_grace_period_seconds.unwrap_or(0));
    if deadline.0.checked_sub(grace).is_ok_and(|asked| asked > at) {
        m.deletion_timestamp = None;
        m.deletion_grace_period_seconds = None;
    }
}

fn unset_later(t: &mut Option<Time>, at: Timestamp) {
    if t.as_ref().is_some_and(|t| t.0 > at) {
        *t = None;
    }
}

/// Keeps the conditions none of whose `times` is after `at`.
fn keep<C>(
    conditions: &mut Option<Vec<C>>,
    at: Timestamp,
    times: impl Fn(&C) -> [Option<&Time>; 2],
) {
    if let Some(list) = conditions {
        list.retain(|c| times(c).iter().flatten().all(|t| t.0 <= at));
    }
}

/// The same for an object mdiag reads untyped: every `conditions` list
/// under its status (an HTTPRoute's are per parent).
fn keep_json_conditions(value: &mut serde_json::Value, at: Timestamp) {
    let changed_later = |c: &serde_json::Value| {
        ["lastTransitionTime", "lastUpdateTime"].iter().any(|k| {
            c.get(k)
                .and_then(|t| t.as_str())
                .and_then(|t| t.parse::<Timestamp>().ok())
                .is_some_and(|t| t > at)
        })
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    serde_json::Value::Array(list) if key == "conditions" => {
                        list.retain(|c| !changed_later(c));
                    }
                    _ => keep_json_conditions(v, at),
                }
            }
        }
        serde_json::Value::Array(list) => {
            for v in list {
                keep_json_conditions(v, at);
            }
        }
        _ => {}
    }
}

/// An Event first seen by `at` and seen again after it: last seen at `at`
/// (it was still recurring then). Its count stays the capture's.
fn last_seen_by(e: &mut EventRecord, at: Timestamp) {
    let time = |t: &mut Option<Time>| {
        if t.as_ref().is_some_and(|t| t.0 > at) {
            *t = Some(Time(at));
        }
    };
    let micro = |t: &mut MicroTime| {
        if t.0 > at {
            *t = MicroTime(at);
        }
    };
    match e {
        EventRecord::Core(c) => {
            time(&mut c.first_timestamp);
            time(&mut c.last_timestamp);
            if let Some(t) = &mut c.event_time {
                micro(t);
            }
            if let Some(t) = c
                .series
                .as_mut()
                .and_then(|s| s.last_observed_time.as_mut())
            {
                micro(t);
            }
        }
        EventRecord::New(n) => {
            time(&mut n.deprecated_first_timestamp);
            time(&mut n.deprecated_last_timestamp);
            if let Some(t) = &mut n.event_time {
                micro(t);
            }
            if let Some(s) = &mut n.series {
                micro(&mut s.last_observed_time);
            }
        }
        EventRecord::Brief(b) => {
            if b.last_seen.is_some_and(|t| t > at) {
                b.last_seen = Some(at);
            }
        }
    }
}

/// One Pod at `at` (see [`as_of`]); its logs of runs that started later
/// are left out of `logs`. Whether it became Ready after `at`.
fn pod_as_of(pod: &mut Pod, at: Timestamp, logs: &mut Vec<LogRecord>) -> bool {
    let (namespace, name) = pod_key(&pod.metadata);
    let Some(status) = &mut pod.status else {
        return false;
    };
    let changed_later = |c: &k8s_openapi::api::core::v1::PodCondition| {
        c.last_transition_time.as_ref().is_some_and(|t| t.0 > at)
    };
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let later_condition = |kind: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == kind && c.status == "True" && changed_later(c))
    };
    let became_ready = later_condition("Ready");
    let bound_later = later_condition("PodScheduled");
    conditions.retain(|c| !changed_later(c));
    if status.conditions.as_ref().is_some_and(Vec::is_empty) {
        status.conditions = None;
    }
    if status.start_time.as_ref().is_some_and(|t| t.0 > at) {
        status.start_time = None;
        status.phase = Some("Pending".to_string());
    }
    if bound_later && let Some(spec) = &mut pod.spec {
        spec.node_name = None;
    }
    for list in [
        &mut status.init_container_statuses,
        &mut status.container_statuses,
        &mut status.ephemeral_container_statuses,
    ] {
        for c in list.iter_mut().flatten() {
            let container = c.name.clone();
            container_as_of(c, at, |previous, kept| {
                let is_this = |l: &LogRecord| {
                    l.namespace == namespace
                        && l.pod == name
                        && l.container == container
                        && l.previous == previous
                };
                match kept {
                    // A run that started later: its log was not written yet.
                    Run::Later => logs.retain(|l| !is_this(l)),
                    // The previous run was the one running at `at`.
                    Run::WasCurrent => {
                        for l in logs.iter_mut().filter(|l| is_this(l)) {
                            l.previous = false;
                        }
                    }
                }
            });
        }
    }
    became_ready
}

/// What became of a run's log.
enum Run {
    Later,
    WasCurrent,
}

fn started(s: &ContainerState) -> Option<Timestamp> {
    s.running
        .as_ref()
        .and_then(|r| r.started_at.as_ref())
        .or(s.terminated.as_ref().and_then(|t| t.started_at.as_ref()))
        .map(|t| t.0)
}

fn finished(s: &ContainerState) -> Option<Timestamp> {
    s.terminated
        .as_ref()
        .and_then(|t| t.finished_at.as_ref())
        .map(|t| t.0)
}

fn running_since(t: Option<Timestamp>) -> ContainerState {
    ContainerState {
        running: Some(ContainerStateRunning {
            started_at: t.map(Time),
        }),
        ..ContainerState::default()
    }
}

/// One container at `at`: `log(previous, what)` is told what became of
/// the log of its current (`previous` false) or previous run.
fn container_as_of(c: &mut ContainerStatus, at: Timestamp, mut log: impl FnMut(bool, Run)) {
    let mut changed = false;
    // The previous run ended after `at`: it was the run at `at`, and
    // whatever came after it (the current state) had not begun.
    if let Some(last) = &c.last_state
        && finished(last).is_some_and(|t| t > at)
    {
        let since = started(last).filter(|t| *t <= at);
        log(false, Run::Later);
        if since.is_some() {
            log(true, Run::WasCurrent);
            c.state = Some(running_since(since));
        } else {
            log(true, Run::Later);
            c.state = None;
        }
        c.last_state = None;
        changed = true;
    } else if let Some(state) = &c.state {
        if started(state).is_some_and(|t| t > at) {
            log(false, Run::Later);
            c.state = None;
            changed = true;
        } else if finished(state).is_some_and(|t| t > at) {
            c.state = Some(running_since(started(state)));
            changed = true;
        }
    }
    if changed {
        c.ready = false;
        c.started = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus};
    use k8s_openapi::api::core::v1::{
        ContainerStateTerminated, ContainerStateWaiting, Event, PodCondition, PodSpec, PodStatus,
    };

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn meta(name: &str, created: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("lab".into()),
            creation_timestamp: Some(Time(t(created))),
            ..ObjectMeta::default()
        }
    }

    fn event(first: &str, last: &str) -> EventRecord {
        EventRecord::Core(Box::new(Event {
            metadata: meta("e", first),
            first_timestamp: Some(Time(t(first))),
            last_timestamp: Some(Time(t(last))),
            count: Some(5),
            ..Event::default()
        }))
    }

    #[test]
    fn a_platform_objects_conditions_after_the_time_are_left_out() {
        let mut s = Snapshot::default();
        let isvc: kube_core::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "llama", "creationTimestamp": "2026-11-28T10:00:00Z"},
            "status": {"conditions": [
                {"type": "PredictorReady", "status": "False", "lastTransitionTime": "2026-11-28T10:01:00Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:08:00Z"}]}
        }))
        .unwrap();
        s.objects.inference_services.push(isvc);
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let kept: Vec<&str> = s.objects.inference_services[0].data["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["PredictorReady"]);
    }

    #[test]
    fn objects_and_events_after_the_time_are_left_out() {
        let mut s = Snapshot::default();
        s.objects.pods.push(Pod {
            metadata: meta("old", "2026-11-28T10:00:00Z"),
            ..Pod::default()
        });
        s.objects.pods.push(Pod {
            metadata: meta("new", "2026-11-28T10:06:00Z"),
            ..Pod::default()
        });
        s.objects
            .events
            .push(event("2026-11-28T10:01:00Z", "2026-11-28T10:09:00Z"));
        s.objects
            .events
            .push(event("2026-11-28T10:07:00Z", "2026-11-28T10:07:00Z"));
        s.logs.push(LogRecord {
            namespace: "lab".into(),
            pod: "new".into(),
            container: "app".into(),
            previous: false,
            truncated: false,
            text: "later".into(),
        });
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let names: Vec<_> = s
            .objects
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["old"]);
        assert!(s.logs.is_empty());
        assert_eq!(s.objects.events.len(), 1);
        let e = &s.objects.events[0];
        assert_eq!(e.first_seen(), Some(t("2026-11-28T10:01:00Z")));
        assert_eq!(e.last_seen(), Some(t("2026-11-28T10:05:00Z")));
    }

    #[test]
    fn a_condition_that_changed_after_the_time_is_not_reported() {
        let condition = |kind: &str, reason: &str, at: &str| DeploymentCondition {
            type_: kind.into(),
            status: "False".into(),
            reason: Some(reason.into()),
            last_transition_time: Some(Time(t(at))),
            last_update_time: Some(Time(t(at))),
            ..DeploymentCondition::default()
        };
        let mut s = Snapshot::default();
        s.objects.deployments.push(Deployment {
            metadata: meta("web", "2026-11-28T10:00:00Z"),
            status: Some(DeploymentStatus {
                conditions: Some(vec![
                    condition(
                        "Available",
                        "MinimumReplicasUnavailable",
                        "2026-11-28T10:00:05Z",
                    ),
                    condition(
                        "Progressing",
                        "ProgressDeadlineExceeded",
                        "2026-11-28T10:10:00Z",
                    ),
                ]),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        });
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let kept: Vec<_> = s.objects.deployments[0]
            .status
            .as_ref()
            .unwrap()
            .conditions
            .iter()
            .flatten()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(kept, ["Available"]);
    }

    fn terminated(started: &str, finished: &str) -> ContainerState {
        ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 1,
                started_at: Some(Time(t(started))),
                finished_at: Some(Time(t(finished))),
                ..ContainerStateTerminated::default()
            }),
            ..ContainerState::default()
        }
    }

    fn pod_with(status: ContainerStatus, conditions: Vec<PodCondition>) -> Pod {
        Pod {
            metadata: meta("p", "2026-11-28T10:00:00Z"),
            spec: Some(PodSpec {
                node_name: Some("n1".into()),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some("Running".into()),
                start_time: Some(Time(t("2026-11-28T10:00:02Z"))),
                conditions: Some(conditions),
                container_statuses: Some(vec![status]),
                ..PodStatus::default()
            }),
        }
    }

    fn log(previous: bool, text: &str) -> LogRecord {
        LogRecord {
            namespace: "lab".into(),
            pod: "p".into(),
            container: "app".into(),
            previous,
            truncated: false,
            text: text.into(),
        }
    }

    #[test]
    fn a_run_that_ended_after_the_time_was_still_running_then() {
        // Crashed at 10:06 and waiting in back-off since: at 10:05 the
        // first run was running, and its log is the current one.
        let status = ContainerStatus {
            name: "app".into(),
            restart_count: 1,
            state: Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("CrashLoopBackOff".into()),
                    ..ContainerStateWaiting::default()
                }),
                ..ContainerState::default()
            }),
            last_state: Some(terminated("2026-11-28T10:00:04Z", "2026-11-28T10:06:00Z")),
            ..ContainerStatus::default()
        };
        let mut s = Snapshot::default();
        s.objects.pods.push(pod_with(status, Vec::new()));
        s.logs.push(log(true, "first run"));
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let c = &s.objects.pods[0]
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        let running = c.state.as_ref().unwrap().running.as_ref().unwrap();
        assert_eq!(running.started_at, Some(Time(t("2026-11-28T10:00:04Z"))));
        assert!(c.last_state.is_none());
        assert_eq!(s.logs, [log(false, "first run")]);
    }

    #[test]
    fn a_run_that_started_after_the_time_had_not_begun() {
        let status = ContainerStatus {
            name: "app".into(),
            ready: true,
            state: Some(running_since(Some(t("2026-11-28T10:08:00Z")))),
            ..ContainerStatus::default()
        };
        let ready = PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(t("2026-11-28T10:08:30Z"))),
            ..PodCondition::default()
        };
        let scheduled = PodCondition {
            type_: "PodScheduled".into(),
            status: "True".into(),
            last_transition_time: Some(Time(t("2026-11-28T10:00:01Z"))),
            ..PodCondition::default()
        };
        let mut s = Snapshot::default();
        s.objects
            .pods
            .push(pod_with(status, vec![ready, scheduled]));
        s.logs.push(log(false, "later run"));
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let pod = &s.objects.pods[0];
        let status = pod.status.as_ref().unwrap();
        let c = &status.container_statuses.as_ref().unwrap()[0];
        assert!(c.state.is_none() && !c.ready);
        let kinds: Vec<_> = status
            .conditions
            .iter()
            .flatten()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(kinds, ["PodScheduled"]);
        assert_eq!(pod.spec.as_ref().unwrap().node_name.as_deref(), Some("n1"));
        assert!(s.logs.is_empty());
    }

    #[test]
    fn endpoints_of_pods_not_there_or_not_ready_yet_are_not_ready() {
        use k8s_openapi::api::core::v1::ObjectReference;
        use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointSlice};
        let ready = |at: &str| PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(t(at))),
            ..PodCondition::default()
        };
        let pod = |name: &str, created: &str, ready_at: &str| Pod {
            metadata: meta(name, created),
            status: Some(PodStatus {
                conditions: Some(vec![ready(ready_at)]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        let endpoint = |pod: &str| Endpoint {
            addresses: vec![format!("10.0.0.{}", pod.len())],
            conditions: Some(EndpointConditions {
                ready: Some(true),
                serving: Some(true),
                ..EndpointConditions::default()
            }),
            target_ref: Some(ObjectReference {
                kind: Some("Pod".into()),
                name: Some(pod.into()),
                ..ObjectReference::default()
            }),
            ..Endpoint::default()
        };
        let mut s = Snapshot::default();
        s.objects.pods = vec![
            pod("a", "2026-11-28T10:00:00Z", "2026-11-28T10:01:00Z"),
            pod("bb", "2026-11-28T10:00:00Z", "2026-11-28T10:07:00Z"),
            pod("ccc", "2026-11-28T10:06:00Z", "2026-11-28T10:06:30Z"),
        ];
        s.objects.endpoint_slices.push(EndpointSlice {
            metadata: meta("svc-x", "2026-11-28T10:00:00Z"),
            address_type: "IPv4".into(),
            endpoints: vec![endpoint("a"), endpoint("bb"), endpoint("ccc")],
            ports: None,
        });
        as_of(&mut s, t("2026-11-28T10:05:00Z"));
        let seen: Vec<(String, Option<bool>)> = s.objects.endpoint_slices[0]
            .endpoints
            .iter()
            .map(|e| {
                (
                    e.target_ref.as_ref().unwrap().name.clone().unwrap(),
                    e.conditions.as_ref().unwrap().ready,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("a".to_string(), Some(true)),
                ("bb".to_string(), Some(false))
            ]
        );
    }

    #[test]
    fn a_deletion_asked_for_later_had_not_begun() {
        let mut m = meta("p", "2026-11-28T10:00:00Z");
        m.deletion_timestamp = Some(Time(t("2026-11-28T10:05:20Z")));
        m.deletion_grace_period_seconds = Some(30);
        let mut asked_before = m.clone();
        undelete(&mut asked_before, t("2026-11-28T10:05:00Z"));
        assert!(asked_before.deletion_timestamp.is_some());
        undelete(&mut m, t("2026-11-28T10:04:00Z"));
        assert!(m.deletion_timestamp.is_none());
    }
}
