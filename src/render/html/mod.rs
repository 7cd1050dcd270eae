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
//!
//! This file holds the page frame and the four pages; the chain, the charts
//! and the findings have a file each.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde::Serialize;

use crate::Labels;
use crate::alert::AlertReport;
use crate::gate::GateReport;
use crate::report::{ReportEvidence, ReportFinding, ReportPod, ReportStep, TraceReport};
use crate::triage::{OutsideReport, TriageReport, target_arg};
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
/// `printf %s "$(cat src/render/html/html.js)" | openssl dgst -sha256 -binary | base64`
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

mod chain;
mod charts;
mod findings;

use chain::trace_body;
use charts::{moments, waterfall};
use findings::{findings, gaps, severity_class, short};

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
    // Several clusters: a context column, and a line for each cluster.
    let contexts = !r.contexts.is_empty();
    let body = html! {
        header.page {
            h1 { "mdiag triage" }
            p.facts { (title) " · " (l.judged_at) " " (time(r.clock.now, r.clock.now)) }
            @if contexts {
                ul.contexts {
                    @for c in &r.contexts {
                        li data-context=(c.context) data-read=(c.read) {
                            code { (c.context) } " "
                            @match (&c.server, &c.reason) {
                                (Some(server), _) => { (server) }
                                (None, Some(reason)) => { span.unread { (reason) } }
                                (None, None) => {}
                            }
                        }
                    }
                }
            }
        }
        section.ranked {
            h2 { (say(lang, Message::new("html.workloads"))) }
            table.ranked {
                thead { tr {
                    th { "#" }
                    @if contexts { th { (col("triage.col_context")) } }
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
                            @if contexts { td { (item.target.context.as_deref().unwrap_or("")) } }
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
                    @if let Some(c) = &item.target.context { span.context { (c) } " " }
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
                span.kind { (o.kind) } " "
                @if let Some(c) = &o.context { span.context { (c) } " " }
                (o.namespace) "/" (o.name)
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
