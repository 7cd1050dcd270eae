//! `cargo xtask bench snapshot`: mdiag snapshot against `kubectl
//! cluster-info dump` of the same namespace, on the local control plane,
//! in alternating pairs; prints the medians and their ratio.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use mdiag_harness::cluster::{self, Layout};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Snapshot of a ModelService with N ready Pods (and their logs) vs
    /// `kubectl cluster-info dump` of its namespace.
    Snapshot(SnapshotBench),
    /// `mdiag trace` of a ModelService with N ready Pods vs
    /// `kubectl get msvc,deploy,rs,pods,endpointslices -o json` of its namespace.
    Trace(SnapshotBench),
    /// `mdiag triage -A` on a loaded cluster (see `cargo xtask cluster load`)
    /// vs `kubectl get deploy,rs,pods,endpointslices,events -A -o json`, a
    /// trace there vs `kubectl get` of its namespace, triage's peak memory,
    /// and offline triage of a dump of the cluster.
    Triage(TriageBench),
    /// Time to verdict of `mdiag gate` beside `kubectl rollout status` and
    /// `helm upgrade --wait` on the same broken upgrades of the chart
    /// (`--real-node`: the real-node scenarios, with Helm 4 too).
    Gate(crate::bench_gate::GateBench),
    /// Load and judge a generated kubectl dump of N MB (YAML, JSON, gzip)
    /// vs a bare serde_json parse of the same objects; peak memory; a gzip
    /// bomb and an endless stream refused at the limit.
    Dump(crate::bench_dump::DumpBench),
    /// The release binary's size and start-up time (`--version`, a trace of
    /// a demo file), optionally beside another build (`--against FILE`).
    Release(crate::bench_release::ReleaseBench),
    /// How trace, `triage -n` and `triage -A` grow with the cluster (1k,
    /// 10k, 50k Pods by default), each beside the `kubectl get` of what it
    /// reads, with peak memory; writes a plot.
    Scale(crate::bench_scale::ScaleBench),
}

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

#[derive(Args)]
pub struct SnapshotBench {
    /// Pods of the ModelService.
    #[arg(long, default_value_t = 100)]
    pods: u32,
    /// Alternating pairs of runs.
    #[arg(long, default_value_t = 7)]
    runs: u32,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Snapshot(args) => compare(&args, Pair::Snapshot),
        BenchCommand::Trace(args) => compare(&args, Pair::Trace),
        BenchCommand::Triage(args) => triage(&args),
        BenchCommand::Gate(args) => crate::bench_gate::run(&args),
        BenchCommand::Dump(args) => crate::bench_dump::run(&args),
        BenchCommand::Release(args) => crate::bench_release::run(&args),
        BenchCommand::Scale(args) => crate::bench_scale::run(&args),
    }
}

pub(crate) fn mdiag_binary() -> anyhow::Result<PathBuf> {
    release_binary("mdiag", "mdiag")
}

/// Builds `bin` of `package` with `--release`; its path.
pub(crate) fn release_binary(package: &str, bin: &str) -> anyhow::Result<PathBuf> {
    let root = crate::generate::repo_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["build", "--quiet", "--release", "-p", package, "--bin", bin])
        .status()?;
    if !status.success() {
        bail!("building {bin} --release failed");
    }
    Ok(root.join("target/release").join(bin))
}

fn timed(cmd: &mut Command) -> anyhow::Result<Duration> {
    timed_ok(cmd, &[0])
}

/// Times a command that may exit with one of `codes` (mdiag exits 1 when
/// it found a problem, which a loaded cluster always has).
fn timed_ok(cmd: &mut Command, codes: &[i32]) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let out = cmd.output().context("running a benchmark command")?;
    let elapsed = t.elapsed();
    if !out.status.code().is_some_and(|c| codes.contains(&c)) {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[derive(Clone, Copy, PartialEq)]
enum Pair {
    Snapshot,
    Trace,
}

fn compare(args: &SnapshotBench, pair: Pair) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") || !cluster::running(&layout, "mdiag-sim") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let mdiag = mdiag_binary()?;
    let ns = "bench-snapshot";
    let kubectl = |a: &[&str]| cluster::admin_kubectl(&layout, a);
    let _ = kubectl(&["create", "namespace", ns]);
    let manifest = format!(
        "apiVersion: modeldock.io/v1alpha1\nkind: ModelService\nmetadata: {{name: chart-demo, namespace: {ns}}}\nspec: {{image: registry.example.com/modeldock/chart-demo:v1.4.0, replicas: {}}}\n",
        args.pods
    );
    let file = std::env::temp_dir().join("mdiag-bench-msvc.yaml");
    std::fs::write(&file, manifest)?;
    kubectl(&["apply", "-f", file.to_str().unwrap()])?;
    eprintln!("waiting for {} ready Pods in {ns}", args.pods);
    let t0 = Instant::now();
    loop {
        let out = kubectl(&[
            "-n",
            ns,
            "get",
            "pods",
            "-o",
            "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}",
        ])?;
        let ready = out.lines().filter(|l| *l == "True").count() as u32;
        if ready >= args.pods {
            break;
        }
        if t0.elapsed() > Duration::from_secs(300) {
            bail!("only {ready} of {} Pods ready after 5 minutes", args.pods);
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    let bin = layout.bin_dir().context("no BIN_DIR")?;
    let work = tempfile_dir()?;
    let admin = layout.admin_kubeconfig();
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for i in 0..args.runs {
        let out_file = work.join(format!("snap-{i}.yaml.gz"));
        let dump_dir = work.join(format!("dump-{i}"));
        let mut a = Command::new(&mdiag);
        let mut b = Command::new(bin.join("kubectl"));
        a.arg("--kubeconfig").arg(&admin).args(["-n", ns]);
        b.arg("--kubeconfig").arg(&admin).args(["-n", ns]);
        match pair {
            Pair::Snapshot => {
                a.args(["snapshot", "chart-demo", "-o"]).arg(&out_file);
                b.args([
                    "cluster-info",
                    "dump",
                    "--namespaces",
                    ns,
                    "--output-directory",
                ])
                .arg(&dump_dir);
            }
            Pair::Trace => {
                a.args(["trace", "chart-demo", "-o", "json"]);
                b.args(["get", "msvc,deploy,rs,pods,endpointslices", "-o", "json"]);
            }
        }
        // Alternate which goes first, so warm caches favour neither.
        if i % 2 == 0 {
            ours.push(timed(&mut a)?);
            theirs.push(timed(&mut b)?);
        } else {
            theirs.push(timed(&mut b)?);
            ours.push(timed(&mut a)?);
        }
    }
    let (m, k) = (median(ours.clone()), median(theirs.clone()));
    let (ours_name, theirs_name) = match pair {
        Pair::Snapshot => (
            "mdiag snapshot chart-demo (objects, events, logs)".to_string(),
            format!("kubectl cluster-info dump --namespaces {ns}"),
        ),
        Pair::Trace => (
            "mdiag trace chart-demo -o json".to_string(),
            "kubectl get msvc,deploy,rs,pods,endpointslices -o json".to_string(),
        ),
    };
    println!("pods: {}, runs: {} alternating pairs", args.pods, args.runs);
    println!(
        "{ours_name}: median {:.3}s  runs {:?}",
        m.as_secs_f64(),
        secs(&ours)
    );
    println!(
        "{theirs_name}: median {:.3}s  runs {:?}",
        k.as_secs_f64(),
        secs(&theirs)
    );
    println!(
        "ratio mdiag/kubectl: {:.2}",
        m.as_secs_f64() / k.as_secs_f64()
    );
    if pair == Pair::Snapshot {
        let size = std::fs::metadata(work.join("snap-0.yaml.gz"))?.len();
        println!("snapshot file: {size} bytes gzip");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn secs(v: &[Duration]) -> Vec<String> {
    v.iter()
        .map(|d| format!("{:.3}", d.as_secs_f64()))
        .collect()
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("mdiag-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

const LOAD_PREFIX: &str = "bench";

/// Runs `a` and `b` in `runs` alternating pairs; returns both medians.
pub(crate) fn pairs(
    runs: u32,
    a: &mut dyn FnMut() -> anyhow::Result<Duration>,
    b: &mut dyn FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for i in 0..runs {
        if i % 2 == 0 {
            ours.push(a()?);
            theirs.push(b()?);
        } else {
            theirs.push(b()?);
            ours.push(a()?);
        }
    }
    Ok((ours, theirs))
}

fn report_pair(
    title: &str,
    ours_name: &str,
    theirs_name: &str,
    ours: &[Duration],
    theirs: &[Duration],
) {
    let (m, k) = (median(ours.to_vec()), median(theirs.to_vec()));
    println!("## {title}");
    println!(
        "{ours_name}: median {:.3}s  runs {:?}",
        m.as_secs_f64(),
        secs(ours)
    );
    println!(
        "{theirs_name}: median {:.3}s  runs {:?}",
        k.as_secs_f64(),
        secs(theirs)
    );
    println!(
        "ratio mdiag/kubectl: {:.2}",
        m.as_secs_f64() / k.as_secs_f64()
    );
}

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

fn triage(args: &TriageBench) -> anyhow::Result<()> {
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
