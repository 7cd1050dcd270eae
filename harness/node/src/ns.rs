//! The namespaces the whole test cluster runs in when it has a real node.
//!
//! A real kubelet and containerd leave things behind when they stop: mounts
//! under their root dirs, pod network namespaces under `/run/netns`, veth
//! links, shims that outlive containerd, cgroups. So the cluster runs in
//! namespaces of its own, and stopping it is complete by construction:
//!
//! - a **network namespace**: the node address (on the bridge
//!   [`BRIDGE`]), the apiserver on 127.0.0.1, every pod and probe stay in it,
//!   and nothing in it routes out (it has no link to the host). Its links go
//!   when it goes.
//! - a **mount namespace** with private propagation: fresh tmpfs on `/run`
//!   (containerd's shim sockets, runc's state, the pod netns files) and
//!   overlays with a tmpfs upper layer on `/var/lib`, `/var/log`, `/etc` and
//!   `/opt` (the CNI cache, the kubelet's `/var/log/containers` links): all
//!   of it is dropped with the namespace. `/sys` is mounted again for this
//!   network namespace, keeping the cgroup mounts.
//! - a **PID namespace** whose init is [`init_main`]: it reaps orphans
//!   (containerd's shims are re-parented to it) and, when it exits, the
//!   kernel kills every process left in the namespace, shims and containers
//!   included.
//!
//! Cgroups outlive processes: the kubelet gets a cgroup root of its own
//! (`/mdiag-<tag>`), removed depth-first by [`remove_cgroups`] once the
//! processes are gone.
//!
//! Two ways in:
//! - [`reexec`], for a test binary: when root and not inside yet, it runs
//!   itself again under `unshare --net --mount --pid --fork`, waits, cleans
//!   the cgroups and checks that nothing is left ([`leftovers`]).
//! - [`Holder`], for `cargo xtask cluster up --real-node`, whose processes
//!   outlive xtask: a named network namespace (`ip netns add`) with a holder
//!   process as the PID namespace's init; every component is started in it
//!   with `nsenter`, and `cluster down` kills the holder.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustix::process::{Pid, Signal, WaitOptions, kill_process};

/// Marks a process that runs inside the namespaces: `init` (the PID
/// namespace's init, set by [`reexec`]) or `run` (the test binary proper).
pub const INNER_ENV: &str = "MDIAG_NS_INNER";
/// The namespace set's tag: names the cgroup root (`/mdiag-<tag>`).
pub const TAG_ENV: &str = "MDIAG_NS_TAG";
/// The bridge that holds the node address; the CNI bridge plugin attaches
/// the pods' veths to it too.
pub const BRIDGE: &str = "mdiag0";
/// The node's address, on [`BRIDGE`]. Only ever used inside our own network
/// namespace (nothing routes there from the host, nothing routes out).
pub const NODE_IP: &str = "10.123.0.1";
/// The prefix length of the node's subnet; pods get addresses from it.
pub const NODE_PREFIX: u8 = 24;
/// The pod subnet handed out by host-local (the same /24 as the node
/// address, the bridge is the pods' gateway).
pub const POD_SUBNET: &str = "10.123.0.0/24";
/// The first pod address.
pub const POD_RANGE_START: &str = "10.123.0.10";

/// The cgroup v1 hierarchies (and the v2 one, if mounted) under which the
/// kubelet's cgroup root is made.
const CGROUP_FS: &str = "/sys/fs/cgroup";

/// Whether this process runs inside a namespace set made by this module.
pub fn inside() -> bool {
    std::env::var_os(INNER_ENV).is_some_and(|v| v == "run" || v == "init")
}

/// The tag of the namespace set this process runs in, if any.
pub fn tag() -> Option<String> {
    std::env::var(TAG_ENV).ok().filter(|t| !t.is_empty())
}

/// The kubelet's cgroup root for a tag.
pub fn cgroup_root(tag: &str) -> String {
    format!("/mdiag-{tag}")
}

/// What [`reexec`] decided.
pub enum Stage {
    /// Inside the namespaces: go on and run.
    Run,
    /// The inner run has ended with this exit code (the outer process and
    /// the namespace init return it).
    Done(i32),
}

/// For a test binary's main: when not inside our namespaces yet, runs this
/// same binary (same arguments) again inside fresh ones and returns
/// [`Stage::Done`] with its exit code once it has ended and everything it
/// left has been checked; inside, returns [`Stage::Run`].
///
/// Needs root, `unshare` and `ip` (util-linux, iproute2): without them it
/// fails with a message that names what is missing.
pub fn reexec(name: &str) -> anyhow::Result<Stage> {
    match std::env::var(INNER_ENV).as_deref() {
        Ok("run") => return Ok(Stage::Run),
        Ok("init") => return init_run(),
        _ => {}
    }
    preflight()?;
    let tag = format!("{name}-{}", std::process::id());
    sweep_stale_cgroups(name);
    let exe = std::env::current_exe().context("finding this test binary")?;
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let status = Command::new("unshare")
        .args([
            "--net",
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "--propagation",
            "private",
            // When unshare dies, so does the namespace's init, and with it
            // everything in the namespace.
            "--kill-child",
            "--",
        ])
        .arg(&exe)
        .args(&args)
        .env(INNER_ENV, "init")
        .env(TAG_ENV, &tag)
        .status()
        .context("running unshare (util-linux)")?;
    let code = status.code().unwrap_or(1);
    // Every process of the namespace is gone now; cgroups stay until removed.
    let mut problems = Vec::new();
    if let Err(e) = remove_cgroups(&cgroup_root(&tag)) {
        problems.push(format!("{e:#}"));
    }
    problems.extend(leftovers(&tag, None));
    if !problems.is_empty() {
        eprintln!(
            "the namespaced run left things behind:\n  {}",
            problems.join("\n  ")
        );
        return Ok(Stage::Done(if code == 0 { 1 } else { code }));
    }
    Ok(Stage::Done(code))
}

/// Checks what the namespaces and the node need, naming what is missing.
pub fn preflight() -> anyhow::Result<()> {
    if !rustix::process::geteuid().is_root() {
        bail!(
            "the real node needs root (network, mount and PID namespaces, containerd, the kubelet); \
             run as root (CI does)"
        );
    }
    for (tool, package) in [
        ("unshare", "util-linux"),
        ("nsenter", "util-linux"),
        ("mount", "mount"),
        ("ip", "iproute2"),
    ] {
        if which(tool).is_none() {
            bail!("`{tool}` is missing: install the Debian package {package} (.ci/run does)");
        }
    }
    Ok(())
}

/// The path of a program on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The init of the PID namespace [`reexec`] made: sets the namespaces up,
/// runs this binary again as the real run, reaps every orphan while it
/// runs, and returns its exit code.
fn init_run() -> anyhow::Result<Stage> {
    let tag = tag().context("MDIAG_NS_TAG is not set")?;
    setup_inside(&tag)?;
    let exe = std::env::current_exe()?;
    let child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(INNER_ENV, "run")
        .spawn()
        .context("starting the inner run")?;
    let main = Pid::from_child(&child);
    // Reap everything: the inner run, and whatever is re-parented to us.
    // std's Child is not waited on: this loop owns every wait of the init.
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == main => {
                let code = status
                    .exit_status()
                    .or_else(|| status.terminating_signal().map(|s| 128 + s))
                    .unwrap_or(1);
                return Ok(Stage::Done(code));
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => bail!("waiting in the namespace init: {e}"),
        }
    }
}

/// The init of a [`Holder`]'s PID namespace (`cargo xtask cluster ns-init`):
/// sets the namespaces up, writes `ready` beside it, then reaps orphans
/// until it is killed (by `cluster down`).
pub fn holder_init(tag: &str, ready: &Path) -> anyhow::Result<()> {
    setup_inside(tag)?;
    fs::write(ready, "ready\n")?;
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::CHILD) => sleep(Duration::from_millis(500)),
            Err(e) => bail!("waiting in the namespace init: {e}"),
        }
    }
}

fn run(program: &str, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Inside fresh network and mount namespaces: loopback up, the node bridge
/// with its address, `/sys` for this network namespace, and the tmpfs and
/// overlays that keep every write to system paths inside.
fn setup_inside(tag: &str) -> anyhow::Result<()> {
    run("ip", &["link", "set", "lo", "up"])?;
    run("ip", &["link", "add", BRIDGE, "type", "bridge"])?;
    let addr = format!("{NODE_IP}/{NODE_PREFIX}");
    run("ip", &["addr", "add", &addr, "dev", BRIDGE])?;
    run("ip", &["link", "set", BRIDGE, "up"])?;

    // A fresh /run: first drop what the host had mounted there (in this
    // private mount namespace only: `ip netns` files, /run/lock, ...), so a
    // look at /run/netns later sees only the pods' namespaces.
    unmount_under(Path::new("/run"))?;
    run(
        "mount",
        &["-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run"],
    )?;
    // A scratch tmpfs for the overlays' upper layers and to park the cgroup
    // mounts while /sys is replaced.
    let scratch = Path::new("/run/.mdiag-ns");
    fs::create_dir_all(scratch)?;
    run(
        "mount",
        &["-t", "tmpfs", "-o", "mode=0700", "tmpfs", "/run/.mdiag-ns"],
    )?;

    // sysfs shows the network devices of the namespace that mounts it:
    // mount it again, moving the cgroup hierarchies over.
    let keep = scratch.join("cgroup");
    fs::create_dir_all(&keep)?;
    let keep_s = keep.display().to_string();
    run("mount", &["--rbind", CGROUP_FS, &keep_s])?;
    run("umount", &["-l", "/sys"])?;
    run("mount", &["-t", "sysfs", "sysfs", "/sys"])?;
    run("mount", &["--move", &keep_s, CGROUP_FS])?;

    // Overlays: reads see the host's files, writes land in the tmpfs.
    // Skipped for a dir that holds this checkout (the cluster's state must
    // stay visible outside).
    let repo = std::env::current_dir().unwrap_or_default();
    for dir in ["/var/lib", "/var/log", "/etc", "/opt"] {
        let d = Path::new(dir);
        if !d.is_dir() || repo.starts_with(d) {
            continue;
        }
        let name = dir.trim_start_matches('/').replace('/', "-");
        let upper = scratch.join(format!("{name}.upper"));
        let work = scratch.join(format!("{name}.work"));
        fs::create_dir_all(&upper)?;
        fs::create_dir_all(&work)?;
        let opts = format!(
            "lowerdir={dir},upperdir={},workdir={}",
            upper.display(),
            work.display()
        );
        run("mount", &["-t", "overlay", "-o", &opts, "overlay", dir])?;
    }
    for dir in ["/run/netns", "/run/containerd"] {
        fs::create_dir_all(dir)?;
    }
    make_cgroups(&cgroup_root(tag))?;
    Ok(())
}

/// The cgroup hierarchies mounted under /sys/fs/cgroup (each v1 controller
/// dir and the v2 one), following the co-mount symlinks once.
fn cgroup_hierarchies() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(CGROUP_FS) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        // `cpu` and `cpuacct` may be symlinks to `cpu,cpuacct`.
        if p.is_symlink() || !p.join("cgroup.procs").is_file() {
            continue;
        }
        out.push(p);
    }
    out.sort();
    out
}

/// Makes the kubelet's cgroup root in every hierarchy (the kubelet wants it
/// to exist).
pub fn make_cgroups(root: &str) -> anyhow::Result<()> {
    for h in cgroup_hierarchies() {
        let d = h.join(root.trim_start_matches('/'));
        fs::create_dir_all(&d).with_context(|| format!("creating cgroup {}", d.display()))?;
    }
    Ok(())
}

/// Pids in any cgroup under `root`, in any hierarchy.
pub fn cgroup_pids(root: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for h in cgroup_hierarchies() {
        let d = h.join(root.trim_start_matches('/'));
        walk_dirs(&d, &mut |dir| {
            if let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) {
                pids.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        });
    }
    pids.sort_unstable();
    pids.dedup();
    pids
}

fn walk_dirs(dir: &Path, f: &mut dyn FnMut(&Path)) {
    if !dir.is_dir() {
        return;
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk_dirs(&e.path(), f);
            }
        }
    }
    f(dir);
}

/// SIGKILLs every process in the cgroups under `root` until they are empty
/// (a forking process is caught on the next round), up to 10 s.
pub fn kill_cgroups(root: &str) -> anyhow::Result<()> {
    let t = Instant::now();
    loop {
        let pids = cgroup_pids(root);
        if pids.is_empty() {
            return Ok(());
        }
        for pid in &pids {
            if let Some(p) = Pid::from_raw(*pid) {
                let _ = kill_process(p, Signal::KILL);
            }
        }
        if t.elapsed() > Duration::from_secs(10) {
            bail!("processes {pids:?} are still in the cgroups under {root} after SIGKILL");
        }
        sleep(Duration::from_millis(100));
    }
}

/// Removes the cgroups under `root` (and `root`) in every hierarchy,
/// deepest first. Waits up to 10 s for the last tasks to leave.
pub fn remove_cgroups(root: &str) -> anyhow::Result<()> {
    let t = Instant::now();
    loop {
        let mut failed = Vec::new();
        for h in cgroup_hierarchies() {
            let d = h.join(root.trim_start_matches('/'));
            walk_dirs(&d, &mut |dir| {
                if let Err(e) = fs::remove_dir(dir)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    failed.push(format!("{}: {e}", dir.display()));
                }
            });
        }
        if failed.is_empty() {
            return Ok(());
        }
        if t.elapsed() > Duration::from_secs(10) {
            bail!("cannot remove cgroups: {}", failed.join(", "));
        }
        sleep(Duration::from_millis(200));
    }
}

/// Removes the cgroup roots of earlier runs named `mdiag-<name>-<pid>`
/// whose pid is gone (a run killed before it could clean up).
fn sweep_stale_cgroups(name: &str) {
    let prefix = format!("mdiag-{name}-");
    let mut stale = Vec::new();
    for h in cgroup_hierarchies() {
        for e in fs::read_dir(&h).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = n.strip_prefix(&prefix).and_then(|p| p.parse::<i32>().ok())
                && !Path::new(&format!("/proc/{pid}")).exists()
            {
                stale.push(format!("/{n}"));
            }
        }
    }
    stale.sort();
    stale.dedup();
    for root in stale {
        eprintln!("removing cgroups {root} left by an earlier run");
        let _ = kill_cgroups(&root);
        if let Err(e) = remove_cgroups(&root) {
            eprintln!("warning: {e:#}");
        }
    }
}

/// What a namespace set with this tag left on the host: cgroups, mounts
/// under `dir` (the cluster's state dir), a named network namespace
/// `netns`. Empty when nothing is left.
pub fn leftovers(tag: &str, netns: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let root = cgroup_root(tag);
    for h in cgroup_hierarchies() {
        let d = h.join(root.trim_start_matches('/'));
        if d.exists() {
            out.push(format!("cgroup {} is still there", d.display()));
        }
    }
    if let Some(name) = netns
        && Path::new("/run/netns").join(name).exists()
    {
        out.push(format!("network namespace {name} is still there"));
    }
    for pid in processes_with_env(TAG_ENV, tag) {
        out.push(format!("process {pid} of {tag} is still running"));
    }
    out
}

/// Pids of processes whose environment holds `key=value` (the components
/// of one namespace set inherit [`TAG_ENV`]).
pub fn processes_with_env(key: &str, value: &str) -> Vec<i32> {
    let needle = format!("{key}={value}");
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            // A zombie has an empty environ; this one is alive.
            out.push(pid);
        }
    }
    out
}

/// Mount points at or under `dir` in this mount namespace, deepest first.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_mount_path)
        .filter(|p| p.starts_with(dir))
        .collect();
    out.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    out.dedup();
    out
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape_mount_path(s: &str) -> PathBuf {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8)
        {
            out.push(v as char);
            i += 4;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    PathBuf::from(out)
}

/// Unmounts (lazily) every mount at or under `dir`, deepest first.
pub fn unmount_under(dir: &Path) -> anyhow::Result<()> {
    for _ in 0..5 {
        let mounts = mounts_under(dir);
        if mounts.is_empty() {
            return Ok(());
        }
        for m in mounts {
            let _ = rustix::mount::unmount(&m, rustix::mount::UnmountFlags::DETACH);
        }
    }
    let left = mounts_under(dir);
    if !left.is_empty() {
        bail!(
            "mounts still under {}: {}",
            dir.display(),
            left.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// Links of this network namespace other than `lo` and [`BRIDGE`] (the
/// pods' veths while they exist).
pub fn extra_links() -> Vec<String> {
    fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lo" && n != BRIDGE)
        .collect()
}

// ---------------------------------------------------------------- holder

/// The namespaces of a cluster whose processes outlive the command that
/// started them (`cargo xtask cluster up --real-node`): a named network
/// namespace and a holder process, the init of the PID namespace, whose
/// mount namespace every component shares.
#[derive(Clone, Debug)]
pub struct Holder {
    /// The `ip netns` name (also the tag: the cgroup root is `/mdiag-<netns>`).
    pub netns: String,
    /// Host pid of the holder (the PID namespace's init).
    pub pid: i32,
    /// Its start time, so a reused pid is never taken for it.
    pub start_time: u64,
}

impl Holder {
    /// Reads the record `create` wrote, if any.
    pub fn read(record: &Path) -> Option<Holder> {
        let text = fs::read_to_string(record).ok()?;
        let mut it = text.split_whitespace();
        Some(Holder {
            netns: it.next()?.to_owned(),
            pid: it.next()?.parse().ok()?,
            start_time: it.next()?.parse().ok()?,
        })
    }

    /// Makes the network namespace `netns` and starts `init` (a command
    /// that ends in [`holder_init`], which writes `ready` once set up) as
    /// the init of a new PID and mount namespace inside it, detached; waits
    /// for it and writes `record`.
    pub fn create(
        record: &Path,
        ready: &Path,
        netns: &str,
        init: &[OsString],
        log: &Path,
    ) -> anyhow::Result<Holder> {
        preflight()?;
        if Path::new("/run/netns").join(netns).exists() {
            bail!(
                "network namespace {netns} exists already (a cluster that was not stopped?); \
                 `cargo xtask cluster down` or `ip netns del {netns}`"
            );
        }
        run("ip", &["netns", "add", netns])?;
        let _ = fs::remove_file(ready);
        let out = fs::OpenOptions::new().create(true).append(true).open(log)?;
        let err = out.try_clone()?;
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net=/run/netns/{netns}"))
            .args([
                "--",
                "unshare",
                "--mount",
                "--pid",
                "--fork",
                "--mount-proc",
                "--propagation",
                "private",
                "--",
            ])
            .args(init)
            .env(TAG_ENV, netns)
            .env(INNER_ENV, "holder")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let mut child = cmd.spawn().context("starting the namespace holder")?;
        let parent = child.id() as i32;
        let t = Instant::now();
        let fail = |msg: String| -> anyhow::Result<Holder> {
            let _ = run("ip", &["netns", "del", netns]);
            bail!("{msg}; see {}", log.display())
        };
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return fail(format!("the namespace holder exited ({status})"));
            }
            if ready.exists() {
                break;
            }
            if t.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                return fail("the namespace holder was not ready within 20 s".into());
            }
            sleep(Duration::from_millis(50));
        }
        let pid = child_of(parent, Duration::from_secs(2))
            .context("finding the namespace holder's init process")?;
        let start_time = mdiag_harness_util::start_time_if_alive(pid)
            .context("reading the namespace holder's start time")?;
        let h = Holder {
            netns: netns.to_owned(),
            pid,
            start_time,
        };
        fs::write(record, format!("{} {} {}\n", h.netns, h.pid, h.start_time))?;
        Ok(h)
    }

    pub fn is_alive(&self) -> bool {
        mdiag_harness_util::start_time_if_alive(self.pid) == Some(self.start_time)
    }

    /// The argv prefix that runs a command in all three namespaces (a
    /// long-running component: its mounts and children stay inside).
    pub fn enter_all(&self, wd: &Path) -> Vec<String> {
        vec![
            "nsenter".into(),
            format!("--target={}", self.pid),
            "--net".into(),
            "--mount".into(),
            "--pid".into(),
            format!("--wd={}", wd.display()),
            "--".into(),
        ]
    }

    /// The argv prefix that runs a short command (kubectl) in the network
    /// namespace only.
    pub fn enter_net(&self) -> Vec<String> {
        vec![
            "nsenter".into(),
            format!("--net=/run/netns/{}", self.netns),
            "--".into(),
        ]
    }

    /// Kills the holder, and so every process in its PID namespace, then
    /// removes the cgroups and the network namespace. Checks nothing is
    /// left.
    pub fn destroy(&self) -> anyhow::Result<()> {
        if self.is_alive()
            && let Some(p) = Pid::from_raw(self.pid)
        {
            let _ = kill_process(p, Signal::KILL);
            let t = Instant::now();
            while mdiag_harness_util::start_time_if_alive(self.pid).is_some()
                && t.elapsed() < Duration::from_secs(10)
            {
                sleep(Duration::from_millis(50));
            }
        }
        // Processes of the namespace die with its init; wait for the last.
        let t = Instant::now();
        while !processes_with_env(TAG_ENV, &self.netns).is_empty()
            && t.elapsed() < Duration::from_secs(10)
        {
            sleep(Duration::from_millis(100));
        }
        let root = cgroup_root(&self.netns);
        let _ = kill_cgroups(&root);
        let cg = remove_cgroups(&root);
        if Path::new("/run/netns").join(&self.netns).exists() {
            run("ip", &["netns", "del", &self.netns])?;
        }
        cg?;
        let left = leftovers(&self.netns, Some(&self.netns));
        if !left.is_empty() {
            bail!("left behind: {}", left.join("; "));
        }
        Ok(())
    }
}

/// The first child of `parent` (from /proc/<parent>/task/<parent>/children),
/// waiting up to `within` for it to appear.
pub fn child_of(parent: i32, within: Duration) -> anyhow::Result<i32> {
    let t = Instant::now();
    loop {
        let children = fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(pid) = children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
        {
            return Ok(pid);
        }
        if t.elapsed() > within {
            bail!("process {parent} has no child after {within:?}");
        }
        sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(
            unescape_mount_path(r"/a\040b/c\134d"),
            PathBuf::from(r"/a b/c\d")
        );
        assert_eq!(unescape_mount_path("/plain"), PathBuf::from("/plain"));
    }
}
