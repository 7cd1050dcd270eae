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
        detail: yaml_detail(&e.to_string()),
    }
}

/// The parser's message on one line, with its line and column: the error
/// already names the file, so the parser's excerpt of it (lines of the
/// file under `--> <input>:L:C`) is left out rather than flattened.
fn yaml_detail(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if first.starts_with("line ") {
        return first.to_string();
    }
    let at = lines
        .find_map(|l| l.strip_prefix("--> "))
        .and_then(|at| {
            let mut parts = at.rsplitn(3, ':');
            let column = parts.next()?;
            let line = parts.next()?;
            Some(format!("line {line} column {column}: "))
        })
        .unwrap_or_default();
    format!("{at}{first}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yaml_error_is_one_line_with_its_place_and_no_excerpt() {
        let text = "items: [\n  {a: 1\n";
        let e = serde_saphyr::from_str::<serde_json::Value>(text).unwrap_err();
        let shown = yaml_error(&e, Path::new("dump.yaml")).to_string();
        assert!(
            shown.starts_with("dump.yaml is not valid YAML: line "),
            "{shown}"
        );
        assert!(
            !shown.contains('|') && !shown.contains("<input>"),
            "{shown}"
        );
        assert!(!shown.contains('\n'), "{shown}");
        assert_eq!(
            yaml_detail("mismatched bracket\n --> <input>:4:7\n |\n4 | - a: [1,"),
            "line 4 column 7: mismatched bracket"
        );
    }
}
