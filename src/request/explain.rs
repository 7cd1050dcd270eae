//! `mdiag explain [ID|SYMPTOM [TARGET]]` as a plain request.

use jiff::Timestamp;

use super::SourceRequest;
use crate::cli::{ExplainArgs, GlobalArgs, OutputFormat, ViewArgs};
use crate::error::UsageError;
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;
use mdiag_core::model::TargetSpec;
use mdiag_render::DEFAULT_WIDTH;

pub struct ExplainRequest {
    /// The id, symptom, word or exit code; `None` lists every entry.
    pub query: Option<String>,
    /// A target whose real names fill in the check commands, as written
    /// and parsed.
    pub target: Option<(String, TargetSpec)>,
    pub source: SourceRequest,
    pub at: Option<Timestamp>,
    pub output: OutputFormat,
    pub lang: Lang,
    pub color: bool,
    pub width: usize,
}

impl ExplainRequest {
    /// The query and target, checked: what the CLI and `mdiag mcp` share.
    pub fn lookup(
        query: Option<String>,
        target: Option<String>,
        source: SourceRequest,
        at: Option<Timestamp>,
    ) -> anyhow::Result<Self> {
        if target.is_some() && query.is_none() {
            return Err(UsageError(Message::new("usage.explain_target_alone")).into());
        }
        let target = target
            .map(|t| TargetSpec::parse(&t, source.namespace.as_deref()).map(|spec| (t, spec)))
            .transpose()?;
        Ok(ExplainRequest {
            query,
            target,
            source,
            at,
            output: OutputFormat::Json,
            lang: Lang::En,
            color: false,
            width: DEFAULT_WIDTH,
        })
    }

    pub fn from_cli(global: &GlobalArgs, args: &ExplainArgs) -> anyhow::Result<Self> {
        let query = args.symptom.clone().filter(|_| !args.list);
        let mut request = ExplainRequest::lookup(
            query,
            args.target.clone(),
            SourceRequest::from_cli(global, args.file.snapshot.as_deref())?,
            super::parse_at(args.file.at.as_deref())?,
        )?;
        request.output = args.output.into();
        request.lang = super::lang(global);
        request.color = super::color(global);
        request.width = super::width(&ViewArgs {
            verbose: true,
            width: args.width,
        });
        Ok(request)
    }
}
