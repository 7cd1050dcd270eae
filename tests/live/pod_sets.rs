//! A StatefulSet rollout on the simulated nodes, through the real
//! statefulset controller of kube-controller-manager: healthy, then an
//! update whose new revision crash-loops while the old ordinals serve.
//! `trace sts/NAME` live, from a kubectl dump and from `snapshot sts/NAME`,
//! and `gate sts/NAME`.

use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use serde_json::{Value, json};

use super::{finding_ids, mdiag, namespace, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "statefulset-rollout-healthy-then-crash-loop",
        rollout,
    )]
}

const STS: &str = "shard";
const IMAGE: &str = "registry.example.com/modeldock/shard-server";

fn objects(ns: &str, tag: &str, behavior: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": STS, "namespace": ns, "labels": {"app": STS}},
         "spec": {"clusterIP": "None", "selector": {"app": STS},
                  "ports": [{"name": "http", "port": 8000, "targetPort": "http"}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": STS, "namespace": ns, "labels": {"app": STS}},
         "spec": {
             "replicas": 3,
             "serviceName": STS,
             "podManagementPolicy": "Parallel",
             "selector": {"matchLabels": {"app": STS}},
             "template": {
                 "metadata": {"labels": {"app": STS},
                              "annotations": {"sim.mdiag.dev/behavior": behavior}},
                 "spec": {"containers": [{
                     "name": "server", "image": format!("{IMAGE}:{tag}"),
                     "ports": [{"name": "http", "containerPort": 8000}],
                     "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 2}}]}}}}
    ]})
}

fn apply(ns: &str, objects: &Value) -> Result<(), Failed> {
    let file = world().layout.dir().join(format!("{ns}-statefulset.json"));
    std::fs::write(&file, objects.to_string()).map_err(|e| e.to_string())?;
    world()
        .kubectl(&["apply", "-f", file.to_str().unwrap()])
        .map_err(|e| format!("{e:#}"))?;
    Ok(())
}

/// What the report must say: its state, its exit code, findings present
/// and absent.
struct Want<'a> {
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
        if report["target"]["kind"] != "StatefulSet" {
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

fn trace_live(ns: &str) -> Result<(i32, Value), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    mdiag(&[
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "trace",
        "sts/shard",
        "-o",
        "json",
    ])
}

fn until(ns: &str, want: &Want, within: Duration) -> Result<Value, Failed> {
    let t0 = Instant::now();
    loop {
        let (code, report) = trace_live(ns)?;
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
fn dump(ns: &str) -> Result<std::path::PathBuf, Failed> {
    let w = world();
    let k = |args: &[&str]| w.kubectl(args).map_err(|e| Failed::from(format!("{e:#}")));
    let parts = [
        k(&[
            "get",
            "statefulsets,controllerrevisions,pods,services,endpointslices,events",
            "-n",
            ns,
            "-o",
            "yaml",
        ])?,
        k(&["get", "nodes", "-o", "yaml"])?,
        k(&["get", "leases", "-n", "kube-system", "-o", "yaml"])?,
    ];
    let path = w.layout.dir().join(format!("{ns}-dump.yaml"));
    std::fs::write(&path, parts.join("---\n")).map_err(|e| e.to_string())?;
    Ok(path)
}

fn gate(ns: &str, extra: &[&str]) -> Result<(i32, Value), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    let mut args = vec![
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "gate",
        "sts/shard",
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

fn rollout() -> Result<(), Failed> {
    let ns = namespace("sts-rollout")?;
    apply(&ns, &objects(&ns, "2.3.1", "ready"))?;
    let healthy = Want {
        state: "serving",
        exit: 0,
        must: &[],
        must_not: &["crash-loop", "rollout-in-progress"],
    };
    let report = until(&ns, &healthy, Duration::from_secs(120))?;
    let steps: Vec<&str> = report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["step"].as_str())
        .collect();
    if steps
        != [
            "statefulset",
            "stored",
            "bound",
            "started",
            "ready",
            "serving",
        ]
    {
        return Err(format!("ladder {steps:?}").into());
    }
    if report["verdict"]["serving"]["ready_endpoints"] != 3 {
        return Err(format!("serving {}", report["verdict"]["serving"]).into());
    }
    // The gate on the healthy set converges at once.
    let (code, run) = gate(&ns, &["--timeout", "60s"])?;
    if code != 0 || run["outcome"] != "converged" {
        return Err(format!("healthy gate: exit {code}, {}", run["gate"]).into());
    }

    // The update: the controller replaces the highest ordinal first, and the
    // new revision crash-loops; ordinals 0 and 1 keep serving revision 1.
    let t_update = Instant::now();
    apply(&ns, &objects(&ns, "2.4.0", "crash-loop:1"))?;
    let stuck = Want {
        state: "degraded",
        exit: 1,
        must: &["crash-loop"],
        must_not: &["update-on-delete"],
    };
    let report = until(&ns, &stuck, Duration::from_secs(120))?;
    eprintln!(
        "  sts/shard: degraded with crash-loop {:.1}s after the update",
        t_update.elapsed().as_secs_f64()
    );
    let lead = &report["findings"][0];
    if lead["id"] != "crash-loop" || lead["subject"]["name"] != "shard-2" {
        return Err(format!("lead finding {lead}").into());
    }
    let old_serving: i64 = report["verdict"]["serving"]["revisions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["current"] == false)
        .filter_map(|r| r["ready_endpoints"].as_i64())
        .sum();
    if old_serving != 2 {
        return Err(format!("old revision serving {old_serving}: {}", report["verdict"]).into());
    }

    // The same verdict from a kubectl dump of the namespace.
    let t0 = Instant::now();
    loop {
        let file = dump(&ns)?;
        let (code, replay) = mdiag(&[
            "trace",
            "sts/shard",
            "-n",
            &ns,
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

    // `snapshot sts/shard` keeps the set, its revisions and its Pods: the
    // file replays the same verdict.
    let viewer = world().layout.viewer_kubeconfig();
    let file = super::snapshot_file(&ns, &["sts/shard"], &viewer)?;
    let (code, replay) = mdiag(&[
        "trace",
        "sts/shard",
        "--snapshot",
        file.to_str().unwrap(),
        "-o",
        "json",
    ])?;
    let problems = stuck.problems(code, &replay);
    if !problems.is_empty() {
        return Err(format!("{ns}: the mdiag snapshot says {}", problems.join("; ")).into());
    }
    let _ = std::fs::remove_file(file);

    // The gate fails on the crash loop of the update revision.
    let (code, run) = gate(&ns, &["--timeout", "90s", "--max-restarts", "1"])?;
    if code != 1 || run["outcome"] != "failed" || run["gate"]["decided_by"] != "crash-loop" {
        return Err(format!("stuck gate: exit {code}, {}", run["gate"]).into());
    }
    Ok(())
}
