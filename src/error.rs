//! The errors the binary itself raises, and how any error is said. Errors
//! of the layers below are defined where they arise
//! (`mdiag_source::SourceError`, `mdiag_source::live::LiveError`,
//! `mdiag_core::chain::TargetNotFound`...); [`crate::exit`] maps all of
//! them onto exit codes, and [`said`] puts them in the user's language.
//! Every one carries its words as a catalogue [`Message`] (`errors.yaml`);
//! its `Display` is the English.

use mdiag_core::alert::AlertError;
pub use mdiag_core::catalogue::Failed;
use mdiag_core::catalogue::{Lang, Localized, Message};
use mdiag_core::chain::TargetNotFound;
use mdiag_core::model::{SelectorError, TargetParseError};
use mdiag_source::ObjectError;
use mdiag_source::SourceError;
use mdiag_source::live::LiveError;
use mdiag_source::redact::PatternError;
use mdiag_source::write::WriteError;

/// A mistake on the command line that clap cannot see.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.en())]
pub struct UsageError(pub Message);

/// A target a file cannot hold: the dump was not asked for its kind where
/// the target would be (exit 4, a gap that hides the answer).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.message().en())]
pub struct NotInFile {
    pub resource: String,
    /// `in namespace "x"`.
    pub place: Message,
    pub complete: Option<String>,
    #[source]
    pub not_found: TargetNotFound,
}

impl Localized for NotInFile {
    fn message(&self) -> Message {
        let m = Message::new(match self.complete {
            Some(_) => "error.not_in_file.complete",
            None => "error.not_in_file",
        })
        .arg("resource", self.resource.as_str())
        .arg("place", self.place.clone());
        match &self.complete {
            Some(c) => m.arg("complete", c.as_str()),
            None => m,
        }
    }
}

/// A target its list was denied for: not known to be absent (exit 4, as
/// the denial).
#[derive(Debug, thiserror::Error)]
#[error("{denied}")]
pub struct DeniedTarget {
    pub denied: LiveError,
    #[source]
    pub not_found: TargetNotFound,
}

/// A command stopped by a signal, and what that left behind.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.message().en())]
pub struct Interrupted {
    pub signal: &'static str,
    pub left: Message,
}

impl Localized for Interrupted {
    fn message(&self) -> Message {
        Message::new("error.interrupted")
            .arg("signal", self.signal)
            .arg("left", self.left.clone())
    }
}

/// Triage found nothing to judge where it looked (exit 5, as a target
/// that is not there).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", self.message().en())]
pub struct NoWorkloads {
    /// `None`: every namespace (-A).
    pub namespace: Option<String>,
    pub selector: Option<String>,
    /// The snapshot file, when read from one.
    pub file: Option<String>,
}

impl Localized for NoWorkloads {
    fn message(&self) -> Message {
        let place = match &self.namespace {
            Some(ns) => Message::new("error.place.namespace").arg("namespace", format!("{ns:?}")),
            None => Message::new("error.place.any"),
        };
        let place = match &self.file {
            Some(file) => Message::new("error.place.of_file")
                .arg("place", place)
                .arg("file", file.as_str()),
            None => place,
        };
        let scope = match &self.namespace {
            Some(ns) => format!("-n {ns}"),
            None => "-A".into(),
        };
        let id = match (&self.selector, &self.file) {
            (Some(_), None) => "error.no_workloads.selector",
            (Some(_), Some(_)) => "error.no_workloads.selector_in_file",
            (None, None) if self.namespace.is_some() => "error.no_workloads.namespace",
            (None, None) => "error.no_workloads.all",
            (None, Some(_)) if self.namespace.is_some() => "error.no_workloads.file_namespace",
            (None, Some(_)) => "error.no_workloads.file",
        };
        Message::new(id)
            .arg("place", place)
            .arg("scope", scope)
            .arg("selector", self.selector.clone().unwrap_or_default())
    }
}

/// The words of one error of a chain, when mdiag raised it.
fn words(e: &(dyn std::error::Error + 'static)) -> Option<Message> {
    macro_rules! first {
        ($($t:ty),*) => {
            $(if let Some(e) = e.downcast_ref::<$t>() {
                return Some(e.message());
            })*
        };
    }
    if let Some(e) = e.downcast_ref::<UsageError>() {
        return Some(e.0.clone());
    }
    if let Some(e) = e.downcast_ref::<Failed>() {
        return Some(e.message.clone());
    }
    if let Some(e) = e.downcast_ref::<DeniedTarget>() {
        return Some(e.denied.message());
    }
    first!(
        NotInFile,
        Interrupted,
        NoWorkloads,
        TargetNotFound,
        TargetParseError,
        SelectorError,
        AlertError,
        SourceError,
        ObjectError,
        LiveError,
        PatternError,
        WriteError
    );
    None
}

/// An error and its causes on one line, as `{:#}` joins them, in `lang`:
/// mdiag's own words from the catalogue, the words of the system (an
/// operating system's or a server's) as they came.
pub fn said(err: &anyhow::Error, lang: Lang) -> String {
    let sep = Message::new("error.cause").render(lang);
    err.chain()
        .map(|e| match words(e) {
            Some(m) => m.raw(lang),
            None => e.to_string(),
        })
        .collect::<Vec<_>>()
        .join(&sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In English, an error is said exactly as `{:#}` prints its chain, so
    /// the language changes the words and nothing else.
    #[test]
    fn english_is_the_chain_as_printed() {
        let not_found = TargetNotFound {
            kind: mdiag_core::model::TargetKind::Deployment,
            namespace: Some("lab".into()),
            name: "api".into(),
            available: vec![],
            hints: Box::default(),
        };
        let errors = [
            anyhow::Error::from(DeniedTarget {
                denied: LiveError::Denied {
                    server: "https://127.0.0.1:6443".into(),
                    detail: Message::quote("forbidden"),
                },
                not_found,
            }),
            anyhow::Error::from(Failed::new(
                "error.stdout",
                std::io::Error::other("disk full"),
            )),
            anyhow::Error::from(UsageError(Message::new("usage.max_restarts"))),
            anyhow::Error::from(std::io::Error::other("plain")).context("reading"),
        ];
        for err in &errors {
            assert_eq!(said(err, Lang::En), format!("{err:#}"));
            assert_ne!(said(err, Lang::Zh), format!("{err:#}"), "{err:#}");
        }
    }
}
