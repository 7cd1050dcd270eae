//! The serving platforms, one row each: the custom resource users declare,
//! how the Deployment that serves it is found among the ones it owns (by
//! owner UID, never by name) or whether it is that Deployment itself (an
//! Argo Rollout owns its ReplicaSets), and what its status can be trusted
//! to say. Adding a platform of this shape is one row here and the rules
//! that read its own status (docs/platforms.md).

use k8s_openapi::api::apps::v1::Deployment;
use kube_core::DynamicObject;

use crate::model::{Kind, Objects, Rollout, TargetKind};

/// One serving platform: a custom resource whose controller writes a
/// Deployment (and its Service) for it.
#[derive(Debug, PartialEq, Eq)]
pub struct Platform {
    /// The kind of its object, as the snapshot files it.
    pub kind: Kind,
    /// The target that names it (`msvc/NAME`, `isvc/NAME`).
    pub target: TargetKind,
    /// Its `status.observedGeneration` is its own generation as its
    /// controller saw it, so the ladder has an `observed` step. KServe
    /// copies the Deployment's there instead: comparing it with the
    /// InferenceService's generation would be comparing two counters.
    pub observes_own_generation: bool,
    /// Of the Deployments it owns, the one whose Pods serve, by a label of
    /// the Deployment: KServe's predictor beside a transformer or explainer.
    /// `None`: the one it controls.
    pub serving_label: Option<(&'static str, &'static str)>,
    /// Where its spec says how many replicas it wants, as a JSON pointer:
    /// what a chain with no Deployment yet is measured against.
    pub desired_replicas: &'static str,
    /// Its controller is mdiag's own subject (the modeldock-controller, its
    /// Lease and its writes are judged).
    pub controller_judged: bool,
    /// Its object is itself the workload: it owns its ReplicaSets, and the
    /// chain walks it as the Deployment it stands in for (an Argo Rollout).
    pub is_workload: bool,
    /// Its Pods serve in groups: it owns a leader StatefulSet, and each
    /// leader Pod owns its group's worker StatefulSet (a LeaderWorkerSet).
    pub serves_in_groups: bool,
    /// The condition of its status that says it serves, as written.
    pub ready_condition: &'static str,
    /// Its controller flips that condition to False without rewriting its
    /// reason (LWS's `setCondition`), so a False one's reason is stale.
    pub false_keeps_old_reason: bool,
    /// Each of its revisions runs in a Deployment of its own (a Knative
    /// Revision's), found by the UID label Knative copies onto it: the
    /// chain's revisions are those Deployments' ReplicaSets.
    pub revisions_own_deployments: bool,
}

/// ModelService, reconciled by the modeldock-controller.
pub const MODEL_SERVICE: Platform = Platform {
    kind: Kind::ModelService,
    target: TargetKind::ModelService,
    observes_own_generation: true,
    serving_label: None,
    desired_replicas: "/spec/replicas",
    controller_judged: true,
    is_workload: false,
    serves_in_groups: false,
    ready_condition: "Ready",
    false_keeps_old_reason: false,
    revisions_own_deployments: false,
};

/// KServe's InferenceService in Standard (formerly RawDeployment) mode:
/// the Deployment `NAME-predictor` labelled `component: predictor`.
pub const INFERENCE_SERVICE: Platform = Platform {
    kind: Kind::InferenceService,
    target: TargetKind::InferenceService,
    observes_own_generation: false,
    serving_label: Some(("component", "predictor")),
    desired_replicas: "/spec/predictor/minReplicas",
    controller_judged: false,
    is_workload: false,
    serves_in_groups: false,
    ready_condition: "Ready",
    false_keeps_old_reason: false,
    revisions_own_deployments: false,
};

/// Argo Rollouts' Rollout: a Deployment in all but name, whose controller
/// steps the new revision in (canary) or switches to it (blue-green). Its
/// `observedGeneration` is its own, and is read as the Deployment step's.
pub const ROLLOUT: Platform = Platform {
    kind: Kind::Rollout,
    target: TargetKind::Rollout,
    observes_own_generation: false,
    serving_label: None,
    desired_replicas: "/spec/replicas",
    controller_judged: false,
    is_workload: true,
    serves_in_groups: false,
    ready_condition: "Ready",
    false_keeps_old_reason: false,
    revisions_own_deployments: false,
};

/// A LeaderWorkerSet: `spec.replicas` groups of `size` Pods each, a group
/// serving only when all its Pods are Ready. Its status observes its own
/// generation only since v0.9, so the leader StatefulSet's stands for it.
pub const LEADER_WORKER_SET: Platform = Platform {
    kind: Kind::LeaderWorkerSet,
    target: TargetKind::LeaderWorkerSet,
    observes_own_generation: false,
    serving_label: None,
    desired_replicas: "/spec/replicas",
    controller_judged: false,
    is_workload: false,
    serves_in_groups: true,
    ready_condition: "Available",
    false_keeps_old_reason: true,
    revisions_own_deployments: false,
};

/// A Knative Service: its Configuration stamps a Revision per change of
/// its template, each Revision runs in a Deployment of its own that the
/// autoscaler sizes (to zero when idle), and its Route splits traffic
/// over Revisions. Its status observes its own generation and copies the
/// Configuration's and the Route's (docs/platforms.md#knative).
pub const KNATIVE_SERVICE: Platform = Platform {
    kind: Kind::KnativeService,
    target: TargetKind::KnativeService,
    observes_own_generation: true,
    serving_label: None,
    // No replica count in its spec: before the first Deployment, the
    // autoscaler's initial scale (one Pod, Knative's default).
    desired_replicas: "/spec/replicas",
    controller_judged: false,
    is_workload: false,
    serves_in_groups: false,
    ready_condition: "Ready",
    false_keeps_old_reason: false,
    revisions_own_deployments: true,
};

/// Every platform, in the order triage lists them.
pub const PLATFORMS: &[&Platform] = &[
    &MODEL_SERVICE,
    &INFERENCE_SERVICE,
    &ROLLOUT,
    &LEADER_WORKER_SET,
    &KNATIVE_SERVICE,
];

impl Platform {
    pub fn of_kind(kind: Kind) -> Option<&'static Platform> {
        PLATFORMS.iter().copied().find(|p| p.kind == kind)
    }

    pub fn of_target(target: TargetKind) -> Option<&'static Platform> {
        PLATFORMS.iter().copied().find(|p| p.target == target)
    }

    /// The platform an owner reference's kind names. A kind whose name is
    /// a core kind's too (Knative's `Service`) is never matched by name
    /// alone; nothing mdiag walks is owned by a Knative Service.
    pub fn of_owner_kind(kind: &str) -> Option<&'static Platform> {
        PLATFORMS
            .iter()
            .copied()
            .find(|p| p.kind.name() == kind && p.kind != Kind::KnativeService)
    }

    /// Its objects in a snapshot, in the snapshot's order.
    pub fn objects<'s>(&'static self, objects: &'s Objects) -> Vec<PlatformObject<'s>> {
        let plain = |list: &'s [DynamicObject]| {
            list.iter()
                .map(|object| PlatformObject {
                    platform: self,
                    object,
                    workload: None,
                })
                .collect()
        };
        match self.kind {
            Kind::InferenceService => plain(&objects.inference_services),
            Kind::LeaderWorkerSet => plain(&objects.leader_worker_sets),
            Kind::KnativeService => plain(&objects.knative_services),
            Kind::Rollout => objects
                .rollouts
                .iter()
                .map(|r| PlatformObject {
                    platform: self,
                    object: r.object(),
                    workload: Some(r.workload()),
                })
                .collect(),
            _ => plain(&objects.model_services),
        }
    }

    /// Files one of its objects in a snapshot.
    pub fn file(&self, objects: &mut Objects, object: DynamicObject) {
        match self.kind {
            Kind::InferenceService => objects.inference_services.push(object),
            Kind::LeaderWorkerSet => objects.leader_worker_sets.push(object),
            Kind::KnativeService => objects.knative_services.push(object),
            Kind::Rollout => objects.rollouts.push(Rollout::new(object)),
            _ => objects.model_services.push(object),
        }
    }

    /// Among the Deployments an object of this platform owns (by UID), the
    /// one that serves: the one with the serving label, else the one it
    /// controls, else any.
    pub fn serving_deployment<'a>(
        &self,
        owner_uid: &str,
        owned: impl Iterator<Item = &'a Deployment>,
    ) -> Option<&'a Deployment> {
        let labelled = |d: &Deployment| {
            self.serving_label.is_some_and(|(k, v)| {
                d.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(k))
                    .is_some_and(|x| x == v)
            })
        };
        let controlled = |d: &Deployment| {
            d.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == owner_uid && o.controller == Some(true))
        };
        owned.max_by_key(|d| (labelled(d), controlled(d)))
    }
}

/// An InferenceService in KServe's Knative mode (formerly Serverless): its
/// predictor is a Knative Service, whose Revision owns the Deployment. The
/// mode its controller resolved (`status.deploymentMode`) comes first,
/// then the annotation; the cluster default (a ConfigMap) is not read, so
/// with neither the mode is not assumed.
pub fn kserve_knative_mode(object: &DynamicObject) -> bool {
    if object
        .types
        .as_ref()
        .is_some_and(|t| t.kind != "InferenceService")
    {
        return false;
    }
    let knative = |mode: &str| matches!(mode, "Knative" | "Serverless");
    match object.data["status"]["deploymentMode"].as_str() {
        Some(mode) if !mode.is_empty() => knative(mode),
        _ => object
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("serving.kserve.io/deploymentMode"))
            .is_some_and(|m| knative(m)),
    }
}

/// The object of a serving platform at the top of a chain.
#[derive(Debug, Clone, Copy)]
pub struct PlatformObject<'a> {
    pub platform: &'static Platform,
    pub object: &'a DynamicObject,
    /// The Deployment it stands in for, when it is itself the workload.
    pub workload: Option<&'a Deployment>,
}

impl PlatformObject<'_> {
    /// Its kind as mdiag names it: the API's (`InferenceService`), but
    /// `KnativeService` for Knative's `Service`, which is not the core one.
    pub fn kind(&self) -> &'static str {
        self.platform.target.as_str()
    }

    /// `msvc/NAME`, `isvc/NAME`.
    pub fn target_text(&self) -> String {
        format!(
            "{}/{}",
            self.platform.target.short(),
            super::name(&self.object.metadata)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_is_one_row_of_its_kind_and_target() {
        for p in PLATFORMS {
            assert_eq!(Platform::of_kind(p.kind), Some(*p));
            assert_eq!(Platform::of_target(p.target), Some(*p));
            if p.kind != Kind::KnativeService {
                assert_eq!(Platform::of_owner_kind(p.kind.name()), Some(*p));
            }
        }
        // Knative's Service is not the core Service an owner may name.
        assert_eq!(Platform::of_owner_kind("Service"), None);
        assert_eq!(Platform::of_kind(Kind::Deployment), None);
    }

    fn deployment(name: &str, component: Option<&str>, controller: bool) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name,
                "labels": component.map(|c| serde_json::json!({"component": c})),
                "ownerReferences": [{"apiVersion": "serving.kserve.io/v1beta1",
                    "kind": "InferenceService", "name": "m", "uid": "u1",
                    "controller": controller}],
            }
        }))
        .unwrap()
    }

    #[test]
    fn the_predictor_serves_beside_a_transformer() {
        let owned = [
            deployment("m-transformer", Some("transformer"), true),
            deployment("m-predictor", Some("predictor"), true),
            deployment("m-explainer", Some("explainer"), true),
        ];
        let d = INFERENCE_SERVICE.serving_deployment("u1", owned.iter());
        assert_eq!(
            d.and_then(|d| d.metadata.name.as_deref()),
            Some("m-predictor")
        );
        // A ModelService has no serving label: the Deployment it controls.
        let owned = [deployment("a", None, false), deployment("b", None, true)];
        let d = MODEL_SERVICE.serving_deployment("u1", owned.iter());
        assert_eq!(d.and_then(|d| d.metadata.name.as_deref()), Some("b"));
    }
}
