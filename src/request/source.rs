//! Where a command's objects come from, as the user said it: a file
//! (`--snapshot`) or the live cluster. The reading itself is
//! `crate::cmd::source`.

use std::path::PathBuf;

use crate::cli::GlobalArgs;
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
    /// What every answer made of this source keeps out (`--redact`,
    /// `--no-default-redaction`): applied where the answer is built,
    /// before any view or file sees it.
    pub redactor: Redactor,
}

impl SourceRequest {
    pub fn from_cli(global: &GlobalArgs) -> anyhow::Result<Self> {
        Ok(SourceRequest {
            snapshot_file: global.snapshot.clone(),
            namespace: global.namespace.clone(),
            live: LiveOptions {
                kubeconfig: global.kubeconfig.clone(),
                context: global.context.clone(),
                request_timeout: Some(global.request_timeout),
            },
            resource: global.resource.clone(),
            controller: super::parse_controller(global)?,
            keep: Keep::Analysed,
            redactor: super::redactor(global)?,
        })
    }
}
