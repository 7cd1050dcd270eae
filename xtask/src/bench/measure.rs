//! What the benchmarks share to measure: the release binaries, timed runs
//! of a command, alternating pairs, medians and how a pair is reported.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

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

pub(crate) fn timed(cmd: &mut Command) -> anyhow::Result<Duration> {
    timed_ok(cmd, &[0])
}

/// Times a command that may exit with one of `codes` (mdiag exits 1 when
/// it found a problem, which a loaded cluster always has).
pub(crate) fn timed_ok(cmd: &mut Command, codes: &[i32]) -> anyhow::Result<Duration> {
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

pub(crate) fn secs(v: &[Duration]) -> Vec<String> {
    v.iter()
        .map(|d| format!("{:.3}", d.as_secs_f64()))
        .collect()
}

pub(crate) fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("mdiag-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

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

pub(crate) fn report_pair(
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

/// One run: wall time and max RSS in KiB.
#[derive(Clone, Copy)]
pub(crate) struct Run {
    pub(crate) wall: Duration,
    pub(crate) rss_kb: u64,
}

/// Runs `argv` under `/usr/bin/time`, its output thrown away; fails on an
/// exit code outside `codes`.
pub(crate) fn timed_rss(
    argv: &[String],
    env: Option<(&str, &str)>,
    codes: &[i32],
) -> anyhow::Result<Run> {
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "maxrss_kb=%M"])
        .args(argv)
        .stdout(Stdio::null());
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let t = Instant::now();
    let out = cmd.output()?;
    let wall = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // /usr/bin/time exits with the command's code.
    let code = out.status.code().unwrap_or(-1);
    if !codes.contains(&code) {
        bail!(
            "{} exited {code}: {}",
            argv[..argv.len().min(6)].join(" "),
            stderr.lines().next().unwrap_or("")
        );
    }
    let rss_kb = stderr
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kb="))
        .and_then(|v| v.trim().parse().ok())
        .context("no maxrss_kb in /usr/bin/time's output")?;
    Ok(Run { wall, rss_kb })
}
