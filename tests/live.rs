//! Ring 3: mdiag against a real control plane. One cluster (etcd,
//! kube-apiserver, kube-controller-manager, kube-scheduler built from Go
//! modules) and one simulator of nodes and of the ModelService controller
//! serve the whole binary; each test has its own namespace. Every test runs
//! `mdiag trace` live with the view-only kubeconfig until the rollout shows
//! what the scenario makes, then dumps the namespace with kubectl and checks
//! that `mdiag trace --snapshot` on the dump reaches the same verdict.
//!
//! Tests run one at a time: some pause the controller, stop a node or the
//! scheduler, which would disturb the others.
//!
//! The cluster has a real node too (containerd and a kubelet, see
//! harness/src/node/), so the binary runs itself again inside network,
//! mount and PID namespaces of its own (`node::ns::reexec`): it needs root,
//! and when the namespaces end nothing of the cluster is left.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use mdiag_harness::cluster::{self, Layout, UpOptions};
use mdiag_harness::images::Images;
use mdiag_harness::node::ns;
use mdiag_harness::{
    ModelServiceSpec, Sim, SimOptions, apply_model_service_spec, client_from_kubeconfig,
    ensure_namespace, install_crd, pause_controller, stop_node,
};
use serde_json::Value;

#[path = "live/audit.rs"]
mod audit;
#[path = "live/commands.rs"]
mod commands;
#[path = "live/contexts.rs"]
mod contexts;
#[path = "live/credentials.rs"]
mod credentials;
#[path = "live/gate.rs"]
mod gate;
#[path = "live/interrupts.rs"]
mod interrupts;
#[path = "live/mcp.rs"]
mod mcp;
#[path = "live/pod_sets.rs"]
mod pod_sets;
#[path = "common/python_mcp.rs"]
mod python_mcp;
#[path = "live/real_hostile.rs"]
mod real_hostile;
#[path = "live/real_jobs.rs"]
mod real_jobs;
#[path = "live/real_node.rs"]
mod real_node;
#[path = "live/real_platforms.rs"]
mod real_platforms;
#[path = "live/real_probes.rs"]
mod real_probes;
#[path = "live/real_redaction.rs"]
mod real_redaction;
#[path = "live/real_scenarios.rs"]
mod real_scenarios;
#[path = "live/recipes.rs"]
mod recipes;
#[path = "live/triage_scale.rs"]
mod triage_scale;

const IMAGE: &str = "registry.example.com/modeldock/chart-demo:v1.4.0";
/// How long a scenario may take to show its symptom.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

struct World {
    layout: Layout,
    runtime: tokio::runtime::Runtime,
    admin: kube::Client,
    sim: Mutex<Option<Sim>>,
    /// The images on the cluster's local registries (for the real node).
    images: Images,
}

static WORLD: OnceLock<World> = OnceLock::new();

fn world() -> &'static World {
    WORLD
        .get()
        .expect("the cluster is started before the tests")
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Names this run's files: the namespace set's tag (`live-<outer pid>`;
/// inside the PID namespace every run's pid would be the same), else the pid.
fn run_id() -> String {
    ns::tag()
        .and_then(|t| t.strip_prefix("live-").map(str::to_owned))
        .unwrap_or_else(|| std::process::id().to_string())
}

impl World {
    fn start() -> anyhow::Result<World> {
        let dir = repo()
            .join("target")
            .join(format!("live-cluster-{}", run_id()));
        let layout = Layout::at(dir)?;
        let up = match cluster::up_with(&layout, UpOptions { real_node: true }) {
            Ok(up) => up,
            Err(e) => {
                let _ = cluster::down(&layout);
                return Err(e);
            }
        };
        let Some(images) = up.images else {
            let _ = cluster::down(&layout);
            anyhow::bail!("the cluster came up without the registries' images");
        };
        Self::prepare(layout, images)
    }

    /// Everything after the control plane is up; stops it on failure.
    fn prepare(layout: Layout, images: Images) -> anyhow::Result<World> {
        let built = Self::prepare_on(&layout);
        if built.is_err() {
            let _ = cluster::down(&layout);
        }
        let (runtime, admin, sim) = built?;
        Ok(World {
            layout,
            runtime,
            admin,
            sim: Mutex::new(Some(sim)),
            images,
        })
    }

    fn prepare_on(layout: &Layout) -> anyhow::Result<(tokio::runtime::Runtime, kube::Client, Sim)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let admin = runtime.block_on(client_from_kubeconfig(&layout.admin_kubeconfig()))?;
        runtime.block_on(install_crd(&admin))?;
        // The chart's aggregation rule lets `view` read ModelServices.
        cluster::admin_kubectl(
            layout,
            &["apply", "-f", "fixtures/crd/modelservice-view.yaml"],
        )?;
        let sim = Sim::start(
            &layout.admin_kubeconfig(),
            SimOptions {
                backoff_scale: 0.1,
                // Well inside the short node grace of a real-node cluster
                // (cluster::NODE_MONITOR_GRACE).
                heartbeat: Duration::from_secs(5),
                ..SimOptions::default()
            },
        )?;
        Ok((runtime, admin, sim))
    }

    fn stop(&self) {
        if let Some(sim) = self.sim.lock().unwrap().take() {
            sim.stop();
        }
        if let Err(e) = cluster::down(&self.layout) {
            eprintln!("stopping the cluster: {e:#}");
        }
    }

    fn kubectl(&self, args: &[&str]) -> anyhow::Result<String> {
        cluster::admin_kubectl(&self.layout, args)
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }
}

/// What a scenario must show.
#[derive(Clone, Copy, Default)]
struct Want {
    healthy: Option<bool>,
    last_step: Option<&'static str>,
    must: &'static [&'static str],
    must_not: &'static [&'static str],
}

impl Want {
    fn problems(&self, report: &Value) -> Vec<String> {
        let ids = finding_ids(report);
        let mut out = Vec::new();
        if let Some(h) = self.healthy
            && report["healthy"] != h
        {
            out.push(format!("healthy is {}", report["healthy"]));
        }
        if let Some(step) = self.last_step
            && report["verdict"]["last_step"] != step
        {
            out.push(format!("last_step is {}", report["verdict"]["last_step"]));
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

fn finding_ids(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs the mdiag binary; returns its exit code and the JSON report.
fn mdiag(args: &[&str]) -> Result<(i32, Value), Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| format!("running mdiag: {e}"))?;
    let code = out.status.code().unwrap_or(-1);
    let report = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "mdiag {args:?} exited {code} without a report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((code, report))
}

fn trace_live(ns: &str) -> Result<(i32, Value), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    mdiag(&[
        "--kubeconfig",
        viewer.to_str().unwrap(),
        "-n",
        ns,
        "trace",
        "chart-demo",
        "-o",
        "json",
    ])
}

/// Polls the live trace until it shows `want`.
fn until_live(ns: &str, want: Want) -> Result<(i32, Value), Failed> {
    let t0 = Instant::now();
    loop {
        let (code, report) = trace_live(ns)?;
        let problems = want.problems(&report);
        if problems.is_empty() {
            return Ok((code, report));
        }
        if t0.elapsed() > SCENARIO_TIMEOUT {
            return Err(format!(
                "{ns}: after {:?}: {}\nlast report: {}",
                SCENARIO_TIMEOUT,
                problems.join("; "),
                serde_json::to_string_pretty(&report).unwrap_or_default()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(750));
    }
}

/// A kubectl dump of what a trace reads, as a user would take it.
fn dump(ns: &str) -> Result<PathBuf, Failed> {
    let w = world();
    let parts = [
        w.kubectl(&[
            "get",
            "modelservices,deployments,replicasets,pods,services,endpointslices,events,hpa,pdb",
            "-n",
            ns,
            "-o",
            "yaml",
        ])?,
        w.kubectl(&["get", "nodes", "-o", "yaml"])?,
        w.kubectl(&["get", "leases", "-n", "kube-system", "-o", "yaml"])?,
        w.kubectl(&[
            "get",
            "deployments,leases",
            "-n",
            "modeldock-system",
            "-o",
            "yaml",
        ])?,
    ];
    let path = repo()
        .join("target")
        .join(format!("live-dump-{}-{ns}.yaml", run_id()));
    std::fs::write(&path, parts.join("---\n")).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The exit code docs/contract.md#exit-codes give a trace report: 1 whenever a
/// finding is a warning or an error; otherwise by `verdict.state`:
/// serving 0, progressing 3, unknown 4, not-serving (and degraded) 1.
fn exit_for(report: &Value) -> i32 {
    let problem = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| f["severity"] != "info");
    if problem {
        return 1;
    }
    match report["verdict"]["state"].as_str() {
        Some("serving") => 0,
        Some("progressing") => 3,
        Some("unknown") => 4,
        _ => 1,
    }
}

/// The live verdict, then the same verdict from a kubectl dump.
fn check(ns: &str, want: Want) -> Result<(), Failed> {
    let (live_code, live) = until_live(ns, want)?;
    let expected_code = exit_for(&live);
    if live_code != expected_code {
        return Err(format!(
            "live trace exited {live_code}, want {expected_code} for state {} and findings {:?}",
            live["verdict"]["state"],
            finding_ids(&live)
        )
        .into());
    }
    // A dump is judged at its newest timestamp, which trails the live clock
    // by up to a heartbeat (10 s): a time-bound symptom may need a later dump.
    let t0 = Instant::now();
    let (file, code, replay) = loop {
        let file = dump(ns)?;
        let (code, replay) = mdiag(&[
            "trace",
            "chart-demo",
            "-n",
            ns,
            "--snapshot",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])?;
        let problems = want.problems(&replay);
        if problems.is_empty() {
            break (file, code, replay);
        }
        if t0.elapsed() > Duration::from_secs(30) {
            return Err(format!("{ns}: the kubectl dump says {}", problems.join("; ")).into());
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    if code != live_code
        || replay["verdict"]["last_step"] != live["verdict"]["last_step"]
        || replay["verdict"]["state"] != live["verdict"]["state"]
    {
        return Err(format!(
            "{ns}: live {} exit {live_code}, dump {} exit {code}",
            live["verdict"], replay["verdict"]
        )
        .into());
    }
    let _ = std::fs::remove_file(file);
    Ok(())
}

fn namespace(name: &str) -> Result<String, Failed> {
    let ns = format!("live-{name}");
    world()
        .block_on(ensure_namespace(&world().admin, &ns))
        .map_err(|e| e.to_string())?;
    Ok(ns)
}

fn apply(ns: &str, spec: &ModelServiceSpec) -> Result<(), Failed> {
    world()
        .block_on(apply_model_service_spec(
            &world().admin,
            ns,
            "chart-demo",
            spec,
        ))
        .map(|_| ())
        .map_err(|e| format!("{e:#}").into())
}

fn spec(behavior: &str) -> ModelServiceSpec {
    ModelServiceSpec::new(IMAGE).replicas(2).behavior(behavior)
}

/// A scenario made only by what the ModelService asks for.
fn simple(name: &'static str, spec: fn() -> ModelServiceSpec, want: Want) -> Trial {
    Trial::test(name, move || {
        let ns = namespace(name)?;
        apply(&ns, &spec())?;
        check(&ns, want)
    })
}

const HEALTHY: Want = Want {
    healthy: Some(true),
    last_step: Some("serving"),
    must: &[],
    must_not: &[],
};

/// Runs `body` with the controller paused, resuming it whatever happens.
fn with_controller_paused(body: impl FnOnce() -> Result<(), Failed>) -> Result<(), Failed> {
    let w = world();
    w.block_on(pause_controller(&w.admin, true))
        .map_err(|e| e.to_string())?;
    let result = body();
    w.block_on(pause_controller(&w.admin, false))
        .map_err(|e| e.to_string())?;
    result
}

fn trials() -> Vec<Trial> {
    let mut all = scenario_trials();
    all.extend(real_node::trials());
    all.extend(real_scenarios::trials());
    all.extend(real_jobs::trials());
    all.extend(real_probes::trials());
    all.extend(real_platforms::trials());
    all.extend(gate::trials());
    all.extend(pod_sets::trials());
    all.extend(triage_scale::trials());
    all.extend(contexts::trials());
    all.extend(commands::trials());
    all.extend(credentials::trials());
    all.extend(audit::trials());
    all.extend(interrupts::trials());
    all.extend(real_redaction::trials());
    all.extend(real_hostile::trials());
    all.extend(mcp::trials());
    all.extend(recipes::trials());
    // Last: it stops the scheduler of the whole cluster for a while.
    all.push(scheduler_stopped());
    all
}

fn scenario_trials() -> Vec<Trial> {
    vec![
        simple("healthy", || spec("ready"), HEALTHY),
        simple(
            "unschedulable-gpu",
            || spec("ready").resources(serde_json::json!({"limits": {"nvidia.com/gpu": "1"}})),
            Want {
                last_step: Some("stored"),
                must: &["pod-unschedulable"],
                must_not: &["scheduler-silent"],
                ..Want::default()
            },
        ),
        // The `view` role cannot list Nodes, so a live trace does not know
        // whether any node offers the GPU and says only what the scheduler
        // said; a dump that holds the Nodes says none does.
        Trial::test("unschedulable-gpu-no-node-offers-it", || {
            let ns = namespace("gpu-no-node")?;
            apply(
                &ns,
                &spec("ready").resources(serde_json::json!({"limits": {"nvidia.com/gpu": "1"}})),
            )?;
            let (_, live) = until_live(
                &ns,
                Want {
                    last_step: Some("stored"),
                    must: &["pod-unschedulable"],
                    must_not: &["resource-claim-pending"],
                    ..Want::default()
                },
            )?;
            let file = dump(&ns)?;
            let (code, replay) = mdiag(&[
                "trace",
                "chart-demo",
                "-n",
                &ns,
                "--snapshot",
                file.to_str().unwrap(),
                "-o",
                "json",
            ])?;
            let lead = &replay["verdict"]["lead"];
            let named = replay["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["id"] == "resource-claim-pending")
                .is_some_and(|f| {
                    f["detail"]
                        .as_str()
                        .is_some_and(|d| d.contains("nvidia.com/gpu"))
                });
            let _ = std::fs::remove_file(file);
            if code != 1 || lead != "resource-claim-pending" || !named {
                return Err(format!(
                    "{ns}: the dump gives exit {code}, lead {lead}, findings {:?}; live {:?}",
                    finding_ids(&replay),
                    finding_ids(&live)
                )
                .into());
            }
            Ok(())
        }),
        simple(
            "crash-loop",
            || spec("crash-loop:1"),
            Want {
                last_step: Some("bound"),
                must: &["crash-loop"],
                must_not: &["oom-killed"],
                ..Want::default()
            },
        ),
        simple(
            "oom",
            || spec("oom").resources(serde_json::json!({"limits": {"memory": "512Mi"}})),
            Want {
                last_step: Some("bound"),
                must: &["oom-killed"],
                must_not: &["crash-loop"],
                ..Want::default()
            },
        ),
        simple(
            "pull-not-found",
            || spec("pull-not-found"),
            Want {
                must: &["image-pull-not-found"],
                must_not: &["image-pull-denied", "image-pull-timeout"],
                ..Want::default()
            },
        ),
        simple(
            "pull-denied",
            || spec("pull-denied"),
            Want {
                must: &["image-pull-denied"],
                must_not: &["image-pull-not-found", "image-pull-timeout"],
                ..Want::default()
            },
        ),
        simple(
            "pull-timeout",
            || spec("pull-timeout"),
            Want {
                must: &["image-pull-timeout"],
                must_not: &["image-pull-denied", "image-pull-not-found"],
                ..Want::default()
            },
        ),
        simple(
            "never-ready",
            || spec("never-ready"),
            Want {
                last_step: Some("started"),
                must: &["readiness-failing"],
                ..Want::default()
            },
        ),
        simple(
            "config-error",
            || spec("config-error"),
            Want {
                must: &["container-config-error"],
                must_not: &["crash-loop"],
                ..Want::default()
            },
        ),
        simple(
            "stuck-creating",
            || spec("stuck-creating"),
            Want {
                last_step: Some("bound"),
                must: &["pod-not-started"],
                ..Want::default()
            },
        ),
        Trial::test("selector-mismatch", || {
            let ns = namespace("selector-mismatch")?;
            apply(&ns, &spec("ready"))?;
            until_live(&ns, HEALTHY)?;
            with_controller_paused(|| {
                world().kubectl(&[
                    "-n",
                    &ns,
                    "patch",
                    "service",
                    "chart-demo",
                    "--type=merge",
                    "-p",
                    r#"{"spec":{"selector":{"app.kubernetes.io/name":"chart-demo-server"}}}"#,
                ])?;
                check(
                    &ns,
                    Want {
                        last_step: Some("ready"),
                        must: &["selector-mismatch"],
                        ..Want::default()
                    },
                )
            })
        }),
        Trial::test("controller-paused", || {
            let ns = namespace("controller-paused")?;
            apply(&ns, &spec("ready"))?;
            until_live(&ns, HEALTHY)?;
            with_controller_paused(|| {
                let newer =
                    ModelServiceSpec::new("registry.example.com/modeldock/chart-demo:v1.5.0")
                        .replicas(2)
                        .behavior("ready");
                apply(&ns, &newer)?;
                check(
                    &ns,
                    Want {
                        last_step: Some("declared"),
                        must: &["controller-not-converging"],
                        ..Want::default()
                    },
                )
            })?;
            // Resumed, it converges: the verdict changes back.
            until_live(&ns, HEALTHY).map(|_| ())
        }),
        Trial::test("node-stopped", || {
            let ns = namespace("node-stopped")?;
            apply(&ns, &spec("ready"))?;
            let (_, report) = until_live(&ns, HEALTHY)?;
            let node = report["pods"][0]["node"]
                .as_str()
                .ok_or("no node in the report")?
                .to_string();
            let w = world();
            w.block_on(stop_node(&w.admin, &node, true))
                .map_err(|e| e.to_string())?;
            let result = check(
                &ns,
                Want {
                    healthy: Some(false),
                    must: &["node-not-ready"],
                    must_not: &["readiness-failing"],
                    ..Want::default()
                },
            );
            w.block_on(stop_node(&w.admin, &node, false))
                .map_err(|e| e.to_string())?;
            result
        }),
        Trial::test("snapshot-replays-the-live-verdict", || {
            let ns = namespace("snapshot-replay")?;
            apply(&ns, &spec("crash-loop:1"))?;
            let want = Want {
                must: &["crash-loop"],
                ..Want::default()
            };
            let (_, live) = until_live(&ns, want)?;
            let file = snapshot_file(&ns, &["chart-demo"], &world().layout.viewer_kubeconfig())?;
            let (_, replay) = mdiag(&[
                "trace",
                "chart-demo",
                "--snapshot",
                file.to_str().unwrap(),
                "-o",
                "json",
            ])?;
            for key in ["healthy", "verdict"] {
                if replay[key]["last_step"] != live[key]["last_step"]
                    || replay["healthy"] != live["healthy"]
                {
                    return Err(format!("live {} vs replay {}", live[key], replay[key]).into());
                }
            }
            if finding_ids(&replay) != finding_ids(&live) {
                return Err(format!(
                    "live {:?} vs replay {:?}",
                    finding_ids(&live),
                    finding_ids(&replay)
                )
                .into());
            }
            if replay["clock"]["source"] != "capture" {
                return Err("the replay is not judged at the capture time".into());
            }
            // The crash loop's previous run is in the file.
            let text = read_snapshot_text(&file)?;
            let doc: Value = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
            let previous = doc["logs"].as_array().into_iter().flatten().any(|l| {
                l["previous"] == true && l["text"].as_str().is_some_and(|t| !t.is_empty())
            });
            if !previous {
                return Err(format!("no previous log in {}", file.display()).into());
            }
            Ok(())
        }),
        Trial::test("snapshot-keeps-secrets-out", || {
            let ns = namespace("snapshot-secrets")?;
            let w = world();
            w.kubectl(&[
                "-n",
                &ns,
                "create",
                "secret",
                "generic",
                "db",
                "--from-literal=password=s3cr3t-in-a-secret",
            ])?;
            w.kubectl(&[
                "-n",
                &ns,
                "run",
                "client",
                "--image=registry.example.com/tools/psql:16",
                "--env=DB_PASSWORD=hunter2-in-env",
                "--env=MODEL_PATH=/models/demo",
            ])?;
            apply(&ns, &spec("ready"))?;
            until_live(&ns, HEALTHY)?;
            let file = snapshot_file(&ns, &[], &w.layout.admin_kubeconfig())?;
            let text = read_snapshot_text(&file)?;
            for secret in ["s3cr3t-in-a-secret", "hunter2-in-env"] {
                if text.contains(secret) {
                    return Err(format!("{secret} is in {}", file.display()).into());
                }
            }
            if !text.contains("/models/demo") || !text.contains("env[name=DB_PASSWORD].value") {
                return Err("ordinary values must stay, and the redaction must be listed".into());
            }
            Ok(())
        }),
        Trial::test("snapshot-without-pods-log-lists-the-gap", || {
            let ns = namespace("snapshot-nolog")?;
            apply(&ns, &spec("crash-loop:1"))?;
            until_live(
                &ns,
                Want {
                    must: &["crash-loop"],
                    ..Want::default()
                },
            )?;
            let kubeconfig = no_logs_kubeconfig(&ns)?;
            let file = snapshot_file(&ns, &["chart-demo"], &kubeconfig)?;
            let doc: Value =
                serde_saphyr::from_str(&read_snapshot_text(&file)?).map_err(|e| e.to_string())?;
            let gap = doc["gaps"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|g| g["resource"] == "pods/log");
            if !gap || doc["objects"].as_array().is_none_or(|o| o.is_empty()) {
                return Err(
                    format!("want objects and a pods/log gap in {}", file.display()).into(),
                );
            }
            Ok(())
        }),
        Trial::test("trace-logs-shows-the-crash", || {
            // trace --logs reads the crashing Pod's log (pods/log get, capped)
            // and shows its last lines under the crash-loop finding; next
            // names that Pod.
            let ns = namespace("trace-logs")?;
            apply(&ns, &spec("crash-loop:1"))?;
            until_live(
                &ns,
                Want {
                    must: &["crash-loop"],
                    ..Want::default()
                },
            )?;
            let viewer = world().layout.viewer_kubeconfig();
            let args = |extra: &[&'static str]| {
                let mut a = vec![
                    "--kubeconfig".to_string(),
                    viewer.to_str().unwrap().to_string(),
                    "-n".into(),
                    ns.clone(),
                    "trace".into(),
                    "chart-demo".into(),
                    "--logs".into(),
                ];
                a.extend(extra.iter().map(|s| s.to_string()));
                a
            };
            let json_args = args(&["-o", "json"]);
            let (_, report) = mdiag(&json_args.iter().map(String::as_str).collect::<Vec<_>>())?;
            let lead = report["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["id"] == "crash-loop")
                .ok_or("no crash-loop finding")?;
            let pod = lead["subject"]["name"].as_str().unwrap_or_default();
            let log = lead["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e.get("log").is_some())
                .ok_or_else(|| format!("no log evidence: {}", lead["evidence"]))?;
            if log["object"] != format!("pod/{pod}").as_str() {
                return Err(format!("log of {} under a finding about {pod}", log["object"]).into());
            }
            let lines: Vec<&str> = log["log"]["lines"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !lines.iter().any(|l| l.contains("MODEL_PATH is not set")) {
                return Err(format!("the crash's words are not in {lines:?}").into());
            }
            let next = report["verdict"]["next"].as_str().unwrap_or_default();
            if report["findings"][0]["id"] == "crash-loop" && !next.contains(pod) {
                return Err(format!("next `{next}` does not name {pod}").into());
            }
            // The human view shows it too, within 80 columns of log line.
            let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
                .args(args(&[]))
                .env_remove("KUBECONFIG")
                .env_remove("COLUMNS")
                .output()
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout);
            if !text.contains("MODEL_PATH is not set") {
                return Err(format!("not in the view:\n{text}").into());
            }
            Ok(())
        }),
        Trial::test("trace-logs-without-pods-log-is-a-gap", || {
            let ns = namespace("trace-nolog")?;
            apply(&ns, &spec("crash-loop:1"))?;
            until_live(
                &ns,
                Want {
                    must: &["crash-loop"],
                    ..Want::default()
                },
            )?;
            let kubeconfig = no_logs_kubeconfig(&ns)?;
            let (code, report) = mdiag(&[
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "-n",
                &ns,
                "trace",
                "chart-demo",
                "--logs",
                "-o",
                "json",
            ])?;
            let gap = report["gaps"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|g| g["resource"] == "pods/log" && g["verb"] == "get");
            if !gap || code != 1 || !finding_ids(&report).contains(&"crash-loop".to_string()) {
                return Err(format!(
                    "want exit 1, crash-loop and a pods/log gap; got {code}: {}",
                    report["gaps"]
                )
                .into());
            }
            Ok(())
        }),
        Trial::test("triage-across-namespaces", || {
            let mut crash_ns = String::new();
            for (name, behavior) in [("triage-a", "ready"), ("triage-b", "crash-loop:1")] {
                let ns = namespace(name)?;
                apply(&ns, &spec(behavior).label("suite", "live-triage"))?;
                if behavior != "ready" {
                    crash_ns = ns;
                }
            }
            until_live(
                &crash_ns,
                Want {
                    must: &["crash-loop"],
                    ..Want::default()
                },
            )?;
            until_live("live-triage-a", HEALTHY)?;
            let viewer = world().layout.viewer_kubeconfig();
            let (code, report) = mdiag(&[
                "--kubeconfig",
                viewer.to_str().unwrap(),
                "triage",
                "-A",
                "-l",
                "suite=live-triage",
                "-o",
                "json",
            ])?;
            let namespaces: Vec<&str> = report["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["target"]["namespace"].as_str())
                .collect();
            if code != 1 || namespaces != ["live-triage-b", "live-triage-a"] {
                return Err(format!("exit {code}, order {namespaces:?}").into());
            }
            if report["items"][0]["verdict"]["lead"] != "crash-loop" {
                return Err(format!("lead {}", report["items"][0]["verdict"]["lead"]).into());
            }
            Ok(())
        }),
    ]
}

/// Stops the scheduler of the whole cluster for a while.
fn scheduler_stopped() -> Trial {
    Trial::test("scheduler-stopped", || {
        let w = world();
        cluster::stop_component(&w.layout, "kube-scheduler").map_err(|e| e.to_string())?;
        let ns = namespace("scheduler-stopped")?;
        apply(&ns, &spec("ready"))?;
        let result = check(
            &ns,
            Want {
                last_step: Some("stored"),
                must: &["scheduler-silent"],
                must_not: &["pod-unschedulable"],
                ..Want::default()
            },
        );
        cluster::start_component(&w.layout, "kube-scheduler").map_err(|e| e.to_string())?;
        result?;
        // With the scheduler back, the same rollout goes on to serve.
        until_live(&ns, HEALTHY).map(|_| ())
    })
}

/// Runs `mdiag snapshot` of `target` (none: the namespace) into a file.
fn snapshot_file(ns: &str, target: &[&str], kubeconfig: &Path) -> Result<PathBuf, Failed> {
    let file = repo()
        .join("target")
        .join(format!("live-snapshot-{}-{ns}.yaml.gz", run_id()));
    let mut args = vec![
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-n",
        ns,
        "snapshot",
    ];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--output-file", file.to_str().unwrap()]);
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(&args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("mdiag snapshot: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(file)
}

fn read_snapshot_text(file: &Path) -> Result<String, Failed> {
    use std::io::Read;
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    Ok(text)
}

/// A kubeconfig for a ServiceAccount that may read the namespace's objects
/// but not pods/log.
fn no_logs_kubeconfig(ns: &str) -> Result<PathBuf, Failed> {
    let w = world();
    w.kubectl(&["-n", ns, "create", "serviceaccount", "reader"])?;
    w.kubectl(&[
        "-n", ns, "create", "role", "reader",
        "--verb=get,list,watch",
        "--resource=pods,services,events,endpoints,deployments.apps,replicasets.apps,statefulsets.apps,daemonsets.apps,controllerrevisions.apps,endpointslices.discovery.k8s.io,modelservices.modeldock.io",
    ])?;
    w.kubectl(&[
        "-n",
        ns,
        "create",
        "rolebinding",
        "reader",
        "--role=reader",
        &format!("--serviceaccount={ns}:reader"),
    ])?;
    token_kubeconfig(ns, "reader")
}

/// A kubeconfig that acts as the ServiceAccount `account` of `ns`.
fn token_kubeconfig(ns: &str, account: &str) -> Result<PathBuf, Failed> {
    let w = world();
    let token = w.kubectl(&["-n", ns, "create", "token", account])?;
    let admin = std::fs::read_to_string(w.layout.admin_kubeconfig()).map_err(|e| e.to_string())?;
    let mut config: Value = serde_saphyr::from_str(&admin).map_err(|e| e.to_string())?;
    config["users"] = serde_json::json!([{"name": account, "user": {"token": token.trim()}}]);
    for context in config["contexts"].as_array_mut().into_iter().flatten() {
        context["context"]["user"] = account.into();
    }
    let path = w.layout.dir().join(format!("{account}-{ns}.kubeconfig"));
    std::fs::write(
        &path,
        serde_json::to_string(&config).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    Ok(path)
}

/// Whether any trial passes the command line's filters (so `cargo test
/// some_unit_test` does not start a cluster for nothing).
fn any_selected(args: &Arguments, trials: &[Trial]) -> bool {
    trials.iter().any(|t| {
        let name = t.name();
        let filtered = match &args.filter {
            None => true,
            Some(f) if args.exact => name == f,
            Some(f) => name.contains(f.as_str()),
        };
        let skipped = args.skip.iter().any(|s| {
            if args.exact {
                name == s
            } else {
                name.contains(s.as_str())
            }
        });
        filtered && !skipped && !args.ignored
    })
}

/// Set by `cargo xtask test` (README's test command, which CI runs). The
/// live ring builds a Kubernetes control plane from Go modules, so plain
/// `cargo test` lists its trials as ignored and says how to run them.
const LIVE_ENV: &str = "MDIAG_LIVE";

/// The Go binaries (control plane, kubelet) and the harness's helper
/// binaries, before the namespaces cut the network off.
fn prebuild() -> anyhow::Result<()> {
    let layout = Layout::at(repo().join("target").join("live-prebuild"))?;
    cluster::build_all(&layout)?;
    // The Argo Rollouts CRDs the recipes are checked against.
    recipes::prebuild()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(repo())
        .args([
            "build",
            "--quiet",
            "-p",
            "mdiag-harness",
            "--bin",
            "mdiag-blackhole",
        ])
        .status()?;
    anyhow::ensure!(
        status.success(),
        "building mdiag-blackhole failed ({status})"
    );
    Ok(())
}

fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    let trials = trials();
    if std::env::var_os(LIVE_ENV).is_none_or(|v| v.is_empty() || v == "0") {
        eprintln!(
            "live ring not run: it needs Go and builds a control plane (docs/testing.md); \
             run it with `cargo xtask test`, or `{LIVE_ENV}=1 cargo test --test live`"
        );
        args.ignored = false;
        args.include_ignored = false;
        let trials = trials
            .into_iter()
            .map(|t| t.with_ignored_flag(true))
            .collect();
        return libtest_mimic::run(&args, trials).exit_code();
    }
    if args.list || !any_selected(&args, &trials) {
        return libtest_mimic::run(&args, trials).exit_code();
    }
    if !ns::inside() {
        // Inside there is no network: build (or find) what needs it first.
        if let Err(e) = prebuild() {
            eprintln!("cannot build the live cluster's binaries: {e:#}");
            return ExitCode::FAILURE;
        }
    }
    match ns::reexec("live") {
        Ok(ns::Stage::Run) => {}
        Ok(ns::Stage::Done(code)) => return ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("cannot start the live cluster with its real node: {e:#}");
            return ExitCode::FAILURE;
        }
    }
    let t0 = Instant::now();
    match World::start() {
        Ok(w) => {
            let _ = WORLD.set(w);
        }
        Err(e) => {
            eprintln!("cannot start the live control plane: {e:#}");
            return ExitCode::FAILURE;
        }
    }
    eprintln!(
        "live control plane ready in {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    args.test_threads = Some(1);
    let conclusion = libtest_mimic::run(&args, trials);
    // Read-only, as the apiserver saw it (before the cluster and its log go).
    let audit = audit::check_whole_log(&world().layout);
    world().stop();
    if let Err(e) = audit {
        eprintln!("audit check failed: {e}");
        return ExitCode::FAILURE;
    }
    conclusion.exit_code()
}
