//! The self-contained HTML report (`trace -o html`, `triage -o html`,
//! `gate --html FILE`): one file that opens anywhere, with inline CSS, the
//! step waterfall and the Pods' moments as inline SVG, and a few lines of
//! script for the copy buttons. It is built from the `mdiag/v1` report
//! types (the same facts as `-o json`), never from the terminal view.
//!
//! Every string that comes from the cluster (names, messages, logs) is
//! spliced through maud, which escapes it; only this module's own CSS and
//! script are written unescaped. A Content-Security-Policy forbids any
//! network fetch and any script but ours, so even a page edited by hand
//! loads nothing from elsewhere.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde::Serialize;

use super::Labels;
use super::alert::AlertReport;
use super::gate::GateReport;
use super::report::{ReportEvidence, ReportFinding, ReportPod, ReportStep, TraceReport};
use super::triage::{OutsideReport, TriageReport, target_arg};
use crate::words::{severity_word, step_name};
use mdiag_core::analysis::gate::Outcome;
use mdiag_core::analysis::{State, format_duration};
use mdiag_core::catalogue::{Lang, Message, Severity};
use mdiag_core::model::{ClockSource, Gap};

/// The page's style: light by default, dark when the reader's system asks
/// for it, plain black on white when printed.
const CSS: &str = include_str!("html.css");

/// The copy buttons: put the command next to the button on the clipboard
/// (the Clipboard API, or a selection and `copy` where it is refused, as
/// on some file:// pages), then say so on the button for a moment. The
/// last line marks the page as scripted, which the browser test reads.
const SCRIPT: &str = include_str!("html.js");

/// The SHA-256 of [`SCRIPT`], base64: the only script the page's policy
/// lets run. `tests/html_browser.rs` fails (a console error, and no
/// `data-js` mark) when the script changes and this does not:
/// `printf %s "$(cat src/render/html.js)" | openssl dgst -sha256 -binary | base64`
const SCRIPT_HASH: &str = "sha256-xF1n6T/uW5g8U6EgCQInld9ZLXRuVbJKwddLfqIWnPc=";

/// Pods drawn in the moments chart; the others are counted under it.
const CHART_PODS: usize = 40;

/// The page around a body: the language, the policy, the style, the script.
fn page(lang: Lang, title: &str, body: Markup) -> String {
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; img-src data:; base-uri 'none'; form-action 'none'"
    );
    let markup = html! {
        (DOCTYPE)
        html lang=(lang_attr(lang)) {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(csp);
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                main { (body) }
                footer {
                    (say(lang, Message::new("html.footer").arg("schema", super::report::SCHEMA)))
                }
                script { (PreEscaped(SCRIPT.trim_end())) }
            }
        }
    };
    let mut s = markup.into_string();
    s.push('\n');
    s
}

fn lang_attr(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en",
        Lang::Zh => "zh-CN",
    }
}

fn say(lang: Lang, m: Message) -> String {
    m.render(lang)
}

fn labels(lang: Lang) -> &'static Labels {
    Labels::for_lang(lang)
}

/// A serde enum's name as JSON spells it (`not-serving`), for classes.
fn slug<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// `12:03:04` on the day of `now`, else the date too; UTC.
fn clock_time(t: Timestamp, now: Timestamp) -> String {
    let z = t.to_zoned(TimeZone::UTC);
    if z.date() == now.to_zoned(TimeZone::UTC).date() {
        z.strftime("%H:%M:%S").to_string()
    } else {
        z.strftime("%Y-%m-%d %H:%M:%S").to_string()
    }
}

fn time(t: Timestamp, now: Timestamp) -> Markup {
    html! { time datetime=(t.to_string()) title=(t.to_string()) { (clock_time(t, now)) } }
}

fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()) as f64 / 1000.0
}

/// A command, with a button that copies it.
fn command(text: &str, lang: Lang) -> Markup {
    html! {
        div.cmd {
            code { (text) }
            button.copy type="button" data-done=(say(lang, Message::new("html.copied"))) {
                (say(lang, Message::new("html.copy")))
            }
        }
    }
}

/// The headline: the state's word and the sentence, coloured by the state.
fn headline(summary: &str, state_class: &str) -> Markup {
    let (word, sentence) = summary.split_once("  ").unwrap_or((summary, ""));
    html! {
        p class=(format!("headline state-{state_class}")) {
            span.word { (word) }
            " "
            span.sentence { (sentence) }
        }
    }
}

/// One workload's report: headline, next command, facts, tree, waterfall,
/// moments, findings and gaps. `prefix` keeps the ids of several on one
/// page apart.
fn trace_body(r: &TraceReport, lang: Lang, prefix: &str) -> Markup {
    let l = labels(lang);
    let now = r.clock.now;
    let clock_label = match r.clock.source {
        ClockSource::Live => l.clock_live,
        ClockSource::Capture => l.clock_capture,
        ClockSource::NewestTimestamp => l.clock_newest,
        ClockSource::At => "--at",
    };
    html! {
        (headline(&r.verdict.summary, &slug(&r.verdict.state)))
        @if let Some(next) = &r.verdict.next {
            div.next {
                span.label { (l.next) }
                (command(next, lang))
            }
        }
        p.facts {
            span { (r.target.kind) " " strong { (r.target.namespace) "/" (r.target.name) } }
            " · "
            span { (l.judged_at) " " (time(now, now)) " (" (clock_label) ")" }
            " · "
            span.source { (r.source.kind) " " (r.source.location) }
            @if let Some(c) = &r.source.context { " · " span { (c) } }
        }
        (tree(r, lang))
        (waterfall(&r.steps, lang, now))
        (moments(&r.pods, lang, now))
        (findings(&r.findings, lang, prefix, now))
        (gaps(&r.gaps, lang))
    }
}

/// The object tree: the target, its revisions (newest first), each with
/// its Pods.
fn tree(r: &TraceReport, lang: Lang) -> Markup {
    let l = labels(lang);
    let s = &r.verdict.serving;
    let revisions: Vec<Option<i64>> = {
        let mut v: Vec<Option<i64>> = s.revisions.iter().map(|x| x.revision).collect();
        for p in &r.pods {
            if !v.contains(&p.revision) {
                v.push(p.revision);
            }
        }
        v
    };
    let endpoints = match s.ready_endpoints {
        Some(n) => n.to_string(),
        None => "?".to_string(),
    };
    html! {
        section.tree {
            h2 { (l.chain) }
            ul {
                li {
                    span.kind { (r.target.kind) } " " strong { (r.target.name) }
                    " "
                    span.dim {
                        (say(lang, Message::new("html.replicas")
                            .arg("desired", r.replicas.desired)
                            .arg("current", r.replicas.current)
                            .arg("ready", r.replicas.ready)
                            .arg("endpoints", endpoints.clone())
                            .arg("old", r.replicas.old)))
                    }
                    ul {
                        @for rev in &revisions {
                            @let counts = s.revisions.iter().find(|x| x.revision == *rev);
                            @let pods: Vec<&ReportPod> = r.pods.iter().filter(|p| p.revision == *rev).collect();
                            li {
                                span.kind { (say(lang, Message::new("html.revision").arg("revision", rev.map_or("?".to_string(), |n| n.to_string())))) }
                                @if counts.is_some_and(|c| c.current) || (counts.is_none() && pods.iter().any(|p| p.current)) {
                                    " " span.tag { (say(lang, Message::new("html.current"))) }
                                }
                                @if let Some(c) = counts {
                                    " "
                                    span.dim {
                                        (say(lang, Message::new("html.revision_counts")
                                            .arg("pods", c.pods)
                                            .arg("ready", c.ready)
                                            .arg("endpoints", c.ready_endpoints.map_or("?".to_string(), |n| n.to_string()))))
                                    }
                                }
                                @if !pods.is_empty() {
                                    ul {
                                        @for p in pods {
                                            li { (pod_line(p, lang)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn pod_line(p: &ReportPod, lang: Lang) -> Markup {
    let l = labels(lang);
    html! {
        span.kind { "Pod" } " " code.name { (p.name) }
        " "
        @if p.serving {
            span.tag.ok { (l.serving_yes) }
        } @else {
            span.tag.no { (l.serving_no) }
        }
        " "
        span.dim {
            (step_name(p.last_step, lang))
            @if let Some(phase) = &p.phase { " · " (phase) }
            @if let Some(reason) = &p.reason { " · " span.reason { (reason) } }
            @if p.restarts > 0 {
                " · " (say(lang, Message::new("pod.restarts").arg("count", i64::from(p.restarts)).arg("n", i64::from(p.restarts))))
            }
            @if let Some(node) = &p.node { " · " (node) }
            @if p.held { " · " (say(lang, Message::new("html.held"))) }
            @if p.terminating { " · " (say(lang, Message::new("html.terminating"))) }
        }
    }
}

/// Chart geometry: the label column, the bars, the text after them.
const CHART_WIDTH: f64 = 760.0;
const LABEL_WIDTH: f64 = 215.0;
const BARS_WIDTH: f64 = 440.0;
const ROW: f64 = 22.0;
const AXIS: f64 = 20.0;

/// Where a time falls on a chart from `t0` spanning `span` seconds.
fn x_of(t: Timestamp, t0: Timestamp, span: f64) -> f64 {
    LABEL_WIDTH + (seconds_between(t0, t).max(0.0) / span).min(1.0) * BARS_WIDTH
}

fn f(v: f64) -> String {
    format!("{v:.1}")
}

/// A time axis under a chart: its start, its end and the span between.
fn axis(t0: Timestamp, t1: Timestamp, y: f64, now: Timestamp) -> Markup {
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
fn waterfall(steps: &[ReportStep], lang: Lang, now: Timestamp) -> Markup {
    let l = labels(lang);
    let times: Vec<Timestamp> = steps.iter().filter_map(|s| s.at).collect();
    let t0 = times.iter().min().copied();
    let t1 = times.iter().max().copied();
    let span = match (t0, t1) {
        (Some(a), Some(b)) => seconds_between(a, b).max(1.0),
        _ => 1.0,
    };
    let slowest = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.gap_seconds.map(|g| (i, g)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, g)| *g > 0.0)
        .map(|(i, _)| i);
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
                    let from = previous.unwrap_or(at);
                    let x1 = x_of(from, t0, span);
                    let x2 = x_of(at, t0, span).max(x1 + 2.0);
                    previous = Some(at);
                    let gap = s
                        .gap_seconds
                        .map(|g| format!("+{}", format_duration(g.round() as i64)))
                        .unwrap_or_else(|| clock_time(at, now));
                    let class = if Some(i) == slowest { "bar slow" } else { "bar" };
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
                    text.missing x=(f(LABEL_WIDTH + 4.0)) y=(f(text_y)) { (l.not_reached) }
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
                            td { @if let Some(at) = s.at { (time(at, now)) } @else if !s.reached { (l.not_reached) } }
                            td { @if let Some(g) = s.gap_seconds { "+" (format_duration(g.round() as i64)) } }
                            td { (Message { id: s.note_id, args: s.note_args.clone() }.render(lang)) }
                        }
                    }
                }
            }
        }
    }
}

/// Each Pod's four moments (stored, bound, started, ready) on one time
/// axis, from its first stored Pod to the report's clock.
fn moments(pods: &[ReportPod], lang: Lang, now: Timestamp) -> Markup {
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

fn step_message(name: &str) -> &'static str {
    match name {
        "stored" => "step.stored",
        "bound" => "step.bound",
        "started" => "step.started",
        _ => "step.ready",
    }
}

/// At most `n` characters, with an ellipsis when cut.
fn short(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(n.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

fn severity_class(s: Severity) -> &'static str {
    s.as_str()
}

/// The findings, each with its evidence (and log tail), cause, checks,
/// fix and verify.
fn findings(list: &[ReportFinding], lang: Lang, prefix: &str, now: Timestamp) -> Markup {
    let l = labels(lang);
    html! {
        section.findings {
            h2 { (l.findings) " (" (list.len()) ")" }
            @if list.is_empty() {
                p { (l.no_findings) }
            }
            @for (i, fd) in list.iter().enumerate() {
                article class=(format!("finding sev-{}", severity_class(fd.severity)))
                    id=(format!("{prefix}finding-{i}-{}", fd.id)) data-finding=(fd.id) {
                    header {
                        span class=(format!("badge sev-{}", severity_class(fd.severity))) { (severity_word(fd.severity, lang)) }
                        " "
                        code.id { (fd.id) }
                        " "
                        strong.title { (fd.title) }
                    }
                    p.subject { span.kind { (fd.subject.kind) } " " code.name { (fd.subject.name) } " · " (step_name(fd.step, lang)) }
                    p.detail { (detail(fd, lang)) }
                    @if !fd.evidence.is_empty() {
                        h4 { (l.evidence) }
                        ul.evidence {
                            @for e in &fd.evidence { li { (evidence(e, lang, now)) } }
                        }
                    }
                    @if !fd.cause.is_empty() {
                        h4 { (l.cause) }
                        p { (fd.cause) }
                    }
                    @if !fd.check.is_empty() {
                        h4 { (l.check) }
                        @for c in &fd.check { (command(c, lang)) }
                    }
                    @if !fd.fix.is_empty() {
                        h4 { (l.fix) }
                        p { (fd.fix) }
                    }
                    @if !fd.verify.is_empty() {
                        h4 { (l.verify) }
                        p { (fd.verify) }
                    }
                }
            }
        }
    }
}

/// The finding's detail in the page's language, with how many other Pods
/// share it.
fn detail(fd: &ReportFinding, lang: Lang) -> String {
    let mut text = Message {
        id: fd.detail_id,
        args: fd.detail_args.clone(),
    }
    .render(lang);
    if fd.others > 0 {
        text.push_str(&say(
            lang,
            Message::new("finding.others").arg("n", fd.others),
        ));
    }
    text
}

fn evidence(e: &ReportEvidence, lang: Lang, now: Timestamp) -> Markup {
    let l = labels(lang);
    let field = match (&e.field_message, e.field.strip_prefix("event ")) {
        (Some(m), _) => m.render(lang),
        (None, Some(reason)) => say(lang, Message::new("evidence.event").arg("reason", reason)),
        (None, None) => e.field.clone(),
    };
    let value = match &e.value_message {
        Some(m) => m.render(lang),
        None => e.value.clone(),
    };
    html! {
        code.name { (e.object) } " "
        span.field { (field) } ": "
        span.value { (value) }
        @if let Some(at) = e.at { " " span.dim { "(" (time(at, now)) ")" } }
        @if let Some(log) = &e.log {
            figure.log {
                figcaption {
                    (l.log) " · " (log.container) " · "
                    (if log.previous { l.previous_run } else { l.current_run })
                    " · "
                    (say(lang, Message::new("html.log_lines")
                        .arg("shown", log.lines.len())
                        .arg("total", log.total_lines)))
                    @if log.truncated { " · " (say(lang, Message::new("html.log_truncated"))) }
                }
                pre { code { @for line in &log.lines { (line) "\n" } } }
            }
        }
    }
}

/// What could not be read, with the command that would add a kind a dump
/// lacks.
fn gaps(list: &[Gap], lang: Lang) -> Markup {
    let l = labels(lang);
    if list.is_empty() {
        return html! {};
    }
    html! {
        section.gaps {
            h2 { (l.gaps) }
            ul {
                @for g in list {
                    li data-gap=(format!("{} {}", g.verb, g.resource)) {
                        (gap_line(g, lang))
                        @if let Some(c) = &g.complete_with {
                            div.complete { span.label { (l.complete_with) } (command(c, lang)) }
                        }
                    }
                }
            }
        }
    }
}

/// A gap in words, as the terminal view says it.
fn gap_line(g: &Gap, lang: Lang) -> String {
    let scope: mdiag_core::catalogue::Arg = match (&g.namespace, &g.complete_with) {
        (Some(n), _) => Message::new("gap.in").arg("namespace", n).into(),
        (None, Some(_)) => "".into(),
        (None, None) => Message::new("gap.cluster").into(),
    };
    let reason = if g.reason == Gap::NOT_IN_DUMP {
        say(lang, Message::new("gap.not_in_dump"))
    } else {
        g.reason.clone()
    };
    say(
        lang,
        Message::new("gap.line")
            .arg("verb", &g.verb)
            .arg("resource", &g.resource)
            .arg("scope", scope)
            .arg("reason", reason),
    )
}

/// `trace -o html`.
pub fn trace(r: &TraceReport, lang: Lang) -> String {
    let title = format!(
        "mdiag trace {}/{} — {}",
        r.target.namespace, r.target.name, r.verdict.summary
    );
    let body = html! {
        header.page {
            h1 { "mdiag trace " span.target { (r.target.namespace) "/" (target_arg(&r.target.kind, &r.target.name)) } }
        }
        (trace_body(r, lang, ""))
    };
    page(lang, &title, body)
}

/// The state word of a workload (the headline's first words).
fn word(summary: &str) -> &str {
    summary.split_once("  ").map_or(summary, |(w, _)| w)
}

/// `triage -o html`: the ranked table, what fails outside every workload,
/// the gaps, then a section per workload.
pub fn triage(r: &TriageReport, lang: Lang) -> String {
    let l = labels(lang);
    let col = |id: &'static str| say(lang, Message::new(id));
    let title = say(
        lang,
        Message::new("html.triage_title")
            .arg("total", r.total)
            .arg("healthy", r.healthy),
    );
    let body = html! {
        header.page {
            h1 { "mdiag triage" }
            p.facts { (title) " · " (l.judged_at) " " (time(r.clock.now, r.clock.now)) }
        }
        section.ranked {
            h2 { (say(lang, Message::new("html.workloads"))) }
            table.ranked {
                thead { tr {
                    th { "#" }
                    th { (col("triage.col_namespace")) }
                    th { (col("triage.col_workload")) }
                    th { (col("triage.col_state")) }
                    th { (col("html.col_headline")) }
                    th { (col("triage.col_lead")) }
                } }
                tbody {
                    @for (i, item) in r.items.iter().enumerate() {
                        @let lead = item.verdict.lead.as_deref().and_then(|id| item.findings.iter().find(|f| f.id == id));
                        tr {
                            td { (i + 1) }
                            td { (item.target.namespace) }
                            td { a href=(format!("#w{}", i + 1)) { (target_arg(&item.target.kind, &item.target.name)) } }
                            td { span class=(format!("state state-{}", slug(&item.verdict.state))) { (word(&item.verdict.summary)) } }
                            td.sentence { (item.verdict.summary.split_once("  ").map_or("", |(_, s)| s)) }
                            td {
                                @if let Some(fd) = lead {
                                    span class=(format!("badge sev-{}", severity_class(fd.severity))) { (severity_word(fd.severity, lang)) }
                                    " " code.id { (fd.id) }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !r.outside.is_empty() {
            section.outside {
                h2 { (say(lang, Message::new("html.outside"))) }
                @for (i, o) in r.outside.iter().enumerate() {
                    (outside(o, lang, i, r.clock.now))
                }
            }
        }
        (gaps(&r.gaps, lang))
        @for (i, item) in r.items.iter().enumerate() {
            section.workload id=(format!("w{}", i + 1)) {
                h2.workload {
                    (i + 1) ". " span.kind { (item.target.kind) } " "
                    (item.target.namespace) "/" (item.target.name)
                }
                (trace_body(item, lang, &format!("w{}-", i + 1)))
            }
        }
    };
    page(lang, "mdiag triage", body)
}

fn outside(o: &OutsideReport, lang: Lang, i: usize, now: Timestamp) -> Markup {
    html! {
        div.outside-item id=(format!("o{}", i + 1)) {
            h3 {
                span.kind { (o.kind) } " " (o.namespace) "/" (o.name)
                @if o.state == Some(State::NotServing) {
                    " " span class="state state-not-serving" { (say(lang, Message::new("headline.word_not_serving"))) }
                }
            }
            (findings(&o.findings, lang, &format!("o{}-", i + 1), now))
            (gaps(&o.gaps, lang))
        }
    }
}

/// `gate --html FILE` (and `gate -o html`): the outcome, why, the checks,
/// the Helm release, then the trace of the last moment judged.
pub fn gate(r: &GateReport, lang: Lang) -> String {
    let outcome_id = match r.outcome {
        Outcome::Converged => "html.outcome_converged",
        Outcome::Failed => "html.outcome_failed",
        Outcome::TimedOut => "html.outcome_timed_out",
        Outcome::CouldNotDecide => "html.outcome_could_not_decide",
        Outcome::Interrupted => "html.outcome_interrupted",
    };
    let outcome_class = match r.outcome {
        Outcome::Converged => "serving",
        Outcome::Failed => "not-serving",
        _ => "progressing",
    };
    let took = super::gate::elapsed_text(std::time::Duration::from_secs_f64(
        r.elapsed_seconds.max(0.0),
    ));
    let g = &r.gate;
    let reason = g
        .said_reason
        .as_ref()
        .map(|m| m.render(lang))
        .or_else(|| g.reason.clone());
    let waiting = g
        .waiting
        .as_ref()
        .map(|m| m.render(lang))
        .or_else(|| g.waiting_for.clone());
    let (ns, name) = match (&r.trace, &r.target) {
        (Some(t), _) => (t.target.namespace.clone(), t.target.name.clone()),
        (None, Some(t)) => (t.namespace.clone(), t.name.clone()),
        (None, None) => (String::new(), String::new()),
    };
    let outcome_word = say(lang, Message::new(outcome_id));
    let body = html! {
        header.page {
            h1 { "mdiag gate " span.target { (ns) "/" (name) } }
        }
        p class=(format!("headline outcome state-{outcome_class}")) data-outcome=(r.outcome.as_str()) {
            span.word { (outcome_word) }
            " "
            span.sentence { (say(lang, Message::new("html.took").arg("took", took))) }
        }
        @if let Some(reason) = &reason { p.why { (reason) } }
        @if let Some(w) = &waiting { p.why { (say(lang, Message::new("html.waiting_for").arg("waiting", w.as_str()))) } }
        @if let Some(d) = &g.decided_by { p.dim { (say(lang, Message::new("html.decided_by").arg("by", d.as_str()))) } }
        @if !g.checks.is_empty() {
            section.checks {
                h2 { (say(lang, Message::new("html.checks"))) }
                ul.checks {
                    @for c in &g.checks {
                        li class=(if c.passed { "passed" } else { "waiting" }) {
                            span.mark { (if c.passed { "✔" } else { "·" }) } " "
                            code { (c.name) } " "
                            (c.said_detail.as_ref().map_or_else(|| c.detail.clone(), |m| m.render(lang)))
                        }
                    }
                }
            }
        }
        @if let Some(h) = &g.helm {
            section.helm {
                h2 { "Helm" }
                p {
                    code { (h.name) }
                    @if let (Some(rev), Some(status)) = (h.revision, &h.status) {
                        " " (say(lang, Message::new("gate.helm").arg("name", h.name.as_str()).arg("revision", rev).arg("status", status.as_str())))
                    }
                }
                @if !h.said_notes.is_empty() {
                    ul { @for n in &h.said_notes { li { (n.render(lang)) } } }
                } @else if !h.notes.is_empty() {
                    ul { @for n in &h.notes { li { (n) } } }
                }
            }
        }
        @if let Some(file) = &g.evidence_file {
            p.dim { (say(lang, Message::new("html.evidence_file"))) " " code { (file) } }
        }
        @if let Some(t) = &r.trace {
            (trace_body(t, lang, ""))
        }
    };
    let title = format!("mdiag gate {ns}/{name} — {outcome_word}");
    page(lang, &title, body)
}

/// `triage --alert FILE -o html`: the alerts, each with the workload it is
/// about (linked) or why none was found, then a section per workload.
pub fn alert(r: &AlertReport, lang: Lang) -> String {
    let now = r
        .items
        .first()
        .map_or_else(Timestamp::now, |i| i.trace.clock.now);
    let body = html! {
        header.page {
            h1 { "mdiag triage --alert" }
        }
        section.alerts {
            h2 { (say(lang, Message::new("html.alerts"))) }
            table.ranked {
                thead { tr {
                    th { (say(lang, Message::new("html.col_alert"))) }
                    th { (say(lang, Message::new("html.col_status"))) }
                    th { (say(lang, Message::new("html.col_since"))) }
                    th { (say(lang, Message::new("triage.col_workload"))) }
                } }
                tbody {
                    @for a in &r.alerts {
                        tr data-alert=(a.alertname) {
                            td { code.id { (a.alertname) } }
                            td { (a.status.as_deref().unwrap_or("")) }
                            td { @if let Some(t) = a.starts_at { (time(t, now)) } }
                            td.sentence {
                                @if let Some(i) = a.item
                                    && let Some(item) = r.items.get(i) {
                                    a href=(format!("#w{}", i + 1)) {
                                        (item.trace.target.namespace) "/"
                                        (target_arg(&item.trace.target.kind, &item.trace.target.name))
                                    }
                                    " "
                                }
                                @let note = match a.note_id {
                                    Some(id) => Some(Message { id, args: a.note_args.clone() }.render(lang)),
                                    None => a.note.clone(),
                                };
                                @if let Some(n) = note { span.dim { (n) } }
                            }
                        }
                    }
                }
            }
        }
        @for (i, item) in r.items.iter().enumerate() {
            section.workload id=(format!("w{}", i + 1)) {
                h2.workload {
                    (i + 1) ". " span.kind { (item.trace.target.kind) } " "
                    (item.trace.target.namespace) "/" (item.trace.target.name)
                }
                (trace_body(&item.trace, lang, &format!("w{}-", i + 1)))
            }
        }
    };
    page(lang, "mdiag triage --alert", body)
}
