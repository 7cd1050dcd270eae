//! Fake kubelets for a control plane without nodes, plus (optionally) the
//! ModelService stand-in controller. See harness/SIM.md.

pub mod behavior;
pub mod logtext;
pub mod messages;
pub mod node;
pub mod pod;
pub mod server;
pub mod state;
pub mod tasks;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use kube::Client;
use tokio::task::JoinHandle;

pub use behavior::{BEHAVIOR_ANNOTATION, Behavior};
pub use node::{HostnameAddress, NodeSpec, STOPPED_ANNOTATION};

use mdiag_harness_controller::{self as controller, ControllerOptions};

/// The environment variable that scales back-off waits (e.g. `0.1`).
pub const BACKOFF_SCALE_ENV: &str = "MDIAG_SIM_BACKOFF_SCALE";

#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The fake nodes (default kind-worker and kind-worker2).
    pub nodes: Vec<NodeSpec>,
    /// Run the ModelService stand-in controller too.
    pub controller: bool,
    pub controller_options: ControllerOptions,
    /// Multiplies the CrashLoopBackOff / ImagePullBackOff waits and the
    /// kubelet's resync period (10 s); the messages keep the nominal
    /// values. Default from MDIAG_SIM_BACKOFF_SCALE, else 1.
    pub backoff_scale: f64,
    /// Node status and Lease heartbeat period (default 10 s).
    pub heartbeat: Duration,
    /// leaseDurationSeconds of the node Leases (default 40).
    pub node_lease_seconds: i32,
    /// On `sim.mdiag.dev/stopped: "true"`, write Ready=Unknown
    /// (NodeStatusUnknown) at once instead of waiting for the node
    /// lifecycle controller's grace period (default true).
    pub mark_unknown_on_stop: bool,
    /// What the Hostname address says (default: the node name).
    pub hostname_address: HostnameAddress,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            nodes: vec![NodeSpec::new("kind-worker"), NodeSpec::new("kind-worker2")],
            controller: true,
            controller_options: ControllerOptions::default(),
            backoff_scale: backoff_scale_from_env().unwrap_or(1.0),
            heartbeat: Duration::from_secs(10),
            node_lease_seconds: 40,
            mark_unknown_on_stop: true,
            hostname_address: HostnameAddress::default(),
        }
    }
}

/// MDIAG_SIM_BACKOFF_SCALE, when set to a positive number.
pub fn backoff_scale_from_env() -> Option<f64> {
    std::env::var(BACKOFF_SCALE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0 && v.is_finite())
}

/// A node the simulator runs, and its log server port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    pub name: String,
    pub port: u16,
}

/// The simulator's tasks on the current runtime; dropping it aborts them.
pub struct Running {
    pub nodes: Vec<NodeInfo>,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    pub fn abort(&mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.abort();
    }
}

/// Registers the nodes and starts every task on the current tokio runtime.
/// Returns once the Nodes are registered and their log servers listen.
pub async fn launch(client: Client, opts: SimOptions) -> anyhow::Result<Running> {
    if opts.nodes.len() > 250 {
        anyhow::bail!("at most 250 fake nodes");
    }
    let version = client
        .apiserver_version()
        .await
        .context("asking the apiserver for its version")?
        .git_version;
    let opts = Arc::new(opts);
    let mut running = Running {
        nodes: Vec::new(),
        tasks: Vec::new(),
    };
    for (i, spec) in opts.nodes.iter().enumerate() {
        let (ctx, tasks) = tasks::start(
            client.clone(),
            spec.clone(),
            (i + 1) as u8,
            opts.clone(),
            version.clone(),
        )
        .await
        .with_context(|| format!("starting node {}", spec.name))?;
        running.nodes.push(NodeInfo {
            name: ctx.name.clone(),
            port: ctx.port,
        });
        running.tasks.extend(tasks);
    }
    if opts.controller {
        let tasks = controller::start(client.clone(), opts.controller_options.clone())
            .await
            .context("starting the ModelService controller")?;
        running.tasks.extend(tasks);
    }
    Ok(running)
}

/// A kube client for a kubeconfig file.
pub async fn client_from_kubeconfig(path: &Path) -> anyhow::Result<Client> {
    let kc = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .with_context(|| format!("loading {}", path.display()))?;
    Ok(Client::try_from(cfg)?)
}

/// The simulator running on its own thread and tokio runtime, so that it
/// outlives the runtimes of individual `#[tokio::test]`s (keep one in a
/// `static OnceLock<Sim>` per test binary). Dropping it stops it.
pub struct Sim {
    nodes: Vec<NodeInfo>,
    kubeconfig: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sim {
    /// Starts the simulator against the cluster of `admin_kubeconfig` and
    /// returns once its nodes are registered. Blocking; callable from
    /// inside or outside a tokio runtime.
    pub fn start(admin_kubeconfig: &Path, opts: SimOptions) -> anyhow::Result<Sim> {
        let path = admin_kubeconfig.to_path_buf();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<Vec<NodeInfo>>>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let p = path.clone();
        let thread = std::thread::Builder::new()
            .name("mdiag-sim".to_owned())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("mdiag-sim-worker")
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.into()));
                        return;
                    }
                };
                rt.block_on(async move {
                    let started = async {
                        let client = client_from_kubeconfig(&p).await?;
                        launch(client, opts).await
                    }
                    .await;
                    match started {
                        Ok(running) => {
                            let _ = ready_tx.send(Ok(running.nodes.clone()));
                            let _ = stop_rx.await;
                            drop(running);
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                        }
                    }
                });
                rt.shutdown_timeout(Duration::from_secs(2));
            })?;
        let nodes = match ready_rx.recv() {
            Ok(r) => r?,
            Err(_) => anyhow::bail!("the simulator thread ended before starting"),
        };
        Ok(Sim {
            nodes,
            kubeconfig: path,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The nodes and their log server ports.
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Stops every task (the Nodes stay registered and go stale).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.shutdown();
    }
}
