//! The triage views: one line per workload for people, fitted to the
//! width as `kubectl get` fits its columns, and the versioned list of
//! trace reports for machines.

use serde::Serialize;

use super::report::{
    ReportClock, ReportFinding, RunInfo, SCHEMA, TraceReport, report_finding, trace_report,
};
use super::{Style, layout};
use mdiag_core::analysis::outside::Outside;
use mdiag_core::analysis::triage::{Row, Triage};
use mdiag_core::analysis::{Diagnosis, State, format_duration};
use mdiag_core::catalogue::{Arg, Lang, Message, Severity};
use mdiag_core::command::Command;
use mdiag_core::model::Gap;

/// `Items` is the list of trace reports: built ([`report_with_gaps`], for
/// the views that read it back) or [`TracedItems`], made one at a time as
/// the report is written ([`streamed_report`]), so a triage of thousands of
/// workloads never holds every item's report at once.
#[derive(Debug, Serialize)]
pub struct TriageReport<Items = Vec<TraceReport>> {
    pub schema: &'static str,
    pub kind: &'static str,
    pub clock: ReportClock,
    /// Workloads looked at, and how many of them are healthy.
    pub total: usize,
    pub healthy: usize,
    /// Every workload, worst first, each as `trace -o json` reports it.
    pub items: Items,
    /// What fails outside every workload (a Service with no ready endpoint,
    /// an HPA whose target is missing, a PDB allowing no disruption), worst
    /// first.
    pub outside: Vec<OutsideReport>,
    /// Everything that could not be read (a namespace you may not list,
    /// Nodes...), whether or not a workload's chain needed it. Several
    /// clusters: each names the `contexts` it was seen in, and a cluster
    /// of which nothing could be read is a gap of resource `*`.
    pub gaps: Vec<Gap>,
    /// Several clusters (`--context a,b`, `--all-contexts`): each one, in
    /// the order named, and whether it could be read; absent for one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<ContextReport>,
}

/// One cluster of a triage over several.
#[derive(Debug, Serialize)]
pub struct ContextReport {
    pub context: String,
    /// Whether it could be read; when not, `reason` says why.
    pub read: bool,
    pub reason: Option<String>,
    /// The server URL, when it was read.
    pub server: Option<String>,
    pub server_version: Option<String>,
    /// API requests the read of this cluster made.
    pub requests: Option<u32>,
    /// Rows of this cluster: workloads, and objects outside them.
    pub workloads: usize,
    pub outside: usize,
}

/// What a report of several clusters says of each.
pub struct ClusterInfo<'a> {
    pub context: &'a str,
    pub run: RunInfo<'a>,
    /// Why nothing could be read from it, when nothing could.
    pub unread: Option<&'a str>,
}

/// One object outside every workload.
#[derive(Debug, Serialize)]
pub struct OutsideReport {
    /// The kubeconfig context it was read in, as a workload's target says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
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
    streamed_report(t, gaps, run, lang).built()
}

/// [`report_with_gaps`] with its items made as they are written.
pub fn streamed_report<'a>(
    t: &'a Triage,
    gaps: &[Gap],
    run: &'a RunInfo<'a>,
    lang: Lang,
) -> TriageReport<TracedItems<'a>> {
    report_of(t, gaps, run, RunOf::One(run), lang)
}

/// Every workload's trace report, made when serialized and dropped once
/// written.
pub struct TracedItems<'a> {
    diagnoses: &'a [Diagnosis],
    run_of: RunOf<'a>,
    lang: Lang,
}

/// Which run's source an item reports: the one read, or (several
/// clusters) the cluster its target was read in, else `run`.
#[derive(Clone, Copy)]
enum RunOf<'a> {
    One(&'a RunInfo<'a>),
    Clusters(&'a RunInfo<'a>, &'a [ClusterInfo<'a>]),
}

impl<'a> RunOf<'a> {
    fn of(self, d: &Diagnosis) -> &'a RunInfo<'a> {
        match self {
            RunOf::One(run) => run,
            RunOf::Clusters(run, clusters) => clusters
                .iter()
                .find(|c| d.target.context.as_deref() == Some(c.context))
                .map_or(run, |c| &c.run),
        }
    }
}

impl TracedItems<'_> {
    fn each(&self) -> impl Iterator<Item = TraceReport> + '_ {
        self.diagnoses
            .iter()
            .map(|d| trace_report(d, self.run_of.of(d), self.lang))
    }
}

impl std::fmt::Debug for TracedItems<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TracedItems({} diagnoses)", self.diagnoses.len())
    }
}

impl Serialize for TracedItems<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.each())
    }
}

impl TriageReport<TracedItems<'_>> {
    /// The same report with every item made (for the views that read
    /// items back: HTML, a snapshot summary, `mdiag mcp`).
    pub fn built(self) -> TriageReport {
        let items = self.items.each().collect();
        TriageReport {
            schema: self.schema,
            kind: self.kind,
            clock: self.clock,
            total: self.total,
            healthy: self.healthy,
            items,
            outside: self.outside,
            gaps: self.gaps,
            contexts: self.contexts,
        }
    }
}

/// The report, each item traced with the run `run_of` gives it.
fn report_of<'a>(
    t: &'a Triage,
    gaps: &[Gap],
    run: &RunInfo,
    run_of: RunOf<'a>,
    lang: Lang,
) -> TriageReport<TracedItems<'a>> {
    TriageReport {
        schema: SCHEMA,
        kind: "Triage",
        clock: ReportClock {
            now: run.clock.now,
            source: run.clock.source,
        },
        total: t.items.len(),
        healthy: t.items.iter().filter(|d| d.healthy).count(),
        items: TracedItems {
            diagnoses: &t.items,
            run_of,
            lang,
        },
        outside: t
            .outside
            .iter()
            .map(|o| OutsideReport {
                context: o.context.clone(),
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
        contexts: Vec::new(),
    }
}

/// [`report_with_gaps`] of a triage over several clusters: each row's
/// `source` is its own cluster's, and `contexts` lists every cluster.
pub fn clusters_report(
    t: &Triage,
    gaps: &[Gap],
    run: &RunInfo,
    clusters: &[ClusterInfo],
    lang: Lang,
) -> TriageReport {
    streamed_clusters_report(t, gaps, run, clusters, lang).built()
}

/// [`clusters_report`] with its items made as they are written.
pub fn streamed_clusters_report<'a>(
    t: &'a Triage,
    gaps: &[Gap],
    run: &'a RunInfo<'a>,
    clusters: &'a [ClusterInfo<'a>],
    lang: Lang,
) -> TriageReport<TracedItems<'a>> {
    let mut report = report_of(t, gaps, run, RunOf::Clusters(run, clusters), lang);
    report.contexts = clusters
        .iter()
        .map(|c| {
            let mine = |context: &Option<String>| context.as_deref() == Some(c.context);
            ContextReport {
                context: c.context.to_string(),
                read: c.unread.is_none(),
                reason: c.unread.map(str::to_string),
                server: c.unread.is_none().then(|| c.run.origin.location.clone()),
                server_version: c.run.origin.server_version.clone(),
                requests: c.run.requests,
                workloads: t.items.iter().filter(|d| mine(&d.target.context)).count(),
                outside: t.outside.iter().filter(|o| mine(&o.context)).count(),
            }
        })
        .collect();
    report
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
        "InferenceService" => "isvc",
        "Rollout" => "rollout",
        "LeaderWorkerSet" => "lws",
        "KnativeService" => "ksvc",
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "ReplicaSet" => "rs",
        "Job" => "job",
        "CronJob" => "cj",
        "Pod" => "pod",
        "Service" => "svc",
        "HorizontalPodAutoscaler" => "hpa",
        "PodDisruptionBudget" => "pdb",
        other => other,
    }
}

/// Spaces between two columns.
const GAP: usize = 2;

/// How many columns the table has.
const NCOLS: usize = 8;

/// The columns of the table, in the order they are printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Col {
    Context,
    Namespace,
    Workload,
    State,
    Ready,
    Step,
    Finding,
    Since,
}

const COLUMNS: [Col; NCOLS] = [
    Col::Context,
    Col::Namespace,
    Col::Workload,
    Col::State,
    Col::Ready,
    Col::Step,
    Col::Finding,
    Col::Since,
];

impl Col {
    fn at(self) -> usize {
        self as usize
    }

    fn header(self) -> &'static str {
        match self {
            Col::Context => "triage.col_context",
            Col::Namespace => "triage.col_namespace",
            Col::Workload => "triage.col_workload",
            Col::State => "triage.col_state",
            Col::Ready => "triage.col_ready",
            Col::Step => "triage.col_step",
            Col::Finding => "triage.col_lead",
            Col::Since => "triage.col_since",
        }
    }
}

/// One cell: the text measured, and the same text as printed (coloured
/// when the style is).
#[derive(Clone, Default)]
struct Cell {
    plain: String,
    painted: String,
}

impl Cell {
    fn text(text: impl Into<String>) -> Self {
        let plain = text.into();
        Cell {
            painted: plain.clone(),
            plain,
        }
    }
}

/// One row of the table: its cells in [`COLUMNS`]' order, whether its
/// finding cell is prose that may be shortened (an id never is), and what
/// `-v` prints under it.
struct TableRow {
    cells: [Cell; NCOLS],
    prose: bool,
    detail: Vec<String>,
    /// The contexts it stands for: one, or several when the same workload
    /// has the same state and finding in each.
    contexts: Vec<String>,
}

impl TableRow {
    /// What must be equal for rows of several clusters to be one: the
    /// workload, its state and count, and its finding.
    fn same_in_another_context(&self, other: &TableRow) -> bool {
        [
            Col::Namespace,
            Col::Workload,
            Col::State,
            Col::Ready,
            Col::Step,
            Col::Finding,
        ]
        .iter()
        .all(|c| self.cells[c.at()].plain == other.cells[c.at()].plain)
    }
}

/// Rows of several clusters, ranked: a row equal to one before it but for
/// its context joins that one, which then names every context and counts
/// them after its finding (`✘ image-pull-backoff ×3`): the same cause
/// seen in three clusters is read once.
fn merge_contexts(rows: Vec<TableRow>) -> Vec<TableRow> {
    let mut merged: Vec<TableRow> = Vec::with_capacity(rows.len());
    for row in rows {
        match merged.iter_mut().find(|m| m.same_in_another_context(&row)) {
            Some(same) => same.contexts.extend(row.contexts),
            None => merged.push(row),
        }
    }
    for row in &mut merged {
        let context = &mut row.cells[Col::Context.at()];
        *context = Cell::text(row.contexts.join(","));
        if row.contexts.len() > 1 {
            let times = format!(" ×{}", row.contexts.len());
            let finding = &mut row.cells[Col::Finding.at()];
            finding.plain.push_str(&times);
            finding.painted.push_str(&times);
        }
    }
    merged
}

/// Columns the prose of the finding column (a row's reason, never an id)
/// keeps before the state or the count is added beside it.
const PROSE_ROOM: usize = 24;

/// Which columns fit in `room`, and the width each takes: the workload
/// and its finding always, the namespace when the rows are in more than
/// one (else the count line names it, as `kubectl get -n` leaves it out);
/// then, each while it still fits, the state and the ready count (leaving
/// the finding column's prose [`PROSE_ROOM`]), the time since the last
/// step and the step (leaving it whole). A column no row fills (`-` is no
/// fill) is left out. The widths are the widest name or id of each
/// column: prose is what gives way, cut to the room left.
fn columns_shown(
    rows: &[TableRow],
    headers: &[String; NCOLS],
    (contexts, namespaces): (bool, bool),
    room: usize,
) -> ([bool; NCOLS], [usize; NCOLS]) {
    let mut widths = headers.each_ref().map(|h| layout::width(h));
    let mut filled = [false; NCOLS];
    let mut prose = 0;
    for row in rows {
        for (i, cell) in row.cells.iter().enumerate() {
            if !(row.prose && i == Col::Finding.at()) {
                widths[i] = widths[i].max(layout::width(&cell.plain));
            } else {
                prose = prose.max(layout::width(&cell.plain));
            }
            filled[i] |= !cell.plain.is_empty() && cell.plain != "-";
        }
    }
    // The state and the count leave the prose [`PROSE_ROOM`] at least;
    // the time and the step leave it whole.
    let finding = Col::Finding.at();
    let mut some = widths;
    some[finding] = some[finding].max(prose.min(PROSE_ROOM));
    let mut whole = widths;
    whole[finding] = whole[finding].max(prose);
    let mut shown = [false; NCOLS];
    shown[Col::Workload.at()] = true;
    shown[finding] = true;
    shown[Col::Namespace.at()] = namespaces;
    shown[Col::Context.at()] = contexts;
    for (col, with_prose) in [
        (Col::State, &some),
        (Col::Ready, &some),
        (Col::Since, &whole),
        (Col::Step, &whole),
    ] {
        if !filled[col.at()] {
            continue;
        }
        let mut with = shown;
        with[col.at()] = true;
        if line_width(&with, with_prose) <= room {
            shown = with;
        }
    }
    (shown, widths)
}

/// Columns a line of the `shown` columns takes.
fn line_width(shown: &[bool; NCOLS], widths: &[usize; NCOLS]) -> usize {
    let cols: Vec<usize> = (0..NCOLS)
        .filter(|i| shown[*i])
        .map(|i| widths[i])
        .collect();
    cols.iter().sum::<usize>() + GAP * cols.len().saturating_sub(1)
}

/// One line of the table: the shown cells, each padded to its column but
/// the last, and no space at the end.
fn table_line(cells: &[Cell; NCOLS], shown: &[bool; NCOLS], widths: &[usize; NCOLS]) -> String {
    let last = (0..NCOLS).rev().find(|i| shown[*i]).unwrap_or(0);
    let mut line = String::new();
    for i in (0..NCOLS).filter(|i| shown[*i]) {
        if i == last {
            line.push_str(&cells[i].painted);
        } else {
            line.push_str(&layout::pad(&cells[i].painted, widths[i]));
            line.push_str(&" ".repeat(GAP));
        }
    }
    line.trim_end().to_string()
}

/// The table of `rows`, fitted to the width like `kubectl get`: one line
/// a row with the columns that fit (see [`columns_shown`]); prose in the
/// finding column is cut to the room left, names and ids never. When the
/// workload, its namespace and the widest finding id do not fit side by
/// side, only those are shown, the finding last and as wide as its own
/// text, and a row whose finding still does not fit has it on a line of
/// its own under it. With `-v`, each row's lines under it.
fn rows_table(mut rows: Vec<TableRow>, names: (bool, bool), style: &Style) -> String {
    let headers = COLUMNS.map(|c| Message::new(c.header()).render(style.lang));
    let finding = Col::Finding.at();
    let (mut shown, mut widths) = columns_shown(&rows, &headers, names, style.width);
    let ragged = line_width(&shown, &widths) > style.width;
    if ragged {
        shown = [false; NCOLS];
        shown[Col::Context.at()] = names.0;
        shown[Col::Namespace.at()] = names.1;
        shown[Col::Workload.at()] = true;
    } else {
        // The room the other columns leave, for the prose.
        let room = style.width - line_width(&shown, &widths) + widths[finding];
        for row in rows.iter_mut().filter(|r| r.prose) {
            let cell = &mut row.cells[finding];
            if layout::width(&cell.plain) > room {
                *cell = Cell::text(layout::cut(&cell.plain, room));
            }
            widths[finding] = widths[finding].max(layout::width(&cell.plain));
        }
    }
    // Ragged: whether the finding's own text fits after the names.
    let after_names = |text: &str| {
        let mut w = widths;
        w[finding] = layout::width(text);
        let mut with = shown;
        with[finding] = true;
        ragged && line_width(&with, &w) <= style.width
    };
    let line = |cells: &[Cell; NCOLS], finding_too: bool| {
        let mut with = shown;
        with[finding] |= finding_too;
        table_line(cells, &with, &widths)
    };
    let mut out = String::new();
    let header_beside = !ragged || after_names(&headers[finding]);
    out.push_str(&line(&headers.map(Cell::text), header_beside));
    out.push('\n');
    for row in &rows {
        let cell = &row.cells[finding];
        let beside = !ragged || after_names(&cell.plain);
        out.push_str(&line(&row.cells, beside));
        out.push('\n');
        if !beside {
            // An id whole on its line; prose wrapped.
            if row.prose {
                for l in layout::wrap(&cell.plain, style.width, DETAIL, DETAIL_REST) {
                    out.push_str(&l);
                    out.push('\n');
                }
            } else {
                out.push_str(&format!("{DETAIL}{}\n", cell.painted));
            }
        }
        for l in &row.detail {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The triage: a count line (what was judged, by how bad), the table,
/// worst first (healthy workloads folded into a count unless `all`), the
/// command to run next, then what could not be read. Every line fits
/// `style.width` but a row whose namespace and name alone are wider (and
/// a command's word, as `layout::command` keeps it whole).
pub fn table(t: &Triage, gaps: &[Gap], all: bool, style: &Style) -> String {
    let rows = t.rows();
    // Several clusters: a CONTEXT column, and the same row in several once.
    let contexts = t.contexts.len() > 1;
    let unread_cluster = gaps.iter().any(Gap::is_cluster_unread);
    let table_rows: Vec<TableRow> = rows
        .iter()
        .filter_map(|row| match row {
            Row::Workload(d) if all || !d.healthy => Some(workload_row(d, style)),
            Row::Workload(_) => None,
            Row::Outside(o) => Some(outside_row(o, style)),
        })
        .collect();
    let table_rows = if contexts {
        merge_contexts(table_rows)
    } else {
        table_rows
    };
    let items = &t.items;
    let healthy = items.iter().filter(|d| d.healthy).count();
    // A cluster not read holds what is unknown: never "all healthy".
    let everything_healthy = t.outside.is_empty()
        && healthy == items.len()
        && (!items.is_empty() || t.checked.total() > 0)
        && !unread_cluster;
    // One namespace: the count line names it and the table leaves it out.
    let namespace = only_namespace(t);
    let mut out = String::new();
    // First what was judged: the count, or that nothing fails.
    let across = contexts.then(|| {
        let unread: usize = gaps
            .iter()
            .filter(|g| g.is_cluster_unread())
            .map(|g| g.contexts.len())
            .sum();
        (
            t.contexts.len() - unread.min(t.contexts.len()),
            t.contexts.len(),
        )
    });
    if items.is_empty() && t.outside.is_empty() && t.checked.total() == 0 {
        let none = match across {
            Some((read, n)) => {
                Message::new("triage.no_workloads_across").arg("contexts", contexts_read(read, n))
            }
            None => Message::new("triage.no_workloads"),
        };
        out.push_str(&none.render(style.lang));
        out.push('\n');
    } else if !everything_healthy {
        let count = count_line_across(t, namespace, across, style.lang);
        for line in layout::wrap(&count, style.width, "", "  ") {
            out.push_str(&line);
            out.push('\n');
        }
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
        for l in layout::wrap(&line.render(style.lang), style.width, "", "  ") {
            out.push_str(&style.good(&l));
            out.push('\n');
        }
    } else {
        let n = items.len();
        let what = match (n, namespace) {
            (1, None) => Message::new("triage.one_healthy"),
            (1, Some(ns)) => Message::new("triage.one_healthy_in").arg("namespace", ns),
            (n, None) => Message::new("triage.all_healthy").arg("n", n),
            (n, Some(ns)) => Message::new("triage.all_healthy_in")
                .arg("n", n)
                .arg("namespace", ns),
        };
        let hint = match all {
            true => String::new(),
            false => Message::new("triage.all_lists")
                .arg("n", n)
                .render(style.lang),
        };
        let line = format!("{}{hint}", what.render(style.lang));
        for l in layout::wrap(&line, style.width, "", "  ") {
            out.push_str(&style.good(&l));
            out.push('\n');
        }
    }
    if !table_rows.is_empty() {
        out.push_str(&rows_table(
            table_rows,
            (contexts, namespace.is_none()),
            style,
        ));
    }
    if !all && healthy > 0 && !everything_healthy {
        let hidden = Message::new("triage.hidden").arg("n", healthy);
        for l in layout::wrap(&hidden.render(style.lang), style.width, "", "  ") {
            out.push_str(&style.dim(&l));
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
        for line in layout::command(&label, &command, style.width, 2, &|c| c.to_string()) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str(&crate::words::gap_lines(gaps, style));
    out
}

/// What users get, as a count: ready endpoints of every revision, a
/// worker's Ready Pods, or the workload's available replicas, of those
/// desired; `?` when it was not read (unknown, not 0); a run's completed
/// Pods. The headline's sentence (`-v`) says which it is.
fn ready_count(d: &Diagnosis) -> String {
    let s = &d.verdict.serving;
    let desired = s.desired;
    let n = if let Some(n) = super::headline::completed(d) {
        n.to_string()
    } else if let Some(st) = &s.status {
        st.available.to_string()
    } else if s.counts_ready() {
        d.revisions.iter().map(|r| r.ready).sum::<i32>().to_string()
    } else {
        s.ready_endpoints.map_or("?".to_string(), |n| n.to_string())
    };
    format!("{n}/{desired}")
}

fn workload_row(d: &Diagnosis, style: &Style) -> TableRow {
    let lang = style.lang;
    let step_name = |s| crate::words::step_name(s, lang);
    let step = match d.verdict.missing {
        None => step_name(d.verdict.last_step),
        Some(m) => format!("{} → {}", step_name(d.verdict.last_step), step_name(m)),
    };
    let mut prose = false;
    let finding = match d.lead() {
        Some(f) => finding_cell(f, style),
        // Nothing wrong: nothing in the column, as kubectl leaves it.
        None if d.healthy => Cell::text("-"),
        None => {
            prose = true;
            let text = if d.verdict.serving.unread.is_empty() {
                Message::new("triage.no_cause").render(lang)
            } else {
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
            };
            Cell::text(text)
        }
    };
    let since = if d.healthy {
        String::new()
    } else {
        d.last_progress()
            .map(|t| format_duration((d.now.as_second() - t.as_second()).max(0)))
            .unwrap_or_default()
    };
    let ready = ready_count(d);
    let state = Cell {
        plain: super::headline::word(d, lang),
        painted: super::headline::painted_word(d, style),
    };
    TableRow {
        contexts: d.target.context.iter().cloned().collect(),
        cells: [
            Cell::text(d.target.context.clone().unwrap_or_default()),
            Cell::text(d.target.namespace.clone()),
            Cell::text(format!("{}/{}", short_kind(&d.target.kind), d.target.name)),
            state,
            Cell::text(ready),
            Cell::text(step),
            finding,
            Cell::text(since),
        ],
        prose,
        detail: if style.verbose {
            workload_detail(d, style)
        } else {
            Vec::new()
        },
    }
}

fn outside_row(o: &Outside, style: &Style) -> TableRow {
    let lang = style.lang;
    let state = match o.state {
        Some(State::NotServing) => {
            let word = Message::new("headline.word_not_serving").render(lang);
            Cell {
                painted: style.bad(&word),
                plain: word,
            }
        }
        _ => Cell::text("-"),
    };
    // A Service with no ready endpoint: none; what serves nobody: nothing.
    let ready = if o.state == Some(State::NotServing) {
        "0"
    } else {
        "-"
    };
    let finding = o
        .lead()
        .map(|f| finding_cell(f, style))
        .unwrap_or_else(|| Cell::text("-"));
    let detail = if style.verbose {
        let mut lines = Vec::new();
        for f in &o.findings {
            lines.extend(finding_lines(f, style));
        }
        lines
    } else {
        Vec::new()
    };
    TableRow {
        contexts: o.context.iter().cloned().collect(),
        cells: [
            Cell::text(o.context.clone().unwrap_or_default()),
            Cell::text(o.namespace.clone()),
            Cell::text(format!("{}/{}", short_kind(o.kind), o.name)),
            state,
            Cell::text(ready),
            Cell::text("-"),
            finding,
            Cell::text(""),
        ],
        prose: false,
        detail,
    }
}

/// The finding cell: the severity's mark and the id, coloured by the
/// severity: `✘ crash-loop`.
fn finding_cell(f: &mdiag_core::analysis::Finding, style: &Style) -> Cell {
    let plain = format!(
        "{} {}",
        crate::words::severity_mark(f.severity),
        f.id.as_str()
    );
    Cell {
        painted: style.severity(f.severity, &plain),
        plain,
    }
}

/// Indent of the lines `-v` prints under a row, and of their wrapped rest.
const DETAIL: &str = "    ";
const DETAIL_REST: &str = "      ";

/// What `-v` prints under a workload's row: where it stands (the
/// headline's sentence, with the step and the count), each finding, and
/// its Pods, one line for alike ones.
fn workload_detail(d: &Diagnosis, style: &Style) -> Vec<String> {
    let mut lines = layout::wrap(
        &super::headline::sentence(d, style.lang),
        style.width,
        DETAIL,
        DETAIL_REST,
    );
    for f in &d.findings {
        lines.extend(finding_lines(f, style));
    }
    for pod in super::human::pod_lines(d, style) {
        lines.extend(layout::wrap(&pod, style.width, DETAIL, DETAIL_REST));
    }
    lines
}

/// One finding under a row: its mark, severity, id and subject, then its
/// detail (the cluster's own words), whole, wrapped.
fn finding_lines(f: &mdiag_core::analysis::Finding, style: &Style) -> Vec<String> {
    let mark = crate::words::severity_mark(f.severity);
    let severity = crate::words::severity_word(f.severity, style.lang);
    let head = format!(
        "{} {}  {}",
        style.severity(f.severity, &format!("{mark} {severity}")),
        style.bold(f.id.as_str()),
        f.subject
    );
    let mut lines = layout::wrap(&head, style.width, DETAIL, DETAIL_REST);
    let detail = crate::words::detail_with_others(f, style.lang);
    lines.extend(layout::wrap(&detail, style.width, DETAIL_REST, DETAIL_REST));
    lines
}

/// The namespace every workload and every object outside them is in, when
/// they are all in one.
fn only_namespace(t: &Triage) -> Option<&str> {
    let mut all = t
        .items
        .iter()
        .map(|d| d.target.namespace.as_str())
        .chain(t.outside.iter().map(|o| o.namespace.as_str()));
    let first = all.next()?;
    all.all(|ns| ns == first).then_some(first)
}

/// `12 workloads: 2 with errors, 1 with warnings, 9 healthy`: every row by
/// the worst thing about it, as its exit code would rank it.
pub fn count_line(t: &Triage, lang: Lang) -> String {
    count_line_in(t, None, lang)
}

/// [`count_line`], naming the one namespace of every row when given:
/// `3 workloads in shop: ...`.
fn count_line_in(t: &Triage, namespace: Option<&str>, lang: Lang) -> String {
    count_line_across(t, namespace, None, lang)
}

/// `2 contexts`, or `1 of 2 contexts` when one could not be read.
fn contexts_read(read: usize, n: usize) -> Message {
    match read == n {
        true => Message::new("triage.contexts_all").arg("n", n),
        false => Message::new("triage.contexts_some")
            .arg("read", read)
            .arg("n", n),
    }
}

/// [`count_line_in`], naming the clusters read of those asked for when
/// the rows are of several: `5 workloads in 1 of 2 contexts: ...`.
fn count_line_across(
    t: &Triage,
    namespace: Option<&str>,
    contexts: Option<(usize, usize)>,
    lang: Lang,
) -> String {
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
    let across = contexts.map(|(read, n)| contexts_read(read, n));
    let line = match (namespace, across) {
        (None, None) => Message::new("triage.count_line"),
        (Some(ns), None) => Message::new("triage.count_line_in").arg("namespace", ns),
        (None, Some(c)) => Message::new("triage.count_line_across").arg("contexts", c),
        (Some(ns), Some(c)) => Message::new("triage.count_line_in_across")
            .arg("namespace", ns)
            .arg("contexts", c),
    };
    let mut line = line
        .arg("what", what)
        .arg("parts", Arg::list(parts, "sep.comma"))
        .render(lang);
    line.push('\n');
    line
}
