//! Jobs and CronJobs on the real node, judged from what the real Job and
//! CronJob controllers and the real kubelet write (docs/contract.md,
//! "Run-to-completion Pods"):
//! - a Job (restartPolicy Never, backoffLimit 0) whose model server
//!   allocates past its 32Mi limit: the kernel kills it, the kubelet writes
//!   OOMKilled / 137, the Job controller fails the Job. `trace job/NAME` is
//!   FAILED with `job-failed` and `pod-failed` quoting the kill, exit 1,
//!   live and from `mdiag snapshot`; beside it a Job whose server exits 0
//!   stays COMPLETE and quiet;
//! - a CronJob whose run exits 1: `trace cronjob/NAME` is judged by that
//!   run, `triage` ranks its row first; beside it a CronJob whose run
//!   completed and one suspended before it ever ran stay quiet.
//!
//! What the cluster wrote is kept in `target/real-node-evidence/<trial>.yaml`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::{Value, json};

use super::gate::viewer;
use super::{exit_for, finding_ids, mdiag, namespace, repo, snapshot_file, world};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("real-node-job-oom-killed", job_oom_killed),
        Trial::test("real-node-job-cronjob-last-run-failed", cron_job_failed),
    ]
}

/// How long the Job controller, the scheduler and the kubelet may take to
/// run a Pod to its end.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// A `*/1` CronJob fires at the next minute; then its Job runs.
const CRON_TIMEOUT: Duration = Duration::from_secs(180);

/// A run-to-completion Pod template of the model server on the real node.
fn template(args: &[&str], memory: Option<&str>) -> Value {
    let (k, v) = REAL_NODE_LABEL;
    let mut container = json!({
        "name": "main",
        "image": world().images.model_server("v1.4.0"),
        "args": args,
    });
    if let Some(m) = memory {
        container["resources"] = json!({"limits": {"memory": m}});
    }
    json!({"spec": {
        "restartPolicy": "Never",
        "nodeSelector": {k: v},
        "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 5,
        "containers": [container],
    }})
}

fn job(ns: &str, name: &str, template: Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"backoffLimit": 0, "template": template}})
}

fn cron_job(ns: &str, name: &str, suspend: bool, template: Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "schedule": "*/1 * * * *",
            "suspend": suspend,
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"backoffLimit": 0, "template": template}}}})
}

pub(super) fn kubectl_apply(ns: &str, items: Vec<Value>) -> Result<(), Failed> {
    let w = world();
    let file = w.layout.dir().join(format!("{ns}-objects.json"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&file, list.to_string()).map_err(|e| e.to_string())?;
    w.kubectl(&["apply", "-f", file.to_str().unwrap()])?;
    Ok(())
}

fn get_json(args: &[&str]) -> Result<Value, Failed> {
    let mut all = args.to_vec();
    all.extend_from_slice(&["-o", "json"]);
    let out = world().kubectl(&all)?;
    serde_json::from_str(&out).map_err(|e| format!("kubectl {args:?}: {e}").into())
}

/// The type of the Job's terminal condition (Complete or Failed), if any.
fn ended(job: &Value) -> Option<&str> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["status"] == "True" && (c["type"] == "Complete" || c["type"] == "Failed"))
        .and_then(|c| c["type"].as_str())
}

/// What the Job and its Pods say now, for a failure message.
fn job_story(ns: &str, job: &Value) -> String {
    let name = job["metadata"]["name"].as_str().unwrap_or_default();
    let pods = get_json(&[
        "-n",
        ns,
        "get",
        "pods",
        "-l",
        &format!("batch.kubernetes.io/job-name={name}"),
    ])
    .map(|l| {
        l["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "pod {} phase {} containers {}",
                    p["metadata"]["name"], p["status"]["phase"], p["status"]["containerStatuses"]
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
    .unwrap_or_else(|e| e.message().unwrap_or_default().to_string());
    format!("job {name} status {}\n{pods}", job["status"])
}

/// Waits until the Job has ended with condition `want`; fails at once if
/// it ended the other way.
fn wait_job(ns: &str, name: &str, want: &str, timeout: Duration) -> Result<Value, Failed> {
    let t0 = Instant::now();
    loop {
        let job = get_json(&["-n", ns, "get", "job", name])?;
        match ended(&job) {
            Some(got) if got == want => return Ok(job),
            Some(got) => {
                return Err(format!(
                    "{ns}: job {name} ended {got}, want {want}\n{}",
                    job_story(ns, &job)
                )
                .into());
            }
            None if t0.elapsed() > timeout => {
                return Err(format!(
                    "{ns}: job {name} not {want} after {timeout:?}\n{}",
                    job_story(ns, &job)
                )
                .into());
            }
            None => std::thread::sleep(Duration::from_secs(1)),
        }
    }
}

/// The Jobs a CronJob made (by owner), oldest first.
fn runs_of(ns: &str, cron: &str) -> Result<Vec<Value>, Failed> {
    let list = get_json(&["-n", ns, "get", "jobs"])?;
    let mut runs: Vec<Value> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|j| {
            j["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|o| o["kind"] == "CronJob" && o["name"] == cron)
        })
        .cloned()
        .collect();
    runs.sort_by(|a, b| {
        let t = |j: &Value| {
            j["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        t(a).cmp(&t(b))
    });
    Ok(runs)
}

/// Waits until the CronJob has run a Job and every run has ended, the
/// newest with `want`; returns the newest run.
fn wait_cron_run(ns: &str, cron: &str, want: &str, timeout: Duration) -> Result<Value, Failed> {
    let t0 = Instant::now();
    loop {
        let runs = runs_of(ns, cron)?;
        if let Some(last) = runs.last()
            && runs.iter().all(|j| ended(j).is_some())
        {
            if ended(last) == Some(want) {
                return Ok(last.clone());
            }
            return Err(format!(
                "{ns}: cronjob {cron}'s last run ended {:?}, want {want}\n{}",
                ended(last),
                job_story(ns, last)
            )
            .into());
        }
        if t0.elapsed() > timeout {
            let story = runs
                .iter()
                .map(|j| job_story(ns, j))
                .collect::<Vec<_>>()
                .join("\n");
            return Err(format!(
                "{ns}: cronjob {cron} has not ended a run {want} after {timeout:?} ({} run(s))\n{story}",
                runs.len()
            )
            .into());
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// `trace TARGET -o json`, live with the view-only kubeconfig, or on a file.
pub(super) fn trace(ns: &str, target: &str, file: Option<&Path>) -> Result<(i32, Value), Failed> {
    let viewer = viewer();
    let mut args = vec!["-n", ns, "trace", target, "-o", "json"];
    match file {
        Some(f) => args.extend_from_slice(&["--snapshot", f.to_str().unwrap()]),
        None => args.extend_from_slice(&["--kubeconfig", viewer.to_str().unwrap()]),
    }
    mdiag(&args)
}

/// `triage -n NS -o json`, live or on a file.
pub(super) fn triage(ns: &str, file: Option<&Path>) -> Result<(i32, Value), Failed> {
    let viewer = viewer();
    let mut args = vec!["-n", ns, "triage", "-o", "json"];
    match file {
        Some(f) => args.extend_from_slice(&["--snapshot", f.to_str().unwrap()]),
        None => args.extend_from_slice(&["--kubeconfig", viewer.to_str().unwrap()]),
    }
    mdiag(&args)
}

pub(super) fn finding<'a>(report: &'a Value, id: &str) -> Option<&'a Value> {
    report["findings"]
        .as_array()?
        .iter()
        .find(|f| f["id"] == id)
}

/// Every evidence line of a finding, as `object field = value`.
pub(super) fn evidence(f: &Value) -> String {
    f["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| format!("{} {} = {}", e["object"], e["field"], e["value"]))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The exit code is the contract's for the report (docs/contract.md#exit-codes).
fn exit_is_the_contracts(what: &str, code: i32, report: &Value) -> Result<(), Failed> {
    let want = exit_for(report);
    if code != want {
        return Err(format!(
            "{what}: exit {code}, the contract gives {want} for state {} and findings {:?}",
            report["verdict"]["state"],
            finding_ids(report)
        )
        .into());
    }
    Ok(())
}

/// A failed run: exit 1, FAILED (not-serving), `job-failed` leading with
/// the controller's reason, `pod-failed` quoting the kubelet's `quote`.
fn judged_failed(what: &str, code: i32, r: &Value, quote: &str) -> Result<(), Failed> {
    let ids = finding_ids(r);
    let mut problems = Vec::new();
    if code != 1 {
        problems.push(format!("exit {code}"));
    }
    if r["verdict"]["state"] != "not-serving" {
        problems.push(format!("state {}", r["verdict"]["state"]));
    }
    if r["healthy"] != false {
        problems.push(format!("healthy {}", r["healthy"]));
    }
    if r["verdict"]["lead"] != "job-failed" {
        problems.push(format!("lead {}", r["verdict"]["lead"]));
    }
    // The Pod ran and ended: it stops at started, short of completed.
    if r["verdict"]["last_step"] != "started" {
        problems.push(format!("last_step {}", r["verdict"]["last_step"]));
    }
    // One lead for an OOM kill of a run-to-completion Pod: pod-failed.
    if ids.iter().any(|i| i == "oom-killed") {
        problems.push("oom-killed beside pod-failed".into());
    }
    match finding(r, "job-failed") {
        Some(f) if evidence(f).contains("BackoffLimitExceeded") => {}
        Some(f) => problems.push(format!(
            "job-failed does not quote BackoffLimitExceeded:\n{}",
            evidence(f)
        )),
        None => problems.push("no job-failed".into()),
    }
    match finding(r, "pod-failed") {
        Some(f) if evidence(f).contains(quote) => {}
        Some(f) => problems.push(format!(
            "pod-failed does not quote {quote:?}:\n{}",
            evidence(f)
        )),
        None => problems.push("no pod-failed".into()),
    }
    if problems.is_empty() {
        return exit_is_the_contracts(what, code, r);
    }
    Err(format!("{what}: {}\n{}", problems.join("; "), pretty(r)).into())
}

/// The ids of a report's warning and error findings.
pub(super) fn loud(r: &Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] != "info")
        .map(|f| f["id"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// A run that completed: exit 0, COMPLETE (serving), healthy, no warning
/// or error finding.
fn judged_complete(what: &str, code: i32, r: &Value) -> Result<(), Failed> {
    let loud = loud(r);
    if code != 0
        || r["verdict"]["state"] != "serving"
        || r["healthy"] != true
        || r["verdict"]["last_step"] != "completed"
        || !loud.is_empty()
    {
        return Err(format!(
            "{what}: want exit 0, serving, completed and quiet; got exit {code}\n{}",
            pretty(r)
        )
        .into());
    }
    Ok(())
}

/// The snapshot replayed gives the live verdict, findings and exit code.
pub(super) fn same_as_live(
    what: &str,
    live: &(i32, Value),
    replay: &(i32, Value),
) -> Result<(), Failed> {
    let (lc, l) = live;
    let (rc, r) = replay;
    let same = lc == rc
        && l["healthy"] == r["healthy"]
        && l["verdict"]["state"] == r["verdict"]["state"]
        && l["verdict"]["last_step"] == r["verdict"]["last_step"]
        && l["verdict"]["lead"] == r["verdict"]["lead"]
        && finding_ids(l) == finding_ids(r);
    if !same {
        return Err(format!(
            "{what}: live exit {lc} {} {:?}, replayed exit {rc} {} {:?}",
            l["verdict"],
            finding_ids(l),
            r["verdict"],
            finding_ids(r)
        )
        .into());
    }
    Ok(())
}

/// The triage rows as `Kind/name`, in the order given.
pub(super) fn rows(report: &Value) -> Vec<String> {
    report["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            format!(
                "{}/{}",
                i["target"]["kind"].as_str().unwrap_or("?"),
                i["target"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

fn row<'a>(report: &'a Value, kind_name: &str) -> Option<&'a Value> {
    report["items"].as_array()?.iter().find(|i| {
        format!(
            "{}/{}",
            i["target"]["kind"].as_str().unwrap_or("?"),
            i["target"]["name"].as_str().unwrap_or("?")
        ) == kind_name
    })
}

/// Triage: exit 1, the failed row first with `job-failed`, every `quiet`
/// row present without a warning or error.
fn triage_ranks(what: &str, t: &(i32, Value), failed: &str, quiet: &[&str]) -> Result<(), Failed> {
    let (code, r) = t;
    let got = rows(r);
    let mut problems = Vec::new();
    if *code != 1 {
        problems.push(format!("exit {code}"));
    }
    if got.first().map(String::as_str) != Some(failed) {
        problems.push(format!("first row is not {failed}"));
    }
    match row(r, failed) {
        Some(i)
            if i["verdict"]["lead"] == "job-failed" && i["verdict"]["state"] == "not-serving" => {}
        other => problems.push(format!(
            "{failed}'s row: {:?}",
            other.map(|i| &i["verdict"])
        )),
    }
    for q in quiet {
        match row(r, q) {
            Some(i) if loud(i).is_empty() => {}
            Some(i) => problems.push(format!("{q}'s row finds {:?}", loud(i))),
            None => problems.push(format!("no row {q}")),
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{what}: {} (rows {got:?})\n{}",
        problems.join("; "),
        pretty(r)
    )
    .into())
}

/// Keeps what the controllers and the kubelet wrote, for fixtures.
pub(super) fn keep_evidence(name: &str, ns: &str) {
    let dir: PathBuf = repo().join("target").join("real-node-evidence");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(text) = world().kubectl(&["get", "cronjobs,jobs,pods,events", "-n", ns, "-o", "yaml"])
    {
        let _ = std::fs::write(dir.join(format!("{name}.yaml")), text);
    }
}

/// Runs `body`, keeps the evidence, deletes the namespace, says a failure
/// at once (the harness prints failures only at the end) and times it.
pub(super) fn in_namespace(
    trial: &str,
    name: &str,
    body: impl FnOnce(&str) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let t0 = Instant::now();
    let ns = namespace(name)?;
    let result = body(&ns);
    keep_evidence(name, &ns);
    let _ = world().kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    match &result {
        Ok(()) => eprintln!("  {trial}: passed in {:.1} s", t0.elapsed().as_secs_f64()),
        Err(e) => eprintln!("  {trial}: {}", e.message().unwrap_or_default()),
    }
    result
}

fn job_oom_killed() -> Result<(), Failed> {
    in_namespace("real-node-job-oom-killed", "real-job-oom", |ns| {
        kubectl_apply(
            ns,
            vec![
                job(ns, "weights-load", template(&["--oom"], Some("32Mi"))),
                // Exits 0 a second after it starts (--crash=0).
                job(ns, "ok", template(&["--crash=0", "--crash-after=1"], None)),
            ],
        )?;
        let t0 = Instant::now();
        wait_job(ns, "weights-load", "Failed", RUN_TIMEOUT)?;
        eprintln!(
            "  real-node-job-oom-killed: the Job failed {:.1} s after it was applied",
            t0.elapsed().as_secs_f64()
        );
        wait_job(ns, "ok", "Complete", RUN_TIMEOUT)?;

        let live = trace(ns, "job/weights-load", None)?;
        judged_failed(
            "live job/weights-load",
            live.0,
            &live.1,
            "reason OOMKilled exitCode 137",
        )?;
        let limit = evidence(finding(&live.1, "pod-failed").unwrap_or(&Value::Null));
        if !limit.contains("32Mi") {
            return Err(format!("pod-failed does not name the 32Mi limit:\n{limit}").into());
        }
        let ok = trace(ns, "job/ok", None)?;
        judged_complete("live job/ok", ok.0, &ok.1)?;

        // The file a user keeps of the failed Job, replayed.
        let file = snapshot_file(ns, &["job/weights-load"], &viewer())?;
        let replay = trace(ns, "job/weights-load", Some(&file))?;
        same_as_live("job/weights-load", &live, &replay)?;
        judged_failed(
            "replayed job/weights-load",
            replay.0,
            &replay.1,
            "reason OOMKilled exitCode 137",
        )?;
        let _ = std::fs::remove_file(&file);

        // The namespace: both rows, the failure first, live and replayed.
        let live_rows = triage(ns, None)?;
        triage_ranks("live triage", &live_rows, "Job/weights-load", &["Job/ok"])?;
        let file = snapshot_file(ns, &[], &viewer())?;
        let replay_ok = trace(ns, "job/ok", Some(&file))?;
        same_as_live("job/ok", &ok, &replay_ok)?;
        let replay_rows = triage(ns, Some(&file))?;
        triage_ranks(
            "replayed triage",
            &replay_rows,
            "Job/weights-load",
            &["Job/ok"],
        )?;
        let _ = std::fs::remove_file(&file);
        Ok(())
    })
}

fn cron_job_failed() -> Result<(), Failed> {
    in_namespace(
        "real-node-job-cronjob-last-run-failed",
        "real-cronjob-failed",
        |ns| {
            kubectl_apply(
                ns,
                vec![
                    // Logs FATAL and exits 1 at once.
                    cron_job(
                        ns,
                        "index-sync",
                        false,
                        template(&["--crash=1", "--crash-after=0"], None),
                    ),
                    cron_job(
                        ns,
                        "index-ok",
                        false,
                        template(&["--crash=0", "--crash-after=1"], None),
                    ),
                    cron_job(ns, "index-paused", true, template(&["--crash=1"], None)),
                ],
            )?;
            let t0 = Instant::now();
            wait_cron_run(ns, "index-sync", "Failed", CRON_TIMEOUT)?;
            eprintln!(
                "  real-node-job-cronjob-last-run-failed: the first run failed {:.1} s after the CronJob was applied",
                t0.elapsed().as_secs_f64()
            );
            wait_cron_run(ns, "index-ok", "Complete", CRON_TIMEOUT)?;
            // No further run may change the last one while it is judged:
            // suspended, then every run made in the meantime has ended.
            for name in ["index-sync", "index-ok"] {
                world().kubectl(&[
                    "-n",
                    ns,
                    "patch",
                    "cronjob",
                    name,
                    "--type=merge",
                    "-p",
                    r#"{"spec":{"suspend":true}}"#,
                ])?;
            }
            // A sync that began before the patch may still create a run.
            std::thread::sleep(Duration::from_secs(2));
            let last = wait_cron_run(ns, "index-sync", "Failed", RUN_TIMEOUT)?;
            wait_cron_run(ns, "index-ok", "Complete", RUN_TIMEOUT)?;
            let last_name = last["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();

            let live = trace(ns, "cronjob/index-sync", None)?;
            judged_failed(
                "live cronjob/index-sync",
                live.0,
                &live.1,
                "reason Error exitCode 1",
            )?;
            let about = finding(&live.1, "job-failed").map(|f| &f["subject"]["name"]);
            if about != Some(&Value::from(last_name.as_str())) {
                return Err(format!(
                    "job-failed is about {about:?}, want the last run {last_name}"
                )
                .into());
            }
            let note = live.1["steps"][0]["note"].as_str().unwrap_or_default();
            if !note.contains("*/1 * * * *") || !note.contains(&last_name) {
                return Err(format!(
                    "the job step's note names neither the schedule nor {last_name}: {note}"
                )
                .into());
            }
            let ok = trace(ns, "cronjob/index-ok", None)?;
            judged_complete("live cronjob/index-ok", ok.0, &ok.1)?;
            // Suspended before it ever ran: nothing failed, nothing to say;
            // the contract calls a CronJob with no run yet progressing.
            let (code, paused) = trace(ns, "cronjob/index-paused", None)?;
            if !finding_ids(&paused).is_empty() || paused["verdict"]["state"] != "progressing" {
                return Err(
                    format!("cronjob/index-paused: exit {code}\n{}", pretty(&paused)).into(),
                );
            }
            exit_is_the_contracts("cronjob/index-paused", code, &paused)?;

            let file = snapshot_file(ns, &["cronjob/index-sync"], &viewer())?;
            let replay = trace(ns, "cronjob/index-sync", Some(&file))?;
            same_as_live("cronjob/index-sync", &live, &replay)?;
            let _ = std::fs::remove_file(&file);

            let rows = triage(ns, None)?;
            triage_ranks(
                "live triage",
                &rows,
                "CronJob/index-sync",
                &["CronJob/index-ok", "CronJob/index-paused"],
            )?;
            Ok(())
        },
    )
}
