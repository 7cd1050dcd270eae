//! `mdiag explain`: the catalogue rendered for people.

use std::fmt::Write;

use super::Style;
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
        style.severity(e.severity, e.severity.as_str()),
        style.bold(e.title.get(style.lang))
    );
    if !e.symptoms.is_empty() {
        let _ = writeln!(
            out,
            "{} {}",
            style.dim(&format!("{}:", l.symptoms)),
            e.symptoms.join(", ")
        );
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
    for e in &catalogue.entries {
        let _ = writeln!(
            out,
            "{:<width$}  {:<7}  {}",
            e.id,
            e.severity.as_str(),
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
