//! One plain request per command, decided before anything is read: the
//! command line builds it (`from_cli`), and so does `mdiag mcp` from a
//! tool's arguments, so both run the same code on the same request. The
//! environment (LANG, NO_COLOR, COLUMNS, the terminal) is read here, once.

mod explain;
mod gate;
mod mcp;
mod snapshot;
mod source;
mod trace;
mod triage;

use std::io::IsTerminal;

use jiff::Timestamp;

use crate::cli::{ColorChoice, GlobalArgs, LangArg, ViewArgs};
use crate::error::UsageError;
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;
use mdiag_core::chain::ControllerLocation;

pub use explain::ExplainRequest;
pub use gate::GateRequest;
pub use mcp::{Allowed, FileScope, McpRequest, NamespaceScope};
pub use snapshot::SnapshotRequest;
pub use source::SourceRequest;
pub use trace::TraceRequest;
pub use triage::{Clusters, TriageRequest};

/// The language: `--lang`, else LC_ALL / LC_MESSAGES / LANG.
pub fn lang(global: &GlobalArgs) -> Lang {
    match global.lang {
        Some(LangArg::En) => Lang::En,
        Some(LangArg::Zh) => Lang::Zh,
        None => ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .find(|v| !v.is_empty())
            .map(|v| Lang::from_locale(&v))
            .unwrap_or_default(),
    }
}

/// Colour only for a terminal, never when NO_COLOR is set, unless forced.
pub fn color(global: &GlobalArgs) -> bool {
    match global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
                && std::io::stdout().is_terminal()
        }
    }
}

/// The columns of the human view: `--width`; else the terminal's when
/// stdout is one (the live size: an exported COLUMNS goes stale when the
/// window is resized); else COLUMNS, as GNU tools read it for a pipe
/// (`COLUMNS=120 mdiag trace x | less`); else 80.
pub fn width(view: &ViewArgs) -> usize {
    use mdiag_render::{DEFAULT_WIDTH, MIN_WIDTH};
    if let Some(w) = view.width {
        return usize::from(w);
    }
    let stdout = std::io::stdout();
    if stdout.is_terminal()
        && let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size_of(&stdout)
        && w > 0
    {
        return usize::from(w).max(MIN_WIDTH);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
        .map_or(DEFAULT_WIDTH, |c| c.max(MIN_WIDTH))
}

/// The redactor of `--redact` and `--no-default-redaction`; a pattern
/// that is not a regular expression is a usage error before anything is read.
pub fn redactor(global: &GlobalArgs) -> anyhow::Result<mdiag_source::redact::Redactor> {
    let r = &global.redaction;
    Ok(mdiag_source::redact::Redactor::new(
        &r.redact,
        !r.no_default_redaction,
    )?)
}

/// `--at TIME`, parsed.
pub fn parse_at(at: Option<&str>) -> anyhow::Result<Option<Timestamp>> {
    at.map(|s| {
        s.parse::<Timestamp>().map_err(|e| {
            UsageError(
                Message::new("usage.at_time")
                    .arg("given", format!("{s:?}"))
                    .arg("detail", e.to_string()),
            )
        })
    })
    .transpose()
    .map_err(Into::into)
}

pub fn parse_controller(global: &GlobalArgs) -> anyhow::Result<Option<ControllerLocation>> {
    let Some(text) = global.controller.as_deref() else {
        return Ok(None);
    };
    let (namespace, name) = text
        .split_once('/')
        .filter(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| {
            UsageError(Message::new("usage.controller").arg("given", format!("{text:?}")))
        })?;
    Ok(Some(ControllerLocation {
        namespace: namespace.to_string(),
        name: name.to_string(),
    }))
}
