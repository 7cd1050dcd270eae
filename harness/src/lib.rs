//! Test harness of mdiag: fake kubelets and a ModelService stand-in
//! controller for a real control plane (kube-apiserver, etcd,
//! kube-controller-manager, kube-scheduler) that has no nodes.
//!
//! - [`sim`]: fake nodes. Each registers a Node, heartbeats its status and
//!   Lease, writes the status and Events of the Pods bound to it as a
//!   kubelet would (driven by the Pod annotation `sim.mdiag.dev/behavior`),
//!   serves their logs over HTTPS so `kubectl logs` works through the
//!   apiserver, and can be stopped and started again.
//! - [`controller`]: a minimal modeldock-controller (ModelService ->
//!   Deployment + Service + status), with a leader-election Lease, that can
//!   be paused.
//! - [`helpers`]: what tests need around them.
//! - [`images`]: OCI images made from busybox-static (pause, the
//!   model-server stand-in) and local registries (open, htpasswd, one that
//!   never answers) for the real node.
//! - [`cluster`]: the control plane itself (etcd, apiserver, controller-manager,
//!   scheduler built from Go modules by `harness/build.sh`).
//!
//! ```no_run
//! use mdiag_harness::{Sim, SimOptions, helpers};
//! # async fn demo() -> anyhow::Result<()> {
//! let kubeconfig = helpers::admin_kubeconfig();
//! let sim = Sim::start(&kubeconfig, SimOptions::default())?;
//! let client = mdiag_harness::client_from_kubeconfig(&kubeconfig).await?;
//! helpers::install_crd(&client).await?;
//! helpers::ensure_namespace(&client, "t1").await?;
//! helpers::apply_model_service(&client, "t1", "demo", "registry.example.com/m/demo:v1", 2,
//!     Some("crash-loop"), None).await?;
//! sim.stop();
//! # Ok(()) }
//! ```
//!
//! See harness/SIM.md for the behaviours and the knobs.

//! The control plane, the real node, the simulator and the controller are
//! crates of their own (harness/README.md), re-exported here under the
//! module names they had, so `mdiag_harness::cluster::...` and the rest keep
//! their paths:
//!
//! ```text
//! mdiag-harness            helpers, helm, load, scenarios, the bins
//!   -> cluster             control plane, audit      -> node, util
//!   -> node                real node, images         -> util
//!   -> sim                 fake kubelets             -> controller, util
//!   -> controller          ModelService stand-in     -> util
//!   -> util                util, names, events
//! ```

pub use mdiag_harness_cluster as cluster;
pub use mdiag_harness_cluster::audit;
pub use mdiag_harness_controller as controller;
pub use mdiag_harness_node as node;
pub use mdiag_harness_node::images;
pub use mdiag_harness_sim as sim;
pub use mdiag_harness_util as util;
pub use mdiag_harness_util::{events, names};

pub mod helm;
pub mod helpers;
pub mod load;
pub mod scenarios;

pub use controller::{ControllerOptions, modelservice_resource};
pub use helpers::{
    ModelServiceSpec, admin_kubeconfig, apply_model_service, apply_model_service_spec, cluster_dir,
    delete_namespace, ensure_namespace, install_crd, pause_controller, stop_node,
    viewer_kubeconfig, wait_for,
};
pub use sim::{
    BEHAVIOR_ANNOTATION, Behavior, HostnameAddress, NodeInfo, NodeSpec, Running,
    STOPPED_ANNOTATION, Sim, SimOptions, client_from_kubeconfig, launch,
};
