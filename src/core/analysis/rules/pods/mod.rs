//! Rules about the Pods of the current revision: scheduling, containers,
//! images, probes.
//!
//! One file per stage of a Pod's life: `scheduling.rs`, `starting.rs`
//! (volumes, sandbox, images), `init.rs` (an init container that fails or
//! stalls), `crashes.rs`, `probes.rs` (a probe that
//! kills a container still starting), `readiness.rs`, `node.rs`
//! (a lost node, evictions) and `dns.rs`; the helpers they share are here.

mod crashes;
mod dns;
mod failed;
mod init;
mod node;
mod probes;
mod readiness;
mod scheduling;
mod starting;

pub(super) use crashes::{container_failures, oom_killed};
pub(super) use dns::dns_check;
pub(crate) use failed::failed_run;
pub(super) use failed::pod_failed;
pub(super) use init::init_container_failing;
pub(super) use node::{node_not_ready, pod_evicted};
pub(super) use probes::probe_kills_startup;
pub(super) use readiness::{readiness_failing, readiness_initial_delay};
pub(super) use scheduling::{resource_claim_pending, scheduler_silent, unschedulable};
pub(super) use starting::{image_pull, pod_not_started};

use crate::catalogue::{Arg, FindingId, Message};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::Ctx;
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::model::{EventRecord, ObjectRef};

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

/// A container's memory limit as written in the Pod's spec, if any.
fn memory_limit(pod: &Pod, container: &str) -> Option<String> {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.containers.iter().find(|c| c.name == container))
        .and_then(|c| c.resources.as_ref())
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get("memory"))
        .map(|q| q.0.clone())
}

fn container_label(s: &ContainerStatus) -> String {
    format!("status.containerStatuses[{}]", s.name)
}
