//! The timeline of every fixture, as JSON, the terminal and the HTML show
//! it: in time order (a step older than one before it is labelled, never
//! a negative gap), the same step marked slowest or failing in every view,
//! and a step whose objects were not read shown as unknown, never as a
//! fact read from the absence ("not reached", "not serving", "0 of").

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn run(args: &[&str]) -> String {
    let out = common::mdiag()
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// Every fixture and a target in it: those with expectations by theirs,
/// the lone objects and the versioned dumps by their first workload.
fn fixtures() -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = common::expected_fixtures()
        .into_iter()
        .map(|(file, target)| (file, vec![target]))
        .collect();
    for folder in ["fixtures/lone", "fixtures/cases/versions"] {
        for name in common::files_in(folder) {
            let file = format!("{folder}/{name}.yaml");
            let text =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&file)).unwrap();
            // A file that is not one YAML document (a key named twice) is
            // the reader's test, not this one's.
            let Ok(doc) = serde_saphyr::from_str::<Value>(&text) else {
                continue;
            };
            let items = match doc["items"].as_array() {
                Some(items) => items.clone(),
                None => vec![doc],
            };
            let workload = [
                "Deployment",
                "StatefulSet",
                "DaemonSet",
                "ReplicaSet",
                "Pod",
            ]
            .iter()
            .find_map(|kind| items.iter().find(|o| o["kind"] == *kind));
            if let Some(o) = workload {
                let m = &o["metadata"];
                let target = format!(
                    "{}/{}",
                    o["kind"].as_str().unwrap().to_ascii_lowercase(),
                    m["name"].as_str().unwrap()
                );
                let mut args = vec![target];
                if let Some(ns) = m["namespace"].as_str() {
                    args.extend(["-n".to_string(), ns.to_string()]);
                }
                out.push((file, args));
            }
        }
    }
    out
}

/// The timeline's rows of a terminal view: each row's step label and its
/// text, continuation lines joined.
fn terminal_rows(view: &str) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let section = view
        .lines()
        .skip_while(|l| !l.starts_with("Timeline"))
        .skip(1)
        .take_while(|l| !l.is_empty());
    for line in section {
        if line.starts_with("  ") && !line.starts_with("   ") {
            let label = line.split_whitespace().next().unwrap_or("").to_string();
            rows.push((label, line.to_string()));
        } else if let Some(last) = rows.last_mut() {
            last.1.push(' ');
            last.1.push_str(line.trim());
        }
    }
    rows
}

/// The HTML steps table: each row's step name and its text.
fn html_rows(page: &str) -> Vec<(String, String)> {
    let Some(table) = page.split("<table class=\"steps\">").nth(1) else {
        return Vec::new();
    };
    let table = table.split("</table>").next().unwrap();
    table
        .split("<tr class=")
        .skip(1)
        .map(|row| {
            let name = row
                .split("<td>")
                .nth(1)
                .and_then(|c| c.split("</td>").next())
                .unwrap_or("")
                .to_string();
            (name, row.to_string())
        })
        .collect()
}

const MARKS: [(&str, &str); 2] = [("slowest", "← slowest"), ("failing", "← failing")];
const ABSENCE_FACTS: [&str; 3] = ["not reached", "not serving", "0 of"];

#[test]
fn every_timeline_is_in_time_order_marked_alike_and_unknown_where_unread() {
    let mut failures: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut older_seen = 0;
    let mut unknown_seen = 0;
    let mut marks_seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (file, target) in fixtures() {
        let mut args: Vec<&str> = vec!["trace"];
        args.extend(target.iter().map(String::as_str));
        args.extend(["--snapshot", file.as_str(), "--width", "200"]);
        let json: Value = match serde_json::from_str(&run(&[&args[..], &["-o", "json"]].concat())) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{file}: no JSON report: {e}"));
                continue;
            }
        };
        checked += 1;
        let at = |s: &Value| {
            s["at"]
                .as_str()
                .map(|t| t.parse::<jiff::Timestamp>().unwrap())
        };
        let steps = json["steps"].as_array().unwrap();
        let mut newest: Option<jiff::Timestamp> = None;
        for s in steps {
            let name = s["step"].as_str().unwrap();
            if let Some(g) = s["gap_seconds"].as_f64()
                && g < 0.0
            {
                failures.push(format!("{file}: {name} gap_seconds {g}"));
            }
            if let Some(t) = at(s) {
                let older = newest.is_some_and(|n| t < n);
                let labelled = !s["older_than"].is_null();
                if older != labelled {
                    failures.push(format!(
                        "{file}: {name} at {t} after {newest:?}, older_than {}",
                        s["older_than"]
                    ));
                }
                older_seen += usize::from(older);
                if !older {
                    newest = Some(t);
                }
            }
        }
        let view = run(&[&args[..], &["-v"]].concat());
        let page = run(&[&args[..], &["-o", "html"]].concat());
        let term = terminal_rows(&view);
        let html = html_rows(&page);
        for (mark, words) in MARKS {
            let want: Vec<&str> = steps
                .iter()
                .filter(|s| s["mark"] == mark)
                .map(|s| s["step"].as_str().unwrap())
                .collect();
            *marks_seen.entry(mark).or_default() += want.len();
            let got_term: Vec<&str> = term
                .iter()
                .filter(|(_, text)| text.contains(words))
                .map(|(l, _)| l.as_str())
                .collect();
            let got_html: Vec<&str> = html
                .iter()
                .filter(|(_, text)| text.contains(words))
                .map(|(l, _)| l.as_str())
                .collect();
            if got_term != want || got_html != want {
                failures.push(format!(
                    "{file}: {mark}: JSON {want:?}, terminal {got_term:?}, HTML {got_html:?}"
                ));
            }
        }
        for s in steps.iter().filter(|s| !s["unread"].is_null()) {
            unknown_seen += 1;
            let name = s["step"].as_str().unwrap();
            let texts = [
                ("JSON", s["note"].as_str().unwrap_or("").to_string()),
                (
                    "terminal",
                    term.iter()
                        .find(|(l, _)| l == name)
                        .map(|(_, t)| t.clone())
                        .unwrap_or_default(),
                ),
                (
                    "HTML",
                    html.iter()
                        .find(|(l, _)| l == name)
                        .map(|(_, t)| t.clone())
                        .unwrap_or_default(),
                ),
            ];
            for (view, text) in texts {
                if let Some(fact) = ABSENCE_FACTS.iter().find(|f| text.contains(*f)) {
                    failures.push(format!(
                        "{file}: {view}: unread {name} says {fact:?}: {text}"
                    ));
                }
                if MARKS.iter().any(|(_, w)| text.contains(w)) {
                    failures.push(format!("{file}: {view}: unread {name} is marked: {text}"));
                }
            }
        }
        if json["verdict"]["serving"]["endpoints_read"] == false {
            for (view, text) in [("terminal", &view), ("HTML", &page)] {
                if text.contains("not serving") {
                    failures.push(format!("{file}: {view} says \"not serving\" unread"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 80, "{checked} fixtures");
    // The rules above were put to work: an older step, an unknown step
    // and both marks appear among the fixtures.
    assert!(
        older_seen > 0 && unknown_seen > 0,
        "{older_seen} {unknown_seen}"
    );
    assert!(marks_seen.values().all(|n| *n > 0), "{marks_seen:?}");
}
