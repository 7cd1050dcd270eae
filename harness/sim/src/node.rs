//! One fake node: registers the Node, heartbeats its status and Lease like a
//! kubelet, runs a worker per bound Pod, serves container logs, and can be
//! stopped and started again through the Node annotation
//! `sim.mdiag.dev/stopped`. Its tasks are started in [`super::tasks`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::watch;

pub use mdiag_harness_util::names::STOPPED_ANNOTATION;

use super::SimOptions;
use super::state::PodSim;
use mdiag_harness_util::events::{ObjRef, Recorder};
use mdiag_harness_util::{
    fmt_micro, fmt_time, is_conflict, is_not_found, now, stable_hex, trunc_secs,
};

/// The namespace of node heartbeat Leases.
const NODE_LEASE_NS: &str = "kube-node-lease";

/// What a fake node is: its name and its capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub name: String,
    /// Resource name -> quantity; merged over the defaults (cpu 8,
    /// memory 32Gi, pods 110, ephemeral-storage, hugepages).
    pub capacity: BTreeMap<String, String>,
}

impl NodeSpec {
    pub fn new(name: &str) -> Self {
        NodeSpec {
            name: name.to_owned(),
            capacity: BTreeMap::new(),
        }
    }

    /// Adds or overrides one resource, e.g. `("nvidia.com/gpu", "1")`.
    pub fn with(mut self, resource: &str, quantity: &str) -> Self {
        self.capacity
            .insert(resource.to_owned(), quantity.to_owned());
        self
    }

    /// Parses `NAME` or `NAME=res=qty,res=qty`, e.g.
    /// `kind-worker=cpu=8,memory=32Gi,nvidia.com/gpu=0`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (name, rest) = match s.split_once('=') {
            Some((n, r)) => (n.trim(), r),
            None => (s.trim(), ""),
        };
        if name.is_empty() {
            return Err(format!("node spec {s:?} has no name"));
        }
        let mut spec = NodeSpec::new(name);
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("node spec {s:?}: {part:?} is not resource=quantity"))?;
            spec.capacity
                .insert(k.trim().to_owned(), v.trim().to_owned());
        }
        Ok(spec)
    }

    /// The capacity with defaults filled in.
    pub fn full_capacity(&self) -> BTreeMap<String, String> {
        let mut c: BTreeMap<String, String> = [
            ("cpu", "8"),
            ("memory", "32Gi"),
            ("pods", "110"),
            ("ephemeral-storage", "102625208Ki"),
            ("hugepages-1Gi", "0"),
            ("hugepages-2Mi", "0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        c.extend(self.capacity.clone());
        c
    }
}

/// What the Hostname address of a Node says.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum HostnameAddress {
    /// The node name, as on kind (`kind-worker`). The apiserver reaches
    /// the node's log server only with
    /// `--kubelet-preferred-address-types=InternalIP,...` (its default
    /// prefers Hostname, which does not resolve).
    #[default]
    NodeName,
    /// A fixed value (e.g. `localhost`, which the apiserver can resolve).
    Value(String),
}

/// Free addresses of a node's pod range 10.244.<index>.0/24.
pub(super) struct IpPool {
    pub(super) used: BTreeSet<u8>,
    pub(super) next: u8,
}

/// (namespace, name) -> the state of a Pod on the node.
pub type PodRegistry = HashMap<(String, String), Arc<Mutex<PodSim>>>;

/// Everything a node's tasks share.
pub struct NodeCtx {
    pub client: Client,
    pub name: String,
    /// 1-based: kind-worker is 1, its Pods get 10.244.1.x.
    pub index: u8,
    pub host_ip: String,
    pub port: u16,
    pub opts: Arc<SimOptions>,
    pub recorder: Arc<Recorder>,
    pub stopped: watch::Receiver<bool>,
    pub(super) stopped_tx: watch::Sender<bool>,
    pub pulled: Mutex<HashSet<String>>,
    pub(super) ips: Mutex<IpPool>,
    /// (namespace, name) -> state, for the log server.
    pub pods: Mutex<PodRegistry>,
    pub(super) spec: NodeSpec,
    /// lastTransitionTime of each node condition, and the last heartbeat.
    pub(super) conds: Mutex<NodeConds>,
    pub(super) kubelet_version: String,
}

#[derive(Default)]
pub(super) struct NodeConds {
    ready: String,
    ready_since: Option<Timestamp>,
    others_since: Option<Timestamp>,
    heartbeat: Option<Timestamp>,
}

impl NodeCtx {
    pub fn allocate_ip(&self) -> Option<String> {
        let mut pool = self.ips.lock().expect("ip pool");
        for _ in 0..253 {
            let n = pool.next;
            pool.next = if pool.next >= 254 { 2 } else { pool.next + 1 };
            if !pool.used.contains(&n) {
                pool.used.insert(n);
                return Some(format!("10.244.{}.{n}", self.index));
            }
        }
        None
    }

    /// Marks an address taken; false when it is not in this node's range.
    pub fn reserve_ip(&self, ip: &str) -> bool {
        let prefix = format!("10.244.{}.", self.index);
        match ip.strip_prefix(&prefix).and_then(|n| n.parse::<u8>().ok()) {
            Some(n) if (2..=254).contains(&n) => {
                self.ips.lock().expect("ip pool").used.insert(n);
                true
            }
            _ => false,
        }
    }

    pub fn release_ip(&self, ip: &str) {
        let prefix = format!("10.244.{}.", self.index);
        if let Some(n) = ip.strip_prefix(&prefix).and_then(|n| n.parse::<u8>().ok()) {
            self.ips.lock().expect("ip pool").used.remove(&n);
        }
    }

    pub fn is_stopped(&self) -> bool {
        *self.stopped.borrow()
    }

    fn hostname(&self) -> String {
        match &self.opts.hostname_address {
            HostnameAddress::NodeName => self.name.clone(),
            HostnameAddress::Value(v) => v.clone(),
        }
    }

    fn conditions_json(&self, c: &NodeConds) -> Value {
        let hb = fmt_time(c.heartbeat.unwrap_or_else(now));
        let others = fmt_time(c.others_since.unwrap_or_else(now));
        let ready = fmt_time(c.ready_since.unwrap_or_else(now));
        if c.ready == "Unknown" {
            let cond = |t: &str| {
                json!({
                    "type": t, "status": "Unknown", "reason": "NodeStatusUnknown",
                    "message": "Kubelet stopped posting node status.",
                    "lastHeartbeatTime": hb, "lastTransitionTime": ready,
                })
            };
            return json!([
                cond("MemoryPressure"),
                cond("DiskPressure"),
                cond("PIDPressure"),
                cond("Ready")
            ]);
        }
        json!([
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
             "message": "kubelet has sufficient memory available",
             "lastHeartbeatTime": hb, "lastTransitionTime": others},
            {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
             "message": "kubelet has no disk pressure",
             "lastHeartbeatTime": hb, "lastTransitionTime": others},
            {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
             "message": "kubelet has sufficient PID available",
             "lastHeartbeatTime": hb, "lastTransitionTime": others},
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "kubelet is posting ready status",
             "lastHeartbeatTime": hb, "lastTransitionTime": ready},
        ])
    }

    fn status_json(&self) -> Value {
        let conds = self.conds.lock().expect("node conds");
        let capacity = self.spec.full_capacity();
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            a => a,
        };
        let seed = &self.name;
        let uuid = |s: &str| {
            let h = stable_hex(&format!("{seed}/{s}"), 32);
            format!(
                "{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            )
        };
        json!({
            "addresses": [
                {"type": "InternalIP", "address": self.host_ip},
                {"type": "Hostname", "address": self.hostname()},
            ],
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": self.conditions_json(&conds),
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "nodeInfo": {
                "architecture": arch,
                "bootID": uuid("boot"),
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-sim",
                "kubeProxyVersion": "",
                "kubeletVersion": self.kubelet_version,
                "machineID": stable_hex(&format!("{seed}/machine"), 32),
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": uuid("system"),
            },
        })
    }

    fn node_json(&self) -> Value {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            a => a,
        };
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "labels": {
                    "beta.kubernetes.io/arch": arch,
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": arch,
                    "kubernetes.io/hostname": self.name,
                    "kubernetes.io/os": "linux",
                },
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": {
                "podCIDR": format!("10.244.{}.0/24", self.index),
                "podCIDRs": [format!("10.244.{}.0/24", self.index)],
            },
            "status": self.status_json(),
        })
    }

    fn params() -> PatchParams {
        PatchParams {
            field_manager: Some("kubelet".to_owned()),
            ..Default::default()
        }
    }

    /// Creates the Node, or takes over an existing one of the same name.
    pub(super) async fn register(&self) -> anyhow::Result<()> {
        let api: Api<Node> = Api::all(self.client.clone());
        {
            let mut c = self.conds.lock().expect("node conds");
            let t = trunc_secs(now());
            *c = NodeConds {
                ready: "True".to_owned(),
                ready_since: Some(t),
                others_since: Some(t),
                heartbeat: Some(t),
            };
        }
        let node: Node = serde_json::from_value(self.node_json())?;
        let pp = PostParams {
            field_manager: Some("kubelet".to_owned()),
            ..Default::default()
        };
        match api.create(&pp, &node).await {
            Ok(_) => {}
            Err(e) if is_conflict(&e) => {
                let existing = api.get(&self.name).await?;
                let stopped = existing
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(STOPPED_ANNOTATION))
                    .is_some_and(|v| v == "true");
                let was_unknown = existing
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
                    .is_some_and(|c| c.status == "Unknown");
                // Keep the transition times of a node that stayed ready.
                if let Some(st) = &existing.status {
                    let mut c = self.conds.lock().expect("node conds");
                    for cond in st.conditions.iter().flatten() {
                        if cond.type_ == "Ready" && cond.status == "True" {
                            c.ready_since = cond.last_transition_time.as_ref().map(|t| t.0);
                        }
                        if cond.type_ == "MemoryPressure" && cond.status == "False" {
                            c.others_since = cond.last_transition_time.as_ref().map(|t| t.0);
                        }
                    }
                }
                let mut meta = self.node_json();
                meta["status"] = Value::Null;
                meta.as_object_mut().map(|m| m.remove("status"));
                api.patch(&self.name, &Self::params(), &Patch::Merge(&meta))
                    .await?;
                if stopped {
                    self.stopped_tx.send_replace(true);
                    if was_unknown {
                        self.conds.lock().expect("node conds").ready = "Unknown".to_owned();
                    } else {
                        self.mark_unknown().await;
                    }
                } else {
                    let status = json!({"status": self.status_json()});
                    api.patch_status(&self.name, &Self::params(), &Patch::Merge(&status))
                        .await?;
                }
            }
            Err(e) => return Err(e.into()),
        }
        if !self.is_stopped() {
            self.renew_lease().await;
        }
        Ok(())
    }

    pub(super) async fn heartbeat(&self) {
        {
            let mut c = self.conds.lock().expect("node conds");
            c.heartbeat = Some(now());
            if c.ready != "True" {
                c.ready = "True".to_owned();
                c.ready_since = Some(trunc_secs(now()));
                c.others_since = Some(trunc_secs(now()));
            }
        }
        let status = json!({"status": self.status_json()});
        let api: Api<Node> = Api::all(self.client.clone());
        if let Err(e) = api
            .patch_status(&self.name, &Self::params(), &Patch::Merge(&status))
            .await
        {
            eprintln!("mdiag-sim: {}: node status heartbeat: {e}", self.name);
        }
    }

    /// What the node lifecycle controller writes when a kubelet goes
    /// silent, written at once instead of after its grace period.
    async fn mark_unknown(&self) {
        if !self.opts.mark_unknown_on_stop {
            return;
        }
        {
            let mut c = self.conds.lock().expect("node conds");
            c.ready = "Unknown".to_owned();
            c.ready_since = Some(trunc_secs(now()));
        }
        let status = json!({"status": {"conditions": self.conditions_json(&self.conds.lock().expect("node conds"))}});
        let api: Api<Node> = Api::all(self.client.clone());
        let pp = PatchParams {
            field_manager: Some("kube-controller-manager".to_owned()),
            ..Default::default()
        };
        let node = match api
            .patch_status(&self.name, &pp, &Patch::Merge(&status))
            .await
        {
            Ok(n) => n,
            Err(e) => {
                eprintln!("mdiag-sim: {}: marking the node Unknown: {e}", self.name);
                return;
            }
        };
        // What the node lifecycle controller does in the same pass when it
        // sees a node go from Ready to Unknown: an event on the Node, and
        // every Pod on it marked not Ready (MarkPodsNotReady).
        let nc = Recorder::new(self.client.clone(), "node-controller", "", None);
        let node_ref = ObjRef {
            api_version: "v1".to_owned(),
            kind: "Node".to_owned(),
            name: self.name.clone(),
            uid: node.metadata.uid.clone().unwrap_or_default(),
            ..Default::default()
        };
        nc.core(
            &node_ref,
            "Normal",
            "NodeNotReady",
            &format!("Node {} status is now: NodeNotReady", self.name),
        )
        .await;
        let pods: Api<Pod> = Api::all(self.client.clone());
        let lp = ListParams::default().fields(&format!("spec.nodeName={}", self.name));
        let list = match pods.list(&lp).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("mdiag-sim: {}: listing pods: {e}", self.name);
                return;
            }
        };
        let t = fmt_time(now());
        for p in list.items {
            let Some(conds) = p.status.as_ref().and_then(|s| s.conditions.clone()) else {
                continue;
            };
            if !conds
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
            {
                continue;
            }
            let conds: Vec<Value> = conds
                .iter()
                .map(|c| {
                    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
                    if c.type_ == "Ready" {
                        v["status"] = json!("False");
                        v["lastTransitionTime"] = json!(t);
                    }
                    v
                })
                .collect();
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
            let patch = json!({"status": {"conditions": conds}});
            match api.patch_status(&name, &pp, &Patch::Merge(&patch)).await {
                Ok(_) => {
                    let pod_ref = ObjRef {
                        api_version: "v1".to_owned(),
                        kind: "Pod".to_owned(),
                        namespace: ns,
                        name,
                        uid: p.metadata.uid.clone().unwrap_or_default(),
                        resource_version: p.metadata.resource_version.clone().unwrap_or_default(),
                        field_path: None,
                    };
                    nc.core(&pod_ref, "Warning", "NodeNotReady", "Node is not ready")
                        .await;
                }
                Err(e) if is_not_found(&e) => {}
                Err(e) => eprintln!("mdiag-sim: {}: marking {name} not ready: {e}", self.name),
            }
        }
    }

    pub(super) async fn renew_lease(&self) {
        let api: Api<Lease> = Api::namespaced(self.client.clone(), NODE_LEASE_NS);
        let t = fmt_micro(now());
        let patch = json!({"spec": {
            "holderIdentity": self.name,
            "leaseDurationSeconds": self.opts.node_lease_seconds,
            "renewTime": t,
        }});
        match api
            .patch(&self.name, &Self::params(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {
                let nodes: Api<Node> = Api::all(self.client.clone());
                let uid = nodes
                    .get(&self.name)
                    .await
                    .ok()
                    .and_then(|n| n.metadata.uid)
                    .unwrap_or_default();
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "name": self.name,
                        "namespace": NODE_LEASE_NS,
                        "ownerReferences": [{
                            "apiVersion": "v1", "kind": "Node", "name": self.name, "uid": uid,
                        }],
                    },
                    "spec": {
                        "holderIdentity": self.name,
                        "leaseDurationSeconds": self.opts.node_lease_seconds,
                        "renewTime": t,
                    },
                });
                let lease: Lease = match serde_json::from_value(lease) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("mdiag-sim: lease: {e}");
                        return;
                    }
                };
                let pp = PostParams {
                    field_manager: Some("kubelet".to_owned()),
                    ..Default::default()
                };
                if let Err(e) = api.create(&pp, &lease).await
                    && !is_conflict(&e)
                {
                    eprintln!("mdiag-sim: {}: creating node lease: {e}", self.name);
                }
            }
            Err(e) => eprintln!("mdiag-sim: {}: renewing node lease: {e}", self.name),
        }
    }

    pub(super) async fn set_stopped(&self, stopped: bool) {
        if self.is_stopped() == stopped {
            return;
        }
        eprintln!(
            "mdiag-sim: node {} {}",
            self.name,
            if stopped { "stopped" } else { "started again" }
        );
        if stopped {
            self.stopped_tx.send_replace(true);
            self.mark_unknown().await;
        } else {
            self.heartbeat().await;
            self.renew_lease().await;
            self.stopped_tx.send_replace(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_node_spec() {
        let s = NodeSpec::parse("kind-worker=cpu=8,memory=32Gi,nvidia.com/gpu=0").unwrap();
        assert_eq!(s.name, "kind-worker");
        assert_eq!(s.capacity["nvidia.com/gpu"], "0");
        assert_eq!(s.full_capacity()["pods"], "110");
        let s = NodeSpec::parse("kind-worker2").unwrap();
        assert!(s.capacity.is_empty());
        assert!(NodeSpec::parse("x=cpu").is_err());
        assert!(NodeSpec::parse("=cpu=1").is_err());
    }
}
