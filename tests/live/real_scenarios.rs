//! The rollouts of `mdiag_harness::scenarios`, played out by the real
//! kubelet: each trial deploys a serving first release on the real node,
//! makes its change, and checks
//! - `mdiag gate` (default policy): exit code, outcome, what decided it, and
//!   how long after the kubelet's first report of the failure (budget 15 s)
//!   or after the last endpoint turned ready (budget 1 s; the slice keeps
//!   whole seconds, so 2 s is allowed);
//! - `mdiag trace` live: healthy, last step, the lead finding, and the
//!   kubelet's own words quoted in its evidence;
//! - `mdiag snapshot` replayed: the same verdict and findings, with the
//!   previous container log in the file where the scenario restarts.
//!
//! What the real kubelet wrote is kept in
//! `target/real-node-evidence/<scenario>.yaml` (Pods and Events), which
//! harness/SIM.md compares with the simulator.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use libtest_mimic::{Failed, Trial};
use mdiag_harness::cluster;
use mdiag_harness::scenarios::{self, Change, FirstReport, Scenario};
use serde_json::Value;

use super::gate::{
    decided_by, expect, first_event, first_event_of, gate, judged_at, last_slice_write, parse_time,
    seconds, viewer,
};
use super::{
    Want, apply, finding_ids, mdiag, namespace, read_snapshot_text, repo, snapshot_file,
    until_live, with_controller_paused, world,
};

pub fn trials() -> Vec<Trial> {
    scenarios::all()
        .into_iter()
        .map(|s| {
            let name = format!("real-node-{}", s.name);
            Trial::test(name, move || run(&s))
        })
        .collect()
}

fn run(s: &Scenario) -> Result<(), Failed> {
    let w = world();
    let ns = namespace(&format!("real-{}", s.name))?;
    if !s.objects.is_empty() {
        let file = w.layout.dir().join(format!("{ns}-objects.yaml"));
        std::fs::write(&file, scenarios::objects_yaml(s, &ns)).map_err(|e| e.to_string())?;
        w.kubectl(&["apply", "-f", file.to_str().unwrap()])?;
    }
    apply(&ns, &scenarios::first_release(&w.images))?;
    expect(
        "first release",
        &gate(&viewer(), &ns, &["--timeout", "120s"])?,
        0,
        "converged",
    )?;

    let result = change_and_judge(s, &ns);
    keep_evidence(s, &ns);
    if s.change == Change::KubeletStopped {
        cluster::start_kubelet_again(&w.layout).map_err(|e| format!("{e:#}"))?;
    }
    let _ = w.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    // Said at once too: the harness prints failures only at the end.
    if let Err(e) = &result {
        eprintln!("  {}: {}", s.name, e.message().unwrap_or_default());
    }
    result
}

fn change_and_judge(s: &Scenario, ns: &str) -> Result<(), Failed> {
    let w = world();
    let want = &s.expect.gate;
    let timeout = format!("{}s", want.timeout_secs);
    let gate_args = ["--timeout", timeout.as_str(), "--max-restarts", "3"];
    let run = match s.change {
        Change::Upgrade => {
            apply(ns, &(s.upgrade)(&w.images))?;
            gate(&viewer(), ns, &gate_args)?
        }
        Change::SelectorMatchesNothing => {
            // Paused, the controller does not put the selector back; the
            // trial's checks run while it is paused.
            return with_controller_paused(|| {
                let patch = scenarios::selector_patch().to_string();
                w.kubectl(&[
                    "-n",
                    ns,
                    "patch",
                    "service",
                    scenarios::NAME,
                    "--type=merge",
                    "-p",
                    &patch,
                ])?;
                let run = gate(&viewer(), ns, &gate_args)?;
                judge(s, ns, &run)
            });
        }
        Change::KubeletStopped => {
            let t = Instant::now();
            cluster::stop_kubelet(&w.layout).map_err(|e| format!("{e:#}"))?;
            wait_node_not_ready()?;
            eprintln!(
                "  {}: the Node was NotReady {:.1} s after its kubelet stopped",
                s.name,
                t.elapsed().as_secs_f64()
            );
            gate(&viewer(), ns, &gate_args)?
        }
    };
    judge(s, ns, &run)
}

fn judge(s: &Scenario, ns: &str, run: &(i32, Value, String)) -> Result<(), Failed> {
    let want = &s.expect.gate;
    expect(s.name, run, want.exit_code, want.outcome)?;
    if decided_by(&run.1) != want.decided_by {
        return Err(format!(
            "{}: the gate was decided by {:?}, want {:?}\nreason: {}",
            s.name,
            decided_by(&run.1),
            want.decided_by,
            run.1["gate"]["reason"]
        )
        .into());
    }
    if let Some(lag) = gate_lag(s, ns, &run.1).map_err(|e| {
        format!(
            "{}\nthe gate's progress lines:\n{}",
            e.message().unwrap_or_default(),
            run.2
        )
    })? {
        eprintln!(
            "  {}: the gate decided {lag:.1} s after {}",
            s.name,
            what_started(s)
        );
    }

    let trace_want = Want {
        healthy: Some(s.expect.healthy),
        last_step: Some(s.expect.last_step),
        // `Want` holds 'static lists; one tiny leak per trial.
        must: if s.expect.finding.is_empty() {
            &[]
        } else {
            Box::leak(Box::new([s.expect.finding]))
        },
        must_not: &[],
    };
    let (_, live) = until_live(ns, trace_want)?;
    if live["verdict"]["state"] != s.expect.state {
        return Err(format!(
            "{}: the state is {}, want {} ({})",
            s.name, live["verdict"]["state"], s.expect.state, live["verdict"]["summary"]
        )
        .into());
    }
    check_lead_and_quote(s, &live)?;

    // The evidence a user keeps, replayed: the same verdict and findings.
    let (file, replay) = replayed_as_live(s, ns)?;
    if !s.expect.crash_log.is_empty() {
        let doc: Value =
            serde_saphyr::from_str(&read_snapshot_text(&file)?).map_err(|e| e.to_string())?;
        let kept = doc["logs"].as_array().into_iter().flatten().any(|l| {
            l["text"]
                .as_str()
                .is_some_and(|t| t.contains(s.expect.crash_log))
        });
        if !kept {
            return Err(format!(
                "{}: no log with {:?} in {}",
                s.name,
                s.expect.crash_log,
                file.display()
            )
            .into());
        }
    }
    if !s.expect.crash_log.is_empty() {
        log_evidence_names_next(s, &replay)?;
    }
    let _ = std::fs::remove_file(file);
    Ok(())
}

/// A snapshot and a live trace of the same state, compared: the replayed
/// file must give the live verdict and findings. The Pods can move between
/// the two reads (a killed container starts again), so a pair counts only
/// when no Pod changed across it (their resourceVersions before the
/// snapshot and after the live trace); otherwise it is taken again.
fn replayed_as_live(s: &Scenario, ns: &str) -> Result<(PathBuf, Value), Failed> {
    const ATTEMPTS: usize = 5;
    for attempt in 1..=ATTEMPTS {
        let before = pod_versions(ns)?;
        let file = snapshot_file(ns, &[scenarios::NAME], &viewer())?;
        let (_, live) = super::trace_live(ns)?;
        let after = pod_versions(ns)?;
        let (_, replay) = mdiag(&[
            "trace",
            scenarios::NAME,
            "--snapshot",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])?;
        let same = replay["healthy"] == live["healthy"]
            && replay["verdict"]["state"] == live["verdict"]["state"]
            && replay["verdict"]["last_step"] == live["verdict"]["last_step"]
            && finding_ids(&replay) == finding_ids(&live);
        if same {
            return Ok((file, replay));
        }
        let _ = std::fs::remove_file(&file);
        if before == after {
            return Err(format!(
                "{}: the Pods did not change, yet live {} {:?}, replay {} {:?}",
                s.name,
                live["verdict"],
                finding_ids(&live),
                replay["verdict"],
                finding_ids(&replay)
            )
            .into());
        }
        eprintln!(
            "  {}: the Pods changed between the snapshot and the live trace (pair {attempt}); reading both again",
            s.name
        );
    }
    Err(format!(
        "{}: the Pods changed across {ATTEMPTS} pairs of reads",
        s.name
    )
    .into())
}

/// Each Pod's name and resourceVersion: any write to a Pod changes it.
fn pod_versions(ns: &str) -> Result<String, Failed> {
    world()
        .kubectl(&[
            "-n",
            ns,
            "get",
            "pods",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}",
        ])
        .map_err(|e| format!("{e:#}").into())
}

/// The replayed trace quotes the crash's words under the lead finding, as
/// log evidence about the Pod that `next` names (against
/// what a real kubelet keeps: the crashed run's log may be the current one).
fn log_evidence_names_next(s: &Scenario, report: &Value) -> Result<(), Failed> {
    let lead = &report["findings"][0];
    if !["crash-loop", "oom-killed", "container-cannot-run"]
        .contains(&lead["id"].as_str().unwrap_or_default())
    {
        return Ok(());
    }
    let log = lead["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e.get("log").is_some())
        .ok_or_else(|| format!("{}: no log evidence under {}", s.name, lead["id"]))?;
    let quoted = log["log"]["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|l| l.contains(s.expect.crash_log));
    let pod = lead["subject"]["name"].as_str().unwrap_or_default();
    let next = report["verdict"]["next"].as_str().unwrap_or_default();
    if !quoted || log["object"] != format!("pod/{pod}").as_str() || !next.contains(pod) {
        return Err(format!(
            "{}: want {:?} in the log of the Pod next names; log {log}, next {next}",
            s.name, s.expect.crash_log
        )
        .into());
    }
    Ok(())
}

/// The lead finding is the scenario's, and its evidence (or detail) quotes
/// what the kubelet said.
fn check_lead_and_quote(s: &Scenario, report: &Value) -> Result<(), Failed> {
    if s.expect.finding.is_empty() {
        return Ok(());
    }
    if report["verdict"]["lead"] != s.expect.finding {
        return Err(format!(
            "{}: the lead finding is {}, want {} (findings {:?})",
            s.name,
            report["verdict"]["lead"],
            s.expect.finding,
            finding_ids(report)
        )
        .into());
    }
    if s.expect.quotes.is_empty() {
        return Ok(());
    }
    let finding = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["id"] == s.expect.finding)
        .cloned()
        .unwrap_or_default();
    if !finding
        .to_string()
        .contains(&s.expect.quotes.replace('"', "\\\""))
    {
        return Err(format!(
            "{}: the {} finding does not quote {:?}: {}",
            s.name,
            s.expect.finding,
            s.expect.quotes,
            serde_json::to_string_pretty(&finding).unwrap_or_default()
        )
        .into());
    }
    Ok(())
}

fn what_started(s: &Scenario) -> String {
    match s.expect.first_report {
        FirstReport::None if s.expect.gate.outcome == "converged" => {
            "the last EndpointSlice write".into()
        }
        FirstReport::None => "nothing (not timed)".into(),
        FirstReport::Event(reason) => format!("the first {reason} Event"),
        FirstReport::RestartCrossing => "the run whose restart crossed --max-restarts".into(),
        FirstReport::ReplicaSetEvent(reason) => format!("the first {reason} Event of a ReplicaSet"),
        FirstReport::SecondCrash => "the second crashed run".into(),
        FirstReport::Terminated => "the first terminated run".into(),
    }
}

/// How long after the decisive moment the gate decided, checked against the
/// issue's budgets (the cluster's times have one-second precision).
fn gate_lag(s: &Scenario, ns: &str, report: &Value) -> Result<Option<f64>, Failed> {
    let decided = judged_at(report)?;
    let (from, budget) = match s.expect.first_report {
        FirstReport::None if s.expect.gate.outcome == "converged" => (last_slice_write(ns)?, 2.0),
        FirstReport::None => return Ok(None),
        FirstReport::Event(reason) => (first_event(ns, reason)?, 15.0),
        FirstReport::ReplicaSetEvent(reason) => (first_event_of(ns, "ReplicaSet", reason)?, 15.0),
        FirstReport::SecondCrash => (second_crash(ns)?, 15.0),
        FirstReport::RestartCrossing => (restart_crossing(ns, 3)?, 15.0),
        FirstReport::Terminated => (first_termination(ns)?, 15.0),
    };
    let lag = seconds(from, decided);
    if lag > budget {
        return Err(format!(
            "{}: the gate decided {lag:.1} s after {} (budget {budget} s)",
            s.name,
            what_started(s)
        )
        .into());
    }
    Ok(Some(lag))
}

/// Waits (up to 90 s) until the node lifecycle controller has marked the
/// real node's Ready condition other than True.
fn wait_node_not_ready() -> Result<(), Failed> {
    let t = Instant::now();
    loop {
        let ready = world().kubectl(&[
            "get",
            "node",
            mdiag_harness::node::NODE_NAME,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
        ])?;
        if ready.trim() != "True" {
            return Ok(());
        }
        if t.elapsed() > Duration::from_secs(90) {
            return Err("the real node stayed Ready 90 s after its kubelet stopped".into());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Every container status of the namespace's Pods.
fn container_statuses(ns: &str) -> Result<Vec<Value>, Failed> {
    let out = world().kubectl(&["get", "pods", "-n", ns, "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| {
            p["status"]["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect())
}

/// When the container run whose restart made the count `max` started:
/// the running run's start while the count is `max`, else the last run's.
fn restart_crossing(ns: &str, max: i64) -> Result<Timestamp, Failed> {
    container_statuses(ns)?
        .iter()
        .filter(|c| c["restartCount"].as_i64() == Some(max))
        // The run that made the count `max` is the current one while it
        // runs or just ended, the last one once the kubelet waits to restart.
        .filter_map(|c| {
            parse_time(&c["state"]["running"]["startedAt"])
                .or_else(|| parse_time(&c["state"]["terminated"]["startedAt"]))
                .or_else(|| parse_time(&c["lastState"]["terminated"]["startedAt"]))
        })
        .min()
        .ok_or_else(|| {
            format!("{ns}: no container with exactly {max} restarts (read too late to time it)")
                .into()
        })
}

/// When the second run of a container ended. The run numbered 1 (the
/// restart count a run carries) is the current one while terminated or
/// waiting for its restart, and the last one once run 2 runs.
fn second_crash(ns: &str) -> Result<Timestamp, Failed> {
    container_statuses(ns)?
        .iter()
        .filter_map(|c| {
            let restarts = c["restartCount"].as_i64()?;
            let state = &c["state"];
            match restarts {
                1 if state["terminated"].is_object() => {
                    parse_time(&state["terminated"]["finishedAt"])
                }
                1 if state["waiting"].is_object() => {
                    parse_time(&c["lastState"]["terminated"]["finishedAt"])
                }
                2 if state["running"].is_object() => {
                    parse_time(&c["lastState"]["terminated"]["finishedAt"])
                }
                _ => None,
            }
        })
        .min()
        .ok_or_else(|| {
            format!("{ns}: no container just after its second crash (read too late to time it)")
                .into()
        })
}

/// The end of the first run that terminated, over the namespace's Pods.
fn first_termination(ns: &str) -> Result<Timestamp, Failed> {
    container_statuses(ns)?
        .iter()
        .filter_map(|c| {
            parse_time(&c["lastState"]["terminated"]["finishedAt"])
                .or_else(|| parse_time(&c["state"]["terminated"]["finishedAt"]))
        })
        .min()
        .ok_or_else(|| format!("{ns}: no terminated container").into())
}

/// Keeps what the real kubelet wrote (Pods and Events) for harness/SIM.md.
fn keep_evidence(s: &Scenario, ns: &str) {
    let dir: PathBuf = repo().join("target").join("real-node-evidence");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(text) = world().kubectl(&["get", "pods,events,replicasets", "-n", ns, "-o", "yaml"]) {
        let _ = std::fs::write(dir.join(format!("{}.yaml", s.name)), text);
    }
}
