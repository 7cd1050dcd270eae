//! Evidence redacted by default, on what the real kubelet keeps: the
//! model-server stand-in on the real node logs credential-shaped (fake)
//! lines (`--log-secrets`), carries a password in a plain-named env value
//! and a Bearer token in an annotation. `mdiag snapshot` writes none of
//! them, keeps the lines around them, and lists where it redacted;
//! `--no-default-redaction` keeps the log's shapes. tests/suite/redaction.rs
//! covers the full corpus without a cluster.

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::json;

use super::{mdiag, namespace, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "safety-real-node-snapshot-redacts-credentials-by-default",
        redacted,
    )]
}

/// What `--log-secrets` and the objects below hold; none may be written.
const SECRETS: &[&str] = &[
    "AKIAMDIAGFAKE0000001",
    "mdiagFakeSecretAccessKey0000000000000000",
    "hf_mdiagFakeToken0000000000000000000000",
    "eyJzdWIiOiJtZGlhZy1mYWtlIn0",
    "mdiag-fake-password",
    "fakepw-in-env",
    "annotation-fake-token-0000",
];

fn deployment(ns: &str) -> serde_json::Value {
    let (k, v) = REAL_NODE_LABEL;
    let image = world().images.model_server("v1.4.0");
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "leaky", "namespace": ns,
                  "annotations": {"example.com/upstream": "Authorization: Bearer annotation-fake-token-0000"}},
     "spec": {
         "replicas": 1,
         "selector": {"matchLabels": {"app": "leaky"}},
         "template": {
             "metadata": {"labels": {"app": "leaky"}},
             "spec": {
                 "nodeSelector": {k: v},
                 "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
                 "terminationGracePeriodSeconds": 5,
                 "containers": [{
                     "name": "server", "image": image, "args": ["--log-secrets"],
                     "env": [{"name": "DATABASE_URL", "value": "postgres://app:fakepw-in-env@db/models"}],
                     "ports": [{"name": "http", "containerPort": 8080}],
                     "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1}}]}}}})
}

fn snapshot(ns: &str, extra: &[&str]) -> Result<String, Failed> {
    let file = world()
        .layout
        .dir()
        .join(format!("{ns}-{}.yaml", extra.len()));
    let viewer = world().layout.viewer_kubeconfig();
    let mut args = vec![
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "snapshot",
        "deploy/leaky",
        "--output-file",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(&args)
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("mdiag snapshot: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(file);
    Ok(text)
}

fn redacted() -> Result<(), Failed> {
    let w = world();
    let ns = namespace("real-redaction")?;
    let file = w.layout.dir().join(format!("{ns}-leaky.json"));
    std::fs::write(&file, deployment(&ns).to_string()).map_err(|e| e.to_string())?;
    w.kubectl(&["apply", "-f", file.to_str().unwrap()])?;

    // Until the server has logged its lines and is serving.
    let t0 = Instant::now();
    loop {
        let (code, report) = mdiag(&[
            "--kubeconfig",
            w.layout.viewer_kubeconfig().to_str().unwrap(),
            "-n",
            &ns,
            "trace",
            "deploy/leaky",
            "-o",
            "json",
        ])?;
        if code == 0 && report["verdict"]["state"] == "serving" {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            return Err(format!("never serving: {}", report["verdict"]).into());
        }
        std::thread::sleep(Duration::from_secs(1));
    }

    let text = snapshot(&ns, &[])?;
    for secret in SECRETS {
        if text.contains(secret) {
            return Err(format!("{secret} survived into the snapshot").into());
        }
    }
    for kept in [
        "<redacted:aws-access-key-id>",
        "Authorization: Bearer <redacted:bearer>",
        "postgres://modeldock:<redacted:url-password>@db.modeldock.svc",
        "loading model",
        "example.com/upstream",
    ] {
        if !text.contains(kept) {
            return Err(format!("{kept:?} is not in the snapshot").into());
        }
    }
    if !text.contains("redactions:") || !text.contains("pods/log/") {
        return Err("the snapshot does not list where it redacted the log".into());
    }

    // Turned off, the log's shapes are kept (names that look like secrets
    // are still replaced).
    let plain = snapshot(&ns, &["--no-default-redaction"])?;
    if !plain.contains("AKIAMDIAGFAKE0000001") || !plain.contains("mdiag-fake-password") {
        return Err("--no-default-redaction still redacted the log".into());
    }
    let _ = w.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    Ok(())
}
