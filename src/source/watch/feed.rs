//! The gate's stream of views: the watches and their health as whole,
//! current snapshots to judge, with notes on lost and resumed watches.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DynamicObject};

use super::health::{Signal, WatchFailure, WatchHealth, WatchId};
use super::scope::{WatchPlan, WatchScope, chain_scope};
use super::set::{BACKOFF_MAX, WatchSet};
use crate::live::{self, Connection, LiveError};
use crate::plan::Planned;
use mdiag_core::catalogue::Message;
use mdiag_core::chain::ControllerLocation;
use mdiag_core::model::{Origin, OriginKind, Snapshot, TargetKind, TargetSpec};

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
    /// The ModelService resource as served, to get one again.
    model_service: Option<kube::api::ApiResource>,
    /// The other serving platforms' resources as served.
    platforms: live::PlatformResources,
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
        // The platform not installed (KServe, Argo Rollouts): there is
        // nothing to wait for.
        if let Some(platform) = mdiag_core::chain::Platform::of_target(kind)
            .filter(|p| p.kind != mdiag_core::model::Kind::ModelService)
            && served.platforms.get(platform.kind).is_none()
        {
            return Err(LiveError::NoResource {
                wanted: live::platform_resource(platform.kind),
            });
        }
        let origin = Origin {
            kind: OriginKind::Live,
            location: conn.server.clone(),
            context: conn.context.clone(),
            named_context: conn.named_context.clone(),
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
            model_service: served.model_service.clone(),
            platforms: served.platforms.clone(),
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

    /// Whether the workloads of a judged view (`(plural, metadata)`, see
    /// [`Chain::workloads`](mdiag_core::chain::Chain::workloads)) are
    /// still what the API holds: each got again, and its resourceVersion
    /// the view's. Watches of different kinds are not ordered with each
    /// other: a ModelService's status saying it observed generation 2 can
    /// arrive before the Deployment its controller wrote first, and that
    /// view pairs the new declaration with the old, serving revision. A
    /// verdict is given only on a view a fresh read confirms; otherwise the
    /// watch brings the newer object and a new view. A get that fails
    /// confirms nothing either way, and the view stands: the watches'
    /// health already says whether the API answers.
    pub async fn confirms(&self, workloads: &[(&'static str, &ObjectMeta)]) -> bool {
        for (resource, meta) in workloads {
            let (Some(name), ns) = (meta.name.as_deref(), meta.namespace.as_deref()) else {
                continue;
            };
            let ns = ns.unwrap_or(&self.namespace);
            let client = self.connection.client.clone();
            let now = match *resource {
                "modelservices" | "inferenceservices" | "rollouts" => {
                    let served = if *resource == "modelservices" {
                        self.model_service.as_ref()
                    } else {
                        self.platforms
                            .iter()
                            .find(|(k, _)| k.resource() == *resource)
                            .map(|(_, r)| r)
                    };
                    match served {
                        Some(ar) => {
                            self.version_now(
                                Api::<DynamicObject>::namespaced_with(client, ns, ar),
                                name,
                            )
                            .await
                        }
                        None => continue,
                    }
                }
                "deployments" => {
                    self.version_now(Api::<Deployment>::namespaced(client, ns), name)
                        .await
                }
                "statefulsets" => {
                    self.version_now(Api::<StatefulSet>::namespaced(client, ns), name)
                        .await
                }
                "daemonsets" => {
                    self.version_now(Api::<DaemonSet>::namespaced(client, ns), name)
                        .await
                }
                "jobs" => {
                    self.version_now(Api::<Job>::namespaced(client, ns), name)
                        .await
                }
                "cronjobs" => {
                    self.version_now(Api::<CronJob>::namespaced(client, ns), name)
                        .await
                }
                _ => continue,
            };
            match now {
                Ok(Some(version)) if version == meta.resource_version => {}
                Ok(_) => return false,
                Err(_) => {}
            }
        }
        true
    }

    /// An object's resourceVersion as the API gives it now (`Ok(None)`:
    /// the object is gone).
    async fn version_now<K>(
        &self,
        api: Api<K>,
        name: &str,
    ) -> Result<Option<Option<String>>, kube::Error>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        Ok(self
            .connection
            .get_opt(api, name)
            .await?
            .map(|o| o.meta().resource_version.clone()))
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
