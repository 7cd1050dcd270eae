//! mdiag: read-only rollout diagnostics for ModelServices on Kubernetes.
//!
//! The crate is layered so that each part can be entered on its own:
//! [`source`] turns a cluster or a file into one [`model::Snapshot`];
//! [`chain`] walks the object graph by owner UID; [`analysis`] judges it
//! (pure, `now` passed in); [`catalogue`] holds the symptom texts as data;
//! [`render`] prints for people and machines; [`cmd`] wires a subcommand.

pub mod alert;
pub mod analysis;
pub mod catalogue;
pub mod chain;
pub mod cli;
pub mod cmd;
pub mod exit;
pub mod model;
pub mod render;
pub mod source;
