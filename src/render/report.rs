//! The machine-readable report (schema `mdiag/v1`, docs/json.md). These
//! types are the contract: they are built from the analysis, never the
//! internal structs serialized as they happen to be.

use jiff::Timestamp;
use serde::Serialize;

use crate::Style;
use crate::words::{detail_with_others, others};
use mdiag_core::analysis::{Diagnosis, Finding, Replicas, State, Step};
use mdiag_core::catalogue::{Lang, Severity, catalogue};
use mdiag_core::command::Command;
use mdiag_core::model::{Clock, ClockSource, Gap, ObjectRef, Origin, OriginKind};

pub const SCHEMA: &str = "mdiag/v1";

#[derive(Debug, Serialize)]
pub struct TraceReport {
    pub schema: &'static str,
    pub kind: &'static str,
    pub target: ReportTarget,
    pub healthy: bool,
    pub verdict: ReportVerdict,
    pub clock: ReportClock,
    pub source: ReportSource,
    pub replicas: Replicas,
    pub steps: Vec<ReportStep>,
    pub pods: Vec<ReportPod>,
    pub findings: Vec<ReportFinding>,
    pub gaps: Vec<Gap>,
}

#[derive(Debug, Serialize)]
pub struct ReportTarget {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The kubeconfig context it was read in, when one was named
    /// (`--context`; each row of a triage over several clusters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ReportVerdict {
    pub last_step: Step,
    pub missing: Option<Step>,
    /// The id of the finding the verdict leads with.
    pub lead: Option<String>,
    /// What users get now: serving, progressing, degraded, not-serving, unknown.
    pub state: State,
    /// What the state rests on: `endpoints`, `pods` or `workload-status`.
    pub basis: mdiag_core::analysis::Basis,
    /// The ready endpoints the state was decided on.
    pub serving: ReportServing,
    /// The command to run first, as it can be pasted (shell-quoted).
    pub next: Option<Command>,
    /// The same command as its words, for a program to run without a shell.
    pub next_argv: Option<Vec<String>>,
    pub summary: String,
}

#[derive(Debug, Serialize)]
pub struct ReportServing {
    /// Ready endpoints of the workload's Pods, every revision; null when
    /// they could not be read, or for a worker.
    pub ready_endpoints: Option<i32>,
    pub desired: i32,
    /// No Service selects the Pods: the state counts Ready Pods.
    pub worker: bool,
    /// Whether the Services and EndpointSlices were read: when false,
    /// whether a Pod serves is unknown (its `serving` is false for want
    /// of data, not because it does not serve).
    pub endpoints_read: bool,
    /// Newest first, the current revision leading.
    pub revisions: Vec<ReportRevision>,
    /// The workload's own status, when the state rests on it.
    pub status: Option<mdiag_core::analysis::StatusReading>,
}

#[derive(Debug, Serialize)]
pub struct ReportRevision {
    pub revision: Option<i64>,
    pub current: bool,
    /// Pods of the revision that are not terminating.
    pub pods: i32,
    pub ready: i32,
    pub ready_endpoints: Option<i32>,
    /// Its own desired replicas, when it runs in a Deployment of its own
    /// (a Knative Revision); null: the workload's `desired`.
    pub desired: Option<i32>,
}

#[derive(Debug, Serialize)]
pub struct ReportClock {
    pub now: Timestamp,
    pub source: ClockSource,
}

#[derive(Debug, Serialize)]
pub struct ReportSource {
    /// `live`, `snapshot` or `kubectl-dump`.
    pub kind: &'static str,
    pub location: String,
    pub context: Option<String>,
    pub server_version: Option<String>,
    pub captured_at: Option<Timestamp>,
    /// API requests a live read made.
    pub requests: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct ReportStep {
    pub step: Step,
    pub reached: bool,
    pub at: Option<Timestamp>,
    /// Seconds since the newest time of the steps before it; null when
    /// it has no time, or its time is older than one before it.
    pub gap_seconds: Option<f64>,
    /// The earlier step its time is older than (written for an earlier
    /// generation, e.g. before the declaration); null when in order.
    pub older_than: Option<Step>,
    /// `slowest` (waited longest since the step before) or `failing` (the
    /// missing step an error holds up); null for the others.
    pub mark: Option<mdiag_core::analysis::timeline::Mark>,
    /// The kind this step is read from that could not be read: whether it
    /// was reached is unknown. Null when it was read.
    pub unread: Option<String>,
    /// Restarts of the current Pods' containers while this step is not
    /// reached (a crash loop: they started and stopped); 0 otherwise.
    pub restarted: i32,
    /// In English whatever `--lang` says.
    pub note: String,
    /// The message `note` is made from and its arguments.
    pub note_id: &'static str,
    pub note_args: mdiag_core::catalogue::Args,
}

#[derive(Debug, Serialize)]
pub struct ReportMoments {
    pub stored: Option<Timestamp>,
    pub bound: Option<Timestamp>,
    pub started: Option<Timestamp>,
    pub ready: Option<Timestamp>,
}

#[derive(Debug, Serialize)]
pub struct ReportPod {
    pub name: String,
    pub uid: String,
    pub revision: Option<i64>,
    pub current: bool,
    /// A StatefulSet's or DaemonSet's Pod its update strategy keeps on an
    /// older revision on purpose (below the partition, or OnDelete).
    pub held: bool,
    pub terminating: bool,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub moments: ReportMoments,
    pub serving: bool,
    pub last_step: Step,
    pub restarts: i32,
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ReportEvidence {
    pub object: String,
    pub field: String,
    pub value: String,
    pub at: Option<Timestamp>,
    /// Only on log evidence (`field` is `log of CONTAINER (previous|current)`):
    /// the log's last lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<ReportLog>,
    /// When `field` is in mdiag's own words (`log of server (previous)`):
    /// the message it is made from, `{id, args}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_message: Option<mdiag_core::catalogue::Message>,
    /// When `value` is in mdiag's own words (`running, not ready`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_message: Option<mdiag_core::catalogue::Message>,
}

/// The last lines of a container log the snapshot (or `trace --logs`) holds.
#[derive(Debug, Serialize)]
pub struct ReportLog {
    pub container: String,
    /// The run before the current one (`kubectl logs --previous`).
    pub previous: bool,
    /// Non-empty lines the held log has.
    pub total_lines: usize,
    /// The held log was cut to the capture's size cap.
    pub truncated: bool,
    /// The last non-empty lines (at most 5), oldest first, as written.
    pub lines: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ReportFinding {
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub subject: ObjectRef,
    pub step: Step,
    /// In English whatever `--lang` says, with how many other Pods share it.
    pub detail: String,
    /// The message `detail` is made from and its arguments, for tools that
    /// word it themselves (`messages.yaml` holds the templates).
    pub detail_id: &'static str,
    pub detail_args: mdiag_core::catalogue::Args,
    /// Other Pods with the same finding (0 when it is about one object).
    pub others: usize,
    pub evidence: Vec<ReportEvidence>,
    pub cause: String,
    /// Read-only commands, shell-quoted.
    pub check: Vec<Command>,
    /// The same commands as their words.
    pub check_argv: Vec<Vec<String>>,
    pub fix: String,
    pub verify: String,
}

/// Extra facts about the run that are not analysis.
pub struct RunInfo<'a> {
    pub origin: &'a Origin,
    pub clock: Clock,
    pub requests: Option<u32>,
}

pub fn trace_report(d: &Diagnosis, run: &RunInfo, lang: Lang) -> TraceReport {
    let style = Style::plain(lang, run.clock.now);
    let timeline = mdiag_core::analysis::timeline::timeline(d);
    let steps = d
        .steps
        .iter()
        .zip(&timeline)
        .map(|(s, t)| ReportStep {
            step: s.step,
            reached: s.reached,
            at: s.at,
            gap_seconds: t.gap_ms.map(|g| g as f64 / 1000.0),
            older_than: t.older_than,
            mark: t.mark,
            unread: s.unread.clone(),
            restarted: s.restarted,
            note: s.note.en(),
            note_id: s.note.id,
            note_args: s.note.args.clone(),
        })
        .collect();
    TraceReport {
        schema: SCHEMA,
        kind: "Trace",
        target: ReportTarget {
            kind: d.target.kind.clone(),
            namespace: d.target.namespace.clone(),
            name: d.target.name.clone(),
            uid: d.target.uid.clone(),
            context: d.target.context.clone(),
        },
        healthy: d.healthy,
        verdict: ReportVerdict {
            last_step: d.verdict.last_step,
            missing: d.verdict.missing,
            lead: d.lead().map(|f| f.id.to_string()),
            state: d.verdict.state,
            basis: d.verdict.serving.basis,
            serving: report_serving(d),
            next: d.verdict.next.clone(),
            next_argv: d.verdict.next.as_ref().map(|c| c.argv().to_vec()),
            summary: summary(d, &style),
        },
        clock: ReportClock {
            now: run.clock.now,
            source: run.clock.source,
        },
        source: ReportSource {
            kind: match run.origin.kind {
                OriginKind::Live => "live",
                OriginKind::SnapshotFile => "snapshot",
                OriginKind::KubectlDump => "kubectl-dump",
            },
            location: run.origin.location.clone(),
            context: run.origin.context.clone(),
            server_version: run.origin.server_version.clone(),
            captured_at: run.origin.captured_at,
            requests: run.requests,
        },
        replicas: d.replicas,
        steps,
        pods: d
            .pods
            .iter()
            .map(|p| ReportPod {
                name: p.name.clone(),
                uid: p.uid.clone(),
                revision: p.revision,
                current: p.current,
                held: p.held,
                terminating: p.terminating,
                node: p.node.clone(),
                phase: p.phase.clone(),
                moments: ReportMoments {
                    stored: p.moments.stored.at,
                    bound: p.moments.bound.at,
                    started: p.moments.started.at,
                    ready: p.moments.ready.at,
                },
                serving: p.serving,
                last_step: p.last_step,
                restarts: p.restarts,
                reason: p.state_reason.clone(),
            })
            .collect(),
        findings: d.findings.iter().map(|f| report_finding(f, lang)).collect(),
        gaps: d.gaps.clone(),
    }
}

pub fn report_finding(f: &Finding, lang: Lang) -> ReportFinding {
    let entry = catalogue().get(f.id);
    let text = |pick: fn(&mdiag_core::catalogue::Entry) -> &mdiag_core::catalogue::Text| {
        entry
            .map(|e| pick(e).get(lang).to_string())
            .unwrap_or_default()
    };
    let check = entry.map(|e| e.checks_for(&f.vars)).unwrap_or_default();
    ReportFinding {
        id: f.id.to_string(),
        severity: f.severity,
        title: text(|e| &e.title),
        subject: f.subject.clone(),
        step: f.step,
        detail: detail_with_others(f, Lang::En),
        detail_id: f.detail.id,
        detail_args: f.detail.args.clone(),
        others: others(f),
        evidence: f
            .evidence
            .iter()
            .map(|e| ReportEvidence {
                object: e.object.clone(),
                field: e.field.clone(),
                value: e.value.clone(),
                at: e.at,
                log: e.log.as_ref().map(|l| ReportLog {
                    container: l.container.clone(),
                    previous: l.previous,
                    total_lines: l.total_lines,
                    truncated: l.truncated,
                    lines: l.lines.clone(),
                }),
                field_message: e.field_said.clone(),
                value_message: e.said.clone(),
            })
            .collect(),
        cause: text(|e| &e.cause),
        check: check.clone(),
        check_argv: check.iter().map(|c| c.argv().to_vec()).collect(),
        fix: text(|e| &e.fix),
        verify: text(|e| &e.verify),
    }
}

/// The one-line verdict, in the user's language: the headline.
pub fn summary(d: &Diagnosis, style: &Style) -> String {
    super::headline::text(d, style.lang)
}

fn report_serving(d: &Diagnosis) -> ReportServing {
    let s = &d.verdict.serving;
    let endpoints_known = s.ready_endpoints.is_some();
    ReportServing {
        ready_endpoints: s.ready_endpoints,
        desired: s.desired,
        worker: s.worker,
        endpoints_read: !d.serving_unread(),
        status: s.status.clone(),
        revisions: d
            .revisions
            .iter()
            .map(|r| ReportRevision {
                revision: r.revision,
                current: r.current,
                pods: r.pods,
                ready: r.ready,
                ready_endpoints: endpoints_known.then_some(r.serving),
                desired: r.desired,
            })
            .collect(),
    }
}
