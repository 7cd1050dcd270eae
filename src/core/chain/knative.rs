//! What of a Knative Service's chain is Knative's own
//! (docs/platforms.md#knative-serving): each Revision runs in a Deployment
//! of its own, so the chain's revisions are those Deployments'
//! ReplicaSets, and the one the Service declares now is its latest created
//! Revision's. Its Pods are served through each Revision's private
//! Service; the public one has no selector and, while the activator is in
//! the path, lists the activator's Pods of another namespace.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::DynamicObject;

use super::{
    Chain, ChainPod, Index, PlatformObject, RevisionSet, label_of, name, ns_of, owned_by,
    runs_template, uid,
};
use crate::model::TargetSpec;

/// The Knative Service's UID, which Knative copies from the Revision onto
/// its Deployment, ReplicaSet and Pods.
pub const SERVICE_UID_LABEL: &str = "serving.knative.dev/serviceUID";
/// The Revision a Deployment or Pod runs.
pub const REVISION_LABEL: &str = "serving.knative.dev/revision";
/// The Configuration generation a Revision was stamped from: its order.
pub const CONFIGURATION_GENERATION_LABEL: &str = "serving.knative.dev/configurationGeneration";

/// The Revision a Deployment runs, as Knative labels it.
pub fn revision_of_deployment(d: &Deployment) -> Option<&str> {
    label_of(&d.metadata, REVISION_LABEL)
}

/// The Revision the Service declares now: `status.latestCreatedRevisionName`.
pub fn latest_created(ksvc: &DynamicObject) -> Option<&str> {
    ksvc.data["status"]["latestCreatedRevisionName"]
        .as_str()
        .filter(|n| !n.is_empty())
}

/// Whether a Deployment runs one of this Knative Service's Revisions: it
/// carries the Service's UID in the label Knative copies from the
/// Revision (the Revision and its Configuration, the owners between, are
/// not needed in the input).
pub fn runs_revision_of(meta: &ObjectMeta, ksvc_uid: &str) -> bool {
    !ksvc_uid.is_empty()
        && label_of(meta, SERVICE_UID_LABEL) == Some(ksvc_uid)
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "Revision")
}

impl<'a> Index<'a> {
    /// The Knative Service an InferenceService in KServe's Knative mode
    /// runs its predictor in: one it owns (by UID), the one labelled
    /// `component: predictor` first (a transformer or explainer has its own).
    pub(super) fn predictor_knative_service(
        &self,
        isvc: PlatformObject<'a>,
        namespace: &str,
    ) -> Option<PlatformObject<'a>> {
        if !super::kserve_knative_mode(isvc.object) {
            return None;
        }
        let owner = uid(&isvc.object.metadata);
        self.snapshot
            .objects
            .knative_services
            .iter()
            .filter(|k| ns_of(&k.metadata) == namespace && owned_by(&k.metadata, owner))
            .max_by_key(|k| label_of(&k.metadata, "component") == Some("predictor"))
            .map(|object| PlatformObject {
                platform: &super::KNATIVE_SERVICE,
                object,
                workload: None,
            })
    }

    /// A Knative Service's chain: the Deployments of its Revisions, newest
    /// first; the latest created Revision's is the chain's Deployment, its
    /// ReplicaSet the current one, the others' older ones. The Services
    /// are the Revisions' private ones, which select their Pods. `top` is
    /// the Knative Service itself, or the InferenceService above it.
    pub(super) fn walk_knative(
        &self,
        target: &TargetSpec,
        namespace: &str,
        top: PlatformObject<'a>,
        ksvc: PlatformObject<'a>,
    ) -> Chain<'a> {
        let ksvc_uid = uid(&ksvc.object.metadata);
        let mut deployments: Vec<&'a Deployment> = self
            .deployments_by_ns
            .get(namespace)
            .into_iter()
            .flatten()
            .copied()
            .filter(|d| runs_revision_of(&d.metadata, ksvc_uid))
            .collect();
        let generation = |d: &Deployment| {
            label_of(&d.metadata, CONFIGURATION_GENERATION_LABEL)
                .and_then(|g| g.parse::<i64>().ok())
        };
        deployments.sort_by(|a, b| {
            generation(b)
                .cmp(&generation(a))
                .then_with(|| name(&a.metadata).cmp(name(&b.metadata)))
        });
        let current = match latest_created(ksvc.object) {
            Some(rev) => deployments
                .iter()
                .copied()
                .find(|d| revision_of_deployment(d) == Some(rev)),
            // A status not written yet: the newest Revision's.
            None => deployments.first().copied(),
        };

        let mut replica_sets: Vec<RevisionSet<'a>> = Vec::new();
        for d in &deployments {
            let is_current = current.is_some_and(|c| std::ptr::eq(c, *d));
            let mut owned: Vec<RevisionSet<'a>> = self
                .replica_sets_by_owner
                .get(uid(&d.metadata))
                .into_iter()
                .flatten()
                .map(|rs| RevisionSet {
                    replica_set: rs,
                    revision: generation(d),
                    current: is_current && runs_template(rs, d),
                })
                .collect();
            // A template Knative rewrote on an upgrade of its own leaves
            // the newest ReplicaSet as the one the Deployment rolls to.
            if is_current && !owned.iter().any(|r| r.current) {
                let newest = owned
                    .iter_mut()
                    .max_by_key(|r| r.replica_set.metadata.creation_timestamp.clone());
                if let Some(r) = newest {
                    r.current = true;
                }
            }
            owned.sort_by_key(|r| !r.current);
            replica_sets.extend(owned);
        }
        let mut pods = self.pods_of_replica_sets(namespace, &replica_sets);
        hold_pinned_pods(ksvc.object, &replica_sets, &mut pods);
        let services = private_services(self.services_in(namespace), &deployments, current);
        let endpoint_slices = self.slices_of(namespace, &services);
        Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            platform: Some(top),
            knative_service: Some(ksvc),
            deployment: current,
            replica_sets,
            pod_set: None,
            set_revisions: Vec::new(),
            pods,
            services,
            endpoint_slices,
            controller: None,
            job: None,
            groups: Vec::new(),
        }
    }
}

/// The Revisions the traffic block names by name with a share (a split
/// such as 90 % to the latest and 10 % pinned to `NAME-00001`): declared
/// to serve, unlike an older Revision that serves only because the latest
/// is not Ready yet (`latestRevision: true` resolves to it meanwhile).
pub fn pinned_revisions(ksvc: &DynamicObject) -> Vec<&str> {
    let latest = latest_created(ksvc);
    ksvc.data["status"]["traffic"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["percent"].as_i64().is_some_and(|n| n > 0))
        .filter(|t| t["latestRevision"].as_bool() != Some(true))
        .filter_map(|t| t["revisionName"].as_str())
        .filter(|r| !r.is_empty() && Some(*r) != latest)
        .collect()
}

/// A pinned Revision's Pods are the declaration in effect, as a
/// StatefulSet's below its partition are: current, held there by the
/// traffic split.
fn hold_pinned_pods(ksvc: &DynamicObject, replica_sets: &[RevisionSet], pods: &mut [ChainPod]) {
    let pinned = pinned_revisions(ksvc);
    if pinned.is_empty() {
        return;
    }
    let held_sets: HashSet<&str> = replica_sets
        .iter()
        .filter(|r| !r.current)
        .filter(|r| {
            label_of(&r.replica_set.metadata, REVISION_LABEL).is_some_and(|n| pinned.contains(&n))
        })
        .map(|r| uid(&r.replica_set.metadata))
        .collect();
    for p in pods.iter_mut().filter(|p| !p.current) {
        let owned = p
            .pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| held_sets.contains(o.uid.as_str()));
        if owned {
            p.current = true;
            p.held = true;
        }
    }
}

/// The Services that select a Revision's Pods (its `-private` Service,
/// or one a user wrote): a non-empty selector matching a Revision
/// Deployment's template, the current Revision's first. The public
/// Service and the Route's placeholder have no selector: what their
/// endpoints list is the activator or an ingress, not these Pods.
fn private_services<'a>(
    in_namespace: &[&'a Service],
    deployments: &[&'a Deployment],
    current: Option<&'a Deployment>,
) -> Vec<&'a Service> {
    let template_labels = |d: &Deployment| {
        d.spec
            .as_ref()
            .and_then(|s| s.template.metadata.as_ref())
            .and_then(|m| m.labels.as_ref())
            .cloned()
    };
    let current_labels = current.and_then(template_labels);
    let all_labels: Vec<_> = deployments
        .iter()
        .filter_map(|d| template_labels(d))
        .collect();
    let mut seen = HashSet::new();
    let mut services: Vec<&'a Service> = in_namespace
        .iter()
        .copied()
        .filter(|s| {
            all_labels
                .iter()
                .any(|l| super::selector_matches(s, Some(l)))
        })
        .filter(|s| seen.insert(format!("{}/{}", ns_of(&s.metadata), name(&s.metadata))))
        .collect();
    services.sort_by_key(|s| !super::selector_matches(s, current_labels.as_ref()));
    services
}

impl Chain<'_> {
    /// Each revision runs in a Deployment of its own (a Knative Service's):
    /// it has desired replicas of its own.
    pub fn revisions_own_deployments(&self) -> bool {
        self.knative_service.is_some()
    }

    /// The desired replicas of one revision, when it runs in a Deployment
    /// of its own: its ReplicaSets', as that Deployment (sized by the
    /// autoscaler) sets them.
    pub fn revision_desired(&self, revision: Option<i64>) -> Option<i32> {
        if !self.revisions_own_deployments() {
            return None;
        }
        Some(
            self.replica_sets
                .iter()
                .filter(|r| r.revision == revision)
                .filter_map(|r| r.replica_set.spec.as_ref()?.replicas)
                .sum(),
        )
    }

    /// The desired replicas behind one Service, when each revision has its
    /// own (a Knative Revision's private Service selects one revision).
    pub fn service_desired(&self, service: &Service) -> Option<i32> {
        if !self.revisions_own_deployments() {
            return None;
        }
        Some(
            self.replica_sets
                .iter()
                .filter(|r| {
                    let labels = r
                        .replica_set
                        .spec
                        .as_ref()
                        .and_then(|s| s.template.as_ref())
                        .and_then(|t| t.metadata.as_ref())
                        .and_then(|m| m.labels.as_ref());
                    super::selector_matches(service, labels)
                })
                .filter_map(|r| r.replica_set.spec.as_ref()?.replicas)
                .sum(),
        )
    }

    /// The Knative Service's latest created Revision is not its latest
    /// Ready one: it has not served yet. Scaled to zero is a rest only for
    /// a Revision that was Ready; for this one it is the autoscaler giving
    /// up (its progress deadline and 30 s passed).
    pub fn latest_revision_never_ready(&self) -> bool {
        let Some(p) = self.knative_service else {
            return false;
        };
        let status = &p.object.data["status"];
        let created = status["latestCreatedRevisionName"].as_str();
        created.is_some() && created != status["latestReadyRevisionName"].as_str()
    }

    /// The desired replicas of the Revisions the traffic split pins (see
    /// [`pinned_revisions`]), their Pods being part of the declaration.
    pub fn pinned_desired(&self) -> i32 {
        let Some(p) = self.knative_service else {
            return 0;
        };
        let pinned = pinned_revisions(p.object);
        self.replica_sets
            .iter()
            .filter(|r| !r.current)
            .filter(|r| {
                label_of(&r.replica_set.metadata, REVISION_LABEL)
                    .is_some_and(|n| pinned.contains(&n))
            })
            .filter_map(|r| r.replica_set.spec.as_ref()?.replicas)
            .sum()
    }

    /// The Revisions the Knative Service's traffic reaches now
    /// (`status.traffic` entries with a share above zero).
    pub fn revisions_in_traffic(&self) -> Vec<&str> {
        let Some(p) = self.knative_service else {
            return Vec::new();
        };
        p.object.data["status"]["traffic"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["percent"].as_i64().is_some_and(|n| n > 0))
            .filter_map(|t| t["revisionName"].as_str())
            .collect()
    }
}
