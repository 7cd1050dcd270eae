//! The walk by owner UID: from the target to its ModelService, Deployment,
//! ReplicaSets and Pods (or a lone ReplicaSet's, or a bare Pod's), its
//! Services and slices, and the ModelService controller.

use std::collections::HashSet;

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube_core::DynamicObject;

use super::{
    Chain, ChainPod, ControllerLocation, ControllerParts, Index, PodSet, Reach, RevisionSet,
    TargetNotFound, available_targets, generation_observed, label_selector_matches, name, ns_of,
    owned_by, owner_uid_of_kind, revision_of, runs_template, selector_matches, uid,
};
use crate::model::{Snapshot, TargetKind, TargetSpec};

/// Finds the target and walks its chain. Indexes the snapshot first; to
/// walk many workloads of one snapshot, build an [`Index`] once and use
/// [`Index::walk`].
pub fn walk<'a>(
    snapshot: &'a Snapshot,
    target: &TargetSpec,
    namespace: &str,
    controller: Option<&ControllerLocation>,
) -> Result<Chain<'a>, TargetNotFound> {
    Index::new(snapshot).walk(target, namespace, controller)
}

impl<'a> Index<'a> {
    /// Finds the target and walks its chain.
    pub fn walk(
        &self,
        target: &TargetSpec,
        namespace: &str,
        controller: Option<&ControllerLocation>,
    ) -> Result<Chain<'a>, TargetNotFound> {
        let snapshot = self.snapshot;
        let not_found = || TargetNotFound {
            kind: target.kind,
            namespace: Some(namespace.to_string()),
            name: target.name.clone(),
            available: available_targets(snapshot, namespace),
            hints: Box::new(super::NotFoundHints {
                elsewhere: super::workloads::namespaces_holding(snapshot, target)
                    .into_iter()
                    .filter(|ns| ns != namespace)
                    .collect(),
                other_kinds: super::workloads::same_name_as_other_kinds(
                    snapshot,
                    target,
                    Some(namespace),
                ),
                service_selector: None,
            }),
        };
        let key = (namespace, target.name.as_str());

        let (platform, deployment) = match super::OwnerKind::of_target(target.kind).reach {
            Reach::Platform(p) => {
                let top = *self
                    .platform_by_name
                    .get(&(p.kind, namespace, target.name.as_str()))
                    .ok_or_else(not_found)?;
                if p.serves_in_groups {
                    return Ok(self.walk_groups(target, namespace, top));
                }
                if p.revisions_own_deployments {
                    return Ok(self.walk_knative(target, namespace, top, top));
                }
                // KServe's Knative mode: the predictor runs in a Knative
                // Service the InferenceService owns.
                if let Some(ksvc) = self.predictor_knative_service(top, namespace) {
                    return Ok(self.walk_knative(target, namespace, top, ksvc));
                }
                (Some(top), self.owned_deployment(top, namespace))
            }
            Reach::ReplicaSets => {
                let d = *self.deployment_by_name.get(&key).ok_or_else(not_found)?;
                (self.platform_above(&d.metadata), Some(d))
            }
            Reach::ControllerRevisions => {
                let set = if target.kind == TargetKind::DaemonSet {
                    self.daemon_set_by_name
                        .get(&key)
                        .map(|s| PodSet::DaemonSet(s))
                } else {
                    self.stateful_set_by_name
                        .get(&key)
                        .map(|s| PodSet::StatefulSet(s))
                };
                return Ok(self.walk_pod_set(target, namespace, set.ok_or_else(not_found)?));
            }
            Reach::OwnPods => {
                let rs = *self.replica_set_by_name.get(&key).ok_or_else(not_found)?;
                // One a Deployment of the snapshot owns is that Deployment's
                // chain, as its Pods are.
                let Some(d) = self.owning_deployment(&rs.metadata) else {
                    return Ok(self.walk_replica_set(target, namespace, rs));
                };
                (self.platform_above(&d.metadata), Some(d))
            }
            Reach::Completions => {
                let job = self
                    .job_named(namespace, &target.name)
                    .ok_or_else(not_found)?;
                return Ok(self.walk_job(target, namespace, job));
            }
            Reach::Selected => {
                return self.walk_service(target, namespace, controller, not_found);
            }
            Reach::Runs => {
                let cron_job = self
                    .cron_job_named(namespace, &target.name)
                    .ok_or_else(not_found)?;
                return Ok(self.walk_cron_job(target, namespace, cron_job));
            }
            Reach::Owners => {
                let pod = *self.pod_by_name.get(&key).ok_or_else(not_found)?;
                // A Job's Pod: the chain is its Job's.
                if let Some(job) = self.owning_job(pod) {
                    return Ok(self.walk_job(target, namespace, job));
                }
                // A StatefulSet's or DaemonSet's Pod: the chain is its set's.
                let set = owner_uid_of_kind(&pod.metadata, "StatefulSet")
                    .and_then(|o| self.stateful_set_by_uid.get(o).copied())
                    .map(PodSet::StatefulSet)
                    .or_else(|| {
                        owner_uid_of_kind(&pod.metadata, "DaemonSet")
                            .and_then(|o| self.daemon_set_by_uid.get(o).copied())
                            .map(PodSet::DaemonSet)
                    });
                if let Some(set) = set {
                    return Ok(self.walk_pod_set(target, namespace, set));
                }
                let rs = owner_uid_of_kind(&pod.metadata, "ReplicaSet")
                    .and_then(|owner| self.replica_set_by_uid.get(owner).copied());
                let d = rs.and_then(|rs| self.owning_deployment(&rs.metadata));
                let top = d.and_then(|d| self.platform_above(&d.metadata));
                match (rs, d) {
                    // A ReplicaSet's Pod with no Deployment above: the
                    // ReplicaSet's chain.
                    (Some(rs), None) => return Ok(self.walk_replica_set(target, namespace, rs)),
                    // A bare Pod (or one whose owners are gone): the chain is the Pod.
                    (None, _) => return Ok(self.bare_pod_chain(target, namespace, pod)),
                    (Some(_), Some(_)) => {}
                }
                (top, d)
            }
        };

        let mut replica_sets: Vec<RevisionSet> = match deployment {
            Some(d) => self
                .replica_sets_by_owner
                .get(uid(&d.metadata))
                .into_iter()
                .flatten()
                .map(|rs| RevisionSet {
                    replica_set: rs,
                    revision: revision_of(&rs.metadata),
                    current: runs_template(rs, d),
                })
                .collect(),
            None => Vec::new(),
        };
        replica_sets.sort_by(|a, b| {
            b.revision
                .cmp(&a.revision)
                .then_with(|| name(&a.replica_set.metadata).cmp(name(&b.replica_set.metadata)))
        });
        // Two ReplicaSets can share a template only transiently; the newest wins.
        let mut seen_current = false;
        for rs in &mut replica_sets {
            if rs.current && seen_current {
                rs.current = false;
            }
            seen_current |= rs.current;
        }
        if let Some(p) = platform.filter(|p| p.workload.is_some()) {
            seen_current = super::rollouts::mark_current(p.object, &mut replica_sets);
        }
        if !seen_current && let Some(d) = deployment {
            mark_current_by_revision(&mut replica_sets, d);
        }

        let mut pods = self.pods_of_replica_sets(namespace, &replica_sets);
        if let Some(p) = platform.filter(|p| p.workload.is_some()) {
            super::rollouts::hold_stable_pods(p.object, &replica_sets, &mut pods);
        }
        let template_labels = deployment
            .and_then(|d| d.spec.as_ref())
            .and_then(|s| s.template.metadata.as_ref())
            .and_then(|m| m.labels.as_ref());
        let workload_name = platform
            .map(|p| name(&p.object.metadata))
            .or(deployment.map(|d| name(&d.metadata)));
        let services = match platform.filter(|p| p.workload.is_some()) {
            Some(rollout) => super::rollouts::services(
                self.services_in(namespace),
                rollout.object,
                template_labels,
            ),
            None => related_services(
                self.services_in(namespace),
                platform.map(|p| p.object),
                template_labels,
                workload_name,
            ),
        };
        let endpoint_slices = self.slices_of(namespace, &services);

        Ok(Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            platform,
            knative_service: None,
            deployment,
            replica_sets,
            pod_set: None,
            set_revisions: Vec::new(),
            pods,
            services,
            endpoint_slices,
            controller: platform
                .filter(|p| p.platform.controller_judged)
                .map(|_| self.find_controller(namespace, controller)),
            job: None,
            groups: Vec::new(),
        })
    }

    /// The Deployment of the snapshot that owns the object (its controller
    /// first), if any.
    fn owning_deployment(&self, meta: &ObjectMeta) -> Option<&'a Deployment> {
        let mut owners: Vec<&OwnerReference> = meta
            .owner_references
            .iter()
            .flatten()
            .filter(|o| o.kind == "Deployment")
            .collect();
        owners.sort_by_key(|o| o.controller != Some(true));
        owners
            .into_iter()
            .find_map(|o| self.deployment_by_uid.get(o.uid.as_str()).copied())
    }

    /// A ReplicaSet no Deployment of the snapshot owns, walked as a
    /// workload: its Pods by owner UID (and those it adopts by selector),
    /// the Services that select its template's labels. Its one template is
    /// its current revision; there is no Deployment step.
    fn walk_replica_set(
        &self,
        target: &TargetSpec,
        namespace: &str,
        rs: &'a ReplicaSet,
    ) -> Chain<'a> {
        let replica_sets = vec![RevisionSet {
            replica_set: rs,
            revision: revision_of(&rs.metadata),
            current: true,
        }];
        let pods = self.pods_of_replica_sets(namespace, &replica_sets);
        let template_labels = rs
            .spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .and_then(|t| t.metadata.as_ref())
            .and_then(|m| m.labels.as_ref());
        let services = related_services(
            self.services_in(namespace),
            None,
            template_labels,
            Some(name(&rs.metadata)),
        );
        let endpoint_slices = self.slices_of(namespace, &services);
        Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            platform: None,
            knative_service: None,
            deployment: None,
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

    /// The Pods some ReplicaSet of the chain owns, and those it may adopt,
    /// current revision first.
    pub(super) fn pods_of_replica_sets(
        &self,
        namespace: &str,
        replica_sets: &[RevisionSet<'a>],
    ) -> Vec<ChainPod<'a>> {
        let mut seen: HashSet<*const Pod> = HashSet::new();
        let candidates = replica_sets
            .iter()
            .filter_map(|rs| self.pods_by_owner.get(uid(&rs.replica_set.metadata)))
            .flatten()
            .chain(self.uncontrolled_pods.get(namespace).into_iter().flatten())
            .filter(|pod| seen.insert(std::ptr::from_ref::<Pod>(pod)));
        let mut pods: Vec<ChainPod> = candidates
            .filter(|pod| ns_of(&pod.metadata) == namespace)
            .filter_map(|pod| {
                let owner = replica_sets
                    .iter()
                    .find(|rs| owned_by(&pod.metadata, uid(&rs.replica_set.metadata)))
                    .or_else(|| adopting_replica_set(replica_sets, pod))?;
                Some(ChainPod {
                    pod,
                    revision: owner.revision,
                    current: owner.current,
                    held: false,
                })
            })
            .collect();
        pods.sort_by(|a, b| {
            b.current
                .cmp(&a.current)
                .then_with(|| b.revision.cmp(&a.revision))
                .then_with(|| name(&a.pod.metadata).cmp(name(&b.pod.metadata)))
        });
        pods
    }

    /// The Deployment that serves a platform's object: among the ones it
    /// owns by UID, as its row picks.
    fn owned_deployment(
        &self,
        top: super::PlatformObject<'a>,
        namespace_name: &str,
    ) -> Option<&'a Deployment> {
        if top.workload.is_some() {
            return top.workload;
        }
        let owner = uid(&top.object.metadata);
        if owner.is_empty() {
            return None;
        }
        let owned = self
            .deployments_by_owner
            .get(owner)
            .into_iter()
            .flatten()
            .copied()
            .filter(|d| ns_of(&d.metadata) == namespace_name);
        top.platform.serving_deployment(owner, owned)
    }

    /// The platform object a Deployment's owner references name by UID.
    fn platform_above(&self, meta: &ObjectMeta) -> Option<super::PlatformObject<'a>> {
        meta.owner_references.iter().flatten().find_map(|o| {
            super::Platform::of_owner_kind(&o.kind)?;
            self.platform_by_uid.get(o.uid.as_str()).copied()
        })
    }

    fn find_controller(
        &self,
        namespace_name: &str,
        wanted: Option<&ControllerLocation>,
    ) -> ControllerParts<'a> {
        let candidates = ControllerLocation::spots(wanted, Some(namespace_name));
        let lookup = |loc: &ControllerLocation| {
            let deployment = self
                .deployment_by_name
                .get(&(loc.namespace.as_str(), loc.name.as_str()))
                .copied();
            let lease =
                self.snapshot.objects.leases.iter().find(|l| {
                    ns_of(l.metadata()) == loc.namespace && name(l.metadata()) == loc.name
                });
            ControllerParts {
                location: loc.clone(),
                deployment,
                lease,
            }
        };
        candidates
            .iter()
            .map(lookup)
            .find(|c| c.deployment.is_some() || c.lease.is_some())
            .unwrap_or_else(|| lookup(candidates.last().expect("at least one candidate")))
    }

    fn bare_pod_chain(&self, target: &TargetSpec, namespace_name: &str, pod: &'a Pod) -> Chain<'a> {
        let labels = pod.metadata.labels.as_ref();
        let services: Vec<&Service> = self
            .services_in(namespace_name)
            .iter()
            .copied()
            .filter(|s| selector_matches(s, labels))
            .collect();
        let endpoint_slices = self.slices_of(namespace_name, &services);
        Chain {
            namespace: namespace_name.to_string(),
            target: target.clone(),
            platform: None,
            knative_service: None,
            deployment: None,
            replica_sets: Vec::new(),
            pod_set: None,
            set_revisions: Vec::new(),
            pods: vec![ChainPod {
                pod,
                revision: None,
                current: true,
                held: false,
            }],
            services,
            endpoint_slices,
            controller: None,
            job: None,
            groups: Vec::new(),
        }
    }
}

/// When no ReplicaSet runs the Deployment's template as written (a dump
/// from a tool that drops defaulted fields), fall back to what the Deployment
/// controller records: the revision annotation, once it observed the spec.
fn mark_current_by_revision(replica_sets: &mut [RevisionSet], d: &Deployment) {
    let observed = d.status.as_ref().and_then(|s| s.observed_generation);
    if !generation_observed(d.metadata.generation, observed) {
        return;
    }
    let by_revision = revision_of(&d.metadata)
        .and_then(|want| replica_sets.iter().position(|r| r.revision == Some(want)));
    let pick = by_revision.or_else(|| {
        replica_sets
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.replica_set.metadata.creation_timestamp.clone())
            .map(|(i, _)| i)
    });
    if let Some(i) = pick {
        replica_sets[i].current = true;
    }
}

/// A Pod with no controller owner is adopted by the ReplicaSet whose
/// selector matches it, as the ReplicaSet controller would adopt it.
fn adopting_replica_set<'r, 'a>(
    replica_sets: &'r [RevisionSet<'a>],
    pod: &Pod,
) -> Option<&'r RevisionSet<'a>> {
    let has_controller = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true));
    if has_controller {
        return None;
    }
    replica_sets.iter().find(|rs| {
        rs.replica_set
            .spec
            .as_ref()
            .is_some_and(|s| label_selector_matches(&s.selector, pod.metadata.labels.as_ref()))
    })
}

/// The Service(s) of the workload: owned by the ModelService, else those
/// that select the Pod template's labels (the Deployment's, or a lone
/// ReplicaSet's), else one of exactly the workload's name.
fn related_services<'a>(
    in_namespace: &[&'a Service],
    model_service: Option<&DynamicObject>,
    template_labels: Option<&std::collections::BTreeMap<String, String>>,
    workload_name: Option<&str>,
) -> Vec<&'a Service> {
    let in_ns = in_namespace.iter().copied();
    if let Some(msvc) = model_service {
        let owned: Vec<_> = in_ns
            .clone()
            .filter(|s| owned_by(&s.metadata, uid(&msvc.metadata)))
            .collect();
        if !owned.is_empty() {
            return owned;
        }
    }
    if template_labels.is_some() {
        let selecting: Vec<_> = in_ns
            .clone()
            .filter(|s| selector_matches(s, template_labels))
            .collect();
        if !selecting.is_empty() {
            return selecting;
        }
    }
    in_ns
        .filter(|s| Some(name(&s.metadata)) == workload_name)
        .collect()
}
