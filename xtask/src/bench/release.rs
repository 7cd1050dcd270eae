//! `cargo xtask bench release`: the size of the `--release` binary and its
//! start-up time (`mdiag --version`, and a trace of the crash-loop demo
//! from its file), optionally beside another build of mdiag (`--against`,
//! e.g. a copy of the binary built before a change of the release profile),
//! run in alternating pairs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;

use super::measure::{median, pairs};

#[derive(Args)]
pub struct ReleaseBench {
    /// Runs of each command (after 3 warm-up runs).
    #[arg(long, default_value_t = 50)]
    runs: u32,
    /// Another mdiag binary to measure beside this build's.
    #[arg(long, value_name = "FILE")]
    against: Option<PathBuf>,
}

/// What is timed: the arguments and the exit code they must give.
const COMMANDS: [(&str, &[&str], i32); 2] = [
    ("mdiag --version", &["--version"], 0),
    (
        "mdiag trace chart-demo --snapshot fixtures/demo/crash-loop.yaml",
        &[
            "trace",
            "chart-demo",
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
        ],
        1,
    ),
];

pub fn run(args: &ReleaseBench) -> anyhow::Result<()> {
    let root = crate::generate::repo_root();
    let t = Instant::now();
    let ours = super::measure::mdiag_binary()?;
    eprintln!(
        "cargo build --release: {:.1} s (0 when nothing changed)",
        t.elapsed().as_secs_f64()
    );
    let theirs = args.against.as_deref();
    if let Some(path) = theirs {
        anyhow::ensure!(path.is_file(), "{} is not a file", path.display());
    }
    println!("| binary | size |");
    println!("|---|---|");
    for bin in std::iter::once(ours.as_path()).chain(theirs) {
        let bytes = std::fs::metadata(bin)?.len();
        println!(
            "| `{}` | {} bytes ({:.1} MiB) |",
            bin.display(),
            bytes,
            bytes as f64 / 1024.0 / 1024.0
        );
    }
    println!();
    for (name, argv, code) in COMMANDS {
        let mut run_ours = || once(&root, &ours, argv, code);
        for _ in 0..3 {
            run_ours()?;
        }
        let (a, b) = match theirs {
            Some(other) => {
                let mut run_theirs = || once(&root, other, argv, code);
                for _ in 0..3 {
                    run_theirs()?;
                }
                let (a, b) = pairs(args.runs, &mut run_ours, &mut run_theirs)?;
                (a, Some(b))
            }
            None => (
                (0..args.runs)
                    .map(|_| run_ours())
                    .collect::<Result<_, _>>()?,
                None,
            ),
        };
        println!("`{name}`, {} runs each:", args.runs);
        println!("| binary | median | mean | min |");
        println!("|---|---|---|---|");
        row(&ours, &a);
        if let (Some(path), Some(b)) = (theirs, b) {
            row(path, &b);
        }
        println!();
    }
    Ok(())
}

fn once(root: &Path, bin: &Path, argv: &[&str], code: i32) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let status = Command::new(bin)
        .args(argv)
        .current_dir(root)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", bin.display()))?;
    let elapsed = t.elapsed();
    if status.code() != Some(code) {
        bail!("{} {argv:?} exited {status}, want {code}", bin.display());
    }
    Ok(elapsed)
}

fn row(bin: &Path, times: &[Duration]) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean = times.iter().map(|d| ms(*d)).sum::<f64>() / times.len() as f64;
    let min = times.iter().copied().min().unwrap_or_default();
    println!(
        "| `{}` | {:.2} ms | {:.2} ms | {:.2} ms |",
        bin.display(),
        ms(median(times.to_vec())),
        mean,
        ms(min)
    );
}
