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

/// Resources the core scheduler counts itself; any other a container
/// requests (`nvidia.com/gpu`, `amd.com/gpu`, `example.com/foo`) is an
/// extended resource a device plugin or the node's owner advertises.
fn extended(resource: &str) -> bool {
    !matches!(resource, "cpu" | "memory" | "ephemeral-storage" | "pods")
        && !resource.starts_with("hugepages-")
        && !resource.starts_with("requests.")
}

/// Each extended resource the Pod's containers ask for: (container,
/// resource, quantity), from requests, else from limits (which set the
/// request of an extended resource).
fn extended_requests(pod: &k8s_openapi::api::core::v1::Pod) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let containers = pod.spec.iter().flat_map(|s| {
        s.init_containers
            .iter()
            .flatten()
            .chain(s.containers.iter())
    });
    for c in containers {
        let Some(r) = &c.resources else { continue };
        for map in [&r.requests, &r.limits].into_iter().flatten() {
            for (name, q) in map {
                if extended(name)
                    && !out
                        .iter()
                        .any(|(c2, n, _): &(String, String, String)| *c2 == c.name && n == name)
                {
                    out.push((c.name.clone(), name.clone(), q.0.clone()));
                }
            }
        }
    }
    out
}

/// SPEC section 4, `resource-claim-pending`: a Pod the scheduler cannot
/// place because it asks for an extended resource no node offers (not one
/// that is only full: that is capacity, `pod-unschedulable`), or for a
/// dynamic resource claim that cannot be allocated. Beside
/// `pod-unschedulable`, which it outranks.
pub fn resource_claim_pending(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if state.moments.bound.reached {
            continue;
        }
        let pod = p.pod;
        let failed = pod_events(ctx, pod)
            .into_iter()
            .rfind(|e| e.reason() == "FailedScheduling");
        let condition = pod_condition(pod, "PodScheduled").filter(|c| c.status == "False");
        let message = failed
            .map(|e| e.message().to_string())
            .or_else(|| condition.and_then(|c| c.message.clone()))
            .unwrap_or_default();
        if message.is_empty() {
            continue;
        }
        let short: Vec<(String, String, String)> = extended_requests(pod)
            .into_iter()
            .filter(|(_, r, _)| message.contains(&format!("Insufficient {r}")))
            .collect();
        let f = if !short.is_empty() {
            // Whether some node offers it is known only from the Nodes.
            if ctx.hidden("nodes") {
                continue;
            }
            let nodes = &ctx.snapshot.objects.nodes;
            let offering = |resource: &str| {
                nodes
                    .iter()
                    .filter(|n| {
                        n.status
                            .as_ref()
                            .and_then(|s| s.allocatable.as_ref())
                            .and_then(|a| a.get(resource))
                            .is_some_and(|q| !matches!(q.0.trim(), "" | "0"))
                    })
                    .count()
            };
            let missing: Vec<&(String, String, String)> =
                short.iter().filter(|(_, r, _)| offering(r) == 0).collect();
            let Some((container, resource, quantity)) = missing.first() else {
                continue;
            };
            let mut f = pod_finding(
                ctx,
                FindingId::RESOURCE_CLAIM_PENDING,
                pod,
                Step::Bound,
                Message::new("resource-claim.extended")
                    .arg("container", container.as_str())
                    .arg("resource", resource.as_str())
                    .arg("quantity", quantity.as_str())
                    .arg("nodes", nodes.len()),
            )
            .var("container", container.clone());
            for (container, resource, quantity) in &missing {
                f = f.evidence(Evidence::new(
                    pod_label(pod),
                    format!("spec.containers[{container}].resources[{resource}]"),
                    quantity.clone(),
                ));
                f = f.evidence(Evidence::said(
                    "nodes",
                    format!("status.allocatable[{resource}]"),
                    Message::new("resource-claim.offered")
                        .arg("resource", resource.as_str())
                        .arg("nodes", nodes.len()),
                ));
            }
            f
        } else {
            let claims: Vec<String> = pod
                .spec
                .iter()
                .flat_map(|s| s.resource_claims.iter().flatten())
                .map(|c| {
                    c.resource_claim_name
                        .clone()
                        .or_else(|| {
                            c.resource_claim_template_name
                                .as_ref()
                                .map(|t| format!("{} (from template {t})", c.name))
                        })
                        .unwrap_or_else(|| c.name.clone())
                })
                .collect();
            if claims.is_empty() || !message.to_ascii_lowercase().contains("claim") {
                continue;
            }
            pod_finding(
                ctx,
                FindingId::RESOURCE_CLAIM_PENDING,
                pod,
                Step::Bound,
                Message::new("resource-claim.dra")
                    .arg(
                        "claims",
                        crate::catalogue::Arg::list(claims.iter().map(String::as_str), "sep.comma"),
                    )
                    .arg("message", message.as_str()),
            )
            .evidence(Evidence::new(
                pod_label(pod),
                "spec.resourceClaims",
                claims.join(", "),
            ))
        };
        let f = match failed {
            Some(e) => f.evidence(event_evidence(pod, e)),
            None => f,
        };
        out.push(f);
    }
    out
}
