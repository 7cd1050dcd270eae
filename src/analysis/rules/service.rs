//! Rules about the Service in front of the Pods and its EndpointSlices.

use super::Ctx;
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::chain::selector_matches;
use crate::model::ObjectRef;

fn workload_ref(ctx: &Ctx) -> Option<ObjectRef> {
    let c = ctx.chain;
    c.model_service
        .map(|m| ObjectRef::new("ModelService", &m.metadata))
        .or_else(|| {
            c.deployment
                .map(|d| ObjectRef::new("Deployment", &d.metadata))
        })
}

fn labels_text(labels: Option<&std::collections::BTreeMap<String, String>>) -> String {
    match labels {
        None => "(none)".into(),
        Some(l) if l.is_empty() => "(none)".into(),
        Some(l) => l
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
    }
}

pub fn service_missing(ctx: &Ctx) -> Vec<Finding> {
    if !ctx.chain.services.is_empty() || ctx.hidden("services") {
        return Vec::new();
    }
    let Some(subject) = workload_ref(ctx) else {
        return Vec::new();
    };
    let label = format!("{subject}");
    let f = Finding::new(
        "service-missing",
        subject,
        Step::Serving,
        format!(
            "no Service in {} is owned by {label} or selects its Pods",
            ctx.chain.namespace
        ),
    )
    .evidence(Evidence::new(
        format!("namespace/{}", ctx.chain.namespace),
        "services",
        "none owned by the workload, none selecting its Pods",
    ));
    let mut f = f;
    f.vars = ctx.base_vars();
    f.vars
        .entry("service".into())
        .or_insert_with(|| label.split('/').nth(1).unwrap_or("").to_string());
    vec![f]
}

pub fn selector_mismatch(ctx: &Ctx) -> Vec<Finding> {
    let Some(service) = ctx.chain.primary_service() else {
        return Vec::new();
    };
    let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return Vec::new();
    };
    let pods: Vec<_> = ctx.current_pods().map(|(p, _)| p.pod).collect();
    if pods.is_empty() || selector.is_empty() || ctx.hidden("pods") {
        return Vec::new();
    }
    if pods
        .iter()
        .any(|p| selector_matches(service, p.metadata.labels.as_ref()))
    {
        return Vec::new();
    }
    let first = pods[0];
    let mut f = Finding::new(
        "selector-mismatch",
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        format!(
            "service/{} selects {} but the Pods are labelled {}",
            facts::name(&service.metadata),
            labels_text(Some(selector)),
            labels_text(first.metadata.labels.as_ref())
        ),
    )
    .evidence(Evidence::new(
        format!("service/{}", facts::name(&service.metadata)),
        "spec.selector",
        labels_text(Some(selector)),
    ))
    .evidence(Evidence::new(
        format!("pod/{}", facts::name(&first.metadata)),
        "metadata.labels",
        labels_text(first.metadata.labels.as_ref()),
    ));
    f.vars = ctx.base_vars();
    f.vars
        .insert("pod".into(), facts::name(&first.metadata).to_string());
    vec![f]
}

pub fn endpoints_not_ready(ctx: &Ctx) -> Vec<Finding> {
    let Some(service) = ctx.chain.primary_service() else {
        return Vec::new();
    };
    if ctx.hidden("endpointslices") || ctx.hidden("pods") {
        return Vec::new();
    }
    let selected: Vec<_> = ctx
        .current_pods()
        .filter(|(p, _)| selector_matches(service, p.pod.metadata.labels.as_ref()))
        .collect();
    if selected.is_empty() {
        // Nothing selected: that is selector-mismatch (or no Pods yet).
        return Vec::new();
    }
    let endpoints: Vec<_> = ctx
        .chain
        .endpoint_slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .collect();
    let ready_endpoints = endpoints
        .iter()
        .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
        .count();
    let draining = endpoints
        .iter()
        .filter(|e| {
            let c = e.conditions.as_ref();
            c.and_then(|c| c.ready) == Some(false)
                && c.and_then(|c| c.serving) == Some(true)
                && c.and_then(|c| c.terminating) == Some(true)
        })
        .count();
    // Ready Pods the Service does not serve are the Service's problem.
    let ready_not_serving: Vec<_> = selected
        .iter()
        .filter(|(_, s)| s.moments.ready.reached && !s.serving)
        .collect();
    if ready_endpoints > 0 && ready_not_serving.is_empty() {
        return Vec::new();
    }
    let name = facts::name(&service.metadata);
    let detail = if !ready_not_serving.is_empty() {
        format!(
            "{} Ready Pod(s) have no ready endpoint in service/{name}",
            ready_not_serving.len()
        )
    } else {
        format!(
            "service/{name} has no ready endpoint ({} endpoint(s) listed{})",
            endpoints.len(),
            if draining > 0 {
                format!(", {draining} draining")
            } else {
                String::new()
            }
        )
    };
    let mut f = Finding::new(
        "endpoints-not-ready",
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        detail,
    );
    for slice in &ctx.chain.endpoint_slices {
        let eps = &slice.endpoints;
        let ready = eps
            .iter()
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
            .count();
        f = f.evidence(Evidence::new(
            format!("endpointslice/{}", facts::name(&slice.metadata)),
            "endpoints",
            format!("{ready} ready of {}", eps.len()),
        ));
    }
    if ctx.chain.endpoint_slices.is_empty() {
        f = f.evidence(Evidence::new(
            format!("service/{name}"),
            "endpointslices",
            "none labelled kubernetes.io/service-name=".to_string() + name,
        ));
    }
    for (p, _) in ready_not_serving.iter().take(3) {
        f = f.evidence(Evidence::new(
            format!("pod/{}", facts::name(&p.pod.metadata)),
            "status.conditions[Ready]",
            "True, but not a ready endpoint",
        ));
    }
    f.vars = ctx.base_vars();
    vec![f]
}
