//! The `mdiag` binary's own crate: the command line ([`cli`]), one request
//! per command and the code that runs it ([`cmd`]), and the one place
//! outcomes become exit codes ([`exit`]). The work is done by three crates
//! below it: `mdiag-source` reads, `mdiag-core` judges, `mdiag-render`
//! prints (docs/architecture.md).

pub mod cli;
pub mod cmd;
pub mod error;
pub mod exit;
pub mod request;
