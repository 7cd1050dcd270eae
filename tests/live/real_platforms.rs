//! KServe's InferenceService in Standard mode on the real node
//! (docs/platforms.md#kserve). KServe's controller cannot be built here
//! (docs/testing.md#serving-platforms), so the trial installs the
//! InferenceService CRD (fixtures/crd/inferenceservice.yaml) and writes
//! what KServe v0.20 writes: the predictor Deployment and Service owned by
//! the InferenceService, and its status. The Pods are real Pods on the real
//! node.
//!
//! - `llama`: a predictor that loads and serves. `trace isvc/llama` walks
//!   from the InferenceService by owner UID and serves; `trace
//!   deploy/llama-predictor` is read with the InferenceService above it;
//!   `triage` lists the InferenceService, not its Deployment; `gate`
//!   converges.
//! - `mistral`: no runtime supports its model format, so KServe makes no
//!   Deployment and writes InvalidSpec / NoSupportingRuntime. `trace` says
//!   `model-not-loaded` (live, and from `mdiag snapshot isvc/mistral`
//!   replayed), and `gate isvc/mistral` fails on it at once, where
//!   `kubectl wait --for=condition=Ready` can only time out: Ready=False is
//!   also what KServe says while a model loads.
//!
//! Argo Rollouts' Rollout (docs/platforms.md#argo-rollouts), in
//! `real-node-argo-canary`: Argo's own Rollout CRD, from the Go module the
//! live ring's prebuild fetches (its controller cannot be built here), and
//! what its controller writes: the ReplicaSets it owns, the stable and
//! canary Services with its hash in their selectors, and its status. The
//! ReplicaSet controller makes real Pods of those ReplicaSets on the real
//! node. A first revision serves; a canary whose Pod cannot start (a
//! missing Secret) leaves the stable revision serving: `trace` says so
//! (degraded, `container-config-error`), live and replayed from `mdiag
//! snapshot rollout/llama`, `triage` lists the Rollout and not its
//! ReplicaSets, and `gate` fails on the canary's own finding.
//!
//! LeaderWorkerSet (docs/platforms.md#leaderworkerset), in
//! `real-node-lws-group`: the LWS module is not served here, so the trial
//! installs this project's CRD (fixtures/crd/leaderworkerset.yaml) and
//! writes what LWS v0.10's controller writes: the leader StatefulSet owned
//! by the LeaderWorkerSet and, once the StatefulSet controller has made
//! each leader Pod, a worker StatefulSet owned by that Pod, beside the
//! headless Service that publishes not-ready addresses. The StatefulSet
//! controller makes every Pod on the real node. Group 1's worker never
//! turns Ready (the stand-in's `--never-ready`, where LWS would run one
//! template: a worker whose server cannot load its shard): 3 of 4 Pods are
//! Ready and the slice calls all 4 ready, yet one group of two serves.
//! `trace` says so (degraded, `readiness-failing` leads, `group-not-ready`
//! for vllm-1), live and replayed from `mdiag snapshot lws/vllm`, and
//! `triage` lists the LeaderWorkerSet, not its three StatefulSets.
//!
//! Knative Serving (docs/platforms.md#knative-serving), in
//! `real-node-knative-revisions`: Knative's modules are not served here, so
//! the trial installs this project's CRDs (fixtures/crd/knative-serving.yaml)
//! and writes what Knative's controllers write: the Configuration owned by
//! the Service, each Revision owned by the Configuration, each Revision's
//! Deployment (labelled with the Service's UID) and its private and public
//! Services, and the Service's status. The Deployment and ReplicaSet
//! controllers make real Pods on the real node. Revision 1 serves; revision
//! 2 reads a Secret that does not exist, so the real kubelet cannot create
//! its container while revision 1 keeps the traffic: `trace ksvc/llama`
//! says degraded with `container-config-error`, live and replayed from
//! `mdiag snapshot ksvc/llama`, `triage` lists the Knative Service and not
//! its Deployments, and `gate` fails on the Pod's finding. Then an
//! InferenceService in KServe's Knative mode takes the Knative Service as
//! its predictor (owner reference and label, as KServe sets them):
//! `trace isvc/llama` gives the same verdict on the same Revisions, and
//! `triage` lists the InferenceService only
//! (docs/platforms.md#kserves-knative-mode).

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::{Value, json};

use super::gate::{gate_on, viewer};
use super::real_jobs::{in_namespace, kubectl_apply, loud, pretty, rows, same_as_live, triage};
use super::real_probes::until;
use super::{finding_ids, snapshot_file, world};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("real-node-kserve-standard", kserve_standard),
        Trial::test("real-node-argo-canary", argo_canary),
        Trial::test("real-node-lws-group", lws_group),
        Trial::test("real-node-knative-revisions", knative_revisions),
    ]
}

/// Argo's Rollout CRD, in its module's `manifests/crds`.
pub(super) const ROLLOUT_CRD: &str = "rollout-crd.yaml";

pub(super) fn install_crd() -> Result<(), Failed> {
    let w = world();
    w.kubectl(&["apply", "-f", "fixtures/crd/inferenceservice.yaml"])?;
    established("crd/inferenceservices.serving.kserve.io")?;
    Ok(())
}

/// Waits for a CRD to be served. `kubectl wait` refuses a CRD whose status
/// has no conditions yet (just created), so that answer is asked again.
fn established(crd: &str) -> Result<(), Failed> {
    let t0 = Instant::now();
    loop {
        match world().kubectl(&["wait", "--for=condition=Established", crd, "--timeout=60s"]) {
            Ok(_) => return Ok(()),
            Err(e)
                if format!("{e:#}").contains(".status.conditions accessor error")
                    && t0.elapsed() < Duration::from_secs(30) =>
            {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(format!("{e:#}").into()),
        }
    }
}

pub(super) fn inference_service(ns: &str, name: &str, format: &str) -> Value {
    json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
        "metadata": {"name": name, "namespace": ns,
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"}},
        "spec": {"predictor": {"minReplicas": 1, "model": {
            "modelFormat": {"name": format},
            "storageUri": "s3://models-prod/tiny-llama-1.1b/"}}}})
}

/// The Deployment and Service KServe's Standard mode writes for `name`.
fn predictor(ns: &str, name: &str, uid: &str) -> Vec<Value> {
    let (k, v) = REAL_NODE_LABEL;
    let component = format!("{name}-predictor");
    let app = format!("isvc.{component}");
    let owner = json!([{"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
        "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}]);
    let labels = json!({"app": app, "component": "predictor",
        "serving.kserve.io/inferenceservice": name});
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": component, "namespace": ns, "labels": labels,
                "ownerReferences": owner},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                "template": {"metadata": {"labels": labels}, "spec": {
                    "nodeSelector": {k: v},
                    "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
                    "terminationGracePeriodSeconds": 2,
                    "containers": [{
                        "name": "kserve-container",
                        "image": world().images.model_server("v1.4.0"),
                        "args": ["--ready-after=2"],
                        "ports": [{"containerPort": 8080, "name": "http"}],
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                            "periodSeconds": 1, "failureThreshold": 1}}]}}}}),
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": component, "namespace": ns, "labels": labels,
                "ownerReferences": owner},
            "spec": {"selector": {"app": app}, "ports": [{"port": 80, "targetPort": "http"}]}}),
    ]
}

fn condition(kind: &str, status: &str, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": at})
}

/// Writes an object's status as its controller does, through the status
/// subresource (`resource` as kubectl names it).
fn write_status(ns: &str, resource: &str, name: &str, status: Value) -> Result<(), Failed> {
    let patch = json!({"status": status}).to_string();
    world().kubectl(&[
        "-n",
        ns,
        "patch",
        resource,
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ])?;
    Ok(())
}

fn kserve_standard() -> Result<(), Failed> {
    in_namespace("real-node-kserve-standard", "kserve-standard", |ns| {
        install_crd()?;
        kubectl_apply(
            ns,
            vec![
                inference_service(ns, "llama", "huggingface"),
                inference_service(ns, "mistral", "onnx"),
            ],
        )?;
        let uid = uid_of(ns, "inferenceservice", "llama")?;
        kubectl_apply(ns, predictor(ns, "llama", &uid))?;
        // KServe's answer for a format no runtime supports: no Deployment.
        let now = jiff::Timestamp::now().to_string();
        let why = "No runtime found to support specified framework/version";
        write_status(
            ns,
            "inferenceservice",
            "mistral",
            json!({"deploymentMode": "Standard",
                "conditions": [
                    condition("PredictorReady", "False", "NoSupportingRuntime", why, &now),
                    condition("Ready", "False", "NoSupportingRuntime", why, &now)],
                "modelStatus": {"transitionStatus": "InvalidSpec",
                    "states": {"targetModelState": "FailedToLoad"},
                    "lastFailureInfo": {"reason": "NoSupportingRuntime", "message": why}}}),
        )?;

        // The healthy one serves, walked from the InferenceService.
        let (code, r) = until(ns, "isvc/llama", |r| r["healthy"] == true)?;
        let now = jiff::Timestamp::now().to_string();
        write_status(
            ns,
            "inferenceservice",
            "llama",
            json!({"deploymentMode": "Standard",
                "conditions": [condition("PredictorReady", "True", "MinimumReplicasAvailable", "", &now),
                    condition("IngressReady", "True", "", "", &now),
                    condition("Ready", "True", "", "", &now)],
                "modelStatus": {"transitionStatus": "UpToDate",
                    "states": {"activeModelState": "Loaded", "targetModelState": "Loaded"}}}),
        )?;
        let mut problems = Vec::new();
        if code != 0 || !loud(&r).is_empty() || r["target"]["kind"] != "InferenceService" {
            problems.push(format!(
                "isvc/llama: exit {code}, target {}, findings {:?}",
                r["target"]["kind"],
                finding_ids(&r)
            ));
        }

        // Its Deployment traced by name is read with the InferenceService
        // above it, as a file holding both is.
        let (_, d) = super::real_jobs::trace(ns, "deploy/llama-predictor", None)?;
        if d["target"]["kind"] != "InferenceService" {
            problems.push(format!(
                "deploy/llama-predictor: judged as {} {}, not through its InferenceService",
                d["target"]["kind"], d["target"]["name"]
            ));
        }

        // Triage ranks the InferenceServices, not the predictor Deployment.
        let (_, t) = triage(ns, None)?;
        let mut rows = rows(&t);
        rows.sort();
        if rows != ["InferenceService/llama", "InferenceService/mistral"] {
            problems.push(format!("triage rows {rows:?}"));
        }

        // The one no runtime serves.
        let (code, r) = until(ns, "isvc/mistral", |r| !finding_ids(r).is_empty())?;
        if code != 1 || r["verdict"]["lead"] != "model-not-loaded" {
            problems.push(format!(
                "isvc/mistral: exit {code}, lead {}\n{}",
                r["verdict"]["lead"],
                pretty(&r)
            ));
        }
        // The evidence a user keeps, replayed: the same judgement.
        problems.extend(replayed_differs(ns, "isvc/mistral", &(code, r.clone()))?);
        let t0 = Instant::now();
        let (code, g, err) = gate_on(&viewer(), ns, "isvc/mistral", &["--timeout", "60s"])?;
        let gate_took = t0.elapsed();
        let decided = g["gate"]["decided_by"].as_str().unwrap_or("");
        if code != 1 || decided != "model-not-loaded" {
            problems.push(format!(
                "gate isvc/mistral: exit {code}, decided by {decided:?}\n{err}\n{}",
                pretty(&g)
            ));
        }
        // The platform's own condition, waited on as a CI step would: it
        // cannot tell this from a model still loading, so it times out.
        let wait = Duration::from_secs(20);
        let t0 = Instant::now();
        let waited = world().kubectl(&[
            "-n",
            ns,
            "wait",
            "--for=condition=Ready",
            "inferenceservice/mistral",
            &format!("--timeout={}s", wait.as_secs()),
        ]);
        let wait_took = t0.elapsed();
        if waited.is_ok() {
            problems.push("kubectl wait: Ready on a model no runtime serves".into());
        }
        eprintln!(
            "  real-node-kserve-standard: gate isvc/mistral failed in {:.1} s (mdiag's own \
             elapsed {:.1} s); kubectl wait --for=condition=Ready gave up after {:.1} s",
            gate_took.as_secs_f64(),
            g["elapsed_seconds"].as_f64().unwrap_or(-1.0),
            wait_took.as_secs_f64()
        );
        let (code, g, err) = gate_on(&viewer(), ns, "isvc/llama", &["--timeout", "60s"])?;
        if code != 0 {
            problems.push(format!(
                "gate isvc/llama: exit {code}\n{err}\n{}",
                pretty(&g)
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    })
}

/// Argo's Rollout CRD from its module, and a role that lets `view` read
/// Rollouts, as Argo's install aggregates one.
pub(super) fn install_rollout_crd() -> Result<(), Failed> {
    let dir = super::recipes::module_dir(super::recipes::ARGO_ROLLOUTS, false)
        .map_err(|e| format!("{e:#} (the live ring's prebuild downloads it)"))?;
    let crd = dir.join("manifests/crds").join(ROLLOUT_CRD);
    let w = world();
    // Server-side: the CRD is larger than the last-applied annotation allows.
    w.kubectl(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        crd.to_str().unwrap_or_default(),
    ])?;
    established("crd/rollouts.argoproj.io")?;
    let view = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "mdiag-test-rollouts-view",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["argoproj.io"], "resources": ["rollouts", "rollouts/status"],
            "verbs": ["get", "list", "watch"]}]});
    let file = w.layout.dir().join("rollouts-view.json");
    std::fs::write(&file, view.to_string()).map_err(|e| e.to_string())?;
    w.kubectl(&["apply", "-f", file.to_str().unwrap_or_default()])?;
    Ok(())
}

const STABLE_HASH: &str = "67b6767cf7";
const CANARY_HASH: &str = "5c4b6c4bd5";

/// The Pod template of the Rollout; the canary's asks for a Secret that is
/// not there.
fn rollout_template(hash: Option<&str>, broken: bool) -> Value {
    let (k, v) = REAL_NODE_LABEL;
    let mut labels = json!({"app": "llama"});
    if let Some(h) = hash {
        labels["rollouts-pod-template-hash"] = h.into();
    }
    let mut container = json!({
        "name": "server",
        "image": world().images.model_server("v1.4.0"),
        "args": ["--ready-after=2"],
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
            "periodSeconds": 1, "failureThreshold": 1}});
    if broken {
        container["env"] = json!([{"name": "HF_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}]);
    }
    json!({"metadata": {"labels": labels}, "spec": {
        "nodeSelector": {k: v},
        "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 2,
        "containers": [container]}})
}

pub(super) fn rollout(ns: &str, name: &str, broken: bool) -> Value {
    json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "llama"}},
            "template": rollout_template(None, broken),
            "strategy": {"canary": {"stableService": "llama-stable",
                "canaryService": "llama-canary",
                "steps": [{"setWeight": 50}, {"pause": {}}]}}}})
}

/// A ReplicaSet as Argo's controller makes it: owned by the Rollout, its
/// hash on the labels, the selector and the template.
fn rollout_replica_set(ns: &str, uid: &str, hash: &str, revision: u32, broken: bool) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("llama-{hash}"), "namespace": ns,
            "labels": {"app": "llama", "rollouts-pod-template-hash": hash},
            "annotations": {"rollout.argoproj.io/revision": revision.to_string()},
            "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
                "name": "llama", "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"replicas": 1,
            "selector": {"matchLabels": {"app": "llama", "rollouts-pod-template-hash": hash}},
            "template": rollout_template(Some(hash), broken)}})
}

fn rollout_service(ns: &str, name: &str, hash: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": ns,
            "annotations": {"argo-rollouts.argoproj.io/managed-by-rollouts": "llama"}},
        "spec": {"selector": {"app": "llama", "rollouts-pod-template-hash": hash},
            "ports": [{"port": 80, "targetPort": "http"}]}})
}

fn rollout_condition(kind: &str, status: &str, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": at, "lastUpdateTime": at})
}

fn argo_canary() -> Result<(), Failed> {
    in_namespace("real-node-argo-canary", "argo-canary", |ns| {
        install_rollout_crd()?;
        kubectl_apply(ns, vec![rollout(ns, "llama", false)])?;
        let uid = uid_of(ns, "rollout", "llama")?;
        kubectl_apply(
            ns,
            vec![
                rollout_replica_set(ns, &uid, STABLE_HASH, 1, false),
                rollout_service(ns, "llama-stable", STABLE_HASH),
                rollout_service(ns, "llama-canary", STABLE_HASH),
            ],
        )?;
        let now = jiff::Timestamp::now().to_string();
        write_status(
            ns,
            "rollout",
            "llama",
            json!({"phase": "Healthy", "observedGeneration": "1",
                "currentPodHash": STABLE_HASH, "stableRS": STABLE_HASH,
                "currentStepIndex": 2, "replicas": 1, "updatedReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1, "HPAReplicas": 1,
                "selector": "app=llama", "canary": {}, "blueGreen": {},
                "conditions": [
                    rollout_condition("Available", "True", "AvailableReason",
                        "Rollout has minimum availability", &now),
                    rollout_condition("Progressing", "True", "NewReplicaSetAvailable",
                        &format!("ReplicaSet \"llama-{STABLE_HASH}\" has successfully progressed."), &now),
                    rollout_condition("Completed", "True", "RolloutCompleted", "RolloutCompleted", &now),
                    rollout_condition("Healthy", "True", "RolloutHealthy", "Rollout is healthy", &now)]}),
        )?;

        // The first revision serves, walked from the Rollout.
        let mut problems = Vec::new();
        let (code, r) = until(ns, "rollout/llama", |r| r["healthy"] == true)?;
        if code != 0 || r["target"]["kind"] != "Rollout" || !loud(&r).is_empty() {
            problems.push(format!(
                "rollout/llama healthy: exit {code}, target {}, findings {:?}",
                r["target"]["kind"],
                finding_ids(&r)
            ));
        }

        // `helm upgrade` of a template whose Secret is missing: Argo makes
        // the canary ReplicaSet of revision 2 and steps to 50 %.
        kubectl_apply(ns, vec![rollout(ns, "llama", true)])?;
        kubectl_apply(
            ns,
            vec![rollout_replica_set(ns, &uid, CANARY_HASH, 2, true)],
        )?;
        let now = jiff::Timestamp::now().to_string();
        write_status(
            ns,
            "rollout",
            "llama",
            json!({"phase": "Progressing", "message": "more replicas need to be updated",
                "observedGeneration": "2", "currentPodHash": CANARY_HASH,
                "stableRS": STABLE_HASH, "currentStepIndex": 0, "replicas": 2,
                "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                "HPAReplicas": 2,
                "conditions": [
                    rollout_condition("Available", "True", "AvailableReason",
                        "Rollout has minimum availability", &now),
                    rollout_condition("Progressing", "True", "ReplicaSetUpdated",
                        &format!("ReplicaSet \"llama-{CANARY_HASH}\" is progressing."), &now),
                    rollout_condition("Completed", "False", "RolloutCompleted", "RolloutCompleted", &now),
                    rollout_condition("Healthy", "False", "RolloutHealthy", "Rollout is not healthy", &now)]}),
        )?;
        let (code, r) = until(ns, "rollout/llama", |r| {
            finding_ids(r).contains(&"container-config-error".to_string())
        })?;
        if code != 1
            || r["verdict"]["state"] != "degraded"
            || r["verdict"]["lead"] != "container-config-error"
        {
            problems.push(format!(
                "rollout/llama canary: exit {code}, state {}, lead {}\n{}",
                r["verdict"]["state"],
                r["verdict"]["lead"],
                pretty(&r)
            ));
        }
        let mentions_deployment = finding_ids(&r)
            .iter()
            .any(|id| id.starts_with("deployment"));
        if mentions_deployment {
            problems.push(format!("rollout/llama: findings {:?}", finding_ids(&r)));
        }

        // Triage lists the Rollout, not its ReplicaSets.
        let (_, t) = triage(ns, None)?;
        if rows(&t) != ["Rollout/llama"] {
            problems.push(format!("triage rows {:?}", rows(&t)));
        }

        // The evidence a user keeps, replayed: the same judgement.
        problems.extend(replayed_differs(ns, "rollout/llama", &(code, r.clone()))?);

        let t0 = Instant::now();
        let (code, g, err) = gate_on(&viewer(), ns, "rollout/llama", &["--timeout", "60s"])?;
        let decided = g["gate"]["decided_by"].as_str().unwrap_or("");
        if code != 1 || decided != "container-config-error" {
            problems.push(format!(
                "gate rollout/llama: exit {code}, decided by {decided:?}\n{err}\n{}",
                pretty(&g)
            ));
        }
        eprintln!(
            "  real-node-argo-canary: gate rollout/llama failed in {:.1} s on {decided}",
            t0.elapsed().as_secs_f64()
        );
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    })
}

pub(super) fn install_lws_crd() -> Result<(), Failed> {
    world().kubectl(&["apply", "-f", "fixtures/crd/leaderworkerset.yaml"])?;
    established("crd/leaderworkersets.leaderworkerset.x-k8s.io")
}

const LWS_NAME: &str = "leaderworkerset.sigs.k8s.io/name";
const LWS_HASH: &str = "54b8f9ccc8";

/// A LeaderWorkerSet as Helm would apply it: `replicas` groups of two.
pub(super) fn leader_worker_set(ns: &str, name: &str, replicas: u32) -> Value {
    json!({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {"size": 2,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "workerTemplate": lws_template(json!({}), "--ready-after=2")}}})
}

/// The Pod template of a set: the stand-in server with its readiness
/// probe on the real node, with `labels`.
fn lws_template(labels: Value, args: &str) -> Value {
    let (k, v) = REAL_NODE_LABEL;
    json!({"metadata": {"labels": labels}, "spec": {
        "nodeSelector": {k: v},
        "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 2,
        "containers": [{"name": "server",
            "image": world().images.model_server("v1.4.0"),
            "args": [args],
            "ports": [{"containerPort": 8080, "name": "http"}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                "periodSeconds": 1, "failureThreshold": 1}}]}})
}

/// The leader set LWS applies: named as the LeaderWorkerSet, controlled by
/// it, selecting worker-index 0.
fn leader_set(ns: &str, lws_uid: &str) -> Value {
    let selector = json!({LWS_NAME: "vllm", "leaderworkerset.sigs.k8s.io/worker-index": "0"});
    let mut labels = selector.clone();
    labels["leaderworkerset.sigs.k8s.io/template-revision-hash"] = LWS_HASH.into();
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "vllm", "namespace": ns,
            "labels": {LWS_NAME: "vllm", "leaderworkerset.sigs.k8s.io/template-revision-hash": LWS_HASH},
            "ownerReferences": [{"apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet", "name": "vllm", "uid": lws_uid,
                "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"replicas": 2, "serviceName": "vllm", "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selector},
            "template": lws_template(labels, "--ready-after=2")}})
}

/// A group's worker set, as LWS's Pod reconciler creates it: named as its
/// leader Pod and controlled by it, its ordinals from 1.
fn worker_set(ns: &str, group: u32, leader_uid: &str, args: &str) -> Value {
    let leader = format!("vllm-{group}");
    let selector = json!({LWS_NAME: "vllm",
        "leaderworkerset.sigs.k8s.io/group-index": group.to_string(),
        "leaderworkerset.sigs.k8s.io/group-key": format!("group-key-{group}")});
    let mut labels = selector.clone();
    labels["leaderworkerset.sigs.k8s.io/template-revision-hash"] = LWS_HASH.into();
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": leader, "namespace": ns, "labels": labels.clone(),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": leader,
                "uid": leader_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"replicas": 1, "ordinals": {"start": 1}, "serviceName": "vllm",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selector},
            "template": lws_template(labels, args)}})
}

/// The headless Service LWS creates: every Pod of the set, published
/// whether Ready or not.
fn lws_service(ns: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "vllm", "namespace": ns},
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": true,
            "selector": {LWS_NAME: "vllm"}}})
}

/// The UID of `kind/name` in `ns`; an error while it has none.
fn uid_of(ns: &str, kind: &str, name: &str) -> Result<String, Failed> {
    let out = world().kubectl(&[
        "-n",
        ns,
        "get",
        kind,
        name,
        "-o",
        "jsonpath={.metadata.uid}",
    ])?;
    let uid = out.trim().trim_matches('\'').to_string();
    if uid.is_empty() {
        return Err(format!("{kind}/{name} has no uid yet").into());
    }
    Ok(uid)
}

fn lws_group() -> Result<(), Failed> {
    in_namespace("real-node-lws-group", "lws-group", |ns| {
        install_lws_crd()?;
        kubectl_apply(ns, vec![leader_worker_set(ns, "vllm", 2)])?;
        let lws_uid = uid_of(ns, "leaderworkerset", "vllm")?;
        kubectl_apply(ns, vec![lws_service(ns), leader_set(ns, &lws_uid)])?;
        // The StatefulSet controller makes the leaders; LWS then makes
        // each group's worker set, owned by its leader Pod.
        let t0 = Instant::now();
        let leaders = loop {
            let uids: Result<Vec<String>, Failed> = (0..2)
                .map(|g| uid_of(ns, "pod", &format!("vllm-{g}")))
                .collect();
            match uids {
                Ok(u) => break u,
                Err(e) if t0.elapsed() > Duration::from_secs(60) => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        };
        kubectl_apply(
            ns,
            vec![
                worker_set(ns, 0, &leaders[0], "--ready-after=2"),
                worker_set(ns, 1, &leaders[1], "--never-ready"),
            ],
        )?;
        write_status(
            ns,
            "leaderworkerset",
            "vllm",
            json!({"replicas": 2, "updatedReplicas": 2,
                "hpaPodSelector": format!("{LWS_NAME}=vllm,leaderworkerset.sigs.k8s.io/worker-index=0"),
                "observedGeneration": 1}),
        )?;

        // Group 0 serves, group 1's worker never turns Ready: past the
        // group's grace it is named, and only one group of two serves.
        let mut problems = Vec::new();
        let (code, r) = until(ns, "lws/vllm", |r| {
            finding_ids(r).contains(&"group-not-ready".to_string()) && r["replicas"]["serving"] == 1
        })?;
        let ready_pods = r["pods"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["moments"]["ready"].is_string())
            .count();
        if code != 1
            || r["target"]["kind"] != "LeaderWorkerSet"
            || r["verdict"]["state"] != "degraded"
            || r["verdict"]["lead"] != "readiness-failing"
            || r["replicas"]["group_size"] != 2
            || ready_pods != 3
        {
            problems.push(format!(
                "lws/vllm: exit {code}, state {}, lead {}, {ready_pods} Pods Ready\n{}",
                r["verdict"]["state"],
                r["verdict"]["lead"],
                pretty(&r)
            ));
        }

        // Triage lists the LeaderWorkerSet, not its three StatefulSets.
        let (_, t) = triage(ns, None)?;
        if rows(&t) != ["LeaderWorkerSet/vllm"] {
            problems.push(format!("triage rows {:?}", rows(&t)));
        }

        // The evidence a user keeps, replayed: the same judgement.
        problems.extend(replayed_differs(ns, "lws/vllm", &(code, r.clone()))?);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    })
}

/// `mdiag snapshot TARGET` replayed with `trace --snapshot`: what differs
/// from the live judgement, if anything.
fn replayed_differs(ns: &str, target: &str, live: &(i32, Value)) -> Result<Option<String>, Failed> {
    let file = snapshot_file(ns, &[target], &viewer())?;
    let replay = super::real_jobs::trace(ns, target, Some(&file))?;
    let _ = std::fs::remove_file(file);
    Ok(same_as_live(&format!("{target} replayed"), live, &replay)
        .err()
        .map(|e| e.message().unwrap_or_default().to_string()))
}

pub(super) fn install_knative_crds() -> Result<(), Failed> {
    world().kubectl(&["apply", "-f", "fixtures/crd/knative-serving.yaml"])?;
    for crd in ["services", "configurations", "revisions"] {
        established(&format!("crd/{crd}.serving.knative.dev"))?;
    }
    Ok(())
}

const KN: &str = "serving.knative.dev";

/// The user's container of a Revision: the stand-in server, reading a
/// Secret that does not exist when `broken`.
fn knative_container(broken: bool) -> Value {
    let mut c = json!({"name": "server", "image": world().images.model_server("v1.4.0"),
        "args": ["--ready-after=2"],
        "ports": [{"containerPort": 8080, "name": "user-port"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
            "periodSeconds": 1, "failureThreshold": 1}});
    if broken {
        c["env"] = json!([{"name": "HF_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}]);
    }
    c
}

/// A Knative Service as a user applies it.
pub(super) fn knative_service(ns: &str, name: &str, broken: bool) -> Value {
    json!({"apiVersion": format!("{KN}/v1"), "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"spec": {"containers": [knative_container(broken)]}},
            "traffic": [{"latestRevision": true, "percent": 100}]}})
}

/// The Configuration Knative's Service reconciler creates, controlled by it.
fn knative_configuration(ns: &str, ksvc_uid: &str) -> Value {
    json!({"apiVersion": format!("{KN}/v1"), "kind": "Configuration",
        "metadata": {"name": "llama", "namespace": ns,
            "labels": {format!("{KN}/service"): "llama", format!("{KN}/serviceUID"): ksvc_uid},
            "ownerReferences": [{"apiVersion": format!("{KN}/v1"), "kind": "Service",
                "name": "llama", "uid": ksvc_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"template": {"spec": {"containers": [knative_container(false)]}}}})
}

/// The labels Knative copies from a Revision onto its Deployment and Pods.
fn revision_labels(generation: u32, ksvc_uid: &str, cfg_uid: &str) -> Value {
    json!({format!("{KN}/service"): "llama", format!("{KN}/serviceUID"): ksvc_uid,
        format!("{KN}/configuration"): "llama", format!("{KN}/configurationUID"): cfg_uid,
        format!("{KN}/configurationGeneration"): generation.to_string(),
        format!("{KN}/revision"): format!("llama-{generation:05}")})
}

/// Revision `llama-0000N`, controlled by the Configuration.
fn knative_revision(ns: &str, generation: u32, ksvc_uid: &str, cfg_uid: &str) -> Value {
    json!({"apiVersion": format!("{KN}/v1"), "kind": "Revision",
        "metadata": {"name": format!("llama-{generation:05}"), "namespace": ns,
            "labels": revision_labels(generation, ksvc_uid, cfg_uid),
            "ownerReferences": [{"apiVersion": format!("{KN}/v1"), "kind": "Configuration",
                "name": "llama", "uid": cfg_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"containers": [knative_container(generation > 1)]}})
}

/// A Revision's Deployment, its private Service (selecting its Pods) and
/// its public one (no selector: Knative writes its endpoints).
fn revision_objects(
    ns: &str,
    generation: u32,
    ksvc_uid: &str,
    cfg_uid: &str,
    rev_uid: &str,
) -> Vec<Value> {
    let (k, v) = REAL_NODE_LABEL;
    let rev = format!("llama-{generation:05}");
    let mut labels = revision_labels(generation, ksvc_uid, cfg_uid);
    labels[format!("{KN}/revisionUID")] = rev_uid.into();
    labels["app"] = rev.clone().into();
    let selector = json!({format!("{KN}/revisionUID"): rev_uid});
    let owner = json!([{"apiVersion": format!("{KN}/v1"), "kind": "Revision", "name": rev,
        "uid": rev_uid, "controller": true, "blockOwnerDeletion": true}]);
    let mut container = knative_container(generation > 1);
    let mut env = vec![json!({"name": "K_REVISION", "value": rev})];
    env.extend(container["env"].as_array().cloned().unwrap_or_default());
    container["env"] = Value::Array(env);
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": format!("{rev}-deployment"), "namespace": ns,
                "labels": labels.clone(), "ownerReferences": owner.clone()},
            "spec": {"replicas": 1, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 0,
                "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
                "selector": {"matchLabels": selector},
                "template": {"metadata": {"labels": labels.clone()}, "spec": {
                    "nodeSelector": {k: v},
                    "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
                    "terminationGracePeriodSeconds": 2,
                    "enableServiceLinks": false,
                    "containers": [container]}}}}),
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": format!("{rev}-private"), "namespace": ns,
                "labels": labels.clone(), "ownerReferences": owner.clone()},
            "spec": {"selector": selector,
                "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}),
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": rev, "namespace": ns, "labels": labels, "ownerReferences": owner},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8012}]}}),
    ]
}

fn knative_revisions() -> Result<(), Failed> {
    in_namespace("real-node-knative-revisions", "knative-revisions", |ns| {
        install_knative_crds()?;
        kubectl_apply(ns, vec![knative_service(ns, "llama", false)])?;
        let ksvc_uid = uid_of(ns, "ksvc", "llama")?;
        kubectl_apply(ns, vec![knative_configuration(ns, &ksvc_uid)])?;
        let cfg_uid = uid_of(ns, "configuration", "llama")?;
        kubectl_apply(ns, vec![knative_revision(ns, 1, &ksvc_uid, &cfg_uid)])?;
        let rev1 = uid_of(ns, "revision", "llama-00001")?;
        kubectl_apply(ns, revision_objects(ns, 1, &ksvc_uid, &cfg_uid, &rev1))?;
        let now = jiff::Timestamp::now().to_string();
        write_status(
            ns,
            "ksvc",
            "llama",
            json!({"observedGeneration": 1,
                "latestCreatedRevisionName": "llama-00001",
                "latestReadyRevisionName": "llama-00001",
                "traffic": [{"revisionName": "llama-00001", "latestRevision": true, "percent": 100}],
                "conditions": [
                    condition("ConfigurationsReady", "True", "", "", &now),
                    condition("Ready", "True", "", "", &now),
                    condition("RoutesReady", "True", "", "", &now)]}),
        )?;

        // Revision 1 serves, walked from the Knative Service through the
        // Deployment of its Revision.
        let mut problems = Vec::new();
        let (code, r) = until(ns, "ksvc/llama", |r| r["healthy"] == true)?;
        if code != 0 || r["target"]["kind"] != "KnativeService" || !loud(&r).is_empty() {
            problems.push(format!(
                "ksvc/llama healthy: exit {code}, target {}, findings {:?}",
                r["target"]["kind"],
                finding_ids(&r)
            ));
        }

        // A new template reading a Secret that does not exist: the
        // Configuration stamps Revision 2, whose Deployment's Pod the real
        // kubelet cannot start; the Route keeps Revision 1.
        kubectl_apply(ns, vec![knative_service(ns, "llama", true)])?;
        kubectl_apply(ns, vec![knative_revision(ns, 2, &ksvc_uid, &cfg_uid)])?;
        let rev2 = uid_of(ns, "revision", "llama-00002")?;
        kubectl_apply(ns, revision_objects(ns, 2, &ksvc_uid, &cfg_uid, &rev2))?;
        let now = jiff::Timestamp::now().to_string();
        write_status(
            ns,
            "ksvc",
            "llama",
            json!({"observedGeneration": 2,
                "latestCreatedRevisionName": "llama-00002",
                "latestReadyRevisionName": "llama-00001",
                "traffic": [{"revisionName": "llama-00001", "latestRevision": true, "percent": 100}],
                "conditions": [
                    condition("ConfigurationsReady", "Unknown", "", "", &now),
                    condition("Ready", "Unknown", "", "", &now),
                    condition("RoutesReady", "True", "", "", &now)]}),
        )?;
        let (code, r) = until(ns, "ksvc/llama", |r| {
            finding_ids(r).contains(&"container-config-error".to_string())
        })?;
        let old: Vec<&Value> = r["verdict"]["serving"]["revisions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["current"] == false)
            .collect();
        if code != 1
            || r["verdict"]["state"] != "degraded"
            || r["verdict"]["lead"] != "container-config-error"
            || finding_ids(&r).contains(&"endpoints-not-ready".to_string())
            || old.len() != 1
            || old[0]["ready_endpoints"] != 1
            || old[0]["desired"] != 1
        {
            problems.push(format!(
                "ksvc/llama revision 2: exit {code}, state {}, lead {}, findings {:?}\n{}",
                r["verdict"]["state"],
                r["verdict"]["lead"],
                finding_ids(&r),
                pretty(&r)
            ));
        }

        // Triage lists the Knative Service, not its Revisions' Deployments.
        let (_, t) = triage(ns, None)?;
        if rows(&t) != ["KnativeService/llama"] {
            problems.push(format!("triage rows {:?}", rows(&t)));
        }

        // The evidence a user keeps, replayed: the same judgement.
        problems.extend(replayed_differs(ns, "ksvc/llama", &(code, r.clone()))?);

        let t0 = Instant::now();
        let (code, g, err) = gate_on(&viewer(), ns, "ksvc/llama", &["--timeout", "60s"])?;
        let decided = g["gate"]["decided_by"].as_str().unwrap_or("");
        if code != 1 || decided != "container-config-error" {
            problems.push(format!(
                "gate ksvc/llama: exit {code}, decided by {decided:?}\n{err}\n{}",
                pretty(&g)
            ));
        }
        eprintln!(
            "  real-node-knative-revisions: gate ksvc/llama failed in {:.1} s on {decided}",
            t0.elapsed().as_secs_f64()
        );

        // KServe's Knative mode: an InferenceService that owns this Knative
        // Service as its predictor (found by owner UID and the `component`
        // label, not by KServe's NAME-predictor name) is traced through it,
        // to the same Pods and the same verdict.
        install_crd()?;
        kubectl_apply(
            ns,
            vec![
                json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                "metadata": {"name": "llama", "namespace": ns,
                    "annotations": {"serving.kserve.io/deploymentMode": "Serverless"}},
                "spec": {"predictor": {"containers": [knative_container(true)]}}}),
            ],
        )?;
        let isvc_uid = uid_of(ns, "isvc", "llama")?;
        let owned = json!({"metadata": {
            "labels": {"component": "predictor", "serving.kserve.io/inferenceservice": "llama"},
            "ownerReferences": [{"apiVersion": "serving.kserve.io/v1beta1",
                "kind": "InferenceService", "name": "llama", "uid": isvc_uid,
                "controller": true, "blockOwnerDeletion": true}]}});
        world().kubectl(&[
            "-n",
            ns,
            "patch",
            "ksvc",
            "llama",
            "--type",
            "merge",
            "-p",
            &owned.to_string(),
        ])?;
        let (isvc_code, i) = until(ns, "isvc/llama", |r| {
            finding_ids(r).contains(&"container-config-error".to_string())
        })?;
        let same = |r: &Value| {
            (
                r["verdict"]["state"].clone(),
                r["verdict"]["lead"].clone(),
                r["verdict"]["serving"]["revisions"].clone(),
            )
        };
        if isvc_code != code || i["target"]["kind"] != "InferenceService" || same(&i) != same(&r) {
            problems.push(format!(
                "isvc/llama over ksvc/llama: exit {isvc_code}, target {}\n{}",
                i["target"]["kind"],
                pretty(&i)
            ));
        }
        let (_, t) = triage(ns, None)?;
        if rows(&t) != ["InferenceService/llama"] {
            problems.push(format!(
                "triage rows with the InferenceService {:?}",
                rows(&t)
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    })
}
