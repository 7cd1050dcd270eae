//! `cargo xtask cluster up|down|env|status|stop|start|load`: the test control
//! plane of `mdiag_harness::cluster`, from the command line. `up` also
//! installs the ModelService CRD and starts the simulator (fake nodes and
//! the stand-in controller), so a ModelService applied by hand becomes Pods.
//!
//! `up --real-node` adds the local registries and a real node, and runs the
//! whole cluster in namespaces of its own (`mdiag_harness::node::ns`): a
//! named network namespace `mdiag-<hash of the state dir>` and a holder
//! process, the init of a PID and mount namespace. Every `cluster` command
//! then runs itself again inside them (`nsenter`), and `down` ends by
//! killing the holder, which takes every process of the namespace with it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Subcommand;
use mdiag_harness::cluster::{self, Layout, UpOptions};
use mdiag_harness::load;
use mdiag_harness::node::ns::{self, Holder};

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Start etcd, the control plane and the simulator on 127.0.0.1 (builds
    /// the binaries first when they are not cached).
    Up {
        /// Also the local registries and a real node (containerd, kubelet),
        /// everything in namespaces of its own (needs root).
        #[arg(long)]
        real_node: bool,
    },
    /// Stop what `up` started and remove its state.
    Down,
    /// Print the KUBECONFIG export for the running cluster.
    Env,
    /// Tell whether the cluster is running, with its processes and ports.
    Status,
    /// Stop one component (kube-scheduler, kube-controller-manager, mdiag-sim).
    Stop { component: String },
    /// Start a stopped component again.
    Start { component: String },
    /// Write N Pods in M ModelServices over K namespaces, in a mix of broken
    /// states, as the controllers and kubelets would store them (stops
    /// kube-controller-manager and mdiag-sim first: see
    /// harness/src/load.rs).
    Load(LoadArgs),
    /// The init of the real-node cluster's namespaces (started by `up
    /// --real-node`, not by hand).
    #[command(hide = true)]
    NsInit {
        #[arg(long)]
        tag: String,
        #[arg(long)]
        ready: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct LoadArgs {
    #[arg(long, default_value_t = 10_000)]
    pub pods: u32,
    #[arg(long, default_value_t = 1_000)]
    pub workloads: u32,
    #[arg(long, default_value_t = 20)]
    pub namespaces: u32,
    /// Namespaces are PREFIX-NN, Nodes PREFIX-node-NNN.
    #[arg(long, default_value = "load")]
    pub prefix: String,
}

const KCM: &str = "kube-controller-manager";

/// Loads the cluster; returns what was planned.
pub fn load(layout: &Layout, args: &LoadArgs) -> anyhow::Result<load::LoadReport> {
    if !cluster::running(layout, "kube-apiserver") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    if cluster::running(layout, KCM) {
        cluster::stop_component(layout, KCM)?;
        eprintln!(
            "stopped {KCM}: its deployment controller would replace the loaded ReplicaSets; \
             delete the load (kubectl delete ns,nodes -l {}) before `cargo xtask cluster start {KCM}`",
            load::LOAD_LABEL
        );
    }
    // Its modeldock-controller stand-in reconciles every loaded
    // ModelService over and over (a get and a patch of each Deployment and
    // Service): the apiserver spent a core on it, which every benchmark on
    // the loaded cluster then measured.
    if cluster::running(layout, SIM) {
        cluster::stop_component(layout, SIM)?;
        eprintln!(
            "stopped {SIM}: its controller stand-in would reconcile every loaded ModelService; \
             `cargo xtask cluster start {SIM}` once the load is deleted"
        );
    }
    let spec = load::LoadSpec {
        pods: args.pods,
        workloads: args.workloads,
        namespaces: args.namespaces,
        prefix: args.prefix.clone(),
    };
    let report = load::load_blocking(&layout.admin_kubeconfig(), &spec)?;
    eprintln!(
        "loaded {} Pods in {} ModelServices over {} namespaces in {:.1}s ({} requests, {:.0}/s)",
        report.pods,
        report.workloads.len(),
        report.namespaces.len(),
        report.elapsed.as_secs_f64(),
        report.requests,
        report.requests as f64 / report.elapsed.as_secs_f64()
    );
    for (state, (workloads, pods)) in load::shares(&report.workloads) {
        eprintln!("  {state}: {workloads} workloads, {pods} Pods");
    }
    Ok(report)
}

const SIM: &str = "mdiag-sim";

/// Where the holder of a real-node cluster is recorded: beside the state
/// dir (which `up` and `down` remove), like the lock.
fn holder_record(layout: &Layout) -> PathBuf {
    sibling(layout, "ns")
}

fn sibling(layout: &Layout, ext: &str) -> PathBuf {
    let dir = layout.dir();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cluster".into());
    dir.with_file_name(format!("{name}.{ext}"))
}

/// The network namespace's name: `mdiag-` and a hash of the state dir, so
/// two checkouts never share one.
fn netns_name(layout: &Layout) -> String {
    // FNV-1a, 32 bits: short, stable across runs.
    let mut h: u32 = 0x811c_9dc5;
    for b in layout.dir().as_os_str().as_encoded_bytes() {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("mdiag-{h:08x}")
}

/// The holder of this state dir's namespaces, if it is alive.
pub(crate) fn live_holder(layout: &Layout) -> Option<Holder> {
    Holder::read(&holder_record(layout)).filter(Holder::is_alive)
}

/// Runs this xtask again, with the same arguments, inside the holder's
/// namespaces.
fn run_inside(holder: &Holder, args: &[OsString]) -> anyhow::Result<()> {
    run_inside_with(holder, args, &[])
}

/// [`run_inside`] with more environment variables for the inner run.
pub(crate) fn run_inside_with(
    holder: &Holder,
    args: &[OsString],
    envs: &[(&str, OsString)],
) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let cwd = std::env::current_dir()?;
    let prefix = holder.enter_all(&cwd);
    let status = Command::new(&prefix[0])
        .args(&prefix[1..])
        .arg(&exe)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v)))
        .env(ns::INNER_ENV, "run")
        .env(ns::TAG_ENV, &holder.netns)
        .status()
        .context("running nsenter (util-linux)")?;
    if !status.success() {
        bail!("inside the cluster's namespaces: xtask {args:?} failed ({status})");
    }
    Ok(())
}

pub(crate) fn this_args() -> Vec<OsString> {
    std::env::args_os().skip(1).collect()
}

pub fn run(cmd: ClusterCommand) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    let inside = ns::inside();
    // A real-node cluster lives in its namespaces: run there.
    if !inside
        && !matches!(
            cmd,
            ClusterCommand::Up { .. }
                | ClusterCommand::Down
                | ClusterCommand::Env
                | ClusterCommand::NsInit { .. }
        )
        && let Some(holder) = live_holder(&layout)
    {
        return run_inside(&holder, &this_args());
    }
    match cmd {
        ClusterCommand::Up { real_node: true } if !inside => up_real_node(&layout),
        ClusterCommand::Up { real_node } => {
            // Inside, the outer xtask holds the lock.
            let _lock = if inside { None } else { Some(layout.lock()?) };
            if !real_node && live_holder(&layout).is_some() {
                bail!(
                    "this cluster runs with a real node; `cargo xtask cluster down` first, \
                     or `cargo xtask cluster up --real-node`"
                );
            }
            let up = cluster::up_with(&layout, UpOptions { real_node })?;
            for file in [
                "fixtures/crd/modelservice.yaml",
                "fixtures/crd/modelservice-view.yaml",
            ] {
                cluster::admin_kubectl(&layout, &["apply", "-f", file])?;
            }
            if !cluster::running(&layout, SIM) {
                let exe = build_sim()?;
                let kubeconfig = layout.admin_kubeconfig().display().to_string();
                let mut args = vec!["--kubeconfig".into(), kubeconfig];
                if real_node {
                    // The node lifecycle controller's grace is short there
                    // (cluster::NODE_MONITOR_GRACE): heartbeat well inside it.
                    args.extend(["--heartbeat-seconds".into(), "5".into()]);
                }
                cluster::start_extra(&layout, SIM, &exe, &args)?;
                eprintln!(
                    "started {SIM}: nodes kind-worker, kind-worker2 and the modeldock-controller stand-in"
                );
            }
            if let Some(images) = up.images {
                eprintln!(
                    "real node {} is Ready (label and taint {}={}); images: {} (tags {}), pause {}",
                    mdiag_harness::node::NODE_NAME,
                    mdiag_harness::node::NODE_KEY,
                    mdiag_harness::node::NODE_ROLE,
                    images.model_server_repository,
                    images
                        .model_server
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                    images.pause,
                );
            }
            Ok(())
        }
        ClusterCommand::Down => {
            let _lock = if inside { None } else { Some(layout.lock()?) };
            if !inside && let Some(holder) = Holder::read(&holder_record(&layout)) {
                // Stop the components in order (they shut down cleanly), then
                // end the namespaces: whatever is left dies with the holder.
                let stopped = if holder.is_alive() {
                    run_inside(&holder, &this_args())
                } else {
                    Ok(())
                };
                holder.destroy()?;
                let _ = std::fs::remove_file(holder_record(&layout));
                let _ = std::fs::remove_file(sibling(&layout, "ns.ready"));
                if layout.dir().exists() {
                    std::fs::remove_dir_all(layout.dir())?;
                }
                if let Err(e) = stopped {
                    eprintln!("warning: {e:#}");
                }
                eprintln!(
                    "namespaces {} removed: no process, mount, link or cgroup of the cluster is left",
                    holder.netns
                );
                return Ok(());
            }
            cluster::down(&layout)
        }
        ClusterCommand::Env => {
            cluster::env(&layout)?;
            if let Some(holder) = live_holder(&layout) {
                print_ns_env(&layout, &holder);
            }
            Ok(())
        }
        ClusterCommand::Status => cluster::status(&layout),
        ClusterCommand::Stop { component } => cluster::stop_component(&layout, &component),
        ClusterCommand::Start { component } => cluster::start_component(&layout, &component),
        ClusterCommand::Load(args) => load(&layout, &args).map(|_| ()),
        ClusterCommand::NsInit { tag, ready } => ns::holder_init(&tag, &ready),
    }
}

/// `up --real-node` from the host: builds what needs the network, makes
/// (or finds) the namespaces, and runs `up` inside them.
fn up_real_node(layout: &Layout) -> anyhow::Result<()> {
    let _lock = layout.lock()?;
    mdiag_harness::node::ns::preflight()?;
    // Inside there is no network: build (or find) everything first.
    cluster::build_all(layout)?;
    build_harness_bins()?;
    let record = holder_record(layout);
    let (holder, created) = match Holder::read(&record) {
        Some(h) if h.is_alive() => (h, false),
        stale => {
            if let Some(h) = stale {
                eprintln!("the namespaces of an earlier cluster are gone; cleaning up");
                h.destroy()?;
            }
            if layout.dir().exists() {
                std::fs::remove_dir_all(layout.dir())?;
            }
            let netns = netns_name(layout);
            let exe = std::env::current_exe()?;
            let ready = sibling(layout, "ns.ready");
            let init: Vec<OsString> = vec![
                exe.into(),
                "cluster".into(),
                "ns-init".into(),
                "--tag".into(),
                netns.clone().into(),
                "--ready".into(),
                ready.clone().into(),
            ];
            let log = sibling(layout, "ns.log");
            let h = Holder::create(&record, &ready, &netns, &init, &log)?;
            eprintln!(
                "made network namespace {netns} and its holder (pid {}); the cluster runs in them",
                h.pid
            );
            (h, true)
        }
    };
    if let Err(e) = run_inside(&holder, &this_args()) {
        if created {
            if let Err(d) = holder.destroy() {
                eprintln!("removing the namespaces: {d:#}");
            }
            let _ = std::fs::remove_file(&record);
        }
        return Err(e);
    }
    print_ns_env(layout, &holder);
    Ok(())
}

fn print_ns_env(layout: &Layout, holder: &Holder) {
    let enter = format!("nsenter --net=/run/netns/{}", holder.netns);
    let bin = layout
        .bin_dir()
        .map(|b| b.join("kubectl").display().to_string())
        .unwrap_or_else(|| "kubectl".into());
    let mdiag = crate::generate::repo_root()
        .join("target")
        .join("debug")
        .join("mdiag");
    println!(
        "# The cluster runs in network namespace {ns} (real node {node}): run clients in it.",
        ns = holder.netns,
        node = mdiag_harness::node::NODE_NAME
    );
    println!("alias kubectl='{enter} {bin}'");
    println!("alias mdiag='{enter} {}'", mdiag.display());
    println!(
        "# any other command: {enter} <command>   (or: ip netns exec {} <command>)",
        holder.netns
    );
}

/// Builds the harness's binaries (the simulator, the registries'
/// never-answering listener) before entering namespaces without network.
fn build_harness_bins() -> anyhow::Result<()> {
    let root = crate::generate::repo_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["build", "--quiet", "-p", "mdiag-harness", "--bins"])
        .args(["-p", "mdiag", "--bin", "mdiag"])
        .status()
        .context("building the harness binaries")?;
    if !status.success() {
        bail!("building the harness binaries failed ({status})");
    }
    Ok(())
}

/// Builds the simulator binary and returns its path.
fn build_sim() -> anyhow::Result<PathBuf> {
    let root = crate::generate::repo_root();
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&root)
        .args(["build", "--quiet", "-p", "mdiag-harness", "--bin", SIM]);
    if ns::inside() {
        // No network in there; `up --real-node` built it beforehand.
        cmd.arg("--offline");
    }
    let status = cmd.status().context("building mdiag-sim")?;
    if !status.success() {
        bail!("building mdiag-sim failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("debug").join(SIM))
}
