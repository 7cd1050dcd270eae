//! Watching one namespace for `gate`: one kube-runtime watcher per resource,
//! each feeding an in-memory store, copied into a [`Snapshot`] whenever the
//! gate judges. The watcher resumes from the last resourceVersion after a
//! disconnect and lists again on 410 Gone; this module only reports what
//! happened to each watch, so the gate knows when its view is whole.
//! Only list and watch requests: mdiag never writes.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Debug;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::{self, Store};
use kube::runtime::utils::{Backoff, WatchStreamExt};
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::live::{self, Connection, LiveError, Served};
use super::plan::{self, ManagedFields, Planned, Where, trim_meta};
use mdiag_core::catalogue::Message;
use mdiag_core::chain::ControllerLocation;
use mdiag_core::model::{Gap, Origin, OriginKind, Snapshot, TargetKind, TargetSpec};

/// What happened to one watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// An object was added, changed or deleted.
    Changed(WatchId),
    /// The watch (re)started with a full list: the first one, or after 410 Gone.
    Listing(WatchId),
    /// The list is complete; the store is whole.
    Synced(WatchId),
    /// A request failed; the watcher retries with backoff unless `gave_up`.
    Failed {
        id: WatchId,
        failure: WatchFailure,
        reason: String,
        gave_up: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchFailure {
    /// 401 or 403: retrying will not help.
    Denied,
    /// The resource is not served (404).
    NotServed,
    /// Connection refused or reset, timeouts, 429 and 5xx: retried.
    Unreachable,
    /// 410 Gone: the resourceVersion was compacted; the watcher lists again.
    Expired,
}

/// A watch: the resource and where it looks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatchId {
    pub resource: &'static str,
    pub namespace: Option<String>,
    /// Set when the watch follows one object by name.
    pub name: Option<String>,
    /// Set when the watch follows what a label selector selects.
    pub labels: Option<String>,
}

impl WatchId {
    fn new(resource: &'static str, namespace: Option<&str>, name: Option<&str>) -> Self {
        WatchId {
            resource,
            namespace: namespace.map(str::to_string),
            name: name.map(str::to_string),
            labels: None,
        }
    }

    fn selecting(mut self, labels: Option<&str>) -> Self {
        self.labels = labels.map(str::to_string);
        self
    }

    pub fn label(&self) -> String {
        let mut s = self.resource.to_string();
        if let Some(name) = &self.name {
            s.push('/');
            s.push_str(name);
        }
        if let Some(labels) = &self.labels {
            s.push_str(" -l ");
            s.push_str(labels);
        }
        if let Some(ns) = &self.namespace {
            s.push_str(" in ");
            s.push_str(ns);
        }
        s
    }
}

/// What to watch.
pub struct WatchPlan<'a> {
    pub namespace: &'a str,
    /// The namespace's every object, or one workload's chain.
    pub scope: &'a WatchScope,
    pub served: &'a Served,
    pub controller_spots: Vec<ControllerLocation>,
    /// The server closes each watch after this long and it is resumed; it must
    /// stay under the client's read timeout, which would cut an idle watch.
    pub watch_timeout: Duration,
}

/// What the gate watches in its namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchScope {
    /// Everything the plan lists: a target whose workload is not there yet,
    /// or whose Pods no selector brings (a Pod or ReplicaSet target).
    Namespace,
    /// One workload's chain (issue 16 item 2).
    Chain(ChainScope),
}

/// One workload's chain as watches select it, so that a gate in a
/// namespace of 10,000 other Pods holds and copies only its own: the
/// workload by name, its ReplicaSets or revisions and its Pods by its
/// selector (which apps/v1 does not let change), and its ModelService by
/// name. The Events of the namespace are watched, but only those about the
/// chain are kept as they arrive. What a namespace has few of (Services,
/// HPAs, PDBs) and the EndpointSlices stay namespace-wide, so that a
/// Service created during the gate still brings its slices; a Pod their
/// endpoints name outside the selector is got by name ([`Feed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainScope {
    /// The Deployment, StatefulSet or DaemonSet.
    pub workload: String,
    /// Its Pods' selector, as the API takes it in `labelSelector`.
    pub selector: String,
    /// The ModelService that owns it.
    pub model_service: Option<String>,
}

/// The longest base the apiserver keeps of a `generateName`: a generated
/// name is the base cut to this many characters plus five random ones.
const GENERATED_BASE_MAX: usize = 58;

impl ChainScope {
    /// How a watch of `resource` in the namespace selects the chain: by
    /// name, by labels, or not at all (the whole namespace).
    pub fn selects(&self, resource: &str) -> (Option<&str>, Option<&str>) {
        match resource {
            "deployments" | "statefulsets" | "daemonsets" => (Some(&self.workload), None),
            "replicasets" | "pods" | "controllerrevisions" => (None, Some(&self.selector)),
            "modelservices" => (self.model_service.as_deref(), None),
            _ => (None, None),
        }
    }

    /// Whether the Events about an object of `kind` named `name` may be
    /// about the chain. The Pods, ReplicaSets and revisions of a workload
    /// are named after it (`web-7d4b9c-x2x9z`, `shard-0`), so Events about
    /// those kinds are kept when the name starts as theirs do; a neighbour
    /// whose name starts the same way (`web-api`) only adds Events nothing
    /// reads. Of the workloads and ModelServices, only the chain's own;
    /// Events about other kinds are few and all kept.
    pub fn keeps_events_about(&self, kind: &str, name: &str) -> bool {
        match kind {
            "Pod" | "ReplicaSet" | "ControllerRevision" => {
                let prefix = format!("{}-", self.workload);
                let cut = prefix.len().min(GENERATED_BASE_MAX);
                name.as_bytes().starts_with(&prefix.as_bytes()[..cut])
            }
            "Deployment" | "StatefulSet" | "DaemonSet" => name == self.workload,
            "ModelService" => self.model_service.as_deref().is_none_or(|m| m == name),
            _ => true,
        }
    }
}

/// Retries quickly: a gate waits on a person's CI job, and an apiserver that
/// restarts is back in seconds. 250 ms doubling to 4 s.
#[derive(Debug, Clone)]
struct QuickBackoff {
    next: Duration,
}

const BACKOFF_FIRST: Duration = Duration::from_millis(250);
/// The longest a watcher sleeps between retries.
pub const BACKOFF_MAX: Duration = Duration::from_secs(4);

impl Iterator for QuickBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let now = self.next;
        self.next = (self.next * 2).min(BACKOFF_MAX);
        Some(now)
    }
}

impl Backoff for QuickBackoff {
    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }
}

/// One typed watch's store, as it goes into a snapshot.
trait Dump: Send + Sync {
    fn dump(&self, objects: &mut mdiag_core::model::Objects);
}

impl<K: Planned> Dump for Store<K> {
    fn dump(&self, objects: &mut mdiag_core::model::Objects) {
        let mut items: Vec<K> = self.state().iter().map(|arc| (**arc).clone()).collect();
        sort_by_name(&mut items);
        K::land(items, objects);
    }
}

/// Sorted by namespace and name; one copy of each UID (two watches may
/// hold the same object: the controller's Deployment in the target namespace).
fn sort_by_name<K: kube::Resource>(items: &mut Vec<K>) {
    items.sort_by(|a, b| {
        let key = |o: &K| (o.meta().namespace.clone(), o.meta().name.clone());
        key(a).cmp(&key(b))
    });
    items.dedup_by(|a, b| a.meta().uid.is_some() && a.meta().uid == b.meta().uid);
}

/// The stores, one per watch.
#[derive(Default)]
struct Stores {
    typed: Vec<Box<dyn Dump>>,
    model_services: Vec<(ApiResource, Store<DynamicObject>)>,
    http_routes: Vec<(ApiResource, Store<DynamicObject>)>,
}

/// Running watches and their stores.
pub struct WatchSet {
    /// How to ask for each watch's resource again, to probe it.
    resources: BTreeMap<WatchId, ApiResource>,
    stores: Stores,
    signals: mpsc::UnboundedReceiver<Signal>,
    tasks: Vec<JoinHandle<()>>,
    ids: Vec<WatchId>,
}

impl Drop for WatchSet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

fn watch_config(plan: &WatchPlan, id: &WatchId) -> watcher::Config {
    let seconds = plan.watch_timeout.as_secs().clamp(5, 290) as u32;
    let mut config = watcher::Config::default().timeout(seconds);
    if let Some(n) = &id.name {
        config = config.fields(&format!("metadata.name={n}"));
    }
    if let Some(labels) = &id.labels {
        config = config.labels(labels);
    }
    config
}

/// What an HTTP status from the apiserver means for a watch.
fn by_status(code: u16, message: &str) -> (WatchFailure, String) {
    let failure = match code {
        401 | 403 => WatchFailure::Denied,
        404 => WatchFailure::NotServed,
        410 => WatchFailure::Expired,
        _ => WatchFailure::Unreachable,
    };
    (failure, message.to_string())
}

fn classify(err: &watcher::Error) -> (WatchFailure, String) {
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => match e {
            kube::Error::Api(s) => by_status(s.code, &s.message),
            other => (WatchFailure::Unreachable, super::live::error_chain(other)),
        },
        watcher::Error::WatchError(status) => by_status(status.code, &status.message),
        watcher::Error::NoResourceVersion => (WatchFailure::Unreachable, err.to_string()),
    }
}

/// Runs one watcher into a store, reporting what happens on `tx`. A denied
/// or unserved resource ends the watch: retrying would not change it.
/// `keep` trims each object as it arrives, as a list's pages are trimmed,
/// and drops those it says no to: they never reach the store nor wake the
/// gate. It must say the same of every version of an object.
fn spawn<K>(
    api: Api<K>,
    config: watcher::Config,
    writer: reflector::store::Writer<K>,
    id: WatchId,
    tx: mpsc::UnboundedSender<Signal>,
    keep: impl Fn(&mut K) -> bool + Send + 'static,
) -> JoinHandle<()>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + std::hash::Hash + Send + Sync,
{
    tokio::spawn(async move {
        let kept = watcher::watcher(api, config)
            .backoff(QuickBackoff {
                next: BACKOFF_FIRST,
            })
            .filter_map(move |item| {
                let item = match item {
                    Ok(Event::Apply(mut o)) => keep(&mut o).then_some(Ok(Event::Apply(o))),
                    Ok(Event::InitApply(mut o)) => keep(&mut o).then_some(Ok(Event::InitApply(o))),
                    other => Some(other),
                };
                std::future::ready(item)
            });
        let stream = reflector::reflector(writer, kept);
        futures::pin_mut!(stream);
        // A denial before the first whole list is the identity's rights: give
        // up. After it, an apiserver restarting may deny until its RBAC
        // cache is warm: keep retrying.
        let mut ever_synced = false;
        while let Some(item) = stream.next().await {
            let signal = match item {
                Ok(Event::Init) => Signal::Listing(id.clone()),
                Ok(Event::InitDone) => {
                    ever_synced = true;
                    Signal::Synced(id.clone())
                }
                // Objects of a list in progress count once the list is whole.
                Ok(Event::InitApply(_)) => continue,
                Ok(Event::Apply(_) | Event::Delete(_)) => Signal::Changed(id.clone()),
                Err(e) => {
                    let (failure, reason) = classify(&e);
                    let gave_up = !ever_synced
                        && matches!(failure, WatchFailure::Denied | WatchFailure::NotServed);
                    Signal::Failed {
                        id: id.clone(),
                        failure,
                        reason,
                        gave_up,
                    }
                }
            };
            let stop = matches!(signal, Signal::Failed { gave_up: true, .. });
            if tx.send(signal).is_err() || stop {
                return;
            }
        }
    })
}

impl WatchSet {
    /// Starts every watch of the plan. Nothing is read yet when it returns:
    /// signals say when each store is whole.
    pub fn start(conn: &Connection, plan: &WatchPlan) -> WatchSet {
        let (tx, rx) = mpsc::unbounded_channel();
        let client = &conn.client;
        let ns = plan.namespace;
        let mut set = WatchSet {
            resources: BTreeMap::new(),
            stores: Stores::default(),
            signals: rx,
            tasks: Vec::new(),
            ids: Vec::new(),
        };

        // The plan's lists, each as a watch in the namespace (or where the
        // plan says), or of the chain in it.
        struct Starter<'p> {
            set: &'p mut WatchSet,
            plan: &'p WatchPlan<'p>,
            client: &'p kube::Client,
            tx: &'p mpsc::UnboundedSender<Signal>,
        }
        impl Starter<'_> {
            fn watch<K: Planned>(
                &mut self,
                namespace: Option<&str>,
                name: Option<&str>,
                labels: Option<&str>,
            ) {
                let id = WatchId::new(K::RESOURCE, namespace, name).selecting(labels);
                let api = K::api(self.client.clone(), namespace);
                let (store, writer) = reflector::store::<K>();
                let chain = match self.plan.scope {
                    WatchScope::Chain(c) => Some(c.clone()),
                    WatchScope::Namespace => None,
                };
                let keep = move |o: &mut K| {
                    let about_chain = match (&chain, o.subject()) {
                        (Some(c), Some((kind, name))) => c.keeps_events_about(kind, name),
                        _ => true,
                    };
                    about_chain && o.keep()
                };
                let handle = spawn(
                    api,
                    watch_config(self.plan, &id),
                    writer,
                    id.clone(),
                    self.tx.clone(),
                    keep,
                );
                self.set.stores.typed.push(Box::new(store));
                self.set.tasks.push(handle);
                self.set
                    .resources
                    .insert(id.clone(), ApiResource::erase::<K>(&()));
                self.set.ids.push(id);
            }
        }
        impl plan::Visit for Starter<'_> {
            fn visit<K: Planned>(&mut self, at: Where) {
                let ns = at.namespace(Some(self.plan.namespace));
                let (name, labels) = match (self.plan.scope, at) {
                    (WatchScope::Chain(c), Where::Scope) => c.selects(K::RESOURCE),
                    _ => (None, None),
                };
                self.watch::<K>(ns, name, labels);
            }
        }
        let mut starter = Starter {
            set: &mut set,
            plan,
            client,
            tx: &tx,
        };
        plan::each_list(&mut starter);
        let chain_workload = match plan.scope {
            WatchScope::Chain(c) => Some(c.workload.as_str()),
            WatchScope::Namespace => None,
        };
        for spot in &plan.controller_spots {
            let spot_ns = spot.namespace.as_str();
            let name = Some(spot.name.as_str());
            // In the gate's namespace the Deployments are watched already:
            // all of them, or the chain's by name.
            let watched = spot_ns == ns && chain_workload.is_none_or(|w| w == spot.name);
            if !watched {
                starter.watch::<Deployment>(Some(spot_ns), name, None);
            }
            if spot_ns != "kube-system" {
                starter.watch::<Lease>(Some(spot_ns), name, None);
            }
        }
        for (resource, field) in [
            (&plan.served.model_service, 0),
            (&plan.served.http_routes, 1),
        ] {
            let Some(r) = resource else { continue };
            let plural: &'static str = if field == 0 {
                "modelservices"
            } else {
                "httproutes"
            };
            let name = match plan.scope {
                WatchScope::Chain(c) => c.selects(plural).0,
                WatchScope::Namespace => None,
            };
            let id = WatchId::new(plural, Some(ns), name);
            let api = Api::<DynamicObject>::namespaced_with(client.clone(), ns, r);
            let writer = reflector::store::Writer::new(r.clone());
            let store = writer.as_reader();
            let keep = |o: &mut DynamicObject| {
                trim_meta(&mut o.metadata, ManagedFields::Writes);
                true
            };
            let handle = spawn(
                api,
                watch_config(plan, &id),
                writer,
                id.clone(),
                tx.clone(),
                keep,
            );
            if field == 0 {
                set.stores.model_services.push((r.clone(), store));
            } else {
                set.stores.http_routes.push((r.clone(), store));
            }
            set.tasks.push(handle);
            set.resources.insert(id.clone(), r.clone());
            set.ids.push(id);
        }
        set
    }

    /// Asks for one object of a watch's resource, as the watch's identity:
    /// whether the API answers and allows it again.
    pub async fn probe(&self, client: &kube::Client, id: &WatchId) -> bool {
        let Some(r) = self.resources.get(id) else {
            return false;
        };
        let api: Api<DynamicObject> = match &id.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, r),
            None => Api::all_with(client.clone(), r),
        };
        let mut params = kube::api::ListParams::default().limit(1);
        if let Some(name) = &id.name {
            params = params.fields(&format!("metadata.name={name}"));
        }
        api.list_metadata(&params).await.is_ok()
    }

    /// Every watch started.
    pub fn ids(&self) -> &[WatchId] {
        &self.ids
    }

    /// The next thing that happened to a watch, or `None` if all ended.
    pub async fn next(&mut self) -> Option<Signal> {
        self.signals.recv().await
    }

    /// Another signal if one is already waiting.
    pub fn try_next(&mut self) -> Option<Signal> {
        self.signals.try_recv().ok()
    }

    /// The stores as a snapshot, with `gaps` for what could not be watched.
    pub fn snapshot(&self, origin: &Origin, gaps: &[Gap]) -> Snapshot {
        let dynamic = |stores: &[(ApiResource, Store<DynamicObject>)]| {
            let mut out = Vec::new();
            for (r, store) in stores {
                for arc in store.state() {
                    let mut item = (*arc).clone();
                    // Watched items come without apiVersion and kind, as lists do.
                    item.types = Some(kube::api::TypeMeta {
                        api_version: r.api_version.clone(),
                        kind: r.kind.clone(),
                    });
                    out.push(item);
                }
            }
            out.sort_by(|a: &DynamicObject, b| a.metadata.name.cmp(&b.metadata.name));
            out
        };
        let s = &self.stores;
        let mut snapshot = Snapshot::default();
        let o = &mut snapshot.objects;
        for store in &s.typed {
            store.dump(o);
        }
        sort_by_name(&mut o.deployments);
        sort_by_name(&mut o.leases);
        o.model_services = dynamic(&s.model_services);
        o.http_routes = dynamic(&s.http_routes);
        snapshot.gaps = gaps.to_vec();
        snapshot.origin = Origin {
            kind: OriginKind::Live,
            ..origin.clone()
        };
        snapshot
    }
}

/// The chain a gate on `target` watches: its workload's, when the workload
/// is there with a selector the API can take; else the namespace (a
/// workload not created yet, a Pod or ReplicaSet target). A ModelService's
/// Deployment is named after it by its controller, and must be owned by it.
/// One request, before the watches start.
async fn chain_scope(conn: &Connection, namespace: &str, target: &TargetSpec) -> WatchScope {
    use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
    let client = || conn.client.clone();
    let name = target.name.as_str();
    let read = match target.kind {
        TargetKind::ModelService | TargetKind::Deployment => conn
            .get_opt(Api::<Deployment>::namespaced(client(), namespace), name)
            .await
            .map(|d| d.map(|d| (d.metadata, d.spec.map(|s| s.selector)))),
        TargetKind::StatefulSet => conn
            .get_opt(Api::<StatefulSet>::namespaced(client(), namespace), name)
            .await
            .map(|s| s.map(|s| (s.metadata, s.spec.map(|s| s.selector)))),
        TargetKind::DaemonSet => conn
            .get_opt(Api::<DaemonSet>::namespaced(client(), namespace), name)
            .await
            .map(|d| d.map(|d| (d.metadata, d.spec.map(|s| s.selector)))),
        _ => return WatchScope::Namespace,
    };
    let Ok(Some((meta, Some(selector)))) = read else {
        return WatchScope::Namespace;
    };
    let owner = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == "ModelService" && o.controller == Some(true))
        .map(|o| o.name.clone());
    if target.kind == TargetKind::ModelService && owner.as_deref() != Some(name) {
        return WatchScope::Namespace;
    }
    match live::selector_query(&selector) {
        Some(selector) => WatchScope::Chain(ChainScope {
            workload: name.to_string(),
            selector,
            model_service: owner,
        }),
        None => WatchScope::Namespace,
    }
}

/// How often the view is offered again without news: time-bound findings (a
/// Lease not renewed, a controller past its grace) and the probe for a lost API.
const TICK: Duration = Duration::from_secs(1);

/// What a [`Feed`] has next for the gate.
#[derive(Debug)]
pub enum FeedEvent {
    /// A whole and current view of the namespace, to judge.
    View(Box<Snapshot>),
    /// Something the user should know about the watches (a lost watch, a
    /// relist, the API answering again).
    Note(Message),
    /// The identity may not watch part of the chain: nothing can be decided.
    Denied(Message),
    /// Every watch ended.
    Ended,
}

/// The watches of one namespace as a stream of views to judge: a view only
/// when every watch has a whole list and none is failing, at each change and
/// once a second. A watch that failed is trusted again once its own resource
/// answers a probe and its watcher's back-off has passed.
pub struct Feed {
    watches: WatchSet,
    health: WatchHealth,
    origin: Origin,
    namespace: String,
    kind: TargetKind,
    scope: WatchScope,
    /// The Pods endpoints named outside the chain's selector, by name, as
    /// got (`None`: not there): an endpoint's Pod is gone only if no Pod of
    /// that name and UID exists, whatever its labels.
    named_outside: BTreeMap<String, Option<k8s_openapi::api::core::v1::Pod>>,
    connection: Connection,
    tick: tokio::time::Interval,
    /// When the API answered again after failing watches.
    answered_again: Option<Instant>,
    relists_shown: u32,
    disconnects: u32,
    pending: VecDeque<FeedEvent>,
}

impl Feed {
    /// Discovers what is served and starts the watches. A ModelService
    /// target needs its resource served; the target's kind also says which
    /// watches are its chain (a denied one of those decides nothing).
    pub async fn start(
        conn: &Connection,
        namespace: &str,
        resource: Option<&str>,
        controller: Option<&ControllerLocation>,
        target: &TargetSpec,
    ) -> Result<Feed, LiveError> {
        let kind = target.kind;
        let model_service = kind == TargetKind::ModelService;
        let wanted = resource.unwrap_or("msvc");
        let served = live::discover_served(conn, wanted).await?;
        if served.model_service.is_none() && model_service {
            return Err(LiveError::NoResource {
                wanted: wanted.to_string(),
            });
        }
        let origin = Origin {
            kind: OriginKind::Live,
            location: conn.server.clone(),
            context: conn.context.clone(),
            server_version: live::server_version(conn).await,
            ..Origin::default()
        };
        let watch_timeout = conn
            .request_timeout()
            .map_or(Duration::from_secs(290), |t| {
                t.saturating_sub(Duration::from_secs(5))
            });
        let scope = chain_scope(conn, namespace, target).await;
        let watches = WatchSet::start(
            conn,
            &WatchPlan {
                namespace,
                scope: &scope,
                served: &served,
                controller_spots: ControllerLocation::spots(controller, Some(namespace)),
                watch_timeout,
            },
        );
        let health = WatchHealth::new(watches.ids());
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Ok(Feed {
            watches,
            health,
            origin,
            namespace: namespace.to_string(),
            kind,
            scope,
            named_outside: BTreeMap::new(),
            connection: conn.clone(),
            tick,
            answered_again: None,
            relists_shown: 0,
            disconnects: 0,
            pending: VecDeque::new(),
        })
    }

    /// Watches that listed again (410 Gone, or a lost watch).
    pub fn relists(&self) -> u32 {
        self.health.relists
    }

    /// Every watch the feed runs.
    pub fn watch_ids(&self) -> &[WatchId] {
        self.watches.ids()
    }

    /// Times the API stopped answering.
    pub fn disconnects(&self) -> u32 {
        self.disconnects
    }

    /// The watch that is failing now and why, in words.
    pub fn failing(&self) -> Option<String> {
        self.health
            .failing()
            .map(|(id, why)| format!("{}: {why}", id.label()))
    }

    /// The next event; cancel-safe between events.
    pub async fn next(&mut self) -> FeedEvent {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return event;
            }
            let dirty = tokio::select! {
                signal = self.watches.next() => {
                    let Some(signal) = signal else {
                        return FeedEvent::Ended;
                    };
                    let mut batch = vec![signal];
                    while let Some(more) = self.watches.try_next() {
                        batch.push(more);
                    }
                    let mut dirty = false;
                    for s in &batch {
                        dirty |= self.record(s);
                    }
                    dirty
                }
                _ = self.tick.tick() => {
                    self.on_tick().await;
                    true
                }
            };
            let workload = match &self.scope {
                WatchScope::Chain(c) => Some(c.workload.as_str()),
                WatchScope::Namespace => None,
            };
            if let Some(gap) = self
                .health
                .chain_denied(&self.namespace, self.kind, workload)
            {
                self.pending.push_back(FeedEvent::Denied(
                    Message::new("gate.may_not_watch")
                        .arg("resource", &gap.resource)
                        .arg("namespace", &self.namespace)
                        .arg("reason", &gap.reason),
                ));
                continue;
            }
            // Judge only a whole, current view: no verdict on a half-listed
            // or stale store.
            if dirty && self.health.synced() && self.health.failing().is_none() {
                let mut view = self.watches.snapshot(&self.origin, &self.health.gaps());
                if matches!(self.scope, WatchScope::Chain(_)) {
                    self.add_named_outside(&mut view).await;
                }
                self.pending.push_back(FeedEvent::View(Box::new(view)));
            }
        }
    }

    /// Adds to a view of the chain the Pods its endpoints name that the
    /// selector did not bring (a Service wider than the workload, a Pod
    /// relabelled), got by name once while they are named, so that an
    /// endpoint is called stale only when its Pod is gone, as in a view of
    /// the namespace. A get that fails is tried again at the next view.
    async fn add_named_outside(&mut self, view: &mut Snapshot) {
        let o = &mut view.objects;
        // The slices of the Services that select the chain's Pods: the
        // slices are watched namespace-wide, and other Services' Pods are
        // none of the chain's.
        let serving: std::collections::HashSet<&str> = o
            .services
            .iter()
            .filter(|s| {
                o.pods
                    .iter()
                    .any(|p| mdiag_core::chain::selector_matches(s, p.metadata.labels.as_ref()))
            })
            .filter_map(|s| s.metadata.name.as_deref())
            .collect();
        let slices = o.endpoint_slices.iter().filter(|s| {
            s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(mdiag_core::chain::SERVICE_NAME_LABEL))
                .is_some_and(|n| serving.contains(n.as_str()))
        });
        let named = live::named_outside(slices, Some(&o.pods));
        self.named_outside.retain(|name, _| named.contains(name));
        let missing: Vec<&String> = named
            .iter()
            .filter(|n| !self.named_outside.contains_key(*n))
            .collect();
        let api = Api::<k8s_openapi::api::core::v1::Pod>::namespaced(
            self.connection.client.clone(),
            &self.namespace,
        );
        let got = futures::future::join_all(
            missing
                .iter()
                .map(|name| self.connection.get_opt(api.clone(), name)),
        )
        .await;
        for (name, pod) in missing.into_iter().zip(got) {
            if let Ok(mut pod) = pod {
                if let Some(p) = pod.as_mut() {
                    p.keep();
                }
                self.named_outside.insert(name.clone(), pod);
            }
        }
        for pod in self.named_outside.values().flatten() {
            if !o.pods.iter().any(|p| p.metadata.uid == pod.metadata.uid) {
                o.pods.push(pod.clone());
            }
        }
    }

    fn record(&mut self, s: &Signal) -> bool {
        let was_failing = self.health.failing().is_some();
        let dirty = self.health.record(s);
        if let Signal::Failed {
            id,
            failure,
            reason,
            ..
        } = s
        {
            self.answered_again = None;
            let note = match failure {
                WatchFailure::Unreachable if !was_failing => {
                    self.disconnects += 1;
                    Some(
                        Message::new("gate.watch_lost")
                            .arg("watch", id.label())
                            .arg("reason", reason.as_str()),
                    )
                }
                WatchFailure::Expired => {
                    Some(Message::new("gate.watch_expired").arg("watch", id.label()))
                }
                WatchFailure::Denied => Some(
                    Message::new("gate.watch_denied")
                        .arg("watch", id.label())
                        .arg("reason", reason.as_str()),
                ),
                _ => None,
            };
            self.pending.extend(note.map(FeedEvent::Note));
        }
        if self.health.relists > self.relists_shown {
            self.relists_shown = self.health.relists;
            self.pending.push_back(FeedEvent::Note(
                Message::new("gate.relisted").arg("n", self.health.relists),
            ));
        }
        dirty
    }

    async fn on_tick(&mut self) {
        if self.health.failing().is_none() {
            return;
        }
        match self.answered_again {
            None => {
                let mut all = true;
                for id in self.health.failing_ids() {
                    all &= self.watches.probe(&self.connection.client, &id).await;
                }
                if all {
                    self.answered_again = Some(Instant::now());
                }
            }
            // Each watcher retries within its backoff: after that, one that
            // has not failed again is watching again.
            Some(at) if at.elapsed() > BACKOFF_MAX + TICK => {
                self.health.recovered();
                self.answered_again = None;
                self.pending
                    .push_back(FeedEvent::Note(Message::new("gate.answers_again")));
            }
            Some(_) => {}
        }
    }
}

/// Tracks each watch's state from its signals: whether the gate's view is
/// whole and current, and what could not be read.
#[derive(Debug, Default)]
pub struct WatchHealth {
    states: BTreeMap<WatchId, WatchState>,
    /// Lists that started again after the first (410 Gone or a lost watch).
    pub relists: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WatchState {
    Listing,
    Synced,
    /// Failing since the first failure; the watcher retries.
    Failing {
        reason: String,
    },
    /// Will not be read: denied or not served.
    Gap {
        failure: WatchFailure,
        reason: String,
    },
}

impl WatchHealth {
    pub fn new(ids: &[WatchId]) -> Self {
        WatchHealth {
            states: ids
                .iter()
                .map(|id| (id.clone(), WatchState::Listing))
                .collect(),
            relists: 0,
        }
    }

    /// Records a signal; returns whether the objects may have changed.
    pub fn record(&mut self, signal: &Signal) -> bool {
        match signal {
            Signal::Changed(id) => {
                // An event proves the watch is flowing again.
                if let Some(s @ WatchState::Failing { .. }) = self.states.get_mut(id) {
                    *s = WatchState::Synced;
                }
                true
            }
            Signal::Listing(id) => {
                let before = self.states.insert(id.clone(), WatchState::Listing);
                if matches!(
                    before,
                    Some(WatchState::Synced | WatchState::Failing { .. })
                ) {
                    self.relists += 1;
                }
                false
            }
            Signal::Synced(id) => {
                self.states.insert(id.clone(), WatchState::Synced);
                true
            }
            Signal::Failed {
                id,
                failure,
                reason,
                gave_up,
            } => {
                let state = if *gave_up {
                    WatchState::Gap {
                        failure: *failure,
                        reason: reason.clone(),
                    }
                } else {
                    WatchState::Failing {
                        reason: reason.clone(),
                    }
                };
                self.states.insert(id.clone(), state);
                *gave_up
            }
        }
    }

    /// After the API answered again, a watch that failed is trusted once its
    /// watcher has had time to resume (its backoff), unless it failed again.
    pub fn recovered(&mut self) {
        for s in self.states.values_mut() {
            if matches!(s, WatchState::Failing { .. }) {
                *s = WatchState::Synced;
            }
        }
    }

    /// Every watch has a whole list (or will never have one).
    pub fn synced(&self) -> bool {
        self.states
            .values()
            .all(|s| matches!(s, WatchState::Synced | WatchState::Gap { .. }))
    }

    /// The first failing watch and why, while any fails.
    pub fn failing(&self) -> Option<(&WatchId, &str)> {
        self.states.iter().find_map(|(id, s)| match s {
            WatchState::Failing { reason } => Some((id, reason.as_str())),
            _ => None,
        })
    }

    /// Every watch that is failing now.
    pub fn failing_ids(&self) -> Vec<WatchId> {
        self.states
            .iter()
            .filter(|(_, s)| matches!(s, WatchState::Failing { .. }))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// What could not be watched, as gaps.
    pub fn gaps(&self) -> Vec<Gap> {
        self.states
            .iter()
            .filter_map(|(id, s)| match s {
                WatchState::Gap { failure, reason } if *failure != WatchFailure::NotServed => {
                    Some(Gap {
                        resource: id.resource.to_string(),
                        namespace: id.namespace.clone(),
                        verb: "watch".into(),
                        name: id.name.clone(),
                        reason: reason.clone(),
                        complete_with: None,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// A watch of the target's own chain was denied: the gate cannot
    /// decide. A StatefulSet's or DaemonSet's chain has its set and its
    /// ControllerRevisions instead of Deployments and ReplicaSets. A watch
    /// by name is of the chain when it follows the `workload`.
    pub fn chain_denied(
        &self,
        namespace: &str,
        kind: TargetKind,
        workload: Option<&str>,
    ) -> Option<Gap> {
        const SHARED: &[&str] = &["pods", "services", "endpointslices"];
        let own: &[&str] = match kind {
            TargetKind::StatefulSet => &["statefulsets", "controllerrevisions"],
            TargetKind::DaemonSet => &["daemonsets", "controllerrevisions"],
            TargetKind::ReplicaSet => &["replicasets", "deployments"],
            _ => &["deployments", "replicasets", "modelservices"],
        };
        self.gaps().into_iter().find(|g| {
            (SHARED.contains(&g.resource.as_str()) || own.contains(&g.resource.as_str()))
                && g.namespace.as_deref() == Some(namespace)
                && (g.name.is_none() || g.name.as_deref() == workload)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(resource: &'static str) -> WatchId {
        WatchId::new(resource, Some("ns"), None)
    }

    #[test]
    fn the_view_is_whole_only_when_every_watch_listed() {
        let ids = [id("pods"), id("events")];
        let mut health = WatchHealth::new(&ids);
        assert!(!health.synced());
        health.record(&Signal::Synced(id("pods")));
        assert!(!health.synced());
        health.record(&Signal::Failed {
            id: id("events"),
            failure: WatchFailure::Denied,
            reason: "forbidden".into(),
            gave_up: true,
        });
        assert!(health.synced(), "a denied watch is a gap, not a wait");
        assert_eq!(health.gaps().len(), 1);
        assert_eq!(health.gaps()[0].verb, "watch");
        assert!(
            health
                .chain_denied("ns", TargetKind::Deployment, None)
                .is_none(),
            "events are not the chain"
        );
    }

    #[test]
    fn a_failing_watch_holds_the_view_until_it_flows_or_the_api_answers() {
        let ids = [id("pods")];
        let mut health = WatchHealth::new(&ids);
        health.record(&Signal::Synced(id("pods")));
        health.record(&Signal::Failed {
            id: id("pods"),
            failure: WatchFailure::Unreachable,
            reason: "connection refused".into(),
            gave_up: false,
        });
        assert!(!health.synced());
        assert_eq!(health.failing().unwrap().1, "connection refused");
        health.record(&Signal::Changed(id("pods")));
        assert!(health.synced());
        health.record(&Signal::Failed {
            id: id("pods"),
            failure: WatchFailure::Unreachable,
            reason: "connection refused".into(),
            gave_up: false,
        });
        health.recovered();
        assert!(health.synced());
    }

    #[test]
    fn a_second_list_is_counted_as_a_relist() {
        let ids = [id("pods")];
        let mut health = WatchHealth::new(&ids);
        health.record(&Signal::Listing(id("pods")));
        health.record(&Signal::Synced(id("pods")));
        assert_eq!(health.relists, 0);
        health.record(&Signal::Failed {
            id: id("pods"),
            failure: WatchFailure::Expired,
            reason: "too old resource version".into(),
            gave_up: false,
        });
        health.record(&Signal::Listing(id("pods")));
        assert_eq!(health.relists, 1);
        assert!(!health.synced());
    }

    fn chain(workload: &str) -> ChainScope {
        ChainScope {
            workload: workload.into(),
            selector: format!("app={workload}"),
            model_service: Some(workload.into()),
        }
    }

    #[test]
    fn a_chain_watches_its_workload_by_name_and_its_pods_by_selector() {
        let c = chain("web");
        assert_eq!(c.selects("deployments"), (Some("web"), None));
        assert_eq!(c.selects("statefulsets"), (Some("web"), None));
        assert_eq!(c.selects("modelservices"), (Some("web"), None));
        for resource in ["pods", "replicasets", "controllerrevisions"] {
            assert_eq!(c.selects(resource), (None, Some("app=web")), "{resource}");
        }
        for resource in ["services", "endpointslices", "events", "nodes"] {
            assert_eq!(c.selects(resource), (None, None), "{resource}");
        }
        let plain = ChainScope {
            model_service: None,
            ..chain("web")
        };
        assert_eq!(plain.selects("modelservices"), (None, None));
    }

    #[test]
    fn a_chain_keeps_the_events_about_what_is_named_after_its_workload() {
        let c = chain("web");
        assert!(c.keeps_events_about("Pod", "web-7d4b9c-x2x9z"));
        assert!(c.keeps_events_about("ReplicaSet", "web-7d4b9c"));
        assert!(c.keeps_events_about("Pod", "web-0"));
        assert!(!c.keeps_events_about("Pod", "shop-7d4b9c-x2x9z"));
        assert!(!c.keeps_events_about("Pod", "web"));
        assert!(!c.keeps_events_about("ControllerRevision", "webx-1"));
        // Other kinds are few: all kept.
        assert!(c.keeps_events_about("Service", "anything"));
        assert!(c.keeps_events_about("HorizontalPodAutoscaler", "other"));
        assert!(c.keeps_events_about("Deployment", "web"));
        assert!(!c.keeps_events_about("Deployment", "web-api"));
        assert!(!c.keeps_events_about("ModelService", "shop"));
        // A long name: the apiserver cuts a generateName base to 58
        // characters before adding five of its own.
        let long = "a".repeat(60);
        let c = chain(&long);
        let generated = format!("{}x2x9z", &format!("{long}-7d4b9c-")[..58]);
        assert!(c.keeps_events_about("Pod", &generated));
        assert!(!c.keeps_events_about("Pod", &format!("b{}", &generated[1..])));
    }

    #[test]
    fn a_denied_watch_by_name_is_the_chain_when_it_follows_the_workload() {
        let by_name = |name: &str| WatchId::new("deployments", Some("ns"), Some(name));
        let mut health = WatchHealth::new(&[by_name("web"), by_name("modeldock-controller")]);
        health.record(&Signal::Failed {
            id: by_name("modeldock-controller"),
            failure: WatchFailure::Denied,
            reason: "forbidden".into(),
            gave_up: true,
        });
        assert!(
            health
                .chain_denied("ns", TargetKind::Deployment, Some("web"))
                .is_none(),
            "the controller's Deployment is not the chain"
        );
        health.record(&Signal::Failed {
            id: by_name("web"),
            failure: WatchFailure::Denied,
            reason: "forbidden".into(),
            gave_up: true,
        });
        let gap = health
            .chain_denied("ns", TargetKind::Deployment, Some("web"))
            .unwrap();
        assert_eq!(gap.name.as_deref(), Some("web"));
    }

    #[test]
    fn a_denied_pod_watch_means_the_chain_cannot_be_judged() {
        let ids = [id("pods")];
        let mut health = WatchHealth::new(&ids);
        health.record(&Signal::Failed {
            id: id("pods"),
            failure: WatchFailure::Denied,
            reason: "pods is forbidden".into(),
            gave_up: true,
        });
        assert_eq!(
            health
                .chain_denied("ns", TargetKind::Deployment, None)
                .unwrap()
                .resource,
            "pods"
        );
    }

    #[test]
    fn a_denied_watch_decides_nothing_only_for_the_kinds_whose_chain_it_is() {
        let ids = [id("statefulsets"), id("replicasets")];
        let mut health = WatchHealth::new(&ids);
        health.record(&Signal::Failed {
            id: id("statefulsets"),
            failure: WatchFailure::Denied,
            reason: "statefulsets.apps is forbidden".into(),
            gave_up: true,
        });
        // A Deployment's gate does not need StatefulSets: a gap, not a stop.
        assert!(
            health
                .chain_denied("ns", TargetKind::Deployment, None)
                .is_none()
        );
        assert!(
            health
                .chain_denied("ns", TargetKind::DaemonSet, None)
                .is_none()
        );
        let denied = health
            .chain_denied("ns", TargetKind::StatefulSet, None)
            .unwrap();
        assert_eq!(denied.resource, "statefulsets");
        health.record(&Signal::Failed {
            id: id("replicasets"),
            failure: WatchFailure::Denied,
            reason: "replicasets.apps is forbidden".into(),
            gave_up: true,
        });
        assert!(
            health
                .chain_denied("ns", TargetKind::StatefulSet, None)
                .is_some()
        );
        assert_eq!(
            health
                .chain_denied("ns", TargetKind::Deployment, None)
                .unwrap()
                .resource,
            "replicasets"
        );
        assert!(
            health
                .chain_denied("ns", TargetKind::DaemonSet, None)
                .is_none()
        );
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = QuickBackoff {
            next: BACKOFF_FIRST,
        };
        let seen: Vec<_> = (0..7).filter_map(|_| b.next()).collect();
        assert_eq!(seen[0], Duration::from_millis(250));
        assert_eq!(seen[1], Duration::from_millis(500));
        assert_eq!(*seen.last().unwrap(), BACKOFF_MAX);
        b.reset();
        assert_eq!(b.next(), Some(BACKOFF_FIRST));
    }
}
