//! The errors the binary itself raises. Errors of the layers below are
//! defined where they arise (`mdiag_source::SourceError`,
//! `mdiag_source::live::LiveError`, `mdiag_core::chain::TargetNotFound`...);
//! [`crate::exit`] maps all of them onto exit codes.

/// A mistake on the command line that clap cannot see.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A target a file cannot hold: the dump was not asked for its kind where
/// the target would be (exit 4, a gap that hides the answer).
#[derive(Debug, thiserror::Error)]
#[error("the file holds no {resource} {place} (a kubectl dump holds only the kinds it was asked for){}", complete.as_ref().map(|c| format!("; add them with: {c}")).unwrap_or_default())]
pub struct NotInFile {
    pub resource: String,
    /// `in namespace "x"`.
    pub place: String,
    pub complete: Option<String>,
    #[source]
    pub not_found: mdiag_core::chain::TargetNotFound,
}

/// A target its list was denied for: not known to be absent (exit 4, as
/// the denial).
#[derive(Debug, thiserror::Error)]
#[error("{denied}")]
pub struct DeniedTarget {
    pub denied: mdiag_source::live::LiveError,
    #[source]
    pub not_found: mdiag_core::chain::TargetNotFound,
}

/// A command stopped by a signal, and what that left behind.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {signal}: {left}")]
pub struct Interrupted {
    pub signal: &'static str,
    pub left: String,
}

/// Triage found nothing to judge where it looked (exit 5, as a target
/// that is not there).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", self.message())]
pub struct NoWorkloads {
    /// `None`: every namespace (-A).
    pub namespace: Option<String>,
    pub selector: Option<String>,
    /// The snapshot file, when read from one.
    pub file: Option<String>,
}

impl NoWorkloads {
    fn message(&self) -> String {
        let place = match &self.namespace {
            Some(ns) => format!("in namespace {ns:?}"),
            None => "in any namespace".into(),
        };
        let place = match &self.file {
            Some(file) => format!("{place} of {file}"),
            None => place,
        };
        let scope = match &self.namespace {
            Some(ns) => format!("-n {ns}"),
            None => "-A".into(),
        };
        match (&self.selector, &self.file) {
            (Some(sel), None) => format!(
                "no workload or Service matches -l {sel} {place}; compare the selector with their labels: kubectl get msvc,deploy,sts,ds,svc {scope} --show-labels"
            ),
            (Some(sel), Some(_)) => format!(
                "no workload or Service matches -l {sel} {place}; check the selector, or leave it out to see what the file holds"
            ),
            (None, None) if self.namespace.is_some() => format!(
                "no workload (ModelService, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and nothing failing {place}; check the namespace and the context (kubectl config current-context), or look in every namespace with -A"
            ),
            (None, None) => format!(
                "no workload (ModelService, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and nothing failing {place}; check the context (kubectl config current-context)"
            ),
            (None, Some(_)) if self.namespace.is_some() => format!(
                "no workload (ModelService, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and nothing failing {place}; name another namespace, or use -A for all the file holds"
            ),
            (None, Some(_)) => {
                format!(
                    "no workload (ModelService, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and nothing failing {place}; it holds no workload to triage"
                )
            }
        }
    }
}
