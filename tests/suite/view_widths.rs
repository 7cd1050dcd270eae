//! Ring 2: the human views wrap instead of cutting, and never break a name
//! (docs/contract.md#interface). Every fixture with expectations, in
//! English and Chinese, at 40, 60, 80, 120 and 200 columns, default and
//! `-v`:
//! - no identifier (a Pod's or the target's name, a finding id) is split
//!   over two lines, so it still copies with a double click;
//! - `-v` holds every finding's detail and every evidence value whole,
//!   however long (English, where the report's text is the view's);
//! - the default view keeps the end of a message it shortens, where
//!   Kubernetes and containerd put the cause.

use crate::common;
use serde_json::Value;

const WIDTHS: [usize; 5] = [40, 60, 80, 120, 200];

fn run(args: &[&str]) -> String {
    let out = common::mdiag()
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The view as one line of words: wrapping undone.
fn words(view: &str) -> String {
    // A newline of the cluster's text is shown, and reported, as `\n`.
    view.replace("\\n", " ")
        .split_whitespace()
        .filter(|w| *w != "\\")
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a line ends inside one of `names` and the next line goes on
/// with it.
fn split_names(view: &str, names: &[String]) -> Vec<String> {
    let lines: Vec<&str> = view.lines().collect();
    let mut out = Vec::new();
    for pair in lines.windows(2) {
        let (Some(last), Some(first)) = (
            pair[0].split_whitespace().last(),
            pair[1].split_whitespace().next(),
        ) else {
            continue;
        };
        let joined = format!("{last}{first}");
        for name in names {
            if joined.contains(name.as_str())
                && !last.contains(name.as_str())
                && !first.contains(name.as_str())
            {
                out.push(format!("{name}: {:?} / {:?}", pair[0], pair[1]));
            }
        }
    }
    out
}

fn names_of(report: &Value) -> Vec<String> {
    let mut names = vec![report["target"]["name"].as_str().unwrap_or("").to_string()];
    for p in report["pods"].as_array().into_iter().flatten() {
        names.push(p["name"].as_str().unwrap_or("").to_string());
    }
    for f in report["findings"].as_array().into_iter().flatten() {
        names.push(f["id"].as_str().unwrap_or("").to_string());
        names.push(f["subject"]["name"].as_str().unwrap_or("").to_string());
    }
    names.retain(|n| n.len() >= 6);
    names.sort();
    names.dedup();
    names
}

#[test]
fn names_are_never_split_and_v_shortens_nothing() {
    let mut failures = Vec::new();
    let mut views = 0;
    for (file, target) in common::expected_fixtures() {
        let json = run(&["trace", &target, "--snapshot", &file, "-o", "json"]);
        let report: Value = serde_json::from_str(&json).unwrap();
        let names = names_of(&report);
        for lang in ["en", "zh"] {
            for width in WIDTHS {
                for verbose in [false, true] {
                    let w = width.to_string();
                    let mut args = vec![
                        "trace",
                        &target,
                        "--snapshot",
                        &file,
                        "--lang",
                        lang,
                        "--width",
                        &w,
                    ];
                    if verbose {
                        args.push("-v");
                    }
                    let view = run(&args);
                    views += 1;
                    let at = format!("{file} {lang} {width}{}", if verbose { " -v" } else { "" });
                    for s in split_names(&view, &names) {
                        failures.push(format!("{at}: split {s}"));
                    }
                    if !(verbose && lang == "en") {
                        continue;
                    }
                    let all = words(&view);
                    for f in report["findings"].as_array().into_iter().flatten() {
                        let detail = words(f["detail"].as_str().unwrap_or(""));
                        if !all.contains(&detail) {
                            failures.push(format!("{at}: detail not whole: {detail}"));
                        }
                        for e in f["evidence"].as_array().into_iter().flatten() {
                            let value = words(e["value"].as_str().unwrap_or(""));
                            if !value.is_empty() && e.get("log").is_none() && !all.contains(&value)
                            {
                                failures.push(format!("{at}: evidence not whole: {value}"));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(views > 600, "{views}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The three pull failures differ only in the end of the runtime's
/// message; the default view at 80 columns keeps each one's cause, and
/// names the image once per message rather than in every clause.
#[test]
fn the_default_view_keeps_the_cause_of_a_long_message() {
    for (demo, cause) in [
        ("image-pull-denied", "insufficient_scope"),
        ("image-pull-timeout", "i/o timeout"),
        ("image-pull-not-found", "not found"),
    ] {
        let file = format!("fixtures/demo/{demo}.yaml");
        let view = run(&["trace", "chart-demo", "--snapshot", &file, "--width", "80"]);
        let findings = view
            .split("\nFindings")
            .nth(1)
            .unwrap_or_else(|| panic!("{demo}: no findings:\n{view}"));
        let lead: Vec<&str> = findings.lines().skip(2).take(3).collect();
        assert!(
            words(&lead.join("\n")).contains(cause),
            "{demo}: the detail lost its cause:\n{view}"
        );
        assert!(!view.contains("th…"), "{view}");
    }
}
