//! What of an Argo Rollout's chain is Argo's own (docs/platforms.md#argo-rollouts):
//! the current revision is the ReplicaSet labelled with the hash the Rollout
//! names, its stable Pods are held while it waits at a step of its plan, and
//! its Services are the ones it manages or whose selectors, its hash set
//! aside, select its template. The rest of the walk is a Deployment's.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::Service;
use kube_core::DynamicObject;

use super::{ChainPod, RevisionSet, label_of, name, uid};
use crate::model::{ROLLOUT_HASH_LABEL, ROLLOUT_MANAGED_BY_ANNOTATION};

/// Marks current the ReplicaSet labelled with the Rollout's
/// `status.currentPodHash`; whether one is.
pub(super) fn mark_current(rollout: &DynamicObject, replica_sets: &mut [RevisionSet]) -> bool {
    let Some(hash) = rollout_hash(rollout, "currentPodHash") else {
        return replica_sets.iter().any(|r| r.current);
    };
    for rs in replica_sets.iter_mut() {
        rs.current = label_of(&rs.replica_set.metadata, ROLLOUT_HASH_LABEL) == Some(hash);
    }
    replica_sets.iter().any(|r| r.current)
}

/// A Rollout paused at a step of its strategy (a canary's `pause`, a
/// blue-green's wait for promotion) keeps its stable revision's Pods on
/// purpose: they are the declaration in effect, as a StatefulSet's Pods
/// below its partition are, and count as current. Not when it is paused
/// for another reason (an inconclusive analysis, `spec.paused`) or
/// aborted: then the stable Pods are what is left, not what was declared.
pub(super) fn hold_stable_pods(
    rollout: &DynamicObject,
    replica_sets: &[RevisionSet],
    pods: &mut [ChainPod],
) {
    if !crate::model::waits_at_a_step(rollout) {
        return;
    }
    let Some(stable) = rollout_hash(rollout, "stableRS") else {
        return;
    };
    let stable_uids: HashSet<&str> = replica_sets
        .iter()
        .filter(|r| !r.current)
        .filter(|r| label_of(&r.replica_set.metadata, ROLLOUT_HASH_LABEL) == Some(stable))
        .map(|r| uid(&r.replica_set.metadata))
        .collect();
    for p in pods.iter_mut().filter(|p| !p.current) {
        if p.pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| stable_uids.contains(o.uid.as_str()))
        {
            p.current = true;
            p.held = true;
        }
    }
}

/// A string of a Rollout's status (`currentPodHash`, `stableRS`).
fn rollout_hash<'o>(object: &'o DynamicObject, field: &str) -> Option<&'o str> {
    object.data["status"][field]
        .as_str()
        .filter(|h| !h.is_empty())
}

/// The Services of a Rollout: the ones Argo says it manages for it, and
/// the ones that select its template's labels once the hash Argo adds to
/// a managed Service's selector is set aside (a stable and a canary
/// Service each select one revision's Pods).
pub(super) fn services<'a>(
    in_namespace: &[&'a Service],
    rollout: &DynamicObject,
    template_labels: Option<&std::collections::BTreeMap<String, String>>,
) -> Vec<&'a Service> {
    let rollout_name = name(&rollout.metadata);
    let mut services: Vec<&'a Service> = in_namespace
        .iter()
        .copied()
        .filter(|s| {
            let managed = s
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ROLLOUT_MANAGED_BY_ANNOTATION))
                .is_some_and(|n| n == rollout_name);
            let selector = s.spec.as_ref().and_then(|sp| sp.selector.as_ref());
            let selects = selector.is_some_and(|sel| {
                !sel.is_empty()
                    && sel.iter().all(|(k, v)| {
                        k == ROLLOUT_HASH_LABEL
                            || template_labels.is_some_and(|t| t.get(k) == Some(v))
                    })
                    && sel.keys().any(|k| k != ROLLOUT_HASH_LABEL)
            });
            managed || selects
        })
        .collect();
    // The stable (canary) or active (blue-green) Service first: the one
    // users are served through.
    let strategy = &rollout.data["spec"]["strategy"];
    let primary = strategy["canary"]["stableService"]
        .as_str()
        .or(strategy["blueGreen"]["activeService"].as_str());
    services.sort_by_key(|s| Some(name(&s.metadata)) != primary);
    services
}
