//! `mdiag snapshot [TARGET] --file FILE` as a plain request.

use std::path::PathBuf;

use super::SourceRequest;
use crate::cli::{GlobalArgs, SnapshotArgs};
use crate::error::UsageError;
use mdiag_core::model::TargetSpec;
use mdiag_source::file::Keep;
use mdiag_source::live::LogCaps;
use mdiag_source::redact::Redactor;

pub struct SnapshotRequest {
    /// One target's chain, or (`None`) the whole namespace.
    pub target: Option<TargetSpec>,
    /// It reads every field: a file is written back out whole.
    pub source: SourceRequest,
    pub file: PathBuf,
    pub logs: LogCaps,
    pub redactor: Redactor,
}

impl SnapshotRequest {
    pub fn from_cli(global: &GlobalArgs, args: &SnapshotArgs) -> anyhow::Result<Self> {
        if global.all_namespaces {
            return Err(UsageError(
                "snapshot captures one namespace or one target; use -n NS".into(),
            )
            .into());
        }
        if args.log_bytes <= 0 || args.log_lines <= 0 {
            return Err(UsageError("--log-bytes and --log-lines must be positive".into()).into());
        }
        let target = args
            .target
            .as_deref()
            .map(|t| TargetSpec::parse(t, global.namespace.as_deref()))
            .transpose()?;
        if target.is_none() && global.namespace.is_none() && global.snapshot.is_none() {
            return Err(UsageError("name a target, or a whole namespace with -n NS".into()).into());
        }
        let redactor = super::redactor(global)?;
        Ok(SnapshotRequest {
            target,
            source: SourceRequest {
                keep: Keep::Whole,
                ..SourceRequest::from_cli(global)?
            },
            file: args.file.clone(),
            logs: LogCaps {
                bytes: args.log_bytes,
                lines: args.log_lines,
                concurrency: args.concurrency,
            },
            redactor,
        })
    }
}
