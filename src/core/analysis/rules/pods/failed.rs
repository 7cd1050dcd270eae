//! A run-to-completion Pod that failed (`pod-failed`): phase Failed under
//! restartPolicy Never or OnFailure, with the container's exit code and
//! reason as the kubelet wrote them. An evicted Pod is `pod-evicted`'s, and
//! an OOM kill of such a Pod is said here (one lead, not `oom-killed` too).

use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};

use super::{Ctx, container_label, or_none, paren, pod_finding, pod_label};
use crate::analysis::completion::runs_to_completion;
use crate::analysis::{Evidence, Finding, Step, facts};
use crate::catalogue::{FindingId, Message};

/// Whether `pod-failed` speaks for this Pod: it ended in phase Failed,
/// runs to completion, and was not evicted.
pub(crate) fn failed_run(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    status.and_then(|s| s.phase.as_deref()) == Some("Failed")
        && status.and_then(|s| s.reason.as_deref()) != Some("Evicted")
        && runs_to_completion(pod)
}

/// The container whose exit failed the run: the first (init containers
/// first) terminated with a non-zero code now, else in its last state.
fn failed_exit(pod: &Pod) -> Option<(&ContainerStatus, &ContainerStateTerminated, bool)> {
    let failed = |t: &&ContainerStateTerminated| t.exit_code != 0;
    facts::all_container_statuses(pod)
        .find_map(|s| {
            let t = s.state.as_ref()?.terminated.as_ref().filter(failed)?;
            Some((s, t, false))
        })
        .or_else(|| {
            facts::all_container_statuses(pod).find_map(|s| {
                let t = s.last_state.as_ref()?.terminated.as_ref().filter(failed)?;
                Some((s, t, true))
            })
        })
}

pub fn pod_failed(ctx: &Ctx) -> Vec<Finding> {
    // A Job's earlier attempts count until the Job completes: then they
    // are history.
    let job_done = ctx
        .chain
        .job
        .as_ref()
        .and_then(|r| r.job)
        .is_some_and(crate::analysis::jobs::complete);
    ctx.chain
        .pods
        .iter()
        .zip(ctx.pods)
        .filter(|(_, s)| !s.terminating && (s.current || !job_done))
        .map(|(p, _)| p.pod)
        .filter(|pod| failed_run(pod))
        .map(|pod| finding(ctx, pod))
        .collect()
}

fn finding(ctx: &Ctx, pod: &Pod) -> Finding {
    let status = pod.status.as_ref();
    let pod_reason = status.and_then(|s| s.reason.as_deref()).unwrap_or("");
    let pod_message = status
        .and_then(|s| s.message.as_deref())
        .unwrap_or("")
        .trim();
    let policy = pod
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("");
    let exit = failed_exit(pod);
    let restarts = exit.map_or(0, |(s, _, _)| s.restart_count);
    let how = match exit {
        Some((s, t, _)) => Message::new("failed.exit")
            .arg("container", &s.name)
            .arg("code", t.exit_code)
            .arg("reason", paren(t.reason.as_deref().unwrap_or(""))),
        // Failed with no container exit: the Pod's own reason (a deadline).
        None => Message::new("failed.no_exit").arg(
            "reason",
            or_none(Some(pod_reason).filter(|r| !r.is_empty())),
        ),
    };
    let detail = Message::new("failed.detail")
        .arg("how", how)
        .arg("policy", policy)
        .arg("restarts", restarts);
    let mut f = pod_finding(ctx, FindingId::POD_FAILED, pod, Step::Completed, detail)
        .var("restarted", (restarts > 0).to_string())
        .var("policy", policy.to_string())
        .evidence(Evidence::new(
            pod_label(pod),
            "status.phase / reason",
            if pod_reason.is_empty() {
                "Failed".to_string()
            } else {
                format!("Failed / {pod_reason}")
            },
        ))
        .evidence(Evidence::new(
            pod_label(pod),
            "spec.restartPolicy",
            policy.to_string(),
        ));
    if !pod_message.is_empty() {
        f = f.evidence(Evidence::new(pod_label(pod), "status.message", pod_message));
    }
    if let Some((s, t, last)) = exit {
        let reason = t.reason.as_deref().unwrap_or("");
        f = f.var("container", s.name.clone()).evidence(
            Evidence::new(
                pod_label(pod),
                format!(
                    "{}.{}.terminated",
                    container_label(s),
                    if last { "lastState" } else { "state" }
                ),
                if reason.is_empty() {
                    format!("exitCode {}", t.exit_code)
                } else {
                    format!("reason {reason} exitCode {}", t.exit_code)
                },
            )
            .at(t.finished_at.as_ref().map(|t| t.0)),
        );
        // Quoted as said: OOMKilled only when the reason says so.
        if reason == "OOMKilled" {
            let limit = super::memory_limit(pod, &s.name);
            f = f.evidence(Evidence::new(
                pod_label(pod),
                format!("spec.containers[{}].resources.limits.memory", s.name),
                limit.unwrap_or_else(|| "none".into()),
            ));
        }
    }
    f
}
