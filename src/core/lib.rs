//! mdiag's pure core. Nothing here reads a file, the environment, a clock or
//! a network: a [`model::Snapshot`] and `now` come in, a
//! [`analysis::Diagnosis`] goes out.
//!
//! [`model`] holds what was read; [`chain`] walks it by owner UID;
//! [`analysis`] judges it (ladder, moments, one rule per finding, verdict,
//! gate policy, triage); [`catalogue`] holds every human text as data;
//! [`alert`] picks the workload an alert is about.

pub mod alert;
pub mod analysis;
pub mod catalogue;
pub mod chain;
pub mod command;
pub mod inert;
pub mod model;
