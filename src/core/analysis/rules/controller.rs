//! Rules about the controllers above the Pods: the ModelService controller
//! and the Deployment controller.

use super::Ctx;
use super::pods::{or_none, quote};
use crate::analysis::facts::{self, age, deployment_condition, lease_state, seconds_between};
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{Arg, FindingId, Message};
use crate::chain::CONTROLLER_NAME;
use crate::model::ObjectRef;

/// Seconds a controller may take to observe a change before it counts as stuck.
const OBSERVE_GRACE_SECONDS: f64 = 30.0;

pub fn controller_not_converging(ctx: &Ctx) -> Vec<Finding> {
    let Some(msvc) = ctx.chain.model_service() else {
        return Vec::new();
    };
    let meta = &msvc.metadata;
    let generation = meta.generation.unwrap_or(0);
    let observed = crate::chain::observed_generation(msvc);
    if crate::chain::generation_observed(meta.generation, observed) {
        return Vec::new();
    }
    let controller = ctx.chain.controller.as_ref();
    let controller_name = controller.map_or(CONTROLLER_NAME, |c| c.location.name.as_str());
    let declared = facts::declaration_time(meta, controller_name).or(facts::created(meta));
    // An object without a time has an unknown age, never an old one.
    let waited = declared.map(|d| seconds_between(d, ctx.now));
    let lease = controller
        .and_then(|c| c.lease)
        .map(|l| lease_state(l, ctx.now));
    let lease_stale = lease.as_ref().is_some_and(|l| l.stale);
    if waited.is_none_or(|w| w < OBSERVE_GRACE_SECONDS) && !lease_stale {
        return Vec::new();
    }
    let msvc_label = format!("modelservice/{}", facts::name(meta));
    let mut detail = Message::new("controller.detail")
        .arg("generation", generation)
        .arg(
            "observed",
            or_none(observed.map(|o| o.to_string()).as_deref()),
        )
        .arg("waited", waited_arg(declared, ctx.now))
        .arg("stale", "");
    let mut f = Finding::new(
        FindingId::CONTROLLER_NOT_CONVERGING,
        ObjectRef::new("ModelService", meta),
        Step::Observed,
        Message::new("quote"),
    )
    .evidence(generation_evidence(msvc_label.clone(), generation, observed).at(declared));
    if let Some(c) = controller {
        let lease_label = format!("lease/{}", c.location.name);
        match &lease {
            Some(l) => {
                let text = match l.renewed {
                    Some(t) => Message::new("controller.lease").arg("ago", age(t, ctx.now)),
                    None => Message::new("controller.lease_never"),
                }
                .arg("holder", or_none(l.holder.as_deref()))
                .arg("duration", l.duration_seconds)
                .arg(
                    "stale",
                    if l.stale {
                        Message::new("controller.lease_stale_suffix").into()
                    } else {
                        Arg::from("")
                    },
                );
                if l.stale {
                    detail = detail.arg("stale", Message::new("controller.lease_stale"));
                }
                f = f.evidence(Evidence::said(lease_label, "spec.renewTime", text).at(l.renewed));
            }
            None if !ctx.hidden_in("leases", &c.location.namespace) => {
                f = f.evidence(Evidence::said(
                    lease_label,
                    "lease",
                    Message::new("controller.no_lease")
                        .arg("namespace", &c.location.namespace)
                        .arg("name", &c.location.name),
                ));
            }
            None => {}
        }
        if let Some(d) = c.deployment {
            let ready = d
                .status
                .as_ref()
                .and_then(|s| s.ready_replicas)
                .unwrap_or(0);
            let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            f = f.evidence(Evidence::said(
                format!("deployment/{}", c.location.name),
                "status.readyReplicas",
                Message::new("count.of").arg("n", ready).arg("of", want),
            ));
            // Forbidden or conflict in its events point at RBAC or ownership.
            for e in ctx.events.about("Deployment", &d.metadata) {
                let m = e.message().to_ascii_lowercase();
                if m.contains("forbidden") || m.contains("conflict") {
                    f = f.evidence(
                        Evidence::new(
                            format!("deployment/{}", c.location.name),
                            format!("event {}", e.reason()),
                            e.message(),
                        )
                        .at(e.last_seen()),
                    );
                }
            }
        }
    }
    for e in ctx.events.about("ModelService", meta) {
        let m = e.message().to_ascii_lowercase();
        if e.event_type() == "Warning" || m.contains("forbidden") || m.contains("conflict") {
            f = f.evidence(
                Evidence::new(
                    msvc_label.clone(),
                    format!("event {}", e.reason()),
                    e.message(),
                )
                .at(e.last_seen()),
            );
        }
    }
    f.detail = detail;
    f.vars = ctx.base_vars();
    vec![f]
}

/// How long ago, or `long` without a time.
fn waited_arg(since: Option<jiff::Timestamp>, now: jiff::Timestamp) -> Arg {
    match since {
        Some(t) => Arg::from(age(t, now)),
        None => Message::new("word.long").into(),
    }
}

/// `generation / observedGeneration`, `unset` for a missing one.
fn generation_evidence(object: String, generation: i64, observed: Option<i64>) -> Evidence {
    let observed = match observed {
        Some(o) => Arg::from(o),
        None => Message::new("word.unset").into(),
    };
    Evidence::said(
        object,
        "metadata.generation / status.observedGeneration",
        Message::new("generation.pair")
            .arg("generation", generation)
            .arg("observed", observed),
    )
}

pub fn deployment_missing(ctx: &Ctx) -> Vec<Finding> {
    let Some(msvc) = ctx.chain.model_service() else {
        return Vec::new();
    };
    if ctx.chain.deployment.is_some() || ctx.hidden("deployments") {
        return Vec::new();
    }
    let meta = &msvc.metadata;
    let generation = meta.generation.unwrap_or(0);
    let observed = crate::chain::observed_generation(msvc);
    let created = facts::created(meta);
    // An object without a time has an unknown age, never an old one.
    let waited = created.map(|c| seconds_between(c, ctx.now));
    // Before the controller observed it, the missing Deployment is the
    // controller's problem (controller-not-converging says so).
    if !crate::chain::generation_observed(meta.generation, observed)
        || waited.is_none_or(|w| w < OBSERVE_GRACE_SECONDS)
    {
        return Vec::new();
    }
    let mut f = Finding::new(
        FindingId::DEPLOYMENT_MISSING,
        ObjectRef::new("ModelService", meta),
        Step::Deployment,
        Message::new("deployment-missing.detail")
            .arg("name", facts::name(meta))
            .arg("generation", generation),
    )
    .evidence(Evidence::said(
        format!("namespace/{}", ctx.chain.namespace),
        "deployments",
        Message::new("deployment-missing.none").arg("uid", facts::uid(meta)),
    ));
    f.vars = ctx.base_vars();
    vec![f]
}

pub fn deployment_not_observed(ctx: &Ctx) -> Vec<Finding> {
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    let generation = d.metadata.generation.unwrap_or(0);
    let observed = d.status.as_ref().and_then(|s| s.observed_generation);
    if crate::chain::generation_observed(d.metadata.generation, observed) {
        return Vec::new();
    }
    let written = facts::spec_write_time(&d.metadata, None).or(facts::created(&d.metadata));
    // An object without a time has an unknown age, never an old one.
    let waited = written.map(|w| seconds_between(w, ctx.now));
    // A Rollout is observed by Argo's controller, not the
    // kube-controller-manager, whose Lease says nothing of it.
    let rollout = ctx.chain.workload_platform().is_some();
    let kcm = facts::find_lease(ctx.snapshot, "kube-system", "kube-controller-manager")
        .filter(|_| !rollout)
        .map(|l| lease_state(l, ctx.now));
    let kcm_stale = kcm.as_ref().is_some_and(|l| l.stale);
    if waited.is_none_or(|w| w < OBSERVE_GRACE_SECONDS) && !kcm_stale {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let mut detail = Message::new(if rollout {
        "deployment-not-observed.rollout_detail"
    } else {
        "deployment-not-observed.detail"
    })
    .arg("name", name)
    .arg("generation", generation)
    .arg(
        "observed",
        or_none(observed.map(|o| o.to_string()).as_deref()),
    )
    .arg("waited", waited_arg(written, ctx.now))
    .arg("stale", "");
    let mut f = Finding::new(
        FindingId::DEPLOYMENT_NOT_OBSERVED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Deployment,
        Message::new("quote"),
    )
    .evidence(
        generation_evidence(ctx.chain.deployment_ref(name), generation, observed).at(written),
    );
    if let Some(l) = &kcm {
        if l.stale {
            detail = detail.arg("stale", Message::new("deployment-not-observed.lease_stale"));
        }
        f = f.evidence(
            Evidence::said(
                "lease/kube-controller-manager",
                "spec.renewTime",
                match l.renewed {
                    Some(t) => {
                        Message::new("deployment-not-observed.lease").arg("ago", age(t, ctx.now))
                    }
                    None => Message::new("deployment-not-observed.lease_never"),
                }
                .arg("holder", or_none(l.holder.as_deref()))
                .arg(
                    "stale",
                    if l.stale {
                        Message::new("word.stale_suffix").into()
                    } else {
                        Arg::from("")
                    },
                ),
            )
            .at(l.renewed),
        );
    }
    f.detail = detail;
    f.vars = ctx.base_vars();
    vec![f]
}

pub fn progress_deadline_exceeded(ctx: &Ctx) -> Vec<Finding> {
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    let Some(c) = deployment_condition(d, "Progressing") else {
        return Vec::new();
    };
    if c.status != "False" || c.reason.as_deref() != Some("ProgressDeadlineExceeded") {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let status = d.status.as_ref();
    let desired = ctx.chain.desired_replicas();
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let total = status.and_then(|s| s.replicas).unwrap_or(0);
    let mut f = Finding::new(
        FindingId::PROGRESS_DEADLINE_EXCEEDED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Serving,
        quote(c.message.clone().unwrap_or_default()),
    )
    .evidence(
        Evidence::new(
            ctx.chain.deployment_ref(name),
            "status.conditions[Progressing]",
            format!(
                "False ProgressDeadlineExceeded: {}",
                c.message.as_deref().unwrap_or("")
            ),
        )
        .at(c
            .last_update_time
            .as_ref()
            .or(c.last_transition_time.as_ref())
            .map(|t| t.0)),
    )
    .evidence(replica_counts(
        ctx.chain.deployment_ref(name),
        updated,
        available,
        total,
        desired,
    ));
    // Counts win over a stale summary condition; say that they disagree.
    if updated >= desired && available >= desired && total == desired {
        f.severity = crate::catalogue::Severity::Info;
        f.detail = Message::new("progress-deadline.stale")
            .arg("updated", updated)
            .arg("available", available)
            .arg("desired", desired);
    }
    f.vars = ctx.base_vars();
    vec![f]
}

/// A Deployment's updated, available and total replicas against desired.
fn replica_counts(
    object: String,
    updated: i32,
    available: i32,
    total: i32,
    desired: i32,
) -> Evidence {
    Evidence::said(
        object,
        "status.updatedReplicas / availableReplicas / replicas",
        Message::new("progress-deadline.counts")
            .arg("updated", updated)
            .arg("available", available)
            .arg("total", total)
            .arg("desired", desired),
    )
}

/// `spec.paused`: the Deployment controller scales but does not roll out
/// a new template until it is resumed, and does not check the progress
/// deadline meanwhile. A warning while the current template is not on
/// every desired replica (nothing moves until then), info once it is.
pub fn rollout_paused(ctx: &Ctx) -> Vec<Finding> {
    if let Some(p) = ctx.chain.workload_platform() {
        return super::platform::argo_rollout_paused(ctx, p.object);
    }
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    if d.spec.as_ref().and_then(|s| s.paused) != Some(true) {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let status = d.status.as_ref();
    let desired = ctx.chain.desired_replicas();
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let observed = crate::chain::generation_observed(
        d.metadata.generation,
        status.and_then(|s| s.observed_generation),
    );
    let rolled_out = observed && updated >= desired && available >= desired;
    let mut f = Finding::new(
        FindingId::ROLLOUT_PAUSED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Deployment,
        Message::new(if rolled_out {
            "rollout-paused.complete"
        } else {
            "rollout-paused.detail"
        })
        .arg("name", name)
        .arg("updated", updated)
        .arg("desired", desired),
    )
    .evidence(Evidence::new(
        ctx.chain.deployment_ref(name),
        "spec.paused",
        "true",
    ))
    .evidence(replica_counts(
        ctx.chain.deployment_ref(name),
        updated,
        available,
        status.and_then(|s| s.replicas).unwrap_or(0),
        desired,
    ));
    if rolled_out {
        f.severity = crate::catalogue::Severity::Info;
    }
    f.vars = ctx.base_vars();
    vec![f]
}

/// The resource a FailedScheduling message says is short: `Insufficient
/// nvidia.com/gpu.` gives `nvidia.com/gpu`.
fn insufficient_resource(message: &str) -> Option<String> {
    let rest = message.split("Insufficient ").nth(1)?;
    let name = rest
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()?
        .trim_end_matches('.');
    (!name.is_empty()).then(|| name.to_string())
}

/// Whether any container of the Pod requests (or limits, which sets the
/// request) `resource`.
fn requests_resource(pod: &k8s_openapi::api::core::v1::Pod, resource: &str) -> bool {
    pod.spec.iter().flat_map(|s| &s.containers).any(|c| {
        c.resources.as_ref().is_some_and(|r| {
            [&r.requests, &r.limits]
                .into_iter()
                .flatten()
                .any(|m| m.contains_key(resource))
        })
    })
}

pub fn rollout_surge_blocked(ctx: &Ctx) -> Vec<Finding> {
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    let old_running = ctx
        .pods
        .iter()
        .filter(|p| !p.current && !p.terminating && p.moments.ready.reached)
        .count();
    if old_running == 0 {
        return Vec::new();
    }
    // A new Pod that no node can take, for lack of a resource.
    let blocked = ctx.current_pods().find_map(|(p, state)| {
        if state.moments.bound.reached {
            return None;
        }
        let message = ctx
            .events
            .about("Pod", &p.pod.metadata)
            .into_iter()
            .rev()
            .find(|e| e.reason() == "FailedScheduling")
            .map(|e| e.message().to_string())
            .or_else(|| {
                facts::pod_condition(p.pod, "PodScheduled").and_then(|c| c.message.clone())
            })?;
        message.contains("Insufficient").then_some((p, message))
    });
    let Some((p, message)) = blocked else {
        return Vec::new();
    };
    let desired = ctx.chain.desired_replicas();
    let Some(facts::RollingLimits { surge, unavailable }) = facts::rolling_limits(d, desired)
    else {
        return Vec::new();
    };
    if surge <= 0 {
        return Vec::new();
    }
    let Some(resource) = insufficient_resource(&message) else {
        return Vec::new();
    };
    // Old Pods block the surge only if they hold what the new one lacks:
    // when none of them asks for it, removing them would not help.
    let Some(holder) = ctx
        .chain
        .pods
        .iter()
        .filter(|c| !c.current && !c.terminating())
        .find(|c| requests_resource(c.pod, &resource))
    else {
        return Vec::new();
    };
    let name = facts::name(&d.metadata);
    let mut f = Finding::new(
        FindingId::ROLLOUT_SURGE_BLOCKED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Bound,
        Message::new("surge.detail")
            .arg("pod", facts::name(&p.pod.metadata))
            .arg("resource", resource.as_str())
            .arg("old", old_running)
            .arg("surge", surge)
            .arg("unavailable", unavailable),
    )
    .evidence(Evidence::said(
        ctx.chain.deployment_ref(name),
        "spec.strategy.rollingUpdate",
        Message::new("surge.limits")
            .arg("surge", surge)
            .arg("unavailable", unavailable)
            .arg("desired", desired),
    ))
    .evidence(Evidence::new(
        format!("pod/{}", facts::name(&p.pod.metadata)),
        "event FailedScheduling",
        message,
    ))
    .evidence(
        Evidence::said(
            ctx.chain.deployment_ref(name),
            "",
            Message::new("surge.old_ready").arg("n", old_running),
        )
        .field_words(Message::new("surge.old_field")),
    );
    f.vars = ctx.base_vars();
    f.vars
        .insert("pod".into(), facts::name(&p.pod.metadata).to_string());
    // The blocked Pod has no node: `describe node` is about the node an
    // old Pod holding the resource runs on.
    if let Some(node) = holder.pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
        f.vars.insert("node".into(), node);
    }
    vec![f]
}

/// Managers that legitimately write a controller-managed Deployment.
fn expected_manager(manager: &str, controller: &str) -> bool {
    manager == controller || manager == "kube-controller-manager"
}

fn owns_spec(entry: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry) -> bool {
    facts::written_paths(entry)
        .iter()
        .any(|path| facts::top_field(path) == "spec")
}

pub fn managed_deployment_edited(ctx: &Ctx) -> Vec<Finding> {
    let (Some(_), Some(d)) = (ctx.chain.model_service(), ctx.chain.deployment) else {
        return Vec::new();
    };
    let controller = ctx
        .chain
        .controller
        .as_ref()
        .map_or(CONTROLLER_NAME, |c| c.location.name.as_str());
    let editors: Vec<_> = d
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| m.subresource.as_deref().unwrap_or("") != "status")
        .filter(|m| !expected_manager(m.manager.as_deref().unwrap_or(""), controller))
        .filter(|m| owns_spec(m))
        .collect();
    if editors.is_empty() {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let who: Vec<Message> = editors
        .iter()
        .map(|m| {
            Message::new("edited.who")
                .arg("manager", m.manager.as_deref().unwrap_or("?"))
                .arg("operation", m.operation.as_deref().unwrap_or("?"))
        })
        .collect();
    let mut f = Finding::new(
        FindingId::MANAGED_DEPLOYMENT_EDITED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Deployment,
        Message::new("edited.detail")
            .arg("name", name)
            .arg("controller", controller)
            .arg("who", Arg::list(who, "sep.comma")),
    );
    for m in editors {
        let fields = facts::written_paths(m).join(", ");
        f = f.evidence(
            Evidence::new(
                ctx.chain.deployment_ref(name),
                format!(
                    "metadata.managedFields[{}]",
                    m.manager.as_deref().unwrap_or("?")
                ),
                fields,
            )
            .at(m.time.as_ref().map(|t| t.0)),
        );
    }
    f.vars = ctx.base_vars();
    vec![f]
}

pub fn field_conflict(ctx: &Ctx) -> Vec<Finding> {
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    let mut owners: std::collections::BTreeMap<String, Vec<Message>> = Default::default();
    for m in d.metadata.managed_fields.iter().flatten() {
        if m.subresource.as_deref() == Some("status") {
            continue;
        }
        let who = m.manager.as_deref().unwrap_or("?");
        let manager = match m.subresource.as_deref().filter(|s| !s.is_empty()) {
            Some(s) => Message::new("conflict.via")
                .arg("manager", who)
                .arg("subresource", s),
            None => Message::new("quote").arg("text", who),
        };
        for path in facts::written_paths(m) {
            if path.starts_with("spec.") {
                let list = owners.entry(path).or_default();
                if !list.contains(&manager) {
                    list.push(manager.clone());
                }
            }
        }
    }
    let shared: Vec<_> = owners.into_iter().filter(|(_, m)| m.len() > 1).collect();
    if shared.is_empty() {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let mut f = Finding::new(
        FindingId::FIELD_CONFLICT,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Deployment,
        Message::new("quote").arg(
            "text",
            Arg::list(
                shared.iter().map(|(path, managers)| {
                    Message::new("conflict.owned")
                        .arg("path", path)
                        .arg("managers", Arg::list(managers.clone(), "sep.and"))
                }),
                "sep.semicolon",
            ),
        ),
    );
    for (path, managers) in shared.iter().take(8) {
        f = f.evidence(Evidence::said(
            ctx.chain.deployment_ref(name),
            format!("metadata.managedFields: {path}"),
            Message::new("quote").arg("text", Arg::list(managers.clone(), "sep.comma")),
        ));
    }
    f.vars = ctx.base_vars();
    vec![f]
}
