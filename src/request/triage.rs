//! `mdiag triage [-n NS | -A] [-l SELECTOR] [--alert FILE]` as a plain
//! request.

use std::path::PathBuf;

use jiff::Timestamp;

use super::SourceRequest;
use crate::cli::{GlobalArgs, OutputFormat, TriageArgs};
use crate::error::UsageError;
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;
use mdiag_core::model::LabelFilter;
use mdiag_render::DEFAULT_WIDTH;

pub struct TriageRequest {
    pub source: SourceRequest,
    /// Every namespace (`-A`); else `-n`, or the context's.
    pub all_namespaces: bool,
    /// `-l` as written, and parsed.
    pub selector: Option<String>,
    pub filter: Option<LabelFilter>,
    pub at: Option<Timestamp>,
    /// `--alert FILE|-`: trace what an alert is about instead.
    pub alert: Option<PathBuf>,
    pub output: OutputFormat,
    /// Rows for healthy workloads too.
    pub all: bool,
    pub lang: Lang,
    pub color: bool,
    pub width: usize,
    pub verbose: bool,
}

impl TriageRequest {
    /// The scope to judge, checked: what the CLI and `mdiag mcp` share. The
    /// view is plain English JSON until the caller says otherwise.
    pub fn scope(
        source: SourceRequest,
        all_namespaces: bool,
        selector: Option<String>,
        at: Option<Timestamp>,
    ) -> anyhow::Result<Self> {
        if all_namespaces && source.namespace.is_some() {
            return Err(UsageError(Message::new("usage.namespace_and_all")).into());
        }
        let filter = selector
            .as_deref()
            .map(LabelFilter::parse)
            .transpose()
            .map_err(|e| UsageError(mdiag_core::catalogue::Localized::message(&e)))?;
        if at.is_some() && source.snapshot_file.is_none() {
            return Err(UsageError(Message::new("usage.at_without_file")).into());
        }
        Ok(TriageRequest {
            source,
            all_namespaces,
            selector,
            filter,
            at,
            alert: None,
            output: OutputFormat::Json,
            all: false,
            lang: Lang::En,
            color: false,
            width: DEFAULT_WIDTH,
            verbose: false,
        })
    }

    pub fn from_cli(global: &GlobalArgs, args: &TriageArgs) -> anyhow::Result<Self> {
        let at = super::parse_at(args.file.at.as_deref())?;
        let source = SourceRequest::from_cli(global, args.file.snapshot.as_deref())?;
        let scope = &args.scope;
        // An alert names its own scope.
        let mut request = if args.alert.is_some() {
            if scope.all_namespaces || scope.selector.is_some() {
                return Err(UsageError(Message::new("usage.alert_with_scope")).into());
            }
            TriageRequest {
                at,
                ..TriageRequest::scope(source, false, None, None)?
            }
        } else {
            TriageRequest::scope(source, scope.all_namespaces, scope.selector.clone(), at)?
        };
        request.alert = args.alert.clone();
        request.output = args.output;
        request.all = args.all;
        request.lang = super::lang(global);
        request.color = super::color(global);
        request.width = super::width(&args.view);
        request.verbose = args.view.verbose;
        Ok(request)
    }
}
