//! An init container that keeps the Pod from starting (SPEC section 4,
//! `init-container-failing`): one that fails and is restarted, or one that
//! runs far longer than it took in the other Pods of its revision (a model
//! download that stalls). Its waiting shapes with a cause of their own
//! (a pull, a configuration error, a command that cannot run) keep their
//! own ids.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::{Ctx, container_label, event_evidence, paren, pod_events, pod_finding, pod_label};
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{FindingId, Message};

/// A running init container is stalled once it has run this many times
/// as long as the slowest that completed in another Pod of its revision.
const STALL_FACTOR: f64 = 3.0;
/// ...and at least this long: a short step that took 5 s elsewhere is not
/// stalled at 16 s.
const STALL_FLOOR_SECONDS: f64 = 120.0;

/// The init containers that run to completion before the app containers
/// (a sidecar, `restartPolicy: Always`, runs beside them instead).
pub(super) fn ordinary_init(pod: &Pod, name: &str) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.init_containers.as_ref())
        .and_then(|c| c.iter().find(|c| c.name == name))
        .is_some_and(|c| c.restart_policy.as_deref() != Some("Always"))
}

fn init_statuses(pod: &Pod) -> impl Iterator<Item = &ContainerStatus> {
    pod.status
        .iter()
        .flat_map(|s| s.init_container_statuses.iter().flatten())
        .filter(|s| ordinary_init(pod, &s.name))
}

pub fn init_container_failing(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        // A failed run-to-completion Pod is said by pod-failed.
        if super::failed_run(pod) {
            continue;
        }
        for s in init_statuses(pod) {
            if let Some(f) = failing(ctx, pod, s).or_else(|| stalled(ctx, p, s)) {
                out.push(f);
                // The first one stops the rest from running.
                break;
            }
        }
    }
    out
}

/// Restarted after a failed exit, and not done: waiting to run again
/// (CrashLoopBackOff), or terminated and about to.
fn failing(ctx: &Ctx, pod: &Pod, s: &ContainerStatus) -> Option<Finding> {
    let state = s.state.as_ref()?;
    let last = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    let now = state.terminated.as_ref();
    let exit = now.filter(|t| t.exit_code != 0).or(last)?;
    let waiting = state.waiting.as_ref().and_then(|w| w.reason.as_deref());
    let looping = matches!(waiting, Some("CrashLoopBackOff"))
        || (now.is_some_and(|t| t.exit_code != 0) && s.restart_count >= 1)
        || (state.running.is_some() && s.restart_count >= 2);
    // 126/127 and runtime refusals are container-cannot-run; OOM kills
    // are oom-killed.
    let reason = exit.reason.as_deref().unwrap_or("");
    if !looping
        || s.restart_count < 1
        || exit.exit_code == 0
        || matches!(exit.exit_code, 126 | 127)
        || matches!(reason, "OOMKilled" | "StartError" | "ContainerCannotRun")
    {
        return None;
    }
    let detail = Message::new("init.failing")
        .arg("container", &s.name)
        .arg("code", exit.exit_code)
        .arg("reason", paren(reason))
        .arg("restarts", s.restart_count);
    let mut f = pod_finding(
        ctx,
        FindingId::INIT_CONTAINER_FAILING,
        pod,
        Step::Started,
        detail,
    )
    .var("container", s.name.clone())
    .evidence(
        Evidence::said(
            pod_label(pod),
            format!("{}.lastState.terminated", init_label(s)),
            super::crashes::terminated_value(exit.exit_code, reason, exit.message.as_deref()),
        )
        .at(exit.finished_at.as_ref().map(|t| t.0)),
    )
    .evidence(Evidence::new(
        pod_label(pod),
        format!("{}.restartCount", init_label(s)),
        s.restart_count.to_string(),
    ));
    f = with_what_it_runs(f, pod, &s.name);
    if let Some(e) = pod_events(ctx, pod)
        .into_iter()
        .rev()
        .find(|e| e.reason() == "BackOff" && e.message().contains(&s.name))
    {
        f = f.evidence(event_evidence(pod, e));
    }
    Some(f)
}

/// Running far longer than the same init container took to complete in
/// the other Pods of the revision.
fn stalled(ctx: &Ctx, p: &crate::chain::ChainPod, s: &ContainerStatus) -> Option<Finding> {
    let pod = p.pod;
    let started = s.state.as_ref()?.running.as_ref()?.started_at.as_ref()?.0;
    let running = facts::seconds_between(started, ctx.now);
    let revision = owner_uid(pod);
    // How long it took where it completed: the slowest, the kindest bound.
    let took = ctx
        .current_pods()
        .filter(|(q, _)| q.pod.metadata.uid != pod.metadata.uid)
        .filter(|(q, _)| revision.is_some() && owner_uid(q.pod) == revision)
        .flat_map(|(q, _)| init_statuses(q.pod))
        .filter(|o| o.name == s.name)
        .filter_map(|o| {
            let t = o.state.as_ref()?.terminated.as_ref()?;
            (t.exit_code == 0).then_some(())?;
            Some(facts::seconds_between(
                t.started_at.as_ref()?.0,
                t.finished_at.as_ref()?.0,
            ))
        })
        .fold(None, |most: Option<f64>, t| {
            Some(most.map_or(t, |m| m.max(t)))
        })?;
    if running < STALL_FLOOR_SECONDS || running < STALL_FACTOR * took {
        return None;
    }
    let took = crate::analysis::format_duration(took.max(0.0) as i64);
    let detail = Message::new("init.stalled")
        .arg("container", &s.name)
        .arg("running", facts::age(started, ctx.now))
        .arg("took", took.as_str());
    let f = pod_finding(
        ctx,
        FindingId::INIT_CONTAINER_FAILING,
        pod,
        Step::Started,
        detail,
    )
    .var("container", s.name.clone())
    .evidence(
        Evidence::said(
            pod_label(pod),
            format!("{}.state.running", init_label(s)),
            Message::new("init.running_for").arg("running", facts::age(started, ctx.now)),
        )
        .at(Some(started)),
    )
    .evidence(Evidence::said(
        "pods of the revision",
        format!("{}.state.terminated", init_label(s)),
        Message::new("init.took_elsewhere").arg("took", took),
    ));
    Some(with_what_it_runs(f, pod, &s.name))
}

/// The UID of the Pod's controller (its ReplicaSet, its set): the Pods of
/// one revision share it.
fn owner_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.as_str())
}

/// `status.initContainerStatuses[NAME]`.
fn init_label(s: &ContainerStatus) -> String {
    container_label(s).replacen("containerStatuses", "initContainerStatuses", 1)
}

/// The init container's image and arguments: a download names its source
/// there (a storage URI, a model id).
fn with_what_it_runs(f: Finding, pod: &Pod, name: &str) -> Finding {
    let Some(c) = pod
        .spec
        .as_ref()
        .and_then(|s| s.init_containers.as_ref())
        .and_then(|c| c.iter().find(|c| c.name == name))
    else {
        return f;
    };
    let mut f = f;
    if let Some(image) = &c.image {
        f = f.evidence(Evidence::new(
            pod_label(pod),
            format!("spec.initContainers[{name}].image"),
            image.clone(),
        ));
    }
    let words: Vec<&str> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(String::as_str)
        .collect();
    if !words.is_empty() {
        f = f.evidence(Evidence::new(
            pod_label(pod),
            format!("spec.initContainers[{name}].args"),
            words.join(" "),
        ));
    }
    f
}
