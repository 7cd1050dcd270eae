//! Pod rules for containers that start and fail: crash loops (caught in
//! any of their shapes), configuration errors, commands that cannot run,
//! OOM kills.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::{
    Ctx, container_label, event_evidence, or_none, paren, pod_events, pod_finding, pod_label,
};
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{Arg, FindingId, Message};
use crate::chain::ChainPod;

/// Failing containers that are not OOM kills or image pulls: crash loops,
/// configuration errors, commands that cannot run.
pub fn container_failures(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::all_container_statuses(pod) {
            // Killed by its own probe while starting: probe-kills-startup
            // says why, and the restart loop is its consequence.
            if super::probes::probe_kill(ctx, pod, s).is_some() {
                continue;
            }
            if let Some(f) = container_failure(ctx, p, s)
                .or_else(|| running_between_crashes(ctx, p, s))
                .or_else(|| terminated_before_restart(ctx, p, s))
            {
                // An init container's loop keeps the Pod from starting:
                // init-container-failing says so, with what it runs.
                if f.id == FindingId::CRASH_LOOP && super::init::ordinary_init(pod, &s.name) {
                    continue;
                }
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
pub(super) fn terminated_value(code: i32, reason: &str, message: Option<&str>) -> Message {
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
        // A failed run's OOM kill is said by pod-failed: one lead.
        if super::failed_run(pod) {
            continue;
        }
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
            let limit = super::memory_limit(pod, &s.name);
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
