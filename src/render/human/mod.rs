//! The human view of a trace. By default it is compact: header, headline,
//! the chain tree (identical Pods folded into one line), the timeline
//! (steps of the same second folded into one row), the lead finding with
//! its evidence, first check and fix, and every other finding in one line.
//! `-v` adds each finding in full and each Pod's moments. Every line is
//! fitted to `Style::width` (see `layout::command` for the one exception:
//! a command word wider than the line). The `next:` command is the
//! verdict's, whole, in every view and at every width.
//!
//! This file holds the header and the headline; the tree, the timeline and
//! the findings have a file each. Words other views share live in
//! `crate::words`, never here.

use std::fmt::Write;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::layout::{self, cut, pad, pad_left, width, wrap, wrap_at_most};
use crate::report::RunInfo;
use crate::words::{
    detail_with_others, gap_lines, push_lines, severity_mark, severity_word, step_name, tr,
};
use crate::{Style, headline};
use mdiag_core::analysis::{Diagnosis, Evidence, Finding, PodState, Step, format_duration};
use mdiag_core::catalogue::{Arg, Lang, Message, catalogue};
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

mod findings;
mod timeline;
mod tree;

use findings::findings;
use timeline::{pods, timeline};
use tree::{PodGroup, fold, lead_pod, pod_line, tree};

/// A workload's Pods in one line for each group of alike ones, as the
/// trace lists those past its waterfall: the current revision's (the lead
/// finding's Pod names its group), then the older ones, each with its
/// revision. Unwrapped; `triage -v` prints them under a row.
pub(crate) fn pod_lines(d: &Diagnosis, style: &Style) -> Vec<String> {
    let current: Vec<&PodState> = d
        .pods
        .iter()
        .filter(|p| p.current && !p.terminating)
        .collect();
    let old: Vec<&PodState> = d
        .pods
        .iter()
        .filter(|p| !p.current || p.terminating)
        .collect();
    let mut lines: Vec<String> = fold(&current, lead_pod(d))
        .iter()
        .map(|g| pod_line(g, d, style))
        .collect();
    for g in fold(&old, None) {
        lines.push(format!(
            "{} {}",
            style.dim(&tr(
                style,
                Message::new("pods.revision").arg(
                    "revision",
                    g.shown.revision.map_or("?".into(), |r| r.to_string())
                )
            )),
            pod_line(&g, d, style)
        ));
    }
    lines
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
    // The verdict's `next`, whole, as JSON has it: wrapped between its
    // words when wider than the view, never swapped for another command.
    if let Some(next) = &d.verdict.next {
        let label = format!("  {}", style.dim(style.labels().next));
        let label = format!("{label}{}", next_gap(style));
        push_lines(
            out,
            layout::command(&label, next, style.width, COMMAND_INDENT, &|c| {
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

fn gaps(out: &mut String, d: &Diagnosis, style: &Style) {
    if !d.gaps.is_empty() {
        out.push('\n');
        out.push_str(&gap_lines(&d.gaps, style));
    }
}
