//! Hostile text stays inert (docs/security.md, "Inert output" and
//! "Commands"): a snapshot whose Pod name, image, termination message and
//! events carry escape sequences, a clipboard write, a screen clear, CR and
//! backspace overwrites, a C1 code, bidi and zero-width characters, a
//! newline that would forge a `next:` line and a `$(...)` that would run,
//! fed through every view; the bytes are checked, and every command printed
//! is handed to real shells to see which words come back.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

use super::common::{fixture_path, mdiag};

/// A Pod name no apiserver would take, which a file can hold.
const POD: &str = "x$(touch /tmp/mdiag-owned)`id`\u{1b}]52;c;b3duZWQ=\u{7}\nSERVING next: rm -rf ~\u{202e}gnp.exe\u{200b}";
/// An image name the apiserver accepts (it refuses only surrounding
/// whitespace): an OSC 8 link and a screen clear.
const IMAGE: &str = "registry.example.com/m:v1\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\\u{1b}[2J\u{1b}[H";
/// Text a container or a kubelet writes: CR and backspace overwrites, a C1
/// CSI, a title change.
const SAID: &str = "boom\rREADY\u{8}\u{8} \u{9b}32mfine\u{1b}]0;owned\u{7}\u{85}next";

/// The demo's two Pods; the first gets [`POD`], the other `POD` and `-b`.
const ORIGINAL_PODS: [&str; 2] = ["chart-demo-ntmp458kfb-ltbsl", "chart-demo-ntmp458kfb-pvgk2"];

/// Every string of a JSON value, rewritten by `f`.
fn rewrite(v: &mut Value, f: &dyn Fn(&str) -> Option<String>) {
    match v {
        Value::String(s) => {
            if let Some(new) = f(s) {
                *s = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite(i, f)),
        Value::Object(map) => map.values_mut().for_each(|i| rewrite(i, f)),
        _ => {}
    }
}

/// The crash-loop demo with hostile text in the Pod's name, the images,
/// every message and the Events, as a JSON file in `dir`.
fn hostile_snapshot(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture_path("crash-loop")).unwrap();
    let mut v: Value = serde_saphyr::from_str(&text).unwrap();
    rewrite(&mut v, &|s| {
        if s.contains(ORIGINAL_PODS[0]) || s.contains(ORIGINAL_PODS[1]) {
            Some(
                s.replace(ORIGINAL_PODS[0], POD)
                    .replace(ORIGINAL_PODS[1], &format!("{POD}-b")),
            )
        } else if s.starts_with("registry.example.com/") {
            Some(IMAGE.to_string())
        } else {
            None
        }
    });
    // Messages and reasons: the kubelet's and the runtime's words.
    fn said(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, val) in map.iter_mut() {
                    if k == "message" && val.is_string() {
                        *val = Value::String(format!("{} {SAID}", val.as_str().unwrap()));
                    } else {
                        said(val);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(said),
            _ => {}
        }
    }
    said(&mut v);
    let file = dir.join("hostile.json");
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    file
}

/// The characters that must never be in the output raw, with where.
fn raw_invisibles(bytes: &[u8], allow_sgr: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = if allow_sgr {
        regex::Regex::new("\u{1b}\\[[0-9;]*m")
            .unwrap()
            .replace_all(&text, "")
            .into_owned()
    } else {
        text.into_owned()
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.chars().any(mdiag_core::inert::invisible))
        .map(|(i, l)| format!("line {}: {l:?}", i + 1))
        .collect()
}

fn run(args: &[&str], file: &Path, extra_env: &[(&str, &str)]) -> (Vec<u8>, Vec<u8>, i32) {
    let mut cmd = mdiag();
    cmd.args(args).arg("--snapshot").arg(file);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

#[test]
fn no_view_sends_a_raw_control_character() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let views: &[(&[&str], bool)] = &[
        (&["trace", "chart-demo", "--color", "never"], false),
        (&["trace", "chart-demo", "--color", "never", "-v"], false),
        (
            &["trace", "chart-demo", "--color", "never", "--logs"],
            false,
        ),
        (&["trace", "chart-demo", "--color", "always", "-v"], true),
        (&["trace", "chart-demo", "-o", "json"], false),
        (&["trace", "chart-demo", "-o", "yaml"], false),
        (&["trace", "chart-demo", "-o", "html"], false),
        (&["triage", "-A", "--color", "never"], false),
        (&["triage", "-A", "--color", "always"], true),
        (&["triage", "-A", "-o", "json"], false),
        (&["triage", "-A", "-o", "yaml"], false),
        (&["triage", "-A", "-o", "html"], false),
        (&["explain", "crash-loop", "chart-demo"], false),
    ];
    let mut wrong = Vec::new();
    for (args, sgr) in views {
        let (stdout, stderr, code) = run(args, &file, &[]);
        assert!(
            !stdout.is_empty() || code == 2,
            "{args:?} printed nothing: {}",
            String::from_utf8_lossy(&stderr)
        );
        for (stream, bytes) in [("stdout", &stdout), ("stderr", &stderr)] {
            for line in raw_invisibles(bytes, *sgr) {
                wrong.push(format!("{args:?} {stream} {line}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_hostile_text_is_shown_escaped_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let (stdout, _, _) = run(
        &["trace", "chart-demo", "--color", "never", "-v"],
        &file,
        &[],
    );
    let text = String::from_utf8(stdout).unwrap();
    // The escapes stand where the characters were, so a reader sees them.
    assert!(text.contains("\\x1b]52;c;b3duZWQ=\\x07"), "{text}");
    assert!(text.contains("\\u{202e}"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("SERVING")), "{text}");
    // The JSON keeps the real name: the same data, escaped.
    let (json, _, _) = run(&["trace", "chart-demo", "-o", "json"], &file, &[]);
    let v: Value = serde_json::from_slice(&json).unwrap();
    let names: Vec<&str> = v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&POD), "{names:?}");
}

/// What a shell makes of one printed line: the words, NUL-separated by
/// `printf`, which takes the place of the program (so nothing runs).
fn words_in(shell: &[&str], line: &str) -> Option<Vec<String>> {
    let script = format!("printf '%s\\0' {line}");
    let out = Process::new(shell[0])
        .args(&shell[1..])
        .arg(&script)
        .env("HOME", "/nonexistent")
        .output()
        .ok()?;
    out.status.success().then(|| {
        out.stdout
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    })
}

/// The shells the printed commands are tried in: bash, and busybox's POSIX
/// sh where it is installed (both read `$'...'`, POSIX.1-2024).
fn shells() -> Vec<Vec<&'static str>> {
    let mut shells = vec![vec!["bash", "--posix", "-c"]];
    if Path::new("/bin/busybox").exists() {
        shells.push(vec!["/bin/busybox", "sh", "-c"]);
    }
    shells
}

#[test]
fn every_printed_command_pastes_as_exactly_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let (json, stderr, _) = run(&["trace", "chart-demo", "-o", "json"], &file, &[]);
    let v: Value = serde_json::from_slice(&json)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&stderr)));
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    let argv = |a: &Value| -> Vec<String> {
        a.as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    };
    let next = &v["verdict"]["next"];
    commands.push((
        next.as_str()
            .expect("a failing rollout has a next command")
            .to_string(),
        argv(&v["verdict"]["next_argv"]),
    ));
    for f in v["findings"].as_array().unwrap() {
        for (line, words) in f["check"]
            .as_array()
            .unwrap()
            .iter()
            .zip(f["check_argv"].as_array().unwrap())
        {
            commands.push((line.as_str().unwrap().to_string(), argv(words)));
        }
    }
    let hostile: Vec<_> = commands
        .iter()
        .filter(|(_, words)| words.iter().any(|w| w == POD))
        .collect();
    assert!(
        hostile.len() >= 3,
        "the hostile Pod name is in few commands: {commands:#?}"
    );
    for shell in shells() {
        for (line, words) in &commands {
            assert!(
                !line.contains('\n') && !line.chars().any(mdiag_core::inert::invisible),
                "{line:?}"
            );
            assert_eq!(
                words_in(&shell, line).as_ref(),
                Some(words),
                "{shell:?} reads `{line}` otherwise"
            );
        }
    }
    assert!(
        !Path::new("/tmp/mdiag-owned").exists(),
        "a printed command ran its $(...)"
    );
}

#[test]
fn the_human_next_line_is_the_json_next() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let (json, _, _) = run(&["trace", "chart-demo", "-o", "json"], &file, &[]);
    let v: Value = serde_json::from_slice(&json).unwrap();
    let next = v["verdict"]["next"].as_str().unwrap().to_string();
    let (table, _, _) = run(
        &["trace", "chart-demo", "--color", "never", "--width", "400"],
        &file,
        &[],
    );
    let table = String::from_utf8(table).unwrap();
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().strip_prefix("next:").map(str::trim) == Some(&next)),
        "`{next}` is not the next: line of\n{table}"
    );
}

#[test]
fn an_mdiag_command_read_from_a_file_reads_that_file_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let (json, _, _) = run(
        &[
            "trace",
            "chart-demo",
            "-o",
            "json",
            "--at",
            "2026-11-28T11:00:00Z",
        ],
        &file,
        &[],
    );
    let v: Value = serde_json::from_slice(&json).unwrap();
    let mdiag_commands: Vec<Vec<String>> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["check_argv"].as_array().unwrap().clone())
        .map(|a| {
            a.as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|a| a.first().map(String::as_str) == Some("mdiag"))
        .collect();
    assert!(
        !mdiag_commands.is_empty(),
        "no mdiag command among the checks"
    );
    for words in &mdiag_commands {
        let at = words
            .iter()
            .position(|w| w == "--snapshot")
            .expect("--snapshot kept");
        assert_eq!(Path::new(&words[at + 1]), file, "{words:?}");
        let clock = words.iter().position(|w| w == "--at").expect("--at kept");
        assert_eq!(words[clock + 1], "2026-11-28T11:00:00Z", "{words:?}");
        // And the binary takes it.
        let out = mdiag()
            .args(&words[1..])
            .arg("-o")
            .arg("json")
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{words:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn an_error_quoting_a_hostile_file_is_inert() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: \"\u{1b}]52;c;eA==\u{7}\"\n  : : [\u{1b}[2J\n",
    )
    .unwrap();
    let (stdout, stderr, code) = run(&["trace", "x"], &file, &[]);
    assert_eq!(code, 2, "{}", String::from_utf8_lossy(&stderr));
    assert!(stdout.is_empty());
    assert!(!stderr.is_empty());
    let wrong = raw_invisibles(&stderr, false);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The MCP server's answers are inert too: every byte of its reply to a
/// trace and a triage of the hostile file, text and structured report.
#[test]
fn mcp_answers_hold_no_raw_control_character() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let mut child = Process::new(env!("CARGO_BIN_EXE_mdiag"))
        .arg("mcp")
        .arg("--allow-file")
        .arg(dir.path())
        .env_remove("KUBECONFIG")
        .env("LANG", "C")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let snapshot = file.to_str().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "hostile", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "trace", "arguments": {"target": "chart-demo", "snapshot": snapshot}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "triage", "arguments": {"snapshot": snapshot}}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("mdiag mcp answers within a minute");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 || v["id"] == 3 {
            assert!(v["result"]["isError"] != true, "the call failed: {line}");
            answers.push(line);
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    for line in &answers {
        let raw: Vec<char> = line
            .chars()
            .filter(|c| mdiag_core::inert::invisible(*c))
            .collect();
        assert!(raw.is_empty(), "raw {raw:?} in {line}");
        // The hostile name is there, escaped, as the same data.
        assert!(
            line.contains("\\u202e") || line.contains("\\\\u{202e}"),
            "{line}"
        );
    }
}

/// The gate waits on a live cluster only; what it would print of the
/// hostile moment (its progress line on stderr, its report on stdout, the
/// report, JUnit and HTML files) is made by the code its wait runs.
#[test]
fn the_gates_views_and_progress_line_are_inert() {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let files: Vec<String> = ["r.json", "j.xml", "p.html"]
        .iter()
        .map(|f| dir.path().join(f).to_str().unwrap().to_string())
        .collect();
    for format in ["table", "json"] {
        let argv = [
            "mdiag",
            "-n",
            "modeldock-lab",
            "--color",
            "never",
            "gate",
            "chart-demo",
            "-o",
            format,
            "--report",
            &files[0],
            "--junit",
            &files[1],
            "--html",
            &files[2],
        ];
        let cli = mdiag::cli::Cli::try_parse_from(argv).unwrap();
        let mdiag::cli::Command::Gate(args) = &cli.command else {
            unreachable!()
        };
        let request = mdiag::request::GateRequest::from_cli(&cli.global, args).unwrap();
        let snapshot = mdiag_source::read_snapshot_file(&file).unwrap();
        let views = mdiag::cmd::gate::views_of_moment(
            &request,
            snapshot,
            &Default::default(),
            mdiag_core::analysis::gate::Outcome::Failed,
        )
        .unwrap();
        let progress = views.progress.unwrap();
        assert!(progress.contains("[crash-loop]"), "{progress}");
        let texts = [
            ("progress", progress),
            ("stdout", views.stdout),
            ("report", views.report.unwrap()),
            ("junit", views.junit.unwrap()),
            ("html", views.html.unwrap()),
        ];
        let mut wrong = Vec::new();
        for (what, text) in &texts {
            for line in raw_invisibles(text.as_bytes(), false) {
                wrong.push(format!("{format} {what} {line}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
