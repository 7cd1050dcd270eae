//! What a chain is: the walked graph of one workload ([`Chain`]), its
//! revisions, Pods and pod set, where the controller lives, and the error
//! when the target is not there.

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::DynamicObject;

use super::{generation_observed, name, revision_matches};
use crate::catalogue::{Arg, Message};
use crate::model::{TargetKind, TargetSpec};

/// Where the ModelService controller is looked for after the target namespace.
pub const CONTROLLER_NAMESPACE: &str = "modeldock-system";
pub const CONTROLLER_NAME: &str = "modeldock-controller";

/// The target named something that is not in the snapshot.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", crate::catalogue::Localized::message(self).en())]
pub struct TargetNotFound {
    pub kind: TargetKind,
    /// `None`: in no namespace of a file.
    pub namespace: Option<String>,
    pub name: String,
    /// Targets that do exist there, as `msvc/NAME` or `deploy/NAME`.
    pub available: Vec<String>,
    /// Where else the name is, boxed: the error travels in every walk's
    /// `Result`.
    pub hints: Box<NotFoundHints>,
}

/// Where a name that is not there is after all.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NotFoundHints {
    /// Other namespaces of the snapshot that hold this kind and name.
    pub elsewhere: Vec<String>,
    /// The same name as another kind there (`pod/NAME` for a pasted Pod
    /// name), as the target the user may have meant.
    pub other_kinds: Vec<String>,
    /// A Service that is there but selects the Pods of no workload, or of
    /// several (then `available` lists them): its selector, as `k=v,...`.
    pub service_selector: Option<String>,
}

impl crate::catalogue::Localized for TargetNotFound {
    fn message(&self) -> Message {
        let quoted = format!("{:?}", self.name);
        let place = match &self.namespace {
            Some(ns) => Message::new("error.place.namespace").arg("namespace", format!("{ns:?}")),
            None => Message::new("error.place.file"),
        };
        let available = Arg::list(self.available.iter().map(String::as_str), "sep.comma");
        let base = |id| {
            Message::new(id)
                .arg("kind", self.kind.as_str())
                .arg("name", quoted.as_str())
                .arg("place", place.clone())
        };
        match &self.hints.service_selector {
            Some(selector) if self.available.is_empty() => {
                base("error.not_found.selects_nothing").arg("selector", selector.as_str())
            }
            Some(selector) => base("error.not_found.selects_several")
                .arg("selector", selector.as_str())
                .arg("available", available),
            None => base("error.not_found").arg("hint", hint(self)),
        }
    }
}

fn hint(not_found: &TargetNotFound) -> Message {
    let hints = &not_found.hints;
    match (hints.elsewhere.as_slice(), hints.other_kinds.as_slice()) {
        ([one], _) => Message::new("error.not_found.elsewhere")
            .arg("quoted", format!("{one:?}"))
            .arg("namespace", one.as_str()),
        ([_, ..], _) => Message::new("error.not_found.elsewhere_many").arg(
            "namespaces",
            Arg::list(hints.elsewhere.iter().map(String::as_str), "sep.comma"),
        ),
        ([], [_, ..]) => Message::new("error.not_found.other_kind").arg(
            "targets",
            Arg::list(hints.other_kinds.iter().map(String::as_str), "error.or"),
        ),
        ([], []) if not_found.available.is_empty() => Message::new("error.not_found.nothing"),
        ([], []) => Message::new("error.not_found.available").arg(
            "available",
            Arg::list(not_found.available.iter().map(String::as_str), "sep.comma"),
        ),
    }
}

/// Where the ModelService controller lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerLocation {
    pub namespace: String,
    pub name: String,
}

impl ControllerLocation {
    /// Where to look for the controller: where `--controller` says, else
    /// `modeldock-controller` in the target namespace (when there is one),
    /// then in `modeldock-system`.
    pub fn spots(chosen: Option<&ControllerLocation>, namespace: Option<&str>) -> Vec<Self> {
        if let Some(c) = chosen {
            return vec![c.clone()];
        }
        let at = |ns: &str| ControllerLocation {
            namespace: ns.to_string(),
            name: CONTROLLER_NAME.into(),
        };
        namespace
            .filter(|ns| *ns != CONTROLLER_NAMESPACE)
            .map(at)
            .into_iter()
            .chain(std::iter::once(at(CONTROLLER_NAMESPACE)))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Chain<'a> {
    pub namespace: String,
    pub target: TargetSpec,
    /// The serving platform's object above the Deployment (a ModelService,
    /// an InferenceService), from the table in `platforms.rs`.
    pub platform: Option<super::PlatformObject<'a>>,
    /// The Knative Service whose Revisions are the chain's revisions: the
    /// target itself, or the predictor of an InferenceService in KServe's
    /// Knative mode (docs/platforms.md#kserves-knative-mode).
    pub knative_service: Option<super::PlatformObject<'a>>,
    pub deployment: Option<&'a Deployment>,
    /// Newest revision first.
    pub replica_sets: Vec<RevisionSet<'a>>,
    /// A StatefulSet or DaemonSet target: its Pods are owned directly.
    pub pod_set: Option<PodSet<'a>>,
    /// The pod set's ControllerRevisions, newest first.
    pub set_revisions: Vec<SetRevision<'a>>,
    pub pods: Vec<ChainPod<'a>>,
    pub services: Vec<&'a Service>,
    pub endpoint_slices: Vec<&'a EndpointSlice>,
    pub controller: Option<ControllerParts<'a>>,
    /// A Job or CronJob target: the Job judged and the CronJob above it.
    pub job: Option<super::JobRun<'a>>,
    /// A LeaderWorkerSet's groups, in the order of their leaders: the
    /// unit that serves (docs/platforms.md#leaderworkerset).
    pub groups: Vec<Group<'a>>,
}

/// One group of a LeaderWorkerSet: a leader Pod (owned by the leader
/// StatefulSet) and the worker StatefulSet that leader Pod owns. Its
/// Pods serve together or not at all.
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub leader: &'a Pod,
    /// The worker set: none for a group of one, or before it is created.
    pub workers: Option<&'a StatefulSet>,
    /// How many Pods the group has when whole, leader included.
    pub size: i32,
}

impl Group<'_> {
    /// The group's name, as LWS names it: its leader Pod's.
    pub fn name(&self) -> &str {
        name(&self.leader.metadata)
    }

    /// Whether a Pod is this group's: its leader, or owned by its workers.
    pub fn holds(&self, pod: &Pod) -> bool {
        std::ptr::eq(pod, self.leader)
            || self.workers.is_some_and(|w| {
                let set_uid = w.metadata.uid.as_deref().unwrap_or("");
                !set_uid.is_empty()
                    && pod
                        .metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|o| o.uid == set_uid && o.controller == Some(true))
            })
    }
}

#[derive(Debug, Clone)]
pub struct RevisionSet<'a> {
    pub replica_set: &'a ReplicaSet,
    pub revision: Option<i64>,
    /// Its template is the Deployment's current one.
    pub current: bool,
}

#[derive(Debug, Clone)]
pub struct ChainPod<'a> {
    pub pod: &'a Pod,
    pub revision: Option<i64>,
    /// Owned by the ReplicaSet of the current revision; for a pod set, at
    /// its update revision or held where its update strategy leaves it.
    pub current: bool,
    /// A Pod kept on an older revision on purpose, which counts as the
    /// declaration in effect: a pod set's below its partition or under
    /// OnDelete, an Argo Rollout's stable Pod while it waits at a step, a
    /// Knative Revision's that a traffic split pins.
    pub held: bool,
}

/// A StatefulSet or a DaemonSet: it owns its Pods, keeps its revisions in
/// ControllerRevisions, and has no ReplicaSet between.
#[derive(Debug, Clone, Copy)]
pub enum PodSet<'a> {
    StatefulSet(&'a StatefulSet),
    DaemonSet(&'a DaemonSet),
}

/// How a pod set replaces its Pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetStrategy {
    /// Replaced by the controller; a StatefulSet's ordinals below
    /// `partition` stay on their revision.
    RollingUpdate { partition: i32 },
    /// Replaced only when someone deletes them.
    OnDelete,
}

impl<'a> PodSet<'a> {
    pub fn meta(&self) -> &'a ObjectMeta {
        match self {
            PodSet::StatefulSet(s) => &s.metadata,
            PodSet::DaemonSet(d) => &d.metadata,
        }
    }

    pub fn kind(&self) -> TargetKind {
        match self {
            PodSet::StatefulSet(_) => TargetKind::StatefulSet,
            PodSet::DaemonSet(_) => TargetKind::DaemonSet,
        }
    }

    pub fn name(&self) -> &'a str {
        name(self.meta())
    }

    pub fn observed_generation(&self) -> Option<i64> {
        match self {
            PodSet::StatefulSet(s) => s.status.as_ref().and_then(|st| st.observed_generation),
            PodSet::DaemonSet(d) => d.status.as_ref().and_then(|st| st.observed_generation),
        }
    }

    /// The set's controller observed its current generation.
    pub fn observed(&self) -> bool {
        generation_observed(self.meta().generation, self.observed_generation())
    }

    pub fn template_labels(&self) -> Option<&'a std::collections::BTreeMap<String, String>> {
        match self {
            PodSet::StatefulSet(s) => s.spec.as_ref()?.template.metadata.as_ref()?.labels.as_ref(),
            PodSet::DaemonSet(d) => d.spec.as_ref()?.template.metadata.as_ref()?.labels.as_ref(),
        }
    }

    pub fn strategy(&self) -> SetStrategy {
        let (kind, partition) = match self {
            PodSet::StatefulSet(s) => {
                let u = s.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
                (
                    u.and_then(|u| u.type_.clone()),
                    u.and_then(|u| u.rolling_update.as_ref())
                        .and_then(|r| r.partition)
                        .unwrap_or(0),
                )
            }
            PodSet::DaemonSet(d) => (
                d.spec
                    .as_ref()
                    .and_then(|s| s.update_strategy.as_ref())
                    .and_then(|u| u.type_.clone()),
                0,
            ),
        };
        match kind.as_deref() {
            Some("OnDelete") => SetStrategy::OnDelete,
            _ => SetStrategy::RollingUpdate {
                partition: partition.max(0),
            },
        }
    }

    /// Desired Pods: a StatefulSet's replicas (default 1); the nodes a
    /// DaemonSet's controller says should run one.
    pub fn desired(&self) -> i32 {
        match self {
            PodSet::StatefulSet(s) => s.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            PodSet::DaemonSet(d) => d.status.as_ref().map_or(0, |s| s.desired_number_scheduled),
        }
    }

    /// Pods the update strategy expects at the update revision: a
    /// partitioned StatefulSet only the ordinals at or above the partition;
    /// OnDelete none (the controller replaces nothing by itself).
    pub fn expected_updated(&self) -> i32 {
        match self.strategy() {
            SetStrategy::OnDelete => 0,
            SetStrategy::RollingUpdate { partition } => {
                let desired = self.desired();
                match self {
                    PodSet::StatefulSet(_) => (desired - partition).max(0),
                    PodSet::DaemonSet(_) => desired,
                }
            }
        }
    }
}

/// One ControllerRevision of a pod set.
#[derive(Debug, Clone)]
pub struct SetRevision<'a> {
    pub object: &'a ControllerRevision,
    pub revision: i64,
    /// The update revision: a StatefulSet's `status.updateRevision`, a
    /// DaemonSet's newest revision.
    pub current: bool,
}

impl SetRevision<'_> {
    pub fn name(&self) -> &str {
        name(&self.object.metadata)
    }

    /// Whether a Pod's `controller-revision-hash` label names this revision:
    /// the revision's name (StatefulSet) or its hash (DaemonSet).
    pub fn matches(&self, set_name: &str, pod_hash: &str) -> bool {
        revision_matches(&self.object.metadata, set_name, pod_hash)
    }
}

impl ChainPod<'_> {
    /// Being deleted, or ended for good (phase Failed or Succeeded, as an
    /// evicted Pod is) under an owner that replaces it: not part of the
    /// rollout any more. The ReplicaSet controller does not count such a
    /// Pod as a replica and creates another. A bare Pod's or a Job's ended
    /// Pod is the run itself: it is judged, not set aside.
    pub fn terminating(&self) -> bool {
        self.pod.metadata.deletion_timestamp.is_some() || (self.ended() && self.replaced())
    }

    /// A ReplicaSet, StatefulSet or DaemonSet owns it: one that ended
    /// is replaced by another.
    fn replaced(&self) -> bool {
        self.pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| matches!(o.kind.as_str(), "ReplicaSet" | "StatefulSet" | "DaemonSet"))
    }

    /// In a terminal phase: nothing will restart its containers.
    pub fn ended(&self) -> bool {
        matches!(
            self.pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Failed" | "Succeeded")
        )
    }
}

#[derive(Debug, Clone)]
pub struct ControllerParts<'a> {
    pub location: ControllerLocation,
    pub deployment: Option<&'a Deployment>,
    pub lease: Option<&'a Lease>,
}

impl<'a> Chain<'a> {
    pub fn current_replica_set(&self) -> Option<&RevisionSet<'a>> {
        self.replica_sets.iter().find(|r| r.current)
    }

    /// The ModelService at the top, when the platform is mdiag's own.
    pub fn model_service(&self) -> Option<&'a DynamicObject> {
        self.platform
            .filter(|p| p.platform.kind == crate::model::Kind::ModelService)
            .map(|p| p.object)
    }

    /// Its Pods serve in groups (a LeaderWorkerSet): what serves is
    /// counted in whole groups.
    pub fn serves_in_groups(&self) -> bool {
        self.platform.is_some_and(|p| p.platform.serves_in_groups)
    }

    /// How many Pods each of its groups has when whole, when it serves in
    /// groups.
    pub fn group_size(&self) -> Option<i32> {
        self.platform
            .filter(|p| p.platform.serves_in_groups)
            .map(super::groups::group_size)
    }

    /// The platform object that is itself the workload in the Deployment
    /// slot (an Argo Rollout), when there is one.
    pub fn workload_platform(&self) -> Option<super::PlatformObject<'a>> {
        self.platform.filter(|p| p.workload.is_some())
    }

    /// The kind of what stands in the Deployment slot, as the API names it
    /// (`Deployment`, `Rollout`): what findings about it name.
    pub fn deployment_kind(&self) -> &'static str {
        self.workload_platform().map_or("Deployment", |p| p.kind())
    }

    /// How kubectl names it in a reference (`deployment/NAME`, `rollout/NAME`).
    pub fn deployment_ref(&self, name: &str) -> String {
        format!("{}/{name}", self.deployment_kind().to_ascii_lowercase())
    }

    /// Whether a Service of the chain selects the labels as the workload's:
    /// a Rollout's Services are matched with the hash Argo switches in
    /// their selectors set aside, since a stable Service selects the stable
    /// revision's Pods on purpose while a canary runs.
    pub fn service_selects(
        &self,
        service: &Service,
        labels: Option<&std::collections::BTreeMap<String, String>>,
    ) -> bool {
        if self.workload_platform().is_none() {
            return super::selector_matches(service, labels);
        }
        let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
            return false;
        };
        let mut rest = selector
            .iter()
            .filter(|(k, _)| *k != crate::model::ROLLOUT_HASH_LABEL)
            .peekable();
        rest.peek().is_some() && labels.is_some_and(|l| rest.all(|(k, v)| l.get(k) == Some(v)))
    }

    pub fn current_pods(&self) -> impl Iterator<Item = &ChainPod<'a>> {
        self.pods.iter().filter(|p| p.current && !p.terminating())
    }

    /// A ReplicaSet walked as a workload of its own: no Deployment of the
    /// snapshot owns it (see
    /// [`replica_set_stands_alone`](super::replica_set_stands_alone)).
    pub fn lone_replica_set(&self) -> Option<&'a ReplicaSet> {
        if self.platform.is_some() || self.deployment.is_some() || self.pod_set.is_some() {
            return None;
        }
        self.replica_sets.first().map(|r| r.replica_set)
    }

    /// A Pod target with nothing above it: no ReplicaSet, set or
    /// Deployment in the snapshot owns it.
    pub fn bare_pod(&self) -> bool {
        self.target.kind == TargetKind::Pod
            && self.model_service().is_none()
            && self.deployment.is_none()
            && self.pod_set.is_none()
            && self.replica_sets.is_empty()
    }

    /// Desired replicas: the Deployment's (or the pod set's, or the lone
    /// ReplicaSet's), else the platform object's, else 1.
    pub fn desired_replicas(&self) -> i32 {
        if let Some(run) = &self.job {
            return run
                .job
                .and_then(|j| j.spec.as_ref())
                .and_then(|s| s.completions)
                .unwrap_or(1);
        }
        if let Some(set) = self.pod_set {
            return set.desired();
        }
        if let Some(rs) = self.lone_replica_set() {
            return rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        }
        if let Some(d) = self.deployment {
            let mut replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            // A Knative Revision that never became Ready still wants its
            // first Pod, whatever the autoscaler set once it gave up.
            if self.latest_revision_never_ready() {
                replicas = replicas.max(1);
            }
            // And the Revisions a traffic split pins want theirs.
            return replicas + self.pinned_desired();
        }
        self.platform
            .and_then(|p| p.object.data.pointer(p.platform.desired_replicas)?.as_i64())
            .map(|r| r.clamp(0, i64::from(i32::MAX)) as i32)
            .unwrap_or(1)
    }

    pub fn primary_service(&self) -> Option<&'a Service> {
        self.services.first().copied()
    }

    /// The pod set's update revision, when one is known.
    pub fn current_set_revision(&self) -> Option<&SetRevision<'a>> {
        self.set_revisions.iter().find(|r| r.current)
    }
    /// The objects whose generations say which revision is declared and
    /// observed (the ModelService, the Deployment or pod set, the Job and
    /// its CronJob), each with its resource's plural: what a verdict on a
    /// watched view is checked against a fresh read for.
    pub fn workloads(&self) -> Vec<(&'static str, &'a ObjectMeta)> {
        let mut out = Vec::new();
        if let Some(p) = self.platform {
            out.push((p.platform.kind.resource(), &p.object.metadata));
        }
        if let Some(d) = self.deployment
            && self.workload_platform().is_none()
        {
            out.push(("deployments", &d.metadata));
        }
        match self.pod_set {
            Some(PodSet::StatefulSet(s)) => out.push(("statefulsets", &s.metadata)),
            Some(PodSet::DaemonSet(d)) => out.push(("daemonsets", &d.metadata)),
            None => {}
        }
        if let Some(run) = &self.job {
            if let Some(c) = run.cron_job {
                out.push(("cronjobs", &c.metadata));
            }
            if let Some(j) = run.job {
                out.push(("jobs", &j.metadata));
            }
        }
        out
    }
}
