//! The object graph of one workload, walked by owner UID (never by name
//! prefix): ModelService -> Deployment -> ReplicaSets -> Pods, and the
//! Service with its EndpointSlices beside them. Pure: it only reads the
//! snapshot.

use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube_core::DynamicObject;

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::core::v1::Node;

use crate::model::{EventRecord, LogRecord, Snapshot, TargetKind, TargetSpec};

pub mod shard;

pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The label a StatefulSet or DaemonSet puts on its Pods and
/// ControllerRevisions: a StatefulSet's Pods carry the revision's name, a
/// DaemonSet's Pods only its hash.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// A DaemonSet Pod's template generation, and where its DaemonSet keeps
/// the current one: the fallback when no ControllerRevision was read.
pub const POD_TEMPLATE_GENERATION: &str = "pod-template-generation";
pub const DAEMONSET_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";
/// Where the ModelService controller is looked for after the target namespace.
pub const CONTROLLER_NAMESPACE: &str = "modeldock-system";
pub const CONTROLLER_NAME: &str = "modeldock-controller";

/// The target named something that is not in the snapshot.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{kind} {name:?} not found {}{}", place(.namespace), hint(.available))]
pub struct TargetNotFound {
    pub kind: TargetKind,
    /// `None`: in no namespace of a file.
    pub namespace: Option<String>,
    pub name: String,
    /// Targets that do exist there, as `msvc/NAME` or `deploy/NAME`.
    pub available: Vec<String>,
}

fn place(namespace: &Option<String>) -> String {
    match namespace {
        Some(ns) => format!("in namespace {ns:?}"),
        None => "in any namespace of the file".into(),
    }
}

fn hint(available: &[String]) -> String {
    if available.is_empty() {
        "; there is nothing to trace there: check the namespace (-n) and the context".into()
    } else {
        format!("; trace one of these instead: {}", available.join(", "))
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
    pub model_service: Option<&'a DynamicObject>,
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
    /// A pod set's Pod its update strategy keeps on an older revision on
    /// purpose (an ordinal below the partition, or OnDelete): it counts as
    /// the declaration in effect.
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

/// Whether a ControllerRevision (its metadata) of the set `set_name` is the
/// one a Pod's `controller-revision-hash` label `pod_hash` names: by the
/// revision's name, its own hash label, or its name less the set's prefix.
pub fn revision_matches(meta: &ObjectMeta, set_name: &str, pod_hash: &str) -> bool {
    let own = name(meta);
    !pod_hash.is_empty()
        && (own == pod_hash
            || meta
                .labels
                .as_ref()
                .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
                .is_some_and(|h| h == pod_hash)
            || own.strip_prefix(set_name).and_then(|r| r.strip_prefix('-')) == Some(pod_hash))
}

/// A StatefulSet Pod's ordinal: the number after the last `-` of its name.
pub fn ordinal(pod: &Pod) -> Option<i32> {
    name(&pod.metadata).rsplit_once('-')?.1.parse().ok()
}

/// The `controller-revision-hash` label of a Pod.
pub fn pod_revision_hash(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(CONTROLLER_REVISION_HASH)
        .map(String::as_str)
}

impl ChainPod<'_> {
    /// Being deleted, or ended for good (phase Failed or Succeeded, as an
    /// evicted Pod is): not part of the rollout any more. The ReplicaSet
    /// controller does not count such a Pod as a replica and creates another.
    pub fn terminating(&self) -> bool {
        self.pod.metadata.deletion_timestamp.is_some() || self.ended()
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

    pub fn current_pods(&self) -> impl Iterator<Item = &ChainPod<'a>> {
        self.pods.iter().filter(|p| p.current && !p.terminating())
    }

    /// A ReplicaSet walked as a workload of its own: no Deployment of the
    /// snapshot owns it (see [`replica_set_stands_alone`]).
    pub fn lone_replica_set(&self) -> Option<&'a ReplicaSet> {
        if self.model_service.is_some() || self.deployment.is_some() || self.pod_set.is_some() {
            return None;
        }
        self.replica_sets.first().map(|r| r.replica_set)
    }

    /// A Pod target with nothing above it: no ReplicaSet, set or
    /// Deployment in the snapshot owns it.
    pub fn bare_pod(&self) -> bool {
        self.target.kind == TargetKind::Pod
            && self.model_service.is_none()
            && self.deployment.is_none()
            && self.pod_set.is_none()
            && self.replica_sets.is_empty()
    }

    /// Desired replicas: the Deployment's (or the pod set's, or the lone
    /// ReplicaSet's), else the ModelService's, else 1.
    pub fn desired_replicas(&self) -> i32 {
        if let Some(set) = self.pod_set {
            return set.desired();
        }
        if let Some(rs) = self.lone_replica_set() {
            return rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        }
        if let Some(d) = self.deployment {
            return d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        }
        self.model_service
            .and_then(|m| m.data["spec"]["replicas"].as_i64())
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
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

fn ns_of(meta: &ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("")
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

/// The UIDs `meta` names as owners (of a given kind).
fn owned_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    !owner_uid.is_empty()
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid)
}

fn owner_uid_of_kind<'m>(meta: &'m ObjectMeta, kind: &str) -> Option<&'m str> {
    let owners = meta.owner_references.as_deref().unwrap_or(&[]);
    owners
        .iter()
        .filter(|o| o.kind == kind)
        .max_by_key(|o| o.controller.unwrap_or(false))
        .map(|o| o.uid.as_str())
}

/// The ownerReference that controls the object (`controller: true`).
fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// Whether a ReplicaSet is a workload of its own: no Deployment of the
/// snapshot owns it, and either nothing controls it (created by hand, or
/// orphaned by `kubectl delete deployment --cascade=orphan`, which removes
/// the ownerReference), or its controller is a Deployment the snapshot does
/// not hold although it read the Deployments of its namespace (deleted,
/// its ReplicaSets not yet collected). A ReplicaSet whose Deployment was
/// not read is that unknown Deployment's, and one controlled by another
/// kind (an Argo Rollout) belongs to a workload mdiag does not read: neither
/// is a workload here.
pub fn replica_set_stands_alone(
    snapshot: &Snapshot,
    rs: &ReplicaSet,
    deployment_present: impl Fn(&str) -> bool,
) -> bool {
    let meta = &rs.metadata;
    let owned = meta
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Deployment" && deployment_present(&o.uid));
    if owned {
        return false;
    }
    match controller_ref(meta) {
        None => true,
        Some(o) if o.kind == "Deployment" => !snapshot
            .gaps
            .iter()
            .any(|g| g.hides("deployments", ns_of(meta))),
        Some(_) => false,
    }
}

/// A ReplicaSet that wants no Pod and has none (an old revision left at
/// zero): nothing to judge, so no triage row; `trace rs/NAME` still walks it.
fn idle_replica_set(rs: &ReplicaSet, has_pods: bool) -> bool {
    let wants = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let has = rs.status.as_ref().map_or(0, |s| s.replicas);
    wants == 0 && has == 0 && !has_pods
}

/// The ReplicaSets of a namespace (or of all) that are workloads of their
/// own and want or have Pods, in the snapshot's order.
pub fn lone_replica_sets<'a>(
    snapshot: &'a Snapshot,
    namespace: Option<&str>,
) -> Vec<&'a ReplicaSet> {
    if snapshot.objects.replica_sets.is_empty() {
        return Vec::new();
    }
    let deployments: HashSet<&str> = snapshot
        .objects
        .deployments
        .iter()
        .map(|d| uid(&d.metadata))
        .filter(|u| !u.is_empty())
        .collect();
    let pod_owners: HashSet<&str> = snapshot
        .objects
        .pods
        .iter()
        .flat_map(|p| p.metadata.owner_references.iter().flatten())
        .map(|o| o.uid.as_str())
        .collect();
    snapshot
        .objects
        .replica_sets
        .iter()
        .filter(|rs| namespace.is_none_or(|ns| ns_of(&rs.metadata) == ns))
        .filter(|rs| replica_set_stands_alone(snapshot, rs, |u| deployments.contains(u)))
        .filter(|rs| {
            let id = uid(&rs.metadata);
            !idle_replica_set(rs, !id.is_empty() && pod_owners.contains(id))
        })
        .collect()
}

/// Whether a controller observed the object's current generation. An
/// object that records no generation (hand-written data; the apiserver
/// always sets one) is no evidence that it did not.
pub fn generation_observed(generation: Option<i64>, observed: Option<i64>) -> bool {
    match generation {
        None => true,
        Some(g) => observed.is_some_and(|o| o >= g),
    }
}

/// The generation a ModelService's controller last observed:
/// `status.observedGeneration`, else the newest `observedGeneration` its
/// conditions carry (controllers built on metav1.Condition often set only those).
pub fn observed_generation(msvc: &DynamicObject) -> Option<i64> {
    let status = &msvc.data["status"];
    status["observedGeneration"].as_i64().or_else(|| {
        status["conditions"]
            .as_array()?
            .iter()
            .filter_map(|c| c["observedGeneration"].as_i64())
            .max()
    })
}

pub fn revision_of(meta: &ObjectMeta) -> Option<i64> {
    meta.annotations
        .as_ref()?
        .get(REVISION_ANNOTATION)?
        .parse()
        .ok()
}

/// Whether a ReplicaSet runs the Deployment's current template: the same
/// template once the pod-template-hash label the controller adds is removed.
fn runs_template(rs: &ReplicaSet, deployment: &Deployment) -> bool {
    let (Some(rs_template), Some(d_template)) = (
        rs.spec.as_ref().and_then(|s| s.template.as_ref()),
        deployment.spec.as_ref().map(|s| &s.template),
    ) else {
        return false;
    };
    let mut rs_template = rs_template.clone();
    if let Some(labels) = rs_template
        .metadata
        .as_mut()
        .and_then(|m| m.labels.as_mut())
    {
        labels.remove(POD_TEMPLATE_HASH);
    }
    let normalise = |t: &k8s_openapi::api::core::v1::PodTemplateSpec| {
        let mut v = serde_json::to_value(t).unwrap_or_default();
        strip_empty(&mut v);
        v
    };
    normalise(&rs_template) == normalise(d_template)
}

/// Drops nulls, empty maps and empty lists so that `labels: {}` and a
/// missing `labels` compare equal.
fn strip_empty(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for child in map.values_mut() {
                strip_empty(child);
            }
            map.retain(|_, c| match c {
                Value::Null => false,
                Value::Object(m) => !m.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(strip_empty),
        _ => {}
    }
}

/// Whether a Service's selector selects the labels.
pub fn selector_matches(
    service: &Service,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return false;
    };
    if selector.is_empty() {
        return false;
    }
    let Some(labels) = labels else { return false };
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

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
    model_service_by_uid: HashMap<&'a str, &'a DynamicObject>,
    model_service_by_name: HashMap<(&'a str, &'a str), &'a DynamicObject>,
    deployment_by_uid: HashMap<&'a str, &'a Deployment>,
    deployment_by_name: HashMap<(&'a str, &'a str), &'a Deployment>,
    deployments_by_owner: HashMap<&'a str, Vec<&'a Deployment>>,
    deployments_by_ns: HashMap<&'a str, Vec<&'a Deployment>>,
    replica_set_by_uid: HashMap<&'a str, &'a ReplicaSet>,
    replica_set_by_name: HashMap<(&'a str, &'a str), &'a ReplicaSet>,
    replica_sets_by_owner: HashMap<&'a str, Vec<&'a ReplicaSet>>,
    pod_by_uid: HashMap<&'a str, &'a Pod>,
    pod_by_name: HashMap<(&'a str, &'a str), &'a Pod>,
    pods_by_owner: HashMap<&'a str, Vec<&'a Pod>>,
    stateful_set_by_uid: HashMap<&'a str, &'a StatefulSet>,
    stateful_set_by_name: HashMap<(&'a str, &'a str), &'a StatefulSet>,
    daemon_set_by_uid: HashMap<&'a str, &'a DaemonSet>,
    daemon_set_by_name: HashMap<(&'a str, &'a str), &'a DaemonSet>,
    revisions_by_owner: HashMap<&'a str, Vec<&'a ControllerRevision>>,
    /// Pods with no controller owner, by namespace: the ones a ReplicaSet
    /// may adopt by selector.
    uncontrolled_pods: HashMap<&'a str, Vec<&'a Pod>>,
    services_by_ns: HashMap<&'a str, Vec<&'a Service>>,
    slices_by_ns: HashMap<&'a str, Vec<&'a EndpointSlice>>,
    events_by_uid: HashMap<&'a str, Vec<&'a EventRecord>>,
    /// Events that name no UID, by (kind, name).
    events_by_name: HashMap<(String, String), Vec<&'a EventRecord>>,
    node_by_name: HashMap<&'a str, &'a Node>,
    logs_by_pod: HashMap<(&'a str, &'a str), Vec<&'a LogRecord>>,
    hpa_namespaces: HashSet<&'a str>,
}

impl<'a> Index<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let o = &snapshot.objects;
        let mut ix = Index {
            snapshot,
            model_service_by_uid: HashMap::new(),
            model_service_by_name: HashMap::new(),
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
            daemon_set_by_uid: HashMap::new(),
            daemon_set_by_name: HashMap::new(),
            revisions_by_owner: HashMap::new(),
            uncontrolled_pods: HashMap::new(),
            services_by_ns: HashMap::new(),
            slices_by_ns: HashMap::new(),
            events_by_uid: HashMap::new(),
            events_by_name: HashMap::new(),
            node_by_name: HashMap::new(),
            logs_by_pod: HashMap::new(),
            hpa_namespaces: HashSet::new(),
        };
        let owners = |meta: &'a ObjectMeta| {
            meta.owner_references
                .iter()
                .flatten()
                .map(|r| r.uid.as_str())
                .filter(|u| !u.is_empty())
        };
        // The first of equals wins, as `find` over the lists would.
        for m in &o.model_services {
            let meta = &m.metadata;
            ix.model_service_by_uid.entry(uid(meta)).or_insert(m);
            ix.model_service_by_name
                .entry((ns_of(meta), name(meta)))
                .or_insert(m);
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
        for e in &o.events {
            let s = e.subject();
            if s.uid.is_empty() {
                ix.events_by_name
                    .entry((s.kind, s.name))
                    .or_default()
                    .push(e);
            } else {
                if let Some(key) = e.subject_uid() {
                    ix.events_by_uid.entry(key).or_default().push(e);
                }
            }
        }
        for n in &o.nodes {
            ix.node_by_name.entry(name(&n.metadata)).or_insert(n);
        }
        for l in &snapshot.logs {
            ix.logs_by_pod
                .entry((l.namespace.as_str(), l.pod.as_str()))
                .or_default()
                .push(l);
        }
        for h in &o.hpas {
            ix.hpa_namespaces.insert(ns_of(&h.metadata));
        }
        ix
    }

    fn services_in(&self, namespace: &str) -> &[&'a Service] {
        self.services_by_ns
            .get(namespace)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

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
        };
        let msvc_by_uid = |owner: &str| self.model_service_by_uid.get(owner).copied();
        let key = (namespace, target.name.as_str());

        let (model_service, deployment) = match target.kind {
            TargetKind::ModelService => {
                let msvc = *self.model_service_by_name.get(&key).ok_or_else(not_found)?;
                (Some(msvc), self.owned_deployment(msvc, namespace))
            }
            TargetKind::Deployment => {
                let d = *self.deployment_by_name.get(&key).ok_or_else(not_found)?;
                let msvc = owner_uid_of_kind(&d.metadata, "ModelService").and_then(msvc_by_uid);
                (msvc, Some(d))
            }
            TargetKind::StatefulSet => {
                let set = *self.stateful_set_by_name.get(&key).ok_or_else(not_found)?;
                return Ok(self.walk_pod_set(target, namespace, PodSet::StatefulSet(set)));
            }
            TargetKind::DaemonSet => {
                let set = *self.daemon_set_by_name.get(&key).ok_or_else(not_found)?;
                return Ok(self.walk_pod_set(target, namespace, PodSet::DaemonSet(set)));
            }
            TargetKind::ReplicaSet => {
                let rs = *self.replica_set_by_name.get(&key).ok_or_else(not_found)?;
                // One a Deployment of the snapshot owns is that Deployment's
                // chain, as its Pods are.
                let Some(d) = self.owning_deployment(&rs.metadata) else {
                    return Ok(self.walk_replica_set(target, namespace, rs));
                };
                let msvc = owner_uid_of_kind(&d.metadata, "ModelService").and_then(msvc_by_uid);
                (msvc, Some(d))
            }
            TargetKind::Pod => {
                let pod = *self.pod_by_name.get(&key).ok_or_else(not_found)?;
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
                let msvc = d
                    .and_then(|d| owner_uid_of_kind(&d.metadata, "ModelService"))
                    .and_then(msvc_by_uid);
                match (rs, d) {
                    // A ReplicaSet's Pod with no Deployment above: the
                    // ReplicaSet's chain.
                    (Some(rs), None) => return Ok(self.walk_replica_set(target, namespace, rs)),
                    // A bare Pod (or one whose owners are gone): the chain is the Pod.
                    (None, _) => return Ok(self.bare_pod_chain(target, namespace, pod)),
                    (Some(_), Some(_)) => {}
                }
                (msvc, d)
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
        if !seen_current && let Some(d) = deployment {
            mark_current_by_revision(&mut replica_sets, d);
        }

        let pods = self.pods_of_replica_sets(namespace, &replica_sets);
        let template_labels = deployment
            .and_then(|d| d.spec.as_ref())
            .and_then(|s| s.template.metadata.as_ref())
            .and_then(|m| m.labels.as_ref());
        let workload_name = model_service
            .map(|m| name(&m.metadata))
            .or(deployment.map(|d| name(&d.metadata)));
        let services = related_services(
            self.services_in(namespace),
            model_service,
            template_labels,
            workload_name,
        );
        let endpoint_slices = self.slices_of(namespace, &services);

        Ok(Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            model_service,
            deployment,
            replica_sets,
            pod_set: None,
            set_revisions: Vec::new(),
            pods,
            services,
            endpoint_slices,
            controller: model_service.map(|_| self.find_controller(namespace, controller)),
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
            model_service: None,
            deployment: None,
            replica_sets,
            pod_set: None,
            set_revisions: Vec::new(),
            pods,
            services,
            endpoint_slices,
            controller: None,
        }
    }

    /// The Pods some ReplicaSet of the chain owns, and those it may adopt,
    /// current revision first.
    fn pods_of_replica_sets(
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

    /// A StatefulSet's or DaemonSet's chain: its Pods by owner UID, its
    /// ControllerRevisions, and the update revision each Pod is (or is
    /// meant to stay) on.
    fn walk_pod_set(&self, target: &TargetSpec, namespace: &str, set: PodSet<'a>) -> Chain<'a> {
        let set_uid = uid(set.meta());
        let set_name = set.name();
        let mut set_revisions: Vec<SetRevision> = self
            .revisions_by_owner
            .get(set_uid)
            .into_iter()
            .flatten()
            .filter(|r| ns_of(&r.metadata) == namespace)
            .map(|r| SetRevision {
                object: r,
                revision: r.revision,
                current: false,
            })
            .collect();
        set_revisions.sort_by(|a, b| {
            b.revision
                .cmp(&a.revision)
                .then_with(|| a.name().cmp(b.name()))
        });
        // The update revision: the StatefulSet controller records it; a
        // DaemonSet's is its newest ControllerRevision.
        let update_hash: Option<String> = match set {
            PodSet::StatefulSet(s) => s
                .status
                .as_ref()
                .and_then(|st| st.update_revision.clone())
                .filter(|r| !r.is_empty()),
            PodSet::DaemonSet(_) => set_revisions.first().map(|r| {
                r.object
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
                    .cloned()
                    .or_else(|| {
                        r.name()
                            .strip_prefix(set_name)
                            .and_then(|h| h.strip_prefix('-'))
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| r.name().to_string())
            }),
        };
        if let Some(hash) = &update_hash
            && let Some(r) = set_revisions.iter_mut().find(|r| r.matches(set_name, hash))
        {
            r.current = true;
        }
        // Without a ControllerRevision (a dump that left them out), a
        // DaemonSet Pod of the current template carries its generation.
        let template_generation = match set {
            PodSet::DaemonSet(d) if set_revisions.is_empty() => d
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DAEMONSET_TEMPLATE_GENERATION))
                .cloned(),
            _ => None,
        };
        let strategy = set.strategy();
        let mut pods: Vec<ChainPod> = self
            .pods_by_owner
            .get(set_uid)
            .into_iter()
            .flatten()
            .copied()
            .filter(|pod| ns_of(&pod.metadata) == namespace)
            .map(|pod| {
                let hash = pod_revision_hash(pod).unwrap_or("");
                let at_update = match (&update_hash, &template_generation) {
                    (Some(h), _) => !hash.is_empty() && hash == h,
                    (None, Some(generation)) => {
                        pod.metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(POD_TEMPLATE_GENERATION))
                            == Some(generation)
                    }
                    (None, None) => false,
                };
                let known = update_hash.is_some() || template_generation.is_some();
                let held = !at_update
                    && known
                    && match strategy {
                        SetStrategy::OnDelete => true,
                        SetStrategy::RollingUpdate { partition } => {
                            matches!(set, PodSet::StatefulSet(_))
                                && ordinal(pod).is_some_and(|o| o < partition)
                        }
                    };
                ChainPod {
                    pod,
                    revision: set_revisions
                        .iter()
                        .find(|r| r.matches(set_name, hash))
                        .map(|r| r.revision),
                    current: at_update || held,
                    held,
                }
            })
            .collect();
        pods.sort_by(|a, b| {
            b.current
                .cmp(&a.current)
                .then_with(|| b.revision.cmp(&a.revision))
                .then_with(|| {
                    ordinal(a.pod)
                        .cmp(&ordinal(b.pod))
                        .then_with(|| name(&a.pod.metadata).cmp(name(&b.pod.metadata)))
                })
        });
        let services = set_services(self.services_in(namespace), set);
        let endpoint_slices = self.slices_of(namespace, &services);
        Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            model_service: None,
            deployment: None,
            replica_sets: Vec::new(),
            pod_set: Some(set),
            set_revisions,
            pods,
            services,
            endpoint_slices,
            controller: None,
        }
    }

    fn owned_deployment(
        &self,
        msvc: &DynamicObject,
        namespace_name: &str,
    ) -> Option<&'a Deployment> {
        let owner = uid(&msvc.metadata);
        if owner.is_empty() {
            return None;
        }
        self.deployments_by_owner
            .get(owner)
            .into_iter()
            .flatten()
            .copied()
            .filter(|d| ns_of(&d.metadata) == namespace_name)
            .max_by_key(|d| {
                d.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.uid == owner && o.controller == Some(true))
            })
    }

    /// The EndpointSlices of these Services: by the `kubernetes.io/service-name` label.
    fn slices_of(&self, namespace_name: &str, services: &[&Service]) -> Vec<&'a EndpointSlice> {
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
            model_service: None,
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

/// Whether a LabelSelector (matchLabels and matchExpressions) selects the
/// labels. An empty selector selects nothing here: adoption needs intent.
pub fn label_selector_matches(
    selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    let empty = std::collections::BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let match_labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_deref().unwrap_or(&[]);
    if match_labels.is_none_or(|m| m.is_empty()) && expressions.is_empty() {
        return false;
    }
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions_ok = expressions.iter().all(|e| {
        let values = e.values.as_deref().unwrap_or(&[]);
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    labels_ok && expressions_ok
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

/// The Services of a pod set: a StatefulSet's governing Service
/// (`spec.serviceName`, headless as a rule) first, then every Service whose
/// selector matches the template's labels, else one of the set's name.
fn set_services<'a>(in_namespace: &[&'a Service], set: PodSet) -> Vec<&'a Service> {
    let governing = match set {
        PodSet::StatefulSet(s) => s
            .spec
            .as_ref()
            .and_then(|s| s.service_name.as_deref())
            .filter(|n| !n.is_empty()),
        PodSet::DaemonSet(_) => None,
    };
    let mut out: Vec<&Service> = in_namespace
        .iter()
        .copied()
        .filter(|s| governing == Some(name(&s.metadata)))
        .collect();
    let labels = set.template_labels();
    for s in in_namespace.iter().copied() {
        if selector_matches(s, labels) && !out.iter().any(|o| std::ptr::eq(*o, s)) {
            out.push(s);
        }
    }
    if out.is_empty() {
        out.extend(
            in_namespace
                .iter()
                .copied()
                .filter(|s| name(&s.metadata) == set.name()),
        );
    }
    out
}

/// Targets a user could trace in a namespace, for "not found" messages.
pub fn available_targets(snapshot: &Snapshot, namespace_name: &str) -> Vec<String> {
    let mut out: Vec<String> = snapshot
        .objects
        .model_services
        .iter()
        .filter(|m| ns_of(&m.metadata) == namespace_name)
        .map(|m| format!("msvc/{}", name(&m.metadata)))
        .collect();
    out.extend(
        snapshot
            .objects
            .deployments
            .iter()
            .filter(|d| ns_of(&d.metadata) == namespace_name)
            .map(|d| format!("deploy/{}", name(&d.metadata))),
    );
    out.extend(
        snapshot
            .objects
            .stateful_sets
            .iter()
            .filter(|s| ns_of(&s.metadata) == namespace_name)
            .map(|s| format!("sts/{}", name(&s.metadata))),
    );
    out.extend(
        snapshot
            .objects
            .daemon_sets
            .iter()
            .filter(|d| ns_of(&d.metadata) == namespace_name)
            .map(|d| format!("ds/{}", name(&d.metadata))),
    );
    // Only the ReplicaSets that are workloads: a Deployment's are traced
    // through it.
    out.extend(
        lone_replica_sets(snapshot, Some(namespace_name))
            .into_iter()
            .map(|rs| format!("rs/{}", name(&rs.metadata))),
    );
    out.sort();
    out.dedup();
    out
}

/// The namespaces a file holds the named target in (to default `-n`).
pub fn namespaces_holding(snapshot: &Snapshot, target: &TargetSpec) -> Vec<String> {
    let metas: Vec<&ObjectMeta> = match target.kind {
        TargetKind::ModelService => snapshot
            .objects
            .model_services
            .iter()
            .map(|m| &m.metadata)
            .collect(),
        TargetKind::Deployment => snapshot
            .objects
            .deployments
            .iter()
            .map(|d| &d.metadata)
            .collect(),
        TargetKind::StatefulSet => snapshot
            .objects
            .stateful_sets
            .iter()
            .map(|s| &s.metadata)
            .collect(),
        TargetKind::DaemonSet => snapshot
            .objects
            .daemon_sets
            .iter()
            .map(|d| &d.metadata)
            .collect(),
        TargetKind::ReplicaSet => snapshot
            .objects
            .replica_sets
            .iter()
            .map(|r| &r.metadata)
            .collect(),
        TargetKind::Pod => snapshot.objects.pods.iter().map(|p| &p.metadata).collect(),
    };
    let mut out: Vec<String> = metas
        .into_iter()
        .filter(|m| name(m) == target.name)
        .map(|m| ns_of(m).to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The objects a snapshot of this chain keeps: the chain itself, the Pods
/// its slices point at, the Events about any of them, the Nodes its Pods
/// run on, the controller, and every Lease, HPA and PDB that was read (the
/// rules pick theirs). What replay needs, and no other workload's objects.
pub fn chain_objects(snapshot: &Snapshot, chain: &Chain) -> crate::model::Objects {
    use std::collections::HashSet;
    let o = &snapshot.objects;
    let mut uids: HashSet<&str> = HashSet::new();
    let mut out = crate::model::Objects::default();
    if let Some(m) = chain.model_service {
        uids.insert(uid(&m.metadata));
        out.model_services.push(m.clone());
    }
    let mut deployments: Vec<&Deployment> = chain.deployment.into_iter().collect();
    if let Some(d) = chain.controller.as_ref().and_then(|c| c.deployment) {
        deployments.push(d);
    }
    for d in deployments {
        uids.insert(uid(&d.metadata));
        out.deployments.push(d.clone());
    }
    for rs in &chain.replica_sets {
        uids.insert(uid(&rs.replica_set.metadata));
        out.replica_sets.push(rs.replica_set.clone());
    }
    match chain.pod_set {
        Some(PodSet::StatefulSet(s)) => {
            uids.insert(uid(&s.metadata));
            out.stateful_sets.push(s.clone());
        }
        Some(PodSet::DaemonSet(d)) => {
            uids.insert(uid(&d.metadata));
            out.daemon_sets.push(d.clone());
        }
        None => {}
    }
    for r in &chain.set_revisions {
        out.controller_revisions.push(r.object.clone());
    }
    let referenced: HashSet<&str> = chain
        .endpoint_slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .filter_map(|e| e.target_ref.as_ref()?.uid.as_deref())
        .collect();
    for pod in &o.pods {
        let id = uid(&pod.metadata);
        if chain.pods.iter().any(|p| uid(&p.pod.metadata) == id) || referenced.contains(id) {
            uids.insert(id);
            out.pods.push(pod.clone());
        }
    }
    for s in &chain.services {
        uids.insert(uid(&s.metadata));
        out.services.push((*s).clone());
    }
    for s in &chain.endpoint_slices {
        uids.insert(uid(&s.metadata));
        out.endpoint_slices.push((*s).clone());
    }
    let names: HashSet<(String, String)> = out
        .pods
        .iter()
        .map(|p| ("Pod".to_string(), name(&p.metadata).to_string()))
        .chain(
            out.deployments
                .iter()
                .map(|d| ("Deployment".into(), name(&d.metadata).to_string())),
        )
        .chain(
            out.replica_sets
                .iter()
                .map(|r| ("ReplicaSet".into(), name(&r.metadata).to_string())),
        )
        .chain(
            out.stateful_sets
                .iter()
                .map(|s| ("StatefulSet".into(), name(&s.metadata).to_string())),
        )
        .chain(
            out.daemon_sets
                .iter()
                .map(|d| ("DaemonSet".into(), name(&d.metadata).to_string())),
        )
        .chain(
            out.services
                .iter()
                .map(|s| ("Service".into(), name(&s.metadata).to_string())),
        )
        .chain(
            out.model_services
                .iter()
                .map(|m| ("ModelService".into(), name(&m.metadata).to_string())),
        )
        .collect();
    out.events = o
        .events
        .iter()
        .filter(|e| {
            let s = e.subject();
            uids.contains(s.uid.as_str())
                || (s.uid.is_empty() && names.contains(&(s.kind.clone(), s.name.clone())))
        })
        .cloned()
        .collect();
    let nodes: HashSet<&str> = out
        .pods
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.as_deref())
        .collect();
    out.nodes = o
        .nodes
        .iter()
        .filter(|n| nodes.contains(name(&n.metadata)))
        .cloned()
        .collect();
    out.leases = o.leases.clone();
    out.hpas = o.hpas.clone();
    out.pdbs = o.pdbs.clone();
    out.http_routes = o.http_routes.clone();
    out
}

/// A workload triage looks at.
#[derive(Debug, Clone)]
pub struct Workload {
    pub target: TargetSpec,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Every workload of a namespace (or of all): each ModelService, each
/// Deployment, StatefulSet and DaemonSet that no ModelService owns, each
/// ReplicaSet no Deployment owns (see [`lone_replica_sets`]), and each Pod
/// with no owner.
pub fn workloads(snapshot: &Snapshot, namespace: Option<&str>) -> Vec<Workload> {
    let wanted = |meta: &ObjectMeta| namespace.is_none_or(|ns| ns_of(meta) == ns);
    let target = |kind, meta: &ObjectMeta| Workload {
        target: TargetSpec {
            kind,
            namespace: Some(ns_of(meta).to_string()),
            name: name(meta).to_string(),
        },
        labels: meta.labels.clone().unwrap_or_default(),
    };
    let mut out: Vec<Workload> = snapshot
        .objects
        .model_services
        .iter()
        .filter(|m| wanted(&m.metadata))
        .map(|m| target(TargetKind::ModelService, &m.metadata))
        .collect();
    out.extend(
        snapshot
            .objects
            .deployments
            .iter()
            .filter(|d| wanted(&d.metadata))
            .filter(|d| owner_uid_of_kind(&d.metadata, "ModelService").is_none())
            .map(|d| target(TargetKind::Deployment, &d.metadata)),
    );
    let sets = snapshot
        .objects
        .stateful_sets
        .iter()
        .map(|s| (TargetKind::StatefulSet, &s.metadata))
        .chain(
            snapshot
                .objects
                .daemon_sets
                .iter()
                .map(|d| (TargetKind::DaemonSet, &d.metadata)),
        );
    out.extend(
        sets.filter(|(_, meta)| wanted(meta))
            .filter(|(_, meta)| owner_uid_of_kind(meta, "ModelService").is_none())
            .map(|(kind, meta)| target(kind, meta)),
    );
    out.extend(
        lone_replica_sets(snapshot, namespace)
            .into_iter()
            .map(|rs| target(TargetKind::ReplicaSet, &rs.metadata)),
    );
    // A Pod nobody owns fails on its own: nothing will replace it.
    out.extend(
        snapshot
            .objects
            .pods
            .iter()
            .filter(|p| wanted(&p.metadata))
            .filter(|p| {
                p.metadata
                    .owner_references
                    .as_ref()
                    .is_none_or(Vec::is_empty)
            })
            .map(|p| target(TargetKind::Pod, &p.metadata)),
    );
    out
}
