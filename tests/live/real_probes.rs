//! A model server its own liveness probe kills while it loads, on the real
//! node (SPEC section 4, `probe-kills-startup`): the model-server image
//! loads for ten minutes (`/healthz` answers 503), its liveness probe allows
//! 4 s (failureThreshold 2 x periodSeconds 2). The real kubelet writes
//! `Unhealthy` and `Killing ... failed liveness probe, will be restarted`
//! and restarts it. `trace deploy/slow-loader` names `probe-kills-startup`
//! with the probe's budget and how long the killed run lasted, live and
//! from `mdiag snapshot`, and `gate` fails on it once the restarts are
//! spent. Beside it, the same server with a startup probe long enough for
//! its load (6 s of 30 s) becomes Ready and stays quiet.
//!
//!
//! An init container that fails as a model download refused by its store
//! does: `init-container-failing`, not `crash-loop`.
//!
//! What the kubelet wrote is kept in
//! `target/real-node-evidence/<trial>.yaml`.

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::{Value, json};

use super::gate::{gate_on, viewer};
use super::real_jobs::{
    evidence, finding, in_namespace, kubectl_apply, loud, pretty, same_as_live, trace,
};
use super::{finding_ids, snapshot_file, world};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("real-node-probe-kills-startup", probe_kills_startup),
        Trial::test("real-node-init-download-failing", init_download_failing),
    ]
}

/// How long the kubelet may take to kill the loader twice (4 s of probe,
/// 2 s of grace, 10 s of back-off, again) and a healthy server to be Ready.
const KILL_TIMEOUT: Duration = Duration::from_secs(120);

fn probe(period: i32, threshold: i32) -> Value {
    json!({"httpGet": {"path": "/healthz", "port": 8080},
        "periodSeconds": period, "failureThreshold": threshold, "timeoutSeconds": 1})
}

/// A Deployment of one model server on the real node, and its Service.
fn server(ns: &str, name: &str, args: &[&str], probes: Value) -> Vec<Value> {
    server_after(ns, name, args, probes, None)
}

/// [`server`], with an init container that runs `script` first.
fn server_after(
    ns: &str,
    name: &str,
    args: &[&str],
    probes: Value,
    init: Option<&str>,
) -> Vec<Value> {
    let (k, v) = REAL_NODE_LABEL;
    let mut container = json!({
        "name": "server",
        "image": world().images.model_server("v1.4.0"),
        "args": args,
        "ports": [{"containerPort": 8080, "name": "http"}],
    });
    for (field, p) in probes.as_object().unwrap() {
        container[field] = p.clone();
    }
    let labels = json!({"app": name});
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {
                    "nodeSelector": {k: v},
                    "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
                    "terminationGracePeriodSeconds": 2,
                    "initContainers": init.map(|script| vec![json!({
                        "name": "model-download",
                        "image": world().images.model_server("v1.4.0"),
                        "command": ["sh", "-c", script],
                        "args": ["--source=s3://models-prod/tiny-llama-1.1b/", "--dest=/mnt/models"],
                    })]).unwrap_or_default(),
                    "containers": [container]}}}}),
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "http"}]}}),
    ]
}

fn probe_kills_startup() -> Result<(), Failed> {
    in_namespace(
        "real-node-probe-kills-startup",
        "probe-kills-startup",
        |ns| {
            let mut items = server(
                ns,
                "slow-loader",
                &["--ready-after=600"],
                json!({"livenessProbe": probe(2, 2), "readinessProbe": probe(2, 1)}),
            );
            items.extend(server(
                ns,
                "patient-loader",
                &["--ready-after=6"],
                json!({"startupProbe": probe(2, 15), "livenessProbe": probe(2, 2),
                    "readinessProbe": probe(2, 1)}),
            ));
            kubectl_apply(ns, items)?;

            // Live: named once the kubelet has killed it at least once.
            let live = until(ns, "deploy/slow-loader", |r| {
                finding(r, "probe-kills-startup").is_some()
            })?;
            judged_killed("live", &live)?;

            // The evidence a user keeps, replayed: the same judgement, as
            // long as no Pod moved between the two reads.
            let file = snapshot_file(ns, &["deploy/slow-loader"], &viewer())?;
            let replay = trace(ns, "deploy/slow-loader", Some(&file))?;
            judged_killed("replayed", &replay)?;
            let again = trace(ns, "deploy/slow-loader", None)?;
            if finding_ids(&again.1) == finding_ids(&live.1) {
                same_as_live("replayed", &again, &replay)?;
            }
            let _ = std::fs::remove_file(file);

            // The gate fails on it once one restart is spent.
            let run = gate_on(
                &viewer(),
                ns,
                "deploy/slow-loader",
                &["--timeout", "90s", "--max-restarts", "1"],
            )?;
            let decided = run.1["gate"]["decided_by"].as_str().unwrap_or("");
            if run.0 != 1 || decided != "probe-kills-startup" {
                return Err(format!(
                    "gate: exit {}, decided by {decided:?}, want 1 by probe-kills-startup\n{}",
                    run.0,
                    pretty(&run.1)
                )
                .into());
            }

            // The neighbour loads inside its startup probe's budget.
            let quiet = until(ns, "deploy/patient-loader", |r| r["healthy"] == true)?;
            if quiet.0 != 0 || !loud(&quiet.1).is_empty() {
                return Err(format!(
                    "patient-loader: want exit 0 and quiet, got exit {}\n{}",
                    quiet.0,
                    pretty(&quiet.1)
                )
                .into());
            }
            Ok(())
        },
    )
}

/// An init container that fails as a download does when the store refuses
/// the credentials: Init:CrashLoopBackOff on the real kubelet, named
/// `init-container-failing` with its exit, restarts and source, not
/// `crash-loop`; beside it the same download succeeding stays quiet.
fn init_download_failing() -> Result<(), Failed> {
    const REFUSED: &str =
        "echo \"fetching $0 to $1\"; echo 'ERROR 403 Forbidden: AccessDenied' >&2; exit 1";
    const FETCHED: &str = "echo \"fetching $0 to $1\"; echo done";
    let probes = json!({"readinessProbe": probe(2, 1)});
    in_namespace(
        "real-node-init-download-failing",
        "init-download-failing",
        |ns| {
            let mut items = server_after(ns, "fetch-refused", &[], probes.clone(), Some(REFUSED));
            items.extend(server_after(
                ns,
                "fetch-ok",
                &[],
                probes.clone(),
                Some(FETCHED),
            ));
            kubectl_apply(ns, items)?;
            let (code, r) = until(ns, "deploy/fetch-refused", |r| {
                r["verdict"]["lead"] == "init-container-failing"
            })?;
            let f = finding(&r, "init-container-failing").unwrap();
            let said = evidence(f);
            let detail = f["detail"].as_str().unwrap_or_default();
            let mut problems = Vec::new();
            if code != 1 {
                problems.push(format!("exit {code}"));
            }
            if !detail.starts_with("init container model-download exits with code 1") {
                problems.push(format!("detail {detail:?}"));
            }
            if !said.contains("--source=s3://models-prod/tiny-llama-1.1b/") {
                problems.push(format!("no source in the evidence:\n{said}"));
            }
            if finding_ids(&r).iter().any(|i| i == "crash-loop") {
                problems.push("crash-loop beside init-container-failing".into());
            }
            if !problems.is_empty() {
                return Err(format!("{}\n{}", problems.join("; "), pretty(&r)).into());
            }
            let quiet = until(ns, "deploy/fetch-ok", |r| r["healthy"] == true)?;
            if quiet.0 != 0 || !loud(&quiet.1).is_empty() {
                return Err(format!(
                    "fetch-ok: want exit 0 and quiet, got exit {}\n{}",
                    quiet.0,
                    pretty(&quiet.1)
                )
                .into());
            }
            Ok(())
        },
    )
}

/// `trace TARGET` live until `done` holds of the report.
pub(super) fn until(
    ns: &str,
    target: &str,
    done: impl Fn(&Value) -> bool,
) -> Result<(i32, Value), Failed> {
    let t0 = Instant::now();
    loop {
        let r = trace(ns, target, None)?;
        if done(&r.1) {
            return Ok(r);
        }
        if t0.elapsed() > KILL_TIMEOUT {
            return Err(format!(
                "{target}: not there after {KILL_TIMEOUT:?}; findings {:?}\n{}",
                finding_ids(&r.1),
                pretty(&r.1)
            )
            .into());
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// Exit 1, the lead `probe-kills-startup` (no `crash-loop` beside it), the
/// liveness probe's 4 s budget and the killed run's length in its evidence.
fn judged_killed(what: &str, (code, r): &(i32, Value)) -> Result<(), Failed> {
    let mut problems = Vec::new();
    if *code != 1 {
        problems.push(format!("exit {code}"));
    }
    if r["verdict"]["lead"] != "probe-kills-startup" {
        problems.push(format!("lead {}", r["verdict"]["lead"]));
    }
    if finding_ids(r).iter().any(|i| i == "crash-loop") {
        problems.push("crash-loop beside probe-kills-startup".into());
    }
    if let Some(f) = finding(r, "probe-kills-startup") {
        let said = evidence(f);
        for want in [
            // `evidence` quotes each part as JSON.
            "livenessProbe\" = \"4s (initialDelaySeconds 0 + failureThreshold 2 x periodSeconds 2)",
            "lastState.terminated\" = \"lasted ",
            "failed liveness probe, will be restarted",
        ] {
            if !said.contains(want) {
                problems.push(format!("no {want:?} in the evidence:\n{said}"));
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!("{what}: {}\n{}", problems.join("; "), pretty(r)).into())
}
