//! A load generator: many namespaces of ModelServices in a mix of broken
//! states, written straight through the API as the controllers and kubelets
//! of a real cluster would have left them, so that `mdiag triage` can be
//! measured at 10,000 Pods on a 2-core machine.
//!
//! Why not through the real controllers: the ReplicaSet controller creates
//! Pods at the controller-manager's client rate, the scheduler binds them one
//! by one and the fake kubelets keep crash-looping containers busy for as
//! long as they exist. 10,000 Pods that way take tens of minutes and keep
//! both cores busy while the benchmark runs. Written directly they take a
//! few minutes, and the cluster is quiet while it is measured.
//!
//! What is written, per workload, is what the components store:
//!
//! - the ModelService (with `spec.resources` asking for `nvidia.com/gpu` for
//!   the unschedulable share) and the Deployment and Service the
//!   modeldock-controller derives from it ([`crate::controller`]'s own
//!   functions, server-side applied as `modeldock-controller`, so the
//!   stand-in controller, when it runs, finds nothing to change), then the
//!   ModelService status it computes from the Deployment's;
//! - the ReplicaSet of revision 1 (`<deployment>-<pod-template-hash>`, the
//!   Deployment's stored template plus the hash label, owner reference,
//!   revision and desired/max-replicas annotations), its status, and the
//!   Deployment's revision annotation and status (conditions Available and
//!   Progressing), as the deployment and replicaset controllers write them;
//! - the Pods, owned by the ReplicaSet, bound to `<prefix>-node-NNN` (Nodes
//!   written Ready with capacity and a Lease) or, when unschedulable, left
//!   Pending with the scheduler's condition; their status as a kubelet
//!   reports it (waiting reasons, restart counts, last state, IPs);
//! - the EndpointSlice of the Service (endpoint conditions from the Pods'
//!   readiness) and the Events in both shapes: events.k8s.io for the
//!   scheduler and the deployment controller, core/v1 for the replicaset
//!   controller and the kubelet.
//!
//! kube-controller-manager must not run while loaded namespaces are being
//! written: its deployment controller would make a ReplicaSet of its own
//! before ours arrives. [`load`] does not stop it; `cargo xtask cluster
//! load` and the live trial do. Times are compressed: everything happens at
//! load time, so a crash loop shows its restarts and back-off at once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures::stream::{self, StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    Event as CoreEvent, Namespace, Node, Pod, Service, ServiceAccount,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event as NewEvent;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::controller::{self, CONTROLLER_NAME, modelservice_resource};
use crate::util::{fmt_micro, fmt_time, is_code, now, stable_hex};

/// The label on every loaded namespace (and Node), for cleaning up:
/// `kubectl delete ns,nodes -l mdiag.dev/load`.
pub const LOAD_LABEL: &str = "mdiag.dev/load";
const KCM: &str = "kube-controller-manager";
const IMAGE: &str = "registry.example.com/modeldock/chart-demo:v1.4.0";
const MISSING_IMAGE: &str = "registry.example.com/modeldock/chart-demo:v9.9.9-missing";
const PODS_PER_NODE: u32 = 100;
/// Workloads written at once (each writes its Pods a few at a time).
const CONCURRENT_WORKLOADS: usize = 24;
const CONCURRENT_PODS: usize = 4;

/// The state a loaded workload's Pods are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Healthy,
    CrashLoop,
    PullNotFound,
    Unschedulable,
    NeverReady,
}

impl State {
    /// The finding `mdiag triage` should lead this workload's row with
    /// (`None`: healthy, no finding).
    pub fn leading_finding(self) -> Option<&'static str> {
        match self {
            State::Healthy => None,
            State::CrashLoop => Some("crash-loop"),
            State::PullNotFound => Some("image-pull-not-found"),
            State::Unschedulable => Some("pod-unschedulable"),
            State::NeverReady => Some("readiness-failing"),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            State::Healthy => "healthy",
            State::CrashLoop => "crash-loop",
            State::PullNotFound => "pull-not-found",
            State::Unschedulable => "unschedulable",
            State::NeverReady => "never-ready",
        }
    }

    /// The share of each state: out of every 20 workloads, 8 healthy and 3
    /// of each broken state.
    fn of(i: u32) -> State {
        match i % 20 {
            0..=7 => State::Healthy,
            8..=10 => State::CrashLoop,
            11..=13 => State::PullNotFound,
            14..=16 => State::Unschedulable,
            _ => State::NeverReady,
        }
    }
}

/// How much to load.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub pods: u32,
    pub workloads: u32,
    pub namespaces: u32,
    /// Namespaces are `<prefix>-NN`, Nodes `<prefix>-node-NNN`.
    pub prefix: String,
}

/// One planned workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWorkload {
    pub namespace: String,
    pub name: String,
    pub state: State,
    pub replicas: u32,
}

impl LoadSpec {
    /// The workloads, spread round-robin over the namespaces, Pods as even
    /// as the numbers allow.
    pub fn plan(&self) -> Vec<PlannedWorkload> {
        let workloads = self.workloads.max(1);
        let namespaces = self.namespaces.clamp(1, workloads);
        (0..workloads)
            .map(|i| {
                let state = State::of(i);
                let extra = u32::from(i < self.pods % workloads);
                PlannedWorkload {
                    namespace: self.namespace(i % namespaces),
                    name: format!("w{i:04}-{}", state.label()),
                    state,
                    replicas: self.pods / workloads + extra,
                }
            })
            .collect()
    }

    pub fn namespace(&self, k: u32) -> String {
        format!("{}-{k:02}", self.prefix)
    }

    fn node_count(&self) -> u32 {
        self.pods.div_ceil(PODS_PER_NODE).max(1)
    }

    fn node(&self, i: u32) -> String {
        format!("{}-node-{i:03}", self.prefix)
    }
}

/// What a load wrote.
#[derive(Debug)]
pub struct LoadReport {
    pub workloads: Vec<PlannedWorkload>,
    pub namespaces: Vec<String>,
    pub pods: u32,
    pub requests: u64,
    pub elapsed: Duration,
}

struct Loader {
    client: Client,
    spec: LoadSpec,
    requests: AtomicU64,
    /// Makes Event names unique among those written in the same nanosecond.
    sequence: AtomicU64,
}

/// Writes the planned workloads. Namespaces that exist already are reused;
/// a workload that exists already is an error (load into fresh prefixes).
pub async fn load(client: &Client, spec: &LoadSpec) -> anyhow::Result<LoadReport> {
    let t0 = Instant::now();
    let loader = Arc::new(Loader {
        client: client.clone(),
        spec: spec.clone(),
        requests: AtomicU64::new(0),
        sequence: AtomicU64::new(0),
    });
    let plan = spec.plan();
    let namespaces: Vec<String> = {
        let mut v: Vec<String> = plan.iter().map(|w| w.namespace.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    stream::iter(namespaces.clone())
        .map(|ns| {
            let l = loader.clone();
            async move { l.namespace(&ns).await }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    stream::iter(0..spec.node_count())
        .map(|i| {
            let l = loader.clone();
            async move { l.node(i).await }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    let mut first_pod = 0u32;
    let jobs: Vec<(PlannedWorkload, u32)> = plan
        .iter()
        .map(|w| {
            let job = (w.clone(), first_pod);
            first_pod += w.replicas;
            job
        })
        .collect();
    stream::iter(jobs)
        .map(|(w, first)| {
            let l = loader.clone();
            async move {
                l.workload(&w, first)
                    .await
                    .with_context(|| format!("loading {}/{}", w.namespace, w.name))
            }
        })
        .buffer_unordered(CONCURRENT_WORKLOADS)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(LoadReport {
        pods: plan.iter().map(|w| w.replicas).sum(),
        workloads: plan,
        namespaces,
        requests: loader.requests.load(Ordering::Relaxed),
        elapsed: t0.elapsed(),
    })
}

fn post(manager: &str) -> PostParams {
    PostParams {
        field_manager: Some(manager.to_owned()),
        ..PostParams::default()
    }
}

fn patch_as(manager: &str) -> PatchParams {
    PatchParams {
        field_manager: Some(manager.to_owned()),
        ..PatchParams::default()
    }
}

/// The alphabet Kubernetes encodes generated name suffixes and template
/// hashes in (no vowels, no confusable digits).
const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn safe_suffix(seed: &str, n: usize) -> String {
    stable_hex(seed, n * 2)
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let v = u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("00"), 16).unwrap_or(0);
            SAFE[v as usize % SAFE.len()] as char
        })
        .collect()
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> anyhow::Result<T> {
    serde_json::from_value(v).context("building an object")
}

impl Loader {
    fn count(&self, n: u64) {
        self.requests.fetch_add(n, Ordering::Relaxed);
    }

    async fn namespace(&self, ns: &str) -> anyhow::Result<()> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let object = from(json!({
            "metadata": {"name": ns, "labels": {LOAD_LABEL: "true"}},
        }))?;
        self.count(1);
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(e) if is_code(&e, 409) => {}
            Err(e) => return Err(e).context("creating a namespace"),
        }
        // What the serviceaccount controller makes in a new namespace (Pods
        // are not admitted without it).
        let sa: Api<ServiceAccount> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        match sa
            .create(&post(KCM), &from(json!({"metadata": {"name": "default"}}))?)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_code(&e, 409) => Ok(()),
            Err(e) => Err(e).context("creating the default ServiceAccount"),
        }
    }

    async fn node(&self, i: u32) -> anyhow::Result<()> {
        let name = self.spec.node(i);
        let t = fmt_time(now());
        let api: Api<Node> = Api::all(self.client.clone());
        let node = from(json!({
            "metadata": {"name": name, "labels": {
                LOAD_LABEL: "true",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            }},
            "spec": {"podCIDR": format!("10.{}.{}.0/24", 200 + i / 250, i % 250)},
        }))?;
        self.count(1);
        match api.create(&post("kubelet"), &node).await {
            Ok(_) => {}
            Err(e) if is_code(&e, 409) => {}
            Err(e) => return Err(e).context("creating a Node"),
        }
        let capacity =
            json!({"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "200Gi"});
        let status = json!({"status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "message": "kubelet has sufficient memory available", "lastHeartbeatTime": t, "lastTransitionTime": t},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
                 "message": "kubelet has no disk pressure", "lastHeartbeatTime": t, "lastTransitionTime": t},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
                 "message": "kubelet has sufficient PID available", "lastHeartbeatTime": t, "lastTransitionTime": t},
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status", "lastHeartbeatTime": t, "lastTransitionTime": t},
            ],
            "addresses": [
                {"type": "InternalIP", "address": format!("172.30.{}.{}", i / 250, i % 250 + 1)},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "machineID": stable_hex(&name, 32), "systemUUID": stable_hex(&format!("{name}/uuid"), 32),
                "bootID": stable_hex(&format!("{name}/boot"), 32), "kernelVersion": "6.1.0",
                "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": "v1.35.8", "kubeProxyVersion": "", "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }});
        self.count(1);
        api.patch_status(&name, &patch_as("kubelet"), &Patch::Merge(&status))
            .await
            .context("writing a Node status")?;
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), "kube-node-lease");
        let lease = from(json!({
            "metadata": {"name": name, "labels": {LOAD_LABEL: "true"}},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                     "renewTime": fmt_micro(now())},
        }))?;
        self.count(1);
        match leases.create(&post("kubelet"), &lease).await {
            Ok(_) => Ok(()),
            Err(e) if is_code(&e, 409) => Ok(()),
            Err(e) => Err(e).context("creating a node Lease"),
        }
    }

    fn event_name(&self, object: &str) -> String {
        let n = self.sequence.fetch_add(1, Ordering::Relaxed);
        format!("{object}.{:x}", now().as_nanosecond() as u64 + n)
    }

    /// A core/v1 Event (the kubelet's and the replicaset controller's shape).
    #[allow(clippy::too_many_arguments)]
    async fn core_event(
        &self,
        regarding: &Value,
        component: &str,
        host: Option<&str>,
        type_: &str,
        reason: &str,
        message: &str,
        count: i32,
    ) -> anyhow::Result<()> {
        let ns = regarding["namespace"].as_str().unwrap_or("default");
        let object = regarding["name"].as_str().unwrap_or("object");
        let t = fmt_time(now());
        let mut source = json!({"component": component});
        if let Some(h) = host {
            source["host"] = json!(h);
        }
        let event: CoreEvent = from(json!({
            "metadata": {"name": self.event_name(object), "namespace": ns},
            "involvedObject": regarding,
            "reason": reason, "message": message, "type": type_,
            "source": source,
            "firstTimestamp": t, "lastTimestamp": t, "count": count,
            "reportingComponent": component, "reportingInstance": host.unwrap_or(""),
        }))?;
        let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        api.create(&PostParams::default(), &event)
            .await
            .context("creating an Event")?;
        Ok(())
    }

    /// An events.k8s.io/v1 Event (the scheduler's and the deployment
    /// controller's shape).
    async fn new_event(
        &self,
        regarding: &Value,
        controller: &str,
        type_: &str,
        reason: &str,
        action: &str,
        note: &str,
    ) -> anyhow::Result<()> {
        let ns = regarding["namespace"].as_str().unwrap_or("default");
        let object = regarding["name"].as_str().unwrap_or("object");
        let event: NewEvent = from(json!({
            "metadata": {"name": self.event_name(object), "namespace": ns},
            "eventTime": fmt_micro(now()),
            "reportingController": controller,
            "reportingInstance": format!("{controller}-{}", stable_hex(controller, 8)),
            "action": action, "reason": reason, "regarding": regarding,
            "note": note, "type": type_,
        }))?;
        let api: Api<NewEvent> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        api.create(&PostParams::default(), &event)
            .await
            .context("creating an Event")?;
        Ok(())
    }

    async fn workload(&self, w: &PlannedWorkload, first_pod: u32) -> anyhow::Result<()> {
        let ns = w.namespace.as_str();
        let name = w.name.as_str();
        let image = if w.state == State::PullNotFound {
            MISSING_IMAGE
        } else {
            IMAGE
        };
        // The ModelService, as a user declares it.
        let msvcs: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), ns, &modelservice_resource());
        let mut spec = json!({"image": image, "replicas": w.replicas, "port": 8080});
        if w.state == State::Unschedulable {
            spec["resources"] = json!({"limits": {"nvidia.com/gpu": "1"}});
        }
        let msvc: DynamicObject = from(json!({
            "apiVersion": "modeldock.io/v1alpha1",
            "kind": "ModelService",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"app.kubernetes.io/part-of": "load", "mdiag.dev/state": w.state.label()}},
            "spec": spec,
        }))?;
        self.count(1);
        let msvc = msvcs
            .create(&post("kubectl-client-side-apply"), &msvc)
            .await
            .context("creating the ModelService")?;

        // What the modeldock-controller derives from it.
        let ssa = PatchParams::apply(CONTROLLER_NAME).force();
        let deploys: Api<Deployment> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        let deployment = deploys
            .patch(
                name,
                &ssa,
                &Patch::Apply(&controller::desired_deployment(&msvc)),
            )
            .await
            .context("applying the Deployment")?;
        let services: Api<Service> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        let service = services
            .patch(
                name,
                &ssa,
                &Patch::Apply(&controller::desired_service(&msvc)),
            )
            .await
            .context("applying the Service")?;
        let deployment_ref = reference("apps/v1", "Deployment", &deployment.metadata);

        // The deployment controller: revision 1 and its ReplicaSet.
        let replicas = w.replicas as i64;
        let max_surge = (replicas as f64 * 0.25).ceil() as i64;
        let max_unavailable = (replicas as f64 * 0.25).floor() as i64;
        self.count(1);
        let deployment = deploys
            .patch(
                name,
                &patch_as(KCM),
                &Patch::Merge(
                    &json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}}}),
                ),
            )
            .await
            .context("annotating the Deployment")?;
        let dspec = deployment
            .spec
            .clone()
            .context("a Deployment without spec")?;
        let mut template = serde_json::to_value(&dspec.template)?;
        let hash = safe_suffix(&serde_json::to_string(&template)?, 10);
        template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
        let mut selector = serde_json::to_value(&dspec.selector)?;
        selector["matchLabels"]["pod-template-hash"] = json!(hash);
        let rs_name = format!("{name}-{hash}");
        let rs_labels = template["metadata"]["labels"].clone();
        let replica_set: ReplicaSet = from(json!({
            "metadata": {
                "name": rs_name, "namespace": ns, "labels": rs_labels,
                "annotations": {
                    "deployment.kubernetes.io/revision": "1",
                    "deployment.kubernetes.io/desired-replicas": replicas.to_string(),
                    "deployment.kubernetes.io/max-replicas": (replicas + max_surge).to_string(),
                },
                "ownerReferences": [owner("apps/v1", "Deployment", &deployment)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        }))?;
        let rss: Api<ReplicaSet> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        let replica_set = rss
            .create(&post(KCM), &replica_set)
            .await
            .context("creating the ReplicaSet")?;
        self.new_event(
            &deployment_ref,
            "deployment-controller",
            "Normal",
            "ScalingReplicaSet",
            "Scale",
            &format!("Scaled up replica set {rs_name} from 0 to {replicas}"),
        )
        .await?;

        // The Pods, a few at a time.
        let rs_ref = reference("apps/v1", "ReplicaSet", &replica_set.metadata);
        let pods: Vec<Pod> = stream::iter(0..w.replicas)
            .map(|k| self.pod(w, &replica_set, &rs_ref, image, first_pod + k))
            .buffer_unordered(CONCURRENT_PODS)
            .try_collect()
            .await?;

        // Status of the ReplicaSet and the Deployment, from the Pods.
        let ready = pods.iter().filter(|p| pod_ready(p)).count() as i64;
        self.count(1);
        rss.patch_status(
            &rs_name,
            &patch_as(KCM),
            &Patch::Merge(&json!({"status": {
                "replicas": replicas, "fullyLabeledReplicas": replicas,
                "readyReplicas": ready, "availableReplicas": ready,
                "observedGeneration": replica_set.metadata.generation.unwrap_or(1),
            }})),
        )
        .await
        .context("writing the ReplicaSet status")?;
        let t = fmt_time(now());
        let available = ready >= replicas - max_unavailable;
        let (available_reason, available_message) = if available {
            (
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        } else {
            (
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        };
        let progressing = if ready == replicas {
            (
                "NewReplicaSetAvailable",
                format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
            )
        } else {
            (
                "ReplicaSetUpdated",
                format!("ReplicaSet \"{rs_name}\" is progressing."),
            )
        };
        let mut status = json!({
            "observedGeneration": deployment.metadata.generation.unwrap_or(1),
            "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": ready, "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": if available { "True" } else { "False" },
                 "reason": available_reason, "message": available_message,
                 "lastUpdateTime": t, "lastTransitionTime": t},
                {"type": "Progressing", "status": "True", "reason": progressing.0,
                 "message": progressing.1, "lastUpdateTime": t, "lastTransitionTime": t},
            ],
        });
        if ready < replicas {
            status["unavailableReplicas"] = json!(replicas - ready);
        }
        self.count(1);
        let deployment = deploys
            .patch_status(
                name,
                &patch_as(KCM),
                &Patch::Merge(&json!({ "status": status })),
            )
            .await
            .context("writing the Deployment status")?;

        // The EndpointSlice controller's view of the Service.
        self.endpoint_slice(&service, &pods).await?;

        // The ModelService status the controller computes from the Deployment.
        let msvc_status = controller::desired_status(&msvc, &deployment, now());
        self.count(1);
        msvcs
            .patch_status(
                name,
                &patch_as(CONTROLLER_NAME),
                &Patch::Merge(&json!({ "status": msvc_status })),
            )
            .await
            .context("writing the ModelService status")?;
        Ok(())
    }

    async fn pod(
        &self,
        w: &PlannedWorkload,
        rs: &ReplicaSet,
        rs_ref: &Value,
        image: &str,
        index: u32,
    ) -> anyhow::Result<Pod> {
        let ns = w.namespace.as_str();
        let rs_name = rs.name_any();
        let pod_name = format!(
            "{rs_name}-{}",
            safe_suffix(&format!("{ns}/{rs_name}/{index}"), 5)
        );
        let template = rs
            .spec
            .as_ref()
            .and_then(|s| s.template.clone())
            .context("a ReplicaSet without template")?;
        let mut spec = serde_json::to_value(template.spec.context("a template without spec")?)?;
        let node_index = index % self.spec.node_count();
        let node = self.spec.node(node_index);
        let bound = w.state != State::Unschedulable;
        if bound {
            spec["nodeName"] = json!(node);
        }
        let meta = template.metadata.unwrap_or_default();
        let pod: Pod = from(json!({
            "metadata": {
                "name": pod_name, "namespace": ns,
                "labels": meta.labels, "annotations": meta.annotations,
                "ownerReferences": [owner("apps/v1", "ReplicaSet", rs)],
            },
            "spec": spec,
        }))?;
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        self.count(1);
        let pod = api
            .create(&post(KCM), &pod)
            .await
            .context("creating a Pod")?;
        let pod_ref = reference("v1", "Pod", &pod.metadata);
        self.core_event(
            rs_ref,
            "replicaset-controller",
            None,
            "Normal",
            "SuccessfulCreate",
            &format!("Created pod: {pod_name}"),
            1,
        )
        .await?;

        let t = fmt_time(now());
        let container = "server";
        let pod_ip = format!(
            "10.{}.{}.{}",
            200 + node_index / 250,
            node_index % 250,
            index / self.spec.node_count() % 250 + 2
        );
        let uid = pod.uid().unwrap_or_default();
        let condition = |type_: &str, ok: bool| json!({"type": type_, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": t});
        let container_id = format!(
            "containerd://{}",
            stable_hex(&format!("{uid}/{container}"), 64)
        );
        let image_id = format!("{image}@sha256:{}", stable_hex(image, 64));
        let status = if !bound {
            let n = self.spec.node_count();
            json!({
                "phase": "Pending", "qosClass": "BestEffort",
                "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
                    "lastTransitionTime": t, "reason": "Unschedulable",
                    "message": format!("0/{n} nodes are available: {n} Insufficient nvidia.com/gpu. preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod.")}],
            })
        } else {
            let (ready, started, state, last_state, restarts) = match w.state {
                State::Healthy => (
                    true,
                    true,
                    json!({"running": {"startedAt": t}}),
                    json!({}),
                    0,
                ),
                State::NeverReady => (
                    false,
                    true,
                    json!({"running": {"startedAt": t}}),
                    json!({}),
                    0,
                ),
                // Half the crash loops caught as a real kubelet 1.35 shows
                // them for most of a back-off: terminated, the run before
                // in lastState (harness/SIM.md); the others waiting.
                State::CrashLoop if index % 2 == 1 => (
                    false,
                    false,
                    json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": t, "finishedAt": t, "containerID": container_id}}),
                    json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": t, "finishedAt": t,
                        "containerID": format!("containerd://{}", stable_hex(&format!("{uid}/{container}/2"), 64))}}),
                    3,
                ),
                State::CrashLoop => (
                    false,
                    false,
                    json!({"waiting": {"reason": "CrashLoopBackOff",
                    "message": crate::sim::messages::crash_backoff_waiting(
                        std::time::Duration::from_secs(40),
                        container,
                        &crate::sim::messages::pod_desc(&pod_name, ns, &uid),
                    )}}),
                    json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": t, "finishedAt": t, "containerID": container_id}}),
                    3,
                ),
                State::PullNotFound => (
                    false,
                    false,
                    json!({"waiting": {"reason": "ImagePullBackOff", "message": crate::sim::messages::pull_backoff_waiting(
                        image,
                        &crate::sim::behavior::PullError::NotFound.message(image),
                    )}}),
                    json!({}),
                    0,
                ),
                State::Unschedulable => unreachable!("unschedulable Pods are not bound"),
            };
            let mut cs = json!({
                "name": container, "image": image, "imageID": "", "ready": ready, "started": started,
                "restartCount": restarts, "state": state, "lastState": last_state,
            });
            if w.state != State::PullNotFound {
                cs["imageID"] = json!(image_id);
                if w.state != State::CrashLoop {
                    cs["containerID"] = json!(container_id);
                }
            }
            json!({
                "phase": if matches!(w.state, State::PullNotFound) { "Pending" } else { "Running" },
                "qosClass": "BestEffort",
                "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
                "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
                "startTime": t,
                "conditions": [
                    condition("PodReadyToStartContainers", true),
                    condition("Initialized", true),
                    condition("Ready", ready),
                    condition("ContainersReady", ready),
                    condition("PodScheduled", true),
                ],
                "containerStatuses": [cs],
            })
        };
        self.count(1);
        let pod = api
            .patch_status(
                &pod_name,
                &patch_as("kubelet"),
                &Patch::Merge(&json!({ "status": status })),
            )
            .await
            .context("writing a Pod status")?;

        if !bound {
            let n = self.spec.node_count();
            self.new_event(
                &pod_ref,
                "default-scheduler",
                "Warning",
                "FailedScheduling",
                "Scheduling",
                &format!("0/{n} nodes are available: {n} Insufficient nvidia.com/gpu. preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."),
            )
            .await?;
            return Ok(pod);
        }
        self.new_event(
            &pod_ref,
            "default-scheduler",
            "Normal",
            "Scheduled",
            "Binding",
            &format!("Successfully assigned {ns}/{pod_name} to {node}"),
        )
        .await?;
        let mut container_ref = pod_ref.clone();
        container_ref["fieldPath"] = json!(format!("spec.containers{{{container}}}"));
        let kubelet = |type_: &'static str, reason: &'static str, message: String, count: i32| {
            let container_ref = container_ref.clone();
            let node = node.clone();
            async move {
                self.core_event(
                    &container_ref,
                    "kubelet",
                    Some(&node),
                    type_,
                    reason,
                    &message,
                    count,
                )
                .await
            }
        };
        match w.state {
            State::Healthy | State::NeverReady | State::CrashLoop => {
                let runs = if w.state == State::CrashLoop { 4 } else { 1 };
                kubelet(
                    "Normal",
                    "Pulled",
                    crate::sim::messages::image_present(image),
                    runs,
                )
                .await?;
                kubelet("Normal", "Created", "Container created".into(), runs).await?;
                kubelet("Normal", "Started", "Container started".into(), runs).await?;
                if w.state == State::CrashLoop {
                    kubelet(
                        "Warning",
                        "BackOff",
                        format!("Back-off restarting failed container {container} in pod {pod_name}_{ns}({uid})"),
                        6,
                    )
                    .await?;
                }
                if w.state == State::NeverReady {
                    kubelet(
                        "Warning",
                        "Unhealthy",
                        "Readiness probe failed: HTTP probe failed with statuscode: 503".into(),
                        12,
                    )
                    .await?;
                }
            }
            State::PullNotFound => {
                kubelet("Normal", "Pulling", format!("Pulling image \"{image}\""), 3).await?;
                kubelet(
                    "Warning",
                    "Failed",
                    crate::sim::messages::pull_failed(
                        image,
                        &crate::sim::behavior::PullError::NotFound.message(image),
                    ),
                    3,
                )
                .await?;
                kubelet("Warning", "Failed", "Error: ErrImagePull".into(), 3).await?;
                kubelet(
                    "Normal",
                    "BackOff",
                    format!("Back-off pulling image \"{image}\""),
                    5,
                )
                .await?;
                kubelet("Warning", "Failed", "Error: ImagePullBackOff".into(), 5).await?;
            }
            State::Unschedulable => {}
        }
        Ok(pod)
    }

    async fn endpoint_slice(&self, service: &Service, pods: &[Pod]) -> anyhow::Result<()> {
        let ns = service.namespace().unwrap_or_default();
        let name = service.name_any();
        let endpoints: Vec<Value> = pods
            .iter()
            .filter_map(|p| {
                let ip = p.status.as_ref()?.pod_ip.clone()?;
                let ready = pod_ready(p);
                Some(json!({
                    "addresses": [ip],
                    "conditions": {"ready": ready, "serving": ready, "terminating": false},
                    "nodeName": p.spec.as_ref()?.node_name,
                    "targetRef": {"kind": "Pod", "namespace": ns, "name": p.name_any(), "uid": p.uid()},
                }))
            })
            .collect();
        let slice: EndpointSlice = from(json!({
            "metadata": {
                "name": format!("{name}-{}", safe_suffix(&format!("{ns}/{name}/slice"), 5)),
                "namespace": ns,
                "labels": {
                    "kubernetes.io/service-name": name,
                    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    "app.kubernetes.io/name": name,
                    "app.kubernetes.io/managed-by": CONTROLLER_NAME,
                },
                "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": fmt_time(now())},
                "ownerReferences": [owner("v1", "Service", service)],
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        }))?;
        let api: Api<EndpointSlice> = Api::namespaced(self.client.clone(), &ns);
        self.count(1);
        api.create(&post(KCM), &slice)
            .await
            .context("creating the EndpointSlice")?;
        Ok(())
    }
}

fn pod_ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// An Event's reference to an object.
fn reference(
    api_version: &str,
    kind: &str,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind,
        "namespace": meta.namespace, "name": meta.name, "uid": meta.uid,
        "resourceVersion": meta.resource_version,
    })
}

/// A controller owner reference to `object`.
fn owner<K: kube::Resource>(api_version: &str, kind: &str, object: &K) -> Value {
    let meta = object.meta();
    json!({
        "apiVersion": api_version, "kind": kind, "name": meta.name, "uid": meta.uid,
        "controller": true, "blockOwnerDeletion": true,
    })
}

/// What the plan holds, per state (for reports).
pub fn shares(plan: &[PlannedWorkload]) -> BTreeMap<&'static str, (u32, u32)> {
    let mut out: BTreeMap<&'static str, (u32, u32)> = BTreeMap::new();
    for w in plan {
        let e = out.entry(w.state.label()).or_default();
        e.0 += 1;
        e.1 += w.replicas;
    }
    out
}

/// [`load`] on a runtime of its own, with an admin kubeconfig (for
/// callers without one, like `cargo xtask`).
pub fn load_blocking(
    admin_kubeconfig: &std::path::Path,
    spec: &LoadSpec,
) -> anyhow::Result<LoadReport> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = crate::client_from_kubeconfig(admin_kubeconfig).await?;
        load(&client, spec).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_spreads_pods_workloads_and_states() {
        let spec = LoadSpec {
            pods: 10_005,
            workloads: 1_000,
            namespaces: 20,
            prefix: "load".into(),
        };
        let plan = spec.plan();
        assert_eq!(plan.len(), 1_000);
        assert_eq!(plan.iter().map(|w| w.replicas).sum::<u32>(), 10_005);
        assert!(plan.iter().all(|w| w.replicas == 10 || w.replicas == 11));
        let mut namespaces: Vec<_> = plan.iter().map(|w| w.namespace.as_str()).collect();
        namespaces.sort();
        namespaces.dedup();
        assert_eq!(namespaces.len(), 20);
        let shares = shares(&plan);
        assert_eq!(shares["healthy"].0, 400);
        for state in [
            "crash-loop",
            "pull-not-found",
            "unschedulable",
            "never-ready",
        ] {
            assert_eq!(shares[state].0, 150, "{state}");
        }
        assert_eq!(spec.node_count(), 101);
    }

    #[test]
    fn generated_suffixes_use_the_kubernetes_alphabet() {
        let s = safe_suffix("ns/rs/1", 10);
        assert_eq!(s.len(), 10);
        assert!(s.bytes().all(|b| SAFE.contains(&b)));
        assert_ne!(s, safe_suffix("ns/rs/2", 10));
    }
}
