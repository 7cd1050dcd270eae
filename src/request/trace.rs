//! `mdiag trace TARGET` as a plain request.

use jiff::Timestamp;

use super::SourceRequest;
use crate::cli::{GlobalArgs, OutputFormat, TraceArgs};
use crate::error::UsageError;
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;
use mdiag_core::model::TargetSpec;
use mdiag_render::DEFAULT_WIDTH;

/// Everything a trace needs, decided from the flags before any work.
pub struct TraceRequest {
    pub target: TargetSpec,
    pub source: SourceRequest,
    pub at: Option<Timestamp>,
    pub output: OutputFormat,
    pub lang: Lang,
    pub color: bool,
    /// Read the logs of the Pods the findings are about (live).
    pub logs: bool,
    pub width: usize,
    pub verbose: bool,
}

impl TraceRequest {
    pub fn from_cli(global: &GlobalArgs, args: &TraceArgs) -> anyhow::Result<Self> {
        let mut request = TraceRequest::of(
            &args.target,
            SourceRequest::from_cli(global, args.file.snapshot.as_deref())?,
            super::parse_at(args.file.at.as_deref())?,
            args.logs,
        )?;
        request.output = args.output;
        request.lang = super::lang(global);
        request.color = super::color(global);
        request.width = super::width(&args.view);
        request.verbose = args.view.verbose;
        Ok(request)
    }

    /// The target, checked against its source: what the CLI and `mdiag
    /// mcp` share. The view is plain English JSON until the caller says
    /// otherwise.
    pub fn of(
        target: &str,
        source: SourceRequest,
        at: Option<Timestamp>,
        logs: bool,
    ) -> anyhow::Result<Self> {
        if at.is_some() && source.snapshot_file.is_none() {
            return Err(UsageError(Message::new("usage.at_without_file")).into());
        }
        if logs && source.snapshot_file.is_some() {
            return Err(UsageError(Message::new("usage.logs_with_file")).into());
        }
        Ok(TraceRequest {
            target: TargetSpec::parse(target, source.namespace.as_deref())?,
            source,
            at,
            output: OutputFormat::Json,
            lang: Lang::En,
            color: false,
            logs,
            width: DEFAULT_WIDTH,
            verbose: false,
        })
    }
}
