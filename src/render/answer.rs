//! The short text answers of `mdiag mcp`'s tools, beside their `mdiag/v1`
//! report: the headline and the `next` command, for an agent to read first
//! (the report holds every fact).

use super::explain::ExplainReport;
use super::headline;
use super::triage::{count_line, target_arg};
use mdiag_core::analysis::Diagnosis;
use mdiag_core::analysis::contents::Contents;
use mdiag_core::analysis::triage::Triage;
use mdiag_core::catalogue::{Arg, Lang, Message};
use mdiag_core::command::Command;
use mdiag_core::model::OriginKind;

/// A trace: the headline, then `next: COMMAND` when there is one.
pub fn trace(d: &Diagnosis, lang: Lang) -> String {
    let mut out = headline::text(d, lang);
    push_next(
        &mut out,
        d.verdict.next.as_ref().map(Command::shell).as_deref(),
        lang,
    );
    out
}

/// A triage: the count line, then the worst workload that is not healthy
/// with its headline and `next` command.
pub fn triage(t: &Triage, lang: Lang) -> String {
    let mut out = count_line(t, lang).trim_end().to_string();
    if let Some(worst) = t.items.iter().find(|d| !d.healthy) {
        out.push('\n');
        out.push_str(&workload_line(worst, lang));
        push_next(
            &mut out,
            worst.verdict.next.as_ref().map(Command::shell).as_deref(),
            lang,
        );
    }
    out
}

/// `explain`: each entry's id, severity and title; with a target, the
/// first check of the first entry (its names filled in) as `next`.
pub fn explain(r: &ExplainReport, lang: Lang) -> String {
    if r.query.is_none() {
        let ids: Vec<Arg> = r.entries.iter().map(|e| Arg::from(&e.id)).collect();
        return Message::new("answer.catalogue")
            .arg("n", r.entries.len())
            .arg("ids", Arg::list(ids, "sep.comma"))
            .render(lang);
    }
    let lines: Vec<String> = r
        .entries
        .iter()
        .map(|e| {
            Message::new("answer.entry")
                .arg("id", &e.id)
                .arg("severity", crate::words::severity_word(e.severity, lang))
                .arg("title", &e.title)
                .render(lang)
        })
        .collect();
    let mut text = lines.join("\n");
    if r.target.is_some() {
        let next = r.entries.first().and_then(|e| e.check.first());
        push_next(&mut text, next.map(String::as_str), lang);
    }
    text
}

/// A snapshot file: where and when it was captured, what it holds, then
/// the triage answer of it (or that it holds no workload).
pub fn summary(c: &Contents, t: &Triage, lang: Lang) -> String {
    let kind = match c.origin.kind {
        OriginKind::KubectlDump => Message::new("answer.kind_dump"),
        _ => Message::new("answer.kind_snapshot"),
    };
    let when = match (c.origin.captured_at, c.origin.newest_seen) {
        (Some(at), _) => Message::new("answer.captured").arg("at", at.to_string()),
        (None, Some(at)) => Message::new("answer.not_captured").arg("at", at.to_string()),
        (None, None) => Message::new("answer.no_time"),
    };
    let redacted: u32 = c.redactions.iter().map(|r| r.count).sum();
    let head = Message::new("answer.snapshot")
        .arg("file", &c.origin.location)
        .arg("kind", kind)
        .arg("when", when)
        .arg("objects", c.total())
        .arg("logs", c.logs.len())
        .arg("gaps", c.gaps.len())
        .arg("redactions", redacted)
        .render(lang);
    let rest = if t.is_empty() {
        Message::new("triage.no_workloads").render(lang)
    } else {
        triage(t, lang)
    };
    format!("{head}\n{rest}")
}

/// `deploy/NAME -n NS: HEADLINE`.
fn workload_line(d: &Diagnosis, lang: Lang) -> String {
    Message::new("answer.workload")
        .arg("workload", target_arg(&d.target.kind, &d.target.name))
        .arg("namespace", &d.target.namespace)
        .arg("headline", headline::text(d, lang))
        .render(lang)
}

/// `\nnext: COMMAND`, the label as the trace view writes it.
fn push_next(out: &mut String, next: Option<&str>, lang: Lang) {
    if let Some(next) = next {
        let label = super::Labels::for_lang(lang).next;
        // A full-width colon has its space in it (`下一步：`).
        let gap = if label.ends_with('：') { "" } else { " " };
        out.push_str(&format!("\n{label}{gap}{next}"));
    }
}
