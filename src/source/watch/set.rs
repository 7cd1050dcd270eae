//! Starting the watches: one kube-runtime watcher per resource, each into
//! its store, reporting on a channel; the stores copied into a snapshot.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

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

use super::health::{Signal, WatchFailure, WatchId};
use super::scope::{WatchPlan, WatchScope};
use crate::live::Connection;
use crate::plan::{self, ManagedFields, Planned, Where, trim_meta};
use crate::times::Lenient;
use mdiag_core::model::{Gap, Origin, OriginKind, Snapshot};

/// Retries quickly: a gate waits on a person's CI job, and an apiserver that
/// restarts is back in seconds. 250 ms doubling to 4 s.
#[derive(Debug, Clone)]
struct QuickBackoff {
    next: Duration,
}

const BACKOFF_FIRST: Duration = Duration::from_millis(250);
/// The longest a watcher sleeps between retries.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(4);

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

impl<K: Planned> Dump for Store<Lenient<K>> {
    fn dump(&self, objects: &mut mdiag_core::model::Objects) {
        let mut items: Vec<K> = self.state().iter().map(|arc| arc.0.clone()).collect();
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
    /// The other serving platforms' objects (InferenceServices, Rollouts).
    platforms: Vec<(mdiag_core::model::Kind, ApiResource, Store<DynamicObject>)>,
    http_routes: Vec<(ApiResource, Store<DynamicObject>)>,
}

/// Running watches and their stores.
pub(crate) struct WatchSet {
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
            other => (WatchFailure::Unreachable, crate::live::error_chain(other)),
        },
        watcher::Error::WatchError(status) => by_status(status.code, &status.message),
        watcher::Error::NoResourceVersion => (WatchFailure::Unreachable, err.to_string()),
    }
}

/// The API of a typed watch, its objects typed leniently (crate::times):
/// a far-future time in one object must not fail the watch.
fn lenient_api<K: Planned>(client: &kube::Client, namespace: Option<&str>) -> Api<Lenient<K>> {
    // `K::api` knows whether the kind is namespaced.
    match K::api(client.clone(), namespace).namespace() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &()),
        None => Api::all_with(client.clone(), &()),
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
                let api = lenient_api::<K>(self.client, namespace);
                let (store, writer) = reflector::store::<Lenient<K>>();
                let chain = match self.plan.scope {
                    WatchScope::Chain(c) => Some(c.clone()),
                    WatchScope::Namespace => None,
                };
                let keep = move |Lenient(o): &mut Lenient<K>| {
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
        let platforms = plan
            .served
            .platforms
            .iter()
            .map(|(k, r)| (Some(r), k.qualified_resource(), Some(*k)));
        for (resource, plural, platform) in [
            (plan.served.model_service.as_ref(), "modelservices", None),
            (plan.served.http_routes.as_ref(), "httproutes", None),
        ]
        .into_iter()
        .chain(platforms)
        {
            let Some(r) = resource else { continue };
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
            match platform {
                Some(kind) => set.stores.platforms.push((kind, r.clone(), store)),
                None if plural == "httproutes" => set.stores.http_routes.push((r.clone(), store)),
                None => set.stores.model_services.push((r.clone(), store)),
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
        for (kind, r, store) in &s.platforms {
            let Some(platform) = mdiag_core::chain::Platform::of_kind(*kind) else {
                continue;
            };
            for item in dynamic(&[(r.clone(), store.clone())]) {
                platform.file(o, item);
            }
        }
        o.http_routes = dynamic(&s.http_routes);
        snapshot.gaps = gaps.to_vec();
        snapshot.origin = Origin {
            kind: OriginKind::Live,
            ..origin.clone()
        };
        snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
