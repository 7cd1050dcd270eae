//! Bounds on the outside text a diagnosis quotes: a container's log lines,
//! a termination message, an Event's or a condition's message, a reason.
//! Each is the cluster's (or a file's) own words, and a file can hold a
//! 200 MB log line; the report quotes at most [`LINE_BYTES`] of each line
//! and [`TEXT_LINES`] lines of each text, and says how much it cut, so a
//! report stays a small multiple of what people read.

use std::borrow::Cow;

use super::{Diagnosis, Evidence, Finding};
use crate::catalogue::{Arg, Message};

/// The most bytes of one quoted line kept. The kubelet keeps 4096 bytes
/// of a termination message; a log line longer than that is data, not a
/// sentence anyone reads in a report.
pub const LINE_BYTES: usize = 4096;

/// The most lines of one quoted text kept (a log tail keeps its own,
/// fewer: [`super::logs::TAIL_LINES`]).
pub const TEXT_LINES: usize = 20;

/// `text` with each line cut to [`LINE_BYTES`] (at a character boundary)
/// and at most [`TEXT_LINES`] lines, each cut marked with what it cut:
/// `… [N bytes cut]` at the end of a line, `… [N more lines cut]` as the
/// last line. Text within the bounds is returned as it is.
pub fn bounded(text: &str) -> Cow<'_, str> {
    let within_lines = || text.bytes().filter(|b| *b == b'\n').count() < TEXT_LINES;
    if text.len() <= LINE_BYTES && within_lines() {
        return Cow::Borrowed(text);
    }
    let mut lines = text.split('\n');
    let kept: Vec<Cow<str>> = lines.by_ref().take(TEXT_LINES).map(line).collect();
    let rest = lines.count();
    if rest == 0 && kept.iter().all(|l| matches!(l, Cow::Borrowed(_))) {
        return Cow::Borrowed(text);
    }
    let mut out = kept.join("\n");
    if rest > 0 {
        out.push_str(&format!("\n… [{rest} more lines cut]"));
    }
    Cow::Owned(out)
}

/// One line cut to [`LINE_BYTES`] at a character boundary, marked with
/// how many bytes were cut.
pub fn line(text: &str) -> Cow<'_, str> {
    if text.len() <= LINE_BYTES {
        return Cow::Borrowed(text);
    }
    let mut end = LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}… [{} bytes cut]",
        &text[..end],
        text.len() - end
    ))
}

/// Bounds a text in place.
pub fn bound(text: &mut String) {
    if let Cow::Owned(cut) = bounded(text) {
        *text = cut;
    }
}

/// Bounds every text argument of a message, however deep.
pub fn bound_message(m: &mut Message) {
    for arg in m.args.values_mut() {
        bound_arg(arg);
    }
}

fn bound_arg(arg: &mut Arg) {
    match arg {
        Arg::Text(text) | Arg::Styled(text) => bound(text),
        Arg::Int(_) => {}
        Arg::Msg(m) => bound_message(m),
        Arg::List { items, .. } => items.iter_mut().for_each(bound_arg),
    }
}

/// Bounds what a piece of evidence quotes: its value, its words and its
/// log lines (each line on its own: a tail keeps its own number of lines).
pub fn bound_evidence(e: &mut Evidence) {
    bound(&mut e.value);
    if let Some(said) = &mut e.said {
        bound_message(said);
    }
    if let Some(log) = &mut e.log {
        for l in &mut log.lines {
            if let Cow::Owned(cut) = line(l) {
                *l = cut;
            }
        }
    }
}

/// Bounds what findings quote: their detail and their evidence. Template
/// variables are names that fill commands and are left whole.
pub fn bound_findings(findings: &mut [Finding]) {
    for f in findings {
        bound_message(&mut f.detail);
        f.evidence.iter_mut().for_each(bound_evidence);
    }
}

/// Bounds everything a diagnosis quotes from outside: findings, Pods'
/// reasons, step notes, the Deployment's Progressing condition and gaps.
pub fn bound_diagnosis(d: &mut Diagnosis) {
    bound_findings(&mut d.findings);
    for s in &mut d.steps {
        bound_message(&mut s.note);
    }
    for p in &mut d.pods {
        if let Some(reason) = &mut p.state_reason {
            bound(reason);
        }
    }
    if let Some(deployment) = &mut d.chain.deployment
        && let Some((status, reason)) = &mut deployment.progressing
    {
        bound(status);
        bound(reason);
    }
    for g in &mut d.gaps {
        bound(&mut g.reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_within_the_bounds_is_kept_as_it_is() {
        assert!(matches!(
            bounded("boom\nagain"),
            Cow::Borrowed("boom\nagain")
        ));
        let full = "x".repeat(LINE_BYTES);
        assert!(matches!(bounded(&full), Cow::Borrowed(_)));
        // Long in bytes, but every line is short and there are few.
        let lines = vec!["y".repeat(LINE_BYTES - 1); 3].join("\n");
        assert!(matches!(bounded(&lines), Cow::Borrowed(_)));
    }

    #[test]
    fn a_long_line_is_cut_and_says_how_many_bytes() {
        let long = "a".repeat(200 * 1024);
        let cut = line(&long);
        assert_eq!(cut.len(), LINE_BYTES + "… [200704 bytes cut]".len());
        assert!(
            cut.ends_with("a… [200704 bytes cut]"),
            "{}",
            &cut[LINE_BYTES - 4..]
        );
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // 3-byte characters: 4096 is not a boundary of 1366 of them.
        let wide = "中".repeat(2000);
        let cut = line(&wide);
        let kept = cut.split('…').next().unwrap();
        assert_eq!(kept.len(), 4095);
        assert!(cut.ends_with(&format!("[{} bytes cut]", 6000 - 4095)));
    }

    #[test]
    fn many_lines_keep_the_first_and_count_the_rest() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let cut = bounded(&text);
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines.len(), TEXT_LINES + 1);
        assert_eq!(lines[0], "line 1");
        assert_eq!(lines[TEXT_LINES - 1], "line 20");
        // 80 more lines and the empty one after the last newline.
        assert_eq!(lines[TEXT_LINES], "… [81 more lines cut]");
    }

    #[test]
    fn a_message_argument_is_bounded_however_deep() {
        let long = "m".repeat(LINE_BYTES * 3);
        let mut m = Message::new("x")
            .arg("message", long.as_str())
            .arg(
                "inner",
                Message::new("test.inner").arg("message", long.as_str()),
            )
            .arg("n", 3);
        bound_message(&mut m);
        let Arg::Text(outer) = &m.args["message"] else {
            panic!()
        };
        assert!(outer.len() < LINE_BYTES + 32, "{}", outer.len());
        let Arg::Msg(inner) = &m.args["inner"] else {
            panic!()
        };
        assert_eq!(inner.args["message"], Arg::Text(outer.clone()));
        assert_eq!(m.args["n"], Arg::Int(3));
    }
}
