//! The read plan: every kind mdiag lists, where, and how each list is
//! trimmed and lands in a [`Snapshot`](mdiag_core::model::Snapshot). The live
//! reads (one namespace, all of them, a namespace at a time) and the gate's
//! watches all walk this one table, so adding a kind is one row here and
//! one [`Planned`] impl.
//!
//! Besides the table, a read gets the controller's Deployment and Lease by
//! name ([`mdiag_core::chain::ControllerLocation::spots`]) and the ModelServices
//! and HTTPRoutes that discovery names.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::DeserializeOwned;

use mdiag_core::model::{EventRecord, Objects};

/// Where a list of the plan is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// In the namespace being read (or in all of them).
    Scope,
    /// Cluster-scoped.
    Cluster,
    /// In this namespace, whatever the scope.
    In(&'static str),
}

impl Where {
    /// The namespace of the list, given the read's scope.
    pub fn namespace(self, scope: Option<&str>) -> Option<&str> {
        match self {
            Where::Scope => scope,
            Where::Cluster => None,
            Where::In(ns) => Some(ns),
        }
    }
}

/// A kind in the plan.
pub trait Planned:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
    /// The plural, as gaps and watches name it.
    const RESOURCE: &'static str;
    /// How much of its managedFields the analysis reads.
    const MANAGED_FIELDS: ManagedFields = ManagedFields::Drop;

    /// Trims an object as its page arrives; `false` drops it.
    fn keep(&mut self) -> bool {
        trim_meta(self.meta_mut(), Self::MANAGED_FIELDS);
        true
    }

    /// For an Event, the kind and name of the object it is about: a watch
    /// of one chain keeps only the Events about it.
    fn subject(&self) -> Option<(&str, &str)> {
        None
    }

    /// Puts what was read into the snapshot's objects.
    fn land(items: Vec<Self>, objects: &mut Objects);

    /// The API of the kind in a namespace, or in all (or cluster-scoped).
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self>;
}

/// The API of a namespaced kind in one namespace, or in all.
fn namespaced<K>(client: kube::Client, namespace: Option<&str>) -> kube::Api<K>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    match namespace {
        Some(ns) => kube::Api::namespaced(client, ns),
        None => kube::Api::all(client),
    }
}

/// Visits every kind of the plan.
pub trait Visit {
    fn visit<K: Planned>(&mut self, at: Where);
}

/// The table.
pub fn each_list(v: &mut impl Visit) {
    v.visit::<Deployment>(Where::Scope);
    v.visit::<ReplicaSet>(Where::Scope);
    v.visit::<StatefulSet>(Where::Scope);
    v.visit::<DaemonSet>(Where::Scope);
    v.visit::<ControllerRevision>(Where::Scope);
    v.visit::<Job>(Where::Scope);
    v.visit::<CronJob>(Where::Scope);
    v.visit::<Pod>(Where::Scope);
    v.visit::<Service>(Where::Scope);
    v.visit::<EndpointSlice>(Where::Scope);
    v.visit::<CoreEvent>(Where::Scope);
    v.visit::<HorizontalPodAutoscaler>(Where::Scope);
    v.visit::<PodDisruptionBudget>(Where::Scope);
    v.visit::<Node>(Where::Cluster);
    // The leader-election Leases of kube-scheduler and kube-controller-manager.
    v.visit::<Lease>(Where::In("kube-system"));
}

pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How much of an object's managedFields the analysis reads. The fields a
/// manager wrote (`fieldsV1`) are most of an entry, and held as a JSON tree
/// they cost several times their text: a namespace's ReplicaSets carried
/// tens of megabytes of them that no rule read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManagedFields {
    /// None of it.
    Drop,
    /// Who wrote the object, how and when (manager, operation,
    /// subresource, time): declaration and write times. Not the fields.
    Writes,
    /// Also the fields each manager wrote to the main resource: a
    /// Deployment's field owners (field-conflict,
    /// managed-deployment-edited). Not those written through the status
    /// subresource, which no rule reads.
    Fields,
}

impl ManagedFields {
    /// Whether an entry's `fieldsV1` is kept, by its subresource.
    pub fn keeps_fields_of(self, subresource: Option<&str>) -> bool {
        self == ManagedFields::Fields && subresource != Some("status")
    }
}

/// What no rule reads of a Pod's spec, nor of a controller's Pod
/// template: the volumes, and each container's environment and mounts
/// (rules read volumes through their Events, and a container's image,
/// probes, resources, ports, command and state). A read that only judges
/// and never writes its objects back (a file traced or triaged, a
/// namespace triaged in parts) drops them: with them a Pod is some 12 KB
/// as typed (a `Volume` alone is 3 KB), without them about 4 KB.
pub const UNREAD_POD_SPEC_FIELDS: [&str; 1] = ["volumes"];
/// See [`UNREAD_POD_SPEC_FIELDS`]: what no rule reads of a container.
pub const UNREAD_CONTAINER_FIELDS: [&str; 4] = ["env", "envFrom", "volumeMounts", "volumeDevices"];

/// Drops [`UNREAD_POD_SPEC_FIELDS`] and [`UNREAD_CONTAINER_FIELDS`] from a
/// typed Pod spec (`objects::trim_unread_spec_value` does the same to an
/// object not yet typed).
pub fn trim_unread_pod_spec(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    spec.volumes = None;
    let containers = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for c in containers {
        c.env = None;
        c.env_from = None;
        c.volume_mounts = None;
        c.volume_devices = None;
    }
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        c.env = None;
        c.env_from = None;
        c.volume_mounts = None;
        c.volume_devices = None;
    }
}

/// What a read that judges and never writes back drops of objects
/// already typed: what [`trim_unread_pod_specs`] drops, and each kept
/// managedFields tree in favour of its leaf paths
/// ([`mdiag_core::analysis::keep_written_paths_only`]). A file read
/// with `Keep::Analysed` does the same before typing.
pub fn trim_judged(objects: &mut Objects) {
    trim_unread_pod_specs(objects);
    let metas = objects.deployments.iter_mut().map(|d| &mut d.metadata);
    for entry in metas.flat_map(|m| m.managed_fields.iter_mut().flatten()) {
        if let Some(fields) = entry.fields_v1.as_mut() {
            mdiag_core::analysis::keep_written_paths_only(fields);
        }
    }
}

/// [`trim_unread_pod_spec`] for every Pod and Pod template of `objects`.
pub fn trim_unread_pod_specs(objects: &mut Objects) {
    let pods = objects.pods.iter_mut().filter_map(|p| p.spec.as_mut());
    let templates = (objects.deployments.iter_mut())
        .filter_map(|d| d.spec.as_mut().and_then(|s| s.template.spec.as_mut()))
        .chain(
            (objects.replica_sets.iter_mut())
                .filter_map(|r| r.spec.as_mut()?.template.as_mut()?.spec.as_mut()),
        )
        .chain(
            (objects.stateful_sets.iter_mut())
                .filter_map(|s| s.spec.as_mut().and_then(|s| s.template.spec.as_mut())),
        )
        .chain(
            (objects.daemon_sets.iter_mut())
                .filter_map(|d| d.spec.as_mut().and_then(|s| s.template.spec.as_mut())),
        )
        .chain(
            (objects.jobs.iter_mut())
                .filter_map(|j| j.spec.as_mut().and_then(|s| s.template.spec.as_mut())),
        )
        .chain((objects.cron_jobs.iter_mut()).filter_map(|c| {
            c.spec
                .as_mut()?
                .job_template
                .spec
                .as_mut()?
                .template
                .spec
                .as_mut()
        }));
    for spec in pods.chain(templates) {
        trim_unread_pod_spec(spec);
    }
}

/// What every object loses as its page arrives: the last-applied
/// annotation (a second copy of the object) and what the analysis does not
/// read of its managedFields.
pub fn trim_meta(meta: &mut ObjectMeta, managed: ManagedFields) {
    match managed {
        ManagedFields::Drop => meta.managed_fields = None,
        _ => {
            for entry in meta.managed_fields.iter_mut().flatten() {
                if !managed.keeps_fields_of(entry.subresource.as_deref()) {
                    entry.fields_v1 = None;
                }
            }
        }
    }
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
}

impl Planned for Deployment {
    const RESOURCE: &'static str = "deployments";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    const MANAGED_FIELDS: ManagedFields = ManagedFields::Fields;
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.deployments.extend(items);
    }
}

impl Planned for ReplicaSet {
    const RESOURCE: &'static str = "replicasets";
    /// When its spec was last written: a lone ReplicaSet's rung, and
    /// whether a refusal to create Pods is older than the last scale.
    const MANAGED_FIELDS: ManagedFields = ManagedFields::Writes;
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.replica_sets.extend(items);
    }
}

impl Planned for StatefulSet {
    const RESOURCE: &'static str = "statefulsets";
    const MANAGED_FIELDS: ManagedFields = ManagedFields::Writes;
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.stateful_sets.extend(items);
    }
}

impl Planned for DaemonSet {
    const RESOURCE: &'static str = "daemonsets";
    const MANAGED_FIELDS: ManagedFields = ManagedFields::Writes;
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.daemon_sets.extend(items);
    }
}

impl Planned for Job {
    const RESOURCE: &'static str = "jobs";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.jobs.extend(items);
    }
}

impl Planned for CronJob {
    const RESOURCE: &'static str = "cronjobs";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.cron_jobs.extend(items);
    }
}

impl Planned for ControllerRevision {
    const RESOURCE: &'static str = "controllerrevisions";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    /// Only the metadata (owner, hash label) and `revision` are read: the
    /// stored template (`data`) is a copy of the set's own and is dropped.
    fn keep(&mut self) -> bool {
        trim_meta(&mut self.metadata, ManagedFields::Drop);
        self.data = None;
        true
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.controller_revisions.extend(items);
    }
}

impl Planned for Pod {
    const RESOURCE: &'static str = "pods";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.pods.extend(items);
    }
}

impl Planned for Service {
    const RESOURCE: &'static str = "services";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.services.extend(items);
    }
}

impl Planned for EndpointSlice {
    const RESOURCE: &'static str = "endpointslices";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.endpoint_slices.extend(items);
    }
}

impl Planned for HorizontalPodAutoscaler {
    const RESOURCE: &'static str = "horizontalpodautoscalers";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.hpas.extend(items);
    }
}

impl Planned for PodDisruptionBudget {
    const RESOURCE: &'static str = "poddisruptionbudgets";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.pdbs.extend(items);
    }
}

impl Planned for Node {
    const RESOURCE: &'static str = "nodes";
    fn api(client: kube::Client, _namespace: Option<&str>) -> kube::Api<Self> {
        kube::Api::all(client)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.nodes.extend(items);
    }
}

impl Planned for Lease {
    const RESOURCE: &'static str = "leases";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.leases.extend(items);
    }
}

/// Built-in kinds whose Events no rule and no chain reads. Events about
/// any other kind (Pods, ReplicaSets, Deployments, StatefulSets,
/// DaemonSets, Services, Nodes, HPAs, the ModelService and other custom
/// kinds) are kept.
const UNREAD_EVENT_KINDS: &[&str] = &[
    "Job",
    "CronJob",
    "ConfigMap",
    "Secret",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "VolumeAttachment",
    "Namespace",
    "ServiceAccount",
    "Lease",
    "Ingress",
    "IngressClass",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "CertificateSigningRequest",
    "PriorityClass",
    "CustomResourceDefinition",
    "APIService",
];

impl Planned for CoreEvent {
    const RESOURCE: &'static str = "events";
    fn api(client: kube::Client, namespace: Option<&str>) -> kube::Api<Self> {
        namespaced(client, namespace)
    }
    fn keep(&mut self) -> bool {
        let kind = self.involved_object.kind.as_deref().unwrap_or("");
        if UNREAD_EVENT_KINDS.contains(&kind) {
            return false;
        }
        trim_meta(&mut self.metadata, ManagedFields::Drop);
        true
    }
    fn subject(&self) -> Option<(&str, &str)> {
        let about = &self.involved_object;
        Some((
            about.kind.as_deref().unwrap_or(""),
            about.name.as_deref().unwrap_or(""),
        ))
    }
    fn land(items: Vec<Self>, o: &mut Objects) {
        o.events
            .extend(items.into_iter().map(|e| EventRecord::Core(Box::new(e))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdiag_core::model::Kind;

    struct Names(Vec<(&'static str, Where)>);
    impl Visit for Names {
        fn visit<K: Planned>(&mut self, at: Where) {
            self.0.push((K::RESOURCE, at));
        }
    }

    /// Every kind of the model's table is read: by the plan, or (the
    /// serving platforms' objects and HTTPRoutes, whose group and version
    /// only the cluster knows) through discovery.
    #[test]
    fn the_plan_and_discovery_read_every_kind_of_the_model() {
        let mut names = Names(Vec::new());
        each_list(&mut names);
        let mut read: Vec<&str> = names.0.iter().map(|(r, _)| *r).collect();
        read.extend(
            mdiag_core::chain::PLATFORMS
                .iter()
                .map(|p| p.kind.resource()),
        );
        read.push(Kind::HttpRoute.resource());
        read.sort();
        let mut model: Vec<&str> = Kind::ALL.iter().map(|k| k.resource()).collect();
        model.sort();
        assert_eq!(read, model);
    }

    #[test]
    fn the_plan_lists_every_kind_of_the_chain_once() {
        let mut names = Names(Vec::new());
        each_list(&mut names);
        let mut resources: Vec<&str> = names.0.iter().map(|(r, _)| *r).collect();
        resources.sort();
        let before = resources.len();
        resources.dedup();
        assert_eq!(before, resources.len(), "a kind is listed twice");
        for needed in [
            "deployments",
            "replicasets",
            "statefulsets",
            "daemonsets",
            "controllerrevisions",
            "pods",
            "services",
            "endpointslices",
            "events",
        ] {
            assert!(
                names.0.contains(&(needed, Where::Scope)),
                "{needed} is read in the scope"
            );
        }
    }

    #[test]
    fn a_controller_revision_keeps_its_revision_and_owner_but_not_its_template_copy() {
        let mut r: ControllerRevision = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "shard-5f6d8c9b7d", "namespace": "serve",
                "labels": {"controller.kubernetes.io/hash": "5f6d8c9b7d"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "shard", "uid": "u", "controller": true}],
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]
            },
            "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": [{"name": "server", "image": "img:2"}]}}}},
            "revision": 2
        }))
        .unwrap();
        assert!(r.keep());
        assert!(r.data.is_none());
        assert!(r.metadata.managed_fields.is_none());
        assert_eq!(r.revision, 2);
        assert_eq!(r.metadata.owner_references.unwrap()[0].kind, "StatefulSet");
        let mut names = Names(Vec::new());
        each_list(&mut names);
        for kind in ["statefulsets", "daemonsets", "controllerrevisions"] {
            assert!(names.0.contains(&(kind, Where::Scope)), "{kind}");
        }
    }
}
