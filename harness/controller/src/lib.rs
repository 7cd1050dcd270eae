//! A minimal stand-in for modeldock-controller: for each ModelService
//! (modeldock.io/v1alpha1) it server-side-applies a Deployment and a Service
//! of the same name and writes the ModelService status. It holds the Lease
//! `modeldock-system/modeldock-controller`, and can be paused through the
//! ConfigMap `modeldock-system/modeldock-controller-control` (data
//! `paused: "true"`): paused, it neither reconciles nor renews its Lease.
//!
//! Besides image, replicas, modelName, port, readinessPath, args and
//! resources, it passes through what real-node trials need: `nodeSelector`,
//! `tolerations`, `volumes` and `imagePullSecrets` to the Pod spec, `env`
//! (after `MODEL_NAME`) and `volumeMounts` to the container, and the
//! `readinessProbe` timings (`initialDelaySeconds`, `periodSeconds`,
//! `timeoutSeconds`, `successThreshold`, `failureThreshold`) over the
//! defaults. Absent fields leave the Deployment as before.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::sleep;

use mdiag_harness_util::events::{ObjRef, Recorder};
use mdiag_harness_util::names::SIM_ANNOTATION_PREFIX;
use mdiag_harness_util::{fmt_time, is_conflict, now, trunc_secs, uuid4};

/// The controller's field manager, Lease and Deployment name.
pub const CONTROLLER_NAME: &str = "modeldock-controller";
/// Where the controller lives.
pub const CONTROLLER_NAMESPACE: &str = "modeldock-system";
/// The ConfigMap that pauses it.
pub const CONTROL_CONFIGMAP: &str = "modeldock-controller-control";
/// The image of its Deployment.
pub const CONTROLLER_IMAGE: &str = "registry.example.com/modeldock/controller:v0.1.0";

/// The ModelService resource.
pub fn modelservice_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("modeldock.io", "v1alpha1", "ModelService"),
        "modelservices",
    )
}

#[derive(Clone, Debug)]
pub struct ControllerOptions {
    pub lease_duration_seconds: i32,
    pub renew_every: Duration,
    /// Create the Deployment modeldock-system/modeldock-controller at start.
    pub create_deployment: bool,
    /// Reconcile every ModelService this often even without a change.
    pub resync: Duration,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            lease_duration_seconds: 15,
            renew_every: Duration::from_secs(2),
            create_deployment: true,
            resync: Duration::from_secs(30),
        }
    }
}

struct Ctl {
    client: Client,
    opts: ControllerOptions,
    identity: String,
    recorder: Arc<Recorder>,
    paused: watch::Receiver<bool>,
    queue: mpsc::UnboundedSender<(String, String)>,
}

/// Starts the controller's tasks on the current runtime.
pub async fn start(client: Client, opts: ControllerOptions) -> anyhow::Result<Vec<JoinHandle<()>>> {
    mdiag_harness_util::ensure_namespace(&client, CONTROLLER_NAMESPACE).await?;
    if opts.create_deployment {
        apply_own_deployment(&client).await?;
    }
    let instance = controller_pod_name(&client).await;
    let identity = format!(
        "{}_{}",
        instance.as_deref().unwrap_or(CONTROLLER_NAME),
        uuid4()
    );
    let instance = instance.unwrap_or_else(|| CONTROLLER_NAME.to_owned());
    let (paused_tx, paused) = watch::channel(read_paused(&client).await);
    let (queue, rx) = mpsc::unbounded_channel();
    let recorder = Recorder::new(client.clone(), CONTROLLER_NAME, &instance, None);
    let ctl = Arc::new(Ctl {
        client,
        opts,
        identity,
        recorder,
        paused,
        queue,
    });
    Ok(vec![
        tokio::spawn(pause_loop(ctl.clone(), paused_tx)),
        tokio::spawn(lease_loop(ctl.clone())),
        tokio::spawn(watch_loop(ctl.clone())),
        tokio::spawn(worker(ctl, rx)),
    ])
}

async fn apply_own_deployment(client: &Client) -> anyhow::Result<()> {
    let d = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": CONTROLLER_NAME,
            "namespace": CONTROLLER_NAMESPACE,
            "labels": {
                "app.kubernetes.io/name": CONTROLLER_NAME,
                "app.kubernetes.io/part-of": "modeldock",
            },
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": CONTROLLER_NAME}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": CONTROLLER_NAME}},
                "spec": {
                    "containers": [{
                        "name": "manager",
                        "image": CONTROLLER_IMAGE,
                        "args": ["--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8080"],
                        "ports": [
                            {"name": "metrics", "containerPort": 8080, "protocol": "TCP"},
                            {"name": "health", "containerPort": 8081, "protocol": "TCP"},
                        ],
                        "readinessProbe": {
                            "httpGet": {"path": "/readyz", "port": 8081},
                            "initialDelaySeconds": 5,
                            "periodSeconds": 10,
                        },
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"memory": "256Mi"},
                        },
                    }],
                },
            },
        },
    });
    let api: Api<Deployment> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
    api.patch(
        CONTROLLER_NAME,
        &PatchParams::apply("mdiag-sim").force(),
        &Patch::Apply(&d),
    )
    .await?;
    Ok(())
}

/// The name of a Pod of the controller Deployment (waits a little for the
/// ReplicaSet to create one), for the Lease holder identity.
async fn controller_pod_name(client: &Client) -> Option<String> {
    let api: Api<Pod> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
    let lp = ListParams::default().labels(&format!("app.kubernetes.io/name={CONTROLLER_NAME}"));
    for _ in 0..40 {
        if let Ok(list) = api.list(&lp).await
            && let Some(p) = list
                .items
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .max_by_key(|p| p.metadata.creation_timestamp.clone())
        {
            return Some(p.name_any());
        }
        sleep(Duration::from_millis(250)).await;
    }
    None
}

async fn read_paused(client: &Client) -> bool {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
    match api.get_opt(CONTROL_CONFIGMAP).await {
        Ok(Some(cm)) => cm
            .data
            .as_ref()
            .and_then(|d| d.get("paused"))
            .is_some_and(|v| v == "true"),
        _ => false,
    }
}

async fn pause_loop(ctl: Arc<Ctl>, tx: watch::Sender<bool>) {
    loop {
        let p = read_paused(&ctl.client).await;
        tx.send_if_modified(|old| {
            if *old != p {
                eprintln!(
                    "mdiag-sim: controller {}",
                    if p { "paused" } else { "resumed" }
                );
                *old = p;
                true
            } else {
                false
            }
        });
        sleep(Duration::from_millis(500)).await;
    }
}

async fn lease_loop(ctl: Arc<Ctl>) {
    loop {
        if !*ctl.paused.borrow()
            && let Err(e) = acquire_or_renew(&ctl).await
            && !is_conflict(&e)
        {
            eprintln!("mdiag-sim: controller lease: {e}");
        }
        sleep(ctl.opts.renew_every).await;
    }
}

async fn acquire_or_renew(ctl: &Ctl) -> Result<(), kube::Error> {
    let api: Api<Lease> = Api::namespaced(ctl.client.clone(), CONTROLLER_NAMESPACE);
    let pp = PostParams {
        field_manager: Some(CONTROLLER_NAME.to_owned()),
        ..Default::default()
    };
    let t = MicroTime(now());
    match api.get_opt(CONTROLLER_NAME).await? {
        None => {
            let mut l = Lease::default();
            l.metadata.name = Some(CONTROLLER_NAME.to_owned());
            l.metadata.namespace = Some(CONTROLLER_NAMESPACE.to_owned());
            let spec = l.spec.get_or_insert_default();
            spec.holder_identity = Some(ctl.identity.clone());
            spec.lease_duration_seconds = Some(ctl.opts.lease_duration_seconds);
            spec.acquire_time = Some(t.clone());
            spec.renew_time = Some(t);
            spec.lease_transitions = Some(0);
            api.create(&pp, &l).await?;
        }
        Some(mut l) => {
            let spec = l.spec.get_or_insert_default();
            if spec.holder_identity.as_deref() != Some(ctl.identity.as_str()) {
                spec.holder_identity = Some(ctl.identity.clone());
                spec.acquire_time = Some(t.clone());
                spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            }
            spec.lease_duration_seconds = Some(ctl.opts.lease_duration_seconds);
            spec.renew_time = Some(t);
            l.metadata.managed_fields = None;
            api.replace(CONTROLLER_NAME, &pp, &l).await?;
        }
    }
    Ok(())
}

/// Watches ModelServices and the Deployments the controller owns, and
/// queues the ModelService to reconcile.
async fn watch_loop(ctl: Arc<Ctl>) {
    // Wait for the CRD.
    loop {
        match ctl
            .client
            .list_api_group_resources("modeldock.io/v1alpha1")
            .await
        {
            Ok(l) if l.resources.iter().any(|r| r.name == "modelservices") => break,
            _ => sleep(Duration::from_secs(1)).await,
        }
    }
    let ar = modelservice_resource();
    let msvcs: Api<DynamicObject> = Api::all_with(ctl.client.clone(), &ar);
    let deploys: Api<Deployment> = Api::all(ctl.client.clone());
    let q1 = ctl.queue.clone();
    let a = async move {
        let mut s = watcher::watcher(msvcs, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(ev) = s.next().await {
            if let Ok(Event::Apply(o) | Event::InitApply(o) | Event::Delete(o)) = ev {
                let _ = q1.send((o.namespace().unwrap_or_default(), o.name_any()));
            }
        }
    };
    let q2 = ctl.queue.clone();
    let b = async move {
        let cfg = watcher::Config::default()
            .labels(&format!("app.kubernetes.io/managed-by={CONTROLLER_NAME}"));
        let mut s = watcher::watcher(deploys, cfg).default_backoff().boxed();
        while let Some(ev) = s.next().await {
            if let Ok(Event::Apply(d) | Event::InitApply(d) | Event::Delete(d)) = ev {
                for o in d.owner_references() {
                    if o.kind == "ModelService" && o.controller == Some(true) {
                        let _ = q2.send((d.namespace().unwrap_or_default(), o.name.clone()));
                    }
                }
            }
        }
    };
    let ctl2 = ctl.clone();
    let c = async move {
        let ar = modelservice_resource();
        let api: Api<DynamicObject> = Api::all_with(ctl2.client.clone(), &ar);
        loop {
            sleep(ctl2.opts.resync).await;
            if let Ok(list) = api.list(&ListParams::default()).await {
                for o in list.items {
                    let _ = ctl2
                        .queue
                        .send((o.namespace().unwrap_or_default(), o.name_any()));
                }
            }
        }
    };
    tokio::join!(a, b, c);
}

async fn worker(ctl: Arc<Ctl>, mut rx: mpsc::UnboundedReceiver<(String, String)>) {
    let mut pending: BTreeSet<(String, String)> = BTreeSet::new();
    let mut paused = ctl.paused.clone();
    loop {
        tokio::select! {
            k = rx.recv() => match k {
                Some(k) => { pending.insert(k); }
                None => return,
            },
            r = paused.changed() => if r.is_err() { return },
        }
        while let Ok(k) = rx.try_recv() {
            pending.insert(k);
        }
        if *paused.borrow() {
            continue;
        }
        for (ns, name) in std::mem::take(&mut pending) {
            if *paused.borrow() {
                pending.insert((ns, name));
                continue;
            }
            if let Err(e) = reconcile(&ctl, &ns, &name).await {
                // A namespace being deleted refuses new objects until its
                // ModelService is gone too: nothing to reconcile, no noise.
                if namespace_terminating(&e) {
                    continue;
                }
                eprintln!("mdiag-sim: controller: reconciling {ns}/{name}: {e:#}");
                let q = ctl.queue.clone();
                tokio::spawn(async move {
                    sleep(Duration::from_secs(2)).await;
                    let _ = q.send((ns, name));
                });
            }
        }
    }
}

/// The Deployment the controller wants for a ModelService.
pub fn desired_deployment(ms: &DynamicObject) -> Value {
    let name = ms.name_any();
    let ns = ms.namespace().unwrap_or_default();
    let spec = ms.data.get("spec").cloned().unwrap_or(Value::Null);
    let image = spec["image"].as_str().unwrap_or_default();
    let replicas = spec["replicas"].as_i64().unwrap_or(1);
    let port = spec["port"].as_i64().unwrap_or(8080);
    let readiness = spec["readinessPath"].as_str().unwrap_or("/healthz");
    let model = spec["modelName"].as_str();
    let mut args: Vec<String> = Vec::new();
    if let Some(m) = model {
        args.push(format!("--model-name={m}"));
    }
    args.push(format!("--port={port}"));
    args.extend(
        spec["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned)),
    );
    let mut container = json!({
        "name": "server",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {"path": readiness, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": 5,
            "periodSeconds": 5,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
    });
    // The spec's env after MODEL_NAME; an entry of the spec named
    // MODEL_NAME wins (env is a list keyed by name).
    let spec_env: Vec<Value> = array(&spec, "env");
    let mut env: Vec<Value> = Vec::new();
    if let Some(m) = model
        && !spec_env.iter().any(|e| e["name"] == "MODEL_NAME")
    {
        env.push(json!({"name": "MODEL_NAME", "value": m}));
    }
    env.extend(spec_env);
    if !env.is_empty() {
        container["env"] = json!(env);
    }
    if let Some(r) = spec.get("resources").filter(|r| r.is_object()) {
        container["resources"] = r.clone();
    }
    let mounts = array(&spec, "volumeMounts");
    if !mounts.is_empty() {
        container["volumeMounts"] = json!(mounts);
    }
    if let Some(o) = spec.get("readinessProbe").and_then(Value::as_object) {
        for k in [
            "initialDelaySeconds",
            "periodSeconds",
            "timeoutSeconds",
            "successThreshold",
            "failureThreshold",
        ] {
            if let Some(v) = o.get(k).filter(|v| v.is_i64()) {
                container["readinessProbe"][k] = v.clone();
            }
        }
    }
    let mut pod_spec = json!({"containers": [container]});
    if let Some(sel) = spec.get("nodeSelector").filter(|v| v.is_object()) {
        pod_spec["nodeSelector"] = sel.clone();
    }
    for k in ["tolerations", "volumes", "imagePullSecrets"] {
        let v = array(&spec, k);
        if !v.is_empty() {
            pod_spec[k] = json!(v);
        }
    }
    let sim_annotations: serde_json::Map<String, Value> = ms
        .annotations()
        .iter()
        .filter(|(k, _)| k.starts_with(SIM_ANNOTATION_PREFIX))
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut template_meta = json!({"labels": {"app.kubernetes.io/name": name}});
    if !sim_annotations.is_empty() {
        template_meta["annotations"] = Value::Object(sim_annotations);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": labels(&name),
            "ownerReferences": [owner(ms)],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": template_meta,
                "spec": pod_spec,
            },
        },
    })
}

/// Whether the apiserver refused a write because the namespace is being
/// terminated (reason `NamespaceTerminating` in the status causes).
fn namespace_terminating(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<kube::Error>().is_some_and(|k| match k {
            kube::Error::Api(s) => s
                .details
                .as_ref()
                .is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating")),
            _ => false,
        })
    })
}

/// The objects of a list field of the spec (nothing when absent or not a
/// list).
fn array(spec: &Value, key: &str) -> Vec<Value> {
    spec.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|v| v.is_object()).cloned().collect())
        .unwrap_or_default()
}

/// The Service the controller wants for a ModelService.
pub fn desired_service(ms: &DynamicObject) -> Value {
    let name = ms.name_any();
    let port = ms
        .data
        .get("spec")
        .and_then(|s| s["port"].as_i64())
        .unwrap_or(8080);
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ms.namespace().unwrap_or_default(),
            "labels": labels(&name),
            "ownerReferences": [owner(ms)],
        },
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": name},
            "ports": [{"name": "http", "port": 80, "targetPort": port, "protocol": "TCP"}],
        },
    })
}

fn labels(name: &str) -> Value {
    json!({
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/managed-by": CONTROLLER_NAME,
    })
}

fn owner(ms: &DynamicObject) -> Value {
    json!({
        "apiVersion": "modeldock.io/v1alpha1",
        "kind": "ModelService",
        "name": ms.name_any(),
        "uid": ms.uid().unwrap_or_default(),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

async fn reconcile(ctl: &Ctl, ns: &str, name: &str) -> anyhow::Result<()> {
    let ar = modelservice_resource();
    let msvcs: Api<DynamicObject> = Api::namespaced_with(ctl.client.clone(), ns, &ar);
    let Some(ms) = msvcs.get_opt(name).await? else {
        return Ok(());
    };
    if ms.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let ms_ref = ObjRef {
        api_version: "modeldock.io/v1alpha1".to_owned(),
        kind: "ModelService".to_owned(),
        namespace: ns.to_owned(),
        name: name.to_owned(),
        uid: ms.uid().unwrap_or_default(),
        resource_version: ms.resource_version().unwrap_or_default(),
        field_path: None,
    };
    let ssa = PatchParams::apply(CONTROLLER_NAME).force();

    let deploys: Api<Deployment> = Api::namespaced(ctl.client.clone(), ns);
    let before = deploys.get_opt(name).await?;
    let dep = deploys
        .patch(name, &ssa, &Patch::Apply(&desired_deployment(&ms)))
        .await?;
    match &before {
        None => {
            ctl.recorder
                .series(
                    &ms_ref,
                    "Normal",
                    "Created",
                    "Create",
                    &format!("Created Deployment {ns}/{name}"),
                )
                .await
        }
        Some(b) if b.metadata.generation != dep.metadata.generation => {
            ctl.recorder
                .series(
                    &ms_ref,
                    "Normal",
                    "Updated",
                    "Update",
                    &format!("Updated Deployment {ns}/{name}"),
                )
                .await
        }
        _ => {}
    }

    let services: Api<Service> = Api::namespaced(ctl.client.clone(), ns);
    let before = services.get_opt(name).await?;
    services
        .patch(name, &ssa, &Patch::Apply(&desired_service(&ms)))
        .await?;
    if before.is_none() {
        ctl.recorder
            .series(
                &ms_ref,
                "Normal",
                "Created",
                "Create",
                &format!("Created Service {ns}/{name}"),
            )
            .await;
    }

    let status = desired_status(&ms, &dep, now());
    let current = ms.data.get("status").cloned().unwrap_or(Value::Null);
    if status != current {
        msvcs
            .patch_status(
                name,
                &PatchParams {
                    field_manager: Some(CONTROLLER_NAME.to_owned()),
                    ..Default::default()
                },
                &Patch::Merge(&json!({ "status": status })),
            )
            .await?;
    }
    Ok(())
}

/// The ModelService status for this Deployment state. Transition times are
/// kept from the current status while a condition's status is unchanged.
pub fn desired_status(ms: &DynamicObject, dep: &Deployment, at: jiff::Timestamp) -> Value {
    let generation = ms.metadata.generation.unwrap_or(1);
    let desired = ms
        .data
        .get("spec")
        .and_then(|s| s["replicas"].as_i64())
        .unwrap_or(1);
    let st = dep.status.clone().unwrap_or_default();
    let ready = st.ready_replicas.unwrap_or(0) as i64;
    let updated = st.updated_replicas.unwrap_or(0) as i64;
    let total = st.replicas.unwrap_or(0) as i64;
    let observed = st.observed_generation.unwrap_or(0) >= dep.metadata.generation.unwrap_or(1);
    let progressing = st
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Progressing")
        .cloned();
    let name = ms.name_any();
    let all_ready = observed && updated == desired && total == desired && ready >= desired;
    let (r_status, r_reason, r_message) = if all_ready {
        (
            "True",
            "Available".to_owned(),
            format!("{ready}/{desired} replicas ready"),
        )
    } else if let Some(p) = progressing
        .as_ref()
        .filter(|p| p.reason.as_deref() == Some("ProgressDeadlineExceeded"))
    {
        (
            "False",
            "ProgressDeadlineExceeded".to_owned(),
            format!(
                "Deployment {name}: {}",
                p.message.clone().unwrap_or_default()
            ),
        )
    } else {
        (
            "False",
            "ReplicasNotReady".to_owned(),
            format!("{ready}/{desired} replicas ready"),
        )
    };
    let (p_status, p_reason, p_message) = match &progressing {
        Some(p) => (
            p.status.clone(),
            p.reason.clone().unwrap_or_default(),
            p.message.clone().unwrap_or_default(),
        ),
        None => (
            "True".to_owned(),
            "Reconciling".to_owned(),
            format!("waiting for Deployment {name} to be observed"),
        ),
    };
    let current = ms
        .data
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(|c| c.as_array())
        .cloned()
        .unwrap_or_default();
    let cond = |type_: &str, status: &str, reason: &str, message: &str| {
        let ltt = current
            .iter()
            .find(|c| c["type"] == type_ && c["status"] == status)
            .and_then(|c| c["lastTransitionTime"].as_str().map(str::to_owned))
            .unwrap_or_else(|| fmt_time(trunc_secs(at)));
        json!({
            "type": type_,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": ltt,
            "observedGeneration": generation,
        })
    };
    json!({
        "observedGeneration": generation,
        "readyReplicas": ready,
        "conditions": [
            cond("Ready", r_status, &r_reason, &r_message),
            cond("Progressing", &p_status, &p_reason, &p_message),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms() -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "modeldock.io/v1alpha1",
            "kind": "ModelService",
            "metadata": {
                "name": "chart-demo", "namespace": "lab", "uid": "u-1", "generation": 2,
                "annotations": {"sim.mdiag.dev/behavior": "oom", "other": "x"},
            },
            "spec": {
                "image": "registry.example.com/modeldock/chart-demo:v1.6.0",
                "replicas": 2, "modelName": "tiny", "args": ["--max-batch-size=8"],
                "resources": {"limits": {"memory": "512Mi"}},
            },
        }))
        .unwrap()
    }

    #[test]
    fn deployment_and_service() {
        let d = desired_deployment(&ms());
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["name"], "server");
        assert_eq!(
            c["args"],
            json!(["--model-name=tiny", "--port=8080", "--max-batch-size=8"])
        );
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
        assert_eq!(c["resources"]["limits"]["memory"], "512Mi");
        assert_eq!(
            d["spec"]["template"]["metadata"]["annotations"],
            json!({"sim.mdiag.dev/behavior": "oom"})
        );
        assert_eq!(d["metadata"]["ownerReferences"][0]["uid"], "u-1");
        // Without the pass-through fields the Pod spec and container are as
        // they always were.
        let pod = d["spec"]["template"]["spec"].as_object().unwrap();
        assert_eq!(pod.keys().collect::<Vec<_>>(), ["containers"]);
        let keys: BTreeSet<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            BTreeSet::from([
                "args",
                "env",
                "image",
                "imagePullPolicy",
                "name",
                "ports",
                "readinessProbe",
                "resources"
            ])
        );
        assert_eq!(c["env"], json!([{"name": "MODEL_NAME", "value": "tiny"}]));
        assert_eq!(
            c["readinessProbe"],
            json!({"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                "initialDelaySeconds": 5, "periodSeconds": 5, "timeoutSeconds": 1,
                "successThreshold": 1, "failureThreshold": 3})
        );
        let s = desired_service(&ms());
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 8080);
        assert_eq!(
            s["spec"]["selector"]["app.kubernetes.io/name"],
            "chart-demo"
        );
    }

    #[test]
    fn real_node_fields_pass_through() {
        let mut m = ms();
        m.data["spec"]["nodeSelector"] = json!({"mdiag.dev/node": "real"});
        m.data["spec"]["tolerations"] = json!([{"key": "mdiag.dev/node", "operator": "Equal",
            "value": "real", "effect": "NoSchedule"}]);
        m.data["spec"]["env"] = json!([
            {"name": "MODEL_PATH", "valueFrom": {"configMapKeyRef": {"name": "chart-demo-config", "key": "MODEL_PATH"}}},
            {"name": "LOG_LEVEL", "value": "debug"},
        ]);
        m.data["spec"]["volumes"] =
            json!([{"name": "model-cache", "configMap": {"name": "model-cache"}}]);
        m.data["spec"]["volumeMounts"] = json!([{"name": "model-cache", "mountPath": "/models"}]);
        m.data["spec"]["imagePullSecrets"] = json!([{"name": "registry-auth"}]);
        m.data["spec"]["readinessProbe"] = json!({"initialDelaySeconds": 0, "periodSeconds": 1,
            "failureThreshold": 1, "bogus": 7});
        let d = desired_deployment(&m);
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["nodeSelector"], json!({"mdiag.dev/node": "real"}));
        assert_eq!(pod["tolerations"][0]["effect"], "NoSchedule");
        assert_eq!(pod["volumes"][0]["configMap"]["name"], "model-cache");
        assert_eq!(pod["imagePullSecrets"], json!([{"name": "registry-auth"}]));
        let c = &pod["containers"][0];
        assert_eq!(c["env"][0], json!({"name": "MODEL_NAME", "value": "tiny"}));
        assert_eq!(
            c["env"][1]["valueFrom"]["configMapKeyRef"]["key"],
            "MODEL_PATH"
        );
        assert_eq!(c["env"][2], json!({"name": "LOG_LEVEL", "value": "debug"}));
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/models");
        let p = &c["readinessProbe"];
        assert_eq!(p["initialDelaySeconds"], 0);
        assert_eq!(p["periodSeconds"], 1);
        assert_eq!(p["failureThreshold"], 1);
        assert_eq!(p["timeoutSeconds"], 1, "unset timings keep the default");
        assert!(p.get("bogus").is_none());
        assert_eq!(p["httpGet"]["path"], "/healthz");

        // The spec's own MODEL_NAME replaces the controller's.
        m.data["spec"]["env"] = json!([{"name": "MODEL_NAME", "value": "other"}]);
        let d = desired_deployment(&m);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["env"],
            json!([{"name": "MODEL_NAME", "value": "other"}])
        );
    }

    #[test]
    fn status() {
        let dep: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "chart-demo", "generation": 3},
            "status": {"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
                "conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                    "message": "ok"}]},
        }))
        .unwrap();
        let at: jiff::Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let s = desired_status(&ms(), &dep, at);
        assert_eq!(s["observedGeneration"], 2);
        assert_eq!(s["readyReplicas"], 2);
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
        // Unchanged status keeps its transition time.
        let mut ms2 = ms();
        ms2.data["status"] = s.clone();
        let later: jiff::Timestamp = "2026-11-28T10:05:00Z".parse().unwrap();
        assert_eq!(desired_status(&ms2, &dep, later), s);
    }
}
