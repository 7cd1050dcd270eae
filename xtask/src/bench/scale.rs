//! `cargo xtask bench scale`: how the cost of `trace`, `gate`, `triage -n`
//! and `triage -A` grows with the cluster, each beside the
//! `kubectl get` that reads what it reads, in the same run.
//!
//! The steps are cumulative: each loads the Pods that bring the cluster to
//! its total into namespaces of its own (`s10k-NN` for 10,000), written
//! straight through the API by the load generator (harness/src/load.rs).
//! A trace, a gate and a `triage -n` are measured in the largest namespace among
//! all the others (also held whole, `MDIAG_PODS_PER_SHARD` set high, to
//! show what the read in parts saves), and `triage -A` over everything.
//! Every mdiag and kubectl run goes through `/usr/bin/time` for its peak
//! memory. The table goes to standard output as Markdown, and a plot of
//! the medians to `--plot`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

use super::measure::{Run, timed_rss};
use clap::Args;
use mdiag_harness::cluster::{self, Layout};

#[derive(Args)]
pub struct ScaleBench {
    /// Steps, PODS:WORKLOADS:NAMESPACES[:RUNS] each: what the step adds
    /// to the cluster, and the alternating pairs of runs it measures
    /// (`--runs` when not given). The default: a namespace of 1,000 Pods,
    /// one of 10,000, then 39,000 Pods over 48 namespaces, which brings
    /// the cluster to 50,000 Pods, 5,100 workloads and 50 namespaces.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000:100:1,10000:1000:1,39000:3900:48:1"
    )]
    steps: Vec<String>,
    /// Alternating pairs of runs per measurement.
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Where the SVG plot of the medians goes.
    #[arg(long, default_value = "docs/benchmarks-scale.svg")]
    plot: PathBuf,
}

#[derive(Clone, Copy)]
struct Step {
    pods: u32,
    workloads: u32,
    namespaces: u32,
    runs: Option<u32>,
}

fn parse_step(text: &str) -> anyhow::Result<Step> {
    let parts: Vec<u32> = text
        .split(':')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("step {text:?}: expected PODS:WORKLOADS:NAMESPACES[:RUNS]"))?;
    let (pods, workloads, namespaces, runs) = match parts[..] {
        [p, w, n] => (p, w, n, None),
        [p, w, n, r] => (p, w, n, Some(r)),
        _ => bail!("step {text:?}: expected PODS:WORKLOADS:NAMESPACES[:RUNS]"),
    };
    Ok(Step {
        pods,
        workloads,
        namespaces,
        runs,
    })
}

/// Medians of one side of a pair.
#[derive(Clone, Copy)]
struct Measured {
    wall: Duration,
    rss_kb: u64,
}

fn medians(runs: &[Run]) -> Measured {
    let mut walls: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
    let mut rss: Vec<u64> = runs.iter().map(|r| r.rss_kb).collect();
    walls.sort();
    rss.sort();
    Measured {
        wall: walls[walls.len() / 2],
        rss_kb: rss[rss.len() / 2],
    }
}

/// One command beside its kubectl.
struct Measurement {
    what: &'static str,
    scope: String,
    scope_pods: usize,
    ours: Vec<String>,
    /// An environment variable for mdiag's runs.
    env: Option<(&'static str, &'static str)>,
    theirs: Vec<String>,
}

struct Row {
    cluster_pods: u32,
    what: &'static str,
    scope: String,
    scope_pods: usize,
    ours: Measured,
    theirs: Measured,
}

pub fn run(args: &ScaleBench) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let steps: Vec<Step> = args
        .steps
        .iter()
        .map(|s| parse_step(s))
        .collect::<anyhow::Result<_>>()?;
    let mdiag = super::measure::mdiag_binary()?;
    let bin = layout.bin_dir().context("no BIN_DIR")?;
    let kubectl_bin = bin.join("kubectl");
    let admin = layout.admin_kubeconfig();
    if !Path::new("/usr/bin/time").exists() {
        bail!("/usr/bin/time is needed for peak memory (Debian package `time`)");
    }
    let kubectl = |a: &[&str]| cluster::admin_kubectl(&layout, a);

    let mut rows: Vec<Row> = Vec::new();
    for step in steps {
        // s1k, s10k, s39k: what the step adds.
        let prefix = if step.pods % 1000 == 0 {
            format!("s{}k", step.pods / 1000)
        } else {
            format!("s{}", step.pods)
        };
        let ours_loaded = kubectl(&["get", "ns", "-o", "name"])?
            .lines()
            .any(|l| l.starts_with(&format!("namespace/{prefix}-")));
        if !ours_loaded {
            crate::cluster::load(
                &layout,
                &crate::cluster::LoadArgs {
                    pods: step.pods,
                    workloads: step.workloads,
                    namespaces: step.namespaces.max(1),
                    prefix: prefix.clone(),
                },
            )?;
        } else {
            eprintln!("{prefix}-* found; not loading again");
        }
        let runs = step.runs.unwrap_or(args.runs).max(1);

        // The largest namespace so far, and the cluster's size.
        let pods = kubectl(&[
            "get",
            "pods",
            "-A",
            "--no-headers",
            "-o",
            "custom-columns=NS:.metadata.namespace",
        ])?;
        let mut per_ns: std::collections::BTreeMap<String, usize> = Default::default();
        for ns in pods.lines() {
            *per_ns.entry(ns.trim().to_string()).or_default() += 1;
        }
        let cluster_pods: usize = per_ns.values().sum();
        let (ns, ns_pods) = per_ns
            .iter()
            .max_by_key(|(name, n)| (**n, std::cmp::Reverse((*name).clone())))
            .map(|(n, c)| (n.clone(), *c))
            .context("no Pods loaded")?;
        let events = kubectl(&["get", "events", "-A", "--no-headers", "-o", "name"])?
            .lines()
            .count();
        println!(
            "# step: {cluster_pods} Pods, {events} Events in the cluster; largest namespace {ns} ({ns_pods} Pods)"
        );
        let cluster_pods = cluster_pods as u32;

        let kubeconfig = admin.to_string_lossy().to_string();
        let ours = |a: &[&str]| -> Vec<String> {
            let mut v = vec![
                mdiag.to_string_lossy().to_string(),
                "--kubeconfig".into(),
                kubeconfig.clone(),
            ];
            v.extend(a.iter().map(|s| s.to_string()));
            v
        };
        let theirs = |a: &[&str]| -> Vec<String> {
            let mut v = vec![
                kubectl_bin.to_string_lossy().to_string(),
                "--kubeconfig".into(),
                kubeconfig.clone(),
            ];
            v.extend(a.iter().map(|s| s.to_string()));
            v
        };
        let target = "w0008-crash-loop";
        let kubectl_ns_triage = theirs(&[
            "-n",
            &ns,
            "get",
            "deploy,rs,pods,endpointslices,events",
            "-o",
            "json",
        ]);
        // What a trace or a gate reads of the namespace, as kubectl gets it.
        let kubectl_chain_get = theirs(&[
            "-n",
            &ns,
            "get",
            "msvc,deploy,rs,pods,endpointslices",
            "-o",
            "json",
        ]);
        let measurements: Vec<Measurement> = vec![
            Measurement {
                what: "trace",
                scope: ns.clone(),
                scope_pods: ns_pods,
                ours: ours(&["-n", &ns, "trace", target, "-o", "json"]),
                env: None,
                theirs: kubectl_chain_get.clone(),
            },
            // The gate's first verdict on a crash loop (its Pods restarted
            // 3 times, so `--max-restarts 2` makes it definitive at once):
            // what it costs to list and watch the chain, beside the same
            // kubectl get as the trace's.
            Measurement {
                what: "gate",
                scope: ns.clone(),
                scope_pods: ns_pods,
                ours: ours(&[
                    "-n",
                    &ns,
                    "gate",
                    target,
                    "--timeout",
                    "60s",
                    "--max-restarts",
                    "2",
                    "-o",
                    "json",
                ]),
                env: None,
                theirs: kubectl_chain_get,
            },
            Measurement {
                what: "triage -n",
                scope: ns.clone(),
                scope_pods: ns_pods,
                ours: ours(&["-n", &ns, "triage", "-o", "json"]),
                env: None,
                theirs: kubectl_ns_triage.clone(),
            },
            // The same namespace held whole, as before the read in parts.
            Measurement {
                what: "triage -n, whole",
                scope: ns.clone(),
                scope_pods: ns_pods,
                ours: ours(&["-n", &ns, "triage", "-o", "json"]),
                env: Some(("MDIAG_PODS_PER_SHARD", "100000000")),
                theirs: kubectl_ns_triage,
            },
            Measurement {
                what: "triage -A",
                scope: "all".into(),
                scope_pods: cluster_pods as usize,
                ours: ours(&["triage", "-A", "-o", "json"]),
                env: None,
                theirs: theirs(&[
                    "get",
                    "deploy,rs,pods,endpointslices,events",
                    "-A",
                    "-o",
                    "json",
                ]),
            },
        ];
        for m in measurements {
            let (mut mine, mut kube) = (Vec::new(), Vec::new());
            for i in 0..runs {
                if i % 2 == 0 {
                    mine.push(timed_rss(&m.ours, m.env, &[0, 1, 3])?);
                    kube.push(timed_rss(&m.theirs, None, &[0])?);
                } else {
                    kube.push(timed_rss(&m.theirs, None, &[0])?);
                    mine.push(timed_rss(&m.ours, m.env, &[0, 1, 3])?);
                }
            }
            let Measurement {
                what,
                scope,
                scope_pods,
                ..
            } = m;
            let row = Row {
                cluster_pods,
                what,
                scope,
                scope_pods,
                ours: medians(&mine),
                theirs: medians(&kube),
            };
            println!(
                "{what} ({}): mdiag {:.3} s {} MB | kubectl {:.3} s {} MB | ratio {:.2}  (runs: {:?} / {:?})",
                row.scope,
                row.ours.wall.as_secs_f64(),
                row.ours.rss_kb / 1024,
                row.theirs.wall.as_secs_f64(),
                row.theirs.rss_kb / 1024,
                ratio(&row),
                mine.iter()
                    .map(|r| format!("{:.2}", r.wall.as_secs_f64()))
                    .collect::<Vec<_>>(),
                kube.iter()
                    .map(|r| format!("{:.2}", r.wall.as_secs_f64()))
                    .collect::<Vec<_>>(),
            );
            rows.push(row);
        }
    }

    println!();
    println!(
        "| Pods in the cluster | command | scope (its Pods) | mdiag | mdiag max RSS | kubectl | kubectl max RSS | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} ({}) | {:.3} s | {} MB | {:.3} s | {} MB | **{:.2}** |",
            r.cluster_pods,
            r.what,
            r.scope,
            r.scope_pods,
            r.ours.wall.as_secs_f64(),
            r.ours.rss_kb / 1024,
            r.theirs.wall.as_secs_f64(),
            r.theirs.rss_kb / 1024,
            ratio(r),
        );
    }
    let root = crate::generate::repo_root();
    let plot = root.join(&args.plot);
    std::fs::write(&plot, svg(&rows))?;
    println!("\nplot: {}", args.plot.display());
    Ok(())
}

fn ratio(r: &Row) -> f64 {
    r.ours.wall.as_secs_f64() / r.theirs.wall.as_secs_f64()
}

/// Two panels side by side: wall time (log scale) and peak memory, by the
/// Pods in scope, one line per command and tool.
fn svg(rows: &[Row]) -> String {
    const W: f64 = 980.0;
    const H: f64 = 360.0;
    const PANEL: f64 = 420.0;
    const TOP: f64 = 40.0;
    const PLOT_H: f64 = 250.0;
    let whats = [
        "trace",
        "gate",
        "triage -n",
        "triage -n, whole",
        "triage -A",
    ];
    let colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728"];
    let xs: Vec<f64> = rows.iter().map(|r| r.scope_pods.max(1) as f64).collect();
    let (xmin, xmax) = (
        xs.iter().cloned().fold(f64::MAX, f64::min).log10().floor(),
        xs.iter().cloned().fold(1.0, f64::max).log10().ceil(),
    );
    let xmax = if xmax <= xmin { xmin + 1.0 } else { xmax };
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r##"<rect width="{W}" height="{H}" fill="#ffffff"/>"##);
    type Pick = fn(&Measured) -> f64;
    let panels: [(&str, Pick, bool); 2] = [
        ("wall time (s, log scale)", |m| m.wall.as_secs_f64(), true),
        ("max RSS (MB)", |m| m.rss_kb as f64 / 1024.0, false),
    ];
    for (p, (title, pick, log)) in panels.iter().enumerate() {
        let left = 60.0 + p as f64 * (PANEL + 80.0);
        let values: Vec<f64> = rows
            .iter()
            .flat_map(|r| [pick(&r.ours), pick(&r.theirs)])
            .collect();
        let (ymin, ymax) = if *log {
            (
                values
                    .iter()
                    .cloned()
                    .fold(f64::MAX, f64::min)
                    .max(1e-3)
                    .log10()
                    .floor(),
                values.iter().cloned().fold(1e-3, f64::max).log10().ceil(),
            )
        } else {
            (0.0, values.iter().cloned().fold(1.0, f64::max) * 1.1)
        };
        let ymax = if ymax <= ymin { ymin + 1.0 } else { ymax };
        let x_of = |pods: f64| left + (pods.log10() - xmin) / (xmax - xmin) * PANEL;
        let y_of = |v: f64| {
            let v = if *log { v.max(1e-3).log10() } else { v };
            TOP + PLOT_H - (v - ymin) / (ymax - ymin) * PLOT_H
        };
        let _ = writeln!(
            out,
            r##"<text x="{left}" y="24" font-weight="bold">{title}</text><rect x="{left}" y="{TOP}" width="{PANEL}" height="{PLOT_H}" fill="none" stroke="#999"/>"##
        );
        let mut e = xmin as i32;
        while e as f64 <= xmax {
            let x = x_of(10f64.powi(e));
            let _ = writeln!(
                out,
                r##"<text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
                TOP + PLOT_H + 16.0,
                10u64.pow(e.max(0) as u32)
            );
            e += 1;
        }
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle">Pods in scope</text>"##,
            left + PANEL / 2.0,
            TOP + PLOT_H + 34.0
        );
        for tick in 0..=4 {
            let v = ymin + (ymax - ymin) * tick as f64 / 4.0;
            let shown = if *log { 10f64.powf(v) } else { v };
            let _ = writeln!(
                out,
                r##"<text x="{}" y="{}" text-anchor="end">{}</text>"##,
                left - 6.0,
                y_of(shown) + 4.0,
                if shown < 1.0 {
                    format!("{shown:.2}")
                } else {
                    format!("{shown:.0}")
                }
            );
        }
        for (what, colour) in whats.iter().zip(colours) {
            for (tool, dash) in [("mdiag", ""), ("kubectl", r#" stroke-dasharray="5,4""#)] {
                if tool == "kubectl" && what.ends_with("whole") {
                    continue;
                }
                let points: Vec<String> = rows
                    .iter()
                    .filter(|r| r.what == *what)
                    .map(|r| {
                        let m = if tool == "mdiag" { &r.ours } else { &r.theirs };
                        format!(
                            "{:.1},{:.1}",
                            x_of(r.scope_pods.max(1) as f64),
                            y_of(pick(m))
                        )
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#,
                    points.join(" ")
                );
            }
        }
    }
    // The legend.
    let mut y = TOP + PLOT_H + 52.0;
    let mut x = 60.0;
    for (what, colour) in whats.iter().zip(colours) {
        for (tool, dash) in [("mdiag", ""), ("kubectl get", r#" stroke-dasharray="5,4""#)] {
            if tool != "mdiag" && what.ends_with("whole") {
                continue;
            }
            let _ = writeln!(
                out,
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{}">{what}: {tool}</text>"#,
                x + 24.0,
                x + 30.0,
                y + 4.0
            );
            x += 150.0;
            if x > W - 150.0 {
                x = 60.0;
                y += 16.0;
            }
        }
    }
    out.push_str("</svg>\n");
    out
}
