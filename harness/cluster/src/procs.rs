//! Starting the control-plane processes, recording them, and stopping exactly
//! those processes later.
//!
//! A process is identified by its pid together with its start time (field 22
//! of `/proc/<pid>/stat`), so a pid that the kernel has since handed to some
//! other program is never signalled.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustix::process::{Pid, Signal, kill_process};

use mdiag_harness_util::proc_stat;
pub use mdiag_harness_util::start_time_if_alive;

/// One started process, as written to the state dir's `pids` file.
#[derive(Clone, Debug)]
pub struct Record {
    pub name: String,
    pub pid: i32,
    pub start_time: u64,
    pub exe: PathBuf,
}

impl Record {
    fn line(&self) -> String {
        format!(
            "{} {} {} {}\n",
            self.name,
            self.pid,
            self.start_time,
            self.exe.display()
        )
    }

    fn parse(line: &str) -> Option<Record> {
        let mut it = line.splitn(4, ' ');
        Some(Record {
            name: it.next()?.to_owned(),
            pid: it.next()?.parse().ok()?,
            start_time: it.next()?.parse().ok()?,
            exe: PathBuf::from(it.next()?),
        })
    }

    /// Whether the recorded process is still running (a zombie counts as
    /// gone).
    pub fn is_alive(&self) -> bool {
        matches!(proc_stat(self.pid), Some((state, start)) if start == self.start_time && state != 'Z' && state != 'X')
    }

    fn signal(&self, sig: Signal) -> anyhow::Result<()> {
        // Re-check identity right before signalling.
        if !self.is_alive() {
            return Ok(());
        }
        let pid = Pid::from_raw(self.pid).context("invalid pid")?;
        match kill_process(pid, sig) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => {
                Err(e).with_context(|| format!("signalling {} (pid {})", self.name, self.pid))
            }
        }
    }
}

/// Reads the `pids` file; a missing file means nothing was started.
pub fn read_records(path: &Path) -> anyhow::Result<Vec<Record>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().filter_map(Record::parse).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// A process started by this run of `up`, still our child.
pub struct Started {
    pub record: Record,
    pub child: Child,
    pub log: PathBuf,
}

impl Started {
    /// `Some(description)` when the process has exited already.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("unknown state: {e}")),
        }
    }
}

/// Starts `exe args...` in its own process group (so a Ctrl-C at the
/// terminal that ran `up` does not reach it), with stdin closed and
/// stdout/stderr appended to `log`, and records it in `pids_file` at once.
pub fn spawn(
    name: &str,
    exe: &Path,
    args: &[String],
    cwd: &Path,
    log: &Path,
    pids_file: &Path,
) -> anyhow::Result<Started> {
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening {}", log.display()))?;
    let err = out.try_clone()?;
    let child = Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let pid = child.id() as i32;
    let start_time = proc_stat(pid)
        .map(|(_, start)| start)
        .with_context(|| format!("reading /proc/{pid}/stat of {name}"))?;
    let record = Record {
        name: name.to_owned(),
        pid,
        start_time,
        exe: exe.to_owned(),
    };
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(pids_file)?;
    f.write_all(record.line().as_bytes())?;
    f.sync_all()?;
    Ok(Started {
        record,
        child,
        log: log.to_owned(),
    })
}

/// Rewrites the pids file with only these records.
pub fn write_records(path: &Path, records: &[Record]) -> anyhow::Result<()> {
    let text: String = records.iter().map(Record::line).collect();
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Stops the given processes one after the other, in the order given
/// (dependants first: each component shuts down faster while what it talks to
/// is still there): SIGTERM, up to `grace` for it to exit, then SIGKILL.
pub fn stop(records: &[Record], grace: Duration) -> anyhow::Result<()> {
    let mut left = Vec::new();
    for r in records.iter().filter(|r| r.is_alive()) {
        let t = Instant::now();
        r.signal(Signal::TERM)?;
        if !wait_gone(r, grace) {
            eprintln!(
                "{} (pid {}) did not exit within {} s of SIGTERM; sending SIGKILL",
                r.name,
                r.pid,
                grace.as_secs()
            );
            r.signal(Signal::KILL)?;
            if !wait_gone(r, Duration::from_secs(5)) {
                left.push(format!("{} (pid {})", r.name, r.pid));
                continue;
            }
        }
        eprintln!(
            "stopped {} (pid {}) in {:.1} s",
            r.name,
            r.pid,
            t.elapsed().as_secs_f64()
        );
    }
    if !left.is_empty() {
        bail!("still running after SIGKILL: {}", left.join(", "));
    }
    Ok(())
}

fn wait_gone(r: &Record, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if !r.is_alive() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        sleep(Duration::from_millis(50));
    }
}

/// Stops processes that are still our children and reaps them.
pub fn stop_started(started: &mut [Started]) {
    let records: Vec<Record> = started.iter().rev().map(|s| s.record.clone()).collect();
    if let Err(e) = stop(&records, Duration::from_secs(5)) {
        eprintln!("warning: {e:#}");
    }
    for s in started.iter_mut() {
        let _ = s.child.try_wait();
    }
}

/// The last `n` lines of a log file.
pub fn tail(path: &Path, n: usize) -> String {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(n)..].join("\n")
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

/// Creates an empty file (truncating it) with mode 0600.
pub fn private_file(path: &Path) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}
