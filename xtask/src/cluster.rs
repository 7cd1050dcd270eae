//! `cargo xtask cluster up|down|env|status|stop|start|load`: the test control
//! plane of `mdiag_harness::cluster`, from the command line. `up` also
//! installs the ModelService CRD and starts the simulator (fake nodes and
//! the stand-in controller), so a ModelService applied by hand becomes Pods.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Subcommand;
use mdiag_harness::cluster::{self, Layout};
use mdiag_harness::load;

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Start etcd, the control plane and the simulator on 127.0.0.1 (builds
    /// the binaries first when they are not cached).
    Up,
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
    /// kube-controller-manager first: see harness/src/load.rs).
    Load(LoadArgs),
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

pub fn run(cmd: ClusterCommand) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    match cmd {
        ClusterCommand::Up => {
            let _lock = layout.lock()?;
            cluster::up(&layout)?;
            for file in [
                "fixtures/crd/modelservice.yaml",
                "fixtures/crd/modelservice-view.yaml",
            ] {
                cluster::admin_kubectl(&layout, &["apply", "-f", file])?;
            }
            if !cluster::running(&layout, SIM) {
                let exe = build_sim()?;
                let kubeconfig = layout.admin_kubeconfig().display().to_string();
                cluster::start_extra(&layout, SIM, &exe, &["--kubeconfig".into(), kubeconfig])?;
                eprintln!(
                    "started {SIM}: nodes kind-worker, kind-worker2 and the modeldock-controller stand-in"
                );
            }
            Ok(())
        }
        ClusterCommand::Down => {
            let _lock = layout.lock()?;
            cluster::down(&layout)
        }
        ClusterCommand::Env => cluster::env(&layout),
        ClusterCommand::Status => cluster::status(&layout),
        ClusterCommand::Stop { component } => cluster::stop_component(&layout, &component),
        ClusterCommand::Start { component } => cluster::start_component(&layout, &component),
        ClusterCommand::Load(args) => load(&layout, &args).map(|_| ()),
    }
}

/// Builds the simulator binary and returns its path.
fn build_sim() -> anyhow::Result<PathBuf> {
    let root = crate::generate::repo_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["build", "--quiet", "-p", "mdiag-harness", "--bin", SIM])
        .status()
        .context("building mdiag-sim")?;
    if !status.success() {
        bail!("building mdiag-sim failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("debug").join(SIM))
}
