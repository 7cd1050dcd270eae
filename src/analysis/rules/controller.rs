//! Rules about the controllers above the Pods: the ModelService controller
//! and the Deployment controller.

use super::Ctx;
use crate::analysis::facts::{self, age, deployment_condition, lease_state, seconds_between};
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::FindingId;
use crate::chain::CONTROLLER_NAME;
use crate::model::ObjectRef;

/// Seconds a controller may take to observe a change before it counts as stuck.
const OBSERVE_GRACE_SECONDS: f64 = 30.0;

pub fn controller_not_converging(ctx: &Ctx) -> Vec<Finding> {
    let Some(msvc) = ctx.chain.model_service else {
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
    let waited = declared.map_or(f64::MAX, |d| seconds_between(d, ctx.now));
    let lease = controller
        .and_then(|c| c.lease)
        .map(|l| lease_state(l, ctx.now));
    let lease_stale = lease.as_ref().is_some_and(|l| l.stale);
    if waited < OBSERVE_GRACE_SECONDS && !lease_stale {
        return Vec::new();
    }
    let msvc_label = format!("modelservice/{}", facts::name(meta));
    let mut detail = format!(
        "generation {generation} not observed (observedGeneration {}) {} after it was declared",
        observed.map_or("none".into(), |o| o.to_string()),
        declared.map_or("long".into(), |d| age(d, ctx.now))
    );
    let mut f = Finding::new(
        FindingId::CONTROLLER_NOT_CONVERGING,
        ObjectRef::new("ModelService", meta),
        Step::Observed,
        String::new(),
    )
    .evidence(
        Evidence::new(
            msvc_label.clone(),
            "metadata.generation / status.observedGeneration",
            format!(
                "{generation} / {}",
                observed.map_or("unset".into(), |o| o.to_string())
            ),
        )
        .at(declared),
    );
    if let Some(c) = controller {
        let lease_label = format!("lease/{}", c.location.name);
        match &lease {
            Some(l) => {
                let text = format!(
                    "holder {}, renewed {} ago, duration {}s{}",
                    l.holder.as_deref().unwrap_or("none"),
                    l.renewed.map_or("never".into(), |t| age(t, ctx.now)),
                    l.duration_seconds,
                    if l.stale { ": not renewed (stale)" } else { "" }
                );
                if l.stale {
                    detail.push_str("; its controller's Lease is not being renewed");
                }
                f = f.evidence(Evidence::new(lease_label, "spec.renewTime", text).at(l.renewed));
            }
            None if !ctx.hidden("leases") => {
                f = f.evidence(Evidence::new(
                    lease_label,
                    "lease",
                    format!("no Lease {}/{}", c.location.namespace, c.location.name),
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
            f = f.evidence(Evidence::new(
                format!("deployment/{}", c.location.name),
                "status.readyReplicas",
                format!("{ready} of {want}"),
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

pub fn deployment_missing(ctx: &Ctx) -> Vec<Finding> {
    let Some(msvc) = ctx.chain.model_service else {
        return Vec::new();
    };
    if ctx.chain.deployment.is_some() || ctx.hidden("deployments") {
        return Vec::new();
    }
    let meta = &msvc.metadata;
    let generation = meta.generation.unwrap_or(0);
    let observed = crate::chain::observed_generation(msvc);
    let created = facts::created(meta);
    let waited = created.map_or(f64::MAX, |c| seconds_between(c, ctx.now));
    // Before the controller observed it, the missing Deployment is the
    // controller's problem (controller-not-converging says so).
    if !crate::chain::generation_observed(meta.generation, observed)
        || waited < OBSERVE_GRACE_SECONDS
    {
        return Vec::new();
    }
    let mut f = Finding::new(
        FindingId::DEPLOYMENT_MISSING,
        ObjectRef::new("ModelService", meta),
        Step::Deployment,
        format!(
            "modelservice/{} observed generation {generation} but no Deployment is owned by it",
            facts::name(meta)
        ),
    )
    .evidence(Evidence::new(
        format!("namespace/{}", ctx.chain.namespace),
        "deployments",
        format!("none with an ownerReference to uid {}", facts::uid(meta)),
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
    let waited = written.map_or(f64::MAX, |w| seconds_between(w, ctx.now));
    let kcm = facts::find_lease(ctx.snapshot, "kube-system", "kube-controller-manager")
        .map(|l| lease_state(l, ctx.now));
    let kcm_stale = kcm.as_ref().is_some_and(|l| l.stale);
    if waited < OBSERVE_GRACE_SECONDS && !kcm_stale {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let mut detail = format!(
        "deployment/{name} generation {generation} not observed (observedGeneration {}) {} after it was written",
        observed.map_or("none".into(), |o| o.to_string()),
        written.map_or("long".into(), |w| age(w, ctx.now))
    );
    let mut f = Finding::new(
        FindingId::DEPLOYMENT_NOT_OBSERVED,
        ObjectRef::new("Deployment", &d.metadata),
        Step::Deployment,
        String::new(),
    )
    .evidence(
        Evidence::new(
            format!("deployment/{name}"),
            "metadata.generation / status.observedGeneration",
            format!(
                "{generation} / {}",
                observed.map_or("unset".into(), |o| o.to_string())
            ),
        )
        .at(written),
    );
    if let Some(l) = &kcm {
        if l.stale {
            detail.push_str("; the kube-controller-manager Lease is not being renewed");
        }
        f = f.evidence(
            Evidence::new(
                "lease/kube-controller-manager",
                "spec.renewTime",
                format!(
                    "holder {}, renewed {} ago{}",
                    l.holder.as_deref().unwrap_or("none"),
                    l.renewed.map_or("never".into(), |t| age(t, ctx.now)),
                    if l.stale { " (stale)" } else { "" }
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
        ObjectRef::new("Deployment", &d.metadata),
        Step::Serving,
        c.message.clone().unwrap_or_default(),
    )
    .evidence(
        Evidence::new(
            format!("deployment/{name}"),
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
    .evidence(Evidence::new(
        format!("deployment/{name}"),
        "status.updatedReplicas / availableReplicas / replicas",
        format!("{updated} / {available} / {total} (desired {desired})"),
    ));
    // Counts win over a stale summary condition; say that they disagree.
    if updated >= desired && available >= desired && total == desired {
        f.severity = crate::catalogue::Severity::Info;
        f.detail = format!(
            "the Progressing condition still says the deadline was exceeded, but the counts show the rollout complete ({updated} updated, {available} available of {desired}): the condition is stale"
        );
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
    let held = ctx
        .chain
        .pods
        .iter()
        .filter(|c| !c.current && !c.terminating())
        .any(|c| requests_resource(c.pod, &resource));
    if !held {
        return Vec::new();
    }
    let name = facts::name(&d.metadata);
    let mut f = Finding::new(
        FindingId::ROLLOUT_SURGE_BLOCKED,
        ObjectRef::new("Deployment", &d.metadata),
        Step::Bound,
        format!(
            "the surge Pod {} waits for {resource} held by {old_running} old Pod(s); maxSurge {surge}, maxUnavailable {unavailable}",
            facts::name(&p.pod.metadata)
        ),
    )
    .evidence(Evidence::new(
        format!("deployment/{name}"),
        "spec.strategy.rollingUpdate",
        format!("maxSurge {surge}, maxUnavailable {unavailable} (of {desired})"),
    ))
    .evidence(Evidence::new(
        format!("pod/{}", facts::name(&p.pod.metadata)),
        "event FailedScheduling",
        message,
    ))
    .evidence(Evidence::new(
        format!("deployment/{name}"),
        "old revision Pods",
        format!("{old_running} Running and Ready"),
    ));
    f.vars = ctx.base_vars();
    f.vars
        .insert("pod".into(), facts::name(&p.pod.metadata).to_string());
    vec![f]
}

/// Managers that legitimately write a controller-managed Deployment.
fn expected_manager(manager: &str, controller: &str) -> bool {
    manager == controller || manager == "kube-controller-manager"
}

fn owns_spec(entry: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry) -> bool {
    entry
        .fields_v1
        .as_ref()
        .is_some_and(|f| f.0.get("f:spec").is_some())
}

pub fn managed_deployment_edited(ctx: &Ctx) -> Vec<Finding> {
    let (Some(_), Some(d)) = (ctx.chain.model_service, ctx.chain.deployment) else {
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
    let who: Vec<String> = editors
        .iter()
        .map(|m| {
            format!(
                "{} ({})",
                m.manager.as_deref().unwrap_or("?"),
                m.operation.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let mut f = Finding::new(
        FindingId::MANAGED_DEPLOYMENT_EDITED,
        ObjectRef::new("Deployment", &d.metadata),
        Step::Deployment,
        format!(
            "deployment/{name} is managed by {controller}, but {} changed its spec; the next reconcile reverts it",
            who.join(", ")
        ),
    );
    for m in editors {
        let fields = m
            .fields_v1
            .as_ref()
            .map(|f| leaf_paths(&f.0).join(", "))
            .unwrap_or_default();
        f = f.evidence(
            Evidence::new(
                format!("deployment/{name}"),
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

/// The leaf field paths of a fieldsV1 tree (`spec.replicas`,
/// `spec.template.spec.containers[name=server].image`).
pub fn leaf_paths(fields: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
        let Some(map) = v.as_object() else { return };
        let children: Vec<_> = map.iter().filter(|(k, _)| k.as_str() != ".").collect();
        if children.is_empty() {
            if !prefix.is_empty() {
                out.push(prefix.to_string());
            }
            return;
        }
        for (key, child) in children {
            let part = if let Some(field) = key.strip_prefix("f:") {
                if prefix.is_empty() {
                    field.to_string()
                } else {
                    format!("{prefix}.{field}")
                }
            } else if let Some(k) = key.strip_prefix("k:") {
                let k: serde_json::Value = serde_json::from_str(k).unwrap_or_default();
                let text = k
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(a, b)| {
                                format!("{a}={}", b.as_str().map_or(b.to_string(), str::to_string))
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default();
                format!("{prefix}[{text}]")
            } else {
                format!("{prefix}[{key}]")
            };
            walk(child, &part, out);
        }
    }
    let mut out = Vec::new();
    walk(fields, "", &mut out);
    out
}

pub fn field_conflict(ctx: &Ctx) -> Vec<Finding> {
    let Some(d) = ctx.chain.deployment else {
        return Vec::new();
    };
    let mut owners: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for m in d.metadata.managed_fields.iter().flatten() {
        if m.subresource.as_deref() == Some("status") {
            continue;
        }
        let manager = format!(
            "{}{}",
            m.manager.as_deref().unwrap_or("?"),
            m.subresource
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| format!(" via {s}"))
                .unwrap_or_default()
        );
        for path in m
            .fields_v1
            .as_ref()
            .map(|f| leaf_paths(&f.0))
            .unwrap_or_default()
        {
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
        ObjectRef::new("Deployment", &d.metadata),
        Step::Deployment,
        shared
            .iter()
            .map(|(path, managers)| format!("{path} is owned by {}", managers.join(" and ")))
            .collect::<Vec<_>>()
            .join("; "),
    );
    for (path, managers) in shared.iter().take(8) {
        f = f.evidence(Evidence::new(
            format!("deployment/{name}"),
            format!("metadata.managedFields: {path}"),
            managers.join(", "),
        ));
    }
    f.vars = ctx.base_vars();
    vec![f]
}
