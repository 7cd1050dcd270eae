//! The human view of a trace. By default it is compact: header, headline,
//! the chain tree (identical Pods folded into one line), the timeline
//! (steps of the same second folded into one row), the lead finding with
//! its evidence, first check and fix, and every other finding in one line.
//! `-v` adds each finding in full and each Pod's moments. Every line is
//! fitted to `Style::width` (see `layout` for the one exception: a
//! command word wider than the line).

use std::fmt::Write;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::layout::{self, cut, pad, pad_left, width, wrap, wrap_at_most};
use super::report::{RunInfo, detail_with_others};
use super::{Style, headline};
use mdiag_core::analysis::{Diagnosis, Evidence, Finding, PodState, Step, format_duration};
use mdiag_core::catalogue::{Lang, Message, Severity, catalogue};
use mdiag_core::model::{ClockSource, OriginKind};

/// Widest waterfall bar, in columns; narrower when the width is short.
const BAR_WIDTH: usize = 32;
const MIN_BAR_WIDTH: usize = 8;
/// Columns a timeline keeps for its notes before the bar narrows.
const NOTE_ROOM: usize = 26;
/// Pods drawn as a waterfall (with -v); the rest are listed in one line each.
const WATERFALL_PODS: usize = 4;
/// Evidence items of the lead finding shown by default, and lines each.
const COMPACT_EVIDENCE: usize = 2;
const COMPACT_EVIDENCE_LINES: usize = 2;
/// Log lines under the lead finding by default (all that are kept with -v).
const COMPACT_LOG_LINES: usize = 3;
/// Characters of the fix shown by default (whole sentences, at least this).
const FIX_OPENING: usize = 60;
/// Lines of the lead finding's detail shown by default.
const COMPACT_DETAIL_LINES: usize = 3;
/// Where a command too long for its label's line starts: near the margin,
/// so that most commands still fit in one line at 80 columns.
const COMMAND_INDENT: usize = 2;

pub fn trace(d: &Diagnosis, run: &RunInfo, style: &Style) -> String {
    let mut out = String::new();
    header(&mut out, d, run, style);
    verdict(&mut out, d, style);
    tree(&mut out, d, style);
    timeline(&mut out, d, style);
    if style.verbose {
        pods(&mut out, d, style);
    }
    findings(&mut out, d, style);
    gaps(&mut out, d, style);
    out
}

/// A message in the view's language.
fn tr(style: &Style, m: Message) -> String {
    m.render(style.lang)
}

/// A ladder step as the views name it.
pub fn step_name(step: Step, lang: Lang) -> String {
    Message::new(step_id(step)).render(lang)
}

/// The message id of a step's name.
pub fn step_id(step: Step) -> &'static str {
    match step {
        Step::Declared => "step.declared",
        Step::Observed => "step.observed",
        Step::Deployment => "step.deployment",
        Step::ReplicaSet => "step.replicaset",
        Step::StatefulSet => "step.statefulset",
        Step::DaemonSet => "step.daemonset",
        Step::Stored => "step.stored",
        Step::Bound => "step.bound",
        Step::Started => "step.started",
        Step::Ready => "step.ready",
        Step::Serving => "step.serving",
    }
}

/// `ready/desired ready, N updated, N available` of a Deployment or set.
fn workload_counts(
    style: &Style,
    ready: i32,
    desired: i32,
    updated: i32,
    available: i32,
) -> String {
    tr(
        style,
        Message::new("tree.workload")
            .arg("ready", ready)
            .arg("desired", desired)
            .arg("updated", updated)
            .arg("available", available),
    )
}

/// An evidence field as shown: a path as it is, `event REASON` and mdiag's
/// own words in the view's language.
fn field_name(e: &Evidence, style: &Style) -> String {
    if e.field_said.is_some() {
        return e.field_in(style.lang);
    }
    match e.field.strip_prefix("event ") {
        Some(reason) => tr(style, Message::new("evidence.event").arg("reason", reason)),
        None => e.field.clone(),
    }
}

/// A gap's reason: the apiserver's words, or mdiag's own for a kind a
/// dump does not hold.
fn gap_reason(reason: &str, style: &Style) -> String {
    if reason == mdiag_core::model::Gap::NOT_IN_DUMP {
        tr(style, Message::new("gap.not_in_dump"))
    } else {
        reason.to_string()
    }
}

fn clock_time(t: Timestamp, now: Timestamp) -> String {
    let z = t.to_zoned(TimeZone::UTC);
    let n = now.to_zoned(TimeZone::UTC);
    if z.date() == n.date() {
        z.strftime("%H:%M:%S").to_string()
    } else {
        z.strftime("%Y-%m-%d %H:%M:%S").to_string()
    }
}

fn secs(from: Timestamp, to: Timestamp) -> i64 {
    (to.as_millisecond() - from.as_millisecond()) / 1000
}

/// Lines, one `\n` each.
fn push_lines(out: &mut String, lines: impl IntoIterator<Item = String>) {
    for l in lines {
        out.push_str(l.trim_end());
        out.push('\n');
    }
}

fn header(out: &mut String, d: &Diagnosis, run: &RunInfo, style: &Style) {
    let l = style.labels();
    let t = &d.target;
    let why = match run.clock.source {
        ClockSource::Live => l.clock_live,
        ClockSource::Capture => l.clock_capture,
        ClockSource::NewestTimestamp => l.clock_newest,
        ClockSource::At => "--at",
    };
    let mut meta = format!(
        "{} {} UTC ({why})",
        l.judged_at,
        run.clock
            .now
            .to_zoned(TimeZone::UTC)
            .strftime("%Y-%m-%d %H:%M:%S")
    );
    // The file is the one the user named; the live context is worth saying.
    match run.origin.kind {
        OriginKind::Live => {
            meta.push_str(&tr(style, Message::new("view.live")));
            if let Some(c) = &run.origin.context {
                meta.push_str(&tr(style, Message::new("view.context").arg("context", c)));
            }
        }
        _ if style.verbose => meta.push_str(&format!(" · {}", run.origin.location)),
        _ => {}
    }
    let plain = format!("{} {}/{}", t.kind, t.namespace, t.name);
    let first = format!("{} {}/{}", t.kind, t.namespace, style.bold(&t.name));
    // Short of room, the time speaks for itself without "judged at".
    if width(&plain) + 3 + width(&meta) > style.width {
        let short = meta[l.judged_at.len()..].trim_start().to_string();
        if width(&plain) + 3 + width(&short) <= style.width {
            meta = short;
        }
    }
    if width(&plain) + 3 + width(&meta) <= style.width {
        let _ = writeln!(out, "{first}   {}", style.dim(&meta));
    } else {
        let _ = writeln!(out, "{first}");
        push_lines(
            out,
            wrap(&meta, style.width, "  ", "  ")
                .into_iter()
                .map(|m| format!("  {}", style.dim(m.trim_start()))),
        );
    }
    out.push('\n');
}

fn verdict(out: &mut String, d: &Diagnosis, style: &Style) {
    let line = format!(
        "{} {}  {}",
        headline::mark(d, style),
        headline::painted_word(d, style),
        headline::sentence(d, style.lang)
    );
    push_lines(out, wrap(&line, style.width, "", "  "));
    if let Some(next) = next_shown(d, style) {
        let label = format!("  {}", style.dim(style.labels().next));
        let label = format!("{label}{}", next_gap(style));
        push_lines(
            out,
            layout::command(&label, &next, style.width, COMMAND_INDENT, &|c| {
                style.bold(c)
            }),
        );
    }
    out.push('\n');
}

/// `next: `; a full-width colon has its space in it (`下一步：`).
fn next_gap(style: &Style) -> &'static str {
    if style.labels().next.ends_with('：') {
        ""
    } else {
        " "
    }
}

/// The command the view names under the headline: the verdict's `next`
/// when it fits the width, else the lead finding's first check that does.
/// A quoted jsonpath wider than the view cannot be wrapped and still
/// paste; `-v` prints every check whole, and JSON keeps `verdict.next`.
fn next_shown(d: &Diagnosis, style: &Style) -> Option<String> {
    let next = d.verdict.next.clone()?;
    let label = format!("  {}{}", style.labels().next, next_gap(style));
    let fits_next = |c: &str| {
        layout::command(&label, c, style.width, COMMAND_INDENT, &|s| s.to_string())
            .iter()
            .all(|line| width(line) <= style.width)
    };
    if style.verbose || fits_next(&next) {
        return Some(next);
    }
    let lead = d.lead()?;
    let checks = catalogue().get(lead.id)?.checks_for(&lead.vars);
    Some(checks.into_iter().find(|c| fits_next(c)).unwrap_or(next))
}

/// Pods that read the same in the tree: one line stands for all.
struct PodGroup<'a> {
    /// The Pod named: the one the lead finding is about, if it is here.
    shown: &'a PodState,
    count: usize,
    nodes: usize,
    restarts: (i32, i32),
}

/// Folds Pods of the same revision, state, last step and reason (the lead
/// finding's Pod names its group), keeping the order they came in.
fn fold<'a>(pods: &[&'a PodState], lead_pod: Option<&str>) -> Vec<PodGroup<'a>> {
    type Key<'k> = (Option<i64>, bool, bool, Step, Option<&'k str>, bool, bool);
    let key = |p: &'a PodState| -> Key<'a> {
        (
            p.revision,
            p.current,
            p.terminating,
            p.last_step,
            p.state_reason.as_deref(),
            p.serving,
            p.draining,
        )
    };
    let mut keys: Vec<Key> = Vec::new();
    let mut members: Vec<Vec<&PodState>> = Vec::new();
    for p in pods {
        let k = key(p);
        match keys.iter().position(|x| *x == k) {
            Some(i) => members[i].push(p),
            None => {
                keys.push(k);
                members.push(vec![p]);
            }
        }
    }
    members
        .into_iter()
        .map(|m| {
            let shown = m
                .iter()
                .find(|p| Some(p.name.as_str()) == lead_pod)
                .copied()
                .unwrap_or(m[0]);
            let mut nodes: Vec<Option<&str>> = m.iter().map(|p| p.node.as_deref()).collect();
            nodes.sort();
            nodes.dedup();
            let restarts = m.iter().map(|p| p.restarts);
            PodGroup {
                shown,
                count: m.len(),
                nodes: nodes.len(),
                restarts: (
                    restarts.clone().min().unwrap_or(0),
                    restarts.max().unwrap_or(0),
                ),
            }
        })
        .collect()
}

fn lead_pod(d: &Diagnosis) -> Option<&str> {
    d.lead()
        .filter(|f| f.subject.kind == "Pod")
        .map(|f| f.subject.name.as_str())
}

fn tree(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    let c = &d.chain;
    let _ = writeln!(out, "{}", style.bold(l.chain));
    let lead = lead_pod(d);
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut depth = 0;
    if let Some(m) = &c.model_service {
        let generation = m.generation;
        let state = match m.observed {
            Some(o) if o >= generation => style.good(&tr(
                style,
                Message::new("tree.generation_observed").arg("generation", generation),
            )),
            Some(o) => style.bad(&tr(
                style,
                Message::new("tree.generation_behind")
                    .arg("generation", generation)
                    .arg("observed", o),
            )),
            None => style.warn(&tr(
                style,
                Message::new("tree.generation_unobserved").arg("generation", generation),
            )),
        };
        lines.push((depth, format!("ModelService {}  {state}", m.name)));
        depth += 1;
    }
    if let Some(dep) = &c.deployment {
        let progressing = dep
            .progressing
            .as_ref()
            .map(|(status, reason)| format!(" · Progressing={status} {reason}"))
            .unwrap_or_default();
        lines.push((
            depth,
            format!(
                "Deployment {}  {}{progressing}",
                dep.name,
                workload_counts(style, dep.ready, dep.desired, dep.updated, dep.available),
            ),
        ));
        depth += 1;
    }
    if let Some(set) = &c.pod_set {
        let revision = set
            .update_revision
            .as_ref()
            .map(|(n, name)| {
                tr(
                    style,
                    Message::new("tree.update_revision")
                        .arg("revision", *n)
                        .arg("name", name),
                )
            })
            .unwrap_or_default();
        lines.push((
            depth,
            format!(
                "{} {}  {}{revision} · {}",
                set.kind,
                set.name,
                workload_counts(style, set.ready, set.desired, set.updated, set.available),
                set.strategy,
            ),
        ));
        depth += 1;
    }
    for rs in &c.replica_sets {
        let rev = rs.revision.map_or("?".into(), |v| v.to_string());
        let pods: Vec<&PodState> = d
            .pods
            .iter()
            .filter(|p| rs.pod_uids.contains(&p.uid))
            .collect();
        if !rs.current && pods.is_empty() && rs.replicas == 0 {
            continue;
        }
        let tag = if rs.current {
            style.bold(&tr(style, Message::new("tree.current")))
        } else {
            String::new()
        };
        lines.push((
            depth,
            format!(
                "ReplicaSet {}  {}",
                rs.name,
                tr(
                    style,
                    Message::new("tree.replicaset")
                        .arg("revision", rev)
                        .arg("current", tag)
                        .arg("ready", rs.ready)
                        .arg("desired", rs.desired),
                ),
            ),
        ));
        for g in fold(&pods, lead) {
            lines.push((depth + 1, pod_line(&g, style)));
        }
    }
    if c.replica_sets.is_empty() {
        let pods: Vec<&PodState> = d.pods.iter().collect();
        for g in fold(&pods, lead) {
            lines.push((depth, pod_line(&g, style)));
        }
    }
    // Ready endpoints of every revision: an old revision still serving counts.
    let endpoints = d
        .verdict
        .serving
        .ready_endpoints
        .map_or("?".to_string(), |n| n.to_string());
    for svc in &c.services {
        lines.push((
            depth,
            format!(
                "Service {}  {}",
                svc.name,
                tr(
                    style,
                    Message::new("tree.service")
                        .arg("ports", svc.ports.join(","))
                        .arg("endpoints", endpoints.as_str())
                        .arg("desired", d.replicas.desired),
                ),
            ),
        ));
        for slice in &svc.slices {
            lines.push((
                depth + 1,
                format!(
                    "EndpointSlice {}  {}",
                    slice.name,
                    tr(
                        style,
                        Message::new("tree.slice")
                            .arg("ready", slice.ready)
                            .arg("endpoints", slice.endpoints),
                    ),
                ),
            ));
        }
    }
    let services_unread = d
        .verdict
        .serving
        .unread
        .iter()
        .any(|(r, _)| r == "services");
    if c.wants_service && c.services.is_empty() {
        // Unread is not absent: a gap below says why.
        if services_unread {
            lines.push((
                depth,
                style.warn(&tr(style, Message::new("tree.service_unread"))),
            ));
        } else {
            lines.push((
                depth,
                style.bad(&tr(style, Message::new("tree.service_none"))),
            ));
        }
    }
    draw_tree(out, &lines, style.width);
    // By default the controller is shown only when something is wrong
    // with it: a stale or missing lease, or fewer ready than desired.
    let controller = c.controller.as_ref().filter(|ctl| {
        style.verbose
            || ctl.replicas.is_none_or(|(ready, desired)| ready < desired)
            || ctl
                .lease
                .as_ref()
                .is_none_or(|l| l.stale || l.renewed.is_none())
    });
    if let Some(ctl) = controller {
        let mut facts = Vec::new();
        if let Some((ready, desired)) = ctl.replicas {
            facts.push(tr(
                style,
                Message::new("tree.controller_ready")
                    .arg("ready", ready)
                    .arg("desired", desired),
            ));
        }
        if let Some(lease) = &ctl.lease {
            let text = match lease.renewed {
                Some(at) => tr(
                    style,
                    Message::new("tree.lease_renewed").arg("ago", format_duration(secs(at, d.now))),
                ),
                None => tr(style, Message::new("tree.lease_never")),
            };
            facts.push(if lease.stale {
                style.bad(&tr(style, Message::new("tree.stale").arg("text", text)))
            } else {
                text
            });
        }
        if facts.is_empty() {
            facts.push(style.dim(&tr(style, Message::new("tree.not_in_snapshot"))));
        }
        let line = format!(
            "{} {}/{}: {}",
            style.dim(&tr(style, Message::new("tree.controller"))),
            ctl.namespace,
            ctl.name,
            facts.join(", ")
        );
        push_lines(out, wrap(&line, style.width, "  ", "    "));
    }
    out.push('\n');
}

fn pod_line(g: &PodGroup, style: &Style) -> String {
    let l = style.labels();
    let p = g.shown;
    let mut name = format!("Pod {}", p.name);
    if g.count > 1 {
        name.push(' ');
        name.push_str(&tr(style, Message::new("pod.alike").arg("n", g.count - 1)));
    }
    let mut parts = vec![if g.nodes > 1 {
        tr(style, Message::new("pod.nodes").arg("n", g.nodes))
    } else {
        p.node
            .clone()
            .unwrap_or_else(|| tr(style, Message::new("pod.no_node")))
    }];
    if p.last_step != Step::Serving {
        parts.push(step_name(p.last_step, style.lang));
    }
    if let Some(r) = &p.state_reason {
        parts.push(style.bad(r));
    }
    let (low, high) = g.restarts;
    if high > 0 {
        let count = if low == high {
            high.to_string()
        } else {
            format!("{low}-{high}")
        };
        // One restart is singular only when every Pod of the group has one.
        let n = if low == high { high } else { 2 };
        parts.push(tr(
            style,
            Message::new("pod.restarts").arg("count", count).arg("n", n),
        ));
    }
    if p.held {
        let revision = p.revision.map_or(String::new(), |r| format!(" {r}"));
        parts.push(style.dim(&tr(
            style,
            Message::new("pod.held").arg("revision", revision),
        )));
    }
    if p.terminating {
        parts.push(style.dim(&tr(style, Message::new("pod.terminating"))));
    }
    parts.push(if p.serving {
        style.good(l.serving_yes)
    } else if p.draining {
        style.dim(&tr(style, Message::new("pod.draining")))
    } else {
        style.dim(l.serving_no)
    });
    format!("{name}  {}", parts.join(" · "))
}

fn draw_tree(out: &mut String, lines: &[(usize, String)], columns: usize) {
    // For each line, whether later lines continue at each depth.
    for (i, (depth, text)) in lines.iter().enumerate() {
        let mut prefix = String::from("  ");
        let mut cont = String::from("  ");
        for level in 1..=*depth {
            let continues_after = lines[i + 1..]
                .iter()
                .take_while(|(d, _)| *d >= level)
                .any(|(d, _)| *d == level);
            if level == *depth {
                prefix.push_str(if continues_after {
                    "├─ "
                } else {
                    "└─ "
                });
            } else {
                prefix.push_str(if continues_after { "│  " } else { "   " });
            }
            cont.push_str(if continues_after { "│  " } else { "   " });
        }
        cont.push_str("   ");
        push_lines(out, wrap(text, columns, &prefix, &cont));
    }
}

/// Bars on one time axis from `start` to `end`.
struct Axis {
    start: Timestamp,
    span: f64,
    width: usize,
}

impl Axis {
    fn new(start: Timestamp, end: Timestamp, width: usize) -> Self {
        Axis {
            start,
            span: ((end.as_millisecond() - start.as_millisecond()) as f64).max(1.0),
            width,
        }
    }

    fn col(&self, t: Timestamp) -> usize {
        let x = (t.as_millisecond() - self.start.as_millisecond()) as f64 / self.span;
        ((x.clamp(0.0, 1.0)) * self.width as f64).round() as usize
    }

    /// A bar from `from` to `to`, at least one character wide.
    fn bar(&self, from: Timestamp, to: Timestamp, fill: char) -> String {
        let a = self.col(from).min(self.width - 1);
        let b = self.col(to).max(a + 1).min(self.width);
        let mut s = " ".repeat(a);
        s.extend(std::iter::repeat_n(fill, b - a));
        s.push_str(&" ".repeat(self.width - b));
        s
    }

    fn empty(&self) -> String {
        " ".repeat(self.width)
    }
}

/// The step that waited longest since the step before it: a reached step
/// by its recorded gap, the missing step by how long it has waited until
/// `now`. (The missing step used to be left out, so `observed +1s` was
/// marked while `started` had waited minutes.)
pub fn slowest_step(d: &Diagnosis) -> Option<Step> {
    let mut previous: Option<Timestamp> = None;
    let mut waits: Vec<(Step, i64)> = Vec::new();
    for s in &d.steps {
        match (s.reached, s.at) {
            (true, Some(t)) => {
                if let Some(p) = previous {
                    waits.push((s.step, secs(p, t)));
                }
                previous = Some(t);
            }
            (false, _) if d.verdict.missing == Some(s.step) => {
                if let Some(p) = previous {
                    waits.push((s.step, secs(p, d.now)));
                }
            }
            _ => {}
        }
    }
    // The first of equal waits: the earlier step held the rest up.
    waits
        .iter()
        .filter(|(_, w)| *w > 0)
        .fold(None, |best: Option<(Step, i64)>, &(s, w)| match best {
            Some((_, b)) if b >= w => best,
            _ => Some((s, w)),
        })
        .map(|(s, _)| s)
}

#[derive(Clone, Copy, PartialEq)]
enum RowKind {
    Reached,
    /// Reached, but the cluster keeps no time for it.
    Untimed,
    Missing,
    /// After the missing step.
    Later,
}

/// One row of the timeline: one step, or (by default) several reached in
/// the same second, or every step after the missing one.
struct Row {
    first: Step,
    last: Step,
    kind: RowKind,
    at: Option<Timestamp>,
    /// Where its bar starts.
    from: Option<Timestamp>,
    gap: Option<i64>,
    note: String,
    slowest: bool,
}

impl Row {
    fn label(&self, lang: Lang) -> String {
        if self.first == self.last {
            step_name(self.first, lang)
        } else {
            format!(
                "{}…{}",
                step_name(self.first, lang),
                step_name(self.last, lang)
            )
        }
    }
}

fn timeline_rows(d: &Diagnosis, compact: bool, lang: Lang) -> Vec<Row> {
    let slowest = slowest_step(d);
    let start = d.steps.iter().filter_map(|s| s.at).min();
    let mut rows: Vec<Row> = Vec::new();
    let mut previous: Option<Timestamp> = None;
    for s in &d.steps {
        let is_slowest = Some(s.step) == slowest;
        let row = match (s.reached, s.at) {
            (true, Some(t)) => {
                let gap = previous.map(|p| secs(p, t));
                let from = previous.unwrap_or(t);
                previous = Some(t);
                // Same second as the row before: one row says it.
                if compact
                    && gap == Some(0)
                    && let Some(last) = rows.last_mut()
                    && last.kind == RowKind::Reached
                {
                    last.last = s.step;
                    last.note = s.note.render(lang);
                    last.slowest |= is_slowest;
                    continue;
                }
                Row {
                    first: s.step,
                    last: s.step,
                    kind: RowKind::Reached,
                    at: Some(t),
                    from: Some(from),
                    gap,
                    note: s.note.render(lang),
                    slowest: is_slowest,
                }
            }
            (true, None) => Row {
                first: s.step,
                last: s.step,
                kind: RowKind::Untimed,
                at: None,
                from: None,
                gap: None,
                note: s.note.render(lang),
                slowest: false,
            },
            (false, _) if d.verdict.missing == Some(s.step) => {
                let from = previous.or(start);
                Row {
                    first: s.step,
                    last: s.step,
                    kind: RowKind::Missing,
                    at: None,
                    from,
                    gap: from.map(|f| secs(f, d.now)),
                    note: s.note.render(lang),
                    slowest: is_slowest,
                }
            }
            (false, _) => {
                // What comes after the missing step is implied by it.
                if compact {
                    continue;
                }
                Row {
                    first: s.step,
                    last: s.step,
                    kind: RowKind::Later,
                    at: None,
                    from: None,
                    gap: None,
                    note: s.note.render(lang),
                    slowest: false,
                }
            }
        };
        rows.push(row);
    }
    rows
}

fn timeline(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    let heading = format!(
        "{}  {}",
        style.bold(l.timeline),
        style.dim(&format!("({})", l.timeline_hint))
    );
    push_lines(out, wrap(&heading, style.width, "", "  "));
    let times: Vec<Timestamp> = d.steps.iter().filter_map(|s| s.at).collect();
    let Some(start) = times.iter().min().copied() else {
        let _ = writeln!(
            out,
            "  {}\n",
            style.dim(&tr(style, Message::new("timeline.no_time")))
        );
        return;
    };
    let rows = timeline_rows(d, !style.verbose, style.lang);
    let waiting_since = times.iter().max().copied().unwrap_or(start);
    let end = if d.verdict.missing.is_some() {
        d.now
    } else {
        waiting_since
    };
    let labels: Vec<String> = rows.iter().map(|r| r.label(style.lang)).collect();
    let times_text: Vec<String> = rows
        .iter()
        .map(|r| match (r.kind, r.at) {
            (_, Some(t)) => clock_time(t, d.now),
            (RowKind::Missing | RowKind::Later, _) => "—".into(),
            _ => String::new(),
        })
        .collect();
    let gaps_text: Vec<String> = rows
        .iter()
        .map(|r| {
            r.gap
                .map(|g| format!("+{}", format_duration(g)))
                .unwrap_or_default()
        })
        .collect();
    let label_w = labels.iter().map(|s| width(s)).max().unwrap_or(0).max(10);
    let time_w = times_text
        .iter()
        .map(|s| width(s))
        .max()
        .unwrap_or(0)
        .max(8);
    let gap_w = gaps_text.iter().map(|s| width(s)).max().unwrap_or(0).max(4);
    // "  label time gap │bar│ note"
    let fixed = 2 + label_w + 1 + time_w + 1 + gap_w + 1 + 2 + 1;
    let bar_w = style
        .width
        .saturating_sub(fixed + NOTE_ROOM)
        .clamp(MIN_BAR_WIDTH, BAR_WIDTH);
    let axis = Axis::new(start, end.max(waiting_since), bar_w);
    let note_col = fixed + bar_w;
    for (i, r) in rows.iter().enumerate() {
        // A no-break space keeps the arrow with its word when the note
        // wraps (textwrap breaks at ASCII spaces only); printed as a space.
        let mark = if r.slowest {
            format!("  ←\u{a0}{}", l.slowest)
        } else {
            String::new()
        };
        let (bar, note) = match r.kind {
            RowKind::Reached => {
                let t = r.at.unwrap_or(start);
                let bar = axis.bar(r.from.unwrap_or(t), t, '█');
                let bar = if r.slowest {
                    style.warn(&bar)
                } else {
                    style.good(&bar)
                };
                (bar, format!("{}{mark}", r.note))
            }
            RowKind::Untimed | RowKind::Later => (axis.empty(), r.note.clone()),
            RowKind::Missing => {
                let from = r.from.unwrap_or(start);
                let bar = style.bad(&axis.bar(from, d.now, '░'));
                let note = if style.verbose {
                    format!(
                        "{} ({} {}) · {}",
                        l.not_reached,
                        l.waiting,
                        format_duration(secs(from, d.now)),
                        r.note
                    )
                } else {
                    format!("{} · {}", l.not_reached, r.note)
                };
                (bar, format!("{note}{mark}"))
            }
        };
        let label = pad(&labels[i], label_w);
        let label = match r.kind {
            RowKind::Missing => style.bad(&label),
            RowKind::Later => style.dim(&label),
            _ => label,
        };
        let lead = format!(
            "  {label} {} {} │{bar}│ ",
            pad_left(&times_text[i], time_w),
            pad_left(&gaps_text[i], gap_w),
        );
        let paint = |n: &str| match r.kind {
            RowKind::Missing => style.bad(n),
            _ => style.dim(n),
        };
        if note.is_empty() {
            push_lines(out, [lead]);
        } else if style.width.saturating_sub(note_col) < 16 {
            // Too narrow for notes beside the bars: under them.
            push_lines(out, [lead]);
            push_lines(
                out,
                wrap(&note, style.width, "      ", "      ")
                    .into_iter()
                    .map(|n| format!("      {}", paint(&n.trim_start().replace('\u{a0}', " ")))),
            );
        } else {
            let indent = " ".repeat(note_col);
            for (j, n) in wrap(&note, style.width, &indent, &indent)
                .into_iter()
                .enumerate()
            {
                let text = paint(&n.trim_start().replace('\u{a0}', " "));
                if j == 0 {
                    push_lines(out, [format!("{lead}{text}")]);
                } else {
                    push_lines(out, [format!("{indent}{text}")]);
                }
            }
        }
    }
    out.push('\n');
}

fn pods(out: &mut String, d: &Diagnosis, style: &Style) {
    if d.pods.is_empty() {
        return;
    }
    let l = style.labels();
    let heading = format!(
        "{}  {}",
        style.bold(l.pods),
        style.dim(&tr(
            style,
            Message::new("pods.heading")
                .arg("current", d.replicas.current)
                .arg("desired", d.replicas.desired)
                .arg("ready", d.replicas.ready)
                .arg("serving", d.replicas.serving)
                .arg("old", d.replicas.old)
                .arg("older", l.old_pods)
        ))
    );
    push_lines(out, wrap(&heading, style.width, "", "  "));
    let current: Vec<&PodState> = d
        .pods
        .iter()
        .filter(|p| p.current && !p.terminating)
        .collect();
    let groups = fold(&current, lead_pod(d));
    let start = current.iter().filter_map(|p| p.moments.stored.at).min();
    let latest = current
        .iter()
        .flat_map(|p| {
            [
                p.moments.stored.at,
                p.moments.bound.at,
                p.moments.started.at,
                p.moments.ready.at,
            ]
        })
        .flatten()
        .max();
    // "    label    time      gap │bar│ note"
    let bar_w = style
        .width
        .saturating_sub(4 + 8 + 1 + 8 + 1 + 8 + 3 + NOTE_ROOM)
        .clamp(MIN_BAR_WIDTH, BAR_WIDTH);
    if let (Some(start), Some(latest)) = (start, latest) {
        let any_missing = current.iter().any(|p| !p.moments.ready.reached);
        let axis = Axis::new(
            start,
            if any_missing {
                d.now.max(latest)
            } else {
                latest
            },
            bar_w,
        );
        for g in groups.iter().take(WATERFALL_PODS) {
            pod_waterfall(out, g, &axis, d.now, style);
        }
    }
    let mut rest: Vec<String> = groups
        .iter()
        .skip(WATERFALL_PODS)
        .map(|g| pod_line(g, style))
        .collect();
    let old: Vec<&PodState> = d
        .pods
        .iter()
        .filter(|p| !p.current || p.terminating)
        .collect();
    for g in fold(&old, None) {
        rest.push(format!(
            "{} {}",
            style.dim(&tr(
                style,
                Message::new("pods.revision").arg(
                    "revision",
                    g.shown.revision.map_or("?".into(), |r| r.to_string())
                )
            )),
            pod_line(&g, style)
        ));
    }
    for line in rest {
        push_lines(out, wrap(&line, style.width, "  ", "     "));
    }
    out.push('\n');
}

fn pod_waterfall(out: &mut String, g: &PodGroup, axis: &Axis, now: Timestamp, style: &Style) {
    let l = style.labels();
    let p = g.shown;
    let mut name = style.bold(&p.name);
    if g.count > 1 {
        name.push(' ');
        name.push_str(&tr(style, Message::new("pod.alike").arg("n", g.count - 1)));
    }
    let heading = format!(
        "{name}  {}",
        style.dim(&tr(
            style,
            Message::new("pods.node_revision")
                .arg(
                    "node",
                    p.node
                        .clone()
                        .unwrap_or_else(|| tr(style, Message::new("pod.no_node")))
                )
                .arg("revision", p.revision.map_or("?".into(), |r| r.to_string()))
        ))
    );
    push_lines(out, wrap(&heading, style.width, "  ", "    "));
    let moments = [
        (step_name(Step::Stored, style.lang), p.moments.stored),
        (step_name(Step::Bound, style.lang), p.moments.bound),
        (step_name(Step::Started, style.lang), p.moments.started),
        (step_name(Step::Ready, style.lang), p.moments.ready),
    ];
    let mut previous: Option<Timestamp> = None;
    let mut waiting_shown = false;
    for (label, m) in moments {
        let name = pad(&label, 8);
        match (m.reached, m.at) {
            (true, Some(t)) => {
                let gap = previous
                    .map(|pr| format!("+{}", format_duration(secs(pr, t))))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "    {name} {:>8} {:>8} │{}│",
                    clock_time(t, now),
                    gap,
                    style.good(&axis.bar(previous.unwrap_or(t), t, '█'))
                );
                previous = Some(t);
            }
            (true, None) => {
                let _ = writeln!(out, "    {name} {:>8} {:>8} │{}│", "?", "", axis.empty());
            }
            (false, _) if !waiting_shown => {
                waiting_shown = true;
                let from = previous.unwrap_or(now);
                let lead = format!(
                    "    {} {:>8} {:>8} │{}│ ",
                    style.bad(&name),
                    "—",
                    format!("+{}", format_duration(secs(from, now))),
                    style.bad(&axis.bar(from, now, '░')),
                );
                let note = format!(
                    "{}{}",
                    l.not_reached,
                    p.state_reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                );
                let room = style.width.saturating_sub(width(&lead));
                push_lines(out, [format!("{lead}{}", style.bad(&cut(&note, room)))]);
            }
            (false, _) => {
                let _ = writeln!(out, "    {} {:>8}", style.dim(&name), "—");
            }
        }
    }
    let serving = if p.serving {
        tr(style, Message::new("pods.serving"))
    } else if p.draining {
        tr(style, Message::new("pods.draining"))
    } else {
        l.serving_no.to_string()
    };
    let head = format!(
        "    {} ",
        pad(&tr(style, Message::new("pods.serving_label")), 8)
    );
    let lines = wrap(&serving, style.width, &head, "             ");
    push_lines(
        out,
        lines.into_iter().map(|s| {
            let (head, text) = s.split_at(head.len().min(s.len()));
            let text = if p.serving {
                style.good(text)
            } else {
                style.dim(text)
            };
            format!("{head}{text}")
        }),
    );
}

fn severity_mark(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✘",
        Severity::Warning => "!",
        Severity::Info => "i",
    }
}

fn findings(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    if d.findings.is_empty() {
        let _ = writeln!(out, "{}  {}", style.bold(l.findings), l.no_findings);
        return;
    }
    let heading = format!("{} ({})", l.findings, d.findings.len());
    if !style.verbose && width(&heading) + 2 + width(l.verbose_hint) <= style.width {
        let _ = writeln!(
            out,
            "{}  {}",
            style.bold(&heading),
            style.dim(l.verbose_hint)
        );
    } else {
        let _ = writeln!(out, "{}", style.bold(&heading));
    }
    for (i, f) in d.findings.iter().enumerate() {
        if style.verbose {
            out.push('\n');
            finding(out, f, true, None, style);
        } else if i == 0 {
            finding(out, f, false, next_shown(d, style).as_deref(), style);
        } else {
            finding_line(out, f, style);
        }
    }
}

/// Whether a command fits the view's width once wrapped between shell
/// words (a quoted jsonpath is one word).
fn fits(command: &str, style: &Style) -> bool {
    layout::command("    ", command, style.width, 4, &|s| s.to_string())
        .iter()
        .all(|line| width(line) <= style.width)
}

/// The label column of a finding: the widest label of the language.
fn label_width(style: &Style) -> usize {
    let l = style.labels();
    [l.evidence, l.log, l.cause, l.check, l.fix, l.verify]
        .iter()
        .map(|s| width(s))
        .max()
        .unwrap_or(6)
        + 1
}

/// `    label   ` at the label column, the label dimmed after padding
/// (padding a coloured string would count its escapes as columns).
fn label_prefix(label: &str, style: &Style) -> String {
    let padded = pad(label, label_width(style));
    let text = padded.trim_end();
    format!("    {}{}", style.dim(text), &padded[text.len()..])
}

/// Prose under a label, wrapped.
fn labelled(out: &mut String, label: &str, text: &str, max_lines: Option<usize>, style: &Style) {
    let rest = " ".repeat(4 + label_width(style));
    let mut first = true;
    for para in text.lines().filter(|p| !p.trim().is_empty()) {
        let head = if first {
            pad(&format!("    {label}"), 4 + label_width(style))
        } else {
            rest.clone()
        };
        let lines = match max_lines {
            Some(n) => wrap_at_most(para, style.width, &head, &rest, n),
            None => wrap(para, style.width, &head, &rest),
        };
        for (j, line) in lines.into_iter().enumerate() {
            if first && j == 0 {
                let body = line[head.len().min(line.len())..].to_string();
                push_lines(out, [format!("{}{body}", label_prefix(label, style))]);
            } else {
                push_lines(out, [line]);
            }
        }
        first = false;
    }
}

/// The opening of a catalogue text, the default view's fix: whole
/// sentences until there are at least [`FIX_OPENING`] characters (a first
/// sentence such as "Fix what the log names." says little alone).
fn opening(text: &str) -> &str {
    let text = text.trim();
    let mut end = None;
    for (i, c) in text.char_indices() {
        let stop = match c {
            '。' => Some(i + c.len_utf8()),
            '.' => {
                let after = &text[i + 1..];
                (after.is_empty() || after.starts_with(' ') || after.starts_with('\n'))
                    .then_some(i + 1)
            }
            _ => None,
        };
        if let Some(e) = stop {
            end = Some(e);
            if text[..e].chars().count() >= FIX_OPENING {
                break;
            }
        }
    }
    match end {
        Some(e) if text[..e].chars().count() >= FIX_OPENING => &text[..e],
        _ => text,
    }
}

/// `error`, `warning`, `info` in the view's language.
pub fn severity_word(severity: Severity, lang: Lang) -> String {
    Message::new(match severity {
        Severity::Error => "severity.error",
        Severity::Warning => "severity.warning",
        Severity::Info => "severity.info",
    })
    .render(lang)
}

fn finding_head(f: &Finding, style: &Style) -> (String, String) {
    let mark = severity_mark(f.severity);
    let word = severity_word(f.severity, style.lang);
    let sev = format!("{mark} {}", pad(&word, 7));
    let plain = format!("  {sev} {}  {}", f.id.as_str(), f.subject);
    let painted = format!(
        "  {} {}  {}",
        style.severity(f.severity, &sev),
        style.bold(f.id.as_str()),
        f.subject
    );
    (plain, painted)
}

/// Another finding, in one line: severity, id, subject, the detail cut.
fn finding_line(out: &mut String, f: &Finding, style: &Style) {
    let (plain, painted) = finding_head(f, style);
    let detail = detail_with_others(f, style.lang);
    if width(&plain) + 2 >= style.width {
        let _ = writeln!(out, "{}", cut(&plain, style.width));
        return;
    }
    let room = style.width - width(&plain) - 2;
    let _ = writeln!(out, "{painted}  {}", cut(&detail, room));
}

fn finding(out: &mut String, f: &Finding, full: bool, next: Option<&str>, style: &Style) {
    let l = style.labels();
    let entry = catalogue().get(f.id);
    let (plain, painted) = finding_head(f, style);
    if width(&plain) <= style.width {
        let _ = writeln!(out, "{painted}");
    } else {
        push_lines(out, wrap(&plain, style.width, "", "      "));
    }
    // The default view leaves the title to `explain`: the headline named it.
    if let Some(e) = entry.filter(|_| full) {
        let title = style.bold(e.title.get(style.lang));
        push_lines(out, wrap(&title, style.width, "    ", "    "));
    }
    let detail = detail_with_others(f, style.lang);
    push_lines(
        out,
        if full {
            wrap(&detail, style.width, "    ", "    ")
        } else {
            wrap_at_most(&detail, style.width, "    ", "    ", COMPACT_DETAIL_LINES)
        },
    );
    evidence(out, f, full, style);
    let Some(e) = entry else { return };
    if full {
        labelled(out, l.cause, e.cause.get(style.lang), None, style);
    }
    let checks = e.checks_for(&f.vars);
    // Whether the `check` label is already printed, on a line of its own.
    let mut labelled_already = false;
    if !full && checks.first().map(String::as_str) == next && next.is_some() {
        // Printed in full under the headline, a few lines up.
        let _ = writeln!(out, "{}{}", label_prefix(l.check, style), l.check_is_next);
    }
    let shown: Vec<&String> = if full {
        checks.iter().collect()
    } else {
        // The first check, unless it is the next: command; one whose quoted
        // jsonpath is wider than the view cannot be wrapped and still paste,
        // so the compact view shows the first that fits, and -v every one.
        let wanted: Vec<&String> = checks
            .iter()
            .take(1)
            .filter(|c| Some(c.as_str()) != next)
            .collect();
        match wanted.first() {
            Some(c) if !fits(c, style) => {
                let _ = writeln!(out, "{}{}", label_prefix(l.check, style), l.check_in_full);
                labelled_already = true;
                checks
                    .iter()
                    .skip(1)
                    .filter(|c| Some(c.as_str()) != next)
                    .find(|c| fits(c, style))
                    .into_iter()
                    .collect()
            }
            _ => wanted,
        }
    };
    // Beside the label when every command fits there; else all of them
    // under it, at one indent, so they line up.
    let column = 4 + label_width(style);
    if shown.iter().all(|c| column + width(c) <= style.width) {
        for (i, c) in shown.iter().enumerate() {
            let label = if i == 0 && !labelled_already {
                label_prefix(l.check, style)
            } else {
                " ".repeat(column)
            };
            let _ = writeln!(out, "{label}{}", style.bold(c));
        }
    } else if !shown.is_empty() {
        if !labelled_already {
            let _ = writeln!(out, "    {}", style.dim(l.check));
        }
        for c in shown {
            push_lines(
                out,
                layout::command("    ", c, style.width, 4, &|s| style.bold(s)),
            );
        }
    }
    if full {
        labelled(out, l.fix, e.fix.get(style.lang), None, style);
        labelled(out, l.verify, e.verify.get(style.lang), None, style);
    } else {
        labelled(out, l.fix, opening(e.fix.get(style.lang)), Some(3), style);
    }
}

fn evidence(out: &mut String, f: &Finding, full: bool, style: &Style) {
    let l = style.labels();
    let subject = format!("pod/{}", f.subject.name);
    let items: Vec<&Evidence> = f
        .evidence
        .iter()
        .filter(|e| e.log.is_none())
        .filter(|e| full || f.subject.kind != "Pod" || e.object == subject)
        .take(match (full, f.evidence.iter().any(|e| e.log.is_some())) {
            (true, _) => usize::MAX,
            // The log says more than the status fields around it.
            (false, true) => 1,
            (false, false) => COMPACT_EVIDENCE,
        })
        .collect();
    let rest = " ".repeat(4 + label_width(style));
    for (i, e) in items.iter().enumerate() {
        let at =
            e.at.map(|at| {
                tr(
                    style,
                    Message::new("evidence.at")
                        .arg("time", clock_time(at, style.now))
                        .arg("ago", format_duration(secs(at, style.now))),
                )
            })
            .unwrap_or_default();
        // The default view drops the object when it is the finding's subject.
        let object = if !full && (e.object == subject || e.object == f.subject.to_string()) {
            String::new()
        } else {
            format!("{} ", e.object)
        };
        let text = format!(
            "{object}{} = {}{at}",
            field_name(e, style),
            layout::clean(&e.value_in(style.lang))
        );
        let head = if i == 0 {
            pad(&format!("    {}", l.evidence), 4 + label_width(style))
        } else {
            rest.clone()
        };
        let has_log = f.evidence.iter().any(|e| e.log.is_some());
        let lines = if full {
            wrap(&text, style.width, &head, &rest)
        } else {
            let max = if has_log { 1 } else { COMPACT_EVIDENCE_LINES };
            wrap_at_most(&text, style.width, &head, &rest, max)
        };
        for (j, line) in lines.into_iter().enumerate() {
            if i == 0 && j == 0 {
                let body = line[head.len().min(line.len())..].to_string();
                push_lines(out, [format!("{}{body}", label_prefix(l.evidence, style))]);
            } else {
                push_lines(out, [line]);
            }
        }
    }
    for e in f.evidence.iter().filter(|e| e.log.is_some()) {
        log_tail(out, e, full, style);
    }
}

/// A log's last lines under its finding, each cut to the width (a log
/// line is not prose: wrapped, it would read as several).
fn log_tail(out: &mut String, e: &Evidence, full: bool, style: &Style) {
    let Some(log) = &e.log else { return };
    let lines = &log.lines[if full {
        0
    } else {
        log.lines.len().saturating_sub(COMPACT_LOG_LINES)
    }..];
    let l = style.labels();
    let run = if log.previous {
        l.previous_run
    } else {
        l.current_run
    };
    let shown = lines.len();
    let count = if log.total_lines > shown {
        tr(
            style,
            Message::new("log.last_lines")
                .arg("shown", shown)
                .arg("total", log.total_lines),
        )
    } else {
        String::new()
    };
    let what = format!(
        "{} ({run}){count}{}",
        log.container,
        if log.truncated { " …" } else { "" }
    );
    let rest = " ".repeat(4 + label_width(style));
    let room = style.width.saturating_sub(width(&rest)).max(8);
    push_lines(
        out,
        [format!(
            "{}{}",
            label_prefix(l.log, style),
            style.dim(&cut(&what, room))
        )],
    );
    for line in lines {
        push_lines(out, [format!("{rest}{}", cut(&layout::clean(line), room))]);
    }
}

fn gaps(out: &mut String, d: &Diagnosis, style: &Style) {
    if !d.gaps.is_empty() {
        out.push('\n');
        out.push_str(&gap_lines(&d.gaps, style));
    }
}

/// What could not be read, one line each under a heading (wrapped with -v,
/// else cut to the width).
pub(super) fn gap_lines(gaps: &[mdiag_core::model::Gap], style: &Style) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let line_of = |g: &mdiag_core::model::Gap| {
        // A kind missing from a file is about the file, not a cluster scope.
        let scope = match (&g.namespace, &g.complete_with) {
            (Some(n), _) => Message::new("gap.in").arg("namespace", n).into(),
            (None, Some(_)) => mdiag_core::catalogue::Arg::from(""),
            (None, None) => Message::new("gap.cluster").into(),
        };
        tr(
            style,
            Message::new("gap.line")
                .arg("verb", &g.verb)
                .arg("resource", &g.resource)
                .arg("scope", scope)
                .arg("reason", gap_reason(&g.reason, style)),
        )
    };
    // The kubectl get that would add a kind missing from a dump, pasteable.
    let complete = |out: &mut String, g: &mdiag_core::model::Gap| {
        if let Some(command) = &g.complete_with {
            let label = format!("    {} ", style.labels().complete_with);
            push_lines(
                out,
                layout::command(&label, command, style.width, 4, &|c| c.to_string()),
            );
        }
    };
    if !style.verbose && gaps.len() == 1 {
        let heading = style.labels().gaps_one;
        let room = style.width.saturating_sub(width(heading));
        let _ = writeln!(
            out,
            "{}{}",
            style.warn(heading),
            cut(&line_of(&gaps[0]), room)
        );
        complete(&mut out, &gaps[0]);
        return out;
    }
    push_lines(
        &mut out,
        wrap(style.labels().gaps, style.width, "", "  ")
            .into_iter()
            .map(|l| style.warn(&l)),
    );
    for g in gaps {
        let line = line_of(g);
        if style.verbose {
            push_lines(&mut out, wrap(&line, style.width, "  ", "    "));
        } else {
            let _ = writeln!(out, "  {}", cut(&line, style.width.saturating_sub(2)));
        }
        complete(&mut out, g);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{fold, opening};
    use mdiag_core::analysis::{Moment, Moments, PodState, Step};

    fn pod(name: &str, node: &str, reason: Option<&str>, restarts: i32) -> PodState {
        let m = Moment {
            reached: true,
            at: None,
        };
        PodState {
            name: name.into(),
            uid: name.into(),
            revision: Some(3),
            current: true,
            held: false,
            terminating: false,
            node: Some(node.into()),
            phase: Some("Running".into()),
            moments: Moments {
                stored: m,
                bound: m,
                started: Moment {
                    reached: false,
                    at: None,
                },
                ready: Moment {
                    reached: false,
                    at: None,
                },
            },
            serving: false,
            draining: false,
            last_step: Step::Bound,
            restarts,
            state_reason: reason.map(str::to_string),
        }
    }

    #[test]
    fn alike_pods_fold_into_one_line_named_after_the_lead() {
        let mut pods: Vec<PodState> = (0..5529)
            .map(|i| {
                pod(
                    &format!("web-{i}"),
                    &format!("node-{}", i % 7),
                    Some("CrashLoopBackOff"),
                    3 + i % 2,
                )
            })
            .collect();
        pods.push(pod("web-odd", "node-0", Some("ImagePullBackOff"), 0));
        let refs: Vec<&PodState> = pods.iter().collect();
        let groups = fold(&refs, Some("web-17"));
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].count, 5529);
        assert_eq!(groups[0].shown.name, "web-17");
        assert_eq!(groups[0].nodes, 7);
        assert_eq!(groups[0].restarts, (3, 4));
        assert_eq!(groups[1].count, 1);
        assert_eq!(groups[1].shown.name, "web-odd");
        // Without a lead Pod in the group, the first one names it.
        assert_eq!(fold(&refs, None)[0].shown.name, "web-0");
    }

    #[test]
    fn the_default_fix_is_its_opening_sentences() {
        let fix = "Fix the image tag in the chart values, then roll the ModelService out again. Then check the pull secret.";
        assert_eq!(
            opening(fix),
            "Fix the image tag in the chart values, then roll the ModelService out again."
        );
        assert_eq!(
            opening("Fix it. Add the verbs to the controller's Role through its chart. More."),
            "Fix it. Add the verbs to the controller's Role through its chart."
        );
        assert_eq!(
            opening("Use values.yaml, then retry"),
            "Use values.yaml, then retry"
        );
        let zh = "根据上一次日志里的报错，在 ModelService 或 chart values 中修正：启动参数、环境变量、ConfigMap 或 Secret 内容、模型路径。依赖启动慢时让应用重试。";
        assert!(opening(zh).ends_with("模型路径。"));
    }
}
