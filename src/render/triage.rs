//! The triage views: one line per workload for people (a comfy-table), the
//! versioned list of trace reports for machines.

use comfy_table::presets::NOTHING;
use comfy_table::{Cell, Table};
use serde::Serialize;

use super::Style;
use super::report::{ReportClock, RunInfo, SCHEMA, TraceReport, trace_report};
use crate::analysis::{Diagnosis, format_duration};
use crate::catalogue::Lang;
use crate::model::{Gap, TargetKind};

#[derive(Debug, Serialize)]
pub struct TriageReport {
    pub schema: &'static str,
    pub kind: &'static str,
    pub clock: ReportClock,
    /// Workloads looked at, and how many of them are healthy.
    pub total: usize,
    pub healthy: usize,
    /// Every workload, worst first, each as `trace -o json` reports it.
    pub items: Vec<TraceReport>,
    /// Everything that could not be read (a namespace you may not list,
    /// Nodes...), whether or not a workload's chain needed it.
    pub gaps: Vec<Gap>,
}

/// The report, with the gaps of the whole read (also those no item carries).
pub fn report_with_gaps(
    items: &[Diagnosis],
    gaps: &[Gap],
    run: &RunInfo,
    lang: Lang,
) -> TriageReport {
    TriageReport {
        schema: SCHEMA,
        kind: "Triage",
        clock: ReportClock {
            now: run.clock.now,
            source: run.clock.source,
        },
        total: items.len(),
        healthy: items.iter().filter(|d| d.healthy).count(),
        items: items.iter().map(|d| trace_report(d, run, lang)).collect(),
        gaps: gaps.to_vec(),
    }
}

/// The table, worst first; healthy workloads folded into a count unless
/// `all`; then what could not be read.
pub fn table(items: &[Diagnosis], gaps: &[Gap], all: bool, style: &Style) -> String {
    let mut table = Table::new();
    table.load_style(NOTHING);
    table.set_header([
        "NAMESPACE",
        "WORKLOAD",
        "STATE",
        "SERVING",
        "STEP",
        "LEADING FINDING",
        "FOR",
    ]);
    let shown: Vec<&Diagnosis> = items.iter().filter(|d| all || !d.healthy).collect();
    for d in &shown {
        let kind = TargetKind::from_name(&d.target.kind).map_or("deploy", TargetKind::short);
        let step = match d.verdict.missing {
            None => d.verdict.last_step.as_str().to_string(),
            Some(m) => format!("{} → {}", d.verdict.last_step.as_str(), m.as_str()),
        };
        // Plain text in cells: escape codes would upset the column widths.
        let lead = match d.lead() {
            Some(f) => format!("{} ({})", f.id, f.severity.as_str()),
            None if d.healthy => "healthy".to_string(),
            None => "(no cause in the evidence)".to_string(),
        };
        let since = if d.healthy {
            String::new()
        } else {
            d.last_progress()
                .map(|t| format_duration((d.now.as_second() - t.as_second()).max(0)))
                .unwrap_or_default()
        };
        // What users get: ready endpoints of every revision (a worker: Ready
        // Pods; unread: unknown, not 0).
        let s = &d.verdict.serving;
        let serving = match s.ready_endpoints {
            _ if s.worker => format!(
                "{}/{} ready",
                d.revisions.iter().map(|r| r.ready).sum::<i32>(),
                s.desired
            ),
            Some(n) => format!("{n}/{}", s.desired),
            None => format!("?/{}", s.desired),
        };
        table.add_row([
            Cell::new(&d.target.namespace),
            Cell::new(format!("{kind}/{}", d.target.name)),
            Cell::new(super::headline::word(d, style.lang)),
            Cell::new(serving),
            Cell::new(step),
            Cell::new(lead),
            Cell::new(since),
        ]);
    }
    let mut out = String::new();
    if !shown.is_empty() {
        out.push_str(&table.to_string());
        out.push('\n');
    }
    let healthy = items.iter().filter(|d| d.healthy).count();
    let everything_healthy = !items.is_empty() && healthy == items.len();
    if !all && healthy > 0 && !everything_healthy {
        out.push_str(&style.dim(&format!(
            "{} not shown (--all shows {})\n",
            count(healthy, "healthy workload"),
            if healthy == 1 { "it" } else { "them" }
        )));
    }
    if let Some(worst) = items.iter().find(|d| !d.healthy) {
        let kind = match TargetKind::from_name(&worst.target.kind) {
            Some(TargetKind::ModelService) => String::new(),
            Some(k) => format!("{}/", k.short()),
            None => "deploy/".into(),
        };
        out.push_str(&format!(
            "{} {} trace {kind}{} -n {}\n",
            style.dim("next:"),
            crate::catalogue::program(),
            worst.target.name,
            worst.target.namespace
        ));
    } else if items.is_empty() {
        out.push_str("no workloads\n");
    } else {
        let what = match items.len() {
            1 => "the one workload is healthy".to_string(),
            n => format!("all {n} workloads are healthy"),
        };
        let hint = match (all, items.len()) {
            (true, _) => "",
            (false, 1) => " (--all lists it)",
            (false, _) => " (--all lists them)",
        };
        out.push_str(&style.good(&format!("{what}{hint}\n")));
    }
    out.push_str(&super::human::gap_lines(gaps, style));
    out
}

/// `1 healthy workload`, `2 healthy workloads`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
