//! The snapshot indexed once for walking: its objects by UID, by namespace
//! and name, and by owner, and the index's lookups of Services and slices.

use std::collections::HashMap;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{PLATFORMS, PlatformObject, SERVICE_NAME_LABEL, name, ns_of, uid};
use crate::model::{Kind, Snapshot};

/// Pushes `item` unless it is the last one pushed (an object naming the
/// same owner twice).
fn push_once<'a, T>(list: &mut Vec<&'a T>, item: &'a T) {
    if !list.last().is_some_and(|last| std::ptr::eq(*last, item)) {
        list.push(item);
    }
}

/// The snapshot indexed once, by owner UID, by UID, by namespace and name,
/// so that walking every workload of a large snapshot is linear in its
/// objects. Lists keep the snapshot's order, so a walk through the index
/// finds what a scan in that order would.
pub struct Index<'a> {
    pub snapshot: &'a Snapshot,
    /// The serving platforms' objects (ModelServices, InferenceServices).
    pub(super) platform_by_uid: HashMap<&'a str, PlatformObject<'a>>,
    pub(super) platform_by_name: HashMap<(Kind, &'a str, &'a str), PlatformObject<'a>>,
    pub(super) deployment_by_uid: HashMap<&'a str, &'a Deployment>,
    pub(super) deployment_by_name: HashMap<(&'a str, &'a str), &'a Deployment>,
    pub(super) deployments_by_owner: HashMap<&'a str, Vec<&'a Deployment>>,
    pub(super) deployments_by_ns: HashMap<&'a str, Vec<&'a Deployment>>,
    pub(super) replica_set_by_uid: HashMap<&'a str, &'a ReplicaSet>,
    pub(super) replica_set_by_name: HashMap<(&'a str, &'a str), &'a ReplicaSet>,
    pub(super) replica_sets_by_owner: HashMap<&'a str, Vec<&'a ReplicaSet>>,
    pub(super) pod_by_uid: HashMap<&'a str, &'a Pod>,
    pub(super) pod_by_name: HashMap<(&'a str, &'a str), &'a Pod>,
    pub(super) pods_by_owner: HashMap<&'a str, Vec<&'a Pod>>,
    pub(super) stateful_set_by_uid: HashMap<&'a str, &'a StatefulSet>,
    pub(super) stateful_set_by_name: HashMap<(&'a str, &'a str), &'a StatefulSet>,
    /// By owner UID: a LeaderWorkerSet owns its leader set, and each
    /// leader Pod its group's worker set.
    pub(super) stateful_sets_by_owner: HashMap<&'a str, Vec<&'a StatefulSet>>,
    pub(super) daemon_set_by_uid: HashMap<&'a str, &'a DaemonSet>,
    pub(super) daemon_set_by_name: HashMap<(&'a str, &'a str), &'a DaemonSet>,
    pub(super) revisions_by_owner: HashMap<&'a str, Vec<&'a ControllerRevision>>,
    /// Pods with no controller owner, by namespace: the ones a ReplicaSet
    /// may adopt by selector.
    pub(super) uncontrolled_pods: HashMap<&'a str, Vec<&'a Pod>>,
    pub(super) services_by_ns: HashMap<&'a str, Vec<&'a Service>>,
    pub(super) slices_by_ns: HashMap<&'a str, Vec<&'a EndpointSlice>>,
}

impl<'a> Index<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let o = &snapshot.objects;
        let mut ix = Index {
            snapshot,
            platform_by_uid: HashMap::new(),
            platform_by_name: HashMap::new(),
            deployment_by_uid: HashMap::new(),
            deployment_by_name: HashMap::new(),
            deployments_by_owner: HashMap::new(),
            deployments_by_ns: HashMap::new(),
            replica_set_by_uid: HashMap::new(),
            replica_set_by_name: HashMap::new(),
            replica_sets_by_owner: HashMap::new(),
            pod_by_uid: HashMap::new(),
            pod_by_name: HashMap::new(),
            pods_by_owner: HashMap::new(),
            stateful_set_by_uid: HashMap::new(),
            stateful_set_by_name: HashMap::new(),
            stateful_sets_by_owner: HashMap::new(),
            daemon_set_by_uid: HashMap::new(),
            daemon_set_by_name: HashMap::new(),
            revisions_by_owner: HashMap::new(),
            uncontrolled_pods: HashMap::new(),
            services_by_ns: HashMap::new(),
            slices_by_ns: HashMap::new(),
        };
        let owners = |meta: &'a ObjectMeta| {
            meta.owner_references
                .iter()
                .flatten()
                .map(|r| r.uid.as_str())
                .filter(|u| !u.is_empty())
        };
        // The first of equals wins, as `find` over the lists would.
        for platform in PLATFORMS {
            for found in platform.objects(o) {
                let meta = &found.object.metadata;
                ix.platform_by_uid.entry(uid(meta)).or_insert(found);
                ix.platform_by_name
                    .entry((platform.kind, ns_of(meta), name(meta)))
                    .or_insert(found);
            }
        }
        for d in &o.deployments {
            let meta = &d.metadata;
            ix.deployment_by_uid.entry(uid(meta)).or_insert(d);
            ix.deployment_by_name
                .entry((ns_of(meta), name(meta)))
                .or_insert(d);
            ix.deployments_by_ns.entry(ns_of(meta)).or_default().push(d);
            for owner in owners(meta) {
                push_once(ix.deployments_by_owner.entry(owner).or_default(), d);
            }
        }
        for rs in &o.replica_sets {
            let meta = &rs.metadata;
            ix.replica_set_by_uid.entry(uid(meta)).or_insert(rs);
            ix.replica_set_by_name
                .entry((ns_of(meta), name(meta)))
                .or_insert(rs);
            for owner in owners(meta) {
                push_once(ix.replica_sets_by_owner.entry(owner).or_default(), rs);
            }
        }
        for set in &o.stateful_sets {
            let meta = &set.metadata;
            ix.stateful_set_by_uid.entry(uid(meta)).or_insert(set);
            ix.stateful_set_by_name
                .entry((ns_of(meta), name(meta)))
                .or_insert(set);
            for owner in owners(meta) {
                push_once(ix.stateful_sets_by_owner.entry(owner).or_default(), set);
            }
        }
        for set in &o.daemon_sets {
            let meta = &set.metadata;
            ix.daemon_set_by_uid.entry(uid(meta)).or_insert(set);
            ix.daemon_set_by_name
                .entry((ns_of(meta), name(meta)))
                .or_insert(set);
        }
        for r in &o.controller_revisions {
            for owner in owners(&r.metadata) {
                push_once(ix.revisions_by_owner.entry(owner).or_default(), r);
            }
        }
        for p in &o.pods {
            let meta = &p.metadata;
            ix.pod_by_uid.entry(uid(meta)).or_insert(p);
            ix.pod_by_name.entry((ns_of(meta), name(meta))).or_insert(p);
            for owner in owners(meta) {
                push_once(ix.pods_by_owner.entry(owner).or_default(), p);
            }
            let controlled = meta
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.controller == Some(true));
            if !controlled {
                ix.uncontrolled_pods.entry(ns_of(meta)).or_default().push(p);
            }
        }
        for s in &o.services {
            ix.services_by_ns
                .entry(ns_of(&s.metadata))
                .or_default()
                .push(s);
        }
        for s in &o.endpoint_slices {
            ix.slices_by_ns
                .entry(ns_of(&s.metadata))
                .or_default()
                .push(s);
        }
        ix
    }

    pub(super) fn services_in(&self, namespace: &str) -> &[&'a Service] {
        self.services_by_ns
            .get(namespace)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The EndpointSlices of these Services: by the `kubernetes.io/service-name` label.
    pub(super) fn slices_of(
        &self,
        namespace_name: &str,
        services: &[&Service],
    ) -> Vec<&'a EndpointSlice> {
        self.slices_by_ns
            .get(namespace_name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|s| {
                let service_name = s
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL));
                services
                    .iter()
                    .any(|svc| svc.metadata.name.as_ref() == service_name)
            })
            .collect()
    }
}
