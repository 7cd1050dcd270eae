//! `mdiag explain`: the catalogue rendered for people.

use std::fmt::Write;

use super::Style;
use super::human::severity_word;
use crate::catalogue::{Catalogue, Entry, as_run};
use crate::model::TemplateVars;

/// An entry as the catalogue holds it: the check commands with their
/// `{placeholders}` for the names.
pub fn entry(e: &Entry, style: &Style) -> String {
    let checks: Vec<String> = e.check.iter().cloned().map(as_run).collect();
    render_entry(e, &checks, style)
}

/// An entry about one target: `vars` hold its real names, filled into the
/// check commands (those about a ModelService left out when it has none).
pub fn entry_for(e: &Entry, vars: &TemplateVars, style: &Style) -> String {
    render_entry(e, &e.checks_for(vars), style)
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
        let label = crate::catalogue::Message::new("explain.label")
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
