//! The report's findings, their evidence, and the gaps.

use super::*;

/// At most `n` characters, with an ellipsis when cut.
pub(super) fn short(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(n.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

pub(super) fn severity_class(s: Severity) -> &'static str {
    s.as_str()
}

/// The findings, each with its evidence (and log tail), cause, checks,
/// fix and verify.
pub(super) fn findings(list: &[ReportFinding], lang: Lang, prefix: &str, now: Timestamp) -> Markup {
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
                        @for c in &fd.check { (command(&c.shell(), lang)) }
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
pub(super) fn detail(fd: &ReportFinding, lang: Lang) -> String {
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

pub(super) fn evidence(e: &ReportEvidence, lang: Lang, now: Timestamp) -> Markup {
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
pub(super) fn gaps(list: &[Gap], lang: Lang) -> Markup {
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
                            div.complete { span.label { (l.complete_with) } (command(&c.shell(), lang)) }
                        }
                    }
                }
            }
        }
    }
}

/// A gap in words, as the terminal view says it.
pub(super) fn gap_line(g: &Gap, lang: Lang) -> String {
    crate::words::gap_sentence(g, lang)
}
