//! mdiag-sim: fake kubelets (and a ModelService stand-in controller) for a
//! control plane without nodes. See harness/SIM.md.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use mdiag_harness::sim::BACKOFF_SCALE_ENV;
use mdiag_harness::{HostnameAddress, NodeSpec, SimOptions, client_from_kubeconfig, launch};

#[derive(Parser)]
#[command(
    name = "mdiag-sim",
    about = "Fake kubelets and a ModelService stand-in controller for a node-less control plane"
)]
struct Args {
    /// Admin kubeconfig of the cluster.
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: PathBuf,

    /// A fake node: NAME or NAME=resource=quantity,... (repeatable).
    /// Default: kind-worker and kind-worker2 with cpu 8, memory 32Gi, pods 110.
    #[arg(long = "node", value_name = "SPEC")]
    nodes: Vec<String>,

    /// Run the ModelService stand-in controller (the default).
    #[arg(long, overrides_with = "no_controller")]
    controller: bool,

    /// Do not run the ModelService stand-in controller.
    #[arg(long)]
    no_controller: bool,

    /// Multiply back-off waits and the resync period by this (e.g. 0.1).
    #[arg(long, env = BACKOFF_SCALE_ENV)]
    backoff_scale: Option<f64>,

    /// Node status and Lease heartbeat period, seconds.
    #[arg(long, default_value_t = 10)]
    heartbeat_seconds: u64,

    /// On stop, leave marking the node Unknown to the node lifecycle
    /// controller (after its grace period) instead of doing it at once.
    #[arg(long)]
    no_mark_unknown: bool,

    /// The Hostname address of the Nodes: `node-name` (default) or a value
    /// such as `localhost`.
    #[arg(long, default_value = "node-name")]
    hostname_address: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut opts = SimOptions::default();
    if !args.nodes.is_empty() {
        opts.nodes = args
            .nodes
            .iter()
            .map(|s| NodeSpec::parse(s).map_err(anyhow::Error::msg))
            .collect::<anyhow::Result<_>>()?;
    }
    opts.controller = !args.no_controller;
    if let Some(s) = args.backoff_scale {
        anyhow::ensure!(s > 0.0 && s.is_finite(), "--backoff-scale must be > 0");
        opts.backoff_scale = s;
    }
    opts.heartbeat = Duration::from_secs(args.heartbeat_seconds.max(1));
    opts.mark_unknown_on_stop = !args.no_mark_unknown;
    opts.hostname_address = match args.hostname_address.as_str() {
        "node-name" => HostnameAddress::NodeName,
        v => HostnameAddress::Value(v.to_owned()),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let client = client_from_kubeconfig(&args.kubeconfig).await?;
        let running = launch(client, opts).await.context("starting mdiag-sim")?;
        for n in &running.nodes {
            eprintln!(
                "mdiag-sim: node {} ready; logs on https://127.0.0.1:{}",
                n.name, n.port
            );
        }
        wait_for_signal().await;
        eprintln!("mdiag-sim: stopping");
        drop(running);
        anyhow::Ok(())
    })?;
    rt.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = ctrl_c => {}
            _ = async {
                match term.as_mut() {
                    Some(t) => { t.recv().await; }
                    None => std::future::pending::<()>().await,
                }
            } => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
