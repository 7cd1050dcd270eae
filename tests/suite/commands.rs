//! Every command the catalogue prints, as `explain` and docs/symptoms.md
//! show it (placeholders unfilled) and as trace shows it (filled), reads
//! as kubectl (or mdiag) reads it: shell words, a known read-only verb,
//! single balanced braces in every jsonpath, and no placeholder left once
//! filled. The live ring runs the jsonpath ones with a real kubectl
//! (tests/live/commands.rs).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use clap::Parser;
use mdiag::cli::Cli;
use mdiag_core::catalogue::{PLACEHOLDERS, catalogue, fill, placeholders_in};

/// kubectl verbs a check may use: all of them only read.
const READ_VERBS: &[&str] = &[
    "get",
    "describe",
    "logs",
    "top",
    "events",
    "explain",
    "api-resources",
    "api-versions",
    "version",
    "cluster-info",
    "auth",
    "rollout",
];

/// A realistic value for every placeholder.
fn every_value() -> BTreeMap<String, String> {
    PLACEHOLDERS
        .iter()
        .map(|p| {
            let value = match *p {
                "namespace" => "modeldock-lab",
                "controller_namespace" => "modeldock-system",
                "controller" => "modeldock-controller",
                "pod" => "chart-demo-6d5f8c7b9-x2kqp",
                "replicaset" => "chart-demo-6d5f8c7b9",
                "container" => "server",
                "node" => "worker-1",
                "resource" => "msvc",
                "target" => "chart-demo",
                _ => "chart-demo",
            };
            (p.to_string(), value.to_string())
        })
        .collect()
}

/// What is wrong with one command line, if anything.
fn problems(command: &str, filled: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(words) = shlex::split(command) else {
        return vec!["does not split into shell words (an unclosed quote?)".into()];
    };
    match words.first().map(String::as_str) {
        Some("kubectl") => out.extend(kubectl_problems(&words)),
        Some("mdiag") => {
            if let Err(e) = Cli::try_parse_from(&words) {
                out.push(format!("mdiag rejects it: {e}"));
            }
        }
        other => out.push(format!("starts with {other:?}, not kubectl or mdiag")),
    }
    if filled {
        for p in placeholders_in(command) {
            out.push(format!("placeholder {{{p}}} left after filling"));
        }
        for p in PLACEHOLDERS {
            if command.contains(&format!("<{p}>")) {
                out.push(format!("<{p}> left after filling"));
            }
        }
    }
    out
}

fn kubectl_problems(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    // The verb is the first word that is not a flag or a flag's value.
    let mut i = 1;
    while i < words.len() && words[i].starts_with('-') {
        let takes_value = matches!(words[i].as_str(), "-n" | "--namespace" | "--context");
        i += if takes_value { 2 } else { 1 };
    }
    match words.get(i).map(String::as_str) {
        Some(verb) if READ_VERBS.contains(&verb) => {
            let sub = words.get(i + 1).map(String::as_str);
            if verb == "rollout" && !matches!(sub, Some("history" | "status")) {
                out.push(format!("kubectl rollout {sub:?} is not a read"));
            }
            if verb == "auth" && sub != Some("can-i") {
                out.push(format!("kubectl auth {sub:?} is not a read"));
            }
        }
        other => out.push(format!("{other:?} is not a read-only kubectl verb")),
    }
    for (n, word) in words.iter().enumerate() {
        let value = if word == "-o" || word == "--output" {
            words.get(n + 1).map(String::as_str)
        } else {
            word.strip_prefix("-o=")
                .or_else(|| word.strip_prefix("--output="))
        };
        let Some(value) = value else { continue };
        for prefix in ["jsonpath=", "jsonpath-as-json="] {
            if let Some(template) = value.strip_prefix(prefix) {
                out.extend(jsonpath_problems(template));
            }
        }
        if let Some(columns) = value.strip_prefix("custom-columns=")
            && columns.contains(['{', '}'])
        {
            out.push(format!("braces in custom-columns {columns:?}"));
        }
    }
    out
}

/// kubectl's jsonpath templates: text with `{expression}`s that do not
/// nest (a string literal inside may hold anything), and as many
/// `{range ...}` as `{end}`.
fn jsonpath_problems(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    if template.contains("{{") || template.contains("}}") {
        out.push(format!("doubled braces in jsonpath {template:?}"));
    }
    let mut expressions = Vec::new();
    let mut current: Option<String> = None;
    let mut in_string = false;
    for c in template.chars() {
        match (&mut current, c) {
            (Some(e), '"') => {
                in_string = !in_string;
                e.push(c);
            }
            (Some(e), _) if in_string => e.push(c),
            (Some(_), '{') => out.push(format!("nested brace in jsonpath {template:?}")),
            (Some(e), '}') => {
                expressions.push(std::mem::take(e));
                current = None;
            }
            (Some(e), _) => e.push(c),
            (None, '{') => current = Some(String::new()),
            (None, '}') => out.push(format!("unopened '}}' in jsonpath {template:?}")),
            (None, _) => {}
        }
    }
    if current.is_some() {
        out.push(format!("unclosed '{{' in jsonpath {template:?}"));
    }
    if expressions.is_empty() {
        out.push(format!("jsonpath {template:?} has no expression"));
    }
    let ranges = expressions
        .iter()
        .filter(|e| e.starts_with("range "))
        .count();
    let ends = expressions.iter().filter(|e| e.as_str() == "end").count();
    if ranges != ends {
        out.push(format!(
            "{ranges} range but {ends} end in jsonpath {template:?}"
        ));
    }
    for e in &expressions {
        let e = e.trim();
        let fine = e == "end"
            || e.starts_with("range .")
            || e.starts_with('.')
            || e.starts_with('@')
            || (e.starts_with('"') && e.ends_with('"') && e.len() >= 2);
        if !fine {
            out.push(format!("{{{e}}} is not a jsonpath expression"));
        }
    }
    out
}

#[test]
fn every_catalogue_command_parses_unfilled_and_filled() {
    let values = every_value();
    let mut wrong = Vec::new();
    for e in &catalogue().entries {
        for template in &e.check {
            for (form, command, filled) in [
                ("unfilled", template.clone(), false),
                ("filled", fill(template, &values).shell(), true),
            ] {
                for p in problems(&command, filled) {
                    wrong.push(format!("{} ({form}) `{command}`: {p}", e.id));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_target_without_a_model_service_gets_no_model_service_command() {
    let mut values = every_value();
    values.remove("modelservice");
    values.remove("inferenceservice");
    values.remove("rollout");
    values.remove("target");
    let mut wrong = Vec::new();
    for e in &catalogue().entries {
        for command in e.checks_for(&values).iter().map(|c| c.shell()) {
            let words = shlex::split(&command).unwrap_or_default();
            if words.iter().any(|w| w == "msvc" || w.starts_with("msvc/"))
                || command.contains("<modelservice>")
            {
                wrong.push(format!("{}: {command}", e.id));
            }
            for p in problems(&command, true) {
                wrong.push(format!("{}: `{command}`: {p}", e.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // And the mdiag commands name the Deployment instead.
    let traced: Vec<String> = catalogue()
        .entries
        .iter()
        .flat_map(|e| e.checks_for(&values))
        .map(|c| c.shell())
        .filter(|c| c.starts_with("mdiag trace"))
        .collect();
    assert!(!traced.is_empty());
    for c in traced {
        assert!(c.starts_with("mdiag trace deploy/chart-demo "), "{c}");
    }
}

#[test]
fn the_checker_itself_rejects_what_kubectl_rejects() {
    // The doubled braces the catalogue once printed, and other slips.
    for (command, why) in [
        (
            "kubectl get pod p -o jsonpath='{{.status}}'",
            "doubled braces",
        ),
        ("kubectl get pod p -o jsonpath='{.status'", "unclosed"),
        (
            "kubectl get pod p -o jsonpath='{range .items[*]}{.x}'",
            "1 range but 0 end",
        ),
        ("kubectl get pod p -o jsonpath='{status}'", "not a jsonpath"),
        ("kubectl delete pod p", "not a read-only kubectl verb"),
        ("kubectl get pod 'p", "shell words"),
        ("mdiag trace", "mdiag rejects it"),
    ] {
        let found = problems(command, false);
        assert!(
            found.iter().any(|p| p.contains(why)),
            "{command}: {found:?} should say {why:?}"
        );
    }
    assert!(
        problems("kubectl -n <namespace> get pod x", true)
            .iter()
            .any(|p| p.contains("<namespace> left"))
    );
    assert!(
        problems(
            r#"kubectl get pod p -o jsonpath='{range .a[*]}{.b}{"\n"}{end}'"#,
            false
        )
        .is_empty()
    );
}

#[test]
fn every_command_in_docs_symptoms_parses() {
    let md =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/symptoms.md"))
            .unwrap();
    let mut in_block = false;
    let mut seen = 0;
    let mut wrong = Vec::new();
    for line in md.lines() {
        match line {
            "```sh" => in_block = true,
            "```" => in_block = false,
            _ if in_block => {
                seen += 1;
                for p in problems(line, false) {
                    wrong.push(format!("`{line}`: {p}"));
                }
            }
            _ => {}
        }
    }
    assert!(seen > 50, "only {seen} commands found in docs/symptoms.md");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What `trace` prints to run, for every demo and fixture: the `next:`
/// command, every finding's checks with the real names, and the command
/// that completes a dump. Each reads as kubectl or mdiag reads it.
#[test]
fn every_command_trace_prints_for_the_fixtures_parses() {
    let mut seen = 0;
    let mut wrong = Vec::new();
    for (file, target) in common::expected_fixtures() {
        let snapshot =
            mdiag_source::read_snapshot_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join(&file))
                .unwrap();
        let d = common::diagnose_target(&snapshot, &target);
        let mut commands: Vec<String> = d.verdict.next.iter().map(|c| c.shell()).collect();
        for f in &d.findings {
            let entry = catalogue().get(f.id).unwrap();
            commands.extend(entry.checks_for(&f.vars).iter().map(|c| c.shell()));
        }
        commands.extend(
            d.gaps
                .iter()
                .filter_map(|g| g.complete_with.as_ref().map(|c| c.shell())),
        );
        for command in commands {
            seen += 1;
            for p in problems(&command, true) {
                wrong.push(format!("{file}: `{command}`: {p}"));
            }
        }
    }
    assert!(seen > 100, "only {seen} commands");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
