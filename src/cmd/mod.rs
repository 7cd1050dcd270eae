//! One thin file per subcommand: take its plain request (`crate::request`),
//! fetch the snapshot through the source seam, analyse, render, pick the
//! exit code (`crate::exit`).

pub mod alert;
pub mod explain;
pub mod gate;
pub mod mcp;
pub mod signals;
pub mod snapshot;
pub mod source;
pub mod trace;
pub mod triage;

use crate::cli::{Cli, Command};
use crate::exit::Exit;
use crate::request::{ExplainRequest, GateRequest, SnapshotRequest, TraceRequest, TriageRequest};

pub async fn run(cli: Cli) -> anyhow::Result<Exit> {
    let global = &cli.global;
    match &cli.command {
        Command::Trace(args) => trace::run(&TraceRequest::from_cli(global, args)?).await,
        Command::Triage(args) => triage::run(&TriageRequest::from_cli(global, args)?).await,
        Command::Gate(args) => gate::run(&GateRequest::from_cli(global, args)?).await,
        // Dropped before its (synchronous, atomic) write, a capture leaves
        // no file; once writing, it finishes before the signal is seen.
        Command::Snapshot(args) => {
            let request = SnapshotRequest::from_cli(global, args)?;
            let stop = signals::Stop::listen();
            match stop.unless(snapshot::run(&request)).await {
                Ok(done) => done,
                Err(signal) => Err(crate::error::Interrupted {
                    signal,
                    left: if request.file == std::path::Path::new(mdiag_source::write::STDOUT_PATH)
                    {
                        mdiag_core::catalogue::Message::new("error.interrupted.no_snapshot")
                    } else {
                        mdiag_core::catalogue::Message::new("error.interrupted.file_unchanged")
                            .arg("path", request.file.display().to_string())
                    },
                }
                .into()),
            }
        }
        Command::Explain(args) => explain::run(&ExplainRequest::from_cli(global, args)?).await,
        Command::Mcp(args) => {
            // Every tool's answer is redacted by the server's flags: a bad
            // `--redact` is refused now, not at the first call.
            crate::request::redactor(global)?;
            mcp::run(global, args).await
        }
    }
}

/// Writes rendered output, with context on failure: inert whatever the
/// view (`color`: the view may hold mdiag's own colour sequences).
pub fn emit(text: &str, color: bool) -> anyhow::Result<()> {
    mdiag_render::write_stdout(&mdiag_render::inert::text(text, color))
        .map_err(|e| crate::error::Failed::new("error.stdout", e).into())
}
