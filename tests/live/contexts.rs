//! `triage --context one,two` over two real control planes: the live
//! ring's cluster, and a second one started for this trial (etcd,
//! kube-apiserver, kube-controller-manager, kube-scheduler of their own,
//! no node). Both are read with their view-only identities through one
//! kubeconfig of two contexts. Then the second cluster's apiserver is
//! stopped, halfway through the trial, and the same triage lists it as a
//! gap: never as a cluster with nothing wrong.

use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::cluster::{self, Layout};
use serde_json::{Value, json};

use super::{HEALTHY, apply, namespace, spec, until_live, world};

const NAMESPACE: &str = "contexts";

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("triage_two_clusters_one_stopped", || {
        let dir = world().layout.dir().join("second-cluster");
        let second = Layout::at(dir).map_err(|e| format!("{e:#}"))?;
        cluster::up(&second).map_err(|e| format!("the second cluster: {e:#}"))?;
        let result = two_clusters(&second);
        if let Err(e) = cluster::down(&second) {
            eprintln!("stopping the second cluster: {e:#}");
        }
        result
    })]
}

fn two_clusters(second: &Layout) -> Result<(), Failed> {
    // The first cluster: a ModelService that serves.
    let ns = namespace(NAMESPACE)?;
    apply(&ns, &spec("ready"))?;
    until_live(&ns, HEALTHY)?;
    // The second: a Deployment no node can take (it has none).
    let kubectl =
        |args: &[&str]| cluster::admin_kubectl(second, args).map_err(|e| format!("{e:#}"));
    kubectl(&["create", "namespace", &ns])?;
    kubectl(&[
        "-n",
        &ns,
        "create",
        "deployment",
        "web",
        "--image=registry.example.com/web:1",
        "--replicas=2",
    ])?;
    let kubeconfig = world().layout.dir().join("two-contexts.kubeconfig");
    cluster::write_contexts(
        &kubeconfig,
        &[("one", &world().layout), ("two", second)],
        true,
    )
    .map_err(|e| format!("{e:#}"))?;
    let kc = kubeconfig.to_str().unwrap();

    // Both clusters up: one row each, the one failing ranked first.
    let t0 = Instant::now();
    let (code, report) = loop {
        let (code, report) = triage(kc, &ns)?;
        let failing = report["items"][0]["verdict"]["lead"] == "pod-unschedulable";
        if failing || t0.elapsed() > Duration::from_secs(60) {
            break (code, report);
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let rows = rows_of(&report);
    if code != 1
        || rows
            != [
                (
                    "two".to_string(),
                    "web".to_string(),
                    Some("pod-unschedulable".to_string()),
                ),
                ("one".into(), "chart-demo".into(), None),
            ]
    {
        return Err(format!("both up: exit {code}, rows {rows:?}\n{report:#}").into());
    }
    let read: Vec<(&str, bool)> = report["contexts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["context"].as_str().unwrap_or(""), c["read"] == true))
        .collect();
    if read != [("one", true), ("two", true)] {
        return Err(format!("both up, the contexts read: {}", report["contexts"]).into());
    }
    // The next command reads the failing row's cluster.
    let text = table(kc, &ns)?;
    if !text.contains(&format!(
        "next: mdiag trace deploy/web -n {ns} --context two"
    )) {
        return Err(format!("the next command does not name context two:\n{text}").into());
    }

    // The second cluster stops: it is a gap, and the first one's healthy
    // row does not make the answer healthy (exit 4, not 0).
    cluster::stop_component(second, "kube-apiserver").map_err(|e| format!("{e:#}"))?;
    let (code, report) = triage(kc, &ns)?;
    let rows = rows_of(&report);
    let contexts = &report["contexts"];
    let gap = report["gaps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|g| g["resource"] == "*")
        .cloned()
        .unwrap_or_default();
    if code != 4
        || rows != [("one".to_string(), "chart-demo".to_string(), None)]
        || contexts[0]["read"] != true
        || contexts[1]["read"] != false
        || gap["resource"] != "*"
        || gap["contexts"] != json!(["two"])
    {
        return Err(format!("two stopped: exit {code}, rows {rows:?}\n{report:#}").into());
    }
    let text = table(kc, &ns)?;
    if !text.starts_with(&format!("1 workload in {ns} in 1 of 2 contexts: 1 healthy"))
        || !text.contains("nothing could be read from context two")
        || text.contains("are healthy")
    {
        return Err(format!("two stopped, the table says:\n{text}").into());
    }
    let _ = std::fs::remove_file(&kubeconfig);
    Ok(())
}

/// (context, name, lead finding) of each row, in the report's order.
fn rows_of(report: &Value) -> Vec<(String, String, Option<String>)> {
    report["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            (
                i["target"]["context"].as_str().unwrap_or("").to_string(),
                i["target"]["name"].as_str().unwrap_or("").to_string(),
                i["verdict"]["lead"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn run(kubeconfig: &str, ns: &str, output: &[&str]) -> Result<(i32, String), Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args([
            "triage",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "one,two",
            "-n",
            ns,
        ])
        .args(["--request-timeout", "10s", "--width", "200"])
        .args(output)
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| format!("running mdiag: {e}"))?;
    let code = out.status.code().unwrap_or(-1);
    if !out.stderr.is_empty() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Ok((code, String::from_utf8_lossy(&out.stdout).into_owned()))
}

fn triage(kubeconfig: &str, ns: &str) -> Result<(i32, Value), Failed> {
    let (code, out) = run(kubeconfig, ns, &["-o", "json"])?;
    let report = serde_json::from_str(&out)
        .map_err(|e| format!("triage exited {code} without a report ({e}): {out}"))?;
    Ok((code, report))
}

fn table(kubeconfig: &str, ns: &str) -> Result<String, Failed> {
    Ok(run(kubeconfig, ns, &[])?.1)
}
