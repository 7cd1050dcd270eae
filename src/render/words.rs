//! Words more than one view says: step names, severities, gap lines, a
//! finding's detail. Views import them from here, never from each other.

use std::fmt::Write;

use crate::Style;
use crate::layout::{self, cut, width, wrap};
use mdiag_core::analysis::{Finding, Step};
use mdiag_core::catalogue::{Lang, Message, Severity};

/// A message in the view's language.
pub(crate) fn tr(style: &Style, m: Message) -> String {
    m.render(style.lang)
}

/// A ladder step as the views name it.
pub fn step_name(step: Step, lang: Lang) -> String {
    Message::new(step_id(step)).render(lang)
}

/// The message id of a step's name.
pub fn step_id(step: Step) -> &'static str {
    match step {
        Step::Declared => "step.declared",
        Step::Observed => "step.observed",
        Step::Deployment => "step.deployment",
        Step::ReplicaSet => "step.replicaset",
        Step::StatefulSet => "step.statefulset",
        Step::DaemonSet => "step.daemonset",
        Step::Job => "step.job",
        Step::Stored => "step.stored",
        Step::Bound => "step.bound",
        Step::Started => "step.started",
        Step::Ready => "step.ready",
        Step::Serving => "step.serving",
        Step::Completed => "step.completed",
    }
}

/// A gap's reason: the apiserver's words, or mdiag's own for a kind a
/// dump does not hold.
pub(crate) fn gap_reason(reason: &str, style: &Style) -> String {
    if reason == mdiag_core::model::Gap::NOT_IN_DUMP {
        tr(style, Message::new("gap.not_in_dump"))
    } else {
        reason.to_string()
    }
}

/// Lines, one `\n` each.
pub(crate) fn push_lines(out: &mut String, lines: impl IntoIterator<Item = String>) {
    for l in lines {
        out.push_str(l.trim_end());
        out.push('\n');
    }
}

/// `error`, `warning`, `info` in the view's language.
/// The mark of a severity, printed before a finding's id.
pub(crate) fn severity_mark(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✘",
        Severity::Warning => "!",
        Severity::Info => "i",
    }
}

pub fn severity_word(severity: Severity, lang: Lang) -> String {
    Message::new(match severity {
        Severity::Error => "severity.error",
        Severity::Warning => "severity.warning",
        Severity::Info => "severity.info",
    })
    .render(lang)
}

/// What could not be read, one line each under a heading (wrapped with -v,
/// else cut to the width).
pub fn gap_lines(gaps: &[mdiag_core::model::Gap], style: &Style) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let line_of = |g: &mdiag_core::model::Gap| {
        // A kind missing from a file is about the file, not a cluster scope.
        let scope = match (&g.namespace, &g.complete_with) {
            (Some(n), _) => Message::new("gap.in").arg("namespace", n).into(),
            // A kind a dump holds in some namespaces: unknown in the others.
            (None, _) if !g.read_in.is_empty() => Message::new("gap.outside")
                .arg("namespaces", g.read_in.join(", "))
                .into(),
            (None, Some(_)) => mdiag_core::catalogue::Arg::from(""),
            (None, None) => Message::new("gap.cluster").into(),
        };
        tr(
            style,
            Message::new("gap.line")
                .arg("verb", &g.verb)
                .arg("resource", &g.resource)
                .arg("scope", scope)
                .arg("reason", gap_reason(&g.reason, style)),
        )
    };
    // The kubectl get that would add a kind missing from a dump, pasteable.
    let complete = |out: &mut String, g: &mdiag_core::model::Gap| {
        if let Some(command) = &g.complete_with {
            let label = format!("    {} ", style.labels().complete_with);
            push_lines(
                out,
                layout::command(&label, command, style.width, 4, &|c| c.to_string()),
            );
        }
    };
    if !style.verbose && gaps.len() == 1 {
        let heading = style.labels().gaps_one;
        let room = style.width.saturating_sub(width(heading));
        let _ = writeln!(
            out,
            "{}{}",
            style.warn(heading),
            cut(&line_of(&gaps[0]), room)
        );
        complete(&mut out, &gaps[0]);
        return out;
    }
    push_lines(
        &mut out,
        wrap(style.labels().gaps, style.width, "", "  ")
            .into_iter()
            .map(|l| style.warn(&l)),
    );
    for g in gaps {
        let line = line_of(g);
        if style.verbose {
            push_lines(&mut out, wrap(&line, style.width, "  ", "    "));
        } else {
            let _ = writeln!(out, "  {}", cut(&line, style.width.saturating_sub(2)));
        }
        complete(&mut out, g);
    }
    out
}

/// The finding's detail, with how many other Pods share it.
pub fn detail_with_others(f: &Finding, lang: Lang) -> String {
    let detail = f.detail.render(lang);
    match others(f) {
        0 => detail,
        n => {
            let more = Message::new("finding.others").arg("n", n);
            format!("{detail}{}", more.render(lang))
        }
    }
}

/// How many other Pods share the finding.
pub(crate) fn others(f: &Finding) -> usize {
    f.vars
        .get("also")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
}
