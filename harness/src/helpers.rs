//! What the live tests need around the simulator: where the cluster is,
//! installing the CRD, namespaces, ModelServices, pausing the controller,
//! stopping a node, and waiting for a condition.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep};

use crate::controller::{CONTROL_CONFIGMAP, CONTROLLER_NAMESPACE, modelservice_resource};
use crate::names::{BEHAVIOR_ANNOTATION, STOPPED_ANNOTATION};
pub use crate::util::ensure_namespace;

/// The ModelService CRD (fixtures/crd/modelservice.yaml).
pub const MODELSERVICE_CRD_YAML: &str = include_str!("../../fixtures/crd/modelservice.yaml");

/// The cluster state dir of `cargo xtask cluster up`: `$MDIAG_CLUSTER_DIR`,
/// else `<repo>/target/cluster`.
pub fn cluster_dir() -> PathBuf {
    match std::env::var_os("MDIAG_CLUSTER_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                std::env::current_dir().unwrap_or_default().join(d)
            }
        }
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .join("target")
            .join("cluster"),
    }
}

/// admin.kubeconfig of the cluster (system:masters).
pub fn admin_kubeconfig() -> PathBuf {
    cluster_dir().join("admin.kubeconfig")
}

/// viewer.kubeconfig of the cluster (the `view` ClusterRole).
pub fn viewer_kubeconfig() -> PathBuf {
    cluster_dir().join("viewer.kubeconfig")
}

/// Applies the ModelService CRD and waits until it is Established.
pub async fn install_crd(client: &Client) -> anyhow::Result<()> {
    let crd: Value =
        serde_saphyr::from_str(MODELSERVICE_CRD_YAML).context("parsing the ModelService CRD")?;
    let name = crd["metadata"]["name"]
        .as_str()
        .context("CRD without a name")?
        .to_owned();
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    api.patch(
        &name,
        &PatchParams::apply("mdiag-harness").force(),
        &Patch::Apply(&crd),
    )
    .await
    .context("applying the ModelService CRD")?;
    wait_for(Duration::from_secs(30), "the CRD to be Established", || {
        let api = api.clone();
        let name = name.clone();
        async move {
            let c = api.get(&name).await?;
            let ok = c
                .status
                .and_then(|s| s.conditions)
                .into_iter()
                .flatten()
                .any(|c| c.type_ == "Established" && c.status == "True");
            Ok(ok.then_some(()))
        }
    })
    .await?;
    // Discovery can lag the Established condition a little.
    wait_for(Duration::from_secs(30), "ModelService discovery", || {
        let client = client.clone();
        async move {
            Ok(client
                .list_api_group_resources("modeldock.io/v1alpha1")
                .await
                .ok()
                .filter(|l| l.resources.iter().any(|r| r.name == "modelservices"))
                .map(|_| ()))
        }
    })
    .await
}

/// Deletes a namespace (does not wait).
pub async fn delete_namespace(client: &Client, ns: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    match api.delete(ns, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(e) if crate::util::is_not_found(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Pauses (`true`) or resumes the stand-in controller: it stops
/// reconciling and renewing its Lease while paused.
pub async fn pause_controller(client: &Client, paused: bool) -> anyhow::Result<()> {
    ensure_namespace(client, CONTROLLER_NAMESPACE).await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
    let cm = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONTROL_CONFIGMAP, "namespace": CONTROLLER_NAMESPACE},
        "data": {"paused": if paused { "true" } else { "false" }},
    });
    api.patch(
        CONTROL_CONFIGMAP,
        &PatchParams::apply("mdiag-harness").force(),
        &Patch::Apply(&cm),
    )
    .await?;
    // The controller reads the switch every 500 ms: return once it has,
    // so that what the caller does next happens while it is paused.
    sleep(Duration::from_millis(1500)).await;
    Ok(())
}

/// [`pause_controller`] on a runtime of its own, with an admin kubeconfig
/// (for callers without one, like `cargo xtask bench gate --real-node`).
pub fn pause_controller_blocking(admin_kubeconfig: &Path, paused: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = crate::client_from_kubeconfig(admin_kubeconfig).await?;
        pause_controller(&client, paused).await
    })
}

/// Stops (`true`) or starts again a fake node: stopped, it stops its
/// heartbeats, Lease renewals, Pod writes and log server, and is marked
/// Ready=Unknown.
pub async fn stop_node(client: &Client, node: &str, stopped: bool) -> anyhow::Result<()> {
    let api: Api<Node> = Api::all(client.clone());
    let value = if stopped { json!("true") } else { Value::Null };
    let patch = json!({"metadata": {"annotations": {STOPPED_ANNOTATION: value}}});
    api.patch(node, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// A ModelService to apply. `ModelServiceSpec::new(image)` then the
/// builder methods.
#[derive(Clone, Debug, Default)]
pub struct ModelServiceSpec {
    pub image: String,
    pub replicas: Option<i32>,
    /// The sim behaviour of its Pods (`sim.mdiag.dev/behavior`).
    pub behavior: Option<String>,
    pub model_name: Option<String>,
    pub port: Option<i32>,
    pub readiness_path: Option<String>,
    pub args: Vec<String>,
    /// core/v1 ResourceRequirements, e.g. `{"limits": {"memory": "512Mi"}}`.
    pub resources: Option<Value>,
    /// More metadata annotations (`sim.mdiag.dev/*` ones reach the Pods).
    pub annotations: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    /// The field manager of the apply (default `helm`, as a chart would).
    pub field_manager: Option<String>,
    /// More spec fields, set as they are (env, nodeSelector, tolerations,
    /// volumes, volumeMounts, imagePullSecrets, readinessProbe, ...).
    pub spec_fields: BTreeMap<String, Value>,
}

/// The label of the real node (`mdiag.dev/node=real`); it also carries the
/// taint `mdiag.dev/node=real:NoSchedule`.
pub const REAL_NODE_LABEL: (&str, &str) = ("mdiag.dev/node", "real");

impl ModelServiceSpec {
    pub fn new(image: &str) -> Self {
        ModelServiceSpec {
            image: image.to_owned(),
            ..Default::default()
        }
    }
    pub fn replicas(mut self, n: i32) -> Self {
        self.replicas = Some(n);
        self
    }
    pub fn behavior(mut self, b: &str) -> Self {
        self.behavior = Some(b.to_owned());
        self
    }
    pub fn model_name(mut self, m: &str) -> Self {
        self.model_name = Some(m.to_owned());
        self
    }
    pub fn port(mut self, p: i32) -> Self {
        self.port = Some(p);
        self
    }
    pub fn readiness_path(mut self, p: &str) -> Self {
        self.readiness_path = Some(p.to_owned());
        self
    }
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.to_owned());
        self
    }
    pub fn resources(mut self, r: Value) -> Self {
        self.resources = Some(r);
        self
    }
    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        self.annotations.insert(k.to_owned(), v.to_owned());
        self
    }
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.labels.insert(k.to_owned(), v.to_owned());
        self
    }
    pub fn field_manager(mut self, m: &str) -> Self {
        self.field_manager = Some(m.to_owned());
        self
    }
    /// Sets one more spec field, e.g. `("env", json!([...]))`.
    pub fn spec_field(mut self, k: &str, v: Value) -> Self {
        self.spec_fields.insert(k.to_owned(), v);
        self
    }
    /// Pins the Pods to the real node: its label as nodeSelector and a
    /// toleration of its taint.
    pub fn on_real_node(self) -> Self {
        let (k, v) = REAL_NODE_LABEL;
        self.spec_field("nodeSelector", json!({ k: v })).spec_field(
            "tolerations",
            json!([{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}]),
        )
    }

    /// The object to apply.
    pub fn to_object(&self, ns: &str, name: &str) -> Value {
        let mut annotations = self.annotations.clone();
        if let Some(b) = &self.behavior {
            annotations.insert(BEHAVIOR_ANNOTATION.to_owned(), b.clone());
        }
        let mut spec = json!({"image": self.image});
        if let Some(r) = self.replicas {
            spec["replicas"] = json!(r);
        }
        if let Some(m) = &self.model_name {
            spec["modelName"] = json!(m);
        }
        if let Some(p) = self.port {
            spec["port"] = json!(p);
        }
        if let Some(p) = &self.readiness_path {
            spec["readinessPath"] = json!(p);
        }
        if !self.args.is_empty() {
            spec["args"] = json!(self.args);
        }
        if let Some(r) = &self.resources {
            spec["resources"] = r.clone();
        }
        for (k, v) in &self.spec_fields {
            spec[k] = v.clone();
        }
        let mut meta = json!({"name": name, "namespace": ns});
        if !annotations.is_empty() {
            meta["annotations"] = json!(annotations);
        }
        if !self.labels.is_empty() {
            meta["labels"] = json!(self.labels);
        }
        json!({
            "apiVersion": "modeldock.io/v1alpha1",
            "kind": "ModelService",
            "metadata": meta,
            "spec": spec,
        })
    }
}

/// Server-side-applies a ModelService (field manager `helm` unless the
/// spec says otherwise) and returns it as stored.
pub async fn apply_model_service_spec(
    client: &Client,
    ns: &str,
    name: &str,
    spec: &ModelServiceSpec,
) -> anyhow::Result<DynamicObject> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &modelservice_resource());
    let manager = spec.field_manager.as_deref().unwrap_or("helm");
    let obj = spec.to_object(ns, name);
    api.patch(
        name,
        &PatchParams::apply(manager).force(),
        &Patch::Apply(&obj),
    )
    .await
    .with_context(|| format!("applying ModelService {ns}/{name}"))
}

/// Applies a ModelService with an image, a replica count, a sim behaviour
/// (`None` = ready) and optional resource requirements.
pub async fn apply_model_service(
    client: &Client,
    ns: &str,
    name: &str,
    image: &str,
    replicas: i32,
    behavior: Option<&str>,
    resources: Option<Value>,
) -> anyhow::Result<DynamicObject> {
    let mut spec = ModelServiceSpec::new(image).replicas(replicas);
    if let Some(b) = behavior {
        spec = spec.behavior(b);
    }
    if let Some(r) = resources {
        spec = spec.resources(r);
    }
    apply_model_service_spec(client, ns, name, &spec).await
}

/// Polls `check` every 250 ms until it returns `Some`, failing after
/// `timeout` (with the last error, if the check failed).
pub async fn wait_for<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let t0 = Instant::now();
    loop {
        let last_err = match check().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => None,
            Err(e) => Some(e),
        };
        if t0.elapsed() >= timeout {
            match last_err {
                Some(e) => bail!(
                    "timed out after {:.0?} waiting for {what}; last error: {e:#}",
                    timeout
                ),
                None => bail!("timed out after {:.0?} waiting for {what}", timeout),
            }
        }
        sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_parses() {
        let crd: Value = serde_saphyr::from_str(MODELSERVICE_CRD_YAML).unwrap();
        assert_eq!(crd["metadata"]["name"], "modelservices.modeldock.io");
        // The fields the controller passes through are in the schema.
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        for f in [
            "env",
            "nodeSelector",
            "tolerations",
            "volumes",
            "volumeMounts",
            "imagePullSecrets",
            "readinessProbe",
        ] {
            assert!(spec.get(f).is_some(), "{f} missing from the CRD schema");
        }
        assert_eq!(
            spec["env"]["items"]["properties"]["valueFrom"]["properties"]["configMapKeyRef"]["required"],
            json!(["key"])
        );
    }

    #[test]
    fn modelservice_object() {
        let o = ModelServiceSpec::new("img:v1")
            .replicas(2)
            .behavior("crash-loop:3")
            .resources(json!({"limits": {"memory": "1Gi"}}))
            .to_object("ns", "m");
        assert_eq!(
            o["metadata"]["annotations"]["sim.mdiag.dev/behavior"],
            "crash-loop:3"
        );
        assert_eq!(o["spec"]["replicas"], 2);
        assert_eq!(o["spec"]["resources"]["limits"]["memory"], "1Gi");
        assert!(o["spec"].get("nodeSelector").is_none());
        let o = ModelServiceSpec::new("img:v1")
            .on_real_node()
            .spec_field("imagePullSecrets", json!([{"name": "pull"}]))
            .to_object("ns", "m");
        assert_eq!(o["spec"]["nodeSelector"], json!({"mdiag.dev/node": "real"}));
        assert_eq!(o["spec"]["tolerations"][0]["effect"], "NoSchedule");
        assert_eq!(o["spec"]["imagePullSecrets"][0]["name"], "pull");
    }

    #[tokio::test]
    async fn wait_for_times_out() {
        let r: anyhow::Result<()> =
            wait_for(Duration::from_millis(300), "nothing", || async { Ok(None) }).await;
        assert!(r.unwrap_err().to_string().contains("waiting for nothing"));
        let v = wait_for(Duration::from_secs(1), "x", || async { Ok(Some(3)) })
            .await
            .unwrap();
        assert_eq!(v, 3);
    }
}
