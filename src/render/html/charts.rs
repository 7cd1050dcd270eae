//! The inline SVG charts: the step waterfall and the Pods' moments.

use super::*;
use mdiag_core::analysis::Step;
use mdiag_core::analysis::timeline::Mark;

/// Chart geometry: the label column, the bars, the text after them.
pub(super) const CHART_WIDTH: f64 = 760.0;
pub(super) const LABEL_WIDTH: f64 = 215.0;
pub(super) const BARS_WIDTH: f64 = 440.0;
pub(super) const ROW: f64 = 22.0;
pub(super) const AXIS: f64 = 20.0;

/// Where a time falls on a chart from `t0` spanning `span` seconds.
pub(super) fn x_of(t: Timestamp, t0: Timestamp, span: f64) -> f64 {
    LABEL_WIDTH + (seconds_between(t0, t).max(0.0) / span).min(1.0) * BARS_WIDTH
}

pub(super) fn f(v: f64) -> String {
    format!("{v:.1}")
}

/// A time axis under a chart: its start, its end and the span between.
pub(super) fn axis(t0: Timestamp, t1: Timestamp, y: f64, now: Timestamp) -> Markup {
    let span = seconds_between(t0, t1).max(0.0) as i64;
    html! {
        line.axis x1=(f(LABEL_WIDTH)) y1=(f(y)) x2=(f(LABEL_WIDTH + BARS_WIDTH)) y2=(f(y)) {}
        text.tick x=(f(LABEL_WIDTH)) y=(f(y + 14.0)) { (clock_time(t0, now)) }
        text.tick x=(f(LABEL_WIDTH + BARS_WIDTH)) y=(f(y + 14.0)) text-anchor="end" { (clock_time(t1, now)) }
        text.tick x=(f(LABEL_WIDTH + BARS_WIDTH / 2.0)) y=(f(y + 14.0)) text-anchor="middle" { (format_duration(span)) }
    }
}

/// The ladder as a waterfall: each step's bar runs from the previous timed
/// step to its own time, so the longest bar is the slow step. A table of
/// the steps' times, gaps and notes follows.
pub(super) fn waterfall(steps: &[ReportStep], lang: Lang, now: Timestamp) -> Markup {
    let l = labels(lang);
    let times: Vec<Timestamp> = steps.iter().filter_map(|s| s.at).collect();
    let t0 = times.iter().min().copied();
    let t1 = times.iter().max().copied();
    let span = match (t0, t1) {
        (Some(a), Some(b)) => seconds_between(a, b).max(1.0),
        _ => 1.0,
    };
    let height = steps.len() as f64 * ROW + AXIS + 8.0;
    let mut previous: Option<Timestamp> = None;
    let rows: Vec<Markup> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let y = i as f64 * ROW + 4.0;
            let text_y = y + 14.0;
            let name = step_name(s.step, lang);
            let bar = match (s.at, t0) {
                (Some(at), Some(t0)) => {
                    // An older step's bar sits at its own time; the bars
                    // of the others run from the newest time before them.
                    let from = match s.older_than {
                        Some(_) => at,
                        None => previous.unwrap_or(at),
                    };
                    // A bar of no length ends at its time, so equal times
                    // share a column.
                    let x2 = x_of(at, t0, span).max(LABEL_WIDTH + 2.0);
                    let x1 = x_of(from, t0, span).min(x2 - 2.0);
                    if s.older_than.is_none() {
                        previous = Some(at);
                    }
                    let gap = s
                        .gap_seconds
                        .map(|g| format!("+{}", format_duration(g.round() as i64)))
                        .unwrap_or_else(|| clock_time(at, now));
                    let class = match (s.mark, s.older_than) {
                        (Some(_), _) => "bar slow",
                        (None, Some(_)) => "bar older",
                        (None, None) => "bar",
                    };
                    html! {
                        rect class=(class) x=(f(x1)) y=(f(y + 3.0)) width=(f(x2 - x1)) height="14" rx="2" {
                            title { (name) ": " (at.to_string()) }
                        }
                        text.value x=(f(LABEL_WIDTH + BARS_WIDTH + 8.0)) y=(f(text_y)) { (gap) }
                    }
                }
                _ if s.reached => html! {
                    text.value x=(f(LABEL_WIDTH + BARS_WIDTH + 8.0)) y=(f(text_y)) { "✔" }
                },
                _ => html! {
                    text.missing x=(f(LABEL_WIDTH + 4.0)) y=(f(text_y)) { (step_state(s, lang)) }
                },
            };
            let class = if s.reached { "label" } else { "label unreached" };
            html! {
                text class=(class) x="4" y=(f(text_y)) { (name) }
                (bar)
            }
        })
        .collect();
    html! {
        section.waterfall {
            h2 { (l.timeline) }
            p.dim { (l.timeline_hint) }
            svg.chart role="img" aria-label=(l.timeline)
                viewBox=(format!("0 0 {CHART_WIDTH} {}", f(height))) {
                @for r in rows { (r) }
                @if let (Some(a), Some(b)) = (t0, t1) {
                    (axis(a, b, steps.len() as f64 * ROW + 6.0, now))
                }
            }
            table.steps {
                thead { tr {
                    th { (say(lang, Message::new("triage.col_step"))) }
                    th { (say(lang, Message::new("html.col_time"))) }
                    th { (say(lang, Message::new("html.col_gap"))) }
                    th { (say(lang, Message::new("html.col_note"))) }
                } }
                tbody {
                    @for s in steps {
                        tr class=(if s.reached { "reached" } else { "unreached" }) {
                            td { (step_name(s.step, lang)) }
                            td { @if let Some(at) = s.at { (time(at, now)) } @else if !s.reached { (step_state(s, lang)) } }
                            td { @if let Some(g) = s.gap_seconds { "+" (format_duration(g.round() as i64)) } }
                            td {
                                (Message { id: s.note_id, args: s.note_args.clone() }.render(lang))
                                @if let Some(older) = s.older_than {
                                    " · " (older_words(older, lang))
                                }
                                @match s.mark {
                                    Some(Mark::Slowest) => { " ← " (l.slowest) },
                                    Some(Mark::Failing) => { " ← " (l.failing) },
                                    None => {},
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What a step not reached is: unknown when its data was not read,
/// restarting when its containers started and stopped, else not reached.
fn step_state(s: &ReportStep, lang: Lang) -> String {
    let l = labels(lang);
    if s.unread.is_some() {
        l.unknown.to_string()
    } else if s.restarted > 0 {
        say(
            lang,
            Message::new("timeline.restarted").arg("n", i64::from(s.restarted)),
        )
    } else {
        l.not_reached.to_string()
    }
}

/// Why a step's time is older than one before it.
fn older_words(step: Step, lang: Lang) -> String {
    if step == Step::Declared {
        say(lang, Message::new("timeline.before_declaration"))
    } else {
        say(
            lang,
            Message::new("timeline.older").arg("step", step_name(step, lang)),
        )
    }
}

/// Each Pod's four moments (stored, bound, started, ready) on one time
/// axis, from its first stored Pod to the report's clock.
pub(super) fn moments(pods: &[ReportPod], lang: Lang, now: Timestamp) -> Markup {
    let l = labels(lang);
    if pods.is_empty() {
        return html! {};
    }
    let all = |p: &ReportPod| {
        [
            p.moments.stored,
            p.moments.bound,
            p.moments.started,
            p.moments.ready,
        ]
    };
    let t0 = pods.iter().flat_map(all).flatten().min();
    let Some(t0) = t0 else {
        return html! {};
    };
    let t1 = pods
        .iter()
        .flat_map(all)
        .flatten()
        .max()
        .unwrap_or(now)
        .max(now);
    let span = seconds_between(t0, t1).max(1.0);
    let shown = &pods[..pods.len().min(CHART_PODS)];
    let height = shown.len() as f64 * ROW + AXIS + 8.0 + ROW;
    let names = ["stored", "bound", "started", "ready"];
    let words: Vec<String> = names
        .iter()
        .map(|n| say(lang, Message::new(step_message(n))))
        .collect();
    html! {
        section.moments {
            h2 { (say(lang, Message::new("html.moments"))) }
            svg.chart role="img" aria-label=(say(lang, Message::new("html.moments")))
                viewBox=(format!("0 0 {CHART_WIDTH} {}", f(height))) {
                @for (i, p) in shown.iter().enumerate() {
                    @let y = i as f64 * ROW + 4.0;
                    @let m = all(p);
                    @let start = m.iter().flatten().min().copied();
                    @let end = if p.moments.ready.is_some() { p.moments.ready } else { Some(now) };
                    text class=(if p.current { "label" } else { "label old" }) x="4" y=(f(y + 14.0)) {
                        (short(&p.name, 29))
                        title { (p.name) }
                    }
                    @if let (Some(a), Some(b)) = (start, end) {
                        line class=(if p.moments.ready.is_some() { "life" } else { "life waiting" })
                            x1=(f(x_of(a, t0, span))) y1=(f(y + 10.0)) x2=(f(x_of(b, t0, span))) y2=(f(y + 10.0)) {}
                    }
                    @for (k, at) in m.iter().enumerate() {
                        @if let Some(at) = at {
                            circle class=(format!("moment m-{}", names[k])) cx=(f(x_of(*at, t0, span))) cy=(f(y + 10.0)) r="5" {
                                title { (p.name) " · " (words[k]) ": " (at.to_string()) }
                            }
                        }
                    }
                    text.value x=(f(LABEL_WIDTH + BARS_WIDTH + 8.0)) y=(f(y + 14.0)) {
                        @if p.serving { (l.serving_yes) } @else { (step_name(p.last_step, lang)) }
                    }
                }
                @let axis_y = shown.len() as f64 * ROW + 6.0;
                (axis(t0, t1, axis_y, now))
                @for (k, w) in words.iter().enumerate() {
                    @let x = LABEL_WIDTH + k as f64 * 110.0;
                    circle class=(format!("moment m-{}", names[k])) cx=(f(x + 5.0)) cy=(f(axis_y + 30.0)) r="5" {}
                    text.tick x=(f(x + 14.0)) y=(f(axis_y + 34.0)) { (w) }
                }
            }
            @if pods.len() > shown.len() {
                p.dim { (say(lang, Message::new("html.more_pods").arg("n", pods.len() - shown.len()))) }
            }
        }
    }
}

pub(super) fn step_message(name: &str) -> &'static str {
    match name {
        "stored" => "step.stored",
        "bound" => "step.bound",
        "started" => "step.started",
        _ => "step.ready",
    }
}
