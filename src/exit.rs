//! Exit codes, the same for every command (docs/exit-codes.md), and the
//! one place errors, verdicts and gate outcomes are mapped onto them.

use mdiag_core::alert::AlertError;
use mdiag_core::analysis::gate::Outcome;
use mdiag_core::analysis::triage::Triage;
use mdiag_core::analysis::{Diagnosis, State};
use mdiag_core::catalogue::Severity;
use mdiag_core::chain::TargetNotFound;
use mdiag_core::model::TargetParseError;
use mdiag_source::SourceError;
use mdiag_source::live::LiveError;
use mdiag_source::redact::PatternError;
use mdiag_source::write::WriteError;

use crate::error::{DeniedTarget, Interrupted, NoWorkloads, NotInFile, UsageError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Healthy, or converged.
    Healthy = 0,
    /// A problem was found, or the rollout failed.
    Problem = 1,
    /// The command line or an input file is wrong.
    Usage = 2,
    /// Still progressing: trace and triage saw a rollout moving with no
    /// problem found; the gate timed out while it was.
    Progressing = 3,
    /// The cluster could not be reached, or access was denied.
    Unreachable = 4,
    /// The target does not exist.
    NotFound = 5,
    /// Stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
    Interrupted = 130,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

impl Exit {
    /// Every code, in the order help pages list them.
    pub const ALL: [Exit; 7] = [
        Exit::Healthy,
        Exit::Problem,
        Exit::Usage,
        Exit::Progressing,
        Exit::Unreachable,
        Exit::NotFound,
        Exit::Interrupted,
    ];

    /// What the code means, as `--help` and the man pages say it.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Healthy => "healthy / converged",
            Exit::Problem => "a problem was found, or the rollout failed",
            Exit::Usage => "usage error (bad flags, unreadable or invalid input file)",
            Exit::Progressing => "still progressing (gate: timed out while progressing)",
            Exit::Unreachable => {
                "cluster unreachable, access denied, or a gap that hides the answer"
            }
            Exit::NotFound => "target not found",
            // One line at 80 columns, as help pages are read.
            Exit::Interrupted => {
                "interrupted (SIGINT/SIGTERM): gate wrote its report, snapshot wrote none"
            }
        }
    }
}

/// The text every `--help` ends with: the codes of [`Exit::ALL`] and
/// their meanings.
pub fn exit_codes_help() -> String {
    let mut text = String::from("Exit codes:");
    for code in Exit::ALL {
        text.push_str(&format!("\n  {:<5}{}", code.code(), code.meaning()));
    }
    text
}

/// An error's exit code: the first error in its chain that a layer typed
/// ([`Cause`]), matched exhaustively, so a new error variant is a compile
/// error here until someone decides its code. An error no layer typed is
/// mdiag's own trouble, never a finding: exit 2, or 4 when it came from the
/// network. Exit 1 is only ever a verdict.
pub fn for_error(err: &anyhow::Error) -> Exit {
    match err.chain().find_map(Cause::of) {
        Some(cause) => cause.exit(),
        None => Exit::Usage,
    }
}

/// Every typed error mdiag raises, by the layer it arose in.
enum Cause<'a> {
    Interrupted,
    NoWorkloads,
    Usage,
    TargetNotFound,
    NotInFile,
    DeniedTarget(&'a DeniedTarget),
    TargetParse,
    Alert,
    Pattern,
    Source(&'a SourceError),
    Write(&'a WriteError),
    Live(&'a LiveError),
    Kube,
    Io(&'a std::io::Error),
}

impl<'a> Cause<'a> {
    fn of(e: &'a (dyn std::error::Error + 'static)) -> Option<Self> {
        Some(if e.is::<Interrupted>() {
            Cause::Interrupted
        } else if e.is::<NoWorkloads>() {
            Cause::NoWorkloads
        } else if e.is::<UsageError>() {
            Cause::Usage
        } else if e.is::<NotInFile>() {
            Cause::NotInFile
        } else if let Some(e) = e.downcast_ref::<DeniedTarget>() {
            Cause::DeniedTarget(e)
        } else if e.is::<TargetNotFound>() {
            Cause::TargetNotFound
        } else if e.is::<TargetParseError>() {
            Cause::TargetParse
        } else if e.is::<AlertError>() {
            Cause::Alert
        } else if e.is::<PatternError>() {
            Cause::Pattern
        } else if let Some(e) = e.downcast_ref::<SourceError>() {
            Cause::Source(e)
        } else if let Some(e) = e.downcast_ref::<WriteError>() {
            Cause::Write(e)
        } else if let Some(e) = e.downcast_ref::<LiveError>() {
            Cause::Live(e)
        } else if e.is::<kube::Error>() {
            Cause::Kube
        } else if let Some(e) = e.downcast_ref::<std::io::Error>() {
            Cause::Io(e)
        } else {
            return None;
        })
    }

    fn exit(&self) -> Exit {
        match self {
            Cause::Interrupted => Exit::Interrupted,
            Cause::NoWorkloads | Cause::TargetNotFound => Exit::NotFound,
            // A gap hides whether the target is there.
            Cause::NotInFile => Exit::Unreachable,
            Cause::DeniedTarget(e) => for_live_error(&e.denied),
            Cause::Usage | Cause::TargetParse | Cause::Alert | Cause::Pattern => Exit::Usage,
            Cause::Source(e) => for_source_error(e),
            Cause::Write(e) => match e {
                WriteError::Io { .. } | WriteError::Encode(_) => Exit::Usage,
            },
            Cause::Live(e) => for_live_error(e),
            // A request that failed below the typed live layer (a watch
            // that broke): the cluster's trouble.
            Cause::Kube => Exit::Unreachable,
            Cause::Io(e) => for_io_error(e),
        }
    }
}

/// Every way a file cannot be read is an invalid input file (2).
fn for_source_error(e: &SourceError) -> Exit {
    match e {
        SourceError::Io { .. }
        | SourceError::Gzip { .. }
        | SourceError::TooLarge { .. }
        | SourceError::NotText { .. }
        | SourceError::Empty { .. }
        | SourceError::Syntax { .. }
        | SourceError::NotKubernetes { .. }
        | SourceError::NotAnObject { .. }
        | SourceError::FutureVersion { .. }
        | SourceError::BadSnapshot { .. }
        | SourceError::BadObject { .. } => Exit::Usage,
    }
}

/// A connection that failed is the network (4); any other IO error is a
/// local file or stream (2).
fn for_io_error(e: &std::io::Error) -> Exit {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused | ConnectionReset | ConnectionAborted | NotConnected | TimedOut
        | HostUnreachable | NetworkUnreachable | AddrNotAvailable => Exit::Unreachable,
        _ => Exit::Usage,
    }
}

/// A resource the cluster does not serve is a target that cannot exist
/// there (5); everything else that stops a live read is access (4).
pub fn for_live_error(err: &LiveError) -> Exit {
    match err {
        LiveError::NoResource { .. } => Exit::NotFound,
        LiveError::KubeconfigFile(_) => Exit::Usage,
        LiveError::Config(_)
        | LiveError::Credentials(_)
        | LiveError::Unreachable { .. }
        | LiveError::Denied { .. } => Exit::Unreachable,
    }
}

/// One workload (docs/contract.md#exit-codes): a warning or error finding is 1,
/// whatever the state; otherwise the state decides: serving 0,
/// progressing 3, unknown (a gap hides what serving depends on) 4, and
/// not-serving 1 (no ready endpoint is a problem even before a rule says
/// why). Degraded always has a warning or error behind it.
pub fn for_diagnosis(d: &Diagnosis) -> Exit {
    if d.findings.iter().any(|f| f.severity != Severity::Info) {
        return Exit::Problem;
    }
    match d.verdict.state {
        State::Serving => Exit::Healthy,
        State::Progressing => Exit::Progressing,
        State::Unknown => Exit::Unreachable,
        State::Degraded | State::NotServing => Exit::Problem,
    }
}

/// Several workloads, the worst of each one's [`for_diagnosis`]: any
/// problem is 1; else any unknown is 4; else any progressing is 3; else 0.
pub fn for_diagnoses<'a>(items: impl IntoIterator<Item = &'a Diagnosis>) -> Exit {
    let codes: Vec<Exit> = items.into_iter().map(for_diagnosis).collect();
    [Exit::Problem, Exit::Unreachable, Exit::Progressing]
        .into_iter()
        .find(|worse| codes.contains(worse))
        .unwrap_or(Exit::Healthy)
}

/// A triage: the worst of its workloads ([`for_diagnoses`]), and 1 when an
/// object outside every workload has a warning or error (a Service with no
/// ready endpoint, an HPA whose target is missing); info-only rows do not
/// change the code.
pub fn for_triage(t: &Triage) -> Exit {
    let outside_problem = t
        .outside
        .iter()
        .any(|o| o.findings.iter().any(|f| f.severity != Severity::Info));
    if outside_problem {
        return Exit::Problem;
    }
    for_diagnoses(&t.items)
}

/// A triage over several clusters: [`for_triage`] of every row, and 4
/// rather than 0 or 3 when a cluster could not be read (what it holds is
/// unknown, never healthy); a problem found elsewhere is still 1.
pub fn for_clusters(t: &Triage, unread: usize) -> Exit {
    match for_triage(t) {
        Exit::Healthy | Exit::Progressing if unread > 0 => Exit::Unreachable,
        exit => exit,
    }
}

/// How a gate's wait ended.
pub fn for_outcome(outcome: Outcome) -> Exit {
    match outcome {
        Outcome::Converged => Exit::Healthy,
        Outcome::Failed => Exit::Problem,
        Outcome::TimedOut => Exit::Progressing,
        Outcome::CouldNotDecide => Exit::Unreachable,
        Outcome::Interrupted => Exit::Interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn an_error_no_layer_typed_is_never_a_finding() {
        let plain = anyhow::anyhow!("the MCP session ended with an error");
        assert_eq!(for_error(&plain), Exit::Usage);
        let refused =
            anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
                .context("watching the rollout");
        assert_eq!(for_error(&refused), Exit::Unreachable);
        let missing = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::NotFound))
            .context("reading the alert");
        assert_eq!(for_error(&missing), Exit::Usage);
    }

    #[test]
    fn the_first_typed_error_in_the_chain_decides() {
        let stopped: anyhow::Result<()> = Err(Interrupted {
            signal: "SIGTERM",
            left: mdiag_core::catalogue::Message::quote("nothing"),
        }
        .into());
        let stopped = stopped.context("snapshot").unwrap_err();
        assert_eq!(for_error(&stopped), Exit::Interrupted);
        let none = anyhow::Error::from(NoWorkloads {
            namespace: Some("lab".into()),
            selector: None,
            file: None,
        });
        assert_eq!(for_error(&none), Exit::NotFound);
        let denied = anyhow::Error::from(LiveError::Denied {
            server: "https://127.0.0.1:6443".into(),
            detail: mdiag_core::catalogue::Message::quote("forbidden"),
        });
        assert_eq!(for_error(&denied), Exit::Unreachable);
        let no_crd = anyhow::Error::from(LiveError::NoResource {
            wanted: "msvc".into(),
        });
        assert_eq!(for_error(&no_crd), Exit::NotFound);
        let usage = anyhow::Error::from(UsageError(mdiag_core::catalogue::Message::new(
            "usage.namespace_and_all",
        )));
        assert_eq!(for_error(&usage), Exit::Usage);
    }
}
