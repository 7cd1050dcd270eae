//! The read of one target's chain (issue 16 item 2): a trace in a
//! namespace of 10,000 other Pods should cost what its own objects cost.
//!
//! Instead of every list of the namespace, three waves of small requests:
//! 1. what every read shares ([`read_common`]: discovery, the Nodes, the
//!    kube-system Leases, the controller), the workload by name (a
//!    ModelService's Deployment is named after it by its controller; the
//!    owner UID is checked once the ModelService is read), and the kinds a
//!    namespace has one of per workload at most (Services, HPAs, PDBs);
//! 2. the ModelService by name, the ReplicaSets, Pods and
//!    ControllerRevisions its selector selects, and the EndpointSlices of
//!    the Services whose selector matches its Pods;
//! 3. the Events of each object read, by kind and name, and any Pod an
//!    endpoint names that the selector did not bring.
//!
//! Events cannot be selected by the labels of the object they are about,
//! and a Pod's name is only known once it is read: the third wave is that
//! price. What it reads is a superset of what `mdiag snapshot` keeps of the
//! chain ([`crate::chain::chain_objects`]), which replays to the same
//! findings. Whatever does not fit (a Pod or ReplicaSet target, a workload
//! that is not where its name says, a selector that selects everything)
//! reads the namespace as before.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::read::{keep_events_about_read_objects, read_common, read_lists, typed_path};
use super::*;
use crate::chain::SERVICE_NAME_LABEL;
use crate::model::{EventRecord, Objects, TargetKind, TargetSpec};

/// Reads what a trace of `target` needs: its chain by selectors when it is a
/// ModelService, Deployment, StatefulSet or DaemonSet, else (or when the
/// chain is not where its names say) the namespace, as [`read_for_trace`].
pub async fn read_for_target(
    conn: &Connection,
    read: &TraceRead<'_>,
    target: &TargetSpec,
) -> Result<Snapshot, LiveError> {
    let Some(namespace) = read.namespace else {
        return read_for_trace(conn, read).await;
    };
    if !matches!(
        target.kind,
        TargetKind::ModelService
            | TargetKind::Deployment
            | TargetKind::StatefulSet
            | TargetKind::DaemonSet
    ) {
        return read_for_trace(conn, read).await;
    }
    let common = read_common(conn, read).await?;
    match read_chain(conn, &common, namespace, target).await? {
        Some(snapshot) => Ok(snapshot),
        None => read_lists(conn, &common, Some(namespace), None).await,
    }
}

/// The workload whose selector brings the Pods.
enum Workload {
    Deployment(Box<Deployment>),
    StatefulSet(Box<StatefulSet>),
    DaemonSet(Box<DaemonSet>),
}

impl Workload {
    fn meta(&self) -> &ObjectMeta {
        match self {
            Workload::Deployment(d) => &d.metadata,
            Workload::StatefulSet(s) => &s.metadata,
            Workload::DaemonSet(d) => &d.metadata,
        }
    }

    fn selector(&self) -> Option<&LabelSelector> {
        match self {
            Workload::Deployment(d) => d.spec.as_ref().map(|s| &s.selector),
            Workload::StatefulSet(s) => s.spec.as_ref().map(|s| &s.selector),
            Workload::DaemonSet(d) => d.spec.as_ref().map(|s| &s.selector),
        }
    }

    fn template_labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        let template = match self {
            Workload::Deployment(d) => &d.spec.as_ref()?.template,
            Workload::StatefulSet(s) => &s.spec.as_ref()?.template,
            Workload::DaemonSet(d) => &d.spec.as_ref()?.template,
        };
        template.metadata.as_ref()?.labels.as_ref()
    }

    fn land(self, o: &mut Objects) {
        match self {
            Workload::Deployment(d) => {
                if !o
                    .deployments
                    .iter()
                    .any(|x| x.metadata.uid == d.metadata.uid)
                {
                    o.deployments.push(*d);
                }
            }
            Workload::StatefulSet(s) => o.stateful_sets.push(*s),
            Workload::DaemonSet(d) => o.daemon_sets.push(*d),
        }
    }
}

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A label selector as the API takes it in `labelSelector`; `None` for one
/// that selects everything (or an operator this does not know), which a
/// targeted read cannot use.
pub fn selector_query(selector: &LabelSelector) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        parts.push(format!("{k}={v}"));
    }
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            _ => return None,
        });
    }
    (!parts.is_empty()).then(|| parts.join(","))
}

/// The three waves; `None` when the chain is not where the names say.
async fn read_chain(
    conn: &Connection,
    common: &Common,
    ns: &str,
    target: &TargetSpec,
) -> Result<Option<Snapshot>, LiveError> {
    let client = &conn.client;
    let all = ListParams::default();
    // Wave 1 (after the shared reads, which a triage makes once for all
    // namespaces): the workload by name and the namespace's few-per-workload
    // kinds.
    let name = target.name.as_str();
    let workload = async {
        match target.kind {
            TargetKind::StatefulSet => conn
                .get_opt(Api::<StatefulSet>::namespaced(client.clone(), ns), name)
                .await
                .map(|o| o.map(|s| Workload::StatefulSet(Box::new(s)))),
            TargetKind::DaemonSet => conn
                .get_opt(Api::<DaemonSet>::namespaced(client.clone(), ns), name)
                .await
                .map(|o| o.map(|d| Workload::DaemonSet(Box::new(d)))),
            _ => conn
                .get_opt(Api::<Deployment>::namespaced(client.clone(), ns), name)
                .await
                .map(|o| o.map(|d| Workload::Deployment(Box::new(d)))),
        }
    };
    let keep_service = |s: &mut Service| s.keep();
    let keep_hpa = |h: &mut HorizontalPodAutoscaler| h.keep();
    let keep_pdb = |p: &mut PodDisruptionBudget| p.keep();
    let (services_path, hpas_path, pdbs_path) = (
        typed_path::<Service>(Some(ns)),
        typed_path::<HorizontalPodAutoscaler>(Some(ns)),
        typed_path::<PodDisruptionBudget>(Some(ns)),
    );
    let (workload, services, hpas, pdbs) = tokio::join!(
        workload,
        conn.list_pages(&services_path, &all, &keep_service),
        conn.list_pages(&hpas_path, &all, &keep_hpa),
        conn.list_pages(&pdbs_path, &all, &keep_pdb),
    );
    let mut c = Collector {
        conn,
        gaps: common.gaps.clone(),
        fatal: None,
    };
    // A workload that cannot be read, or is not there: the namespace read
    // says so the way it always has (gaps, or the targets that exist).
    let Ok(Some(mut workload)) = workload else {
        return Ok(None);
    };
    if let Workload::Deployment(d) = &mut workload {
        trim_meta(&mut d.metadata, true);
    } else if let Workload::StatefulSet(s) = &mut workload {
        trim_meta(&mut s.metadata, true);
    } else if let Workload::DaemonSet(d) = &mut workload {
        trim_meta(&mut d.metadata, true);
    }
    let Some(selector) = workload.selector().and_then(selector_query) else {
        return Ok(None);
    };
    let services = c.take(services, "services", Some(ns), "list", None);
    let labels = workload.template_labels().cloned().unwrap_or_default();
    let serving: Vec<String> = services
        .iter()
        .filter(|s| crate::chain::selector_matches(s, Some(&labels)))
        .filter_map(|s| s.metadata.name.clone())
        .collect();

    // Wave 2: the ModelService, and what the selector selects.
    let selected = ListParams::default().labels(&selector);
    let slices_params = (!serving.is_empty()).then(|| {
        ListParams::default().labels(&format!("{SERVICE_NAME_LABEL} in ({})", serving.join(",")))
    });
    // The ModelService: the target, or the one that owns a Deployment target.
    let owner_name = match target.kind {
        TargetKind::ModelService => Some(name.to_string()),
        _ => workload
            .meta()
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "ModelService" && o.controller == Some(true))
            .map(|o| o.name.clone()),
    };
    let model_service = async {
        match (&common.model_service, &owner_name) {
            (Some(r), Some(owner)) => {
                let api = Api::<DynamicObject>::namespaced_with(client.clone(), ns, r);
                let _permit = conn.limiter.acquire().await.expect("never closed");
                conn.count();
                Some(api.get_opt(owner).await)
            }
            _ => None,
        }
    };
    let routes = async {
        match &common.http_routes {
            Some(r) => {
                let path = DynamicObject::url_path(r, Some(ns));
                let keep = |o: &mut DynamicObject| {
                    trim_meta(&mut o.metadata, true);
                    true
                };
                Some((r.clone(), conn.list_pages(&path, &all, &keep).await))
            }
            None => None,
        }
    };
    let keep_rs = |o: &mut ReplicaSet| o.keep();
    let keep_pod = |o: &mut Pod| o.keep();
    let keep_revision = |o: &mut ControllerRevision| o.keep();
    let keep_slice = |o: &mut EndpointSlice| o.keep();
    let is_deployment = matches!(workload, Workload::Deployment(_));
    let (model_service, routes, replica_sets, pods, revisions, slices) = tokio::join!(
        model_service,
        routes,
        async {
            if is_deployment {
                Some(
                    conn.list_pages(&typed_path::<ReplicaSet>(Some(ns)), &selected, &keep_rs)
                        .await,
                )
            } else {
                None
            }
        },
        async {
            conn.list_pages(&typed_path::<Pod>(Some(ns)), &selected, &keep_pod)
                .await
        },
        async {
            if is_deployment {
                None
            } else {
                Some(
                    conn.list_pages(
                        &typed_path::<ControllerRevision>(Some(ns)),
                        &selected,
                        &keep_revision,
                    )
                    .await,
                )
            }
        },
        async {
            match &slices_params {
                Some(p) => Some(
                    conn.list_pages(&typed_path::<EndpointSlice>(Some(ns)), p, &keep_slice)
                        .await,
                ),
                None => None,
            }
        },
    );
    let mut snapshot = Snapshot::default();
    let o = &mut snapshot.objects;
    let msvc = match (model_service, &common.model_service) {
        (Some(result), Some(r)) => c
            .take(result, &r.plural, Some(ns), "get", owner_name.as_deref())
            .map(|m| (r, m)),
        _ => None,
    };
    let owned = |m: &DynamicObject| {
        workload
            .meta()
            .owner_references
            .iter()
            .flatten()
            .any(|o| Some(o.uid.as_str()) == m.metadata.uid.as_deref())
    };
    // A ModelService target must own the Deployment named after it.
    if target.kind == TargetKind::ModelService && !msvc.as_ref().is_some_and(|(_, m)| owned(m)) {
        return Ok(None);
    }
    if let Some((r, mut m)) = msvc {
        trim_meta(&mut m.metadata, true);
        m.types = Some(kube::api::TypeMeta {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
        });
        o.model_services.push(m);
    }
    let workload_meta = workload.meta().clone();
    workload.land(o);
    o.services = services;
    o.hpas = c.take(hpas, "horizontalpodautoscalers", Some(ns), "list", None);
    o.pdbs = c.take(pdbs, "poddisruptionbudgets", Some(ns), "list", None);
    if let Some(rs) = replica_sets {
        o.replica_sets = c.take(rs, "replicasets", Some(ns), "list", None);
    }
    o.pods = c.take(pods, "pods", Some(ns), "list", None);
    if let Some(r) = revisions {
        o.controller_revisions = c.take(r, "controllerrevisions", Some(ns), "list", None);
    }
    if let Some(s) = slices {
        o.endpoint_slices = c.take(s, "endpointslices", Some(ns), "list", None);
    }
    if let Some((r, listed)) = routes {
        let mut items = c.take(listed, &r.plural, Some(ns), "list", None);
        for item in &mut items {
            item.types = Some(kube::api::TypeMeta {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
            });
        }
        o.http_routes = items;
    }

    // Wave 3: the Events of every object read, and the Pods endpoints name
    // that the selector did not bring (to tell a stale endpoint from a Pod
    // with other labels).
    let mut about: BTreeSet<(&'static str, String)> = BTreeSet::new();
    let mut note = |kind: &'static str, meta: &ObjectMeta| {
        if let Some(n) = &meta.name {
            about.insert((kind, n.clone()));
        }
    };
    for m in &o.model_services {
        note("ModelService", &m.metadata);
    }
    note(
        match target.kind {
            TargetKind::StatefulSet => "StatefulSet",
            TargetKind::DaemonSet => "DaemonSet",
            _ => "Deployment",
        },
        &workload_meta,
    );
    for r in &o.replica_sets {
        note("ReplicaSet", &r.metadata);
    }
    for p in &o.pods {
        note("Pod", &p.metadata);
    }
    for s in o.services.iter().filter(|s| {
        s.metadata
            .name
            .as_ref()
            .is_some_and(|n| serving.contains(n))
    }) {
        note("Service", &s.metadata);
    }
    let workload_name = workload_meta.name.clone().unwrap_or_default();
    for h in o.hpas.iter().filter(|h| {
        h.spec
            .as_ref()
            .is_some_and(|s| s.scale_target_ref.name == workload_name)
    }) {
        note("HorizontalPodAutoscaler", &h.metadata);
    }
    let read_pods: BTreeSet<&str> = o
        .pods
        .iter()
        .filter_map(|p| p.metadata.uid.as_deref())
        .collect();
    let named: BTreeSet<String> = o
        .endpoint_slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .filter_map(|e| e.target_ref.as_ref())
        .filter(|r| r.kind.as_deref() == Some("Pod"))
        .filter(|r| !r.uid.as_deref().is_some_and(|u| read_pods.contains(u)))
        .filter_map(|r| r.name.clone())
        .collect();
    let keep_event = |e: &mut CoreEvent| e.keep();
    let keep_event = &keep_event;
    let events = join_all(about.iter().map(|(kind, name)| {
        let params = ListParams::default().fields(&format!(
            "involvedObject.kind={kind},involvedObject.name={name}"
        ));
        async move {
            conn.list_pages(&typed_path::<CoreEvent>(Some(ns)), &params, keep_event)
                .await
        }
    }));
    let others = join_all(
        named
            .iter()
            .map(|name| conn.get_opt(Api::<Pod>::namespaced(client.clone(), ns), name)),
    );
    let (events, others) = tokio::join!(events, others);
    for listed in events {
        let items = c.take(listed, "events", Some(ns), "list", None);
        o.events
            .extend(items.into_iter().map(|e| EventRecord::Core(Box::new(e))));
    }
    for (name, pod) in named.iter().zip(others) {
        if let Some(mut pod) = c.take(pod, "pods", Some(ns), "get", Some(name))
            && pod.keep()
            && !o.pods.iter().any(|p| p.metadata.uid == pod.metadata.uid)
        {
            o.pods.push(pod);
        }
    }
    common.land_shared(o);
    if let Some(fatal) = c.fatal.take() {
        return Err(fatal);
    }
    if c.gaps.is_empty() {
        keep_events_about_read_objects(o);
    }
    snapshot.gaps = c.gaps;
    snapshot.origin = common.origin.clone();
    Ok(Some(snapshot))
}
