//! `mdiag mcp`: a Model Context Protocol server on stdio (rmcp, the
//! official Rust SDK), so that an agent can call trace, triage, explain
//! and a snapshot file's summary as tools. Each tool turns its arguments
//! into the global and command flags the CLI would have parsed and runs
//! the same code path (`trace::diagnose`, `triage::answer`,
//! `explain::answer`), so the two cannot tell different stories. A tool
//! answers with the `mdiag/v1` report as structured content (what
//! `-o json` prints, described by the tool's `outputSchema`), a short text
//! (the headline and the `next` command) and the report again as a JSON
//! text block, for a client that hands a model only the text. A failure
//! is a tool error naming the tool and carrying the message the CLI
//! prints.
//!
//! What a call may read is pinned when the server starts (`scope`: the
//! cluster, the namespaces; `confine`: the files), the messages it reads
//! and writes are bounded (`transport`), and so are each argument
//! (`scope::MAX_ARGUMENT_BYTES`) and each answer ([`MAX_TEXT_BYTES`],
//! [`MAX_REPORT_BYTES`]). docs/security.md#mcp.
//!
//! stdout carries only protocol messages; nothing here prints.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

mod answer;
mod confine;
mod params;
mod schemas;
mod scope;
pub mod transport;

use answer::answer;
use params::{ExplainParams, Source, SummaryParams, TraceParams, TriageParams};

use crate::cli::{GlobalArgs, McpArgs};
use crate::error::{Failed, UsageError};
use crate::exit::Exit;
use crate::request::{ExplainRequest, McpRequest, TraceRequest, TriageRequest};
use mdiag_core::catalogue::Message;
use mdiag_source::file::{Keep, read_snapshot_opened};

/// The most text one answer carries; longer is cut, and says so.
pub const MAX_TEXT_BYTES: usize = 64 << 10;

/// The largest report (structured content, as JSON) one answer carries; a
/// larger one is not sent, and the answer says how to narrow the call.
pub const MAX_REPORT_BYTES: usize = 8 << 20;

/// Serves until the client closes stdin (or a signal ends the process).
pub async fn run(global: &GlobalArgs, args: &McpArgs) -> anyhow::Result<Exit> {
    let server = Mdiag::new(McpRequest::from_cli(global, args)?);
    let (stdin, stdout) = rmcp::transport::stdio();
    let running = server
        .serve(transport::Bounded::new(stdin, stdout))
        .await
        .map_err(|e| Failed::new("error.mcp.start", e))?;
    running
        .waiting()
        .await
        .map_err(|e| Failed::new("error.mcp.ended", e))?;
    Ok(Exit::Healthy)
}

/// The server: what it was started to read (`McpRequest`), which every
/// call's arguments may narrow and never widen.
#[derive(Clone)]
pub struct Mdiag {
    pins: Arc<McpRequest>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Mdiag {
    pub fn new(pins: McpRequest) -> Self {
        Mdiag {
            pins: Arc::new(pins),
            tool_router: Self::tool_router(),
        }
    }

    /// Trace one workload: the object chain, each Pod's moments, where the
    /// rollout stopped, why (findings with evidence), and the command to
    /// run next. The structured content is `mdiag trace -o json` (schema
    /// mdiag/v1); the text is the headline and the next command.
    #[tool(
        output_schema = schemas::trace(),
        annotations(
        title = "Trace a rollout",
        read_only_hint = true,
        open_world_hint = true
    )
    )]
    async fn trace(&self, Parameters(p): Parameters<TraceParams>) -> CallToolResult {
        let call =
            scope::short(&[("target", Some(&p.target))]).and_then(|()| self.call(&p.source, false));
        answer(
            "trace",
            scope::lang(&self.pins, &p.source),
            move || async move {
                let call = call?;
                let request = TraceRequest {
                    lang: call.lang,
                    ..TraceRequest::of(&p.target, call.source, call.at, p.logs)?
                };
                let traced = super::trace::answer(&request).await?;
                Ok((
                    serde_json::to_value(traced.report(request.lang))?,
                    mdiag_render::answer::trace(&traced.diagnosis, request.lang),
                ))
            },
        )
        .await
    }

    /// Rank every workload of a namespace (or of all, with
    /// `all_namespaces`) by how broken it is, worst first, with what fails
    /// outside them. The structured content is `mdiag triage -o json`; the
    /// text is the count line and the worst workload's headline and next command.
    #[tool(
        output_schema = schemas::triage(),
        annotations(
        title = "Triage workloads",
        read_only_hint = true,
        open_world_hint = true
    )
    )]
    async fn triage(&self, Parameters(p): Parameters<TriageParams>) -> CallToolResult {
        let call = scope::short(&[("selector", p.selector.as_deref())])
            .and_then(|()| self.call(&p.source, p.all_namespaces));
        let selector = p.selector.or_else(|| self.pins.scope.selector.clone());
        answer(
            "triage",
            scope::lang(&self.pins, &p.source),
            move || async move {
                let call = call?;
                let lang = call.lang;
                let request = TriageRequest {
                    lang,
                    ..TriageRequest::scope(call.source, call.all_namespaces, selector, call.at)?
                };
                let judged = super::triage::answer(&request).await?;
                Ok((
                    serde_json::to_value(judged.report(lang))?,
                    mdiag_render::answer::triage(&judged.items, lang),
                ))
            },
        )
        .await
    }

    /// Explain a symptom from mdiag's catalogue: the documented cause, how
    /// to tell it from its neighbours, the read-only check commands (with a
    /// target's real names), the fix and how to verify it. The structured
    /// content is `mdiag explain -o json`.
    #[tool(
        output_schema = schemas::explain(),
        annotations(
        title = "Explain a symptom",
        read_only_hint = true,
        open_world_hint = true
    )
    )]
    async fn explain(&self, Parameters(p): Parameters<ExplainParams>) -> CallToolResult {
        let call = scope::short(&[
            ("query", p.query.as_deref()),
            ("target", p.target.as_deref()),
        ])
        .and_then(|()| self.call(&p.source, false));
        answer(
            "explain",
            scope::lang(&self.pins, &p.source),
            move || async move {
                let call = call?;
                let lang = call.lang;
                let request = ExplainRequest {
                    lang,
                    ..ExplainRequest::lookup(p.query, p.target, call.source, call.at)?
                };
                let explained = super::explain::answer(&request).await?;
                let report = explained.report(lang);
                let text = mdiag_render::answer::explain(&report, lang);
                Ok((serde_json::to_value(report)?, text))
            },
        )
        .await
    }

    /// What a snapshot file holds: where and when it was captured, its
    /// target, objects per kind, logs, what could not be read, what was
    /// redacted, and the triage of every workload in it.
    #[tool(
        output_schema = schemas::snapshot_summary(),
        annotations(title = "Summarise a snapshot file", read_only_hint = true)
    )]
    async fn snapshot_summary(&self, Parameters(p): Parameters<SummaryParams>) -> CallToolResult {
        let source = Source {
            snapshot: Some(p.snapshot),
            at: p.at,
            lang: p.lang,
            ..Source::default()
        };
        let call = self.call(&source, false);
        answer(
            "snapshot_summary",
            scope::lang(&self.pins, &source),
            move || async move {
                let call = call?;
                let (path, file) = call
                    .file()
                    .ok_or_else(|| UsageError(Message::new("usage.mcp.not_opened")))?;
                let snapshot = read_snapshot_opened(file.try_clone()?, path, Keep::Analysed)?;
                if let Some(at) = call.at {
                    super::triage::refuse_before_the_specs(&snapshot, None, at)?;
                }
                // Redacted as the CLI's summary is: its gaps and origin too.
                let (contents, judged) = super::triage::summary_of(snapshot, call.at);
                let text = mdiag_render::answer::summary(&contents, &judged.items, call.lang);
                let report = mdiag_render::summary::report(&contents, judged.report(call.lang));
                Ok((serde_json::to_value(report)?, text))
            },
        )
        .await
    }
}

impl Mdiag {
    /// A call's source, clock and language: the server's flags with the
    /// call's arguments laid over them, refused where they would widen
    /// what the server was started to read. An error is the tool's,
    /// answered as its result.
    fn call(&self, s: &Source, all_namespaces: bool) -> anyhow::Result<scope::Call> {
        scope::call(&self.pins, s, all_namespaces)
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "mdiag",
    instructions = "Read-only rollout diagnostics for ModelServices (and Deployments, StatefulSets, DaemonSets, ReplicaSets, Pods) on Kubernetes. Start with triage for a namespace, trace one workload, run the `next` command it gives, and explain a finding id. Nothing here writes to the cluster. The cluster, the namespaces and the files a call may read are the ones the server was started for; a call may narrow them, and one that would widen them is refused with the flag that allows it."
)]
impl ServerHandler for Mdiag {}
