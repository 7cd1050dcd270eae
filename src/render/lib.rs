//! Rendering, for people (tree, waterfall, findings; in a terminal or as a
//! self-contained HTML page) and for machines (the versioned JSON/YAML
//! report). Nothing outside this module knows about terminals or colours.

pub mod alert;
pub mod answer;
pub mod explain;
pub mod gate;
pub mod headline;
pub mod html;
pub mod human;
pub mod inert;
pub(crate) mod layout;
pub mod report;
pub mod summary;
mod text;
pub mod triage;
pub(crate) mod words;

use std::io::Write;

use jiff::Timestamp;
use owo_colors::OwoColorize;

use mdiag_core::catalogue::{Lang, Severity};

pub use text::Labels;

/// Columns of the human views when stdout is not a terminal and neither
/// `--width` nor `COLUMNS` says otherwise.
pub const DEFAULT_WIDTH: usize = 80;
/// The narrowest width the views are laid out for.
pub const MIN_WIDTH: usize = 40;

/// How to render: language, colour, the clock times are shown against, the
/// width lines are fitted to, and whether every finding is shown in full.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub lang: Lang,
    pub color: bool,
    pub now: Timestamp,
    /// Terminal columns; no line of the default trace view is wider.
    pub width: usize,
    /// `-v`: every finding's cause, checks, fix and verify, and the Pods.
    pub verbose: bool,
}

impl Style {
    pub fn plain(lang: Lang, now: Timestamp) -> Self {
        Style {
            lang,
            color: false,
            now,
            width: DEFAULT_WIDTH,
            verbose: false,
        }
    }

    pub fn labels(&self) -> &'static Labels {
        Labels::for_lang(self.lang)
    }

    fn paint(&self, text: &str, f: impl Fn(&str) -> String) -> String {
        if self.color {
            f(text)
        } else {
            text.to_string()
        }
    }

    pub fn bold(&self, t: &str) -> String {
        self.paint(t, |s| s.bold().to_string())
    }
    pub fn dim(&self, t: &str) -> String {
        self.paint(t, |s| s.dimmed().to_string())
    }
    pub fn good(&self, t: &str) -> String {
        self.paint(t, |s| s.green().to_string())
    }
    pub fn bad(&self, t: &str) -> String {
        self.paint(t, |s| s.red().bold().to_string())
    }
    pub fn warn(&self, t: &str) -> String {
        self.paint(t, |s| s.yellow().to_string())
    }
    pub fn severity(&self, severity: Severity, t: &str) -> String {
        match severity {
            Severity::Error => self.bad(t),
            Severity::Warning => self.warn(t),
            Severity::Info => self.paint(t, |s| s.cyan().to_string()),
        }
    }
}

/// A machine-readable encoding of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Pretty JSON, ending in a newline.
    Json,
    Yaml,
}

/// Encodes a report (one of the versioned report types of this module).
pub fn encode<T: serde::Serialize>(report: &T, encoding: Encoding) -> anyhow::Result<String> {
    use mdiag_core::catalogue::Failed;
    let failed = |e| Failed::new("error.encode_report", e);
    Ok(match encoding {
        Encoding::Json => {
            let mut s = serde_json::to_string_pretty(report).map_err(failed)?;
            s.push('\n');
            inert::json(&s)
        }
        Encoding::Yaml => inert::yaml(
            serde_saphyr::to_string(report).map_err(|e| Failed::new("error.encode_report", e))?,
            || encode(report, Encoding::Json),
        )?,
    })
}

/// Writes a report to `out` as it is encoded: the bytes [`encode`] makes,
/// without ever holding them (the JSON of a 5,000-workload triage is
/// 86 MB). YAML is still made whole first: serde-saphyr writes text.
pub fn write_encoded<T: serde::Serialize>(
    out: &mut impl Write,
    report: &T,
    encoding: Encoding,
) -> std::io::Result<()> {
    match encoding {
        Encoding::Json => {
            let mut out = inert::InertJson::new(&mut *out);
            serde_json::to_writer_pretty(&mut out, report).map_err(|e| {
                match e.io_error_kind() {
                    Some(kind) => std::io::Error::new(kind, e),
                    None => std::io::Error::other(format!("cannot encode the report: {e}")),
                }
            })?;
            out.write_all(b"\n")
        }
        Encoding::Yaml => {
            let text = encode(report, encoding).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())
        }
    }
}

/// [`write_encoded`] to stdout; a closed pipe is not an error.
pub fn write_encoded_stdout<T: serde::Serialize>(
    report: &T,
    encoding: Encoding,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write_encoded(&mut out, report, encoding).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes to stdout; a closed pipe (`mdiag ... | head`) is not an error.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report written as it is encoded is the text `encode` makes, byte
    /// for byte, in both encodings.
    #[test]
    fn a_streamed_report_is_the_encoded_text() {
        let report = serde_json::json!({
            "schema": "mdiag/v1",
            "items": [{"name": "chart-demo", "findings": ["crash-loop"], "ready": 0}],
            "text": "quotes \" and 中文",
        });
        for encoding in [Encoding::Json, Encoding::Yaml] {
            let mut out = Vec::new();
            write_encoded(&mut out, &report, encoding).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                encode(&report, encoding).unwrap(),
                "{encoding:?}"
            );
        }
    }

    /// A writer that fails says why, with the IO error's kind kept (a
    /// closed pipe is told apart from a failure to encode).
    #[test]
    fn a_failing_writer_keeps_its_error_kind() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let err =
            write_encoded(&mut Closed, &serde_json::json!({"a": 1}), Encoding::Json).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
