//! `mdiag gate TARGET` as a plain request: the target, the policy, the
//! files to write and a redactor built before the wait, so a bad flag is a
//! usage error at once, not after ten minutes.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::SourceRequest;
use crate::cli::{GateArgs, GlobalArgs, OutputFormat};
use crate::error::UsageError;
use mdiag_core::analysis;
use mdiag_core::analysis::gate::GatePolicy;
use mdiag_core::catalogue::Message;
use mdiag_core::catalogue::{FindingId, Lang};
use mdiag_core::model::{TargetKind, TargetSpec};
use mdiag_source::redact::Redactor;

/// The flags as a plain request.
pub struct GateRequest {
    pub target: TargetSpec,
    pub source: SourceRequest,
    pub timeout: Duration,
    pub policy: GatePolicy,
    pub report: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    /// The self-contained HTML page of the report.
    pub html: Option<PathBuf>,
    pub evidence: Option<PathBuf>,
    /// What the evidence keeps out (built up front, so a bad `--redact`
    /// is a usage error before the wait, not after it).
    pub redactor: Redactor,
    pub helm_release: Option<String>,
    pub output: OutputFormat,
    pub lang: Lang,
    pub color: bool,
    /// Columns and detail of the final human report.
    pub width: usize,
    pub verbose: bool,
}

impl GateRequest {
    pub fn from_cli(global: &GlobalArgs, args: &GateArgs) -> anyhow::Result<Self> {
        let target = TargetSpec::parse(&args.target, global.namespace.as_deref())?;
        if matches!(
            target.kind,
            TargetKind::Pod | TargetKind::ReplicaSet | TargetKind::Service
        ) {
            return Err(UsageError(
                Message::new("usage.gate_target").arg("kind", target.kind.as_str()),
            )
            .into());
        }
        if args.max_restarts < 1 {
            return Err(UsageError(Message::new("usage.max_restarts")).into());
        }
        // clap fills in the policy's default list when the flag is absent.
        let ids = &args.fail_on;
        let fail_on = if ids.iter().any(|i| i == "none") {
            if ids.len() > 1 {
                return Err(UsageError(Message::new("usage.fail_on_none")).into());
            }
            BTreeSet::new()
        } else {
            let known = analysis::rule_ids();
            let mut set = BTreeSet::new();
            for id in ids.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
                let Some(id) = FindingId::parse(id).filter(|i| known.contains(i)) else {
                    return Err(UsageError(
                        Message::new("usage.fail_on_unknown")
                            .arg("id", format!("{id:?}"))
                            .arg("program", mdiag_core::catalogue::program()),
                    )
                    .into());
                };
                set.insert(id);
            }
            set
        };
        Ok(GateRequest {
            target,
            source: SourceRequest::from_cli(global, None)?,
            timeout: args.timeout,
            policy: GatePolicy {
                fail_on,
                max_restarts: args.max_restarts,
            },
            report: args.report.clone(),
            junit: args.junit.clone(),
            html: args.html.clone(),
            evidence: args.evidence.clone(),
            redactor: super::redactor(global)?,
            helm_release: args.helm_release.clone(),
            output: args.output,
            lang: super::lang(global),
            color: super::color(global),
            width: super::width(&args.view),
            verbose: args.view.verbose,
        })
    }
}
