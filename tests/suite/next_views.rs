//! One `next` per diagnosis (SPEC section 6): the command the human view
//! of `trace` prints under the headline is JSON's `verdict.next`, whole,
//! in both languages and at every width; when it is wider than the view
//! it wraps between its words with ` \`, and it is never cut or swapped
//! for another command.

use crate::common;

use mdiag_core::command::split;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

const WIDTHS: [usize; 5] = [40, 60, 80, 120, 200];
/// From this width on every line of the view is held to it.
const WHOLE_VIEW_FROM: usize = 60;
const LANGS: [(&str, &str); 2] = [("en", "next:"), ("zh", "下一步：")];

/// Runs mdiag with no colour; stdout.
fn run(args: &[&str]) -> String {
    let out = common::mdiag()
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The command printed after `label`: the rest of the label's line, or
/// the lines under it when that is empty, up to the first line that does
/// not end in ` \`; joined as a shell joins them, the continuations
/// taken out. `None` when no line starts with the label.
fn printed_next(out: &str, label: &str) -> Option<String> {
    let mut lines = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(label));
    let first = lines.next()?.trim_start()[label.len()..].trim();
    let mut parts = Vec::new();
    let mut more = true;
    if !first.is_empty() {
        more = first.ends_with(" \\");
        parts.push(first.trim_end_matches(" \\").to_string());
    }
    while more {
        let line = lines.next()?;
        more = line.ends_with(" \\");
        parts.push(line.trim().trim_end_matches(" \\").to_string());
    }
    Some(parts.join(" "))
}

/// The lines of the `next:` block: the label's line and those its command
/// runs on.
fn next_block<'a>(out: &'a str, label: &str) -> Vec<&'a str> {
    let mut lines = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(label));
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    let mut block = vec![first];
    let mut more = first.trim_start()[label.len()..].trim().is_empty() || first.ends_with(" \\");
    while more {
        let Some(line) = lines.next() else { break };
        block.push(line);
        more = line.ends_with(" \\");
    }
    block
}

/// The one overflow a view allows: a line that holds a single shell word
/// (a quoted jsonpath) wider than the width, which cannot be broken
/// without changing what the shell reads.
fn one_unbreakable_word(line: &str) -> bool {
    let word = line.trim_start().trim_end_matches(" \\");
    split(word).is_some_and(|w| w.len() == 1)
}

#[test]
fn every_view_prints_the_json_next_whole_at_every_width() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (file, target) in common::expected_fixtures() {
        for (lang, label) in LANGS {
            for width in WIDTHS {
                let w = width.to_string();
                let args = [
                    "trace",
                    target.as_str(),
                    "--snapshot",
                    file.as_str(),
                    "--lang",
                    lang,
                    "--width",
                    &w,
                ];
                let json: Value =
                    serde_json::from_str(&run(&[&args[..], &["-o", "json"]].concat())).unwrap();
                let Some(want) = json["verdict"]["next_argv"].as_array() else {
                    continue;
                };
                let want: Vec<&str> = want.iter().map(|w| w.as_str().unwrap()).collect();
                for verbose in [false, true] {
                    let view = if verbose {
                        run(&[&args[..], &["-v"]].concat())
                    } else {
                        run(&args)
                    };
                    let at = format!(
                        "{file} --lang {lang} --width {width}{}",
                        if verbose { " -v" } else { "" }
                    );
                    checked += 1;
                    match printed_next(&view, label).map(|c| split(&c)) {
                        Some(Some(got)) if got == want => {}
                        got => failures.push(format!("{at}: printed {got:?}, JSON {want:?}")),
                    }
                    // The next: lines at every width; the rest of the view
                    // from 60 columns (at 40 the timeline's bars do not fit
                    // yet, a part of issue 28 of its own).
                    let block = next_block(&view, label);
                    for line in view.lines() {
                        let checked = width >= WHOLE_VIEW_FROM || block.contains(&line);
                        if checked
                            && line.width() > width
                            && !one_unbreakable_word(line)
                            && !common::one_long_token(line, width)
                        {
                            failures.push(format!("{at}: {} columns: {line}", line.width()));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 300, "{checked} views checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} views:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_printed_next_is_read_back_across_its_continuations() {
    let out = "HEAD\n  next:\n  kubectl -n a get pod \\\n    -o 'jsonpath={.x y}' \\\n    --context kind\n\nrest";
    assert_eq!(
        printed_next(out, "next:").as_deref(),
        Some("kubectl -n a get pod -o 'jsonpath={.x y}' --context kind")
    );
    let out = "  下一步：kubectl get pods\n  kubectl other";
    assert_eq!(
        printed_next(out, "下一步：").as_deref(),
        Some("kubectl get pods")
    );
}
