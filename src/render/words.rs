//! Words more than one view says: step names, severities, gap lines, a
//! finding's detail. Views import them from here, never from each other.

use std::fmt::Write;

use crate::Style;
use crate::layout::{self, width, wrap};
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
pub(crate) fn gap_reason(reason: &str, lang: Lang) -> String {
    if reason == mdiag_core::model::Gap::NOT_IN_DUMP {
        Message::new("gap.not_in_dump").render(lang)
    } else if reason == mdiag_core::model::Gap::KNATIVE_PREDICTOR_ABSENT {
        Message::new("gap.knative_predictor_absent").render(lang)
    } else {
        reason.to_string()
    }
}

/// One gap in words, as every view says it: what could not be read,
/// where, why, and (several clusters) in which contexts.
pub(crate) fn gap_sentence(g: &mdiag_core::model::Gap, lang: Lang) -> String {
    if g.is_cluster_unread() {
        return Message::new("gap.context_unread")
            .arg("context", g.contexts.join(", "))
            .arg("reason", gap_reason(&g.reason, lang))
            .render(lang);
    }
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
    let line = Message::new("gap.line")
        .arg("verb", &g.verb)
        .arg("resource", &g.resource)
        .arg("scope", scope)
        .arg("reason", gap_reason(&g.reason, lang))
        .render(lang);
    // Several clusters: the contexts it was seen in, once.
    match g.contexts.is_empty() {
        true => line,
        false => {
            let contexts = Message::new("gap.contexts").arg("contexts", g.contexts.join(", "));
            format!("{line}{}", contexts.render(lang))
        }
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

/// What could not be read, one line each under a heading, wrapped. The
/// kinds a dump lacks in one namespace are one line and one `kubectl get`
/// of them all, not the same sentence once per kind.
pub fn gap_lines(gaps: &[mdiag_core::model::Gap], style: &Style) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let grouped = group_dump_gaps(gaps);
    let gaps = grouped.as_slice();
    let line_of = |g: &mdiag_core::model::Gap| gap_sentence(g, style.lang);
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
    // Wrapped, never cut: the reason is the apiserver's or the file's
    // whole sentence.
    if gaps.len() == 1 {
        let heading = style.labels().gaps_one;
        let indent = " ".repeat(width(heading));
        let lines = wrap(&line_of(&gaps[0]), style.width, &indent, "  ");
        for (i, line) in lines.into_iter().enumerate() {
            if i == 0 {
                let _ = writeln!(out, "{}{}", style.warn(heading), line.trim_start());
            } else {
                let _ = writeln!(out, "{line}");
            }
        }
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
        push_lines(&mut out, wrap(&line_of(g), style.width, "  ", "    "));
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

/// Gaps of kinds a dump does not hold, one per namespace and reason, the
/// resources joined (`replicasets,pods`) as `kubectl get` takes them; every
/// other gap as it is, in order.
fn group_dump_gaps(gaps: &[mdiag_core::model::Gap]) -> Vec<mdiag_core::model::Gap> {
    let mut out: Vec<mdiag_core::model::Gap> = Vec::new();
    for g in gaps {
        let joined = g.complete_with.is_some()
            && out.iter_mut().any(|o| {
                let same = o.complete_with.is_some()
                    && o.namespace == g.namespace
                    && o.reason == g.reason
                    && o.verb == g.verb
                    && o.read_in == g.read_in;
                if same {
                    o.resource = format!("{},{}", o.resource, g.resource);
                    if let Some(c) = &mut o.complete_with {
                        let argv: Vec<String> = c
                            .argv()
                            .iter()
                            .enumerate()
                            .map(|(i, w)| {
                                if i == 2 {
                                    o.resource.clone()
                                } else {
                                    w.clone()
                                }
                            })
                            .collect();
                        *c = mdiag_core::command::Command::new(argv);
                    }
                }
                same
            });
        if !joined {
            out.push(g.clone());
        }
    }
    out
}
