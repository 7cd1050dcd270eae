//! A lone workload judged from its own status (docs/lone-objects.md), each
//! stage as the peers answer it: `kubectl rollout status` (its status
//! viewers check, in order: the generation observed, the progress
//! deadline, updated against desired, old replicas pending termination,
//! available against updated; for a StatefulSet ready against desired,
//! the partition, the update revision; for a DaemonSet updated and
//! available against desiredNumberScheduled) and kstatus for a
//! ReplicaSet. Each file is what `kubectl get KIND NAME -o yaml` prints:
//! the workload and nothing below it.
//!
//! Then the kinds kstatus (`sigs.k8s.io/cli-utils/pkg/kstatus/status`)
//! and Argo CD (`github.com/argoproj/gitops-engine/pkg/health`, and its
//! PodDisruptionBudget check) judge beside them: lone Pods and Jobs
//! traced, lone HPAs and PDBs triaged, and the workload shapes where Argo
//! CD answers differently from kubectl. Where mdiag answers differently
//! from the peer, a test below says why.

use crate::common::mdiag;
use serde_json::Value;

/// (file, target, namespace, the peer's answer, mdiag's state, its exit).
const CASES: &[(&str, &str, &str, &str, &str, i32)] = &[
    (
        "deployment-complete",
        "deploy/web",
        "shop",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "deployment-not-observed",
        "deploy/web",
        "shop",
        "waiting for spec update to be observed",
        "progressing",
        3,
    ),
    (
        "deployment-updating",
        "deploy/web",
        "shop",
        "1 out of 3 new replicas have been updated",
        "progressing",
        3,
    ),
    (
        "deployment-old-pending",
        "deploy/web",
        "shop",
        "1 old replicas are pending termination",
        "progressing",
        3,
    ),
    (
        "deployment-unavailable",
        "deploy/web",
        "shop",
        "2 of 3 updated replicas are available",
        "progressing",
        3,
    ),
    (
        "deployment-deadline",
        "deploy/web",
        "shop",
        "error: exceeded its progress deadline",
        "degraded",
        1,
    ),
    (
        "deployment-deadline-none-available",
        "deploy/web",
        "shop",
        "error: exceeded its progress deadline",
        "not-serving",
        1,
    ),
    (
        "deployment-scaled-to-zero",
        "deploy/web",
        "shop",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "statefulset-complete",
        "sts/shard",
        "serve",
        "rolling update complete 3 pods at revision shard-7c9d",
        "serving",
        0,
    ),
    (
        "statefulset-not-observed",
        "sts/shard",
        "serve",
        "waiting for statefulset spec update to be observed",
        "progressing",
        3,
    ),
    (
        "statefulset-not-ready",
        "sts/shard",
        "serve",
        "Waiting for 2 pods to be ready",
        "progressing",
        3,
    ),
    (
        "statefulset-rolling",
        "sts/shard",
        "serve",
        "waiting for statefulset rolling update to complete",
        "progressing",
        3,
    ),
    (
        "statefulset-partition-done",
        "sts/shard",
        "serve",
        "partitioned roll out complete: 1 new pods have been updated",
        "serving",
        0,
    ),
    (
        "daemonset-complete",
        "ds/model-prefetch",
        "modeldock-nodes",
        "successfully rolled out",
        "serving",
        0,
    ),
    (
        "daemonset-not-observed",
        "ds/model-prefetch",
        "modeldock-nodes",
        "waiting for daemon set spec update to be observed",
        "progressing",
        3,
    ),
    (
        "daemonset-updating",
        "ds/model-prefetch",
        "modeldock-nodes",
        "2 out of 4 new pods have been updated",
        "progressing",
        3,
    ),
    (
        "daemonset-unavailable",
        "ds/model-prefetch",
        "modeldock-nodes",
        "3 of 4 updated pods are available",
        "progressing",
        3,
    ),
    (
        "replicaset-complete",
        "rs/cache",
        "shop",
        "kstatus: Current",
        "serving",
        0,
    ),
    (
        "replicaset-not-observed",
        "rs/cache",
        "shop",
        "kstatus: InProgress",
        "progressing",
        3,
    ),
    (
        "replicaset-unavailable",
        "rs/cache",
        "shop",
        "kstatus: InProgress (Available: 1/2)",
        "progressing",
        3,
    ),
    (
        "replicaset-scaling",
        "rs/cache",
        "shop",
        "kstatus: InProgress (Replicas: 2/3)",
        "progressing",
        3,
    ),
];

fn traced(file: &str, target: &str, ns: &str, json: bool) -> (i32, String) {
    let path = format!("fixtures/lone/{file}.yaml");
    let mut args = vec![
        "-n",
        ns,
        "trace",
        target,
        "--snapshot",
        path.as_str(),
        "--width",
        "400",
    ];
    if json {
        args.extend(["-o", "json"]);
    }
    let out = mdiag().args(&args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn every_stage_of_a_lone_workload_judges_as_its_peer_answers() {
    let mut wrong = Vec::new();
    for (file, target, ns, peer, state, exit) in CASES {
        let (code, text) = traced(file, target, ns, true);
        let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let verdict = &report["verdict"];
        let got = (verdict["state"].as_str().unwrap_or("?"), code);
        if got != (*state, *exit) || verdict["basis"] != "workload-status" {
            wrong.push(format!(
                "{file} (peer: {peer}): want {state}/{exit} by workload-status, got {}/{} by {}",
                got.0, got.1, verdict["basis"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The headline says what the verdict rests on, and the stage in the
/// words the peer uses.
#[test]
fn the_headline_says_it_rests_on_the_workloads_status() {
    for (file, target, ns, want) in [
        (
            "deployment-complete",
            "deploy/web",
            "shop",
            "SERVING  3/3 available, rollout complete (by Deployment status; ReplicaSets, Pods, Services, EndpointSlices: not in the file)",
        ),
        (
            "deployment-old-pending",
            "deploy/web",
            "shop",
            "PROGRESSING  1 old replica pending termination (by Deployment status;",
        ),
        (
            "deployment-deadline",
            "deploy/web",
            "shop",
            "progress deadline exceeded, 3/3 available; ",
        ),
        (
            "statefulset-not-ready",
            "sts/shard",
            "serve",
            "PROGRESSING  1 of 3 Pods ready (by StatefulSet status;",
        ),
        (
            "daemonset-updating",
            "ds/model-prefetch",
            "modeldock-nodes",
            "PROGRESSING  2 of 4 new replicas updated (by DaemonSet status;",
        ),
    ] {
        let (_, text) = traced(file, target, ns, false);
        // The headline is the line after the file's name and clock.
        let headline = text.lines().nth(2).unwrap_or("");
        assert!(headline.contains(want), "{file}: {want:?} not in\n{text}");
    }
}

/// With the Pods in the input, the Pods decide, not the status: a
/// Deployment whose status says complete while its new Pods crash-loop is
/// not serving (the status is stale or summarises too kindly); this is
/// where mdiag's answer is better than the status alone.
#[test]
fn with_the_pods_there_the_pods_decide() {
    let out = mdiag()
        .args([
            "trace",
            "deploy/web",
            "-n",
            "shop",
            "--snapshot",
            "fixtures/cases/plain-deployment-broken.yaml",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(report["verdict"]["basis"], "workload-status");
    assert_ne!(report["verdict"]["state"], "serving");
}

/// A Pod Running and Ready without `spec.nodeName` (a test table's shape)
/// was bound all the same: it reaches ready, not `stored`.
#[test]
fn a_ready_pod_without_a_node_name_is_ready() {
    let (code, text) = traced("pod-ready-no-node", "pod/probe-runner", "shop", true);
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["verdict"]["state"], "serving", "{report}");
    assert_eq!(report["verdict"]["basis"], "pods");
    assert_eq!(report["verdict"]["last_step"], "ready");
    assert_eq!(code, 0);
}

/// A lone object of the peers' tables: (file, target, the peer and its
/// answer, mdiag's state, its exit, its basis, the lead finding's id).
struct Lone {
    file: &'static str,
    target: &'static str,
    peer: &'static str,
    state: &'static str,
    exit: i32,
    basis: &'static str,
    lead: Option<&'static str>,
}

const fn lone(
    file: &'static str,
    target: &'static str,
    peer: &'static str,
    (state, exit): (&'static str, i32),
    basis: &'static str,
    lead: Option<&'static str>,
) -> Lone {
    Lone {
        file,
        target,
        peer,
        state,
        exit,
        basis,
        lead,
    }
}

/// kstatus's `podConditions` and Argo CD's `getCorev1PodHealth`, on a bare
/// Pod (`kubectl get pod ledger -o yaml`): the Pod is read, no Service, so
/// Ready Pods are counted.
const PODS: &[Lone] = &[
    lone(
        "pod-not-observed",
        "pod/ledger",
        "kstatus InProgress (PodNotObserved)",
        ("not-serving", 1),
        "pods",
        None,
    ),
    lone(
        "pod-pending",
        "pod/ledger",
        "kstatus InProgress (PodPending); Argo CD Progressing",
        ("not-serving", 1),
        "pods",
        None,
    ),
    lone(
        "pod-unschedulable",
        "pod/ledger",
        "kstatus Failed (PodUnschedulable); Argo CD Progressing",
        ("not-serving", 1),
        "pods",
        Some("pod-unschedulable"),
    ),
    lone(
        "pod-running-not-ready",
        "pod/ledger",
        "kstatus InProgress (PodRunningNotReady); Argo CD Progressing",
        ("not-serving", 1),
        "pods",
        None,
    ),
    lone(
        "pod-ready",
        "pod/ledger",
        "kstatus Current; Argo CD Healthy",
        ("serving", 0),
        "pods",
        None,
    ),
    lone(
        "pod-crash-loop",
        "pod/ledger",
        "kstatus Failed (ContainerCrashLooping); Argo CD Degraded",
        ("not-serving", 1),
        "pods",
        Some("crash-loop"),
    ),
    lone(
        "pod-exited-error",
        "pod/ledger",
        "kstatus InProgress (PodRunningNotReady); Argo CD Degraded",
        ("not-serving", 1),
        "pods",
        Some("crash-loop"),
    ),
    lone(
        "pod-image-pull-backoff",
        "pod/ledger",
        "kstatus InProgress (PodPending); Argo CD Degraded",
        ("not-serving", 1),
        "pods",
        Some("image-pull-failed"),
    ),
    lone(
        "pod-terminating",
        "pod/ledger",
        "Argo CD Progressing (Pending deletion)",
        ("not-serving", 1),
        "pods",
        None,
    ),
    lone(
        "pod-succeeded",
        "pod/ledger-migrate",
        "kstatus Current; Argo CD Healthy",
        ("serving", 0),
        "pods",
        None,
    ),
    lone(
        "pod-failed",
        "pod/ledger-migrate",
        "kstatus Current; Argo CD Degraded",
        ("not-serving", 1),
        "pods",
        Some("pod-failed"),
    ),
    lone(
        "pod-running-to-completion",
        "pod/ledger-migrate",
        "kstatus Current (Ready); Argo CD Progressing (restartPolicy Never)",
        ("progressing", 3),
        "pods",
        None,
    ),
];

/// kstatus's `jobConditions` and Argo CD's `getBatchv1JobHealth`, on a
/// bare Job: its Pods are not in the file, so the Job's status decides.
const JOBS: &[Lone] = &[
    lone(
        "job-not-started",
        "job/ledger-backfill",
        "kstatus InProgress (JobNotStarted); Argo CD Progressing",
        ("progressing", 3),
        "workload-status",
        None,
    ),
    lone(
        "job-running",
        "job/ledger-backfill",
        "kstatus Current; Argo CD Progressing",
        ("progressing", 3),
        "workload-status",
        None,
    ),
    lone(
        "job-retrying",
        "job/ledger-backfill",
        "kstatus Current; Argo CD Progressing",
        ("degraded", 1),
        "workload-status",
        None,
    ),
    lone(
        "job-complete",
        "job/ledger-backfill",
        "kstatus Current; Argo CD Healthy",
        ("serving", 0),
        "workload-status",
        None,
    ),
    lone(
        "job-failed",
        "job/ledger-backfill",
        "kstatus Failed (JobFailed); Argo CD Degraded",
        ("not-serving", 1),
        "workload-status",
        Some("job-failed"),
    ),
    lone(
        "job-suspended",
        "job/ledger-backfill",
        "kstatus Current; Argo CD Suspended",
        ("progressing", 3),
        "workload-status",
        None,
    ),
];

/// Argo CD's Deployment, StatefulSet, DaemonSet and ReplicaSet checks
/// where they answer otherwise than `kubectl rollout status` (its other
/// cases are the table above).
const ARGO_WORKLOADS: &[Lone] = &[
    lone(
        "deployment-paused",
        "deploy/web",
        "Argo CD Suspended",
        ("serving", 0),
        "workload-status",
        Some("rollout-paused"),
    ),
    lone(
        "statefulset-on-delete",
        "sts/shard",
        "Argo CD Healthy",
        ("serving", 0),
        "workload-status",
        None,
    ),
    lone(
        "daemonset-on-delete",
        "ds/model-prefetch",
        "Argo CD Healthy",
        ("serving", 0),
        "workload-status",
        None,
    ),
    lone(
        "daemonset-on-delete-unavailable",
        "ds/model-prefetch",
        "Argo CD Healthy",
        ("progressing", 3),
        "workload-status",
        None,
    ),
    lone(
        "replicaset-replica-failure",
        "rs/cache",
        "Argo CD Degraded; kstatus InProgress (ReplicaFailure)",
        ("degraded", 1),
        "workload-status",
        Some("pods-not-created"),
    ),
];

fn namespace_of(target: &str) -> &'static str {
    match target.split('/').next() {
        Some("sts") => "serve",
        Some("ds") => "modeldock-nodes",
        _ => "shop",
    }
}

fn judged_wrong(cases: &[Lone]) -> Vec<String> {
    let mut wrong = Vec::new();
    for c in cases {
        let (code, text) = traced(c.file, c.target, namespace_of(c.target), true);
        let report: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", c.file));
        let verdict = &report["verdict"];
        let lead = verdict["lead"].as_str();
        let got = (
            verdict["state"].as_str().unwrap_or("?"),
            code,
            verdict["basis"].as_str().unwrap_or("?"),
            lead,
        );
        if got != (c.state, c.exit, c.basis, c.lead) {
            wrong.push(format!(
                "{} (peer: {}): want {}/{} by {} lead {:?}, got {got:?}",
                c.file, c.peer, c.state, c.exit, c.basis, c.lead
            ));
        }
    }
    wrong
}

#[test]
fn every_lone_pod_job_and_argo_shape_judges_as_the_table_says() {
    let mut wrong = judged_wrong(PODS);
    wrong.extend(judged_wrong(JOBS));
    wrong.extend(judged_wrong(ARGO_WORKLOADS));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn report(file: &str, target: &str) -> Value {
    let (_, text) = traced(file, target, namespace_of(target), true);
    serde_json::from_str(&text).unwrap()
}

fn summary(file: &str, target: &str) -> String {
    report(file, target)["verdict"]["summary"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Where the peers say a Pod is still on its way (pending, not observed,
/// running not ready, being deleted), mdiag says `not-serving`: its state
/// answers what users get now, and a Pod that is not Ready gives them
/// nothing (docs/contract.md#states). It makes no finding, so the headline
/// says no cause is in the evidence, and the ladder says where the Pod
/// stands, which the peers' one word does not.
#[test]
fn a_pod_on_its_way_is_not_ready_now_with_no_cause_and_its_step_named() {
    for (file, last, missing) in [
        ("pod-not-observed", "stored", "bound"),
        ("pod-pending", "bound", "started"),
        ("pod-running-not-ready", "started", "ready"),
        ("pod-terminating", "bound", "started"),
    ] {
        let r = report(file, "pod/ledger");
        assert_eq!(r["findings"].as_array().map(Vec::len), Some(0), "{file}");
        assert_eq!(r["verdict"]["last_step"], last, "{file}");
        assert_eq!(r["verdict"]["missing"], missing, "{file}");
        let s = r["verdict"]["summary"].as_str().unwrap();
        assert!(
            s.starts_with("NOT READY  0/1 ready") && s.contains("no cause is in the evidence"),
            "{file}: {s}"
        );
    }
    // The Pod being deleted is shown as such beside its step.
    let (_, text) = traced("pod-terminating", "pod/ledger", "shop", false);
    assert!(text.contains("terminating"), "{text}");
}

/// kstatus calls a Failed Pod `Current` (it finished reconciling); the
/// run failed, and mdiag says so with the exit code, as Argo CD does.
#[test]
fn a_failed_run_is_failed_not_current() {
    let r = report("pod-failed", "pod/ledger-migrate");
    let lead = &r["findings"][0];
    assert_eq!(lead["id"], "pod-failed");
    let evidence = lead["evidence"].to_string();
    assert!(evidence.contains("exitCode 1"), "{evidence}");
    assert!(
        r["verdict"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("FAILED  0/1 completed"),
        "{r}"
    );
}

/// A run-to-completion Pod that is Running and Ready is not done: kstatus
/// reads Ready as `Current`, Argo CD reads restartPolicy Never as
/// `Progressing`, and mdiag follows the run (its ladder ends at
/// completed). The one that exited 0 is complete.
#[test]
fn a_ready_run_is_still_running_and_a_succeeded_one_complete() {
    assert_eq!(
        summary("pod-running-to-completion", "pod/ledger-migrate"),
        "RUNNING  0/1 completed, still running"
    );
    assert_eq!(
        summary("pod-succeeded", "pod/ledger-migrate"),
        "COMPLETE  1/1 completed"
    );
    // A Pod that restarts forever is not a run: Ready is serving.
    assert!(summary("pod-ready", "pod/ledger").starts_with("READY  1/1"));
}

/// A Job's headline counts its own status (its Pods are not in the file)
/// and says so.
#[test]
fn a_lone_job_says_it_rests_on_the_jobs_status() {
    let by = " (by Job status; Pods: not in the file)";
    for (file, want) in [
        ("job-not-started", "RUNNING  0/1 completed, not started yet"),
        ("job-running", "RUNNING  0/1 completed, still running"),
        ("job-complete", "COMPLETE  1/1 completed"),
        (
            "job-failed",
            "FAILED  0/1 completed, 1 failed; Job failed [job-failed]",
        ),
        (
            "job-suspended",
            "SUSPENDED  0/1 completed; no Pod starts until it is resumed",
        ),
    ] {
        let r = report(file, "job/ledger-backfill");
        assert_eq!(r["verdict"]["summary"], format!("{want}{by}"), "{file}");
        assert_eq!(r["verdict"]["serving"]["status"]["kind"], "Job", "{file}");
    }
    // Read from the status, not from Pods that are not there.
    let r = report("job-complete", "job/ledger-backfill");
    assert_eq!(r["verdict"]["serving"]["status"]["stage"], "complete");
    assert_eq!(r["verdict"]["serving"]["status"]["available"], 1);
}

/// A Job that lost a Pod and runs another inside its back-off limit: the
/// peers call it running (kstatus `Current`, Argo CD `Progressing`); mdiag
/// calls it degraded, as it reads a Job whose runs failed but can still
/// complete (docs/contract.md), because its status counts the failed Pod.
#[test]
fn a_job_with_a_failed_run_inside_its_budget_is_degraded() {
    let r = report("job-retrying", "job/ledger-backfill");
    assert_eq!(r["verdict"]["state"], "degraded");
    assert_eq!(r["verdict"]["serving"]["status"]["old"], 1);
    assert_eq!(
        r["verdict"]["summary"],
        "DEGRADED  0/1 completed, 1 failed, still running (by Job status; Pods: not in the file)"
    );
    // The Job step keeps the budget beside the count.
    let (_, text) = traced("job-retrying", "job/ledger-backfill", "shop", false);
    assert!(text.contains("1 failed (backoffLimit 2)"), "{text}");
}

/// Argo CD calls a paused Deployment `Suspended`; mdiag says what users
/// get (every replica on the current template serves) and notes the pause
/// as info: the next change will not roll out.
#[test]
fn a_paused_deployment_serves_and_notes_the_pause() {
    let r = report("deployment-paused", "deploy/web");
    let lead = &r["findings"][0];
    assert_eq!(lead["id"], "rollout-paused");
    assert_eq!(lead["severity"], "info");
    assert_eq!(r["verdict"]["state"], "serving");
}

/// Argo CD calls any OnDelete DaemonSet `Healthy`; mdiag agrees once every
/// Pod is available and counts the held ones as current, but not while one
/// is unavailable, which Argo CD does not check.
#[test]
fn an_on_delete_daemon_set_is_complete_only_when_available() {
    assert!(
        summary("daemonset-on-delete", "ds/model-prefetch")
            .starts_with("SERVING  4/4 available, rollout complete (by DaemonSet status;")
    );
    assert!(
        summary("daemonset-on-delete-unavailable", "ds/model-prefetch")
            .starts_with("PROGRESSING  3 of 4 updated replicas available (by DaemonSet status;")
    );
}

/// kstatus calls a ReplicaSet with ReplicaFailure `InProgress`; Argo CD
/// calls it Degraded, and so does mdiag, quoting the controller's reason.
#[test]
fn a_replica_set_that_cannot_create_pods_quotes_why() {
    let r = report("replicaset-replica-failure", "rs/cache");
    let lead = r["findings"][0].to_string();
    assert!(lead.contains("exceeded quota: shop-pods"), "{lead}");
}

/// `triage --snapshot FILE -o json`: the exit code and the rows outside
/// any workload as (kind, lead id, lead severity).
fn triaged(file: &str) -> (i32, Vec<(String, String, String)>, Value) {
    let path = format!("fixtures/lone/{file}.yaml");
    let out = mdiag()
        .args(["triage", "--snapshot", path.as_str(), "-o", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{file}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let rows = report["outside"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let f = &o["findings"][0];
            let s = |v: &Value| v.as_str().unwrap_or("").to_string();
            (s(&o["kind"]), s(&f["id"]), s(&f["severity"]))
        })
        .collect();
    (out.status.code().unwrap_or(-1), rows, report)
}

/// The row mdiag gives a lone HPA or PDB: its lead finding's id and
/// severity.
type Row = Option<(&'static str, &'static str)>;

/// Argo CD's HPA and PDB checks and kstatus's PDB rule, on a lone HPA or
/// PDB triaged: (file, the peer's answer, mdiag's exit, its row, none when
/// nothing fails).
const HPAS_AND_PDBS: &[(&str, &str, i32, Row)] = &[
    ("hpa-healthy", "Argo CD Healthy", 0, None),
    (
        "hpa-target-unreadable",
        "Argo CD Degraded (FailedGetScale)",
        1,
        Some(("hpa-target-missing", "error")),
    ),
    (
        "hpa-metrics-failing",
        "Argo CD Degraded (FailedGetResourceMetric)",
        1,
        Some(("hpa-metrics-unavailable", "warning")),
    ),
    (
        "hpa-v1-metrics-failing",
        "Argo CD Degraded (v1 annotation)",
        1,
        Some(("hpa-metrics-unavailable", "warning")),
    ),
    ("hpa-scaling-disabled", "Argo CD Healthy", 0, None),
    ("hpa-no-able-to-scale", "Argo CD Progressing", 0, None),
    ("hpa-v1-no-conditions", "Argo CD Progressing", 0, None),
    (
        "hpa-at-max",
        "Argo CD Healthy (ScalingLimited)",
        1,
        Some(("hpa-at-max", "warning")),
    ),
    ("pdb-allowed", "kstatus Current; Argo CD Healthy", 0, None),
    (
        "pdb-insufficient",
        "kstatus Current; Argo CD Healthy",
        0,
        Some(("pdb-blocking", "info")),
    ),
    (
        "pdb-sync-failed",
        "Argo CD Degraded (SyncFailed)",
        0,
        Some(("pdb-blocking", "info")),
    ),
    (
        "pdb-selects-nothing",
        "kstatus Current; Argo CD Healthy",
        0,
        None,
    ),
    (
        "pdb-not-observed",
        "kstatus InProgress; Argo CD Healthy",
        0,
        None,
    ),
];

#[test]
fn every_lone_hpa_and_pdb_triages_as_the_table_says() {
    let mut wrong = Vec::new();
    for (file, peer, exit, row) in HPAS_AND_PDBS {
        let (code, rows, _) = triaged(file);
        let got: Vec<(&str, &str)> = rows
            .iter()
            .map(|(_, id, sev)| (id.as_str(), sev.as_str()))
            .collect();
        let want: Vec<(&str, &str)> = row.iter().copied().collect();
        if code != *exit || got != want {
            wrong.push(format!(
                "{file} (peer: {peer}): want exit {exit} rows {want:?}, got {code} {got:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Where mdiag's answer on a lone HPA differs from Argo CD's:
/// - at its maximum and wanting more (ScalingLimited True,
///   TooManyReplicas), Argo CD reads Healthy; mdiag warns, because demand
///   is above what the HPA may give (its evidence says so);
/// - without an AbleToScale condition, or a v1 HPA with no conditions at
///   all, Argo CD waits (Progressing); nothing in them fails, and mdiag
///   says what it checked and exits 0.
#[test]
fn an_hpa_at_its_maximum_warns_and_one_with_nothing_failing_is_checked() {
    let (_, rows, report) = triaged("hpa-at-max");
    assert_eq!(rows[0].0, "HorizontalPodAutoscaler");
    let evidence = report["outside"][0]["findings"][0]["evidence"].to_string();
    assert!(evidence.contains("TooManyReplicas"), "{evidence}");
    for file in ["hpa-no-able-to-scale", "hpa-v1-no-conditions"] {
        let out = mdiag()
            .args([
                "triage",
                "--snapshot",
                &format!("fixtures/lone/{file}.yaml"),
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{file}: {text}");
        assert!(text.contains("1 HPA"), "{file}: {text}");
    }
}

/// A PDB never explains why a workload does not serve, only why a drain
/// hangs (the catalogue's `pdb-blocking`), so a PDB with no room is info,
/// not Argo CD's Degraded. One its controller could not compute
/// (SyncFailed) counts no Pod, yet blocks every eviction of what it
/// selects: it gets the row, with the condition quoted. Its neighbour that
/// selects nothing stays quiet.
#[test]
fn a_pdb_that_failed_to_sync_is_noted_with_its_reason() {
    let (code, rows, report) = triaged("pdb-sync-failed");
    assert_eq!(code, 0);
    assert_eq!(rows.len(), 1);
    let evidence = report["outside"][0]["findings"][0]["evidence"].to_string();
    assert!(evidence.contains("SyncFailed"), "{evidence}");
    assert!(
        evidence.contains("found no controllers for pod"),
        "{evidence}"
    );
    let (code, rows, _) = triaged("pdb-selects-nothing");
    assert_eq!((code, rows.len()), (0, 0));
}
