//! StatefulSet and DaemonSet rollouts on the real node, through the real
//! statefulset and daemonset controllers of kube-controller-manager and the
//! real kubelet: healthy, then an update whose new revision crash-loops
//! (the model-server stand-in's `--crash=1`) while the old revision keeps
//! serving. Each is judged by `trace KIND/NAME` live, from a kubectl dump
//! and from `snapshot KIND/NAME`, and by `gate KIND/NAME`.

use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::{Value, json};

use super::{finding_ids, mdiag, namespace, read_snapshot_text, snapshot_file, world};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("real-node-statefulset-healthy-then-crash-loop", || {
            rollout(&STATEFUL_SET)
        }),
        Trial::test("real-node-daemonset-healthy-then-crash-loop", || {
            rollout(&DAEMON_SET)
        }),
    ]
}

/// What differs between the two kinds of set in the trial.
struct PodSet {
    /// `kind` as the report's target names it.
    kind: &'static str,
    /// The target as typed: `sts/shard`.
    target: &'static str,
    name: &'static str,
    /// The first step of the ladder, the set's own.
    first_step: &'static str,
    /// Pods of the first revision (and so ready endpoints when healthy).
    replicas: i64,
    /// Old-revision Pods still serving while the update crash-loops: the
    /// StatefulSet replaces its highest ordinal first and waits on it; the
    /// DaemonSet surges a new Pod beside the old one on the node.
    old_serving: i64,
    /// The plural names of a kubectl dump of the namespace.
    dump_kinds: &'static str,
    /// The set's object, its Pods running `image` with `args`.
    object: fn(ns: &str, image: &str, args: &[&str]) -> Value,
}

const STATEFUL_SET: PodSet = PodSet {
    kind: "StatefulSet",
    target: "sts/shard",
    name: "shard",
    first_step: "statefulset",
    replicas: 3,
    old_serving: 2,
    dump_kinds: "statefulsets,controllerrevisions,pods,services,endpointslices,events",
    object: |ns, image, args| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": "shard", "namespace": ns, "labels": {"app": "shard"}},
         "spec": {
             "replicas": 3,
             "serviceName": "shard",
             "podManagementPolicy": "Parallel",
             "selector": {"matchLabels": {"app": "shard"}},
             "template": pod_template("shard", image, args)}})
    },
};

const DAEMON_SET: PodSet = PodSet {
    kind: "DaemonSet",
    target: "ds/agent",
    name: "agent",
    first_step: "daemonset",
    replicas: 1,
    old_serving: 1,
    dump_kinds: "daemonsets,controllerrevisions,pods,services,endpointslices,events",
    object: |ns, image, args| {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "agent", "namespace": ns, "labels": {"app": "agent"}},
         "spec": {
             "selector": {"matchLabels": {"app": "agent"}},
             "updateStrategy": {"type": "RollingUpdate",
                                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
             "template": pod_template("agent", image, args)}})
    },
};

/// The model-server stand-in pinned to the real node, probed every second
/// on `/healthz` (503 while loading).
fn pod_template(app: &str, image: &str, args: &[&str]) -> Value {
    let (k, v) = REAL_NODE_LABEL;
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {
            "nodeSelector": {k: v},
            "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
            "terminationGracePeriodSeconds": 5,
            "containers": [{
                "name": "server", "image": image, "args": args,
                "ports": [{"name": "http", "containerPort": 8080}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                                   "periodSeconds": 1, "failureThreshold": 3}}]}})
}

/// The set and its headless Service.
fn objects(set: &PodSet, ns: &str, tag: &str, args: &[&str]) -> Value {
    let image = world().images.model_server(tag);
    json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": set.name, "namespace": ns, "labels": {"app": set.name}},
         "spec": {"clusterIP": "None", "selector": {"app": set.name},
                  "ports": [{"name": "http", "port": 8080, "targetPort": "http"}]}},
        (set.object)(ns, image, args),
    ]})
}

fn apply(ns: &str, objects: &Value) -> Result<(), Failed> {
    let file = world().layout.dir().join(format!("{ns}-objects.json"));
    std::fs::write(&file, objects.to_string()).map_err(|e| e.to_string())?;
    world()
        .kubectl(&["apply", "-f", file.to_str().unwrap()])
        .map_err(|e| format!("{e:#}"))?;
    Ok(())
}

/// What the report must say: its state, its exit code, findings present
/// and absent.
struct Want<'a> {
    kind: &'a str,
    state: &'a str,
    exit: i32,
    must: &'a [&'a str],
    must_not: &'a [&'a str],
}

impl Want<'_> {
    fn problems(&self, code: i32, report: &Value) -> Vec<String> {
        let ids = finding_ids(report);
        let mut out = Vec::new();
        if report["verdict"]["state"] != self.state {
            out.push(format!("state {}", report["verdict"]["state"]));
        }
        if code != self.exit {
            out.push(format!("exit {code}"));
        }
        if report["target"]["kind"] != self.kind {
            out.push(format!("target {}", report["target"]));
        }
        for id in self.must {
            if !ids.iter().any(|i| i == id) {
                out.push(format!("{id} missing"));
            }
        }
        for id in self.must_not {
            if ids.iter().any(|i| i == id) {
                out.push(format!("{id} present"));
            }
        }
        out
    }
}

fn trace_live(set: &PodSet, ns: &str) -> Result<(i32, Value), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    mdiag(&[
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "trace",
        set.target,
        "-o",
        "json",
    ])
}

fn until(set: &PodSet, ns: &str, want: &Want, within: Duration) -> Result<Value, Failed> {
    let t0 = Instant::now();
    loop {
        let (code, report) = trace_live(set, ns)?;
        let problems = want.problems(code, &report);
        if problems.is_empty() {
            return Ok(report);
        }
        if t0.elapsed() > within {
            return Err(format!(
                "{ns}: after {within:?}: {}\n{}",
                problems.join("; "),
                serde_json::to_string_pretty(&report).unwrap_or_default()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(750));
    }
}

/// A kubectl dump of the namespace as a user would take it for a set.
fn dump(set: &PodSet, ns: &str) -> Result<std::path::PathBuf, Failed> {
    let w = world();
    let k = |args: &[&str]| w.kubectl(args).map_err(|e| Failed::from(format!("{e:#}")));
    let parts = [
        k(&["get", set.dump_kinds, "-n", ns, "-o", "yaml"])?,
        k(&["get", "nodes", "-o", "yaml"])?,
        k(&["get", "leases", "-n", "kube-system", "-o", "yaml"])?,
    ];
    let path = w.layout.dir().join(format!("{ns}-dump.yaml"));
    std::fs::write(&path, parts.join("---\n")).map_err(|e| e.to_string())?;
    Ok(path)
}

fn gate(set: &PodSet, ns: &str, extra: &[&str]) -> Result<(i32, Value), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    let mut args = vec![
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "gate",
        set.target,
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(&args)
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| format!("running mdiag gate: {e}"))?;
    let code = out.status.code().unwrap_or(-1);
    let report = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "mdiag gate exited {code} without a report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((code, report))
}

fn rollout(set: &PodSet) -> Result<(), Failed> {
    let ns = namespace(&format!("real-{}", set.name))?;
    let result = healthy_then_crash_loop(set, &ns);
    let _ = world().kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    if let Err(e) = &result {
        eprintln!("  {}: {}", set.target, e.message().unwrap_or_default());
    }
    result
}

fn healthy_then_crash_loop(set: &PodSet, ns: &str) -> Result<(), Failed> {
    apply(ns, &objects(set, ns, "v1.4.0", &[]))?;
    let healthy = Want {
        kind: set.kind,
        state: "serving",
        exit: 0,
        must: &[],
        must_not: &["crash-loop", "rollout-in-progress"],
    };
    let report = until(set, ns, &healthy, Duration::from_secs(120))?;
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["step"].as_str())
        .collect();
    if steps
        != [
            set.first_step,
            "stored",
            "bound",
            "started",
            "ready",
            "serving",
        ]
    {
        return Err(format!("ladder {steps:?}").into());
    }
    if report["verdict"]["serving"]["ready_endpoints"] != set.replicas {
        return Err(format!("serving {}", report["verdict"]["serving"]).into());
    }
    // The gate on the healthy set converges at once.
    let (code, run) = gate(set, ns, &["--timeout", "60s"])?;
    if code != 0 || run["outcome"] != "converged" {
        return Err(format!("healthy gate: exit {code}, {}", run["gate"]).into());
    }
    let old_pods = pod_names(ns)?;

    // The update: its Pods log a FATAL line and exit 1; the old revision
    // keeps serving.
    let t_update = Instant::now();
    apply(ns, &objects(set, ns, "v1.5.0", &["--crash=1"]))?;
    let stuck = Want {
        kind: set.kind,
        state: "degraded",
        exit: 1,
        must: &["crash-loop"],
        must_not: &["update-on-delete"],
    };
    let report = until(set, ns, &stuck, Duration::from_secs(120))?;
    eprintln!(
        "  {}: degraded with crash-loop {:.1} s after the update",
        set.target,
        t_update.elapsed().as_secs_f64()
    );
    let lead = &report["findings"][0];
    let lead_pod = lead["subject"]["name"].as_str().unwrap_or_default();
    let new_pod = match set.kind {
        // The controller replaces the highest ordinal first.
        "StatefulSet" => lead_pod == "shard-2",
        _ => lead_pod.starts_with("agent-") && !old_pods.iter().any(|p| p == lead_pod),
    };
    if lead["id"] != "crash-loop" || !new_pod {
        return Err(format!("lead finding {lead} (old Pods {old_pods:?})").into());
    }
    let old_serving: i64 = report["verdict"]["serving"]["revisions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["current"] == false)
        .filter_map(|r| r["ready_endpoints"].as_i64())
        .sum();
    if old_serving != set.old_serving {
        return Err(format!("old revision serving {old_serving}: {}", report["verdict"]).into());
    }

    // The same verdict from a kubectl dump of the namespace.
    let t0 = Instant::now();
    loop {
        let file = dump(set, ns)?;
        let (code, replay) = mdiag(&[
            "trace",
            set.target,
            "-n",
            ns,
            "--snapshot",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])?;
        let problems = stuck.problems(code, &replay);
        if problems.is_empty() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            return Err(format!("{ns}: the kubectl dump says {}", problems.join("; ")).into());
        }
        std::thread::sleep(Duration::from_secs(2));
    }

    // `snapshot KIND/NAME` keeps the set, its revisions, its Pods and the
    // crashed run's log as the real kubelet kept it: the file replays the
    // same verdict.
    let viewer = world().layout.viewer_kubeconfig();
    let file = snapshot_file(ns, &[set.target], &viewer)?;
    let (code, replay) = mdiag(&[
        "trace",
        set.target,
        "--snapshot",
        file.to_str().unwrap(),
        "-o",
        "json",
    ])?;
    let problems = stuck.problems(code, &replay);
    if !problems.is_empty() {
        return Err(format!("{ns}: the mdiag snapshot says {}", problems.join("; ")).into());
    }
    let text = read_snapshot_text(&file)?;
    if !text.contains("FATAL missing env MODEL_PATH") {
        return Err(format!("{ns}: the snapshot holds no log of the crashed run").into());
    }
    let _ = std::fs::remove_file(file);

    // The gate, default policy: the loop repeats itself exactly, so its
    // second crash is final.
    let t_gate = Instant::now();
    let (code, run) = gate(set, ns, &["--timeout", "120s"])?;
    if code != 1 || run["outcome"] != "failed" || run["gate"]["decided_by"] != "crash-loop" {
        return Err(format!("stuck gate: exit {code}, {}", run["gate"]).into());
    }
    eprintln!(
        "  {}: the gate failed on crash-loop in {:.1} s ({:.1} s after the update)",
        set.target,
        t_gate.elapsed().as_secs_f64(),
        t_update.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The namespace's Pods now.
fn pod_names(ns: &str) -> Result<Vec<String>, Failed> {
    let out = world()
        .kubectl(&["get", "pods", "-n", ns, "-o", "name"])
        .map_err(|e| format!("{e:#}"))?;
    Ok(out
        .lines()
        .filter_map(|l| l.strip_prefix("pod/"))
        .map(str::to_owned)
        .collect())
}
