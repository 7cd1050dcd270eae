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

/// Which clusters a live triage reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clusters {
    /// The context named (`--context NAME`), else the current one.
    One,
    /// `--context a,b,c`: these, in this order.
    Named(Vec<String>),
    /// `--all-contexts`: every context of the kubeconfig.
    All,
}

#[derive(Clone)]
pub struct TriageRequest {
    pub source: SourceRequest,
    pub clusters: Clusters,
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
            clusters: Clusters::One,
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
        request.clusters = clusters(global, args.all_contexts, &request.source)?;
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

/// `--context a,b` (more than one name) and `--all-contexts`: several
/// clusters, live only. One name stays the one cluster it always was.
fn clusters(global: &GlobalArgs, all: bool, source: &SourceRequest) -> anyhow::Result<Clusters> {
    let mut names: Vec<String> = Vec::new();
    for name in global.context.iter().flat_map(|c| c.split(',')) {
        let name = name.trim();
        if name.is_empty() {
            return Err(UsageError(Message::new("usage.context_empty")).into());
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    let clusters = match (all, names.len()) {
        (true, 0) => Clusters::All,
        (true, _) => return Err(UsageError(Message::new("usage.all_contexts_and_context")).into()),
        (false, 0 | 1) => Clusters::One,
        (false, _) => Clusters::Named(names),
    };
    if clusters != Clusters::One && source.snapshot_file.is_some() {
        return Err(UsageError(Message::new("usage.contexts_with_file")).into());
    }
    Ok(clusters)
}
