//! `cargo xtask bench dump`: reading a big kubectl dump (the target in
//! docs/contract.md#performance-targets). A corpus-style dump is made from
//! the demo scenarios, copied with fresh names, UIDs and namespaces until it reaches the asked size,
//! and written as a YAML `List`, the same objects as JSON, and the YAML
//! gzipped. `mdiag triage -A --snapshot FILE -o json` (load and judge, the
//! `--release` build) is timed against the anchor measured in the same
//! run: a bare `serde_json` parse of the JSON into a `Value`, built
//! `--release` too, and kubectl's own decoder on the same file (Go,
//! `k8s.io/apimachinery`'s YAMLOrJSONDecoder into unstructured objects,
//! decode only: harness/yamldecode). Peak memory is read with GNU time. Then a gzip bomb and
//! an endless YAML stream on standard input, which must be refused at the
//! limit with memory that does not follow the input.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct DumpBench {
    /// Size of the YAML dump, in MB (10^6 bytes).
    #[arg(long, default_value_t = 50)]
    mb: u64,
    /// Alternating pairs of runs.
    #[arg(long, default_value_t = 5)]
    runs: u32,
    /// Where the files go (default: target/bench-dump).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Another mdiag binary to time beside this one (e.g. an older build),
    /// on the same files in the same run.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Skip the gzip bomb and the endless stream.
    #[arg(long)]
    no_bombs: bool,
}

/// The demo scenarios a dump is made of (kubectl dumps of one ModelService
/// each, with managedFields, Events and every kind of the chain).
const SCENARIOS: &[&str] = &[
    "healthy",
    "crash-loop",
    "oom-killed",
    "image-pull-denied",
    "image-pull-not-found",
    "image-pull-timeout",
    "readiness-failing",
    "selector-mismatch",
    "controller-paused",
    "deployment-not-observed",
    "rollout-in-progress",
    "unschedulable",
];

pub fn run(args: &DumpBench) -> anyhow::Result<()> {
    let root = crate::generate::repo_root();
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| root.join("target/bench-dump"));
    std::fs::create_dir_all(&dir)?;
    let mdiag = super::measure::mdiag_binary()?;
    let anchor = anchor_binary()?;
    let floor = super::measure::release_binary("xtask", "yaml-floor")?;
    let kubectl_decoder = go_decoder(&root, &dir)?;

    let t = Instant::now();
    let files = write_dump(&root, &dir, args.mb * 1_000_000)?;
    eprintln!(
        "dump: {} objects, {} workloads, YAML {} bytes, JSON {} bytes, gzip {} bytes ({:.1} s to write)",
        files.objects,
        files.workloads,
        size(&files.yaml),
        size(&files.json),
        size(&files.gzip),
        t.elapsed().as_secs_f64()
    );

    println!(
        "## Reading a {} MB dump ({} objects, {} ModelServices), median of {} runs",
        args.mb, files.objects, files.workloads, args.runs
    );
    println!();
    println!(
        "| file | bytes | mdiag triage -A (load + judge) | max RSS | RSS / file size | anchor: serde_json parse of the JSON | ratio mdiag / anchor | kubectl's decoder (Go, decode only) of the same file | its max RSS | ratio mdiag / kubectl's decoder |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut yaml_time = None;
    let mut binaries = vec![("mdiag", mdiag.clone())];
    if let Some(b) = &args.baseline {
        binaries.push(("baseline", b.clone()));
    }
    for (label, binary) in &binaries {
        for file in [&files.yaml, &files.json, &files.gzip] {
            let mut mdiag_times = Vec::new();
            let mut anchor_times = Vec::new();
            let mut rss = Vec::new();
            let mut go_times = Vec::new();
            let mut go_rss = Vec::new();
            // kubectl reads no gzip: its decoder gets the YAML itself.
            let go_file = if *file == files.gzip {
                &files.yaml
            } else {
                file
            };
            for run in 0..args.runs {
                let mut mdiag_run = || -> anyhow::Result<()> {
                    let args = [
                        "triage".as_ref(),
                        "-A".as_ref(),
                        "--snapshot".as_ref(),
                        file.as_os_str(),
                        "-o".as_ref(),
                        "json".as_ref(),
                    ];
                    let (elapsed, kb, _) = timed_rss(binary, &args, &[0, 1], false)?;
                    mdiag_times.push(elapsed);
                    rss.push(kb);
                    Ok(())
                };
                let mut go_run = || -> anyhow::Result<()> {
                    let (elapsed, kb, out) =
                        timed_rss(&kubectl_decoder, &[go_file.as_os_str()], &[0], true)?;
                    if out.trim() != files.objects.to_string() {
                        bail!(
                            "kubectl's decoder read {} objects of {}, not {}",
                            out.trim(),
                            go_file.display(),
                            files.objects
                        );
                    }
                    go_times.push(elapsed);
                    go_rss.push(kb);
                    Ok(())
                };
                let mut anchor_run = || -> anyhow::Result<()> {
                    let t = Instant::now();
                    let out = Command::new(&anchor).arg(&files.json).output()?;
                    if !out.status.success() {
                        bail!("anchor failed: {}", String::from_utf8_lossy(&out.stderr));
                    }
                    anchor_times.push(t.elapsed());
                    Ok(())
                };
                if run % 2 == 0 {
                    mdiag_run()?;
                    anchor_run()?;
                    go_run()?;
                } else {
                    go_run()?;
                    anchor_run()?;
                    mdiag_run()?;
                }
            }
            let m = super::measure::median(mdiag_times);
            let a = super::measure::median(anchor_times);
            let g = super::measure::median(go_times);
            let kb = median_u64(rss);
            let go_kb = median_u64(go_rss);
            let bytes = size(file);
            if *label == "mdiag" && *file == files.yaml {
                yaml_time = Some(m);
            }
            println!(
                "| {label} {} | {bytes} | {:.3} s | {:.0} MB | {:.2} | {:.3} s | **{:.2}** | {:.3} s | {:.0} MB | **{:.2}** |",
                file.file_name().unwrap().to_string_lossy(),
                m.as_secs_f64(),
                kb as f64 / 1000.0,
                kb as f64 * 1024.0 / bytes as f64,
                a.as_secs_f64(),
                m.as_secs_f64() / a.as_secs_f64(),
                g.as_secs_f64(),
                go_kb as f64 / 1000.0,
                m.as_secs_f64() / g.as_secs_f64(),
            );
        }
    }
    if let Some(mdiag_yaml) = yaml_time {
        println!();
        yaml_floor(&floor, &files.yaml, args.runs, mdiag_yaml)?;
    }
    if !args.no_bombs {
        println!();
        bombs(&mdiag, &dir)?;
    }
    Ok(())
}

/// Where the YAML time goes: the tokenizer alone and serde-saphyr's layer
/// (mdiag's reader before it fed the tokenizer's events to its decoder),
/// each on one thread, beside mdiag's whole load and judgement.
fn yaml_floor(floor: &Path, yaml: &Path, runs: u32, mdiag: Duration) -> anyhow::Result<()> {
    println!(
        "| reading dump.yaml, median of {runs} runs | time | its share of mdiag's load + judge |"
    );
    println!("|---|---|---|");
    for (mode, what) in [
        ("events", "granit-parser's events alone, one thread"),
        (
            "serde-saphyr",
            "serde-saphyr into nothing (`IgnoredAny`), one thread: mdiag's YAML reader until issue 30",
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            let out = Command::new(floor).arg(mode).arg(yaml).output()?;
            if !out.status.success() {
                bail!(
                    "yaml-floor {mode} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            times.push(t.elapsed());
        }
        let t = super::measure::median(times);
        println!(
            "| {what} | {:.3} s | {:.2} |",
            t.as_secs_f64(),
            t.as_secs_f64() / mdiag.as_secs_f64()
        );
    }
    println!(
        "| mdiag triage -A (load on every core + judge) | {:.3} s | 1.00 |",
        mdiag.as_secs_f64()
    );
    Ok(())
}

struct DumpFiles {
    yaml: PathBuf,
    json: PathBuf,
    gzip: PathBuf,
    objects: usize,
    workloads: usize,
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// The scenarios' objects, each a list of items.
fn scenarios(root: &Path) -> anyhow::Result<Vec<Vec<Value>>> {
    let mut out = Vec::new();
    for name in SCENARIOS {
        let path = root.join("fixtures/demo").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&path)?;
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut items = Vec::new();
        for d in documents {
            match d {
                Value::Object(mut o) if o.contains_key("items") => {
                    if let Some(Value::Array(list)) = o.remove("items") {
                        items.extend(list);
                    }
                }
                Value::Null => {}
                other => items.push(other),
            }
        }
        out.push(items);
    }
    Ok(out)
}

/// Writes the dump: scenario copies, each in namespace `bench-NN` with its
/// names prefixed and every UID replaced, until the YAML reaches `bytes`.
fn write_dump(root: &Path, dir: &Path, bytes: u64) -> anyhow::Result<DumpFiles> {
    let scenarios = scenarios(root)?;
    let texts: Vec<(String, Vec<String>)> = scenarios
        .iter()
        .map(|items| {
            let text = serde_json::to_string(items).unwrap();
            let uids = uids(items);
            (text, uids)
        })
        .collect();
    let yaml = dir.join("dump.yaml");
    let json = dir.join("dump.json");
    let gzip = dir.join("dump.yaml.gz");
    let mut y = std::io::BufWriter::new(std::fs::File::create(&yaml)?);
    writeln!(y, "apiVersion: v1\nitems:")?;
    let mut all: Vec<Value> = Vec::new();
    let mut written = 0u64;
    let mut copy = 0usize;
    while written < bytes {
        let (text, uids) = &texts[copy % texts.len()];
        let mut t = text.replace("chart-demo", &format!("w{copy:05}"));
        t = t.replace("modeldock-lab", &format!("bench-{:02}", copy % 50));
        for (i, uid) in uids.iter().enumerate() {
            t = t.replace(uid.as_str(), &fresh_uid(copy, i));
        }
        let items: Vec<Value> = serde_json::from_str(&t)?;
        for item in &items {
            let doc = serde_saphyr::to_string(item)?;
            let mut first = true;
            for line in doc.lines() {
                let prefix = if first { "- " } else { "  " };
                first = false;
                writeln!(y, "{prefix}{line}")?;
                written += line.len() as u64 + 3;
            }
        }
        all.extend(items);
        copy += 1;
    }
    writeln!(y, "kind: List\nmetadata:\n  resourceVersion: \"\"")?;
    y.flush()?;
    drop(y);
    let list = serde_json::json!({
        "apiVersion": "v1",
        "items": all,
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    });
    let mut j = std::io::BufWriter::new(std::fs::File::create(&json)?);
    serde_json::to_writer_pretty(&mut j, &list)?;
    j.flush()?;
    let objects = list["items"].as_array().map_or(0, Vec::len);
    let mut g = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(std::fs::File::create(&gzip)?),
        flate2::Compression::default(),
    );
    std::io::copy(&mut std::fs::File::open(&yaml)?, &mut g)?;
    g.finish()?.flush()?;
    Ok(DumpFiles {
        yaml,
        json,
        gzip,
        objects,
        workloads: copy,
    })
}

/// Every `metadata.uid` of the items.
fn uids(items: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = items
        .iter()
        .filter_map(|i| i["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A UID-shaped string, unique per copy and object.
fn fresh_uid(copy: usize, i: usize) -> String {
    format!("0000{i:04}-0000-4000-8000-{copy:012}")
}

/// The anchor: a bare `serde_json` parse, built `--release`.
fn anchor_binary() -> anyhow::Result<PathBuf> {
    super::measure::release_binary("xtask", "json-anchor")
}

/// kubectl's own decoder (harness/yamldecode), built with the harness's
/// Go (`$GO`, else `go` on PATH, else /usr/local/go/bin/go).
fn go_decoder(root: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let go = std::env::var_os("GO")
        .map(PathBuf::from)
        .or_else(|| {
            let on_path = Command::new("go").arg("version").output().ok()?;
            on_path.status.success().then(|| PathBuf::from("go"))
        })
        .unwrap_or_else(|| PathBuf::from("/usr/local/go/bin/go"));
    let out = dir.join("yamldecode");
    let status = Command::new(&go)
        .current_dir(root.join("harness/yamldecode"))
        .args(["build", "-trimpath", "-o"])
        .arg(&out)
        .arg(".")
        .status()
        .with_context(|| format!("running {}", go.display()))?;
    if !status.success() {
        bail!("go build of harness/yamldecode failed ({status})");
    }
    Ok(out)
}

/// Wall time, max RSS (KiB) and standard output (when kept; else it goes
/// nowhere) of a program, which must exit with one of `codes`.
fn timed_rss(
    program: &Path,
    args: &[&std::ffi::OsStr],
    codes: &[i32],
    keep_stdout: bool,
) -> anyhow::Result<(Duration, u64, String)> {
    if !Path::new("/usr/bin/time").exists() {
        bail!("/usr/bin/time is needed for peak memory (Debian package `time`)");
    }
    let mut timed = Command::new("/usr/bin/time");
    timed.args(["-f", "maxrss_kb=%M"]).arg(program).args(args);
    if !keep_stdout {
        timed.stdout(Stdio::null());
    }
    let t = Instant::now();
    let out = timed.output()?;
    let elapsed = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    if !codes.contains(&code) {
        bail!("{} exited {code}: {stderr}", program.display());
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok((elapsed, maxrss(&stderr)?, stdout))
}

fn maxrss(stderr: &str) -> anyhow::Result<u64> {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kb="))
        .and_then(|v| v.trim().parse().ok())
        .context("no maxrss_kb in /usr/bin/time's output")
}

fn median_u64(mut v: Vec<u64>) -> u64 {
    v.sort();
    v[v.len() / 2]
}

/// A gzip bomb (1.34 GB of newlines in 5.6 KB... members of 16 MiB) and
/// an endless YAML list on standard input: each must end in exit 2 with
/// the limit's message, and max RSS must not follow the input.
fn bombs(mdiag: &Path, dir: &Path) -> anyhow::Result<()> {
    println!("| input | exit | wall | max RSS | message |");
    println!("|---|---|---|---|---|");
    // The bomb: one gzip member of 16 MiB of newlines, 80 times over.
    let member = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b'\n'; 16 << 20])?;
        e.finish()?
    };
    let bomb = dir.join("bomb.yaml.gz");
    std::fs::write(&bomb, member.repeat(80))?;
    let inflated = 80u64 * (16 << 20);
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "maxrss_kb=%M"])
        .arg(mdiag)
        .args(["triage", "-A", "--snapshot"])
        .arg(&bomb)
        .output()?;
    report_bomb(
        &format!("gzip bomb: {} bytes inflating to {inflated}", size(&bomb)),
        &out,
        t.elapsed(),
    )?;
    // The endless stream: a List header, then `- ~` items for ever (every
    // item null, so nothing accumulates): only the limit can end it.
    let t = Instant::now();
    let mut child = Command::new("/usr/bin/time")
        .args(["-f", "maxrss_kb=%M"])
        .arg(mdiag)
        .args(["triage", "-A", "--snapshot", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let writer = std::thread::spawn(move || -> u64 {
        let chunk = b"- ~\n".repeat(1 << 16);
        let mut sent = 0u64;
        if stdin
            .write_all(b"apiVersion: v1\nkind: List\nitems:\n")
            .is_err()
        {
            return sent;
        }
        // At most 2 GiB, so a reader that never stops cannot hang the bench.
        while sent < 2 << 30 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            sent += chunk.len() as u64;
        }
        sent
    });
    let out = child.wait_with_output()?;
    let sent = writer.join().unwrap_or(0);
    report_bomb(
        &format!("endless YAML list on stdin ({sent} bytes sent before the pipe closed)"),
        &out,
        t.elapsed(),
    )
}

fn report_bomb(what: &str, out: &std::process::Output, elapsed: Duration) -> anyhow::Result<()> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let message = stderr
        .lines()
        .find(|l| !l.starts_with("maxrss_kb=") && !l.starts_with("Command exited"))
        .unwrap_or("")
        .to_string();
    println!(
        "| {what} | {} | {:.2} s | {:.0} MB | {} |",
        out.status.code().unwrap_or(-1),
        elapsed.as_secs_f64(),
        maxrss(&stderr)? as f64 / 1000.0,
        message.replace('|', "\\|")
    );
    Ok(())
}
