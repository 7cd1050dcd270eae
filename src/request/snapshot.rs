//! `mdiag snapshot [TARGET] --output-file FILE` as a plain request.

use std::path::PathBuf;

use super::SourceRequest;
use crate::cli::{GlobalArgs, SnapshotArgs, SnapshotFormat};
use crate::error::UsageError;
use mdiag_core::catalogue::Message;
use mdiag_core::model::TargetSpec;
use mdiag_source::file::Keep;
use mdiag_source::live::LogCaps;
use mdiag_source::redact::Redactor;
use mdiag_source::write::FileFormat;

pub struct SnapshotRequest {
    /// One target's chain, or (`None`) the whole namespace.
    pub target: Option<TargetSpec>,
    /// It reads every field: a file is written back out whole.
    pub source: SourceRequest,
    pub file: PathBuf,
    /// YAML or JSON: `-o`, else the file's name.
    pub format: FileFormat,
    pub logs: LogCaps,
    pub redactor: Redactor,
}

impl SnapshotRequest {
    pub fn from_cli(global: &GlobalArgs, args: &SnapshotArgs) -> anyhow::Result<Self> {
        if args.log_bytes <= 0 || args.log_lines <= 0 {
            return Err(UsageError(Message::new("usage.log_caps")).into());
        }
        let target = args
            .target
            .as_deref()
            .map(|t| TargetSpec::parse(t, global.namespace.as_deref()))
            .transpose()?;
        if target.is_none() && global.namespace.is_none() && args.snapshot.is_none() {
            return Err(UsageError(Message::new("usage.snapshot_what")).into());
        }
        let redactor = super::redactor(global)?;
        Ok(SnapshotRequest {
            target,
            source: SourceRequest {
                keep: Keep::Whole,
                ..SourceRequest::from_cli(global, args.snapshot.as_deref())?
            },
            format: format(args)?,
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

/// `-o`, else what the file's name says, else YAML; `-o` against the
/// name (`-o json --output-file x.yaml`) is refused rather than guessed.
fn format(args: &SnapshotArgs) -> anyhow::Result<FileFormat> {
    let named = FileFormat::of_name(&args.file);
    let asked = args.output.map(|o| match o {
        SnapshotFormat::Yaml => FileFormat::Yaml,
        SnapshotFormat::Json => FileFormat::Json,
    });
    match (asked, named) {
        (Some(asked), Some(named)) if asked != named => Err(UsageError(
            Message::new("usage.snapshot_format")
                .arg("asked", asked.to_string())
                .arg("named", named.to_string())
                .arg("path", args.file.display().to_string()),
        )
        .into()),
        (Some(format), _) | (None, Some(format)) => Ok(format),
        (None, None) => Ok(FileFormat::Yaml),
    }
}
