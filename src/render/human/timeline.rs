//! The timeline: the ladder's steps with the gap between each pair, and
//! (with -v) each Pod's moments as a waterfall.

use super::*;
use mdiag_core::analysis::timeline::Mark;
use mdiag_core::analysis::{self as analysis, StepState};

/// Bars on one time axis from `start` to `end`.
pub(super) struct Axis {
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

    /// A bar from `from` to `to`, at least one character wide. A bar of
    /// no length ends where one ending at the same time ends, so equal
    /// times fall in one column.
    fn bar(&self, from: Timestamp, to: Timestamp, fill: char) -> String {
        let b = self.col(to).clamp(1, self.width);
        let a = self.col(from).min(b - 1);
        let mut s = " ".repeat(a);
        s.extend(std::iter::repeat_n(fill, b - a));
        s.push_str(&" ".repeat(self.width - b));
        s
    }

    fn empty(&self) -> String {
        " ".repeat(self.width)
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum RowKind {
    Reached,
    /// Reached, but the cluster keeps no time for it.
    Untimed,
    Missing,
    /// After the missing step.
    Later,
    /// Not reached, and its objects were not read.
    Unknown,
}

/// One row of the timeline: one step, or (by default) several reached in
/// the same second, or every step after the missing one.
pub(super) struct Row {
    first: Step,
    last: Step,
    kind: RowKind,
    at: Option<Timestamp>,
    /// Where its bar starts.
    from: Option<Timestamp>,
    gap: Option<i64>,
    /// Its time is older than this step's (an earlier generation's write).
    older: Option<Step>,
    note: String,
    mark: Option<Mark>,
    /// Restarts while not reached (a crash loop).
    restarted: i32,
}

impl Row {
    fn new(s: &StepState, kind: RowKind, lang: Lang) -> Self {
        Row {
            first: s.step,
            last: s.step,
            kind,
            at: None,
            from: None,
            gap: None,
            older: None,
            note: s.note.render(lang),
            mark: None,
            restarted: 0,
        }
    }

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

pub(super) fn timeline_rows(d: &Diagnosis, compact: bool, lang: Lang) -> Vec<Row> {
    let timed = analysis::timeline::timeline(d);
    let start = d.steps.iter().filter_map(|s| s.at).min();
    let mut rows: Vec<Row> = Vec::new();
    // The newest time of the reached steps so far: where a bar starts.
    let mut previous: Option<Timestamp> = None;
    for (s, t) in d.steps.iter().zip(&timed) {
        let missing = d.verdict.missing == Some(s.step);
        let row = match (s.reached, s.at) {
            (true, Some(at)) => {
                let gap = t.gap_ms.map(|g| g / 1000);
                let from = match t.older_than {
                    Some(_) => at,
                    None => previous.unwrap_or(at),
                };
                if t.older_than.is_none() {
                    previous = Some(at);
                }
                // Same second as the row before and in the same order:
                // one row says it.
                if compact
                    && let Some(last) = rows.last_mut()
                    && last.kind == RowKind::Reached
                    && last.older == t.older_than
                    && last.mark.is_none()
                    && t.mark.is_none()
                    && last.at.map(|l| secs(l, at)) == Some(0)
                    && (t.older_than.is_some() || gap == Some(0))
                {
                    last.last = s.step;
                    last.note = s.note.render(lang);
                    continue;
                }
                Row {
                    at: Some(at),
                    from: Some(from),
                    gap,
                    older: t.older_than,
                    mark: t.mark,
                    ..Row::new(s, RowKind::Reached, lang)
                }
            }
            (true, None) => Row::new(s, RowKind::Untimed, lang),
            // What comes after the missing step is implied by it.
            (false, _) if compact && !missing => continue,
            (false, _) if s.unknown() => Row::new(s, RowKind::Unknown, lang),
            (false, _) if missing => {
                let from = previous.or(start);
                Row {
                    from,
                    gap: from.map(|f| secs(f, d.now)),
                    mark: t.mark,
                    restarted: s.restarted,
                    ..Row::new(s, RowKind::Missing, lang)
                }
            }
            (false, _) => Row::new(s, RowKind::Later, lang),
        };
        rows.push(row);
    }
    rows
}

/// The words after a row's note: older than a step, slowest, failing.
fn row_mark(r: &Row, style: &Style) -> String {
    let l = style.labels();
    let mut out = String::new();
    if let Some(step) = r.older {
        let said = if step == Step::Declared {
            Message::new("timeline.before_declaration")
        } else {
            Message::new("timeline.older").arg("step", step_name(step, style.lang))
        };
        out.push_str(" · ");
        out.push_str(&tr(style, said));
    }
    // A no-break space keeps the arrow with its word when the note
    // wraps (textwrap breaks at ASCII spaces only); printed as a space.
    match r.mark {
        Some(Mark::Slowest) => out.push_str(&format!("  ←\u{a0}{}", l.slowest)),
        Some(Mark::Failing) => out.push_str(&format!("  ←\u{a0}{}", l.failing)),
        None => {}
    }
    out
}

pub(super) fn timeline(out: &mut String, d: &Diagnosis, style: &Style) {
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
            (RowKind::Unknown, _) => "?".into(),
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
        let mark = row_mark(r, style);
        let (bar, note) = match r.kind {
            RowKind::Reached => {
                let t = r.at.unwrap_or(start);
                let bar = axis.bar(r.from.unwrap_or(t), t, '█');
                let bar = match (r.mark, r.older) {
                    (Some(_), _) => style.warn(&bar),
                    (None, Some(_)) => style.dim(&bar),
                    (None, None) => style.good(&bar),
                };
                (bar, format!("{}{mark}", r.note))
            }
            RowKind::Untimed | RowKind::Later => (axis.empty(), r.note.clone()),
            RowKind::Unknown => (axis.empty(), format!("{} · {}", l.unknown, r.note)),
            RowKind::Missing => {
                let from = r.from.unwrap_or(start);
                let bar = style.bad(&axis.bar(from, d.now, '░'));
                // A container that started and stopped did not fail to
                // start: say how often it restarted.
                let word = if r.restarted > 0 {
                    tr(
                        style,
                        Message::new("timeline.restarted").arg("n", r.restarted),
                    )
                } else {
                    l.not_reached.to_string()
                };
                let note = if style.verbose {
                    format!(
                        "{word} ({} {}) · {}",
                        l.waiting,
                        format_duration(secs(from, d.now)),
                        r.note
                    )
                } else {
                    format!("{word} · {}", r.note)
                };
                (bar, format!("{note}{mark}"))
            }
        };
        let label = pad(&labels[i], label_w);
        let label = match r.kind {
            RowKind::Missing => style.bad(&label),
            RowKind::Later | RowKind::Unknown => style.dim(&label),
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
        } else if style.width.saturating_sub(note_col) < 16
            || note
                .split_whitespace()
                .any(|w| width(w) > style.width.saturating_sub(note_col))
        {
            // Too narrow for notes beside the bars (or for a word of
            // them, which is never broken): under them.
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

pub(super) fn pods(out: &mut String, d: &Diagnosis, style: &Style) {
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
            pod_waterfall(out, g, &axis, d.now, d.serving_unread(), style);
        }
    }
    // The groups past the waterfall, then the older revisions' Pods.
    let rest = super::pod_lines(d, style)
        .into_iter()
        .skip(WATERFALL_PODS.min(groups.len()));
    for line in rest {
        push_lines(out, wrap(&line, style.width, "  ", "     "));
    }
    out.push('\n');
}

pub(super) fn pod_waterfall(
    out: &mut String,
    g: &PodGroup,
    axis: &Axis,
    now: Timestamp,
    serving_unread: bool,
    style: &Style,
) {
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
    for (k, (label, m)) in moments.into_iter().enumerate() {
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
                // Not started now, but it started and stopped before.
                let word = if k == 2 && p.restarts > 0 {
                    tr(
                        style,
                        Message::new("timeline.restarted").arg("n", p.restarts),
                    )
                } else {
                    l.not_reached.to_string()
                };
                let note = format!(
                    "{word}{}",
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
    } else if serving_unread {
        l.unknown.to_string()
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
