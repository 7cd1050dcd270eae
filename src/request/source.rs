//! Where a command's objects come from, as the user said it: a file
//! (`--snapshot`) or the live cluster. The reading itself is
//! `crate::cmd::source`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::GlobalArgs;
use crate::error::UsageError;
use mdiag_core::catalogue::{Lang, Message};
use mdiag_core::chain::ControllerLocation;
use mdiag_source::file::Keep;
use mdiag_source::live::LiveOptions;
use mdiag_source::redact::Redactor;

#[derive(Clone)]
/// The source flags as a plain request.
pub struct SourceRequest {
    pub snapshot_file: Option<PathBuf>,
    pub namespace: Option<String>,
    pub live: LiveOptions,
    pub resource: Option<String>,
    pub controller: Option<ControllerLocation>,
    /// What a file read keeps of each object (`snapshot` writes them back
    /// whole; every other command reads what the analysis uses).
    pub keep: Keep,
    /// `snapshot_file` already opened and checked (by `mdiag mcp`, against
    /// the files it may read): it is read from this handle, never opened by
    /// its path again.
    pub opened_file: Option<Arc<std::fs::File>>,
    /// `mdiag mcp` started without `-n` or `-A`: a live read may only be
    /// of the context's own namespace, so a namespace named here must be
    /// that one.
    pub context_namespace_only: bool,
    /// What every answer made of this source keeps out (`--redact`,
    /// `--no-default-redaction`): applied where the answer is built,
    /// before any view or file sees it.
    pub redactor: Redactor,
    /// The language of what reading says on stderr (a key named twice).
    pub lang: Lang,
}

impl SourceRequest {
    /// The global flags, and the file a command was given (`-f`), if any.
    pub fn from_cli(global: &GlobalArgs, snapshot: Option<&Path>) -> anyhow::Result<Self> {
        Ok(SourceRequest {
            snapshot_file: snapshot.map(Path::to_path_buf),
            namespace: global.namespace.clone(),
            live: LiveOptions {
                kubeconfig: global.kubeconfig.clone(),
                context: global.context.clone(),
                request_timeout: Some(global.request_timeout),
            },
            resource: global.resource.clone(),
            controller: super::parse_controller(global)?,
            keep: Keep::Analysed,
            opened_file: None,
            context_namespace_only: false,
            redactor: super::redactor(global)?,
            lang: super::lang(global),
        })
    }

    /// The namespace a live read is of: the one named, else the context's
    /// (`default`, the namespace of the kubeconfig's context). Under
    /// `context_namespace_only`, one named that is not the context's is
    /// refused: it would widen what `mdiag mcp` was started to read.
    pub fn live_namespace(&self, default: &str) -> anyhow::Result<String> {
        match &self.namespace {
            Some(ns) if self.context_namespace_only && ns != default => Err(UsageError(
                Message::new("usage.mcp.namespace_outside_context")
                    .arg("namespace", format!("{ns:?}"))
                    .arg("default", format!("{default:?}")),
            )
            .into()),
            Some(ns) => Ok(ns.clone()),
            None => Ok(default.to_string()),
        }
    }
}
