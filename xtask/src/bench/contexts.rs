//! `cargo xtask bench contexts`: `triage -A --context one,two` over two
//! control planes of different sizes, beside each cluster triaged alone and
//! beside `kubectl get ... -A -o json` of one cluster then the other, as an
//! on-call engineer without mdiag would read them.
//!
//! Both clusters are started here (no node; their state under
//! `target/bench-contexts/`) and loaded by the load generator
//! (harness/src/load.rs): the first with `--pods`, the second with half as
//! many. Each command runs in alternating rounds through `/usr/bin/time`
//! for its peak memory; the medians are printed as Markdown with the ratios
//! the issue asks for: both clusters against the slower one alone, and
//! against the two kubectl runs one after the other.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use mdiag_harness::cluster::{self, Layout};

use super::measure::{Run, timed_rss};

#[derive(Args)]
pub struct ContextsBench {
    /// Pods in the first cluster (the second gets half).
    #[arg(long, default_value_t = 4_000)]
    pods: u32,
    /// Namespaces each cluster's Pods are spread over.
    #[arg(long, default_value_t = 8)]
    namespaces: u32,
    /// Rounds of runs (each round runs every command once).
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Leave both clusters running at the end (to rerun without loading).
    #[arg(long)]
    keep: bool,
}

pub fn run(args: &ContextsBench) -> anyhow::Result<()> {
    if !Path::new("/usr/bin/time").exists() {
        bail!("/usr/bin/time is needed for peak memory (Debian package `time`)");
    }
    let root = crate::generate::repo_root().join("target/bench-contexts");
    let sizes = [args.pods, args.pods / 2];
    let mut layouts = Vec::new();
    for (name, pods) in ["one", "two"].iter().zip(sizes) {
        let layout = Layout::at(root.join(name))?;
        if !cluster::running(&layout, "kube-apiserver") {
            cluster::up(&layout).with_context(|| format!("starting cluster {name}"))?;
            // The load writes ModelServices.
            let crd = crate::generate::repo_root().join("fixtures/crd/modelservice.yaml");
            cluster::admin_kubectl(&layout, &["apply", "-f", &crd.to_string_lossy()])?;
        }
        let loaded = cluster::admin_kubectl(&layout, &["get", "ns", "-o", "name"])?
            .lines()
            .any(|l| l.starts_with("namespace/ctx-"));
        if !loaded {
            crate::cluster::load(
                &layout,
                &crate::cluster::LoadArgs {
                    pods,
                    workloads: (pods / 10).max(1),
                    namespaces: args.namespaces.max(1),
                    prefix: "ctx".into(),
                },
            )?;
        }
        layouts.push(layout);
    }
    let result = measure(args, &layouts, &root, sizes);
    if !args.keep {
        for layout in &layouts {
            if let Err(e) = cluster::down(layout) {
                eprintln!("stopping {}: {e:#}", layout.dir().display());
            }
        }
    }
    result
}

fn measure(
    args: &ContextsBench,
    layouts: &[Layout],
    root: &Path,
    sizes: [u32; 2],
) -> anyhow::Result<()> {
    let kubeconfig = root.join("two.kubeconfig");
    cluster::write_contexts(
        &kubeconfig,
        &[("one", &layouts[0]), ("two", &layouts[1])],
        false,
    )?;
    let kc = kubeconfig.to_string_lossy().to_string();
    let mdiag = super::measure::mdiag_binary()?;
    let kubectl = layouts[0].bin_dir().context("no BIN_DIR")?.join("kubectl");
    let ours = |context: &str| -> Vec<String> {
        [
            mdiag.to_string_lossy().as_ref(),
            "--kubeconfig",
            &kc,
            "--context",
            context,
            "triage",
            "-A",
            "-o",
            "json",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let theirs = |context: &str| -> Vec<String> {
        [
            kubectl.to_string_lossy().as_ref(),
            "--kubeconfig",
            &kc,
            "--context",
            context,
            "get",
            "deploy,rs,pods,endpointslices,events",
            "-A",
            "-o",
            "json",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let commands: [(&str, Vec<String>, &[i32]); 5] = [
        (
            "mdiag triage -A --context one,two",
            ours("one,two"),
            &[0, 1, 3, 4],
        ),
        ("mdiag triage -A --context one", ours("one"), &[0, 1, 3, 4]),
        ("mdiag triage -A --context two", ours("two"), &[0, 1, 3, 4]),
        ("kubectl get ... -A --context one", theirs("one"), &[0]),
        ("kubectl get ... -A --context two", theirs("two"), &[0]),
    ];
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); commands.len()];
    // The machine's busy CPU seconds during each run: both control planes
    // run here, so what they spend serving the lists is counted too.
    let mut busy: Vec<Vec<f64>> = vec![Vec::new(); commands.len()];
    for round in 0..args.runs.max(1) {
        // Each round in another order, so no command always runs first.
        let mut order: Vec<usize> = (0..commands.len()).collect();
        order.rotate_left(round as usize % commands.len());
        for i in order {
            let (_, argv, codes) = &commands[i];
            let before = busy_seconds()?;
            runs[i].push(timed_rss(argv, None, codes)?);
            busy[i].push(busy_seconds()? - before);
        }
    }
    let busy_median = |i: usize| {
        let mut v = busy[i].clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let median = |i: usize| {
        let mut walls: Vec<Duration> = runs[i].iter().map(|r| r.wall).collect();
        let mut rss: Vec<u64> = runs[i].iter().map(|r| r.rss_kb).collect();
        walls.sort();
        rss.sort();
        (
            walls[walls.len() / 2].as_secs_f64(),
            rss[rss.len() / 2] / 1024,
        )
    };
    println!(
        "## Two clusters at once ({} and {} Pods, {} rounds)\n",
        sizes[0],
        sizes[1],
        args.runs.max(1)
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "| command | median wall | peak memory | machine busy (CPU s, of {cores} cores) | runs (s) |"
    );
    println!("|---|---|---|---|---|");
    for (i, (what, ..)) in commands.iter().enumerate() {
        let (wall, mb) = median(i);
        let all: Vec<String> = runs[i]
            .iter()
            .map(|r| format!("{:.2}", r.wall.as_secs_f64()))
            .collect();
        println!(
            "| `{what}` | {wall:.3} s | {mb} MB | {:.2} | {} |",
            busy_median(i),
            all.join(", ")
        );
    }
    let (both, both_mb) = median(0);
    let slower = median(1).0.max(median(2).0);
    let single_mb = median(1).1.max(median(2).1);
    let kubectl_in_turn = median(3).0 + median(4).0;
    println!();
    println!(
        "- both clusters / the slower one alone: **{:.2}x** ({both:.3} s / {slower:.3} s)",
        both / slower
    );
    println!(
        "- both clusters / kubectl of one then the other: **{:.2}x** ({both:.3} s / {kubectl_in_turn:.3} s)",
        both / kubectl_in_turn
    );
    println!("- peak memory, both / the larger single read: {both_mb} MB / {single_mb} MB");
    println!(
        "- machine busy during both: {:.2} CPU s in {both:.3} s ({:.2} of {cores} cores); alone: {:.2} + {:.2} CPU s",
        busy_median(0),
        busy_median(0) / both,
        busy_median(1),
        busy_median(2)
    );
    Ok(())
}

/// CPU seconds the whole machine has spent busy since boot (`/proc/stat`:
/// user, nice, system, irq, softirq, steal).
fn busy_seconds() -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let line = stat.lines().next().context("empty /proc/stat")?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let busy: u64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|i| ticks.get(*i))
        .sum();
    // USER_HZ is 100 on Linux.
    Ok(busy as f64 / 100.0)
}
