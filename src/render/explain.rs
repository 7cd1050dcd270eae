//! `mdiag explain`: the catalogue rendered for people.

use std::fmt::Write;

use serde::Serialize;

use super::Style;
use super::report::SCHEMA;
use crate::words::severity_word;
use mdiag_core::catalogue::{Catalogue, Entry, Lang, Message, Severity, template_shown};
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
                    None => e.check.iter().map(|t| template_shown(t).shell()).collect(),
                },
                fix: e.fix.get(lang).to_string(),
                verify: e.verify.get(lang).to_string(),
            })
            .collect(),
    }
}

/// The entries a query found, ranked as the catalogue's lookup ranks
/// them; more than one gets a line first that says how many and which,
/// so the second is not missed below the first's screen. Each entry with
/// the target's names when one was named.
pub fn entries(query: &str, found: &[(&Entry, Option<TemplateVars>)], style: &Style) -> String {
    let mut out = String::new();
    if found.len() > 1 {
        let ids: Vec<String> = found.iter().map(|(e, _)| e.id.clone()).collect();
        let header = Message::new("explain.matches")
            .arg("n", found.len())
            .arg("query", query)
            .arg("ids", ids.join(", "))
            .render(style.lang);
        for line in super::layout::wrap(&header, style.width, "", "  ") {
            let _ = writeln!(out, "{}", style.bold(&line));
        }
        out.push('\n');
    }
    let shown: Vec<String> = found
        .iter()
        .map(|(e, vars)| match vars {
            None => entry(e, style),
            Some(vars) => entry_for(e, vars, style),
        })
        .collect();
    out.push_str(&shown.join("\n---\n\n"));
    out
}

/// An entry as the catalogue holds it: the check commands with a
/// `<placeholder>` for each name.
pub fn entry(e: &Entry, style: &Style) -> String {
    let checks: Vec<Command> = e.check.iter().map(|t| template_shown(t)).collect();
    render_entry(e, &checks, style)
}

/// An entry about one target: `vars` hold its real names, filled into the
/// check commands (those about a ModelService left out when it has none).
pub fn entry_for(e: &Entry, vars: &TemplateVars, style: &Style) -> String {
    render_entry(e, &e.checks_for(vars), style)
}

/// One entry, its prose wrapped to the width under its labels and each
/// check command whole (wrapped at its arguments with ` \`).
fn render_entry(e: &Entry, checks: &[Command], style: &Style) -> String {
    let l = style.labels();
    let width = style.width;
    let mut out = String::new();
    // `id  severity  title`, the title wrapped under itself; painted after
    // wrapping, so the width counts only what is seen.
    let word = severity_word(e.severity, style.lang);
    let lead = super::layout::width(&format!("{}  {word}  ", e.id));
    let title = super::layout::wrap(e.title.get(style.lang), width, &" ".repeat(lead), "  ");
    for (i, line) in title.iter().enumerate() {
        if i == 0 {
            let _ = writeln!(
                out,
                "{}  {}  {}",
                style.bold(&e.id),
                style.severity(e.severity, &word),
                style.bold(line.trim_start())
            );
        } else {
            let _ = writeln!(out, "{}", style.bold(line));
        }
    }
    if !e.symptoms.is_empty() {
        // `symptoms: a, b`; a full-width colon has its space in it.
        let label = Message::new("explain.label")
            .arg("label", l.symptoms)
            .render(style.lang);
        let gap = if label.ends_with('：') { "" } else { " " };
        let text = format!("{label}{gap}{}", e.symptoms.join(", "));
        for (i, line) in super::layout::wrap(&text, width, "", "  ")
            .iter()
            .enumerate()
        {
            match line.strip_prefix(label.as_str()) {
                Some(rest) if i == 0 => {
                    let _ = writeln!(out, "{}{rest}", style.dim(&label));
                }
                _ => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    let sections = [
        (l.cause, e.cause.get(style.lang)),
        (l.judge, e.judge.get(style.lang)),
    ];
    for (label, text) in sections {
        let _ = writeln!(out, "\n{}\n{}", style.bold(label), indent(text, width));
    }
    let _ = writeln!(out, "\n{}", style.bold(l.check));
    let paint = |t: &str| t.to_string();
    for c in checks {
        for line in super::layout::command("  ", c, width, 2, &paint) {
            let _ = writeln!(out, "{line}");
        }
    }
    for (label, text) in [
        (l.fix, e.fix.get(style.lang)),
        (l.verify, e.verify.get(style.lang)),
    ] {
        let _ = writeln!(out, "\n{}\n{}", style.bold(label), indent(text, width));
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

/// Prose under its label: each paragraph wrapped to the width, two in.
fn indent(text: &str, width: usize) -> String {
    text.lines()
        .flat_map(|l| super::layout::wrap(l, width, "  ", "  "))
        .collect::<Vec<_>>()
        .join("\n")
}
