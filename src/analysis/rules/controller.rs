//! Rules about the controllers above the Pods: the ModelService controller
//! and the Deployment controller.

use super::Ctx;
use crate::analysis::facts::{self, age, deployment_condition, lease_state, seconds_between};
use crate::analysis::{Evidence, Finding, Step};
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
    if observed.is_some_and(|o| o >= generation) {
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
        "controller-not-converging",
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
    if observed.is_none_or(|o| o < generation) || waited < OBSERVE_GRACE_SECONDS {
        return Vec::new();
    }
    let mut f = Finding::new(
        "deployment-missing",
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
    if observed.is_some_and(|o| o >= generation) {
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
        "deployment-not-observed",
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
        "progress-deadline-exceeded",
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
