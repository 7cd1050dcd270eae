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

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::{Value, json};

use super::gate::{gate_on, viewer};
use super::real_jobs::{in_namespace, kubectl_apply, loud, pretty, rows, same_as_live, triage};
use super::real_probes::until;
use super::{finding_ids, snapshot_file, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("real-node-kserve-standard", kserve_standard)]
}

pub(super) fn install_crd() -> Result<(), Failed> {
    let w = world();
    w.kubectl(&["apply", "-f", "fixtures/crd/inferenceservice.yaml"])?;
    w.kubectl(&[
        "wait",
        "--for=condition=Established",
        "crd/inferenceservices.serving.kserve.io",
        "--timeout=60s",
    ])?;
    Ok(())
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

/// Writes the status as KServe's controller does, through the status
/// subresource.
fn set_status(ns: &str, name: &str, status: Value) -> Result<(), Failed> {
    let patch = json!({"status": status}).to_string();
    world().kubectl(&[
        "-n",
        ns,
        "patch",
        "inferenceservice",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ])?;
    Ok(())
}

fn uid_of(ns: &str, name: &str) -> Result<String, Failed> {
    let out = world().kubectl(&["-n", ns, "get", "inferenceservice", name, "-o", "json"])?;
    let v: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(v["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string())
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
        let uid = uid_of(ns, "llama")?;
        kubectl_apply(ns, predictor(ns, "llama", &uid))?;
        // KServe's answer for a format no runtime supports: no Deployment.
        let now = jiff::Timestamp::now().to_string();
        let why = "No runtime found to support specified framework/version";
        set_status(
            ns,
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
        set_status(
            ns,
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
        let file = snapshot_file(ns, &["isvc/mistral"], &viewer())?;
        let replay = super::real_jobs::trace(ns, "isvc/mistral", Some(&file))?;
        let _ = std::fs::remove_file(file);
        if let Err(e) = same_as_live("isvc/mistral replayed", &(code, r.clone()), &replay) {
            problems.push(e.message().unwrap_or_default().to_string());
        }
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
