//! Pod rules for containers that run but are not Ready: the readiness probe.

use super::node::{node_not_ready_event, node_not_ready_for};
use super::{Ctx, event_evidence, pod_events, pod_finding, pod_label};
use crate::analysis::facts::{self, pod_condition};
use crate::analysis::{Evidence, Finding, PodState, Step};
use crate::catalogue::{FindingId, Message};
use crate::chain::ChainPod;
use crate::model::{EventRecord, int_or_string};

/// Seconds after a container starts before a missing Ready is a symptom.
const READINESS_GRACE_SECONDS: f64 = 30.0;

pub fn readiness_failing(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if !state.moments.started.reached || state.moments.ready.reached {
            continue;
        }
        // A run to completion is not asked to be Ready: it is asked to end.
        if crate::analysis::completion::runs_to_completion(p.pod)
            || crate::analysis::completion::ended(p.pod)
        {
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
pub(in crate::analysis::rules) fn readiness_initial_delay(
    pod: &k8s_openapi::api::core::v1::Pod,
) -> f64 {
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
    // Unknown when no start time is recorded: not long, unknown.
    let running_for = started.map(|s| facts::seconds_between(s, ctx.now));
    // No readiness probe runs before its initialDelaySeconds: a Pod inside
    // it is starting, not failing (a model server often sets minutes).
    // A recorded failure of this run is evidence all the same (the node's
    // clock and ours differ), so the grace holds only without one.
    let delay = readiness_initial_delay(pod);
    if unhealthy.is_empty() && running_for.is_none_or(|r| r < delay.max(READINESS_GRACE_SECONDS)) {
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
