//! `cargo xtask bench gate`: time to verdict on the same broken upgrades,
//! side by side, as a CI job would run them after `helm upgrade`:
//! `helm upgrade --wait` (Helm v3 built from its Go module), then at once
//! `kubectl rollout status` and `mdiag gate` started together on the same
//! rollout. Times are from the start of the upgrade to each command's exit.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use mdiag_harness::cluster::{self, Layout};
use mdiag_harness::helm::{self, Helm};
use serde_json::Value;

#[derive(Args)]
pub struct GateBench {
    /// How long each command may wait (`--timeout` of every tool).
    #[arg(long, default_value_t = 180)]
    pub budget_secs: u64,
    /// Only these scenarios (comma-separated): healthy, image-not-found,
    /// crash-loop, oom, unschedulable; with --real-node, names of
    /// `mdiag_harness::scenarios::all()` (healthy, crash-exit-1,
    /// image-not-found, node-lost, ...).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// On the real node (`cargo xtask cluster up --real-node`): every
    /// real-node scenario, with Helm 4's `--wait=watcher` beside Helm 3's
    /// `--wait` (see xtask/src/bench_gate_real.rs).
    #[arg(long)]
    pub real_node: bool,
}

/// A scenario: the Helm values of the upgrade.
struct Scenario {
    name: &'static str,
    set: &'static [(&'static str, &'static str)],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "healthy",
        set: &[("behavior", "ready:5"), ("image.tag", "v1.5.0")],
    },
    Scenario {
        name: "image-not-found",
        set: &[("behavior", "pull-not-found"), ("image.tag", "v9.9.9")],
    },
    Scenario {
        name: "crash-loop",
        set: &[("behavior", "crash-loop"), ("image.tag", "v1.5.0")],
    },
    Scenario {
        name: "oom",
        set: &[("behavior", "oom"), ("image.tag", "v1.5.0")],
    },
    Scenario {
        name: "unschedulable",
        set: &[("gpu", "1"), ("image.tag", "v1.5.0")],
    },
];

/// One command's result: exit code, seconds from the upgrade's start, and
/// what it said in a few words.
pub(crate) struct Verdict {
    pub code: Option<i32>,
    pub seconds: f64,
    pub said: String,
}

pub fn run(args: &GateBench) -> anyhow::Result<()> {
    if args.real_node {
        return crate::bench_gate_real::run(args);
    }
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") || !cluster::running(&layout, "mdiag-sim") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let mdiag = super::bench::mdiag_binary()?;
    let helm = Helm::for_layout(&layout)?;
    let kubectl_bin = layout
        .bin_dir()
        .context("no BIN_DIR in cluster.env")?
        .join("kubectl");
    let chart = helm::chart_demo();
    let budget = Duration::from_secs(args.budget_secs);
    println!(
        "| upgrade | helm upgrade --wait | kubectl rollout status | mdiag gate |\n|---|---|---|---|"
    );
    for scenario in SCENARIOS
        .iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|o| o == s.name))
    {
        let ns = format!("bench-gate-{}", scenario.name);
        let _ = cluster::admin_kubectl(&layout, &["delete", "namespace", &ns, "--wait=true"]);
        // A serving first release, as before any upgrade.
        helm.upgrade_install("chart-demo", &ns, &chart, &[], None)?;
        let first = gate(&mdiag, &layout, &ns, budget, Instant::now())?;
        if first.code != Some(0) {
            bail!("{ns}: the first release did not converge: {}", first.said);
        }

        let t0 = Instant::now();
        let upgrade =
            helm.try_upgrade_install("chart-demo", &ns, &chart, scenario.set, Some(budget))?;
        let helm_verdict = Verdict {
            code: upgrade.status.code(),
            seconds: t0.elapsed().as_secs_f64(),
            said: upgrade
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("STATUS: "))
                .map_or_else(|| first_line(&upgrade.stderr), |s| s.to_string()),
        };
        // Both start at once on the same rollout, as CI steps would.
        let rollout = time_child(spawn_kubectl(&kubectl_bin, &layout, &ns, budget)?, t0);
        let gate_verdict = gate(&mdiag, &layout, &ns, budget, t0)?;
        let kubectl_verdict = timed(rollout)?;
        println!(
            "| {} | {} | {} | {} |",
            scenario.name,
            cell(&helm_verdict),
            cell(&kubectl_verdict),
            cell(&gate_verdict)
        );
    }
    println!(
        "\n(seconds from the start of `helm upgrade` to each command's exit; budget {} s; exit code, then what it said)",
        args.budget_secs
    );
    Ok(())
}

pub(crate) fn cell(v: &Verdict) -> String {
    format!(
        "{:.1} s, exit {}: {}",
        v.seconds,
        v.code.map_or("killed".into(), |c| c.to_string()),
        v.said.replace('|', "/")
    )
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(90)
        .collect()
}

pub(crate) fn gate(
    mdiag: &Path,
    layout: &Layout,
    ns: &str,
    budget: Duration,
    t0: Instant,
) -> anyhow::Result<Verdict> {
    let out = Command::new(mdiag)
        .args(["--kubeconfig"])
        .arg(layout.viewer_kubeconfig())
        .args(["-n", ns, "gate", "chart-demo", "-o", "json", "--timeout"])
        .arg(format!("{}s", budget.as_secs()))
        .stderr(Stdio::null())
        .output()
        .context("running mdiag gate")?;
    let seconds = t0.elapsed().as_secs_f64();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let said = format!(
        "{} {}",
        report["outcome"].as_str().unwrap_or("?"),
        report["gate"]["decided_by"].as_str().unwrap_or("")
    );
    Ok(Verdict {
        code: out.status.code(),
        seconds,
        said: said.trim().to_string(),
    })
}

pub(crate) fn spawn_kubectl(
    kubectl: &Path,
    layout: &Layout,
    ns: &str,
    budget: Duration,
) -> anyhow::Result<Child> {
    Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(layout.viewer_kubeconfig())
        .args(["-n", ns, "rollout", "status", "deployment/chart-demo"])
        .arg(format!("--timeout={}s", budget.as_secs()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running kubectl rollout status")
}

/// Waits for `child` on a thread of its own, so its time is taken when it
/// exits, not when the caller gets round to reaping it (kubectl often
/// decides before the gate that runs beside it).
pub(crate) fn time_child(
    child: Child,
    t0: Instant,
) -> std::thread::JoinHandle<anyhow::Result<Verdict>> {
    std::thread::spawn(move || wait_child(child, t0))
}

/// The result of [`time_child`].
pub(crate) fn timed(
    handle: std::thread::JoinHandle<anyhow::Result<Verdict>>,
) -> anyhow::Result<Verdict> {
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("the thread timing a command panicked"))?
}

fn wait_child(child: Child, t0: Instant) -> anyhow::Result<Verdict> {
    let out = child.wait_with_output()?;
    let seconds = t0.elapsed().as_secs_f64();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The last line is its verdict ("successfully rolled out", "timed out
    // waiting for the condition", "exceeded its progress deadline").
    let said = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(90)
        .collect();
    Ok(Verdict {
        code: out.status.code(),
        seconds,
        said,
    })
}
