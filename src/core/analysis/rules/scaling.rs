//! Rules about what scales or protects the workload: HPAs and PDBs.

use crate::catalogue::{FindingId, Message};
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition,
};

use super::Ctx;
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::chain::label_selector_matches;
use crate::model::{ObjectRef, TemplateVars};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// HPAs that scale this workload: by target, by ownership, or by name.
fn related_hpas<'a>(ctx: &Ctx<'a>) -> Vec<&'a HorizontalPodAutoscaler> {
    let c = ctx.chain;
    let deployment = c.deployment.map(|d| facts::name(&d.metadata));
    let msvc = c.model_service().map(|m| facts::name(&m.metadata));
    // The HPA KServe writes for a predictor is owned by its InferenceService.
    let msvc_uid = c.platform.map(|p| facts::uid(&p.object.metadata));
    // An HPA may scale a StatefulSet or a ReplicaSet (a DaemonSet has no
    // replicas to scale).
    let set = c
        .pod_set
        .map(|s| (s.kind().as_str(), s.name()))
        .or_else(|| {
            c.lone_replica_set()
                .map(|rs| ("ReplicaSet", facts::name(&rs.metadata)))
        });
    ctx.snapshot
        .objects
        .hpas
        .iter()
        .filter(|h| h.metadata.namespace.as_deref() == Some(c.namespace.as_str()))
        .filter(|h| {
            let target = h.spec.as_ref().map(|s| &s.scale_target_ref);
            let targets_us = target.is_some_and(|t| {
                // An Argo Rollout is scaled as itself (its scale subresource).
                (t.kind == c.deployment_kind() && Some(t.name.as_str()) == deployment)
                    || (t.kind == "ModelService" && Some(t.name.as_str()) == msvc)
                    || set.is_some_and(|(kind, name)| t.kind == kind && t.name == name)
            });
            let owned = h
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| Some(o.uid.as_str()) == msvc_uid);
            let named = Some(facts::name(&h.metadata)) == msvc.or(deployment).or(set.map(|s| s.1));
            targets_us || owned || named
        })
        .collect()
}

fn condition<'a>(
    h: &'a HorizontalPodAutoscaler,
    kind: &str,
) -> Option<&'a HorizontalPodAutoscalerCondition> {
    h.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

fn hpa_finding(
    vars: &TemplateVars,
    id: FindingId,
    h: &HorizontalPodAutoscaler,
    detail: Message,
) -> Finding {
    let mut f = Finding::new(
        id,
        ObjectRef::new("HorizontalPodAutoscaler", &h.metadata),
        Step::Serving,
        detail,
    );
    f.vars = vars.clone();
    f.vars
        .insert("hpa".into(), facts::name(&h.metadata).to_string());
    f
}

fn condition_evidence(
    h: &HorizontalPodAutoscaler,
    c: &HorizontalPodAutoscalerCondition,
) -> Evidence {
    Evidence::new(
        format!("hpa/{}", facts::name(&h.metadata)),
        format!("status.conditions[{}]", c.type_),
        format!(
            "{} {}: {}",
            c.status,
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or("")
        ),
    )
    .at(c.last_transition_time.as_ref().map(|t| t.0))
}

fn replicas_evidence(h: &HorizontalPodAutoscaler) -> Evidence {
    let status = h.status.as_ref();
    let spec = h.spec.as_ref();
    Evidence::labelled(
        format!("hpa/{}", facts::name(&h.metadata)),
        Message::new("hpa.replicas_field"),
        format!(
            "{} / {} ({}..{})",
            status.and_then(|s| s.current_replicas).unwrap_or(0),
            status.map_or(0, |s| s.desired_replicas),
            spec.and_then(|s| s.min_replicas).unwrap_or(1),
            spec.map_or(0, |s| s.max_replicas)
        ),
    )
}

pub fn hpa_metrics_unavailable(ctx: &Ctx) -> Vec<Finding> {
    let vars = ctx.base_vars();
    related_hpas(ctx)
        .into_iter()
        .filter_map(|h| metrics_unavailable(h, &vars))
        .collect()
}

/// The HPA cannot compute a replica count (ScalingActive=False).
pub fn metrics_unavailable(h: &HorizontalPodAutoscaler, vars: &TemplateVars) -> Option<Finding> {
    let c = condition(h, "ScalingActive")
        .filter(|c| c.status == "False" && c.reason.as_deref() != Some("ScalingDisabled"))?;
    let f = hpa_finding(
        vars,
        FindingId::HPA_METRICS_UNAVAILABLE,
        h,
        Message::new("hpa.metrics")
            .arg("name", facts::name(&h.metadata))
            .arg("message", c.message.as_deref().unwrap_or("")),
    )
    .evidence(condition_evidence(h, c))
    .evidence(replicas_evidence(h));
    Some(f)
}

pub fn hpa_at_max(ctx: &Ctx) -> Vec<Finding> {
    let vars = ctx.base_vars();
    related_hpas(ctx)
        .into_iter()
        .filter_map(|h| at_max(h, &vars))
        .collect()
}

/// The HPA runs its maximum and wants more.
pub fn at_max(h: &HorizontalPodAutoscaler, vars: &TemplateVars) -> Option<Finding> {
    let max = h.spec.as_ref()?.max_replicas;
    let status = h.status.as_ref()?;
    let current = status.current_replicas.unwrap_or(0);
    let limited = condition(h, "ScalingLimited")
        .filter(|c| c.status == "True" && c.reason.as_deref() == Some("TooManyReplicas"));
    let at_max = current >= max && (limited.is_some() || status.desired_replicas >= max);
    if !at_max {
        return None;
    }
    let mut f = hpa_finding(
        vars,
        FindingId::HPA_AT_MAX,
        h,
        Message::new("hpa.at_max")
            .arg("name", facts::name(&h.metadata))
            .arg("current", current)
            .arg("desired", status.desired_replicas),
    )
    .evidence(replicas_evidence(h));
    if let Some(c) = limited {
        f = f.evidence(condition_evidence(h, c));
    }
    Some(f)
}

pub fn hpa_target_missing(ctx: &Ctx) -> Vec<Finding> {
    let vars = ctx.base_vars();
    related_hpas(ctx)
        .into_iter()
        .filter_map(|h| {
            let target = &h.spec.as_ref()?.scale_target_ref;
            let absent = target.kind == "Deployment"
                && !ctx.hidden("deployments")
                && !ctx.snapshot.objects.deployments.iter().any(|d| {
                    d.metadata.namespace.as_deref() == Some(ctx.chain.namespace.as_str())
                        && facts::name(&d.metadata) == target.name
                });
            target_missing(h, &vars, absent)
        })
        .collect()
}

/// The HPA's target does not exist (`absent`, from the objects) or the HPA
/// controller could not read its scale (AbleToScale=False, FailedGetScale).
pub fn target_missing(
    h: &HorizontalPodAutoscaler,
    vars: &TemplateVars,
    absent: bool,
) -> Option<Finding> {
    let target = &h.spec.as_ref()?.scale_target_ref;
    let failed = condition(h, "AbleToScale")
        .filter(|c| c.status == "False" && c.reason.as_deref() == Some("FailedGetScale"));
    if failed.is_none() && !absent {
        return None;
    }
    let mut f = hpa_finding(
        vars,
        FindingId::HPA_TARGET_MISSING,
        h,
        Message::new(if absent {
            "hpa.target_absent"
        } else {
            "hpa.target_unreadable"
        })
        .arg("name", facts::name(&h.metadata))
        .arg("kind", &target.kind)
        .arg("target", format!("{:?}", target.name)),
    )
    .evidence(Evidence::new(
        format!("hpa/{}", facts::name(&h.metadata)),
        "spec.scaleTargetRef",
        format!("{}/{}", target.kind, target.name),
    ));
    if let Some(c) = failed {
        f = f.evidence(condition_evidence(h, c));
    }
    Some(f)
}

pub fn pdb_blocking(ctx: &Ctx) -> Vec<Finding> {
    let labels = ctx
        .current_pods()
        .next()
        .map(|(p, _)| p.pod.metadata.labels.clone());
    let Some(labels) = labels else {
        return Vec::new();
    };
    let vars = ctx.base_vars();
    ctx.snapshot
        .objects
        .pdbs
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some(ctx.chain.namespace.as_str()))
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.selector.as_ref())
                .is_some_and(|s| label_selector_matches(s, labels.as_ref()))
        })
        .filter_map(|pdb| allows_no_disruption(pdb, &vars))
        .collect()
}

/// The DisruptionAllowed condition when the disruption controller could
/// not compute the budget (reason SyncFailed): it then allows no
/// disruption whatever the Pods' health.
pub fn pdb_sync_failed(pdb: &PodDisruptionBudget) -> Option<&Condition> {
    pdb.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "DisruptionAllowed" && c.reason == "SyncFailed" && c.status == "False")
}

/// The PDB allows no disruption now.
pub fn allows_no_disruption(pdb: &PodDisruptionBudget, vars: &TemplateVars) -> Option<Finding> {
    let status = pdb.status.as_ref()?;
    if status.disruptions_allowed > 0 {
        return None;
    }
    let name = facts::name(&pdb.metadata);
    let mut f = Finding::new(
        FindingId::PDB_BLOCKING,
        ObjectRef::new("PodDisruptionBudget", &pdb.metadata),
        Step::Serving,
        Message::new("pdb.detail")
            .arg("name", name)
            .arg("healthy", status.current_healthy)
            .arg("required", status.desired_healthy),
    )
    .evidence(Evidence::new(
        format!("pdb/{name}"),
        "status.disruptionsAllowed / currentHealthy / desiredHealthy",
        format!(
            "{} / {} / {}",
            status.disruptions_allowed, status.current_healthy, status.desired_healthy
        ),
    ));
    if let Some(c) = pdb_sync_failed(pdb) {
        f = f.evidence(Evidence::new(
            format!("pdb/{name}"),
            "status.conditions[DisruptionAllowed]",
            format!("{} {}: {}", c.status, c.reason, c.message),
        ));
    }
    f.vars = vars.clone();
    f.vars.insert("pdb".into(), name.to_string());
    Some(f)
}
