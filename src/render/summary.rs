//! A snapshot file's summary (`mdiag mcp`'s `snapshot_summary`): where and
//! when it was captured, what it holds, what it could not read and what
//! was replaced, and the triage of it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::report::SCHEMA;
use super::triage::TriageReport;
use mdiag_core::analysis::contents::Contents;
use mdiag_core::model::{Gap, OriginKind, Redaction};

#[derive(Debug, Serialize)]
pub struct SummaryReport {
    pub schema: &'static str,
    pub kind: &'static str,
    pub source: SummarySource,
    /// What the capture was about (`mdiag snapshot TARGET`); null for a
    /// whole namespace or a kubectl dump.
    pub target: Option<SummaryTarget>,
    /// The namespace the capture read; null when it does not say.
    pub namespace: Option<String>,
    pub objects: SummaryObjects,
    /// The container logs held, without their text.
    pub logs: Vec<SummaryLog>,
    /// What the capture could not read.
    pub gaps: Vec<Gap>,
    /// Where values were replaced (path, rule, count; never the value).
    pub redactions: Vec<Redaction>,
    /// Every workload of the file judged, as `triage -A --snapshot FILE -o json`.
    pub triage: TriageReport,
}

#[derive(Debug, Serialize)]
pub struct SummarySource {
    /// `snapshot` (mdiag's own format) or `kubectl-dump`.
    pub kind: &'static str,
    pub location: String,
    pub captured_at: Option<Timestamp>,
    /// The program that wrote it (`mdiag 0.1.0`).
    pub captured_by: Option<String>,
    pub context: Option<String>,
    pub server_version: Option<String>,
    /// The newest timestamp of any object: a dump's clock.
    pub newest_seen: Option<Timestamp>,
}

#[derive(Debug, Serialize)]
pub struct SummaryTarget {
    pub kind: &'static str,
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, Serialize)]
pub struct SummaryObjects {
    pub total: usize,
    /// By kind (`Pod`, `Event`...): only the kinds the file has.
    pub by_kind: BTreeMap<String, usize>,
}

#[derive(Debug, Serialize)]
pub struct SummaryLog {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub previous: bool,
    pub truncated: bool,
    /// Non-empty lines held.
    pub lines: usize,
    pub bytes: usize,
}

pub fn report(c: &Contents, triage: TriageReport) -> SummaryReport {
    SummaryReport {
        schema: SCHEMA,
        kind: "SnapshotSummary",
        source: SummarySource {
            kind: source_kind(c.origin.kind),
            location: c.origin.location.clone(),
            captured_at: c.origin.captured_at,
            captured_by: c.origin.captured_by.clone(),
            context: c.origin.context.clone(),
            server_version: c.origin.server_version.clone(),
            newest_seen: c.origin.newest_seen,
        },
        target: c.origin.target.as_ref().map(|t| SummaryTarget {
            kind: t.kind.as_str(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
        }),
        namespace: c.origin.namespace.clone(),
        objects: SummaryObjects {
            total: c.total(),
            by_kind: c.objects.iter().cloned().collect(),
        },
        logs: c
            .logs
            .iter()
            .map(|l| SummaryLog {
                namespace: l.namespace.clone(),
                pod: l.pod.clone(),
                container: l.container.clone(),
                previous: l.previous,
                truncated: l.truncated,
                lines: l.lines,
                bytes: l.bytes,
            })
            .collect(),
        gaps: c.gaps.clone(),
        redactions: c.redactions.clone(),
        triage,
    }
}

fn source_kind(kind: OriginKind) -> &'static str {
    match kind {
        OriginKind::Live => "live",
        OriginKind::SnapshotFile => "snapshot",
        OriginKind::KubectlDump => "kubectl-dump",
    }
}
