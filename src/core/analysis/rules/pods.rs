//! Rules about the Pods of the current revision: scheduling, containers,
//! images, probes.

use crate::catalogue::{Arg, FindingId, Message};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::Ctx;
use crate::analysis::facts::{self, age, lease_state, pod_condition};
use crate::analysis::{Evidence, Finding, PodState, Step};
use crate::chain::ChainPod;
use crate::model::{EventRecord, ObjectRef, int_or_string};

/// Seconds a Pod may wait for the scheduler before silence means something.
const SCHEDULER_GRACE_SECONDS: f64 = 30.0;
/// Seconds after a container starts before a missing Ready is a symptom.
const READINESS_GRACE_SECONDS: f64 = 30.0;

fn pod_ref(pod: &Pod) -> ObjectRef {
    ObjectRef::new("Pod", &pod.metadata)
}

fn pod_label(pod: &Pod) -> String {
    format!("pod/{}", facts::name(&pod.metadata))
}

fn pod_finding(ctx: &Ctx, id: FindingId, pod: &Pod, step: Step, detail: Message) -> Finding {
    let mut f = Finding::new(id, pod_ref(pod), step, detail);
    f.vars = ctx.base_vars();
    f.vars.extend(super::pod_vars(pod));
    f
}

/// The cluster's own words, as they are.
pub(super) fn quote(text: impl Into<String>) -> Message {
    Message::new("quote").arg("text", text.into())
}

/// ` (REASON)` after an exit code, or nothing without a reason.
fn paren(reason: &str) -> Arg {
    if reason.is_empty() {
        Arg::from("")
    } else {
        Message::new("paren").arg("text", reason).into()
    }
}

/// The value, or the word `none`.
pub(super) fn or_none(value: Option<&str>) -> Arg {
    match value {
        Some(v) => Arg::from(v),
        None => Message::new("word.none").into(),
    }
}

fn event_evidence(pod: &Pod, e: &EventRecord) -> Evidence {
    let count = e.count();
    let times = if count > 1 {
        format!(" (x{count})")
    } else {
        String::new()
    };
    Evidence::new(
        pod_label(pod),
        format!("event {}", e.reason()),
        format!("{}{times}", e.message()),
    )
    .at(e.last_seen())
}

/// Events about the Pod, newest last, that are no older than the Pod.
fn pod_events<'a>(ctx: &Ctx<'a>, pod: &Pod) -> Vec<&'a EventRecord> {
    let born = facts::created(&pod.metadata);
    ctx.events
        .about("Pod", &pod.metadata)
        .into_iter()
        .filter(|e| match (born, e.last_seen()) {
            (Some(b), Some(seen)) => seen >= b,
            _ => true,
        })
        .collect()
}

pub fn unschedulable(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if state.moments.bound.reached {
            continue;
        }
        let pod = p.pod;
        let condition = pod_condition(pod, "PodScheduled").filter(|c| c.status == "False");
        let failed: Vec<_> = pod_events(ctx, pod)
            .into_iter()
            .filter(|e| e.reason() == "FailedScheduling")
            .collect();
        if condition.is_none() && failed.is_empty() {
            continue;
        }
        let message = failed
            .last()
            .map(|e| e.message().to_string())
            .or_else(|| condition.and_then(|c| c.message.clone()))
            .unwrap_or_default();
        let mut f = pod_finding(
            ctx,
            FindingId::POD_UNSCHEDULABLE,
            pod,
            Step::Bound,
            quote(message),
        );
        if let Some(c) = condition {
            f = f.evidence(
                Evidence::new(
                    pod_label(pod),
                    "status.conditions[PodScheduled]",
                    format!(
                        "False {}: {}",
                        c.reason.as_deref().unwrap_or(""),
                        c.message.as_deref().unwrap_or("")
                    ),
                )
                .at(c.last_transition_time.as_ref().map(|t| t.0)),
            );
        }
        if let Some(e) = failed.last() {
            f = f.evidence(event_evidence(pod, e));
        }
        out.push(f);
    }
    out
}

pub fn scheduler_silent(ctx: &Ctx) -> Vec<Finding> {
    // Silence means something only if we could have heard the scheduler.
    if ctx.hidden("events") {
        return Vec::new();
    }
    let lease_unreadable = ctx.hidden_in("leases", "kube-system");
    let lease = facts::find_lease(ctx.snapshot, "kube-system", "kube-scheduler")
        .map(|l| lease_state(l, ctx.now));
    if lease.as_ref().is_some_and(|l| !l.stale) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        let pod = p.pod;
        let waited = facts::created(&pod.metadata)
            .map(|c| facts::seconds_between(c, ctx.now))
            .unwrap_or(0.0);
        let has_scheduling_evidence = pod_condition(pod, "PodScheduled").is_some()
            || pod_events(ctx, pod)
                .iter()
                .any(|e| e.reason() == "FailedScheduling" || e.reason() == "Scheduled");
        if state.moments.bound.reached
            || has_scheduling_evidence
            || waited < SCHEDULER_GRACE_SECONDS
        {
            continue;
        }
        let lease_text = match &lease {
            Some(l) => {
                let m = match l.renewed {
                    Some(t) => Message::new("scheduler-silent.lease").arg("ago", age(t, ctx.now)),
                    None => Message::new("scheduler-silent.lease_never"),
                };
                m.arg("holder", or_none(l.holder.as_deref()))
                    .arg("duration", l.duration_seconds)
            }
            None if lease_unreadable => Message::new("scheduler-silent.lease_unreadable"),
            None => Message::new("scheduler-silent.lease_missing"),
        };
        let f = pod_finding(
            ctx,
            FindingId::SCHEDULER_SILENT,
            pod,
            Step::Bound,
            Message::new("scheduler-silent.detail")
                .arg(
                    "waited",
                    age(facts::created(&pod.metadata).unwrap_or(ctx.now), ctx.now),
                )
                .arg("lease", lease_text.clone()),
        )
        .evidence(
            Evidence::said(pod_label(pod), "spec.nodeName", Message::new("word.unset"))
                .at(facts::created(&pod.metadata)),
        )
        .evidence(
            Evidence::said("lease/kube-scheduler", "spec.renewTime", lease_text)
                .at(lease.as_ref().and_then(|l| l.renewed)),
        );
        out.push(f);
    }
    out
}

fn container_label(s: &ContainerStatus) -> String {
    format!("status.containerStatuses[{}]", s.name)
}

/// Failing containers that are not OOM kills or image pulls: crash loops,
/// configuration errors, commands that cannot run.
pub fn container_failures(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::all_container_statuses(pod) {
            if let Some(f) = container_failure(ctx, p, s)
                .or_else(|| running_between_crashes(ctx, p, s))
                .or_else(|| terminated_before_restart(ctx, p, s))
            {
                out.push(f);
            }
        }
    }
    out
}

/// The kubelet forgets a container's crash back-off after it has run this
/// long; a container running for less, after a failed exit, is still
/// looping: it shows Running between two crashes, not CrashLoopBackOff.
const BACKOFF_RESET_SECONDS: f64 = 600.0;

/// A crash loop caught between two crashes: running again but not ready,
/// after restarts and a failed exit within the kubelet's back-off memory.
fn running_between_crashes(ctx: &Ctx, p: &ChainPod, s: &ContainerStatus) -> Option<Finding> {
    let pod = p.pod;
    let running = s.state.as_ref()?.running.as_ref()?;
    let last = s.last_state.as_ref()?.terminated.as_ref()?;
    let last_reason = last.reason.as_deref().unwrap_or("");
    // OOM kills have their own rule. A clean exit 0 loops the same way
    // under restartPolicy Always (the kubelet backs it off alike).
    if s.ready || s.restart_count < 2 || last_reason == "OOMKilled" {
        return None;
    }
    let started = running.started_at.as_ref().map(|t| t.0)?;
    if facts::seconds_between(started, ctx.now) > BACKOFF_RESET_SECONDS {
        return None;
    }
    let detail = Message::new(if last.exit_code == 0 {
        "crash.between_zero"
    } else {
        "crash.between"
    })
    .arg("container", &s.name)
    .arg("code", last.exit_code)
    .arg("reason", paren(last_reason))
    .arg("restarts", s.restart_count)
    .arg("running", facts::age(started, ctx.now));
    let f = pod_finding(ctx, FindingId::CRASH_LOOP, pod, Step::Ready, detail)
        .var("container", s.name.clone())
        .evidence(
            Evidence::said(
                pod_label(pod),
                format!("{}.state.running", container_label(s)),
                Message::new("crash.running_not_ready"),
            )
            .at(Some(started)),
        )
        .evidence(
            Evidence::said(
                pod_label(pod),
                format!("{}.lastState.terminated", container_label(s)),
                terminated_value(last.exit_code, last_reason, None),
            )
            .at(last.finished_at.as_ref().map(|t| t.0)),
        );
    Some(with_restarts_and_backoff(ctx, pod, s, f))
}

/// A crash loop caught just after a crash: the real kubelet (1.35) leaves
/// `state.terminated` in the status until its next sync of the Pod hits
/// the back-off and writes `waiting: CrashLoopBackOff`, which can take
/// minutes. A container that is terminated now, has been restarted before
/// and will be restarted again (restartPolicy Always, or OnFailure after a
/// failure) is looping.
fn terminated_before_restart(ctx: &Ctx, p: &ChainPod, s: &ContainerStatus) -> Option<Finding> {
    let pod = p.pod;
    let now = s.state.as_ref()?.terminated.as_ref()?;
    let reason = now.reason.as_deref().unwrap_or("");
    let policy = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.restart_policy.as_deref())
        .unwrap_or("Always");
    let restarts_again = policy == "Always" || (policy == "OnFailure" && now.exit_code != 0);
    // OOM kills have their own rule; a first exit may be a one-off.
    if s.restart_count < 1 || !restarts_again || reason == "OOMKilled" {
        return None;
    }
    let how = match now.exit_code {
        0 => Message::new("crash.how_zero"),
        code => Message::new("crash.how_exits")
            .arg("code", code)
            .arg("reason", paren(reason)),
    };
    let id = if matches!(now.exit_code, 126 | 127) {
        FindingId::CONTAINER_CANNOT_RUN
    } else {
        FindingId::CRASH_LOOP
    };
    let detail = Message::new("crash.terminated")
        .arg("container", &s.name)
        .arg("how", how)
        .arg("restarts", s.restart_count);
    let f = pod_finding(ctx, id, pod, Step::Started, detail)
        .var("container", s.name.clone())
        .evidence(
            Evidence::said(
                pod_label(pod),
                format!("{}.state.terminated", container_label(s)),
                terminated_value(now.exit_code, reason, now.message.as_deref()),
            )
            .at(now.finished_at.as_ref().map(|t| t.0)),
        );
    Some(with_restarts_and_backoff(ctx, pod, s, f))
}

/// A terminated state as evidence: `exitCode 1 reason Error: MESSAGE`,
/// `(none)` in the view's words when the runtime gave no reason.
fn terminated_value(code: i32, reason: &str, message: Option<&str>) -> Message {
    let reason: Arg = if reason.is_empty() {
        Message::new("word.none_paren").into()
    } else {
        reason.into()
    };
    let message: Arg = match message {
        Some(m) => Message::new("evidence.terminated_message")
            .arg("message", m.trim())
            .into(),
        None => "".into(),
    };
    Message::new("evidence.terminated")
        .arg("code", code)
        .arg("reason", reason)
        .arg("message", message)
}

/// The restart count and the newest BackOff Event, the evidence every
/// crash-loop shape ends with.
fn with_restarts_and_backoff(ctx: &Ctx, pod: &Pod, s: &ContainerStatus, f: Finding) -> Finding {
    let mut f = f.evidence(Evidence::new(
        pod_label(pod),
        format!("{}.restartCount", container_label(s)),
        s.restart_count.to_string(),
    ));
    if let Some(e) = pod_events(ctx, pod)
        .into_iter()
        .rev()
        .find(|e| e.reason() == "BackOff")
    {
        f = f.evidence(event_evidence(pod, e));
    }
    f
}

fn container_failure(ctx: &Ctx, p: &ChainPod, s: &ContainerStatus) -> Option<Finding> {
    let pod = p.pod;
    let waiting = s.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref().unwrap_or("");
    let last = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    let last_reason = last.and_then(|t| t.reason.as_deref()).unwrap_or("");
    let exit = last.map(|t| t.exit_code);
    let waiting_evidence = Evidence::new(
        pod_label(pod),
        format!("{}.state.waiting", container_label(s)),
        format!("{reason}: {}", waiting.message.as_deref().unwrap_or("")),
    );
    let last_evidence = last.map(|t| {
        Evidence::said(
            pod_label(pod),
            format!("{}.lastState.terminated", container_label(s)),
            terminated_value(
                t.exit_code,
                t.reason.as_deref().unwrap_or(""),
                t.message.as_deref(),
            ),
        )
        .at(t.finished_at.as_ref().map(|t| t.0))
    });
    let restarts = Evidence::new(
        pod_label(pod),
        format!("{}.restartCount", container_label(s)),
        s.restart_count.to_string(),
    );

    let (id, detail) = match reason {
        "CreateContainerConfigError" | "CreateContainerError" => (
            FindingId::CONTAINER_CONFIG_ERROR,
            Message::new("container.waiting")
                .arg("container", &s.name)
                .arg("reason", reason)
                .arg("message", waiting.message.as_deref().unwrap_or("")),
        ),
        "RunContainerError" | "ContainerCannotRun" => (
            FindingId::CONTAINER_CANNOT_RUN,
            Message::new("container.waiting")
                .arg("container", &s.name)
                .arg("reason", reason)
                .arg("message", waiting.message.as_deref().unwrap_or("")),
        ),
        "CrashLoopBackOff" if last_reason == "OOMKilled" => return None,
        "CrashLoopBackOff"
            if matches!(exit, Some(126 | 127))
                || matches!(last_reason, "ContainerCannotRun" | "StartError") =>
        {
            let why = match (exit, last_reason) {
                (_, "StartError" | "ContainerCannotRun") => Message::new("cannot-run.runtime")
                    .arg("reason", last_reason)
                    .arg(
                        "message",
                        match last.and_then(|t| t.message.as_deref()) {
                            Some(m) => Arg::from(m.trim()),
                            None => Message::new("word.no_message").into(),
                        },
                    ),
                (Some(127), _) => Message::new("cannot-run.127"),
                _ => Message::new("cannot-run.126"),
            };
            (
                FindingId::CONTAINER_CANNOT_RUN,
                Message::new("cannot-run.detail")
                    .arg("container", &s.name)
                    .arg("why", why)
                    .arg("restarts", s.restart_count),
            )
        }
        "CrashLoopBackOff" => {
            let how = match exit {
                Some(0) => Message::new("crash.how_zero"),
                Some(137) if last_reason != "OOMKilled" => Message::new("crash.how_killed").arg(
                    "reason",
                    or_none(Some(last_reason).filter(|r| !r.is_empty())),
                ),
                Some(code) => Message::new("crash.how_exits")
                    .arg("code", code)
                    .arg("reason", paren(last_reason)),
                None => Message::new("crash.how_unknown"),
            };
            (
                FindingId::CRASH_LOOP,
                Message::new("crash.detail")
                    .arg("container", &s.name)
                    .arg("how", how)
                    .arg("restarts", s.restart_count),
            )
        }
        _ => return None,
    };
    let mut f = pod_finding(ctx, id, pod, Step::Started, detail)
        .var("container", s.name.clone())
        .evidence(waiting_evidence);
    if let Some(e) = last_evidence {
        f = f.evidence(e);
    }
    f = f.evidence(restarts);
    if let Some(e) = pod_events(ctx, pod)
        .into_iter()
        .rev()
        .find(|e| matches!(e.reason(), "BackOff" | "Failed"))
    {
        f = f.evidence(event_evidence(pod, e));
    }
    Some(f)
}

pub fn oom_killed(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::all_container_statuses(pod) {
            let state = s.state.as_ref();
            let now_terminated = state.and_then(|st| st.terminated.as_ref());
            let last = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
            let oom = [now_terminated, last]
                .into_iter()
                .flatten()
                .find(|t| t.reason.as_deref() == Some("OOMKilled"));
            let Some(oom) = oom else { continue };
            // A container running and ready now is healthy whatever its past.
            let recovered = state.is_some_and(|st| st.running.is_some()) && s.ready;
            if recovered {
                continue;
            }
            let limit = pod
                .spec
                .as_ref()
                .and_then(|spec| spec.containers.iter().find(|c| c.name == s.name))
                .and_then(|c| c.resources.as_ref())
                .and_then(|r| r.limits.as_ref())
                .and_then(|l| l.get("memory"))
                .map(|q| q.0.clone());
            let detail = Message::new("oom.detail")
                .arg("container", &s.name)
                .arg("code", oom.exit_code)
                .arg("limit", or_none(limit.as_deref()))
                .arg("restarts", s.restart_count);
            // Running again after the kill, it fails at Ready (it is
            // loading again), not at Started.
            let running_again = state.is_some_and(|st| st.running.is_some());
            let step = if running_again {
                Step::Ready
            } else {
                Step::Started
            };
            let f = pod_finding(ctx, FindingId::OOM_KILLED, pod, step, detail)
                .var("container", s.name.clone())
                .evidence(
                    Evidence::new(
                        pod_label(pod),
                        format!("{}.lastState.terminated", container_label(s)),
                        format!("reason OOMKilled exitCode {}", oom.exit_code),
                    )
                    .at(oom.finished_at.as_ref().map(|t| t.0)),
                )
                .evidence(match limit {
                    Some(limit) => Evidence::new(
                        pod_label(pod),
                        format!("spec.containers[{}].resources.limits.memory", s.name),
                        limit,
                    ),
                    None => Evidence::said(
                        pod_label(pod),
                        format!("spec.containers[{}].resources.limits.memory", s.name),
                        Message::new("oom.no_limit"),
                    ),
                })
                .evidence(Evidence::new(
                    pod_label(pod),
                    format!("{}.restartCount", container_label(s)),
                    s.restart_count.to_string(),
                ));
            out.push(f);
        }
    }
    out
}

const PULL_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "ImageInspectError",
    "RegistryUnavailable",
];

/// Sorts a registry's words into the four pull failures. Order matters:
/// a denial often also says "does not exist".
pub fn classify_pull_error(message: &str) -> FindingId {
    let m = message.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&[
        "pull access denied",
        "unauthorized",
        "authorization failed",
        "authentication required",
        "403 forbidden",
        "denied",
        "insufficient_scope",
        "no basic auth credentials",
    ]) {
        FindingId::IMAGE_PULL_DENIED
    } else if any(&[
        "not found",
        "manifest unknown",
        "notfound",
        "no such manifest",
        "no matching manifest",
        "name unknown",
    ]) {
        FindingId::IMAGE_PULL_NOT_FOUND
    } else if any(&[
        "i/o timeout",
        "deadlineexceeded",
        "deadline exceeded",
        "timeout",
        "timed out",
    ]) {
        FindingId::IMAGE_PULL_TIMEOUT
    } else {
        FindingId::IMAGE_PULL_FAILED
    }
}

pub fn image_pull(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::all_container_statuses(pod) {
            let Some(waiting) = s.state.as_ref().and_then(|st| st.waiting.as_ref()) else {
                continue;
            };
            let reason = waiting.reason.as_deref().unwrap_or("");
            if !PULL_REASONS.contains(&reason) {
                continue;
            }
            // The registry's words are in the kubelet's Failed event (and in
            // the waiting message while the state is ErrImagePull).
            let failed = pod_events(ctx, pod).into_iter().rev().find(|e| {
                e.reason() == "Failed"
                    && e.message().contains("ull image")
                    && mentions_container_image(e, s)
            });
            let registry_words = failed
                .map(|e| e.message().to_string())
                .or_else(|| {
                    waiting
                        .message
                        .clone()
                        .filter(|m| !m.starts_with("Back-off"))
                })
                .unwrap_or_default();
            let id = if registry_words.is_empty() {
                FindingId::IMAGE_PULL_FAILED
            } else {
                classify_pull_error(&registry_words)
            };
            let detail = if registry_words.is_empty() {
                Message::new("image-pull.unrecorded")
                    .arg("container", &s.name)
                    .arg("reason", reason)
                    .arg("image", &s.image)
            } else {
                Message::new("image-pull.detail")
                    .arg("image", &s.image)
                    .arg("words", registry_words)
            };
            let mut f = pod_finding(ctx, id, pod, Step::Started, detail)
                .var("container", s.name.clone())
                .evidence(Evidence::new(
                    pod_label(pod),
                    format!("{}.state.waiting", container_label(s)),
                    format!("{reason}: {}", waiting.message.as_deref().unwrap_or("")),
                ));
            if let Some(e) = failed {
                f = f.evidence(event_evidence(pod, e));
            }
            out.push(f);
        }
    }
    out
}

fn mentions_container_image(e: &EventRecord, s: &ContainerStatus) -> bool {
    let field = e.subject().field_path;
    field.is_empty() || field.contains(&format!("{{{}}}", s.name)) || e.message().contains(&s.image)
}

pub fn readiness_failing(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if !state.moments.started.reached || state.moments.ready.reached {
            continue;
        }
        // On a node that stopped reporting, the Pod's status is the node
        // controller's, not its probes': that is node-not-ready.
        if node_not_ready_for(ctx, state) || node_not_ready_event(ctx, p.pod, state).is_some() {
            continue;
        }
        if let Some(f) = readiness_finding(ctx, p, state) {
            out.push(f);
        }
    }
    out
}

/// The longest readiness-probe `initialDelaySeconds` of the Pod's
/// containers, in seconds (0 without one).
fn readiness_initial_delay(pod: &k8s_openapi::api::core::v1::Pod) -> f64 {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .filter_map(|c| c.readiness_probe.as_ref()?.initial_delay_seconds)
        .max()
        .map_or(0.0, f64::from)
}

fn readiness_finding(ctx: &Ctx, p: &ChainPod, state: &PodState) -> Option<Finding> {
    let pod = p.pod;
    let started = state.moments.started.at;
    // Only probe failures of the running containers are current evidence.
    let unhealthy: Vec<&EventRecord> = pod_events(ctx, pod)
        .into_iter()
        .filter(|e| e.reason() == "Unhealthy" && e.message().contains("eadiness"))
        .filter(|e| match (started, e.last_seen()) {
            (Some(s), Some(seen)) => seen >= s,
            _ => true,
        })
        .collect();
    let running_for = started
        .map(|s| facts::seconds_between(s, ctx.now))
        .unwrap_or(f64::MAX);
    // No readiness probe runs before its initialDelaySeconds: a Pod inside
    // it is starting, not failing (a model server often sets minutes).
    // A recorded failure of this run is evidence all the same (the node's
    // clock and ours differ), so the grace holds only without one.
    let delay = readiness_initial_delay(pod);
    if unhealthy.is_empty() && running_for < delay.max(READINESS_GRACE_SECONDS) {
        return None;
    }
    let ready = pod_condition(pod, "Ready");
    let detail = match unhealthy.last() {
        Some(e) => Message::new("readiness.unhealthy")
            .arg("message", e.message())
            .arg("count", e.count()),
        None => Message::new("readiness.unrecorded")
            .arg("running", facts::age(started.unwrap_or(ctx.now), ctx.now)),
    };
    let mut f = pod_finding(ctx, FindingId::READINESS_FAILING, pod, Step::Ready, detail);
    if let Some(c) = ready {
        f = f.evidence(
            Evidence::new(
                pod_label(pod),
                "status.conditions[Ready]",
                format!(
                    "{} {}{}",
                    c.status,
                    c.reason.as_deref().unwrap_or(""),
                    c.message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
            )
            .at(c.last_transition_time.as_ref().map(|t| t.0)),
        );
    }
    if let Some(probe) = pod.spec.as_ref().and_then(|s| {
        s.containers
            .iter()
            .find_map(|c| c.readiness_probe.as_ref().map(|p| (c, p)))
    }) {
        let (c, probe) = probe;
        let target = if let Some(h) = &probe.http_get {
            format!(
                "httpGet {}:{}",
                h.path.as_deref().unwrap_or("/"),
                int_or_string(&h.port)
            )
        } else if let Some(t) = &probe.tcp_socket {
            format!("tcpSocket :{}", int_or_string(&t.port))
        } else if probe.exec.is_some() {
            "exec".to_string()
        } else if probe.grpc.is_some() {
            "grpc".to_string()
        } else {
            "probe".to_string()
        };
        f = f.var("container", c.name.clone()).evidence(Evidence::said(
            pod_label(pod),
            format!("spec.containers[{}].readinessProbe", c.name),
            Message::new("readiness.probe")
                .arg("target", target)
                .arg("period", probe.period_seconds.unwrap_or(10))
                .arg("threshold", probe.failure_threshold.unwrap_or(3)),
        ));
    }
    if let Some(e) = unhealthy.last() {
        f = f.evidence(event_evidence(pod, e));
    }
    Some(f)
}

/// Events a kubelet writes when a bound Pod cannot get its containers
/// created: volumes, sandbox, network.
const NOT_STARTED_REASONS: &[&str] = &[
    "FailedMount",
    "FailedAttachVolume",
    "FailedMapVolume",
    "FailedCreatePodSandBox",
    "FailedCreatePodContainer",
    "NetworkNotReady",
    "FailedSync",
];

pub fn pod_not_started(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if !state.moments.bound.reached || state.moments.started.reached {
            continue;
        }
        let pod = p.pod;
        // Containers still being created, not failing in a way other rules name.
        let creating = facts::all_container_statuses(pod).all(|s| {
            s.state
                .as_ref()
                .and_then(|st| st.waiting.as_ref())
                .and_then(|w| w.reason.as_deref())
                .is_none_or(|r| matches!(r, "ContainerCreating" | "PodInitializing"))
        });
        if !creating {
            continue;
        }
        let bound_at = state.moments.bound.at;
        let blockers: Vec<&EventRecord> = pod_events(ctx, pod)
            .into_iter()
            .filter(|e| e.event_type() == "Warning" && NOT_STARTED_REASONS.contains(&e.reason()))
            .filter(|e| match (bound_at, e.last_seen()) {
                (Some(b), Some(seen)) => seen >= b,
                _ => true,
            })
            .collect();
        let Some(latest) = blockers.last() else {
            continue;
        };
        let detail = match bound_at {
            Some(b) => Message::new("not-started.detail").arg("waited", age(b, ctx.now)),
            None => Message::new("not-started.detail_untimed"),
        }
        .arg("reason", latest.reason())
        .arg("message", latest.message());
        let mut f = pod_finding(ctx, FindingId::POD_NOT_STARTED, pod, Step::Started, detail)
            .evidence(
                Evidence::new(
                    pod_label(pod),
                    "spec.nodeName",
                    state.node.clone().unwrap_or_default(),
                )
                .at(bound_at),
            );
        // One line per distinct reason, the newest of each.
        let mut seen = Vec::new();
        for e in blockers.iter().rev() {
            if !seen.contains(&e.reason()) {
                seen.push(e.reason());
                f = f.evidence(event_evidence(pod, e));
            }
        }
        out.push(f);
    }
    out
}

fn node_ready_condition<'a>(
    ctx: &Ctx<'a>,
    node_name: &str,
) -> Option<(
    &'a k8s_openapi::api::core::v1::Node,
    &'a k8s_openapi::api::core::v1::NodeCondition,
)> {
    let node = ctx
        .snapshot
        .objects
        .nodes
        .iter()
        .find(|n| n.metadata.name.as_deref() == Some(node_name))?;
    let ready = node
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")?;
    Some((node, ready))
}

fn node_not_ready_for(ctx: &Ctx, state: &PodState) -> bool {
    state
        .node
        .as_deref()
        .and_then(|n| node_ready_condition(ctx, n))
        .is_some_and(|(_, ready)| ready.status != "True")
}

/// The node controller's `NodeNotReady` event on a Pod that is not Ready,
/// newer than its containers' start: current evidence of a lost node even
/// when Nodes cannot be read.
fn node_not_ready_event<'a>(ctx: &Ctx<'a>, pod: &Pod, state: &PodState) -> Option<&'a EventRecord> {
    if state.moments.ready.reached {
        return None;
    }
    let started = state.moments.started.at;
    pod_events(ctx, pod).into_iter().rev().find(|e| {
        e.reason() == "NodeNotReady"
            && match (started, e.last_seen()) {
                (Some(s), Some(seen)) => seen >= s,
                _ => true,
            }
    })
}

pub fn node_not_ready(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        let Some(node_name) = &state.node else {
            continue;
        };
        let Some((node, ready)) = node_ready_condition(ctx, node_name) else {
            // The Node is not in the snapshot (view cannot list Nodes): the
            // node controller's event on the Pod still says it.
            if let Some(e) = node_not_ready_event(ctx, p.pod, state) {
                out.push(
                    pod_finding(
                        ctx,
                        FindingId::NODE_NOT_READY,
                        p.pod,
                        Step::Ready,
                        Message::new("node.event")
                            .arg("node", node_name)
                            .arg("reason", e.reason())
                            .arg("message", e.message()),
                    )
                    .evidence(event_evidence(p.pod, e)),
                );
            }
            continue;
        };
        if ready.status == "True" {
            continue;
        }
        let pod = p.pod;
        let mut f = pod_finding(
            ctx,
            FindingId::NODE_NOT_READY,
            pod,
            Step::Ready,
            Message::new("node.condition")
                .arg("node", node_name)
                .arg("status", &ready.status)
                .arg("reason", ready.reason.as_deref().unwrap_or(""))
                .arg("message", ready.message.as_deref().unwrap_or("")),
        )
        .evidence(
            Evidence::new(
                format!("node/{node_name}"),
                "status.conditions[Ready]",
                format!(
                    "{} {}: {}",
                    ready.status,
                    ready.reason.as_deref().unwrap_or(""),
                    ready.message.as_deref().unwrap_or("")
                ),
            )
            .at(ready.last_transition_time.as_ref().map(|t| t.0)),
        );
        for taint in node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .into_iter()
            .flatten()
        {
            if taint.key.starts_with("node.kubernetes.io/") {
                f = f.evidence(
                    Evidence::new(
                        format!("node/{node_name}"),
                        "spec.taints",
                        format!("{}:{}", taint.key, taint.effect),
                    )
                    .at(taint.time_added.as_ref().map(|t| t.0)),
                );
            }
        }
        out.push(f);
    }
    out
}

/// What a resolver says when a name does not resolve or DNS is unreachable.
const DNS_ERRORS: &[&str] = &[
    "no such host",
    "temporary failure in name resolution",
    "name or service not known",
    "server misbehaving",
    "nxdomain",
    "could not resolve host",
    "getaddrinfo",
    ":53: i/o timeout",
];

fn dns_error_in(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    DNS_ERRORS.iter().any(|e| t.contains(e))
}

/// Advice: DNS cannot be seen from the API, but the cluster's own words
/// (termination messages, events, captured logs) can point at it.
pub fn dns_check(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if state.moments.ready.reached {
            continue;
        }
        let pod = p.pod;
        let mut evidence = Vec::new();
        for s in facts::all_container_statuses(pod) {
            let terminated = [
                s.last_state.as_ref().and_then(|l| l.terminated.as_ref()),
                s.state.as_ref().and_then(|st| st.terminated.as_ref()),
            ];
            for t in terminated.into_iter().flatten() {
                if let Some(m) = t.message.as_deref().filter(|m| dns_error_in(m)) {
                    evidence.push(
                        Evidence::new(
                            pod_label(pod),
                            format!("{}.lastState.terminated.message", container_label(s)),
                            m.trim(),
                        )
                        .at(t.finished_at.as_ref().map(|t| t.0)),
                    );
                }
            }
        }
        for e in pod_events(ctx, pod) {
            if dns_error_in(e.message()) {
                evidence.push(event_evidence(pod, e));
            }
        }
        let name = facts::name(&pod.metadata);
        for log in ctx
            .snapshot
            .logs
            .iter()
            .filter(|l| l.pod == name && l.namespace == ctx.chain.namespace)
        {
            if let Some(line) = log.text.lines().rev().find(|l| dns_error_in(l)) {
                evidence.push(Evidence::labelled(
                    pod_label(pod),
                    crate::analysis::logs::log_field(&log.container, log.previous),
                    line.trim(),
                ));
            }
        }
        let Some(first) = evidence.first() else {
            continue;
        };
        let detail = Message::new("dns.detail").arg("text", &first.value);
        let mut f = pod_finding(
            ctx,
            FindingId::DNS_CHECK,
            pod,
            state.last_step.next(),
            detail,
        );
        f.evidence = evidence;
        out.push(f);
    }
    out
}

/// Pods of the workload the kubelet evicted under node pressure (phase
/// Failed, reason Evicted), in any revision: node pressure, not the
/// application. The ReplicaSet replaced them; several say the requests are
/// below real use.
pub fn pod_evicted(ctx: &Ctx) -> Vec<Finding> {
    let evicted: Vec<&Pod> = ctx
        .chain
        .pods
        .iter()
        .map(|p| p.pod)
        .filter(|pod| {
            pod.status.as_ref().is_some_and(|s| {
                s.phase.as_deref() == Some("Failed") && s.reason.as_deref() == Some("Evicted")
            })
        })
        .collect();
    let many = evicted.len();
    evicted
        .into_iter()
        .map(|pod| {
            let status = pod.status.as_ref();
            let message = status
                .and_then(|s| s.message.as_deref())
                .unwrap_or("")
                .trim();
            let node = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .unwrap_or("?");
            let repeated = if many > 1 {
                Message::new("evicted.repeated").arg("count", many).into()
            } else {
                Arg::from("")
            };
            let mut f = pod_finding(
                ctx,
                FindingId::POD_EVICTED,
                pod,
                Step::Started,
                Message::new("evicted.detail")
                    .arg("node", node)
                    .arg("message", message)
                    .arg("repeated", repeated),
            )
            .evidence(Evidence::new(
                pod_label(pod),
                "status.phase / reason / message",
                format!("Failed / Evicted / {message}"),
            ));
            if let Some(e) = pod_events(ctx, pod)
                .into_iter()
                .rfind(|e| e.reason() == "Evicted")
            {
                f = f.evidence(event_evidence(pod, e));
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::classify_pull_error;
    use crate::catalogue::FindingId;

    #[test]
    fn registry_words_sort_into_the_four_pull_failures() {
        let cases = [
            (
                "pull access denied, repository does not exist or may require authorization",
                FindingId::IMAGE_PULL_DENIED,
            ),
            (
                "unexpected status: 401 Unauthorized",
                FindingId::IMAGE_PULL_DENIED,
            ),
            ("403 Forbidden", FindingId::IMAGE_PULL_DENIED),
            (
                "rpc error: code = NotFound desc = failed to resolve reference: not found",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "manifest unknown: manifest unknown",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "no matching manifest for linux/arm64 in the manifest list entries",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "dial tcp 203.0.113.10:443: i/o timeout",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "net/http: TLS handshake timeout",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "dial tcp: lookup registry.example.com: no such host",
                FindingId::IMAGE_PULL_FAILED,
            ),
            (
                "x509: certificate signed by unknown authority",
                FindingId::IMAGE_PULL_FAILED,
            ),
        ];
        for (text, id) in cases {
            assert_eq!(classify_pull_error(text), id, "{text}");
        }
    }
}
