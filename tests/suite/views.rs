//! Snapshots of what users see besides `trace` (tests/suite/trace_view.rs):
//! the triage table, `triage --alert`, `explain` and `--help`, through the
//! binary, with no terminal, no colour and no COLUMNS from the caller.
//! Each is reviewed like code: a change in one is a change in the product.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.current_dir(root())
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("NO_COLOR", "1")
        .env("LANG", "C");
    cmd
}

/// Runs mdiag; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    run_in(None, args)
}

/// [`run`] in `dir` (the project root when `None`).
fn run_in(dir: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = mdiag();
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd.args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn snapshot(name: &str, description: String, text: &str) {
    insta::with_settings!({
        snapshot_path => root().join("tests/suite/snapshots/views"),
        prepend_module_to_snapshot => false,
        description => description,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// Columns of the widest line.
fn widest(text: &str) -> usize {
    text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// Lines wider than `width`, but for one that holds a single shell word
/// of a command (a quoted jsonpath), which cannot be broken without
/// changing what the shell reads.
fn too_wide(text: &str, width: usize) -> Vec<&str> {
    text.lines()
        .filter(|l| UnicodeWidthStr::width(*l) > width)
        .filter(|l| {
            let word = l.trim_start().trim_end_matches(" \\");
            shlex::split(word).is_none_or(|w| w.len() != 1)
        })
        .collect()
}

/// Demos and cases side by side in one kubectl List, each moved into a
/// namespace of its own: a crash loop and a plain Deployment that cannot
/// pull (errors), an HPA at its maximum (a warning while serving), a
/// rollout moving (info only), and a healthy one.
const MIX: &[(&str, &str)] = &[
    ("fixtures/demo/crash-loop.yaml", "team-a"),
    ("fixtures/demo/healthy.yaml", "team-b"),
    ("fixtures/cases/hpa-at-max.yaml", "team-c"),
    ("fixtures/demo/rollout-in-progress.yaml", "team-d"),
    ("fixtures/cases/plain-deployment-broken.yaml", "team-e"),
];

fn mix() -> (tempfile::TempDir, PathBuf) {
    let mut items: Vec<Value> = Vec::new();
    let mut shared: Vec<(String, String, String)> = Vec::new();
    for (file, ns) in MIX {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let mut list: Value = serde_saphyr::from_str(&text).unwrap();
        // The workload's namespace: the one most objects are in.
        let own = {
            let mut counts = std::collections::BTreeMap::new();
            for item in list["items"].as_array().unwrap() {
                if let Some(n) = item["metadata"]["namespace"].as_str() {
                    *counts.entry(n.to_string()).or_insert(0) += 1;
                }
            }
            counts.into_iter().max_by_key(|(_, n)| *n).unwrap().0
        };
        for mut item in list["items"].as_array_mut().unwrap().drain(..) {
            let namespace = item["metadata"]["namespace"].as_str().unwrap_or("");
            if namespace != own {
                // The controllers' objects (their Deployments, Leases), once.
                let key = (
                    item["kind"].as_str().unwrap_or("").to_string(),
                    namespace.to_string(),
                    item["metadata"]["name"].as_str().unwrap_or("").to_string(),
                );
                if !shared.contains(&key) {
                    shared.push(key);
                    items.push(item);
                }
                continue;
            }
            item["metadata"]["namespace"] = (*ns).into();
            for key in ["involvedObject", "regarding"] {
                if item.get(key).is_some_and(|r| r.is_object()) {
                    item[key]["namespace"] = (*ns).into();
                }
            }
            items.push(item);
        }
    }
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mix.json");
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    (dir, path)
}

/// Each workload of the mix is judged in it as in its own file: the same
/// state and lead finding.
#[test]
fn the_mix_judges_each_workload_as_its_own_file_does() {
    let (_dir, file) = mix();
    let (_, out, err) = run(&[
        "triage",
        "-A",
        "--snapshot",
        file.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), MIX.len());
    for (file, ns) in MIX {
        let alone: Value = {
            let (_, out, _) = run(&["triage", "-A", "--snapshot", file, "-o", "json"]);
            serde_json::from_str(&out).unwrap()
        };
        let alone = &alone["items"][0];
        let mixed = items
            .iter()
            .find(|i| i["target"]["namespace"] == *ns)
            .unwrap();
        for field in ["state", "lead", "last_step", "missing"] {
            assert_eq!(
                mixed["verdict"][field], alone["verdict"][field],
                "{file} {field}"
            );
        }
    }
}

/// The triage table of each fixture of fixtures/triage and of the mix, in
/// both languages at 80 and 120 columns; it fits the width.
#[test]
fn triage_tables() {
    // The mix is read as `mix.json` from its own directory: the commands
    // the view prints name the file as it was given, the same on every
    // machine.
    let (dir, _) = mix();
    let mix = "mix.json".to_string();
    let mut inputs: Vec<(String, String, String)> = ["hpa-only", "pods-only", "services-only"]
        .iter()
        .map(|n| {
            (
                n.to_string(),
                format!("fixtures/triage/{n}.yaml"),
                format!("fixtures/triage/{n}.yaml"),
            )
        })
        .collect();
    inputs.push(("mix".into(), mix, "MIX (see tests/suite/views.rs)".into()));
    for (name, file, shown) in &inputs {
        for lang in ["en", "zh"] {
            for width in [80usize, 120] {
                let w = width.to_string();
                let args = [
                    "triage",
                    "-A",
                    "--snapshot",
                    file,
                    "--lang",
                    lang,
                    "--width",
                    &w,
                ];
                let cwd = (name == "mix").then_some(dir.path());
                let (code, out, err) = run_in(cwd, &args);
                assert_eq!(code, 1, "{name}: {err}");
                // The table keeps names and ids whole, even past the width
                // (see the_triage_table_follows_the_width); what follows it
                // is wrapped.
                let after_table: String = out
                    .lines()
                    .skip_while(|l| l.starts_with(' '))
                    .map(|l| format!("{l}\n"))
                    .collect();
                assert!(
                    too_wide(&after_table, width).is_empty(),
                    "{name} {lang} {width}:\n{out}"
                );
                snapshot(
                    &format!("triage.{name}.{lang}.{width}"),
                    format!("mdiag triage -A --snapshot {shown} --lang {lang} --width {w}"),
                    &out,
                );
            }
        }
    }
    // --all: the healthy row too.
    let (_, out, _) = run_in(
        Some(dir.path()),
        &[
            "triage",
            "-A",
            "--snapshot",
            &inputs[3].1,
            "--all",
            "--width",
            "120",
        ],
    );
    assert!(out.contains("team-b"), "{out}");
    snapshot(
        "triage.mix.all.en.120",
        "mdiag triage -A --snapshot MIX --all --width 120".into(),
        &out,
    );
}

/// The table follows --width: narrower, its cells wrap; wider, it keeps
/// its natural width (it is not stretched).
#[test]
fn the_triage_table_follows_the_width() {
    let (_dir, mix) = mix();
    let mix = mix.to_str().unwrap();
    let at = |w: &str| run(&["triage", "-A", "--snapshot", mix, "--width", w]).1;
    let (narrow, wide, widest_run) = (at("60"), at("120"), at("300"));
    // Too narrow for one line a workload: the step's ends and the
    // severity stack, and names and finding ids stay whole (the table may
    // then pass the width rather than cut them).
    assert!(widest(&narrow) < widest(&wide), "{narrow}");
    for whole in [
        "msvc/chart-demo",
        "deploy/web",
        "image-pull-not-found",
        "rollout-in-progress",
    ] {
        assert!(narrow.contains(whole), "{whole} cut: {narrow}");
    }
    assert!(widest(&wide) > 80 && widest(&wide) <= 120, "{wide}");
    assert_eq!(widest(&widest_run), widest(&at("250")));
    assert!(narrow.lines().count() > wide.lines().count());
    // With no --width, a pipe gets COLUMNS, else 80.
    let piped = run(&["triage", "-A", "--snapshot", mix]).1;
    assert_eq!(piped, at("80"));
    let out = mdiag()
        .args(["triage", "-A", "--snapshot", mix])
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), wide);
}

/// `triage --alert`: the alerts, then the trace of what they are about.
#[test]
fn alert_views() {
    for (alert, lang) in [
        ("webhook-firing.json", "en"),
        ("webhook-firing.json", "zh"),
        ("labels.yaml", "en"),
    ] {
        let file = format!("fixtures/alerts/{alert}");
        let args = [
            "triage",
            "--alert",
            &file,
            "--snapshot",
            "fixtures/demo/snapshot-crash-loop.yaml",
            "--lang",
            lang,
            "--width",
            "80",
        ];
        let (code, out, err) = run(&args);
        assert_eq!(code, 1, "{alert}: {err}");
        snapshot(
            &format!("alert.{}.{lang}", alert.split('.').next().unwrap()),
            format!("mdiag {}", args.join(" ")),
            &out,
        );
    }
}

/// `explain`: the list, one id, a word for it, an exit code, an id filled
/// with the names of a Pod in a snapshot, and a word it does not know.
#[test]
fn explain_views() {
    let pod = "pod/chart-demo-ntmp458kfb-pvgk2";
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("explain.list.en", vec!["explain"]),
        ("explain.list.zh", vec!["explain", "--lang", "zh"]),
        ("explain.crash-loop.en", vec!["explain", "crash-loop"]),
        (
            "explain.crash-loop.zh",
            vec!["explain", "crash-loop", "--lang", "zh"],
        ),
        ("explain.alias-crashloop.en", vec!["explain", "crashloop"]),
        ("explain.exit-code-137.en", vec!["explain", "137"]),
        (
            "explain.crash-loop.pod.en",
            vec!["explain", "crash-loop", pod, "--snapshot", file],
        ),
    ];
    for (name, args) in cases {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(err.is_empty(), "{name}: {err}");
        snapshot(name, format!("mdiag {}", args.join(" ")), &out);
    }
    // Filled in: the Pod's own names, no placeholder left in a command.
    let (_, filled, _) = run(&["explain", "crash-loop", pod, "--snapshot", file]);
    assert!(filled.contains("chart-demo-ntmp458kfb-pvgk2"), "{filled}");
    assert!(!filled.contains("{pod}"), "{filled}");
    // A word it does not know: exit 2, the closest ids on stderr.
    let (code, out, err) = run(&["explain", "crashlop"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    snapshot(
        "explain.unknown.en",
        "mdiag explain crashlop (stderr)".into(),
        &err,
    );
}

/// `--help` of mdiag and of each subcommand, at 80 columns (COLUMNS, as
/// clap reads it when stdout is not a terminal).
#[test]
fn help_pages() {
    for sub in ["", "trace", "triage", "gate", "snapshot", "explain", "mcp"] {
        let mut args: Vec<&str> = Vec::new();
        if !sub.is_empty() {
            args.push(sub);
        }
        args.push("--help");
        let out = mdiag().args(&args).env("COLUMNS", "80").output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(widest(&text) <= 80, "{sub}:\n{text}");
        let name = if sub.is_empty() { "mdiag" } else { sub };
        snapshot(
            &format!("help.{name}"),
            format!("COLUMNS=80 mdiag {}", args.join(" ")),
            &text,
        );
    }
}
