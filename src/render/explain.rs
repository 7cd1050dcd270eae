//! `mdiag explain`: the catalogue rendered for people.

use std::fmt::Write;

use serde::Serialize;

use super::Style;
use super::report::SCHEMA;
use crate::words::severity_word;
use mdiag_core::catalogue::{Catalogue, Entry, Lang, Severity, template_as_run};
use mdiag_core::command::Command;
use mdiag_core::model::TemplateVars;

/// `explain -o json`: the catalogue entries found, in `--lang`.
#[derive(Debug, Serialize)]
pub struct ExplainReport {
    pub schema: &'static str,
    pub kind: &'static str,
    /// The id, symptom or word looked up; null: every entry (no argument,
    /// or `--list`).
    pub query: Option<String>,
    /// The target whose real names fill the check commands, as given.
    pub target: Option<String>,
    pub entries: Vec<ExplainEntry>,
}

#[derive(Debug, Serialize)]
pub struct ExplainEntry {
    pub id: String,
    pub severity: Severity,
    pub title: String,
    /// The reasons and states the cluster shows (`CrashLoopBackOff`).
    pub symptoms: Vec<String>,
    /// Other words that find it (`crashloop`, `137`).
    pub aliases: Vec<String>,
    pub cause: String,
    /// How to tell it from its neighbours.
    pub judge: String,
    /// Read-only commands: with a target, its real names filled in (those
    /// about a ModelService left out when it has none); without one, the
    /// `{placeholders}` as the catalogue holds them.
    pub check: Vec<String>,
    pub fix: String,
    pub verify: String,
}

/// The report of `entries`, each with the target's names when one was named.
pub fn report(
    query: Option<&str>,
    target: Option<&str>,
    entries: &[(&Entry, Option<TemplateVars>)],
    lang: Lang,
) -> ExplainReport {
    ExplainReport {
        schema: SCHEMA,
        kind: "Explain",
        query: query.map(str::to_string),
        target: target.map(str::to_string),
        entries: entries
            .iter()
            .map(|(e, vars)| ExplainEntry {
                id: e.id.clone(),
                severity: e.severity,
                title: e.title.get(lang).to_string(),
                symptoms: e.symptoms.clone(),
                aliases: e.aliases.clone(),
                cause: e.cause.get(lang).to_string(),
                judge: e.judge.get(lang).to_string(),
                check: match vars {
                    Some(vars) => e.checks_for(vars).iter().map(Command::shell).collect(),
                    None => e.check.iter().map(|t| template_as_run(t)).collect(),
                },
                fix: e.fix.get(lang).to_string(),
                verify: e.verify.get(lang).to_string(),
            })
            .collect(),
    }
}

/// An entry as the catalogue holds it: the check commands with their
/// `{placeholders}` for the names.
pub fn entry(e: &Entry, style: &Style) -> String {
    let checks: Vec<String> = e.check.iter().map(|t| template_as_run(t)).collect();
    render_entry(e, &checks, style)
}

/// An entry about one target: `vars` hold its real names, filled into the
/// check commands (those about a ModelService left out when it has none).
pub fn entry_for(e: &Entry, vars: &TemplateVars, style: &Style) -> String {
    let checks: Vec<String> = e.checks_for(vars).iter().map(Command::shell).collect();
    render_entry(e, &checks, style)
}

fn render_entry(e: &Entry, checks: &[String], style: &Style) -> String {
    let l = style.labels();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}  {}  {}",
        style.bold(&e.id),
        style.severity(e.severity, &severity_word(e.severity, style.lang)),
        style.bold(e.title.get(style.lang))
    );
    if !e.symptoms.is_empty() {
        // `symptoms: a, b`; a full-width colon has its space in it.
        let label = mdiag_core::catalogue::Message::new("explain.label")
            .arg("label", l.symptoms)
            .render(style.lang);
        let gap = if label.ends_with('：') { "" } else { " " };
        let _ = writeln!(out, "{}{gap}{}", style.dim(&label), e.symptoms.join(", "));
    }
    let sections = [
        (l.cause, e.cause.get(style.lang)),
        (l.judge, e.judge.get(style.lang)),
    ];
    for (label, text) in sections {
        let _ = writeln!(out, "\n{}\n{}", style.bold(label), indent(text));
    }
    let _ = writeln!(out, "\n{}", style.bold(l.check));
    for c in checks {
        let _ = writeln!(out, "  {c}");
    }
    for (label, text) in [
        (l.fix, e.fix.get(style.lang)),
        (l.verify, e.verify.get(style.lang)),
    ] {
        let _ = writeln!(out, "\n{}\n{}", style.bold(label), indent(text));
    }
    out
}

pub fn list(catalogue: &Catalogue, style: &Style) -> String {
    let mut out = String::new();
    let width = catalogue
        .entries
        .iter()
        .map(|e| e.id.len())
        .max()
        .unwrap_or(0);
    let words: Vec<String> = catalogue
        .entries
        .iter()
        .map(|e| severity_word(e.severity, style.lang))
        .collect();
    let word_width = words
        .iter()
        .map(|w| super::layout::width(w))
        .max()
        .unwrap_or(0);
    for (e, word) in catalogue.entries.iter().zip(&words) {
        let _ = writeln!(
            out,
            "{:<width$}  {}  {}",
            e.id,
            super::layout::pad(word, word_width),
            e.title.get(style.lang)
        );
    }
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
