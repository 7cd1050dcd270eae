//! Why a snapshot file could not be read, each as one sentence that says
//! what to do, and the parsers' errors as such.

use std::path::{Path, PathBuf};

use mdiag_core::catalogue::{Localized, Message};

use super::input::{Input, size_words};
use crate::objects::ObjectError;

#[derive(Debug, thiserror::Error)]
#[error("{}", Localized::message(self).en())]
pub enum SourceError {
    /// The cause is part of the one sentence, not a source below it, so
    /// that the printed chain does not say it twice.
    Io {
        path: PathBuf,
        /// What the file was named as (its flag is in the message).
        input: Input,
        cause: std::io::Error,
    },
    Gzip {
        path: PathBuf,
        cause: std::io::Error,
    },
    TooLarge {
        path: PathBuf,
        /// Whose limit it is (a snapshot's, an alert's).
        input: Input,
        limit: u64,
        /// Counted after decompression: the stream was stopped at the limit.
        inflated: bool,
    },
    NotText {
        path: PathBuf,
    },
    Empty {
        path: PathBuf,
    },
    Syntax {
        path: PathBuf,
        syntax: &'static str,
        detail: String,
    },
    NotKubernetes {
        path: PathBuf,
        document: usize,
    },
    NotAnObject {
        path: PathBuf,
        document: usize,
        /// What the item is: an id of `errors.yaml` (`a string`).
        found: &'static str,
    },
    FutureVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    BadSnapshot {
        path: PathBuf,
        detail: String,
    },
    BadObject {
        path: PathBuf,
        cause: ObjectError,
    },
}

impl Localized for SourceError {
    fn message(&self) -> Message {
        let at = |id, path: &Path| Message::new(id).arg("path", path.display().to_string());
        match self {
            SourceError::Io { path, input, cause } => io_message(path, *input, cause),
            SourceError::Gzip { path, cause } => {
                at("error.file.gzip", path).arg("detail", cause.to_string())
            }
            SourceError::TooLarge {
                path,
                input,
                limit,
                inflated,
            } => at(
                match (input, inflated) {
                    (Input::Snapshot, false) => "error.file.too_large.snapshot",
                    (Input::Snapshot, true) => "error.file.too_large.snapshot_inflated",
                    (Input::Alert, false) => "error.file.too_large.alert",
                    (Input::Alert, true) => "error.file.too_large.alert_inflated",
                },
                path,
            )
            .arg("size", size_words(*limit))
            .arg("bytes", *limit as i64),
            SourceError::NotText { path } => at("error.file.not_text", path),
            SourceError::Empty { path } => at("error.file.empty", path),
            SourceError::Syntax {
                path,
                syntax,
                detail,
            } => at("error.file.syntax", path)
                .arg("syntax", *syntax)
                .arg("detail", detail.as_str()),
            SourceError::NotKubernetes { path, document } => {
                at("error.file.not_kubernetes", path).arg("document", *document as i64)
            }
            SourceError::NotAnObject {
                path,
                document,
                found,
            } => at("error.file.not_an_object", path)
                .arg("document", *document as i64)
                .arg("found", Message::new(found)),
            SourceError::FutureVersion {
                path,
                found,
                supported,
            } => at("error.file.future_version", path)
                .arg("found", i64::from(*found))
                .arg("supported", i64::from(*supported)),
            SourceError::BadSnapshot { path, detail } => {
                at("error.file.bad_snapshot", path).arg("detail", detail.as_str())
            }
            SourceError::BadObject { path, cause } => {
                at("error.file.bad_object", path).arg("detail", cause.message())
            }
        }
    }
}

/// One sentence for a file that cannot be read: what is wrong and what to do.
fn io_message(path: &Path, input: Input, cause: &std::io::Error) -> Message {
    let at = |id| Message::new(id).arg("path", path.display().to_string());
    match cause.kind() {
        std::io::ErrorKind::NotFound => at("error.file.missing").arg("flag", input.flag()),
        std::io::ErrorKind::PermissionDenied => at("error.file.denied"),
        std::io::ErrorKind::IsADirectory => at(match input {
            Input::Snapshot => "error.file.directory.snapshot",
            Input::Alert => "error.file.directory.alert",
        }),
        _ => at("error.file.unreadable").arg("detail", cause.to_string()),
    }
}

pub(crate) fn json_error(e: &serde_json::Error, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "JSON",
        detail: e.to_string(),
    }
}

pub(crate) fn yaml_error(e: &super::yaml::YamlError, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "YAML",
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yaml_error_is_one_line_with_its_place_and_no_excerpt() {
        let text = "items: [\n  {a: 1\n";
        let e = super::super::yaml::read_str::<serde::de::IgnoredAny>(text).unwrap_err();
        let shown = yaml_error(&e, Path::new("dump.yaml")).to_string();
        assert!(
            shown.starts_with("dump.yaml is not valid YAML: line 2 column 3: unclosed bracket"),
            "{shown}"
        );
        assert!(!shown.contains('\n'), "{shown}");
    }
}
