//! The real node itself: it is Ready with what a kubelet reports, runs a
//! Pod from the local registry that passes an HTTP readiness probe, serves
//! its logs (and the previous container's) through the apiserver, and can
//! be stopped and started again twice leaving nothing behind: no process,
//! mount, network namespace, link or cgroup (inside the cluster's
//! namespaces; the test binary checks the host once they are gone).

use libtest_mimic::{Failed, Trial};
use mdiag_harness::cluster;
use mdiag_harness::node::{self, NODE_KEY, NODE_NAME, NODE_ROLE};
use serde_json::Value;

use super::world;

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("real-node-pod-logs-and-restarts", real_node)]
}

const NS: &str = "live-real-node";

fn kubectl(args: &[&str]) -> Result<String, Failed> {
    world().kubectl(args).map_err(|e| format!("{e:#}").into())
}

/// Applies YAML with the admin kubeconfig.
fn apply(yaml: &str) -> Result<(), Failed> {
    let path = world()
        .layout
        .dir()
        .join(format!("real-node-{}.yaml", std::process::id()));
    std::fs::write(&path, yaml).map_err(|e| e.to_string())?;
    kubectl(&["apply", "-f", path.to_str().unwrap()])?;
    Ok(())
}

/// The Node as the kubelet wrote it: Ready, real runtime and kubelet
/// versions, capacity, no simulator annotation, our label and taint; with
/// `pulled`, the images it holds (none before the first Pod).
fn check_node(pulled: bool) -> Result<(), Failed> {
    let node: Value = serde_json::from_str(&kubectl(&["get", "node", NODE_NAME, "-o", "json"])?)
        .map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    let ready = node["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .map(|c| c["status"].clone());
    if ready != Some(Value::from("True")) {
        problems.push(format!("Ready is {ready:?}"));
    }
    let info = &node["status"]["nodeInfo"];
    if !info["containerRuntimeVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("containerd://1."))
    {
        problems.push(format!(
            "containerRuntimeVersion {}",
            info["containerRuntimeVersion"]
        ));
    }
    if info["kubeletVersion"] != "v1.35.8" {
        problems.push(format!("kubeletVersion {}", info["kubeletVersion"]));
    }
    for r in ["cpu", "memory", "pods"] {
        if node["status"]["capacity"][r].is_null() {
            problems.push(format!("no capacity {r}"));
        }
    }
    let images: Vec<String> = node["status"]["images"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["names"].as_array().cloned().unwrap_or_default())
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    if pulled {
        let w = world();
        for want in [w.images.pause.as_str(), w.images.model_server("v1.4.0")] {
            if !images.iter().any(|i| i == want) {
                problems.push(format!("image {want} not reported (images: {images:?})"));
            }
        }
    }
    let addr = node["status"]["addresses"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["type"] == "InternalIP"))
        .map(|a| a["address"].clone());
    if addr != Some(Value::from(node::ns::NODE_IP)) {
        problems.push(format!("InternalIP {addr:?}"));
    }
    if let Some(ann) = node["metadata"]["annotations"].as_object()
        && let Some(k) = ann.keys().find(|k| k.contains("sim.mdiag.dev"))
    {
        problems.push(format!("simulator annotation {k}"));
    }
    if node["metadata"]["labels"][NODE_KEY] != NODE_ROLE {
        problems.push(format!(
            "label {NODE_KEY} is {}",
            node["metadata"]["labels"][NODE_KEY]
        ));
    }
    let tainted = node["spec"]["taints"].as_array().is_some_and(|t| {
        t.iter()
            .any(|t| t["key"] == NODE_KEY && t["value"] == NODE_ROLE && t["effect"] == "NoSchedule")
    });
    if !tainted {
        problems.push(format!("no taint {NODE_KEY}={NODE_ROLE}:NoSchedule"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("node {NODE_NAME}: {}", problems.join("; ")).into())
    }
}

/// A Pod pinned to the real node: its first container run exits 1 after a
/// line, the second serves /healthz with busybox httpd (the readiness probe).
fn pod_yaml(image: &str) -> String {
    let pin = node::pin_to_real_node();
    format!(
        r#"apiVersion: v1
kind: Pod
metadata: {{name: probe-and-logs, namespace: {NS}}}
spec:
  nodeSelector: {selector}
  tolerations: {tolerations}
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: {image}
    command: ["/bin/sh", "-c"]
    args:
    - |
      if [ ! -e /state/ran ]; then
        touch /state/ran
        echo "first run: exiting 1"
        exit 1
      fi
      echo "second run: serving"
      mkdir -p /tmp/www/healthz && echo ok > /tmp/www/healthz/index.html
      exec httpd -f -p 8080 -h /tmp/www
    readinessProbe:
      httpGet: {{path: /healthz/, port: 8080}}
      periodSeconds: 1
    volumeMounts: [{{name: state, mountPath: /state}}]
  volumes: [{{name: state, emptyDir: {{}}}}]
"#,
        selector = pin["nodeSelector"],
        tolerations = pin["tolerations"],
    )
}

/// `check_node(true)` once the kubelet has reported its images (it writes
/// them with its node status, every 10 s).
fn check_node_pulled() -> Result<(), Failed> {
    let t = std::time::Instant::now();
    loop {
        match check_node(true) {
            Ok(()) => return Ok(()),
            Err(e) if t.elapsed() > std::time::Duration::from_secs(40) => return Err(e),
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    }
}

fn wait_ready_pod() -> Result<(), Failed> {
    kubectl(&[
        "wait",
        "-n",
        NS,
        "--for=condition=Ready",
        "pod/probe-and-logs",
        "--timeout=120s",
    ])
    .map_err(|e| {
        let describe =
            kubectl(&["describe", "pod", "-n", NS, "probe-and-logs"]).unwrap_or_default();
        format!("{}\n{describe}", e.message().unwrap_or_default()).into()
    })
    .map(|_| ())
}

fn real_node() -> Result<(), Failed> {
    let w = world();
    check_node(false)?;
    let _ = kubectl(&["create", "namespace", NS]);
    apply(&pod_yaml(w.images.model_server("v1.4.0")))?;
    wait_ready_pod()?;
    check_node_pulled()?;
    let pod: Value = serde_json::from_str(&kubectl(&[
        "get",
        "pod",
        "-n",
        NS,
        "probe-and-logs",
        "-o",
        "json",
    ])?)
    .map_err(|e| e.to_string())?;
    if pod["spec"]["nodeName"] != NODE_NAME {
        return Err(format!("the Pod ran on {}", pod["spec"]["nodeName"]).into());
    }
    let status = &pod["status"]["containerStatuses"][0];
    if status["restartCount"].as_i64() != Some(1)
        || status["lastState"]["terminated"]["exitCode"] != 1
    {
        return Err(format!("container status {status}").into());
    }
    // Both logs come from the real kubelet through the apiserver.
    let now = kubectl(&["logs", "-n", NS, "probe-and-logs"])?;
    let previous = kubectl(&["logs", "-n", NS, "probe-and-logs", "--previous"])?;
    if now.trim() != "second run: serving" || previous.trim() != "first run: exiting 1" {
        return Err(format!("logs: {now:?}, --previous: {previous:?}").into());
    }

    // Stop and start the node twice; every stop must leave nothing.
    for round in 1..=2 {
        cluster::stop_node(&w.layout).map_err(|e| format!("round {round}: stopping: {e:#}"))?;
        let left = cluster::node_leftovers(&w.layout).map_err(|e| format!("{e:#}"))?;
        if !left.is_empty() {
            return Err(
                format!("round {round}: the stopped node left: {}", left.join("; ")).into(),
            );
        }
        cluster::start_node_again(&w.layout)
            .map_err(|e| format!("round {round}: starting: {e:#}"))?;
        check_node(false)
            .map_err(|e| format!("round {round}: {}", e.message().unwrap_or_default()))?;
    }
    // The new kubelet runs the Pod again from nothing.
    wait_ready_pod()?;
    check_node_pulled()?;
    kubectl(&["delete", "namespace", NS, "--wait=false"])?;
    Ok(())
}
