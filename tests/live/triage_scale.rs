//! Live trials of `mdiag triage` on a loaded cluster: a small share of what
//! `cargo xtask cluster load` writes at 10,000 Pods (200 Pods in 20
//! ModelServices over 4 namespaces), triaged with the view-only kubeconfig,
//! then with an identity that may read three of the four namespaces only.
//!
//! The load writes ReplicaSets and Pods itself, so kube-controller-manager
//! is stopped while it is in the cluster and started again once the load's
//! namespaces are deleted (its namespace controller then empties them).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use libtest_mimic::{Failed, Trial};
use mdiag_harness::cluster;
use mdiag_harness::load::{self, LOAD_LABEL, LoadSpec, PlannedWorkload};
use serde_json::Value;

use super::world;

const PREFIX: &str = "live-scale";
const KCM: &str = "kube-controller-manager";

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("triage_scale", || {
        let w = world();
        cluster::stop_component(&w.layout, KCM).map_err(|e| format!("{e:#}"))?;
        let result = loaded_share();
        let _ = w.kubectl(&[
            "delete",
            "namespaces,nodes",
            "-l",
            LOAD_LABEL,
            "--wait=false",
        ]);
        let _ = w.kubectl(&["delete", "clusterrole,clusterrolebinding", "-l", LOAD_LABEL]);
        cluster::start_component(&w.layout, KCM).map_err(|e| format!("{e:#}"))?;
        result
    })]
}

fn loaded_share() -> Result<(), Failed> {
    let w = world();
    let spec = LoadSpec {
        pods: 200,
        workloads: 20,
        namespaces: 4,
        prefix: PREFIX.into(),
    };
    let report = w
        .block_on(load::load(&w.admin, &spec))
        .map_err(|e| format!("loading: {e:#}"))?;
    assert_eq!(report.pods, 200);

    // Everything readable: one row per workload, led by its state's finding.
    let viewer = w.layout.viewer_kubeconfig();
    let items = triage_items(&viewer)?;
    check_rows(&report.workloads, &items, |_| true)?;

    // Three namespaces of four: the fourth is a gap, the rest is triaged.
    let hidden = spec.namespace(3);
    let partial = partial_kubeconfig(&spec, &hidden)?;
    let items = triage_items(&partial)?;
    check_rows(&report.workloads, &items, |wl| wl.namespace != hidden)?;
    if let Some(row) = items
        .iter()
        .find(|i| i["target"]["namespace"].as_str() == Some(hidden.as_str()))
    {
        return Err(format!("a row from the unreadable namespace {hidden}: {row}").into());
    }
    // One namespace read in shards of 10 Pods (its 50 in five or more
    // parts, src/source/live/parts.rs) gives the rows it gives whole.
    let first = spec.namespace(0);
    let args = ["-n", first.as_str(), "triage", "-o", "json"];
    let rows = |text: String| -> Result<Vec<String>, Failed> {
        let report: Value = serde_json::from_str(&text).map_err(|e| format!("triage JSON: {e}"))?;
        let mut rows: Vec<String> = report["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|i| {
                let ids: Vec<&str> = i["findings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["id"].as_str())
                    .collect();
                format!(
                    "{} {} {} {:?}",
                    i["target"]["name"],
                    i["verdict"]["state"],
                    i["pods"].as_array().map_or(0, Vec::len),
                    ids
                )
            })
            .collect();
        rows.sort();
        Ok(rows)
    };
    let whole = rows(run_mdiag_with(&viewer, &args, None)?)?;
    let audit = || {
        mdiag_harness::audit::requests(&w.layout.audit_log(), "mdiag/")
            .map_err(|e| Failed::from(format!("{e:#}")))
    };
    let before = audit()?.len();
    let in_parts = rows(run_mdiag_with(
        &viewer,
        &args,
        Some(("MDIAG_PODS_PER_SHARD", "10")),
    )?)?;
    if whole.len() != 5 || in_parts != whole {
        return Err(format!("in parts:\n{in_parts:#?}\nwhole:\n{whole:#?}").into());
    }
    // The shards after the first listed only their own Pods, by their
    // ReplicaSets' template hashes (src/source/live/parts.rs): the read in
    // parts listed the namespace's Pods whole once, on its first pass.
    let pod_lists: Vec<_> = audit()?
        .into_iter()
        .skip(before)
        .filter(|r| r.verb == "list" && r.resource == "pods" && r.namespace == first)
        .collect();
    let by_hash = pod_lists
        .iter()
        .filter(|r| r.uri.contains("labelSelector=pod-template-hash"))
        .count();
    if by_hash == 0 || pod_lists.len() - by_hash != 1 {
        let uris: Vec<&str> = pod_lists.iter().map(|r| r.uri.as_str()).collect();
        return Err(format!("the Pod lists of {first} read in parts: {uris:#?}").into());
    }
    let table = run_mdiag(&partial, &["triage", "-A"])?;
    let gap_line = table
        .lines()
        .find(|l| l.contains("list pods") && l.contains(&hidden))
        .ok_or_else(|| format!("no gap for pods in {hidden}:\n{table}"))?;
    if !gap_line.contains("forbidden") {
        return Err(format!("the gap does not say why: {gap_line}").into());
    }
    Ok(())
}

fn run_mdiag(kubeconfig: &PathBuf, args: &[&str]) -> Result<String, Failed> {
    run_mdiag_with(kubeconfig, args, None)
}

fn run_mdiag_with(
    kubeconfig: &PathBuf,
    args: &[&str],
    env: Option<(&str, &str)>,
) -> Result<String, Failed> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdiag"));
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--color", "never"])
        .args(args)
        .env_remove("KUBECONFIG");
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| format!("running mdiag: {e}"))?;
    // A loaded cluster always has problems: exit 1.
    if out.status.code() != Some(1) {
        return Err(format!(
            "mdiag {args:?} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn triage_items(kubeconfig: &PathBuf) -> Result<Vec<Value>, Failed> {
    let text = run_mdiag(kubeconfig, &["triage", "-A", "-o", "json"])?;
    let report: Value = serde_json::from_str(&text).map_err(|e| format!("triage JSON: {e}"))?;
    Ok(report["items"].as_array().cloned().unwrap_or_default())
}

/// One row per planned workload that `wanted` keeps, each led by the
/// finding of its state (none for the healthy ones).
fn check_rows(
    plan: &[PlannedWorkload],
    items: &[Value],
    wanted: impl Fn(&PlannedWorkload) -> bool,
) -> Result<(), Failed> {
    let mut rows: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    for item in items {
        let t = &item["target"];
        let key = (
            t["namespace"].as_str().unwrap_or("").to_string(),
            t["name"].as_str().unwrap_or("").to_string(),
        );
        rows.entry(key).or_default().push(item);
    }
    let mut problems = Vec::new();
    for wl in plan.iter().filter(|wl| wanted(wl)) {
        let key = (wl.namespace.clone(), wl.name.clone());
        let Some(found) = rows.get(&key) else {
            problems.push(format!("{}/{}: no row", wl.namespace, wl.name));
            continue;
        };
        if found.len() != 1 {
            problems.push(format!(
                "{}/{}: {} rows",
                wl.namespace,
                wl.name,
                found.len()
            ));
            continue;
        }
        let item = found[0];
        let leading = item["findings"][0]["id"].as_str();
        let healthy = item["healthy"].as_bool();
        let ok = match wl.state.leading_finding() {
            None => healthy == Some(true) && leading.is_none(),
            Some(id) => healthy == Some(false) && leading == Some(id),
        };
        if !ok {
            problems.push(format!(
                "{}/{} ({:?}): healthy {healthy:?}, leading finding {leading:?}",
                wl.namespace, wl.name, wl.state
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// A kubeconfig for a ServiceAccount that may list namespaces and read
/// (the built-in `view` role) every load namespace but `hidden`.
fn partial_kubeconfig(spec: &LoadSpec, hidden: &str) -> Result<PathBuf, Failed> {
    let w = world();
    let home = spec.namespace(0);
    let label = format!("{LOAD_LABEL}=true");
    w.kubectl(&["-n", &home, "create", "serviceaccount", "partial"])?;
    let subject = format!("--serviceaccount={home}:partial");
    w.kubectl(&[
        "create",
        "clusterrole",
        "live-scale-namespaces",
        "--verb=get,list",
        "--resource=namespaces",
    ])?;
    w.kubectl(&[
        "create",
        "clusterrolebinding",
        "live-scale-namespaces",
        "--clusterrole=live-scale-namespaces",
        &subject,
    ])?;
    for kind in [
        "clusterrole/live-scale-namespaces",
        "clusterrolebinding/live-scale-namespaces",
    ] {
        w.kubectl(&["label", kind, &label])?;
    }
    for k in 0..spec.namespaces {
        let ns = spec.namespace(k);
        if ns == hidden {
            continue;
        }
        w.kubectl(&[
            "-n",
            &ns,
            "create",
            "rolebinding",
            "partial-view",
            "--clusterrole=view",
            &subject,
        ])?;
    }
    let token = w.kubectl(&["-n", &home, "create", "token", "partial"])?;
    let admin = std::fs::read_to_string(w.layout.admin_kubeconfig()).map_err(|e| e.to_string())?;
    let mut config: Value = serde_saphyr::from_str(&admin).map_err(|e| e.to_string())?;
    config["users"] = serde_json::json!([{"name": "partial", "user": {"token": token.trim()}}]);
    for context in config["contexts"].as_array_mut().into_iter().flatten() {
        context["context"]["user"] = "partial".into();
    }
    let path = w.layout.dir().join("partial-view.kubeconfig");
    std::fs::write(
        &path,
        serde_json::to_string(&config).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    Ok(path)
}
