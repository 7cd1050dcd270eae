//! Ring 2: runs to completion through the binary on the case fixtures:
//! Jobs and CronJobs as targets (`job/NAME`, `cronjob/NAME`), their Pods'
//! ladder ending at `completed`, `job-failed` and `pod-failed` with the
//! kubelet's words, and the completed neighbour Job that stays quiet.

use crate::common;
use common::mdiag;

use serde_json::Value;

fn case(name: &str) -> String {
    format!("fixtures/cases/{name}.yaml")
}

/// `trace TARGET --snapshot FILE -o json`: the exit code and the report.
fn trace(target: &str, file: &str) -> (i32, Value) {
    let out = mdiag()
        .args(["trace", target, "--snapshot", &case(file), "-o", "json"])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{target} on {file}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

/// `trace TARGET --snapshot FILE`, as a person reads it.
fn human(target: &str, file: &str) -> (i32, String) {
    let out = mdiag()
        .args(["trace", target, "--snapshot", &case(file)])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The headline: the line that starts with the state's mark.
fn headline(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with(['✘', '✔', '!', '?', '⧗']))
        .unwrap_or("")
}

fn ids(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

fn steps(report: &Value) -> Vec<&str> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect()
}

fn finding<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {report}"))
}

fn evidence(f: &Value) -> String {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{} {} = {}", e["object"], e["field"], e["value"]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_job_whose_pod_was_oom_killed_failed_and_says_so_once() {
    let (code, r) = trace("job/weights-fetch", "job-pod-oom");
    assert_eq!(code, 1);
    assert_eq!(r["verdict"]["state"], "not-serving");
    assert_eq!(
        steps(&r),
        ["job", "stored", "bound", "started", "completed"]
    );
    assert_eq!(r["verdict"]["last_step"], "started");
    assert_eq!(r["verdict"]["missing"], "completed");
    let got = ids(&r);
    assert_eq!(got[0], "job-failed", "{got:?}");
    assert!(got.contains(&"pod-failed"), "{got:?}");
    // One lead for the kill: pod-failed quotes OOMKilled, oom-killed is not made too.
    assert!(!got.contains(&"oom-killed"), "{got:?}");
    let job = evidence(finding(&r, "job-failed"));
    assert!(job.contains("BackoffLimitExceeded"), "{job}");
    assert!(job.contains("1 / 0"), "{job}");
    let pod = finding(&r, "pod-failed");
    assert_eq!(pod["subject"]["name"], "weights-fetch-x7k2p");
    let e = evidence(pod);
    assert!(e.contains("reason OOMKilled exitCode 137"), "{e}");
    assert!(e.contains("512Mi"), "{e}");
    assert!(e.contains("Never"), "{e}");
    // Never restarted: its failed run is its current log, not --previous.
    let next = r["verdict"]["next"].to_string();
    assert!(next.contains("describe") || next.contains("logs"), "{next}");
    assert!(!next.contains("--previous"), "{next}");
    let (code, text) = human("job/weights-fetch", "job-pod-oom");
    assert_eq!(code, 1);
    let first = headline(&text);
    assert!(!first.is_empty(), "{text}");
    assert!(first.contains("FAILED"), "{text}");
    assert!(first.contains("[job-failed]"), "{text}");
    assert!(!text.contains("terminating"), "{text}");
    assert!(text.contains("phase Failed"), "{text}");
}

#[test]
fn a_job_pod_traced_as_the_pod_is_traced_as_its_job() {
    let (code, r) = trace("pod/weights-fetch-x7k2p", "job-pod-oom");
    assert_eq!(code, 1);
    assert_eq!(r["verdict"]["state"], "not-serving");
    assert_eq!(r["verdict"]["last_step"], "started");
    assert_eq!(r["verdict"]["missing"], "completed");
    assert!(ids(&r).contains(&"pod-failed"));
    let pod = &r["pods"][0];
    assert_eq!(pod["terminating"], false, "{pod}");
    assert_eq!(pod["moments"]["started"], "2026-11-28T09:00:04Z", "{pod}");
}

#[test]
fn a_bare_pod_that_exited_1_failed_with_the_exit_quoted() {
    let (code, r) = trace("pod/ckpt-convert", "pod-failed-exit-1");
    assert_eq!(code, 1);
    assert_eq!(r["verdict"]["state"], "not-serving");
    assert_eq!(steps(&r), ["stored", "bound", "started", "completed"]);
    assert_eq!(r["verdict"]["last_step"], "started");
    assert_eq!(ids(&r), ["pod-failed"]);
    let e = evidence(finding(&r, "pod-failed"));
    assert!(e.contains("reason Error exitCode 1"), "{e}");
    assert!(!e.contains("limits.memory"), "{e}");
    let (_, text) = human("pod/ckpt-convert", "pod-failed-exit-1");
    assert!(headline(&text).contains("FAILED"), "{text}");
    assert!(!text.contains("No findings"), "{text}");
}

#[test]
fn a_completed_job_is_complete_and_exits_0() {
    for (target, file) in [
        ("job/vocab-export", "job-complete"),
        // The neighbour of every case: a Job that completed stays quiet.
        ("job/tokenizer-build", "job-complete"),
        ("job/tokenizer-build", "job-pod-oom"),
        ("job/tokenizer-build", "pod-failed-exit-1"),
        ("job/tokenizer-build", "cronjob-last-failed"),
    ] {
        let (code, r) = trace(target, file);
        assert_eq!(code, 0, "{target} on {file}: {r}");
        assert_eq!(r["verdict"]["state"], "serving", "{target} on {file}");
        assert_eq!(r["healthy"], true, "{target} on {file}");
        assert!(ids(&r).is_empty(), "{target} on {file}: {:?}", ids(&r));
        assert_eq!(r["verdict"]["last_step"], "completed", "{target} on {file}");
        let pod = &r["pods"][0];
        assert_eq!(pod["last_step"], "completed", "{pod}");
    }
    let (code, text) = human("job/vocab-export", "job-complete");
    assert_eq!(code, 0);
    assert!(headline(&text).contains("COMPLETE"), "{text}");
}

#[test]
fn a_cron_job_is_judged_by_its_last_run() {
    let (code, r) = trace("cronjob/index-sync", "cronjob-last-failed");
    assert_eq!(code, 1);
    assert_eq!(r["verdict"]["state"], "not-serving");
    assert_eq!(r["target"]["kind"], "CronJob");
    let got = ids(&r);
    assert_eq!(got[0], "job-failed", "{got:?}");
    let job = finding(&r, "job-failed");
    assert_eq!(job["subject"]["name"], "index-sync-29400600");
    let pod = finding(&r, "pod-failed");
    assert_eq!(pod["subject"]["name"], "index-sync-29400600-q4n8v");
    assert!(evidence(pod).contains("reason Error exitCode 2"));
    // The earlier run completed: its Pod is not on the ladder.
    let names: Vec<&str> = r["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["index-sync-29400600-q4n8v"]);
    // The schedule and the number of runs beside the Job's rung.
    let note = r["steps"][0]["note"].as_str().unwrap();
    assert!(note.contains("schedule 0 * * * *"), "{note}");
    assert!(note.contains("index-sync-29400600"), "{note}");
    assert!(note.contains("2 runs"), "{note}");
    assert!(!note.contains("suspended"), "{note}");
    // The earlier run itself completed.
    let (code, r) = trace("job/index-sync-29400540", "cronjob-last-failed");
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["verdict"]["state"], "serving");
}

#[test]
fn triage_lists_the_failed_job_and_cron_job_as_rows() {
    let out = mdiag()
        .args(["triage", "-A", "--snapshot", &case("cronjob-last-failed")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cj/index-sync"), "{text}");
    assert!(text.contains("job-failed"), "{text}");
    let out = mdiag()
        .args(["triage", "-A", "--snapshot", &case("job-pod-oom")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("job/weights-fetch"), "{text}");
}

/// Every finding of a report that is a warning or an error.
fn loud(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

#[test]
fn what_a_real_kubelet_and_job_controller_write_is_judged_as_the_contract_says() {
    // Kubernetes v1.35.8's shapes, as the live ring's real node showed them.
    let (code, r) = trace("job/shard-merge", "job-oom-real-node");
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["verdict"]["state"], "not-serving");
    assert_eq!(r["verdict"]["lead"], "job-failed");
    let got = ids(&r);
    assert!(!got.contains(&"oom-killed"), "{got:?}");
    let e = evidence(finding(&r, "pod-failed"));
    assert!(e.contains("reason OOMKilled exitCode 137"), "{e}");
    assert!(e.contains("32Mi"), "{e}");
    let (code, r) = trace("job/manifest-check", "job-oom-real-node");
    assert_eq!((code, r["verdict"]["state"].as_str()), (0, Some("serving")));
    assert!(loud(&r).is_empty(), "{r}");

    let (code, r) = trace("cronjob/embed-refresh", "cronjob-real-node");
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["verdict"]["lead"], "job-failed");
    assert_eq!(
        finding(&r, "job-failed")["subject"]["name"],
        "embed-refresh-29931101"
    );
    let e = evidence(finding(&r, "pod-failed"));
    assert!(e.contains("reason Error exitCode 1"), "{e}");
    let note = r["steps"][0]["note"].as_str().unwrap();
    assert!(note.contains("suspended"), "{note}");
    let (code, r) = trace("cronjob/cache-warm", "cronjob-real-node");
    assert_eq!((code, r["verdict"]["state"].as_str()), (0, Some("serving")));
    assert!(loud(&r).is_empty(), "{r}");
    // Suspended before it ever ran: no run yet is progressing, and quiet.
    let (code, r) = trace("cronjob/report-nightly", "cronjob-real-node");
    assert_eq!(
        (code, r["verdict"]["state"].as_str()),
        (3, Some("progressing"))
    );
    assert!(ids(&r).is_empty(), "{r}");
}

/// `mdiag snapshot TARGET` of a fixture, then `trace TARGET` on what it
/// wrote: the file and the text written.
fn snapshot_of(target: &str, file: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kept.yaml");
    let run = mdiag()
        .args([
            "snapshot",
            target,
            "--snapshot",
            &case(file),
            "--output-file",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "snapshot {target} of {file}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let path = out.to_str().unwrap().to_string();
    (dir, path, text)
}

#[test]
fn a_snapshot_of_a_job_or_cron_job_keeps_it_and_replays_to_the_same_verdict() {
    // It once kept the Pods and dropped the Job and CronJob, so the replay
    // said the target was not there (exit 5).
    for (target, file, kept) in [
        (
            "job/shard-merge",
            "job-oom-real-node",
            "BackoffLimitExceeded",
        ),
        ("job/manifest-check", "job-oom-real-node", "Job completed"),
        (
            "cronjob/embed-refresh",
            "cronjob-real-node",
            "condition: Failed",
        ),
        (
            "cronjob/cache-warm",
            "cronjob-real-node",
            "condition: Complete",
        ),
        (
            "cronjob/report-nightly",
            "cronjob-real-node",
            "report-nightly",
        ),
        (
            "job/embed-refresh-29931101",
            "cronjob-real-node",
            "condition: Failed",
        ),
        ("job/weights-fetch", "job-pod-oom", "weights-fetch"),
        (
            "cronjob/index-sync",
            "cronjob-last-failed",
            "index-sync-29400540",
        ),
    ] {
        let (want_code, want) = trace(target, file);
        let (_dir, path, text) = snapshot_of(target, file);
        // The controllers' Events about the Job and CronJob, and every
        // run of a CronJob, stay beside them.
        assert!(
            text.contains(kept),
            "{target} of {file}: no {kept:?} in\n{text}"
        );
        let out = mdiag()
            .args(["trace", target, "--snapshot", &path, "-o", "json"])
            .output()
            .unwrap();
        let got: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{target} of {file} replayed: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(out.status.code(), Some(want_code), "{target} of {file}");
        for key in ["state", "last_step", "lead"] {
            assert_eq!(
                got["verdict"][key], want["verdict"][key],
                "{target} of {file}: {key}"
            );
        }
        assert_eq!(ids(&got), ids(&want), "{target} of {file}");
        // The Job's rung and its note (the runs counted) are the same.
        assert_eq!(got["steps"][0], want["steps"][0], "{target} of {file}");
    }
}
