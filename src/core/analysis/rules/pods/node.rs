//! Pod rules about the node under them: a node that is not Ready, and
//! Pods the kubelet evicted under node pressure.

use k8s_openapi::api::core::v1::Pod;

use super::{Ctx, event_evidence, pod_events, pod_finding, pod_label};
use crate::analysis::{Evidence, Finding, PodState, Step};
use crate::catalogue::{Arg, FindingId, Message};
use crate::model::EventRecord;

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

pub(super) fn node_not_ready_for(ctx: &Ctx, state: &PodState) -> bool {
    state
        .node
        .as_deref()
        .and_then(|n| node_ready_condition(ctx, n))
        .is_some_and(|(_, ready)| ready.status != "True")
}

/// The node controller's `NodeNotReady` event on a Pod that is not Ready,
/// newer than its containers' start: current evidence of a lost node even
/// when Nodes cannot be read.
pub(super) fn node_not_ready_event<'a>(
    ctx: &Ctx<'a>,
    pod: &Pod,
    state: &PodState,
) -> Option<&'a EventRecord> {
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
