//! `cargo xtask bench gate`: time to verdict on the same broken upgrades,
//! side by side, as a CI job would run them after `helm upgrade`:
//! `helm upgrade --wait` (Helm v3 built from its Go module), then at once
//! `kubectl rollout status` and `mdiag gate` started together on the same
//! rollout. Times are from the start of the upgrade to each command's exit.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use mdiag_harness::cluster::{self, Layout};
use mdiag_harness::helm::{self, Helm};

pub use super::gate_common::GateBench;
use super::gate_common::{Verdict, cell, gate, spawn_kubectl, time_child, timed};

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

pub fn run(args: &GateBench) -> anyhow::Result<()> {
    if args.real_node {
        return super::gate_real::run(args);
    }
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") || !cluster::running(&layout, "mdiag-sim") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let mdiag = super::measure::mdiag_binary()?;
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

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(90)
        .collect()
}
