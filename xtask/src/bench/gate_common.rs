//! What both gate benchmarks share: their arguments, one command's verdict,
//! and `mdiag gate` and `kubectl rollout status` timed from an upgrade's start.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use mdiag_harness::cluster::Layout;
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
    /// `--wait` (see xtask/src/bench/gate_real.rs).
    #[arg(long)]
    pub real_node: bool,
}

/// One command's result: exit code, seconds from the upgrade's start, and
/// what it said in a few words.
pub(crate) struct Verdict {
    pub code: Option<i32>,
    pub seconds: f64,
    pub said: String,
}

pub(crate) fn cell(v: &Verdict) -> String {
    format!(
        "{:.1} s, exit {}: {}",
        v.seconds,
        v.code.map_or("killed".into(), |c| c.to_string()),
        v.said.replace('|', "/")
    )
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
