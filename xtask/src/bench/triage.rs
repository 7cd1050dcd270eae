//! `cargo xtask bench triage`: `mdiag triage -A` and a trace on a loaded
//! cluster beside the `kubectl get` of what they read, triage's peak
//! memory, and offline triage of dumps of the cluster.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use mdiag_harness::cluster::{self, Layout};

use super::measure::{mdiag_binary, median, pairs, report_pair, tempfile_dir, timed, timed_ok};

#[derive(Args)]
pub struct TriageBench {
    #[arg(long, default_value_t = 10_000)]
    pods: u32,
    #[arg(long, default_value_t = 1_000)]
    workloads: u32,
    #[arg(long, default_value_t = 20)]
    namespaces: u32,
    /// Alternating pairs of runs.
    #[arg(long, default_value_t = 5)]
    runs: u32,
}

const LOAD_PREFIX: &str = "bench";

/// The `MDIAG_TIMINGS` line of a run: (load ms, analysis ms, rest).
fn timings(stderr: &[u8]) -> Option<(f64, f64, String)> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find(|l| l.starts_with("mdiag timings:"))?;
    let number_after = |key: &str| -> Option<f64> {
        let rest = &line[line.find(key)? + key.len()..];
        rest.split_whitespace().next()?.parse().ok()
    };
    Some((
        number_after("load ")?,
        number_after("analysis ")?,
        line.to_string(),
    ))
}

pub(crate) fn run(args: &TriageBench) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let kubectl = |a: &[&str]| cluster::admin_kubectl(&layout, a);
    let loaded = kubectl(&[
        "get",
        "msvc",
        "-A",
        "-l",
        "app.kubernetes.io/part-of=load",
        "-o",
        "name",
    ])?
    .lines()
    .count() as u32;
    if loaded < args.workloads {
        crate::cluster::load(
            &layout,
            &crate::cluster::LoadArgs {
                pods: args.pods,
                workloads: args.workloads,
                namespaces: args.namespaces,
                prefix: LOAD_PREFIX.into(),
            },
        )?;
    } else {
        eprintln!("{loaded} loaded ModelServices found; not loading again");
    }
    let mdiag = mdiag_binary()?;
    let bin = layout.bin_dir().context("no BIN_DIR")?;
    let admin = layout.admin_kubeconfig();
    let work = tempfile_dir()?;
    let total = kubectl(&["get", "pods", "-A", "--no-headers", "-o", "name"])?
        .lines()
        .count();
    let events = kubectl(&["get", "events", "-A", "--no-headers", "-o", "name"])?
        .lines()
        .count();
    println!(
        "cluster: {total} Pods, {events} Events, {loaded} loaded ModelServices before this run"
    );

    // 1. triage -A vs one kubectl get of what it reads most of.
    let triage_cmd = || {
        let mut c = Command::new(&mdiag);
        c.arg("--kubeconfig")
            .arg(&admin)
            .args(["triage", "-A", "-o", "json"]);
        c
    };
    let kubectl_all = || {
        let mut c = Command::new(bin.join("kubectl"));
        c.arg("--kubeconfig").arg(&admin).args([
            "get",
            "deploy,rs,pods,endpointslices,events",
            "-A",
            "-o",
            "json",
        ]);
        c
    };
    let (ours, theirs) = pairs(
        args.runs,
        &mut || timed_ok(&mut triage_cmd(), &[0, 1]),
        &mut || timed(&mut kubectl_all()),
    )?;
    report_pair(
        "triage -A",
        "mdiag triage -A -o json",
        "kubectl get deploy,rs,pods,endpointslices,events -A -o json",
        &ours,
        &theirs,
    );
    let out = triage_cmd().env("MDIAG_TIMINGS", "1").output()?;
    println!("{}", timings(&out.stderr).map(|t| t.2).unwrap_or_default());

    // 2. Peak memory of triage -A.
    if Path::new("/usr/bin/time").exists() {
        let mut peaks = Vec::new();
        for _ in 0..3 {
            let out = Command::new("/usr/bin/time")
                .args(["-f", "maxrss_kb=%M"])
                .arg(&mdiag)
                .arg("--kubeconfig")
                .arg(&admin)
                .args(["triage", "-A", "-o", "json"])
                .output()?;
            let text = String::from_utf8_lossy(&out.stderr);
            if let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("maxrss_kb="))
                .and_then(|v| v.trim().parse::<u64>().ok())
            {
                peaks.push(kb);
            }
        }
        peaks.sort();
        println!(
            "## peak memory of mdiag triage -A -o json: max RSS {:?} MB (3 runs)",
            peaks.iter().map(|kb| kb / 1024).collect::<Vec<_>>()
        );
    } else {
        println!("## peak memory: /usr/bin/time not found, not measured");
    }

    // 3. A trace in the loaded cluster vs kubectl get of its namespace.
    let ns = format!("{LOAD_PREFIX}-{:02}", 8 % args.namespaces.max(1));
    let target = "w0008-crash-loop";
    let trace_cmd = || {
        let mut c = Command::new(&mdiag);
        c.arg("--kubeconfig")
            .arg(&admin)
            .args(["-n", &ns, "trace", target, "-o", "json"]);
        c
    };
    let kubectl_ns = || {
        let mut c = Command::new(bin.join("kubectl"));
        c.arg("--kubeconfig").arg(&admin).args([
            "-n",
            &ns,
            "get",
            "msvc,deploy,rs,pods,endpointslices",
            "-o",
            "json",
        ]);
        c
    };
    let (ours, theirs) = pairs(
        args.runs,
        &mut || timed_ok(&mut trace_cmd(), &[0, 1]),
        &mut || timed(&mut kubectl_ns()),
    )?;
    report_pair(
        &format!("trace {target} -n {ns}"),
        &format!("mdiag trace {target} -o json"),
        "kubectl get msvc,deploy,rs,pods,endpointslices -o json",
        &ours,
        &theirs,
    );
    let out = trace_cmd().output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let requests = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"requests\":"))
        .map(|v| v.trim().trim_end_matches(',').to_string())
        .unwrap_or_else(|| "?".into());
    println!("trace requests: {requests}");
    if Path::new("/usr/bin/time").exists() {
        let out = Command::new("/usr/bin/time")
            .args(["-f", "maxrss_kb=%M"])
            .arg(&mdiag)
            .arg("--kubeconfig")
            .arg(&admin)
            .args(["-n", &ns, "trace", target, "-o", "json"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stderr);
        let kb = text
            .lines()
            .find_map(|l| l.strip_prefix("maxrss_kb="))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
        println!("## peak memory of the trace: max RSS {} MB", kb / 1024);
    }

    // 4. Offline triage of dumps of the cluster, parse and analysis apart.
    let dumps = [
        ("msvc,deploy,rs,pods,svc,endpointslices,nodes", "json"),
        ("msvc,deploy,rs,pods,svc,endpointslices,nodes", "yaml"),
        (
            "msvc,deploy,rs,pods,svc,endpointslices,nodes,events",
            "json",
        ),
        (
            "msvc,deploy,rs,pods,svc,endpointslices,nodes,events",
            "yaml",
        ),
    ];
    println!(
        "## offline: mdiag triage -A --snapshot DUMP -o json (medians of {} runs)",
        args.runs
    );
    for (kinds, format) in dumps {
        let file = work.join(format!("dump-{}.{format}", kinds.len()));
        let text = kubectl(&["get", kinds, "-A", "-o", format])?;
        std::fs::write(&file, &text)?;
        let objects = kubectl(&["get", kinds, "-A", "--no-headers", "-o", "name"])?
            .lines()
            .count();
        let mut wall = Vec::new();
        let mut parse = Vec::new();
        let mut analysis = Vec::new();
        for _ in 0..args.runs {
            let t = Instant::now();
            let out = Command::new(&mdiag)
                .env("MDIAG_TIMINGS", "1")
                .args(["triage", "-A", "-o", "json", "--snapshot"])
                .arg(&file)
                .output()?;
            wall.push(t.elapsed());
            let Some((p, a, _)) = timings(&out.stderr) else {
                let why = String::from_utf8_lossy(&out.stderr);
                println!(
                    "{kinds} as {format}: {objects} objects, {:.1} MB: mdiag could not read it: {}",
                    text.len() as f64 / 1e6,
                    why.lines().next().unwrap_or("")
                );
                break;
            };
            parse.push(Duration::from_secs_f64(p / 1e3));
            analysis.push(Duration::from_secs_f64(a / 1e3));
        }
        if wall.len() < args.runs as usize {
            continue;
        }
        println!(
            "{kinds} as {format}: {objects} objects, {:.1} MB; read+parse {:.0} ms, analysis {:.0} ms, whole process {:.0} ms",
            text.len() as f64 / 1e6,
            median(parse).as_secs_f64() * 1e3,
            median(analysis).as_secs_f64() * 1e3,
            median(wall).as_secs_f64() * 1e3,
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
