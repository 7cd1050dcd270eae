//! The triage views: one line per workload for people (a comfy-table), the
//! versioned list of trace reports for machines.

use comfy_table::presets::NOTHING;
use comfy_table::{Cell, Table};
use serde::Serialize;

use super::Style;
use super::report::{
    ReportClock, ReportFinding, RunInfo, SCHEMA, TraceReport, report_finding, trace_report,
};
use mdiag_core::analysis::outside::Outside;
use mdiag_core::analysis::triage::{Row, Triage};
use mdiag_core::analysis::{Diagnosis, State, format_duration};
use mdiag_core::catalogue::{Arg, Lang, Message, Severity};
use mdiag_core::command::Command;
use mdiag_core::model::Gap;

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
    /// What fails outside every workload (a Service with no ready endpoint,
    /// an HPA whose target is missing, a PDB allowing no disruption), worst
    /// first.
    pub outside: Vec<OutsideReport>,
    /// Everything that could not be read (a namespace you may not list,
    /// Nodes...), whether or not a workload's chain needed it.
    pub gaps: Vec<Gap>,
}

/// One object outside every workload.
#[derive(Debug, Serialize)]
pub struct OutsideReport {
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// `not-serving` for a Service with no ready endpoint; null for what
    /// serves nobody itself (an HPA, a PDB).
    pub state: Option<State>,
    pub findings: Vec<ReportFinding>,
    pub gaps: Vec<Gap>,
}

/// The report, with the gaps of the whole read (also those no item carries).
pub fn report_with_gaps(t: &Triage, gaps: &[Gap], run: &RunInfo, lang: Lang) -> TriageReport {
    TriageReport {
        schema: SCHEMA,
        kind: "Triage",
        clock: ReportClock {
            now: run.clock.now,
            source: run.clock.source,
        },
        total: t.items.len(),
        healthy: t.items.iter().filter(|d| d.healthy).count(),
        items: t.items.iter().map(|d| trace_report(d, run, lang)).collect(),
        outside: t
            .outside
            .iter()
            .map(|o| OutsideReport {
                kind: o.kind,
                namespace: o.namespace.clone(),
                name: o.name.clone(),
                uid: o.uid.clone(),
                state: o.state,
                findings: o.findings.iter().map(|f| report_finding(f, lang)).collect(),
                gaps: o.gaps.clone(),
            })
            .collect(),
        gaps: gaps.to_vec(),
    }
}

/// How a target is named on the command line: `NAME` for a ModelService,
/// `deploy/NAME`, `pod/NAME`...
pub fn target_arg(kind: &str, name: &str) -> String {
    match kind {
        "ModelService" => name.to_string(),
        other => format!("{}/{name}", short_kind(other)),
    }
}

/// kubectl's short name of a kind, as the WORKLOAD column shows it.
fn short_kind(kind: &str) -> &str {
    match kind {
        "ModelService" => "msvc",
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "ReplicaSet" => "rs",
        "Pod" => "pod",
        "Service" => "svc",
        "HorizontalPodAutoscaler" => "hpa",
        "PodDisruptionBudget" => "pdb",
        other => other,
    }
}

/// The triage table of `cells`; `narrow` stacks the step's two ends and
/// the finding's severity under its id. Cells are never wrapped by width:
/// comfy-table would cut names and ids anywhere.
fn rows_table(cells: &[[String; 7]], narrow: bool, lang: Lang) -> String {
    let mut table = Table::new();
    table.load_style(NOTHING);
    table.set_header(
        [
            "triage.col_namespace",
            "triage.col_workload",
            "triage.col_state",
            "triage.col_serving",
            "triage.col_step",
            "triage.col_lead",
            "triage.col_for",
        ]
        .map(|id| Message::new(id).render(lang)),
    );
    for row in cells {
        let mut row = row.clone();
        if narrow {
            row[4] = row[4].replacen(" → ", " →\n", 1);
            row[5] = match row[5].find(" (").or_else(|| row[5].find('（')) {
                Some(at) => format!("{}\n{}", &row[5][..at], row[5][at..].trim_start()),
                None => row[5].clone(),
            };
        }
        table.add_row(row.map(Cell::new));
    }
    table.to_string()
}

/// The table, worst first; healthy workloads folded into a count unless
/// `all`; a count line; then what could not be read. The table fits
/// `style.width`: a cell too long for its column wraps inside it.
pub fn table(t: &Triage, gaps: &[Gap], all: bool, style: &Style) -> String {
    let rows = t.rows();
    let cells: Vec<[String; 7]> = rows
        .iter()
        .filter_map(|row| match row {
            Row::Workload(d) if all || !d.healthy => Some(workload_cells(d, style)),
            Row::Workload(_) => None,
            Row::Outside(o) => Some(outside_cells(o, style)),
        })
        .collect();
    let shown = cells.len();
    // One line per workload when that fits the width. Otherwise the step's
    // ends and the finding's severity go on lines of their own; names,
    // states and finding ids are what a reader scans for and pastes, so
    // they are never split, even if the table then passes the width.
    let one_line = rows_table(&cells, false, style.lang);
    let fits = one_line
        .lines()
        .all(|l| super::layout::width(l) <= style.width);
    let rendered = if fits {
        one_line
    } else {
        rows_table(&cells, true, style.lang)
    };
    let items = &t.items;
    let mut out = String::new();
    if shown > 0 {
        out.push_str(&rendered);
        out.push('\n');
    }
    let healthy = items.iter().filter(|d| d.healthy).count();
    let everything_healthy = t.outside.is_empty()
        && healthy == items.len()
        && (!items.is_empty() || t.checked.total() > 0);
    if !all && healthy > 0 && !everything_healthy {
        let hidden = Message::new("triage.hidden").arg("n", healthy);
        out.push_str(&style.dim(&format!("{}\n", hidden.render(style.lang))));
    }
    if !everything_healthy {
        for line in super::layout::wrap(&count_line(t, style.lang), style.width, "", "  ") {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if let Some(worst) = rows.iter().find(|r| match r {
        Row::Workload(d) => !d.healthy,
        Row::Outside(_) => true,
    }) {
        let (kind, name, ns) = match worst {
            Row::Workload(d) => (d.target.kind.as_str(), &d.target.name, &d.target.namespace),
            Row::Outside(o) => (o.kind, &o.name, &o.namespace),
        };
        let command = match worst {
            // Traced the way it was read: a file again with `--snapshot`
            // (the lead finding's vars say which).
            Row::Workload(d) => mdiag_core::catalogue::as_run(
                Command::new(["mdiag", "trace", &target_arg(kind, name), "-n", ns]),
                &d.replay.iter().cloned().collect(),
            ),
            // Nothing to trace: the lead finding's own first check.
            Row::Outside(o) => o
                .lead()
                .and_then(|f| {
                    mdiag_core::catalogue::catalogue()
                        .get(f.id)
                        .and_then(|e| e.checks_for(&f.vars).into_iter().next())
                })
                .unwrap_or_else(|| {
                    Command::new(["kubectl", "-n", ns, "describe", short_kind(kind), name])
                }),
        };
        // `next: `; a full-width colon has its space in it (`下一步：`).
        let next = style.labels().next;
        let gap = if next.ends_with('：') { "" } else { " " };
        let label = format!("{}{gap}", style.dim(next));
        for line in super::layout::command(&label, &command, style.width, 2, &|c| c.to_string()) {
            out.push_str(&line);
            out.push('\n');
        }
    } else if items.is_empty() && t.checked.total() == 0 {
        out.push_str(&Message::new("triage.no_workloads").render(style.lang));
        out.push('\n');
    } else if items.is_empty() {
        // Only objects outside any workload, none failing: say what was
        // checked, so "nothing failing" is not read as "nothing there".
        let c = t.checked;
        let mut parts: Vec<Arg> = Vec::new();
        for (n, id) in [
            (c.services, "triage.checked_services"),
            (c.hpas, "triage.checked_hpas"),
            (c.pdbs, "triage.checked_pdbs"),
        ] {
            if n > 0 {
                parts.push(Message::new(id).arg("n", n).into());
            }
        }
        let line =
            Message::new("triage.checked_healthy").arg("parts", Arg::list(parts, "sep.comma"));
        out.push_str(&style.good(&format!("{}\n", line.render(style.lang))));
    } else {
        let n = items.len();
        let what = match n {
            1 => Message::new("triage.one_healthy"),
            n => Message::new("triage.all_healthy").arg("n", n),
        };
        let hint = match all {
            true => String::new(),
            false => Message::new("triage.all_lists")
                .arg("n", n)
                .render(style.lang),
        };
        out.push_str(&style.good(&format!("{}{hint}\n", what.render(style.lang))));
    }
    out.push_str(&crate::words::gap_lines(gaps, style));
    out
}

fn workload_cells(d: &Diagnosis, style: &Style) -> [String; 7] {
    let lang = style.lang;
    let step_name = |s| crate::words::step_name(s, lang);
    let step = match d.verdict.missing {
        None => step_name(d.verdict.last_step),
        Some(m) => format!("{} → {}", step_name(d.verdict.last_step), step_name(m)),
    };
    // Plain text in cells: escape codes would upset the column widths.
    let lead = match d.lead() {
        Some(f) => lead_cell(f, lang),
        None if d.healthy => Message::new("triage.healthy").render(lang),
        None if !d.verdict.serving.unread.is_empty() => {
            let unread: Vec<&str> = d
                .verdict
                .serving
                .unread
                .iter()
                .map(|(r, _)| r.as_str())
                .collect();
            Message::new("triage.not_read")
                .arg("resources", Arg::list(unread, "sep.comma"))
                .render(lang)
        }
        None => Message::new("triage.no_cause").render(lang),
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
        // By the workload's status: its available replicas.
        _ if s.status.is_some() => Message::new("triage.available")
            .arg("available", s.status.as_ref().map_or(0, |st| st.available))
            .arg("desired", s.desired)
            .render(lang),
        _ if s.counts_ready() => Message::new("triage.ready")
            .arg("ready", d.revisions.iter().map(|r| r.ready).sum::<i32>())
            .arg("desired", s.desired)
            .render(lang),
        Some(n) => format!("{n}/{}", s.desired),
        None => format!("?/{}", s.desired),
    };
    [
        d.target.namespace.clone(),
        format!("{}/{}", short_kind(&d.target.kind), d.target.name),
        super::headline::word(d, style.lang),
        serving,
        step,
        lead,
        since,
    ]
}

fn outside_cells(o: &Outside, style: &Style) -> [String; 7] {
    let state = match o.state {
        Some(State::NotServing) => Message::new("headline.word_not_serving").render(style.lang),
        _ => "-".to_string(),
    };
    let serving = if o.state == Some(State::NotServing) {
        Message::new("triage.none_ready").render(style.lang)
    } else {
        "-".to_string()
    };
    let lead = o
        .lead()
        .map(|f| lead_cell(f, style.lang))
        .unwrap_or_default();
    [
        o.namespace.clone(),
        format!("{}/{}", short_kind(o.kind), o.name),
        state,
        serving,
        "-".to_string(),
        lead,
        String::new(),
    ]
}

/// The LEADING FINDING cell: `crash-loop (error)`.
fn lead_cell(f: &mdiag_core::analysis::Finding, lang: Lang) -> String {
    Message::new("triage.lead")
        .arg("id", f.id.as_str())
        .arg("severity", crate::words::severity_word(f.severity, lang))
        .render(lang)
}

/// `12 workloads: 2 with errors, 1 with warnings, 9 healthy`: every row by
/// the worst thing about it, as its exit code would rank it.
pub fn count_line(t: &Triage, lang: Lang) -> String {
    #[derive(PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
    enum Bucket {
        Errors,
        Warnings,
        NotServing,
        Unknown,
        Progressing,
        Notes,
        Healthy,
    }
    let bucket = |row: Row| {
        let worst = match row {
            Row::Workload(d) => d.findings.iter().map(|f| f.severity).min(),
            Row::Outside(o) => Some(o.severity()),
        };
        match (row, worst) {
            (Row::Workload(d), _) if d.healthy => Bucket::Healthy,
            (_, Some(Severity::Error)) => Bucket::Errors,
            (_, Some(Severity::Warning)) => Bucket::Warnings,
            (Row::Outside(_), _) => Bucket::Notes,
            (Row::Workload(d), _) => match d.verdict.state {
                State::NotServing | State::Degraded => Bucket::NotServing,
                State::Unknown => Bucket::Unknown,
                State::Progressing | State::Serving => Bucket::Progressing,
            },
        }
    };
    let mut counts = std::collections::BTreeMap::new();
    for row in t.rows() {
        *counts.entry(bucket(row)).or_insert(0usize) += 1;
    }
    let parts: Vec<Arg> = counts
        .into_iter()
        .map(|(b, n)| {
            let id = match b {
                Bucket::Errors => "triage.count_errors",
                Bucket::Warnings => "triage.count_warnings",
                Bucket::NotServing => "triage.count_not_serving",
                Bucket::Unknown => "triage.count_unknown",
                Bucket::Progressing => "triage.count_progressing",
                Bucket::Notes => "triage.count_notes",
                Bucket::Healthy => "triage.count_healthy",
            };
            Message::new(id).arg("n", n).into()
        })
        .collect();
    let what = match (t.items.len(), t.outside.len()) {
        (w, 0) => Message::new("triage.workloads").arg("n", w),
        (0, n) => Message::new("triage.outside").arg("n", n),
        (w, n) => Message::new("triage.workloads_and_outside")
            .arg("n", w)
            .arg("outside", n),
    };
    let mut line = Message::new("triage.count_line")
        .arg("what", what)
        .arg("parts", Arg::list(parts, "sep.comma"))
        .render(lang);
    line.push('\n');
    line
}
