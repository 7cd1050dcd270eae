//! The pure state of the gate's watches: what happened to each watch
//! ([`Signal`]) folded into whether the view is whole and current
//! ([`WatchHealth`]). No runtime and no client: plain steps over signals.

use std::collections::BTreeMap;

use mdiag_core::model::{Gap, TargetKind};

/// What happened to one watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Signal {
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
pub(crate) enum WatchFailure {
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
    pub(crate) fn new(resource: &'static str, namespace: Option<&str>, name: Option<&str>) -> Self {
        WatchId {
            resource,
            namespace: namespace.map(str::to_string),
            name: name.map(str::to_string),
            labels: None,
        }
    }

    pub(crate) fn selecting(mut self, labels: Option<&str>) -> Self {
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

/// Tracks each watch's state from its signals: whether the gate's view is
/// whole and current, and what could not be read.
#[derive(Debug, Default)]
pub(crate) struct WatchHealth {
    states: BTreeMap<WatchId, WatchState>,
    /// Lists that started again after the first (410 Gone or a lost watch).
    pub relists: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WatchState {
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
                        contexts: Vec::new(),
                        resource: id.resource.to_string(),
                        namespace: id.namespace.clone(),
                        verb: "watch".into(),
                        name: id.name.clone(),
                        reason: reason.clone(),
                        complete_with: None,
                        read_in: Vec::new(),
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
}
