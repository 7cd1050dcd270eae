//! Live trials of `mdiag gate`: the binary, with the view-only kubeconfig
//! unless a trial says otherwise, waits on a real apiserver while the
//! simulated nodes play out a rollout. Each trial checks the exit code, the
//! report's outcome and what decided it, and, where the issue sets a time
//! budget, how long after the decisive moment the verdict came (from the
//! cluster's own timestamps, which have one-second precision).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use libtest_mimic::{Failed, Trial};
use mdiag_harness::cluster;
use mdiag_harness::helm::{self, Helm};
use serde_json::Value;

use super::{apply, namespace, spec, with_controller_paused, world};

/// Runs `mdiag gate` and returns its exit code, the JSON report on stdout,
/// and its stderr (the progress lines).
pub(super) fn gate(
    kubeconfig: &Path,
    ns: &str,
    extra: &[&str],
) -> Result<(i32, Value, String), Failed> {
    gate_on(kubeconfig, ns, "chart-demo", extra)
}

/// [`gate`] on any target.
pub(super) fn gate_on(
    kubeconfig: &Path,
    ns: &str,
    target: &str,
    extra: &[&str],
) -> Result<(i32, Value, String), Failed> {
    let mut args = vec![
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-n",
        ns,
        "gate",
        target,
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let out: Output = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(&args)
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| format!("running mdiag gate: {e}"))?;
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!("mdiag gate {args:?} exited {code} without a report ({e}): {stderr}")
    })?;
    Ok((code, report, stderr))
}

/// The gate failed on `image-pull-not-found` within 15 s of the first
/// pull-failure Event; returns how long after it.
fn failed_on_pull_within_budget(ns: &str, run: &(i32, Value, String)) -> Result<f64, Failed> {
    if decided_by(&run.1) != "image-pull-not-found" {
        return Err(format!("decided by {:?}", decided_by(&run.1)).into());
    }
    let lag = seconds(first_event(ns, "Failed")?, judged_at(&run.1)?);
    if lag > 15.0 {
        return Err(format!("failed {lag:.1}s after the first pull failure (budget 15 s)").into());
    }
    Ok(lag)
}

pub(super) fn viewer() -> PathBuf {
    world().layout.viewer_kubeconfig()
}

pub(super) fn expect(
    what: &str,
    (code, report, stderr): &(i32, Value, String),
    want_code: i32,
    want_outcome: &str,
) -> Result<(), Failed> {
    if *code != want_code || report["outcome"] != want_outcome {
        return Err(format!(
            "{what}: exit {code}, outcome {}, want {want_code} {want_outcome}\nreason: {}\nsummary: {}\nstderr:\n{stderr}",
            report["outcome"], report["gate"]["reason"], report["verdict"]["summary"]
        )
        .into());
    }
    Ok(())
}

pub(super) fn decided_by(report: &Value) -> &str {
    report["gate"]["decided_by"].as_str().unwrap_or("")
}

pub(super) fn judged_at(report: &Value) -> Result<Timestamp, Failed> {
    report["clock"]["now"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Failed::from("the report has no clock"))
}

pub(super) fn parse_time(v: &Value) -> Option<Timestamp> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// Seconds from `from` to `to`.
pub(super) fn seconds(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()) as f64 / 1000.0
}

/// The newest write to the Service's EndpointSlices: when the last endpoint
/// turned ready (the slice keeps no per-endpoint time; its managedFields
/// time is the write, to the second).
pub(super) fn last_slice_write(ns: &str) -> Result<Timestamp, Failed> {
    let out = world().kubectl(&[
        "get",
        "endpointslices",
        "-n",
        ns,
        "-l",
        "kubernetes.io/service-name=chart-demo",
        "--show-managed-fields",
        "-o",
        "json",
    ])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| {
            s["metadata"]["managedFields"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|m| parse_time(&m["time"]))
        .max()
        .ok_or_else(|| Failed::from("no EndpointSlice write time"))
}

/// The first time an Event with `reason` was recorded about the namespace's Pods.
pub(super) fn first_event(ns: &str, reason: &str) -> Result<Timestamp, Failed> {
    first_event_of(ns, "Pod", reason)
}

/// The first Event with `reason` about an object of `kind` in `ns`.
pub(super) fn first_event_of(ns: &str, kind: &str, reason: &str) -> Result<Timestamp, Failed> {
    let out = world().kubectl(&["get", "events", "-n", ns, "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["reason"] == reason && e["involvedObject"]["kind"] == kind)
        .filter_map(|e| parse_time(&e["firstTimestamp"]).or_else(|| parse_time(&e["eventTime"])))
        .min()
        .ok_or_else(|| format!("no {reason} event in {ns}").into())
}

/// A first rollout that serves, as before any upgrade.
fn serving_first(ns: &str) -> Result<(), Failed> {
    apply(ns, &spec("ready"))?;
    expect(
        "first rollout",
        &gate(&viewer(), ns, &["--timeout", "90s"])?,
        0,
        "converged",
    )
}

/// A broken rollout of `behavior` fails with `id`.
fn fails_with(name: &'static str, behavior: &'static str, id: &'static str) -> Trial {
    Trial::test(name, move || {
        let ns = namespace(name)?;
        serving_first(&ns)?;
        apply(&ns, &spec(behavior).arg("--broken"))?;
        let run = gate(&viewer(), &ns, &["--timeout", "90s"])?;
        expect("broken rollout", &run, 1, "failed")?;
        if decided_by(&run.1) != id {
            return Err(format!("decided by {:?}, want {id}", decided_by(&run.1)).into());
        }
        Ok(())
    })
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "gate-converges-within-a-second-of-the-last-endpoint",
            || {
                let ns = namespace("gate-healthy")?;
                apply(&ns, &spec("ready:3"))?;
                // The view role may not read Helm's Secrets: said, then judged without.
                let run = gate(
                    &viewer(),
                    &ns,
                    &["--timeout", "90s", "--helm-release", "chart-demo"],
                )?;
                expect("healthy rollout", &run, 0, "converged")?;
                let report = &run.1;
                let helm = &report["gate"]["helm"];
                if helm["read"] != false
                    || !helm["notes"][0]
                        .as_str()
                        .unwrap_or("")
                        .contains("cannot read the Helm release's Secret metadata")
                {
                    return Err(format!("helm section under view: {helm}").into());
                }
                if report["gate"]["checks"]
                    .as_array()
                    .is_none_or(|c| c.iter().any(|c| c["passed"] != true))
                {
                    return Err(
                        format!("a check did not pass: {}", report["gate"]["checks"]).into(),
                    );
                }
                // The slice write is truncated to the second: allow for it.
                let lag = seconds(last_slice_write(&ns)?, judged_at(report)?);
                if !(-1.0..=2.0).contains(&lag) {
                    return Err(format!(
                    "judged {lag:.2}s after the last EndpointSlice write (budget 1 s + 1 s of timestamp precision)"
                )
                .into());
                }
                eprintln!("  converged: judged {lag:.2}s after the last EndpointSlice write");
                Ok(())
            },
        ),
        Trial::test("gate-fails-fast-on-image-not-found", || {
            let ns = namespace("gate-pull")?;
            serving_first(&ns)?;
            let started = Instant::now();
            apply(&ns, &spec("pull-not-found").arg("--v2"))?;
            let run = gate(&viewer(), &ns, &["--timeout", "120s"])?;
            expect("image not found", &run, 1, "failed")?;
            let lag = failed_on_pull_within_budget(&ns, &run)?;
            eprintln!(
                "  image not found: verdict {lag:.1}s after the first pull failure, {:.1}s after the upgrade",
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }),
        Trial::test("gate-fails-fast-on-a-plain-deployment", || {
            // No ModelService: the Deployment controller is the only one that
            // must observe the change before the new Pods' symptoms count.
            let ns = namespace("gate-deploy")?;
            let deployment = serde_json::json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "bad", "namespace": ns},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "bad"}},
                    "template": {
                        "metadata": {"labels": {"app": "bad"},
                                     "annotations": {"sim.mdiag.dev/behavior": "pull-not-found"}},
                        "spec": {"containers": [{"name": "server", "image": "registry.example.com/bad:nope"}]},
                    },
                },
            });
            let file = world().layout.dir().join(format!("{ns}-deployment.json"));
            std::fs::write(&file, deployment.to_string()).map_err(|e| e.to_string())?;
            world()
                .kubectl(&["apply", "-f", file.to_str().unwrap()])
                .map_err(|e| format!("{e:#}"))?;
            let run = gate_on(&viewer(), &ns, "deploy/bad", &["--timeout", "90s"])?;
            expect("plain Deployment, image not found", &run, 1, "failed")?;
            let lag = failed_on_pull_within_budget(&ns, &run)?;
            eprintln!("  deploy/bad: failed {lag:.1}s after the first pull failure");
            Ok(())
        }),
        fails_with("gate-fails-on-crash-loop", "crash-loop", "crash-loop"),
        fails_with("gate-fails-on-oom", "oom", "oom-killed"),
        Trial::test("gate-fails-on-unschedulable", || {
            let ns = namespace("gate-gpu")?;
            let gpu = serde_json::json!({"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}});
            apply(&ns, &spec("ready").resources(gpu))?;
            let run = gate(&viewer(), &ns, &["--timeout", "90s"])?;
            expect("unschedulable", &run, 1, "failed")?;
            if decided_by(&run.1) != "pod-unschedulable" {
                return Err(format!("decided by {:?}", decided_by(&run.1)).into());
            }
            Ok(())
        }),
        Trial::test("gate-times-out-naming-what-it-waits-for", || {
            let ns = namespace("gate-timeout")?;
            apply(&ns, &spec("never-ready"))?;
            let dir = world().layout.dir().to_path_buf();
            let report_file = dir.join("gate-timeout.json");
            let junit_file = dir.join("gate-timeout.xml");
            let evidence_file = dir.join("gate-timeout-evidence.yaml.gz");
            let run = gate(
                &viewer(),
                &ns,
                &[
                    "--timeout",
                    "8s",
                    "--report",
                    report_file.to_str().unwrap(),
                    "--junit",
                    junit_file.to_str().unwrap(),
                    "--evidence",
                    evidence_file.to_str().unwrap(),
                ],
            )?;
            expect("never ready", &run, 3, "timed-out")?;
            let report = &run.1;
            // Not a terminal: one progress line per change, ending on what it waits for.
            // Each progress line is the headline (what users get, then where
            // the rollout stands) and what the gate waits for.
            let progress: Vec<&str> = run
                .2
                .lines()
                .filter(|l| l.starts_with('[') && l.contains("; waiting for "))
                .collect();
            if !progress.last().is_some_and(|l| {
                l.contains("] NOT SERVING  0/2 ready endpoints; stopped at started")
                    && l.contains("; waiting for replicas-available")
            }) || progress
                .windows(2)
                .any(|w| w[0].split_once(']').map(|x| x.1) == w[1].split_once(']').map(|x| x.1))
            {
                return Err(format!("progress lines:\n{}", run.2).into());
            }
            let waiting = report["gate"]["waiting_for"].as_str().unwrap_or("");
            if !waiting.starts_with("replicas-available")
                || report["verdict"]["last_step"] != "started"
            {
                return Err(format!(
                    "waiting for {waiting:?} at {}",
                    report["verdict"]["last_step"]
                )
                .into());
            }
            let elapsed = report["elapsed_seconds"].as_f64().unwrap_or(0.0);
            if !(8.0..20.0).contains(&elapsed) {
                return Err(format!("elapsed_seconds {elapsed}").into());
            }
            // The report file is the stdout report.
            let written: Value = serde_json::from_str(
                &std::fs::read_to_string(&report_file).map_err(|e| e.to_string())?,
            )
            .map_err(|e| e.to_string())?;
            if written["outcome"] != "timed-out" || written["schema"] != "mdiag/v1" {
                return Err(format!("report file: {}", written["outcome"]).into());
            }
            let xml = std::fs::read_to_string(&junit_file).map_err(|e| e.to_string())?;
            for needle in [
                "<testcase name=\"replicas-available\"",
                "type=\"timed-out\"",
                "<testcase name=\"deployment-observed\"",
            ] {
                if !xml.contains(needle) {
                    return Err(format!("JUnit has no {needle}:\n{xml}").into());
                }
            }
            // The evidence replays to the verdict the gate saw.
            let (code, replay) = super::mdiag(&[
                "trace",
                "chart-demo",
                "-n",
                &ns,
                "--snapshot",
                evidence_file.to_str().unwrap(),
                "-o",
                "json",
            ])?;
            if code != 1 || replay["verdict"]["last_step"] != report["verdict"]["last_step"] {
                return Err(
                    format!("evidence replays to {} exit {code}", replay["verdict"]).into(),
                );
            }
            Ok(())
        }),
        Trial::test(
            "gate-survives-an-apiserver-restart-and-a-compacted-watch",
            || {
                let w = world();
                let ns = namespace("gate-restart")?;
                serving_first(&ns)?;
                // New Pods that turn Ready only after the apiserver is back.
                apply(&ns, &spec("ready:20").arg("--v2"))?;
                let kubeconfig = viewer();
                let waiter = {
                    let ns = ns.clone();
                    std::thread::spawn(move || gate(&kubeconfig, &ns, &["--timeout", "120s"]))
                };
                std::thread::sleep(Duration::from_secs(3));
                cluster::stop_component(&w.layout, "kube-apiserver").map_err(|e| e.to_string())?;
                let compacted = cluster::compact_etcd(&w.layout);
                std::thread::sleep(Duration::from_secs(2));
                cluster::start_component(&w.layout, "kube-apiserver").map_err(|e| e.to_string())?;
                compacted.map_err(|e| e.to_string())?;
                // A kubelet would restart a control-plane component that lost
                // its Lease during the outage; the harness does it here.
                std::thread::sleep(Duration::from_secs(3));
                for c in ["kube-controller-manager", "kube-scheduler"] {
                    if !cluster::running(&w.layout, c) {
                        cluster::start_component(&w.layout, c).map_err(|e| e.to_string())?;
                    }
                }
                let run = waiter.join().map_err(|_| "the gate thread panicked")??;
                expect("across the restart", &run, 0, "converged")?;
                let gate_details = &run.1["gate"];
                if gate_details["disconnects"].as_u64().unwrap_or(0) < 1 {
                    return Err(format!("no disconnect seen: {gate_details}\n{}", run.2).into());
                }
                if gate_details["relists"].as_u64().unwrap_or(0) < 1 {
                    return Err(format!(
                        "no relist after the compaction: {gate_details}\n{}",
                        run.2
                    )
                    .into());
                }
                Ok(())
            },
        ),
        Trial::test("gate-without-access-to-pods-cannot-decide", || {
            let w = world();
            let ns = namespace("gate-denied")?;
            apply(&ns, &spec("ready"))?;
            w.kubectl(&["-n", &ns, "create", "serviceaccount", "nopods"])?;
            w.kubectl(&[
                "-n", &ns, "create", "role", "nopods",
                "--verb=get,list,watch",
                "--resource=services,events,deployments.apps,replicasets.apps,statefulsets.apps,daemonsets.apps,controllerrevisions.apps,endpointslices.discovery.k8s.io,modelservices.modeldock.io",
            ])?;
            w.kubectl(&[
                "-n",
                &ns,
                "create",
                "rolebinding",
                "nopods",
                "--role=nopods",
                &format!("--serviceaccount={ns}:nopods"),
            ])?;
            let kubeconfig = super::token_kubeconfig(&ns, "nopods")?;
            let run = gate(&kubeconfig, &ns, &["--timeout", "60s"])?;
            expect("pods forbidden", &run, 4, "could-not-decide")?;
            let reason = run.1["gate"]["reason"].as_str().unwrap_or("");
            if !reason.contains("pods") {
                return Err(format!("reason {reason:?}").into());
            }
            Ok(())
        }),
        Trial::test("gate-after-helm-upgrade-as-ci-runs-it", || {
            let w = world();
            let helm = Helm::for_layout(&w.layout).map_err(|e| format!("{e:#}"))?;
            let ns = "live-gate-helm";
            let chart = helm::chart_demo();
            helm.upgrade_install("chart-demo", ns, &chart, &[], None)
                .map_err(|e| format!("{e:#}"))?;
            let admin = w.layout.admin_kubeconfig();
            let release = ["--helm-release", "chart-demo"];
            expect("install", &gate(&admin, ns, &release)?, 0, "converged")?;
            // A broken upgrade: helm --wait says deployed, the gate says why not.
            let upgrade = helm
                .try_upgrade_install(
                    "chart-demo",
                    ns,
                    &chart,
                    &[("behavior", "crash-loop"), ("image.tag", "v1.5.0")],
                    Some(Duration::from_secs(60)),
                )
                .map_err(|e| format!("{e:#}"))?;
            let run = gate(&admin, ns, &release)?;
            expect("broken upgrade", &run, 1, "failed")?;
            let h = &run.1["gate"]["helm"];
            if h["status"] != "deployed"
                || h["revision"] != 2
                || h["chart"] != "chart-demo-0.1.0"
                || h["manages_target"] != true
            {
                return Err(format!("helm section: {h}").into());
            }
            eprintln!(
                "  helm upgrade --wait exited {:?} in {:.2}s; gate: {} by {}",
                upgrade.status.code(),
                upgrade.elapsed.as_secs_f64(),
                run.1["outcome"],
                decided_by(&run.1)
            );
            // Rolled back by Helm: the old revision serves again while the
            // broken Pods drain; they neither fail nor pass the gate.
            helm.run_ok(&["rollback", "chart-demo", "1", "--namespace", ns])
                .map_err(|e| format!("{e:#}"))?;
            let back = gate(&admin, ns, &release)?;
            expect("after helm rollback", &back, 0, "converged")?;
            Ok(())
        }),
        Trial::test(
            "gate-reports-a-rollback-written-on-the-managed-deployment",
            || {
                let w = world();
                let ns = namespace("gate-undo")?;
                serving_first(&ns)?;
                apply(&ns, &spec("ready").arg("--v2"))?;
                expect(
                    "second rollout",
                    &gate(&viewer(), &ns, &["--timeout", "90s"])?,
                    0,
                    "converged",
                )?;
                with_controller_paused(|| {
                    w.kubectl(&["-n", &ns, "rollout", "undo", "deployment/chart-demo"])?;
                    let run = gate(&viewer(), &ns, &["--timeout", "10s"])?;
                    expect("undo on the Deployment", &run, 3, "timed-out")?;
                    if decided_by(&run.1) != "declaration-in-effect" {
                        return Err(format!(
                            "decided by {:?}; checks {}",
                            decided_by(&run.1),
                            run.1["gate"]["checks"]
                        )
                        .into());
                    }
                    Ok(())
                })?;
                // The controller, running again, reverts the edit.
                expect(
                    "after the controller reverts it",
                    &gate(&viewer(), &ns, &["--timeout", "90s"])?,
                    0,
                    "converged",
                )
            },
        ),
    ]
}
