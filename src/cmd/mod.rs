//! One thin file per subcommand: turn flags into a plain request, fetch
//! the snapshot through the source seam, analyse, render, pick the exit code.

pub mod alert;
pub mod explain;
pub mod gate;
pub mod mcp;
pub mod signals;
pub mod snapshot;
pub mod source;
pub mod trace;
pub mod triage;

use std::io::IsTerminal;

use anyhow::Context;
use jiff::Timestamp;

use crate::cli::{Cli, ColorChoice, Command, GlobalArgs, LangArg, ViewArgs};
use crate::error::UsageError;
use crate::exit::Exit;
use mdiag_core::catalogue::Lang;
use mdiag_core::chain::ControllerLocation;

pub async fn run(cli: Cli) -> anyhow::Result<Exit> {
    match &cli.command {
        Command::Trace(args) => trace::run(&cli.global, args).await,
        Command::Triage(args) => triage::run(&cli.global, args).await,
        Command::Gate(args) => gate::run(&cli.global, args).await,
        // Dropped before its (synchronous, atomic) write, a capture leaves
        // no file; once writing, it finishes before the signal is seen.
        Command::Snapshot(args) => {
            let stop = signals::Stop::listen();
            match stop.unless(snapshot::run(&cli.global, args)).await {
                Ok(done) => done,
                Err(signal) => Err(crate::error::Interrupted {
                    signal,
                    left: format!(
                        "no snapshot was written; {} is as it was",
                        args.file.display()
                    ),
                }
                .into()),
            }
        }
        Command::Explain(args) => explain::run(&cli.global, args).await,
        Command::Mcp(args) => mcp::run(&cli.global, args).await,
    }
}

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

pub fn parse_at(global: &GlobalArgs) -> anyhow::Result<Option<Timestamp>> {
    global
        .at
        .as_deref()
        .map(|s| {
            s.parse::<Timestamp>().map_err(|e| {
                UsageError(format!(
                    "--at {s:?} is not an RFC 3339 time such as 2026-11-28T10:15:00Z ({e})"
                ))
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
        .ok_or_else(|| UsageError(format!("--controller {text:?} must be NAMESPACE/NAME")))?;
    Ok(Some(ControllerLocation {
        namespace: namespace.to_string(),
        name: name.to_string(),
    }))
}

/// Writes rendered output, with context on failure.
pub fn emit(text: &str) -> anyhow::Result<()> {
    mdiag_render::write_stdout(text).context("cannot write to stdout")
}
