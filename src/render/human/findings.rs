//! The findings: the lead one with its evidence, log tail, first check and
//! fix; the others in one line each, or all in full with -v.

use super::*;
use mdiag_core::command::Command;

pub(super) fn findings(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    if d.findings.is_empty() {
        // One sentence, not a heading over it.
        let _ = writeln!(out, "{}", l.no_findings);
        return;
    }
    let heading = format!("{} ({})", l.findings, d.findings.len());
    if !style.verbose && width(&heading) + 2 + width(l.verbose_hint) <= style.width {
        let _ = writeln!(
            out,
            "{}  {}",
            style.bold(&heading),
            style.dim(l.verbose_hint)
        );
    } else {
        let _ = writeln!(out, "{}", style.bold(&heading));
    }
    for (i, f) in d.findings.iter().enumerate() {
        if style.verbose {
            out.push('\n');
            finding(out, f, true, None, style);
        } else if i == 0 {
            finding(out, f, false, d.verdict.next.as_ref(), style);
        } else {
            finding_line(out, f, style);
        }
    }
}

/// The label column of a finding: the widest label of the language.
pub(super) fn label_width(style: &Style) -> usize {
    let l = style.labels();
    [l.evidence, l.log, l.cause, l.check, l.fix, l.verify]
        .iter()
        .map(|s| width(s))
        .max()
        .unwrap_or(6)
        + 1
}

/// `    label   ` at the label column, the label dimmed after padding
/// (padding a coloured string would count its escapes as columns).
pub(super) fn label_prefix(label: &str, style: &Style) -> String {
    let padded = pad(label, label_width(style));
    let text = padded.trim_end();
    format!("    {}{}", style.dim(text), &padded[text.len()..])
}

/// Prose under a label, wrapped.
pub(super) fn labelled(
    out: &mut String,
    label: &str,
    text: &str,
    max_lines: Option<usize>,
    style: &Style,
) {
    let rest = " ".repeat(4 + label_width(style));
    let mut first = true;
    for para in text.lines().filter(|p| !p.trim().is_empty()) {
        let head = if first {
            pad(&format!("    {label}"), 4 + label_width(style))
        } else {
            rest.clone()
        };
        let lines = match max_lines {
            Some(n) => wrap_at_most(para, style.width, &head, &rest, n),
            None => wrap(para, style.width, &head, &rest),
        };
        for (j, line) in lines.into_iter().enumerate() {
            if first && j == 0 {
                let body = line[head.len().min(line.len())..].to_string();
                push_lines(out, [format!("{}{body}", label_prefix(label, style))]);
            } else {
                push_lines(out, [line]);
            }
        }
        first = false;
    }
}

/// The opening of a catalogue text, the default view's fix: whole
/// sentences until there are at least [`FIX_OPENING`] characters (a first
/// sentence such as "Fix what the log names." says little alone).
pub(super) fn opening(text: &str) -> &str {
    let text = text.trim();
    let mut end = None;
    for (i, c) in text.char_indices() {
        let stop = match c {
            '。' => Some(i + c.len_utf8()),
            '.' => {
                let after = &text[i + 1..];
                (after.is_empty() || after.starts_with(' ') || after.starts_with('\n'))
                    .then_some(i + 1)
            }
            _ => None,
        };
        if let Some(e) = stop {
            end = Some(e);
            if text[..e].chars().count() >= FIX_OPENING {
                break;
            }
        }
    }
    match end {
        Some(e) if text[..e].chars().count() >= FIX_OPENING => &text[..e],
        _ => text,
    }
}

pub(super) fn finding_head(f: &Finding, style: &Style) -> (String, String) {
    let mark = severity_mark(f.severity);
    let word = severity_word(f.severity, style.lang);
    let sev = format!("{mark} {}", pad(&word, 7));
    let plain = format!("  {sev} {}  {}", f.id.as_str(), f.subject);
    let painted = format!(
        "  {} {}  {}",
        style.severity(f.severity, &sev),
        style.bold(f.id.as_str()),
        f.subject
    );
    (plain, painted)
}

/// Another finding, in one line: severity, id, subject, the detail cut.
pub(super) fn finding_line(out: &mut String, f: &Finding, style: &Style) {
    let (plain, painted) = finding_head(f, style);
    let detail = layout::without_repeats(&detail_with_others(f, style.lang));
    // The head names the object: the detail does not again.
    let subject = f.subject.to_string();
    let detail = detail
        .strip_prefix(&subject)
        .map_or(detail.as_str(), str::trim_start)
        .to_string();
    // Beside the head when it fits there whole; else under it, shortened
    // to its end (the cause) when it must be. The head is never cut: it
    // names the finding and its object.
    let room = style.width.saturating_sub(width(&plain) + 2);
    if width(&detail) <= room {
        let _ = writeln!(out, "{painted}  {detail}");
    } else {
        if width(&plain) <= style.width {
            let _ = writeln!(out, "{painted}");
        } else {
            push_lines(out, wrap(&plain, style.width, "", "      "));
        }
        let detail = layout::cut_keeping_tail(&detail, style.width.saturating_sub(4));
        let _ = writeln!(out, "    {detail}");
    }
}

pub(super) fn finding(
    out: &mut String,
    f: &Finding,
    full: bool,
    next: Option<&Command>,
    style: &Style,
) {
    let l = style.labels();
    let entry = catalogue().get(f.id);
    let (plain, painted) = finding_head(f, style);
    if width(&plain) <= style.width {
        let _ = writeln!(out, "{painted}");
    } else {
        push_lines(out, wrap(&plain, style.width, "", "      "));
    }
    // The default view leaves the title to `explain`: the headline named it.
    if let Some(e) = entry.filter(|_| full) {
        let title = style.bold(e.title.get(style.lang));
        push_lines(out, wrap(&title, style.width, "    ", "    "));
    }
    let detail = detail_with_others(f, style.lang);
    push_lines(
        out,
        if full {
            wrap(&detail, style.width, "    ", "    ")
        } else {
            layout::wrap_keeping_tail(&detail, style.width, "    ", "    ", COMPACT_DETAIL_LINES)
        },
    );
    evidence(out, f, full, style);
    let Some(e) = entry else { return };
    if full {
        labelled(out, l.cause, e.cause.get(style.lang), None, style);
    }
    let checks = e.checks_for(&f.vars);
    // The default view shows the first check, unless it is the `next:`
    // command printed whole under the headline a few lines up (a line
    // saying so would only repeat it); -v shows every check, in their
    // order. A check wider than the view wraps between its words; it is
    // never swapped for one that fits.
    let shown: Vec<&Command> = if full {
        checks.iter().collect()
    } else if next.is_some() && checks.first() == next {
        Vec::new()
    } else {
        checks.iter().take(1).collect()
    };
    // Beside the label when every command fits there; else all of them
    // under it, at one indent, so they line up.
    let column = 4 + label_width(style);
    let texts: Vec<String> = shown.iter().map(|c| c.shell()).collect();
    if texts.iter().all(|c| column + width(c) <= style.width) {
        for (i, c) in texts.iter().enumerate() {
            let label = if i == 0 {
                label_prefix(l.check, style)
            } else {
                " ".repeat(column)
            };
            let _ = writeln!(out, "{label}{}", style.bold(c));
        }
    } else {
        let _ = writeln!(out, "    {}", style.dim(l.check));
        for c in shown {
            push_lines(
                out,
                layout::command("    ", c, style.width, 4, &|s| style.bold(s)),
            );
        }
    }
    if full {
        labelled(out, l.fix, e.fix.get(style.lang), None, style);
        labelled(out, l.verify, e.verify.get(style.lang), None, style);
    } else {
        labelled(out, l.fix, opening(e.fix.get(style.lang)), Some(3), style);
    }
}

pub(super) fn evidence(out: &mut String, f: &Finding, full: bool, style: &Style) {
    let l = style.labels();
    let subject = format!("pod/{}", f.subject.name);
    let items: Vec<&Evidence> = f
        .evidence
        .iter()
        .filter(|e| e.log.is_none())
        .filter(|e| full || f.subject.kind != "Pod" || e.object == subject)
        .take(match (full, f.evidence.iter().any(|e| e.log.is_some())) {
            (true, _) => usize::MAX,
            // The log says more than the status fields around it.
            (false, true) => 1,
            (false, false) => COMPACT_EVIDENCE,
        })
        .collect();
    let rest = " ".repeat(4 + label_width(style));
    for (i, e) in items.iter().enumerate() {
        let at =
            e.at.map(|at| {
                tr(
                    style,
                    Message::new("evidence.at")
                        .arg("time", clock_time(at, style.now))
                        .arg("ago", format_duration(secs(at, style.now))),
                )
            })
            .unwrap_or_default();
        // The default view drops the object when it is the finding's subject.
        let object = if !full && (e.object == subject || e.object == f.subject.to_string()) {
            String::new()
        } else {
            format!("{} ", e.object)
        };
        let text = format!(
            "{object}{} = {}{at}",
            field_name(e, style),
            layout::clean(&e.value_in(style.lang))
        );
        let head = if i == 0 {
            pad(&format!("    {}", l.evidence), 4 + label_width(style))
        } else {
            rest.clone()
        };
        let has_log = f.evidence.iter().any(|e| e.log.is_some());
        let lines = if full {
            wrap(&text, style.width, &head, &rest)
        } else {
            let max = if has_log { 1 } else { COMPACT_EVIDENCE_LINES };
            layout::wrap_keeping_tail(&text, style.width, &head, &rest, max)
        };
        for (j, line) in lines.into_iter().enumerate() {
            if i == 0 && j == 0 {
                let body = line[head.len().min(line.len())..].to_string();
                push_lines(out, [format!("{}{body}", label_prefix(l.evidence, style))]);
            } else {
                push_lines(out, [line]);
            }
        }
    }
    for e in f.evidence.iter().filter(|e| e.log.is_some()) {
        log_tail(out, e, full, style);
    }
}

/// A log's last lines under its finding, each cut to the width (a log
/// line is not prose: wrapped, it would read as several).
pub(super) fn log_tail(out: &mut String, e: &Evidence, full: bool, style: &Style) {
    let Some(log) = &e.log else { return };
    let lines = &log.lines[if full {
        0
    } else {
        log.lines.len().saturating_sub(COMPACT_LOG_LINES)
    }..];
    let l = style.labels();
    let run = if log.previous {
        l.previous_run
    } else {
        l.current_run
    };
    let shown = lines.len();
    let count = if log.total_lines > shown {
        tr(
            style,
            Message::new("log.last_lines")
                .arg("shown", shown)
                .arg("total", log.total_lines),
        )
    } else {
        String::new()
    };
    let what = format!(
        "{} ({run}){count}{}",
        log.container,
        if log.truncated { " …" } else { "" }
    );
    let rest = " ".repeat(4 + label_width(style));
    let room = style.width.saturating_sub(width(&rest)).max(8);
    push_lines(
        out,
        [format!(
            "{}{}",
            label_prefix(l.log, style),
            style.dim(&cut(&what, room))
        )],
    );
    // -v shortens no log line: a long one wraps, its continuation set in.
    for line in lines {
        let line = layout::clean(line);
        if full {
            push_lines(out, wrap(&line, style.width, &rest, &format!("{rest}  ")));
        } else {
            push_lines(out, [format!("{rest}{}", cut(&line, room))]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::opening;

    #[test]
    fn the_default_fix_is_its_opening_sentences() {
        let fix = "Fix the image tag in the chart values, then roll the ModelService out again. Then check the pull secret.";
        assert_eq!(
            opening(fix),
            "Fix the image tag in the chart values, then roll the ModelService out again."
        );
        assert_eq!(
            opening("Fix it. Add the verbs to the controller's Role through its chart. More."),
            "Fix it. Add the verbs to the controller's Role through its chart."
        );
        assert_eq!(
            opening("Use values.yaml, then retry"),
            "Use values.yaml, then retry"
        );
        let zh = "根据上一次日志里的报错，在 ModelService 或 chart values 中修正：启动参数、环境变量、ConfigMap 或 Secret 内容、模型路径。依赖启动慢时让应用重试。";
        assert!(opening(zh).ends_with("模型路径。"));
    }
}
