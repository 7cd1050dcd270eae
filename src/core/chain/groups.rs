//! The walk of a LeaderWorkerSet: the leader StatefulSet it owns, walked
//! as any StatefulSet, then for each leader Pod the worker StatefulSet
//! that Pod owns (by owner UID: the worker set's selector also matches its
//! leader, so selectors would mix the two) and that set's Pods.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;

use super::{
    Chain, Group, Index, PlatformObject, PodSet, name, ns_of, ordinal, selector_matches, uid,
};
use crate::model::TargetSpec;

/// The label LWS puts on every object of one LeaderWorkerSet.
pub const LWS_NAME_LABEL: &str = "leaderworkerset.sigs.k8s.io/name";

impl<'a> Index<'a> {
    pub(super) fn walk_groups(
        &self,
        target: &TargetSpec,
        namespace: &str,
        top: PlatformObject<'a>,
    ) -> Chain<'a> {
        let size = group_size(top);
        let Some(leaders) = self.controlled_set(uid(&top.object.metadata)) else {
            // No leader set yet: the chain is the object and its Services.
            let services = lws_services(self.services_in(namespace), name(&top.object.metadata));
            let endpoint_slices = self.slices_of(namespace, &services);
            return Chain {
                namespace: namespace.to_string(),
                target: target.clone(),
                platform: Some(top),
                knative_service: None,
                deployment: None,
                replica_sets: Vec::new(),
                pod_set: None,
                set_revisions: Vec::new(),
                pods: Vec::new(),
                services,
                endpoint_slices,
                controller: None,
                job: None,
                groups: Vec::new(),
            };
        };
        let mut chain = self.walk_pod_set(target, namespace, PodSet::StatefulSet(leaders));
        chain.platform = Some(top);
        let leader_pods: Vec<_> = chain.pods.iter().map(|p| p.pod).collect();
        for leader in leader_pods {
            let workers = self.controlled_set(uid(&leader.metadata));
            if let Some(set) = workers {
                let of_workers = self.walk_pod_set(target, namespace, PodSet::StatefulSet(set));
                chain.pods.extend(of_workers.pods);
            }
            chain.groups.push(Group {
                leader,
                workers,
                size,
            });
        }
        // Group by group, the leader first: vllm-0, vllm-0-1, vllm-1, ...
        let place = |pod: &k8s_openapi::api::core::v1::Pod| {
            let group = chain.groups.iter().position(|g| g.holds(pod));
            let leader = chain.groups.iter().any(|g| std::ptr::eq(g.leader, pod));
            (group.unwrap_or(usize::MAX), !leader, ordinal(pod))
        };
        let mut pods = std::mem::take(&mut chain.pods);
        pods.sort_by(|a, b| {
            b.current
                .cmp(&a.current)
                .then_with(|| place(a.pod).cmp(&place(b.pod)))
        });
        chain.pods = pods;
        let more: Vec<&Service> =
            lws_services(self.services_in(namespace), name(&top.object.metadata))
                .into_iter()
                .filter(|s| !chain.services.iter().any(|c| std::ptr::eq(*c, *s)))
                .collect();
        if !more.is_empty() {
            chain.services.extend(more);
            chain.endpoint_slices = self.slices_of(namespace, &chain.services);
        }
        chain
    }

    /// The StatefulSet an object controls (by owner UID), if any.
    fn controlled_set(&self, owner_uid: &str) -> Option<&'a StatefulSet> {
        let owned = self.stateful_sets_by_owner.get(owner_uid)?;
        owned.iter().copied().find(|s| {
            s.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == owner_uid && o.controller == Some(true))
        })
    }
}

/// The LeaderWorkerSets of a snapshot, by namespace and name, with their
/// UIDs: what [`lws_of_set`] looks a StatefulSet's owner up in.
pub fn lws_by_name(objects: &crate::model::Objects) -> HashMap<(&str, &str), &str> {
    objects
        .leader_worker_sets
        .iter()
        .map(|l| ((ns_of(&l.metadata), name(&l.metadata)), uid(&l.metadata)))
        .filter(|(_, u)| !u.is_empty())
        .collect()
}

/// The UID of the LeaderWorkerSet a StatefulSet belongs to: the one that
/// controls it (its leader set), or for a set a Pod controls (a worker
/// set: its leader Pod's, which may not be read yet) the one its name label
/// names in its namespace.
pub fn lws_of_set<'a>(lws: &HashMap<(&str, &str), &'a str>, set: &StatefulSet) -> Option<&'a str> {
    let meta = &set.metadata;
    let controller = super::controller_ref(meta)?;
    if let Some(own) = lws.values().find(|u| **u == controller.uid.as_str()) {
        return Some(own);
    }
    if controller.kind != "Pod" {
        return None;
    }
    let named = meta.labels.as_ref()?.get(LWS_NAME_LABEL)?;
    lws.get(&(ns_of(meta), named.as_str())).copied()
}

/// How many Pods a group has when whole: `leaderWorkerTemplate.size`
/// (LWS defaults it to 1).
pub(super) fn group_size(top: PlatformObject) -> i32 {
    top.object
        .data
        .pointer("/spec/leaderWorkerTemplate/size")
        .and_then(|v| v.as_i64())
        .map_or(1, |s| s.clamp(1, i64::from(i32::MAX)) as i32)
}

/// The Services of a LeaderWorkerSet before its sets exist (and one its
/// sets' selectors miss): the headless Service of its name, and any
/// Service that selects the LeaderWorkerSet's name label.
fn lws_services<'a>(in_namespace: &[&'a Service], lws: &str) -> Vec<&'a Service> {
    let labels = BTreeMap::from([(LWS_NAME_LABEL.to_string(), lws.to_string())]);
    in_namespace
        .iter()
        .copied()
        .filter(|s| name(&s.metadata) == lws || selector_matches(s, Some(&labels)))
        .collect()
}
