//! Why a snapshot file could not be read, each as one sentence that says
//! what to do, and the parsers' errors as such.

use std::path::{Path, PathBuf};

use super::input::{Input, size_words};
use crate::objects::ObjectError;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The cause is part of the one sentence, not a source below it, so
    /// that the printed chain does not say it twice.
    #[error("{}", io_message(.path, *.input, .cause))]
    Io {
        path: PathBuf,
        /// What the file was named as (its flag is in the message).
        input: Input,
        cause: std::io::Error,
    },
    #[error(
        "{} is not valid gzip data ({cause}); drop the .gz suffix if the file is not compressed",
        .path.display()
    )]
    Gzip {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{} is larger than the {} limit of {} ({limit} bytes){}; {}",
        .path.display(),
        .input.noun(),
        size_words(*.limit),
        if *.inflated { " once decompressed (the read stopped there)" } else { "" },
        .input.advice()
    )]
    TooLarge {
        path: PathBuf,
        /// Whose limit it is (a snapshot's, an alert's).
        input: Input,
        limit: u64,
        /// Counted after decompression: the stream was stopped at the limit.
        inflated: bool,
    },
    #[error("{path} is not valid UTF-8 text; is it a binary file?")]
    NotText { path: PathBuf },
    #[error("{path} is empty")]
    Empty { path: PathBuf },
    #[error("{path} is not valid {syntax}: {detail}")]
    Syntax {
        path: PathBuf,
        syntax: &'static str,
        detail: String,
    },
    #[error(
        "{path}: document {document} is not a Kubernetes object or list (it has no apiVersion and kind)"
    )]
    NotKubernetes { path: PathBuf, document: usize },
    #[error(
        "{path}: document {document} holds an item that is {found}, not an object; each item of a list must be a Kubernetes object"
    )]
    NotAnObject {
        path: PathBuf,
        document: usize,
        found: &'static str,
    },
    #[error(
        "{path} is an mdiag snapshot of format version {found}; this mdiag reads up to version {supported}: upgrade mdiag"
    )]
    FutureVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path} is not a valid mdiag snapshot: {detail}")]
    BadSnapshot { path: PathBuf, detail: String },
    #[error("{}: {cause}", .path.display())]
    BadObject { path: PathBuf, cause: ObjectError },
}

/// One sentence for a file that cannot be read: what is wrong and what to do.
fn io_message(path: &Path, input: Input, cause: &std::io::Error) -> String {
    let path = path.display();
    match cause.kind() {
        std::io::ErrorKind::NotFound => {
            let flag = input.flag();
            format!("{path} does not exist; check the path (`{flag} -` reads standard input)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("{path} may not be read (permission denied); check its permissions")
        }
        std::io::ErrorKind::IsADirectory => {
            let file = match input {
                Input::Snapshot => "a snapshot file",
                Input::Alert => "an alert file",
            };
            format!("{path} is a directory; name {file} in it")
        }
        _ => format!("cannot read {path}: {cause}"),
    }
}

pub(crate) fn json_error(e: &serde_json::Error, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "JSON",
        detail: e.to_string(),
    }
}

pub(crate) fn yaml_error(e: &serde_saphyr::Error, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "YAML",
        detail: first_line(&e.to_string()),
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join(" | ")
}
