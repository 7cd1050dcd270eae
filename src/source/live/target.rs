//! The read of one target's chain: a trace in a
//! namespace of 10,000 other Pods should cost what its own objects cost.
//!
//! Instead of every list of the namespace, two waves of small requests:
//! 1. what every read shares ([`read_common`]: discovery, the Nodes, the
//!    kube-system Leases, the controller), the workload by name (a
//!    ModelService's Deployment is named after it by its controller; the
//!    owner UID is checked once the ModelService is read), the kinds a
//!    namespace has one of per workload at most (Services, HPAs, PDBs), and
//!    three guesses: the ReplicaSets (or ControllerRevisions) and Pods
//!    labelled with the workload's name under the two usual keys
//!    ([`GUESSED_KEYS`]), and the EndpointSlices of a Service named after
//!    the workload;
//! 2. the ModelService by name, the HTTPRoutes, the Pods that endpoints
//!    name outside the selection, and the Events of each object, by kind
//!    and name ([`events_about`]: one list, kept as it arrives).
//!
//! The selector is only known once the workload is read, and Events cannot
//! be selected by the labels of the object they are about, so a Pod's
//! Events need its name: the guesses in the first wave are what keep this
//! to two waves. They hold when the selector requires `app.kubernetes.io/name`
//! or `app` to be the workload's name (the modeldock controller's Pods,
//! most charts') and the Service that selects them carries its name; the
//! guessed lists are then narrowed by the selector on this side. When they
//! do not, the selector's lists (or the Services' slices) join the second
//! wave and the Events of what they bring, with any Pod an endpoint names
//! outside them, take a third. What is read is a superset of what
//! `mdiag snapshot` keeps of the chain ([`mdiag_core::chain::chain_objects`]),
//! which replays to the same findings. Whatever does not fit (a Pod or
//! ReplicaSet target, a workload that is not where its name says, a
//! selector that selects everything) reads the namespace as before.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::read::{keep_events_about_read_objects, read_common, read_lists, typed_path};
use super::*;
use mdiag_core::chain::SERVICE_NAME_LABEL;
use mdiag_core::model::{EventRecord, Objects, TargetKind, TargetSpec};

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
    // Wave 1: what every read shares, beside the target's own first reads.
    let (common, first) =
        tokio::join!(read_common(conn, read), first_wave(conn, namespace, target));
    let common = common?;
    match read_chain(conn, &common, namespace, target, first).await? {
        Some(snapshot) => Ok(snapshot),
        None => read_lists(conn, &common, Some(namespace), None).await,
    }
}

/// The labels a workload's Pods are most often selected by, listed in the
/// first wave with the workload's name before its selector is known: the
/// recommended `app.kubernetes.io/name` (the modeldock controller's, and
/// most charts') and the older `app`. When the selector requires one of
/// them to be the name, everything it selects carries that label, so the
/// guess filtered by the selector is exactly the selector's list, a wave
/// earlier; otherwise the selector's lists take a wave of their own.
const GUESSED_KEYS: [&str; 2] = ["app.kubernetes.io/name", "app"];

/// What one label selector selects of the kinds a workload's Pods come with.
struct Selected {
    /// A Deployment's (or a ModelService's) ReplicaSets.
    replica_sets: Option<Result<Vec<ReplicaSet>, kube::Error>>,
    pods: Result<Vec<Pod>, kube::Error>,
    /// A StatefulSet's or DaemonSet's revisions.
    revisions: Option<Result<Vec<ControllerRevision>, kube::Error>>,
}

impl Selected {
    /// Keeps what `selector` selects (the guess it covers was wider).
    fn narrowed(self, selector: &LabelSelector) -> Selected {
        fn keep<K: kube::Resource>(items: &mut Vec<K>, selector: &LabelSelector) {
            items.retain(|o| {
                mdiag_core::chain::label_selector_matches(selector, o.meta().labels.as_ref())
            });
        }
        let Selected {
            mut replica_sets,
            mut pods,
            mut revisions,
        } = self;
        if let Some(Ok(items)) = &mut replica_sets {
            keep(items, selector);
        }
        if let Ok(items) = &mut pods {
            keep(items, selector);
        }
        if let Some(Ok(items)) = &mut revisions {
            keep(items, selector);
        }
        Selected {
            replica_sets,
            pods,
            revisions,
        }
    }
}

/// Lists what `params` selects: ReplicaSets or ControllerRevisions (as the
/// workload has), and Pods.
async fn list_selected(
    conn: &Connection,
    ns: &str,
    params: &ListParams,
    has_replica_sets: bool,
) -> Selected {
    let keep_rs = |o: &mut ReplicaSet| o.keep();
    let keep_pod = |o: &mut Pod| o.keep();
    let keep_revision = |o: &mut ControllerRevision| o.keep();
    let (replica_sets, pods, revisions) = tokio::join!(
        async {
            if has_replica_sets {
                Some(
                    conn.list_pages(&typed_path::<ReplicaSet>(Some(ns)), params, &keep_rs)
                        .await,
                )
            } else {
                None
            }
        },
        async {
            conn.list_pages(&typed_path::<Pod>(Some(ns)), params, &keep_pod)
                .await
        },
        async {
            if has_replica_sets {
                None
            } else {
                Some(
                    conn.list_pages(
                        &typed_path::<ControllerRevision>(Some(ns)),
                        params,
                        &keep_revision,
                    )
                    .await,
                )
            }
        },
    );
    Selected {
        replica_sets,
        pods,
        revisions,
    }
}

/// Whether `selector` requires label `key` to be `value` (so it selects
/// nothing that `key=value` does not).
fn requires(selector: &LabelSelector, key: &str, value: &str) -> bool {
    let by_label = selector
        .match_labels
        .as_ref()
        .is_some_and(|m| m.get(key).map(String::as_str) == Some(value));
    let by_expression = selector.match_expressions.iter().flatten().any(|e| {
        e.key == key
            && e.operator == "In"
            && e.values.as_deref() == Some(std::slice::from_ref(&value.to_string()))
    });
    by_label || by_expression
}

/// The target's reads of the first wave: the workload by name, the
/// namespace's few-per-workload kinds, and the guessed selections.
struct FirstWave {
    workload: Result<Option<Workload>, kube::Error>,
    services: Result<Vec<Service>, kube::Error>,
    hpas: Result<Vec<HorizontalPodAutoscaler>, kube::Error>,
    pdbs: Result<Vec<PodDisruptionBudget>, kube::Error>,
    /// One per [`GUESSED_KEYS`] (none when the name cannot be a label value).
    guesses: Vec<Selected>,
    /// The slices of a Service named after the workload (a chart's and the
    /// modeldock controller's), so that the Pods their endpoints name are
    /// known a wave earlier.
    slices: Option<Result<Vec<EndpointSlice>, kube::Error>>,
}

async fn first_wave(conn: &Connection, ns: &str, target: &TargetSpec) -> FirstWave {
    let client = &conn.client;
    let all = ListParams::default();
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
    let has_replica_sets = !matches!(target.kind, TargetKind::StatefulSet | TargetKind::DaemonSet);
    // A label value is at most 63 characters; a longer name is never one.
    let guessed: Vec<ListParams> = if name.len() <= 63 {
        GUESSED_KEYS
            .iter()
            .map(|key| ListParams::default().labels(&format!("{key}={name}")))
            .collect()
    } else {
        Vec::new()
    };
    let keep_slice = |o: &mut EndpointSlice| o.keep();
    let slices = async {
        if name.len() > 63 {
            return None;
        }
        let params = ListParams::default().labels(&format!("{SERVICE_NAME_LABEL}={name}"));
        Some(
            conn.list_pages(&typed_path::<EndpointSlice>(Some(ns)), &params, &keep_slice)
                .await,
        )
    };
    let (workload, services, hpas, pdbs, guesses, slices) = tokio::join!(
        workload,
        conn.list_pages(&services_path, &all, &keep_service),
        conn.list_pages(&hpas_path, &all, &keep_hpa),
        conn.list_pages(&pdbs_path, &all, &keep_pdb),
        join_all(
            guessed
                .iter()
                .map(|params| list_selected(conn, ns, params, has_replica_sets))
        ),
        slices,
    );
    FirstWave {
        workload,
        services,
        hpas,
        pdbs,
        guesses,
        slices,
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

/// The waves after the first; `None` when the chain is not where the
/// names say.
///
/// The second wave reads the ModelService, the HTTPRoutes, the slices of
/// the Services that select the Pods and the Events of every object known
/// by then. When the guessed selections held the selector's, that is all
/// (two waves); otherwise the selector's own lists join the second wave
/// and the Events of what they bring take a third. An endpoint naming a
/// Pod the selector did not bring costs a last small wave too.
async fn read_chain(
    conn: &Connection,
    common: &Common,
    ns: &str,
    target: &TargetSpec,
    first: FirstWave,
) -> Result<Option<Snapshot>, LiveError> {
    let client = &conn.client;
    let all = ListParams::default();
    let FirstWave {
        workload,
        services,
        hpas,
        pdbs,
        guesses,
        slices: guessed_slices,
    } = first;
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
        trim_meta(&mut d.metadata, Deployment::MANAGED_FIELDS);
    } else if let Workload::StatefulSet(s) = &mut workload {
        trim_meta(&mut s.metadata, StatefulSet::MANAGED_FIELDS);
    } else if let Workload::DaemonSet(d) = &mut workload {
        trim_meta(&mut d.metadata, DaemonSet::MANAGED_FIELDS);
    }
    let Some(selector) = workload.selector().cloned() else {
        return Ok(None);
    };
    let Some(selector_text) = selector_query(&selector) else {
        return Ok(None);
    };
    let name = target.name.as_str();
    let guessed = GUESSED_KEYS
        .iter()
        .zip(guesses)
        .find(|(key, _)| requires(&selector, key, name))
        .map(|(_, selected)| selected.narrowed(&selector));
    let services = c.take(services, "services", Some(ns), "list", None);
    let labels = workload.template_labels().cloned().unwrap_or_default();
    let serving: Vec<String> = services
        .iter()
        .filter(|s| mdiag_core::chain::selector_matches(s, Some(&labels)))
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    let hpas = c.take(hpas, "horizontalpodautoscalers", Some(ns), "list", None);
    let pdbs = c.take(pdbs, "poddisruptionbudgets", Some(ns), "list", None);

    // The platform object: the ModelService target, or the ModelService or
    // InferenceService that controls a Deployment target (when its
    // resource is served), with its resource and kind.
    let owner: Option<(&ApiResource, &'static str, String)> = match target.kind {
        TargetKind::ModelService => common
            .model_service
            .as_ref()
            .map(|r| (r, "ModelService", name.to_string())),
        _ => workload
            .meta()
            .owner_references
            .iter()
            .flatten()
            .filter(|o| o.controller == Some(true))
            .find_map(|o| match o.kind.as_str() {
                "ModelService" => common
                    .model_service
                    .as_ref()
                    .map(|r| (r, "ModelService", o.name.clone())),
                kind => {
                    let platform = mdiag_core::chain::Platform::of_owner_kind(kind)?;
                    common
                        .platforms
                        .get(platform.kind)
                        .map(|r| (r, platform.kind.name(), o.name.clone()))
                }
            }),
    };
    let owner_name = owner.as_ref().map(|(_, _, n)| n.clone());
    let workload_kind = match target.kind {
        TargetKind::StatefulSet => "StatefulSet",
        TargetKind::DaemonSet => "DaemonSet",
        _ => "Deployment",
    };
    let workload_name = workload.meta().name.clone().unwrap_or_default();
    // What Events are read about, by kind and name, as objects become known.
    let mut about: BTreeSet<(&'static str, String)> = BTreeSet::new();
    if let Some((_, kind, owner)) = &owner {
        about.insert((kind, owner.clone()));
    }
    about.insert((workload_kind, workload_name.clone()));
    for s in &serving {
        about.insert(("Service", s.clone()));
    }
    for h in hpas.iter().filter(|h| {
        h.spec
            .as_ref()
            .is_some_and(|s| s.scale_target_ref.name == workload_name)
    }) {
        if let Some(n) = &h.metadata.name {
            about.insert(("HorizontalPodAutoscaler", n.clone()));
        }
    }
    if let Some(selected) = &guessed {
        note_selected(&mut about, selected);
    }

    // Wave 2: the ModelService, the routes, the slices, the Events of what
    // is known, and the selector's lists when no guess held them.
    let model_service = async {
        match &owner {
            Some((r, _, owner)) => {
                let api = Api::<DynamicObject>::namespaced_with(client.clone(), ns, r);
                let _permit = conn.limiter.acquire().await.expect("never closed");
                conn.count();
                Some(api.get_opt(owner).await)
            }
            None => None,
        }
    };
    let routes = async {
        match &common.http_routes {
            Some(r) => {
                let path = DynamicObject::url_path(r, Some(ns));
                let keep = |o: &mut DynamicObject| {
                    trim_meta(&mut o.metadata, ManagedFields::Writes);
                    true
                };
                Some((r.clone(), conn.list_pages(&path, &all, &keep).await))
            }
            None => None,
        }
    };
    // The guessed slices are the Services' when the only Service that
    // selects the Pods is the one named after the workload.
    let guessed_slices = match guessed_slices {
        Some(listed) if serving.iter().all(|s| s == name) => Some(if serving.is_empty() {
            None
        } else {
            Some(listed)
        }),
        _ => None,
    };
    // With the Pods and the slices both known, the Pods endpoints name
    // outside the selection (a stale endpoint, a Service wider than the
    // workload) and their Events join this wave.
    let mut outside: BTreeSet<String> = BTreeSet::new();
    if let (Some(selected), Some(Some(Ok(listed)))) = (&guessed, &guessed_slices) {
        outside = named_outside(listed, selected.pods.as_ref().ok().map(Vec::as_slice));
        for pod in &outside {
            about.insert(("Pod", pod.clone()));
        }
    }
    let keep_slice = |o: &mut EndpointSlice| o.keep();
    let slices = async {
        if let Some(listed) = guessed_slices {
            return listed;
        }
        if serving.is_empty() {
            return None;
        }
        let params = ListParams::default()
            .labels(&format!("{SERVICE_NAME_LABEL} in ({})", serving.join(",")));
        Some(
            conn.list_pages(&typed_path::<EndpointSlice>(Some(ns)), &params, &keep_slice)
                .await,
        )
    };
    let has_replica_sets = matches!(workload, Workload::Deployment(_));
    let selected = async {
        match guessed {
            Some(selected) => selected,
            None => {
                let params = ListParams::default().labels(&selector_text);
                list_selected(conn, ns, &params, has_replica_sets).await
            }
        }
    };
    let outside_pods = join_all(
        outside
            .iter()
            .map(|name| conn.get_opt(Api::<Pod>::namespaced(client.clone(), ns), name)),
    );
    let (model_service, routes, slices, selected, events, outside_pods) = tokio::join!(
        model_service,
        routes,
        slices,
        selected,
        events_about(conn, ns, &about),
        outside_pods,
    );

    let mut snapshot = Snapshot::default();
    let o = &mut snapshot.objects;
    let msvc = match (model_service, &owner) {
        (Some(result), Some((r, kind, _))) => c
            .take(result, &r.plural, Some(ns), "get", owner_name.as_deref())
            .map(|m| (r, *kind, m)),
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
    if target.kind == TargetKind::ModelService && !msvc.as_ref().is_some_and(|(_, _, m)| owned(m)) {
        return Ok(None);
    }
    if let Some((r, kind, mut m)) = msvc {
        trim_meta(&mut m.metadata, ManagedFields::Writes);
        m.types = Some(kube::api::TypeMeta {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
        });
        if let Some(platform) = mdiag_core::chain::Platform::of_owner_kind(kind) {
            platform.file(o, m);
        }
    }
    workload.land(o);
    o.services = services;
    o.hpas = hpas;
    o.pdbs = pdbs;
    let Selected {
        replica_sets,
        pods,
        revisions,
    } = selected;
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
    for listed in events {
        let items = c.take(listed, "events", Some(ns), "list", None);
        o.events
            .extend(items.into_iter().map(|e| EventRecord::Core(Box::new(e))));
    }
    for (name, pod) in outside.iter().zip(outside_pods) {
        land_pod(&mut c, o, ns, name, pod);
    }

    // The last wave, when there is anything left: the Events of what the
    // selector's own lists brought, and the Pods endpoints name that the
    // selector did not bring (to tell a stale endpoint from a Pod with
    // other labels).
    let mut later: BTreeSet<(&'static str, String)> = BTreeSet::new();
    note_objects(&mut later, o);
    let later: BTreeSet<_> = later.difference(&about).cloned().collect();
    let named: BTreeSet<String> = named_outside(&o.endpoint_slices, Some(&o.pods))
        .difference(&outside)
        .cloned()
        .collect();
    if !later.is_empty() || !named.is_empty() {
        let others = join_all(
            named
                .iter()
                .map(|name| conn.get_opt(Api::<Pod>::namespaced(client.clone(), ns), name)),
        );
        let (events, others) = tokio::join!(events_about(conn, ns, &later), others);
        for listed in events {
            let items = c.take(listed, "events", Some(ns), "list", None);
            o.events
                .extend(items.into_iter().map(|e| EventRecord::Core(Box::new(e))));
        }
        for (name, pod) in named.iter().zip(others) {
            land_pod(&mut c, o, ns, name, pod);
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

/// The names of the Pods that `slices`' endpoints name and `pods` does
/// not hold (all of them when the Pods could not be read).
pub(crate) fn named_outside<'a>(
    slices: impl IntoIterator<Item = &'a EndpointSlice>,
    pods: Option<&[Pod]>,
) -> BTreeSet<String> {
    let read: BTreeSet<&str> = pods
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.metadata.uid.as_deref())
        .collect();
    slices
        .into_iter()
        .flat_map(|s| s.endpoints.iter())
        .filter_map(|e| e.target_ref.as_ref())
        .filter(|r| r.kind.as_deref() == Some("Pod"))
        .filter(|r| !r.uid.as_deref().is_some_and(|u| read.contains(u)))
        .filter_map(|r| r.name.clone())
        .collect()
}

/// Adds a Pod read by name, once; a Pod that is gone is not a gap.
fn land_pod(
    c: &mut Collector<'_>,
    o: &mut Objects,
    ns: &str,
    name: &str,
    pod: Result<Option<Pod>, kube::Error>,
) {
    if let Some(mut pod) = c.take(pod, "pods", Some(ns), "get", Some(name))
        && pod.keep()
        && !o.pods.iter().any(|p| p.metadata.uid == pod.metadata.uid)
    {
        o.pods.push(pod);
    }
}

/// Notes the ReplicaSets and Pods of a selection as what Events are about.
fn note_selected(about: &mut BTreeSet<(&'static str, String)>, selected: &Selected) {
    if let Some(Ok(items)) = &selected.replica_sets {
        about.extend(
            items
                .iter()
                .filter_map(|r| r.metadata.name.clone())
                .map(|n| ("ReplicaSet", n)),
        );
    }
    if let Ok(items) = &selected.pods {
        about.extend(
            items
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .map(|n| ("Pod", n)),
        );
    }
}

/// Notes the ReplicaSets and Pods read as what Events are about.
fn note_objects(about: &mut BTreeSet<(&'static str, String)>, o: &Objects) {
    about.extend(
        o.replica_sets
            .iter()
            .filter_map(|r| r.metadata.name.clone())
            .map(|n| ("ReplicaSet", n)),
    );
    about.extend(
        o.pods
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .map(|n| ("Pod", n)),
    );
}

/// The Events about each object, by kind and name: one list of the
/// namespace's Events, each page kept to those about one of them as it
/// arrives. Events carry no labels of their object, so the alternative is a
/// field selector per object; but the apiserver keeps no watch cache of
/// Events, so each such list reads every Event of the namespace from etcd:
/// twenty objects cost twenty scans (5.8 s for a trace in a namespace of
/// 55,000 Events, `cargo xtask bench scale`), where this costs one.
async fn events_about(
    conn: &Connection,
    ns: &str,
    about: &BTreeSet<(&'static str, String)>,
) -> Vec<Result<Vec<CoreEvent>, kube::Error>> {
    if about.is_empty() {
        return Vec::new();
    }
    let wanted: std::collections::HashSet<(&str, &str)> =
        about.iter().map(|(k, n)| (*k, n.as_str())).collect();
    let keep_event = |e: &mut CoreEvent| {
        let r = &e.involved_object;
        let about_one = wanted.contains(&(
            r.kind.as_deref().unwrap_or(""),
            r.name.as_deref().unwrap_or(""),
        ));
        about_one && e.keep()
    };
    // Large pages: the list is read to its end, and each page is a round trip.
    let params = ListParams::default().limit(EVENT_PAGE);
    vec![
        conn.list_pages(&typed_path::<CoreEvent>(Some(ns)), &params, &keep_event)
            .await,
    ]
}

/// Events per page of the namespace's Events list (about 1 KB each).
const EVENT_PAGE: u32 = 2_000;
