//! Rules about the Service in front of the Pods and its EndpointSlices.

use super::Ctx;
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{Arg, FindingId, Message};
use crate::chain::selector_matches;
use crate::model::{ObjectRef, TemplateVars};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;

fn workload_ref(ctx: &Ctx) -> Option<ObjectRef> {
    let c = ctx.chain;
    c.model_service()
        .map(|m| ObjectRef::new("ModelService", &m.metadata))
        .or_else(|| {
            c.deployment
                .map(|d| ObjectRef::new(c.deployment_kind(), &d.metadata))
        })
}

fn labels_text(labels: Option<&std::collections::BTreeMap<String, String>>) -> Arg {
    match labels {
        None => Message::new("word.none_paren").into(),
        Some(l) if l.is_empty() => Message::new("word.none_paren").into(),
        Some(l) => Arg::from(
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
        ),
    }
}

fn labels_evidence(
    object: String,
    field: &str,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> Evidence {
    Evidence::said(
        object,
        field,
        Message::new("quote").arg("text", labels_text(labels)),
    )
}

pub fn service_missing(ctx: &Ctx) -> Vec<Finding> {
    // A ModelService declares a Service; a plain Deployment need not have one.
    if ctx.chain.model_service().is_none()
        || !ctx.chain.services.is_empty()
        || ctx.hidden("services")
    {
        return Vec::new();
    }
    let Some(subject) = workload_ref(ctx) else {
        return Vec::new();
    };
    let label = format!("{subject}");
    let f = Finding::new(
        FindingId::SERVICE_MISSING,
        subject,
        Step::Serving,
        Message::new("service-missing.detail")
            .arg("namespace", &ctx.chain.namespace)
            .arg("workload", label.as_str()),
    )
    .evidence(Evidence::said(
        format!("namespace/{}", ctx.chain.namespace),
        "services",
        Message::new("service-missing.none"),
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
    if pods.iter().any(|p| {
        ctx.chain
            .service_selects(service, p.metadata.labels.as_ref())
    }) {
        return Vec::new();
    }
    let first = pods[0];
    let mut f = Finding::new(
        FindingId::SELECTOR_MISMATCH,
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        Message::new("selector.detail")
            .arg("service", facts::name(&service.metadata))
            .arg("selector", labels_text(Some(selector)))
            .arg("labels", labels_text(first.metadata.labels.as_ref())),
    )
    .evidence(labels_evidence(
        format!("service/{}", facts::name(&service.metadata)),
        "spec.selector",
        Some(selector),
    ))
    .evidence(labels_evidence(
        format!("pod/{}", facts::name(&first.metadata)),
        "metadata.labels",
        first.metadata.labels.as_ref(),
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
    if knative_routes_elsewhere(ctx.chain) {
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
    // Its own slices: a chain with two Services (a Rollout's stable and
    // canary) holds the other's too.
    let name = facts::name(&service.metadata);
    let own: Vec<&EndpointSlice> = ctx
        .chain
        .endpoint_slices
        .iter()
        .copied()
        .filter(|s| {
            s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(crate::chain::SERVICE_NAME_LABEL))
                .is_some_and(|n| n == name)
        })
        .collect();
    no_ready_endpoint(service, &own, &ctx.base_vars())
        .into_iter()
        .collect()
}

/// A Knative Route sends no request to a Revision before it is Ready:
/// while another Revision takes the traffic, the new one's private Service
/// having no ready endpoint is by design, and its Pods say why.
fn knative_routes_elsewhere(chain: &crate::chain::Chain) -> bool {
    let in_traffic = chain.revisions_in_traffic();
    let current = chain
        .deployment
        .and_then(crate::chain::knative::revision_of_deployment);
    !in_traffic.is_empty() && current.is_none_or(|c| !in_traffic.contains(&c))
}

/// `endpoints-not-ready` when no endpoint of the Service's slices is ready
/// (draining ones counted apart), with each slice's count as evidence.
pub fn no_ready_endpoint(
    service: &Service,
    slices: &[&EndpointSlice],
    vars: &TemplateVars,
) -> Option<Finding> {
    let endpoints: Vec<_> = slices.iter().flat_map(|s| s.endpoints.iter()).collect();
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
    // Some ready endpoint exists: the Service answers. Ready Pods missing
    // from the slices are endpoints-stale.
    if ready_endpoints > 0 {
        return None;
    }
    let name = facts::name(&service.metadata);
    let detail = Message::new("endpoints.detail")
        .arg("service", name)
        .arg("count", endpoints.len())
        .arg(
            "draining",
            if draining > 0 {
                Message::new("endpoints.draining").arg("n", draining).into()
            } else {
                Arg::from("")
            },
        );
    let mut f = Finding::new(
        FindingId::ENDPOINTS_NOT_READY,
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        detail,
    );
    for slice in slices {
        let eps = &slice.endpoints;
        let ready = eps
            .iter()
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
            .count();
        f = f.evidence(Evidence::said(
            format!("endpointslice/{}", facts::name(&slice.metadata)),
            "endpoints",
            Message::new("endpoints.slice")
                .arg("ready", ready)
                .arg("total", eps.len()),
        ));
    }
    if slices.is_empty() {
        f = f.evidence(Evidence::said(
            format!("service/{name}"),
            "endpointslices",
            Message::new("endpoints.no_slice").arg("service", name),
        ));
    }
    f.vars = vars.clone();
    f.vars.insert("service".into(), name.to_string());
    Some(f)
}

/// Seconds the EndpointSlice controller may lag behind a Pod turning Ready.
const SLICE_LAG_SECONDS: f64 = 10.0;

pub fn endpoints_stale(ctx: &Ctx) -> Vec<Finding> {
    let Some(service) = ctx.chain.primary_service() else {
        return Vec::new();
    };
    if ctx.hidden("endpointslices") || ctx.hidden("pods") {
        return Vec::new();
    }
    let name = facts::name(&service.metadata);
    let mut f = Finding::new(
        FindingId::ENDPOINTS_STALE,
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        Message::new("quote"),
    );
    let mut problems = Vec::new();
    // Ready endpoints that point at a Pod UID that no longer exists.
    let pod_uids = ctx.pod_uids;
    for slice in &ctx.chain.endpoint_slices {
        for e in &slice.endpoints {
            let ready = e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true);
            let Some(target) = e.target_ref.as_ref() else {
                continue;
            };
            let Some(uid) = target.uid.as_deref().filter(|u| !u.is_empty()) else {
                continue;
            };
            if ready && !pod_uids.contains(uid) {
                problems.push(
                    Message::new("stale.gone")
                        .arg("pod", target.name.as_deref().unwrap_or("?"))
                        .arg("addresses", e.addresses.join(",")),
                );
                f = f.evidence(Evidence::said(
                    format!("endpointslice/{}", facts::name(&slice.metadata)),
                    "endpoints[].targetRef",
                    Message::new("stale.gone_evidence")
                        .arg("pod", target.name.as_deref().unwrap_or("?"))
                        .arg("uid", uid),
                ));
            }
        }
    }
    // Ready Pods the Service selects but does not list as ready.
    for (p, state) in ctx.current_pods() {
        let selected = selector_matches(service, p.pod.metadata.labels.as_ref());
        let ready_for = state
            .moments
            .ready
            .at
            .map_or(0.0, |t| facts::seconds_between(t, ctx.now));
        if selected
            && state.moments.ready.reached
            && !state.serving
            && ready_for > SLICE_LAG_SECONDS
        {
            problems.push(Message::new("stale.not_listed").arg("pod", &state.name));
            f = f.evidence(
                Evidence::said(
                    format!("pod/{}", state.name),
                    "status.conditions[Ready]",
                    Message::new("stale.not_listed_evidence")
                        .arg(
                            "age",
                            facts::age(state.moments.ready.at.unwrap_or(ctx.now), ctx.now),
                        )
                        .arg("service", name),
                )
                .at(state.moments.ready.at),
            );
        }
    }
    if problems.is_empty() {
        return Vec::new();
    }
    f.detail = Message::new("stale.detail")
        .arg("service", name)
        .arg("problems", Arg::list(problems, "sep.semicolon"));
    f.vars = ctx.base_vars();
    vec![f]
}

pub fn port_mismatch(ctx: &Ctx) -> Vec<Finding> {
    let Some(service) = ctx.chain.primary_service() else {
        return Vec::new();
    };
    let pods: Vec<_> = ctx
        .current_pods()
        .map(|(p, _)| p.pod)
        .filter(|p| {
            ctx.chain
                .service_selects(service, p.metadata.labels.as_ref())
        })
        .collect();
    let Some(pod) = pods.first() else {
        return Vec::new();
    };
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[]);
    let declared: Vec<(Option<&str>, i32)> = containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .map(|p| (p.name.as_deref(), p.container_port))
        .collect();
    let name = facts::name(&service.metadata);
    let mut f = Finding::new(
        FindingId::PORT_MISMATCH,
        ObjectRef::new("Service", &service.metadata),
        Step::Serving,
        Message::new("quote"),
    );
    let mut problems = Vec::new();
    for port in service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
    {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        let target = port
            .target_port
            .clone()
            .unwrap_or(IntOrString::Int(port.port));
        let missing = match &target {
            IntOrString::String(wanted) => {
                !declared.iter().any(|(n, _)| *n == Some(wanted.as_str()))
            }
            // Ports need not be declared: judge a number only against declared ones.
            IntOrString::Int(wanted) => {
                !declared.is_empty() && !declared.iter().any(|(_, p)| p == wanted)
            }
        };
        if missing {
            let target = crate::model::int_or_string(&target);
            problems.push(
                Message::new("port.targets")
                    .arg("port", port.port)
                    .arg("target", target.as_str()),
            );
            f = f.evidence(Evidence::new(
                format!("service/{name}"),
                format!(
                    "spec.ports[{}].targetPort",
                    port.name.as_deref().unwrap_or("")
                ),
                target,
            ));
        }
    }
    if problems.is_empty() {
        return Vec::new();
    }
    let declared_text = if declared.is_empty() {
        Message::new("word.none").into()
    } else {
        Arg::from(
            declared
                .iter()
                .map(|(n, p)| match n {
                    Some(n) => format!("{n}:{p}"),
                    None => p.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    f = f.evidence(Evidence::said(
        format!("pod/{}", facts::name(&pod.metadata)),
        "spec.containers[].ports",
        Message::new("quote").arg("text", declared_text.clone()),
    ));
    f.detail = Message::new("port.detail")
        .arg("service", name)
        .arg("problems", Arg::list(problems, "sep.comma"))
        .arg("declared", declared_text);
    f.vars = ctx.base_vars();
    // The Pod's names, and the container that declares ports (whose log
    // says where the server listens), so every check command pastes.
    f.vars.extend(super::pod_vars(pod));
    if let Some(c) = containers.iter().find(|c| c.ports.is_some()) {
        f.vars.insert("container".into(), c.name.clone());
    }
    vec![f]
}
