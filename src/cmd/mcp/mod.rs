//! `mdiag mcp`: a Model Context Protocol server on stdio (rmcp, the
//! official Rust SDK), so that an agent can call trace, triage, explain
//! and a snapshot file's summary as tools. Each tool turns its arguments
//! into the global and command flags the CLI would have parsed and runs
//! the same code path (`trace::diagnose`, `triage::answer`,
//! `explain::answer`), so the two cannot tell different stories. A tool
//! answers with the `mdiag/v1` report as structured content (what
//! `-o json` prints) and a short text: the headline and the `next`
//! command. A failure is a tool error carrying the message the CLI prints.
//!
//! stdout carries only protocol messages; nothing here prints.

use std::path::PathBuf;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use jiff::Timestamp;

mod params;

use params::{ExplainParams, Language, Source, SummaryParams, TraceParams, TriageParams};

use crate::cli::{GlobalArgs, LangArg, McpArgs};
use crate::exit::Exit;
use crate::request::{self, ExplainRequest, SourceRequest, TraceRequest, TriageRequest};
use mdiag_core::catalogue::Lang;

/// Serves until the client closes stdin (or a signal ends the process).
pub async fn run(global: &GlobalArgs, _args: &McpArgs) -> anyhow::Result<Exit> {
    let server = Mdiag::new(global.clone());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("cannot start the MCP session on stdio: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("the MCP session ended with an error: {e}"))?;
    Ok(Exit::Healthy)
}

/// The server: the flags `mdiag mcp` was started with are every tool's
/// defaults (`mdiag mcp --context prod`), which a tool's arguments override.
#[derive(Clone)]
pub struct Mdiag {
    defaults: GlobalArgs,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Mdiag {
    pub fn new(defaults: GlobalArgs) -> Self {
        Mdiag {
            defaults,
            tool_router: Self::tool_router(),
        }
    }

    /// Trace one workload: the object chain, each Pod's moments, where the
    /// rollout stopped, why (findings with evidence), and the command to
    /// run next. The structured content is `mdiag trace -o json` (schema
    /// mdiag/v1); the text is the headline and the next command.
    #[tool(annotations(
        title = "Trace a rollout",
        read_only_hint = true,
        open_world_hint = true
    ))]
    async fn trace(&self, Parameters(p): Parameters<TraceParams>) -> CallToolResult {
        let tool = self.tool(&p.source);
        answer(move || async move {
            let (source, at, lang) = tool?;
            let request = TraceRequest {
                lang,
                ..TraceRequest::of(&p.target, source, at, p.logs)?
            };
            let traced = super::trace::answer(&request).await?;
            Ok((
                serde_json::to_value(traced.report(request.lang))?,
                mdiag_render::answer::trace(&traced.diagnosis, request.lang),
            ))
        })
        .await
    }

    /// Rank every workload of a namespace (or of all, with
    /// `all_namespaces`) by how broken it is, worst first, with what fails
    /// outside them. The structured content is `mdiag triage -o json`; the
    /// text is the count line and the worst workload's headline and next command.
    #[tool(annotations(
        title = "Triage workloads",
        read_only_hint = true,
        open_world_hint = true
    ))]
    async fn triage(&self, Parameters(p): Parameters<TriageParams>) -> CallToolResult {
        let tool = self.tool(&p.source);
        let all_namespaces = p.all_namespaces || self.defaults.all_namespaces;
        let selector = p.selector.or_else(|| self.defaults.selector.clone());
        answer(move || async move {
            let (source, at, lang) = tool?;
            let request = TriageRequest {
                lang,
                ..TriageRequest::scope(source, all_namespaces, selector, at)?
            };
            let judged = super::triage::answer(&request).await?;
            Ok((
                serde_json::to_value(judged.report(lang))?,
                mdiag_render::answer::triage(&judged.items, lang),
            ))
        })
        .await
    }

    /// Explain a symptom from mdiag's catalogue: the documented cause, how
    /// to tell it from its neighbours, the read-only check commands (with a
    /// target's real names), the fix and how to verify it. The structured
    /// content is `mdiag explain -o json`.
    #[tool(annotations(
        title = "Explain a symptom",
        read_only_hint = true,
        open_world_hint = true
    ))]
    async fn explain(&self, Parameters(p): Parameters<ExplainParams>) -> CallToolResult {
        let tool = self.tool(&p.source);
        answer(move || async move {
            let (source, at, lang) = tool?;
            let request = ExplainRequest {
                lang,
                ..ExplainRequest::lookup(p.query, p.target, source, at)?
            };
            let explained = super::explain::answer(&request).await?;
            let report = explained.report(lang);
            let text = mdiag_render::answer::explain(&report, lang);
            Ok((serde_json::to_value(report)?, text))
        })
        .await
    }

    /// What a snapshot file holds: where and when it was captured, its
    /// target, objects per kind, logs, what could not be read, what was
    /// redacted, and the triage of every workload in it.
    #[tool(annotations(title = "Summarise a snapshot file", read_only_hint = true))]
    async fn snapshot_summary(&self, Parameters(p): Parameters<SummaryParams>) -> CallToolResult {
        let path = PathBuf::from(&p.snapshot);
        let source = Source {
            snapshot: Some(p.snapshot),
            at: p.at,
            lang: p.lang,
            ..Source::default()
        };
        let tool = self.tool(&source);
        answer(move || async move {
            let (_, at, lang) = tool?;
            let snapshot = mdiag_source::read_snapshot_file(&path)?;
            let contents = mdiag_core::analysis::contents::contents(&snapshot);
            let judged = super::triage::of_snapshot(snapshot, at);
            let text = mdiag_render::answer::summary(&contents, &judged.items, lang);
            let report = mdiag_render::summary::report(&contents, judged.report(lang));
            Ok((serde_json::to_value(report)?, text))
        })
        .await
    }
}

impl Mdiag {
    /// A tool's source, clock and language: the server's flags with the
    /// tool's arguments laid over them. An error is the tool's, answered
    /// as its result.
    fn tool(&self, s: &Source) -> anyhow::Result<(SourceRequest, Option<Timestamp>, Lang)> {
        let global = self.global(s);
        Ok((
            SourceRequest::from_cli(&global)?,
            request::parse_at(&global)?,
            request::lang(&global),
        ))
    }

    /// The server's flags with a tool's source arguments laid over them.
    fn global(&self, s: &Source) -> GlobalArgs {
        let mut g = self.defaults.clone();
        if s.namespace.is_some() {
            g.namespace = s.namespace.clone();
        }
        if s.context.is_some() {
            g.context = s.context.clone();
        }
        if let Some(k) = &s.kubeconfig {
            g.kubeconfig = Some(PathBuf::from(k));
        }
        if let Some(f) = &s.snapshot {
            g.snapshot = Some(PathBuf::from(f));
        }
        if s.at.is_some() {
            g.at = s.at.clone();
        }
        if let Some(l) = s.lang {
            g.lang = Some(match l {
                Language::En => LangArg::En,
                Language::Zh => LangArg::Zh,
            });
        }
        g
    }
}

/// The tool's result: the report and the text answer, or a tool error
/// with the one-line message the CLI prints (`mdiag: MESSAGE`).
///
/// The work runs on a blocking thread of its own, driven by the runtime's
/// handle as `main` drives a command: a live triage's read holds borrows
/// across its awaits that make its future not `Send`, and the analysis is
/// CPU work that should not hold up the session's own tasks.
async fn answer<M, F>(work: M) -> CallToolResult
where
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = anyhow::Result<(serde_json::Value, String)>>,
{
    let handle = tokio::runtime::Handle::current();
    let done = tokio::task::spawn_blocking(move || handle.block_on(work())).await;
    match done {
        Ok(Ok((report, text))) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(report);
            result
        }
        Ok(Err(err)) => CallToolResult::error(vec![ContentBlock::text(format!("{err:#}"))]),
        Err(panic) => CallToolResult::error(vec![ContentBlock::text(format!(
            "the tool stopped unexpectedly: {panic}"
        ))]),
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "mdiag",
    instructions = "Read-only rollout diagnostics for ModelServices (and Deployments, StatefulSets, DaemonSets, ReplicaSets, Pods) on Kubernetes. Start with triage for a namespace, trace one workload, run the `next` command it gives, and explain a finding id. Nothing here writes to the cluster."
)]
impl ServerHandler for Mdiag {}
