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
    mix_of(MIX.iter().map(|(f, ns)| (f.to_string(), ns.to_string())))
}

/// Every demo, case and triage fixture that is a kubectl List, each in a
/// namespace of its own (`team-01`, `team-02`...): every kind of row the
/// table has, side by side. Its workloads are judged at the newest time
/// of all the files, so not each as its own file judges it.
fn everything() -> (tempfile::TempDir, PathBuf) {
    let mut files: Vec<String> = Vec::new();
    for folder in ["fixtures/demo", "fixtures/cases", "fixtures/triage"] {
        for name in crate::common::files_in(folder) {
            let file = format!("{folder}/{name}.yaml");
            let text = std::fs::read_to_string(root().join(&file)).unwrap();
            if text.lines().any(|l| l == "kind: List") {
                files.push(file);
            }
        }
    }
    assert!(files.len() > 50, "{files:?}");
    mix_of(
        files
            .into_iter()
            .enumerate()
            .map(|(i, f)| (f, format!("team-{:02}", i + 1))),
    )
}

/// The files' objects in one List, each file's moved into its namespace;
/// what is in no namespace or another one (Nodes, the controller) once.
fn mix_of(files: impl IntoIterator<Item = (String, String)>) -> (tempfile::TempDir, PathBuf) {
    let mut items: Vec<Value> = Vec::new();
    let mut shared: Vec<(String, String, String)> = Vec::new();
    for (file, ns) in files {
        let ns = ns.as_str();
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
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
            item["metadata"]["namespace"] = ns.into();
            for key in ["involvedObject", "regarding"] {
                if item.get(key).is_some_and(|r| r.is_object()) {
                    item[key]["namespace"] = ns.into();
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
/// both languages at 60, 80 and 120 columns, and the mix with `-v`; every
/// line fits the width.
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
            for width in [60usize, 80, 120] {
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
                assert!(
                    too_wide(&out, width).is_empty(),
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
    // --all: the healthy row too, with nothing under FINDING.
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
    let healthy = out.lines().find(|l| l.starts_with("team-b")).unwrap();
    assert_eq!(healthy.split_whitespace().last(), Some("-"), "{out}");
    assert!(!healthy.contains("healthy"), "{out}");
    snapshot(
        "triage.mix.all.en.120",
        "mdiag triage -A --snapshot MIX --all --width 120".into(),
        &out,
    );
    // -v: each row's findings and Pods under it.
    for lang in ["en", "zh"] {
        let (_, out, _) = run_in(
            Some(dir.path()),
            &[
                "triage",
                "-A",
                "--snapshot",
                &inputs[3].1,
                "-v",
                "--lang",
                lang,
                "--width",
                "80",
            ],
        );
        assert!(too_wide(&out, 80).is_empty(), "{lang}:\n{out}");
        snapshot(
            &format!("triage.mix.verbose.{lang}.80"),
            format!("mdiag triage -A --snapshot MIX -v --lang {lang} --width 80"),
            &out,
        );
    }
}

/// The rows of a triage's JSON report, as the table names them: the
/// namespace and `kind/name` of every item and every object outside them.
fn report_rows(report: &Value) -> Vec<(String, String)> {
    let short = |kind: &str| {
        match kind {
            "ModelService" => "msvc",
            "InferenceService" => "isvc",
            "Rollout" => "rollout",
            "LeaderWorkerSet" => "lws",
            "KnativeService" => "ksvc",
            "Deployment" => "deploy",
            "StatefulSet" => "sts",
            "DaemonSet" => "ds",
            "ReplicaSet" => "rs",
            "Job" => "job",
            "CronJob" => "cj",
            "Pod" => "pod",
            "Service" => "svc",
            "HorizontalPodAutoscaler" => "hpa",
            "PodDisruptionBudget" => "pdb",
            other => panic!("no short name for {other}"),
        }
        .to_string()
    };
    let mut rows = Vec::new();
    for item in report["items"].as_array().unwrap() {
        let t = &item["target"];
        rows.push((
            t["namespace"].as_str().unwrap().to_string(),
            format!(
                "{}/{}",
                short(t["kind"].as_str().unwrap()),
                t["name"].as_str().unwrap()
            ),
        ));
    }
    for o in report["outside"].as_array().unwrap() {
        rows.push((
            o["namespace"].as_str().unwrap().to_string(),
            format!(
                "{}/{}",
                short(o["kind"].as_str().unwrap()),
                o["name"].as_str().unwrap()
            ),
        ));
    }
    rows.sort();
    rows
}

/// The table's header and its rows in `out`: the line that starts with
/// the header of the namespace or the workload column, and the lines
/// after it up to the first that names no row of `rows` (the command or
/// what could not be read). Each row as its namespace and workload; and
/// how many rows had their finding on a line of their own under them.
fn table_rows<'a>(
    out: &'a str,
    rows: &[(String, String)],
    lang: &str,
) -> (&'a str, Vec<(String, String)>, usize) {
    let starts = match lang {
        "zh" => ["命名空间", "工作负载"],
        _ => ["NAMESPACE", "WORKLOAD"],
    };
    let mut lines = out
        .lines()
        .skip_while(|l| !starts.iter().any(|s| l.starts_with(s)));
    let header = lines.next().unwrap_or_else(|| panic!("no header:\n{out}"));
    let namespaces = header.starts_with(starts[0]);
    let mut found = Vec::new();
    let mut under = 0;
    let mut after_row = false;
    for line in lines {
        // A finding under its row, indented: a mark and an id, or the
        // reason a row has none, wrapped.
        if line.starts_with("    ") && !found.is_empty() {
            under += usize::from(after_row);
            after_row = false;
            continue;
        }
        after_row = true;
        let mut words = line.split_whitespace();
        let row = match namespaces {
            true => (
                words.next().unwrap_or("").to_string(),
                words.next().unwrap_or("").to_string(),
            ),
            // One namespace: the count line names it, the rows do not.
            false => (rows[0].0.clone(), words.next().unwrap_or("").to_string()),
        };
        if !rows.contains(&row) {
            break;
        }
        assert!(!line.starts_with(' '), "{line:?}");
        found.push(row);
    }
    found.sort();
    (header, found, under)
}

/// `triage -A` on the bundled fixtures side by side, each in a namespace
/// of its own (the mix, and every fixture at once), and on each
/// multi-workload file: one line a workload at 60, 80, 120 and 200
/// columns, in both languages; no line past the width, none with spaces
/// at its ends; wider, more columns.
#[test]
fn the_triage_table_has_one_line_a_workload() {
    let (_mix_dir, mix) = mix();
    let (_all_dir, all) = everything();
    let all = all.to_str().unwrap().to_string();
    let mut inputs = vec![mix.to_str().unwrap().to_string(), all.clone()];
    for name in ["pods-only", "rs-without-deployment"] {
        inputs.push(format!("fixtures/triage/{name}.yaml"));
    }
    for file in &inputs {
        let (_, json, err) = run(&["triage", "-A", "--snapshot", file, "-o", "json"]);
        let report: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {err}"));
        let rows = report_rows(&report);
        assert!(rows.len() >= 2, "{file}: {rows:?}");
        for lang in ["en", "zh"] {
            let mut columns = 0;
            for width in [60usize, 80, 120, 200] {
                let w = width.to_string();
                let (_, out, _) = run(&[
                    "triage",
                    "-A",
                    "--all",
                    "--snapshot",
                    file,
                    "--lang",
                    lang,
                    "--width",
                    &w,
                ]);
                let (header, shown, under) = table_rows(&out, &rows, lang);
                assert_eq!(shown, rows, "{file} {lang} {width}: one line a row\n{out}");
                // Every fixture at once at 60: a long name beside a long
                // id (`rs/reranker-5b6c7d8e9f`, `progress-deadline-exceeded`)
                // leaves that finding under its row; nowhere else.
                if *file != all || width > 60 {
                    assert_eq!(under, 0, "{file} {lang} {width}:\n{out}");
                } else {
                    assert!(under < rows.len() / 4, "{under}:\n{out}");
                }
                assert!(
                    too_wide(&out, width).is_empty(),
                    "{file} {lang} {width}:\n{out}"
                );
                // No padding at the ends of a line (nor at the start of a
                // row: see table_rows).
                for line in out.lines() {
                    assert_eq!(line.trim_end(), line, "{file} {lang} {width}: {line:?}");
                }
                // Wider, as many columns or more.
                let now = header.split("  ").filter(|c| !c.trim().is_empty()).count();
                assert!(now >= columns, "{file} {lang} {width}: {header}");
                columns = now;
            }
            // At 200 every column the rows fill.
            assert!(columns >= 6, "{file} {lang}");
        }
    }
    // The mix at 80: its state, count and finding in a line.
    let at = |w: &str| {
        run(&[
            "triage",
            "-A",
            "--snapshot",
            mix.to_str().unwrap(),
            "--width",
            w,
        ])
        .1
    };
    let narrow = at("80");
    let header = narrow.lines().nth(1).unwrap();
    for column in [
        "NAMESPACE",
        "WORKLOAD",
        "STATE",
        "READY",
        "FINDING",
        "SINCE",
    ] {
        assert!(header.contains(column), "{narrow}");
    }
    assert!(!header.contains("STEP"), "{narrow}");
    assert!(
        narrow.lines().any(|l| l.starts_with("team-a")
            && l.contains("NOT SERVING")
            && l.contains("✘ crash-loop")),
        "{narrow}"
    );
    // The count first: what was judged, before any row.
    assert!(narrow.starts_with("5 workloads: 2 with errors"), "{narrow}");
    assert!(at("120").lines().nth(1).unwrap().contains("STEP"));
    // With no --width, a pipe gets COLUMNS, else 80.
    let piped = run(&["triage", "-A", "--snapshot", mix.to_str().unwrap()]).1;
    assert_eq!(piped, narrow);
    let out = mdiag()
        .args(["triage", "-A", "--snapshot", mix.to_str().unwrap()])
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), at("120"));
}

/// Narrower than the namespaces, the workloads and the widest finding id
/// side by side, the table shows only those, and a finding that does not
/// fit beside its row goes on a line of its own under it; nothing is cut.
#[test]
fn the_triage_table_puts_a_finding_under_its_row_when_nothing_else_fits() {
    let (_dir, mix) = mix();
    let (_, out, _) = run(&[
        "triage",
        "-A",
        "--snapshot",
        mix.to_str().unwrap(),
        "--width",
        "40",
    ]);
    assert!(too_wide(&out, 40).is_empty(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[2], "NAMESPACE  WORKLOAD         FINDING", "{out}");
    assert_eq!(
        lines[3], "team-a     msvc/chart-demo  ✘ crash-loop",
        "{out}"
    );
    let row = lines.iter().position(|l| l.starts_with("team-e")).unwrap();
    assert_eq!(lines[row], "team-e     deploy/web", "{out}");
    assert_eq!(lines[row + 1], "    ✘ image-pull-not-found", "{out}");
}

/// A row with no lead finding says why in the finding column, whole when
/// the names leave room for it (before a column is added), cut with `…`
/// only when they do not; -v has the headline's sentence in full.
#[test]
fn the_triage_table_keeps_a_rows_reason_whole_before_adding_columns() {
    let file = "fixtures/cases/endpointslices-forbidden.yaml";
    let at = |w: &str, v: bool| {
        let mut args = vec!["triage", "--snapshot", file, "--width", w];
        if v {
            args.push("-v");
        }
        run(&args).1
    };
    for w in ["60", "80", "120"] {
        let out = at(w, false);
        let row = out.lines().find(|l| l.starts_with("msvc/")).unwrap();
        assert!(row.contains("UNKNOWN"), "{w}: {out}");
        assert!(row.contains("(endpointslices not read)"), "{w}: {out}");
    }
    let narrow = at("40", false);
    let row = narrow.lines().find(|l| l.starts_with("msvc/")).unwrap();
    assert!(
        row.contains("(endpointslices not") && row.ends_with('…'),
        "{narrow}"
    );
    assert_eq!(UnicodeWidthStr::width(row), 40, "{narrow}");
    assert!(
        at("40", true).contains("EndpointSlices could not be read"),
        "{narrow}"
    );
}

/// `--color always` paints each finding's mark and id in its severity's
/// colour, and the state's word; `--color never`, NO_COLOR and a pipe
/// print no escape at all. Colour takes no column: without the escapes
/// the table is the plain one.
#[test]
fn the_triage_table_colours_severities_only_when_asked() {
    let (_dir, mix) = mix();
    let mix = mix.to_str().unwrap();
    let with = |color: &str| {
        let out = mdiag()
            .env_remove("NO_COLOR")
            .args([
                "triage",
                "-A",
                "--snapshot",
                mix,
                "--width",
                "80",
                "--color",
                color,
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let painted = with("always");
    let sgr = regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap();
    // The colour just before each mark: red (31) for an error, yellow
    // (33) for a warning, cyan (36) for information.
    for (mark, colour) in [
        ("✘ crash-loop", "31"),
        ("✘ image-pull-not-found", "31"),
        ("! hpa-at-max", "33"),
        ("i rollout-in-progress", "36"),
    ] {
        let at = painted
            .find(mark)
            .unwrap_or_else(|| panic!("{mark}: {painted}"));
        let before = &painted[..at];
        let last = sgr
            .find_iter(before)
            .last()
            .unwrap_or_else(|| panic!("{mark}: {painted:?}"));
        assert_eq!(last.end(), at, "{mark}: {painted:?}");
        assert_eq!(last.as_str(), format!("\u{1b}[{colour}m"), "{mark}");
    }
    assert!(
        painted.contains("\u{1b}[1m\u{1b}[31mNOT SERVING"),
        "{painted:?}"
    );
    let plain = with("never");
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert_eq!(sgr.replace_all(&painted, ""), plain);
    // No flag: NO_COLOR (set by `run`), or stdout a pipe, is plain.
    assert_eq!(
        run(&["triage", "-A", "--snapshot", mix, "--width", "80"]).1,
        plain
    );
    let piped = mdiag()
        .env_remove("NO_COLOR")
        .args(["triage", "-A", "--snapshot", mix, "--width", "80"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), plain);
}

/// `triage -v`: under each row, every finding of it (severity, id,
/// subject) and its Pods, fitted to the width; without -v, rows only.
#[test]
fn triage_verbose_shows_each_rows_findings() {
    let (_dir, mix) = mix();
    let mix = mix.to_str().unwrap();
    let (_, json, _) = run(&["triage", "-A", "--snapshot", mix, "-o", "json"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    for (lang, width) in [("en", 60usize), ("en", 80), ("zh", 80), ("en", 120)] {
        let w = width.to_string();
        let args = [
            "triage",
            "-A",
            "--all",
            "--snapshot",
            mix,
            "--lang",
            lang,
            "--width",
            &w,
        ];
        let (_, plain, _) = run(&args);
        let (_, out, _) = run(&[&args[..], &["-v"]].concat());
        assert!(too_wide(&out, width).is_empty(), "{lang} {width}:\n{out}");
        assert!(out.lines().count() > plain.lines().count() + 10, "{out}");
        // A row's block: its line, then the indented ones under it.
        let lines: Vec<&str> = out.lines().collect();
        for item in report["items"].as_array().unwrap() {
            let ns = item["target"]["namespace"].as_str().unwrap();
            let start = lines
                .iter()
                .position(|l| l.starts_with(&format!("{ns} ")))
                .unwrap_or_else(|| panic!("{ns}: {out}"));
            let block: Vec<&str> = lines[start + 1..]
                .iter()
                .take_while(|l| l.starts_with("    "))
                .copied()
                .collect();
            let text = block.join("\n");
            for f in item["findings"].as_array().unwrap() {
                let id = f["id"].as_str().unwrap();
                let subject = format!(
                    "{}/{}",
                    f["subject"]["kind"].as_str().unwrap().to_lowercase(),
                    f["subject"]["name"].as_str().unwrap()
                );
                let severity = match (f["severity"].as_str().unwrap(), lang) {
                    ("error", "zh") => "✘ 错误",
                    ("warning", "zh") => "! 警告",
                    ("info", "zh") => "i 提示",
                    ("error", _) => "✘ error",
                    ("warning", _) => "! warning",
                    (_, _) => "i info",
                };
                assert!(
                    text.contains(&format!("{severity} {id}")) && text.contains(&subject),
                    "{ns} {id} {subject} {lang} {width}:\n{text}"
                );
            }
            // Its Pods, by name (alike ones folded into the first).
            if !item["pods"].as_array().unwrap().is_empty() {
                assert!(
                    block.iter().any(|l| l.starts_with("    Pod ")),
                    "{ns}: no Pod line\n{text}"
                );
            }
        }
    }
}

/// `triage --alert`: the alerts that name nothing, then each alert about
/// a workload with the trace of that workload.
#[test]
fn alert_views() {
    for (alert, lang) in [
        ("webhook-firing.json", "en"),
        ("webhook-firing.json", "zh"),
        ("labels.yaml", "en"),
        ("several.json", "en"),
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
        // The alerts that name nothing first, before any trace: what
        // follows is not all the alerts said.
        assert_eq!(
            out.find("Alerts not mapped to a workload"),
            (alert == "several.json").then_some(0),
            "{out}"
        );
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
