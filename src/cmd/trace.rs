//! `mdiag trace TARGET`: one workload, from a live cluster or a file.

use jiff::Timestamp;

use super::source::{SourceRequest, explain_not_found};
use crate::analysis;
use crate::catalogue::Lang;
use crate::chain;
use crate::cli::{GlobalArgs, OutputFormat, TraceArgs};
use crate::exit::{Exit, UsageError};
use crate::model::{Clock, TargetSpec};
use crate::render::report::{RunInfo, trace_report};
use crate::render::{self, Style, human};

/// Everything a trace needs, decided from the flags before any work.
pub struct TraceRequest {
    pub target: TargetSpec,
    pub source: SourceRequest,
    pub at: Option<Timestamp>,
    pub output: OutputFormat,
    pub lang: Lang,
    pub color: bool,
}

impl TraceRequest {
    pub fn from_args(global: &GlobalArgs, args: &TraceArgs) -> anyhow::Result<Self> {
        if global.all_namespaces {
            return Err(UsageError(
                "trace follows one workload in one namespace; use -n NS (triage covers -A)".into(),
            )
            .into());
        }
        if global.selector.is_some() {
            return Err(UsageError(
                "trace takes one target; -l selects workloads for triage".into(),
            )
            .into());
        }
        if global.at.is_some() && global.snapshot.is_none() {
            return Err(
                UsageError("--at judges a snapshot file; add --snapshot FILE".into()).into(),
            );
        }
        Ok(TraceRequest {
            target: TargetSpec::parse(&args.target, global.namespace.as_deref())?,
            source: SourceRequest::from_global(global)?,
            at: super::parse_at(global)?,
            output: args.output,
            lang: super::lang(global),
            color: super::color(global),
        })
    }
}

pub async fn run(global: &GlobalArgs, args: &TraceArgs) -> anyhow::Result<Exit> {
    let request = TraceRequest::from_args(global, args)?;
    let loaded = request.source.load(Some(&request.target)).await?;
    let snapshot = &loaded.snapshot;
    let clock = Clock::choose(&snapshot.origin, request.at, Timestamp::now());
    let chain = match chain::walk(
        snapshot,
        &request.target,
        &loaded.namespace,
        request.source.controller.as_ref(),
    ) {
        Ok(chain) => chain,
        Err(not_found) => return Err(explain_not_found(snapshot, not_found)),
    };
    let diagnosis = analysis::analyze(snapshot, &chain, clock.now);
    let run = RunInfo {
        origin: &snapshot.origin,
        clock,
        requests: loaded.connection.as_ref().map(|c| c.requests()),
    };
    let text = match request.output.encoding() {
        None => {
            let style = Style {
                lang: request.lang,
                color: request.color,
                now: clock.now,
            };
            human::trace(&diagnosis, &run, &style)
        }
        Some(encoding) => render::encode(&trace_report(&diagnosis, &run, request.lang), encoding)?,
    };
    super::emit(&text)?;
    Ok(crate::exit::for_diagnosis(&diagnosis))
}
