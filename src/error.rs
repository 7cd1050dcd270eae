//! The errors the binary itself raises. Errors of the layers below are
//! defined where they arise (`mdiag_source::SourceError`,
//! `mdiag_source::live::LiveError`, `mdiag_core::chain::TargetNotFound`...);
//! [`crate::exit`] maps all of them onto exit codes.

/// A mistake on the command line that clap cannot see.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

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
