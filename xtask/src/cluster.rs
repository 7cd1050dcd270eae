//! `cargo xtask cluster up|down|env|status`: the test control plane of
//! `mdiag_harness::cluster`, from the command line.

use clap::Subcommand;
use mdiag_harness::cluster::{self, Layout};

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Start etcd and the control plane on 127.0.0.1 (builds the binaries
    /// first when they are not cached).
    Up,
    /// Stop what `up` started and remove its state.
    Down,
    /// Print the KUBECONFIG export for the running cluster.
    Env,
    /// Tell whether the cluster is running, with its processes and ports.
    Status,
}

pub fn run(cmd: ClusterCommand) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    match cmd {
        ClusterCommand::Up => {
            let _lock = layout.lock()?;
            cluster::up(&layout)
        }
        ClusterCommand::Down => {
            let _lock = layout.lock()?;
            cluster::down(&layout)
        }
        ClusterCommand::Env => cluster::env(&layout),
        ClusterCommand::Status => cluster::status(&layout),
    }
}
