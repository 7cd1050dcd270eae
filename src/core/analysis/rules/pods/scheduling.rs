//! Pod rules before a node: unschedulable, and a scheduler that says nothing.

use super::{Ctx, event_evidence, or_none, pod_events, pod_finding, pod_label, quote};
use crate::analysis::facts::{self, age, lease_state, pod_condition};
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{FindingId, Message};

/// Seconds a Pod may wait for the scheduler before silence means something.
const SCHEDULER_GRACE_SECONDS: f64 = 30.0;

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
