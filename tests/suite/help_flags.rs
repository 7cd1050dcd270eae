//! `--help` says what each command takes: every flag a command's help
//! lists (long, short and alias) is run on that command, with a value that
//! fits, and must not be a usage error (2) for being there; what the help
//! does not list is refused by the parser; and each help ends with the
//! exit codes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::common::mdiag;

const COMMANDS: [&str; 6] = ["trace", "triage", "gate", "snapshot", "explain", "mcp"];

const FIXTURE: &str = "fixtures/demo/crash-loop.yaml";

/// A time inside the fixture (created 10:00, newest 10:11).
const AT: &str = "2026-11-28T10:11:00Z";

/// A flag as the help lists it: its names and the value it takes.
#[derive(Debug, Clone)]
struct Listed {
    /// `--output`, then `-o`, then aliases such as `--file`.
    names: Vec<String>,
    /// The value's name (`FILE`, `OUTPUT`), for a flag that takes one.
    value: Option<String>,
}

impl Listed {
    fn long(&self) -> &str {
        &self.names[0]
    }
}

fn help(command: &str) -> String {
    let out = mdiag()
        .args([command, "--help"])
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{command} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The flags of one help page: each line indented as clap indents a
/// flag (2 or 6 spaces; descriptions are indented further), and the
/// `[aliases: ...]` of its text.
fn listed(help: &str) -> Vec<Listed> {
    let is_name = |w: &str| {
        let b = w.as_bytes();
        (b.len() == 2 && b[0] == b'-' && b[1].is_ascii_alphabetic())
            || (b.len() > 2 && w.starts_with("--") && b[2].is_ascii_lowercase())
    };
    let mut flags: Vec<Listed> = Vec::new();
    for line in help.lines() {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let first = text.split_whitespace().next().unwrap_or("");
        if (indent == 2 || indent == 6) && is_name(first.trim_end_matches(',')) {
            let mut names = Vec::new();
            let mut value = None;
            for word in text.split_whitespace() {
                let word = word.trim_end_matches(',');
                if let Some(v) = word.strip_prefix('<') {
                    value = Some(v.trim_end_matches('>').to_string());
                    break;
                }
                if !is_name(word) {
                    break;
                }
                names.push(word.to_string());
            }
            // The long name first.
            names.sort_by_key(|n| !n.starts_with("--"));
            flags.push(Listed { names, value });
        }
        if let (Some(last), Some(i)) = (flags.last_mut(), line.find("[aliases: ")) {
            let aliases = &line[i + "[aliases: ".len()..];
            let aliases = &aliases[..aliases.find(']').unwrap()];
            last.names
                .extend(aliases.split(", ").map(|a| a.trim().to_string()));
        }
    }
    flags
}

/// What each command is run with besides the flag tried: flag and value,
/// left out when the flag tried is one of them.
fn base(command: &str, dir: &Path) -> (Vec<&'static str>, Vec<(&'static str, String)>) {
    let kubeconfig = dir.join("kubeconfig").display().to_string();
    let file = || ("--snapshot", FIXTURE.to_string());
    match command {
        "trace" => (vec!["chart-demo"], vec![file()]),
        "triage" => (vec![], vec![file()]),
        // gate reads only a cluster: one that does not answer (4).
        "gate" => (
            vec!["chart-demo"],
            vec![
                ("--kubeconfig", kubeconfig),
                ("--timeout", "2s".into()),
                ("--request-timeout", "2s".into()),
            ],
        ),
        "snapshot" => (
            vec!["chart-demo"],
            vec![
                file(),
                ("--output-file", dir.join("out").display().to_string()),
            ],
        ),
        "explain" => (vec!["crash-loop", "chart-demo"], vec![file()]),
        "mcp" => (vec![], vec![]),
        other => panic!("no base for {other}"),
    }
}

/// A value for each flag that takes one, by its long name: a flag listed
/// with no value here fails the test until one is given.
fn values(dir: &Path) -> BTreeMap<&'static str, String> {
    let path = |name: &str| dir.join(name).display().to_string();
    BTreeMap::from([
        ("--kubeconfig", path("kubeconfig")),
        ("--context", "c".to_string()),
        ("--namespace", "modeldock-lab".to_string()),
        ("--lang", "zh".to_string()),
        ("--color", "never".to_string()),
        ("--resource", "modelservices.modeldock.io".to_string()),
        (
            "--controller",
            "modeldock-system/modeldock-controller".to_string(),
        ),
        ("--request-timeout", "2s".to_string()),
        ("--redact", "s3cr[e]t".to_string()),
        ("--snapshot", FIXTURE.to_string()),
        ("--at", AT.to_string()),
        ("--output", "json".to_string()),
        ("--width", "100".to_string()),
        (
            "--selector",
            "app.kubernetes.io/name=chart-demo".to_string(),
        ),
        ("--alert", "fixtures/alerts/webhook-firing.json".to_string()),
        ("--timeout", "2s".to_string()),
        ("--fail-on", "crash-loop,oom-killed".to_string()),
        ("--max-restarts", "2".to_string()),
        ("--report", path("gate.json")),
        ("--junit", path("gate.xml")),
        ("--html", path("gate.html")),
        ("--evidence", path("evidence.yaml")),
        ("--helm-release", "chart-demo".to_string()),
        ("--output-file", path("snap")),
        ("--log-bytes", "1000".to_string()),
        ("--log-lines", "10".to_string()),
        ("--concurrency", "2".to_string()),
        ("--allow-file", "fixtures/demo".to_string()),
    ])
}

/// A flag that cannot share the command line of the base with something
/// in it: the base it is tried on instead.
fn exception(command: &str, flag: &str) -> Option<(Vec<&'static str>, Vec<&'static str>)> {
    match (command, flag) {
        // Logs are read live: tried on a cluster that does not answer.
        ("trace", "--logs") => Some((vec!["chart-demo"], vec!["--request-timeout", "2s"])),
        // Every context of the kubeconfig is a cluster: read live.
        ("triage", "--all-contexts") => Some((vec![], vec!["-A", "--request-timeout", "2s"])),
        // --list stands for "no symptom".
        ("explain", "--list") => Some((vec![], vec![])),
        _ => None,
    }
}

/// What an MCP client sends first; the server ends with 0 when stdin
/// closes after it (before it, the session never started: 2).
const MCP_HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"help-flags","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
);

/// Runs one command line; its exit code and stderr.
fn run(args: &[String], dir: &Path) -> (Option<i32>, String) {
    let out = mdiag()
        .args(args)
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .env("HOME", dir)
        .timeout(Duration::from_secs(60))
        // mcp serves until stdin closes: a client's handshake, then the end.
        .write_stdin(MCP_HANDSHAKE)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_flag_each_help_lists_is_taken_by_that_command() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1 of the loopback.
    std::fs::write(
        dir.path().join("kubeconfig"),
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: modeldock-lab\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let values = values(dir.path());
    let mut tried = 0;
    for command in COMMANDS {
        let flags = listed(&help(command));
        assert!(flags.len() > 10, "{command}: {flags:?}");
        let (positional, pairs) = base(command, dir.path());
        for flag in flags {
            if matches!(flag.long(), "--help" | "--version") {
                continue;
            }
            let value = flag.value.as_ref().map(|name| {
                values
                    .get(flag.long())
                    .unwrap_or_else(|| panic!("{command} {}: no value for <{name}>", flag.long()))
                    .clone()
            });
            for name in &flag.names {
                let mut args: Vec<String> = vec![command.to_string()];
                match exception(command, flag.long()) {
                    Some((pos, rest)) => {
                        args.extend(pos.iter().map(|s| s.to_string()));
                        args.extend(rest.iter().map(|s| s.to_string()));
                    }
                    None => {
                        args.extend(positional.iter().map(|s| s.to_string()));
                        for (f, v) in pairs.iter().filter(|(f, _)| *f != flag.long()) {
                            args.push(f.to_string());
                            args.push(v.clone());
                        }
                    }
                }
                args.push(name.clone());
                args.extend(value.clone());
                let (code, stderr) = run(&args, dir.path());
                assert_ne!(code, Some(2), "mdiag {}: {stderr}", args.join(" "));
                assert!(code.is_some(), "mdiag {}: killed", args.join(" "));
                tried += 1;
            }
        }
    }
    // Each command's own flags, its short forms and the global ones.
    assert!(tried > 100, "{tried} command lines");
}

#[test]
fn what_a_command_refuses_is_not_on_it() {
    for (command, refused) in [
        ("trace", &["--all-namespaces", "--selector"][..]),
        (
            "gate",
            &["--snapshot", "--at", "--all-namespaces", "--selector"],
        ),
        ("snapshot", &["--all-namespaces", "--selector", "--at"]),
        ("explain", &["--all-namespaces", "--selector"]),
    ] {
        let names: Vec<String> = listed(&help(command))
            .into_iter()
            .flat_map(|f| f.names)
            .collect();
        for flag in refused {
            assert!(!names.iter().any(|n| n == flag), "{command} lists {flag}");
            let (code, stderr) = run(
                &[
                    command.to_string(),
                    "x".into(),
                    flag.to_string(),
                    "v".into(),
                ],
                Path::new("/nonexistent"),
            );
            assert_eq!(code, Some(2), "{command} {flag}: {stderr}");
            assert!(
                stderr.contains(&format!("unexpected argument '{flag}'")),
                "{command} {flag}: {stderr}"
            );
        }
    }
    // explain draws no page: html is not one of its formats.
    let (code, stderr) = run(
        &[
            "explain".into(),
            "crash-loop".into(),
            "-o".into(),
            "html".into(),
        ],
        Path::new("/nonexistent"),
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("invalid value 'html'"), "{stderr}");
}

#[test]
fn each_help_puts_global_flags_apart_and_ends_with_the_exit_codes() {
    let codes = mdiag::exit::exit_codes_help();
    for command in COMMANDS {
        let text = help(command);
        assert!(
            text.trim_end().ends_with(codes.trim_end()),
            "{command}:\n{text}"
        );
        let (own, global) = text
            .split_once("\nGlobal options:\n")
            .unwrap_or_else(|| panic!("{command}: no Global options heading"));
        // The global flags are under their heading only.
        let own: Vec<String> = listed(own).into_iter().flat_map(|f| f.names).collect();
        let global: Vec<String> = listed(global).into_iter().flat_map(|f| f.names).collect();
        for flag in [
            "--kubeconfig",
            "--context",
            "--namespace",
            "--lang",
            "--redact",
        ] {
            assert!(global.iter().any(|n| n == flag), "{command} {flag}");
            assert!(!own.iter().any(|n| n == flag), "{command} {flag}");
        }
    }
}

#[test]
fn gate_help_shows_the_default_fail_on_ids_of_the_policy() {
    let text = help("gate");
    for id in mdiag_core::analysis::gate::DEFAULT_FAIL_ON {
        assert!(text.contains(id.as_str()), "{id:?} not in:\n{text}");
    }
}
