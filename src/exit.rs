//! Exit codes, the same for every command (SPEC section 6), and the one
//! place errors are mapped onto them.

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

/// The text `--help` shows about exit codes.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    healthy / converged
  1    a problem was found, or the rollout failed
  2    usage error (bad flags, unreadable or invalid input file)
  3    still progressing (gate: timed out while progressing)
  4    cluster unreachable, access denied, or a gap that hides the answer
  5    target not found
  130  interrupted (SIGINT or SIGTERM): gate wrote its report, snapshot wrote nothing";

/// Maps an error to its exit code by the typed errors in its chain.
pub fn for_error(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if cause.is::<crate::cmd::signals::Interrupted>() {
            return Exit::Interrupted;
        }
        if cause.is::<TargetNotFound>() || cause.is::<crate::cmd::triage::NoWorkloads>() {
            return Exit::NotFound;
        }
        if cause.is::<TargetParseError>()
            || cause.is::<SourceError>()
            || cause.is::<UsageError>()
            || cause.is::<PatternError>()
            || cause.is::<WriteError>()
            || cause.is::<mdiag_core::alert::AlertError>()
        {
            return Exit::Usage;
        }
        if let Some(live) = cause.downcast_ref::<LiveError>() {
            return for_live_error(live);
        }
    }
    Exit::Problem
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

/// One workload (SPEC sections 3 and 6): a warning or error finding is 1,
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

/// A mistake on the command line that clap cannot see.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
