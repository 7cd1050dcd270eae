//! The default human view of `trace`, through the
//! binary: it fits the width for every fixture, in both languages; the
//! crash loop fits a screen; the crash's own log is shown and `next`
//! names the Pod it came from; the slow step is the one that waited.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .env("LANG", "C");
    cmd
}

/// Runs mdiag; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = mdiag().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Columns a line takes on a terminal (no escapes: NO_COLOR).
fn columns(line: &str) -> usize {
    UnicodeWidthStr::width(line)
}

/// The one overflow the view allows: a line holding a single shell word
/// of a command (a quoted jsonpath) that is itself wider than the width,
/// which cannot be broken without changing what the shell reads.
fn one_unbreakable_word(line: &str) -> bool {
    let word = line.trim_start().trim_end_matches(" \\");
    shlex::split(word).is_some_and(|w| w.len() == 1)
}

fn too_wide(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .filter(|l| {
            columns(l) > width && !one_unbreakable_word(l) && !common::one_long_token(l, width)
        })
        .map(|l| format!("{:>3} {l}", columns(l)))
        .collect()
}

#[test]
fn no_line_of_the_view_is_wider_than_the_width() {
    let mut failures = Vec::new();
    let mut overflowing = Vec::new();
    for (file, target) in common::expected_fixtures() {
        for lang in ["en", "zh"] {
            for width in [80usize, 120] {
                let w = width.to_string();
                let (_, out, err) = run(&[
                    "trace",
                    &target,
                    "--snapshot",
                    &file,
                    "--lang",
                    lang,
                    "--width",
                    &w,
                ]);
                assert!(!out.is_empty(), "{file} {lang}: no output; {err}");
                // The default view prints `next` and the first check whole:
                // only a quoted jsonpath, which cannot be broken and still
                // paste, may be wider, on a line of its own.
                overflowing.extend(
                    out.lines()
                        .filter(|l| columns(l) > width && !common::one_long_token(l, width))
                        .map(|l| l.trim().trim_end_matches(" \\").to_string()),
                );
                for line in too_wide(&out, width) {
                    failures.push(format!("{file} --lang {lang} --width {width}: {line}"));
                }
            }
        }
        // Piped, with no --width and no COLUMNS: 80; with -v as well.
        let (_, out, _) = run(&["trace", &target, "--snapshot", &file]);
        for line in too_wide(&out, 80) {
            failures.push(format!("{file} piped: {line}"));
        }
        // -v prints every check whole: only a quoted jsonpath, which cannot
        // be broken and still paste, may be wider.
        for lang in ["en", "zh"] {
            let (_, out, _) = run(&["trace", &target, "--snapshot", &file, "-v", "--lang", lang]);
            overflowing.extend(
                out.lines()
                    .filter(|l| columns(l) > 80 && !common::one_long_token(l, 80))
                    .map(|l| l.trim().trim_end_matches(" \\").to_string()),
            );
            for line in too_wide(&out, 80) {
                failures.push(format!("{file} -v --lang {lang}: {line}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The words that overflow are kubectl's quoted templates, whole.
    for word in &overflowing {
        assert!(
            ((word.starts_with("'jsonpath=") || word.starts_with("'custom-columns="))
                && word.ends_with('\''))
                // Quoted only when the shell needs it.
                || (word.starts_with("custom-columns=") && !word.contains(' '))
                // A field selector naming a long Pod name is one word too.
                || (word.starts_with("involvedObject.") && !word.contains(' ')),
            "{word}"
        );
    }
}

#[test]
fn columns_sets_the_width_of_a_pipe_and_width_overrides_it() {
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    let widest = |out: &str| out.lines().map(columns).max().unwrap_or(0);
    let (_, at_80, _) = run(&["trace", "chart-demo", "--snapshot", file]);
    let out = mdiag()
        .args(["trace", "chart-demo", "--snapshot", file])
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let at_120 = String::from_utf8(out.stdout).unwrap();
    assert!(
        at_80
            .lines()
            .all(|l| columns(l) <= 80 || common::one_long_token(l, 80)),
        "{at_80}"
    );
    assert!(widest(&at_120) > 80 && widest(&at_120) <= 120);
    let out = mdiag()
        .args(["trace", "chart-demo", "--snapshot", file, "--width", "100"])
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let at_100 = String::from_utf8(out.stdout).unwrap();
    assert!(widest(&at_100) <= 100 && widest(&at_100) > 80);
    // Too narrow to lay out is refused by the parser.
    let (code, _, err) = run(&["trace", "chart-demo", "--snapshot", file, "--width", "20"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn the_crash_loop_demo_fits_on_one_screen() {
    for file in [
        "fixtures/demo/snapshot-crash-loop.yaml",
        "fixtures/demo/crash-loop.yaml",
    ] {
        for lang in ["en", "zh"] {
            let (code, out, _) = run(&["trace", "chart-demo", "--snapshot", file, "--lang", lang]);
            assert_eq!(code, Some(1));
            let lines = out.lines().count();
            // One screen: 40 lines once; the Could-not-read line and the
            // other findings' causes are now wrapped whole instead of cut
            // to one line each.
            assert!(lines <= 44, "{file} --lang {lang}: {lines} lines\n{out}");
        }
    }
}

#[test]
fn the_default_view_shows_the_crashed_runs_log_and_next_names_its_pod() {
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    let (_, out, _) = run(&["trace", "chart-demo", "--snapshot", file]);
    assert!(out.contains("FATAL missing env MODEL_PATH"), "{out}");
    assert!(
        out.contains("server (previous run), last 3 of 9 lines"),
        "{out}"
    );
    let next = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("next:"))
        .nth(1)
        .unwrap();
    assert_eq!(
        next.trim(),
        "kubectl -n modeldock-lab logs chart-demo-ntmp458kfb-pvgk2 -c server --previous"
    );
    // With -v, the five lines the evidence keeps.
    let (_, full, _) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        file,
        "-v",
        "--width",
        "200",
    ]);
    assert!(
        full.contains("server (previous run), last 5 of 9 lines"),
        "{full}"
    );
    assert!(full.contains("ERROR MODEL_PATH is not set; since v1.6.0 weights"));
    assert!(full.contains("WARN  tokenizer cache empty"));
}

#[test]
fn the_log_is_evidence_in_json_beside_what_was_there() {
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    let (_, out, _) = run(&["trace", "chart-demo", "--snapshot", file, "-o", "json"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let lead = &r["findings"][0];
    assert_eq!(lead["id"], "crash-loop");
    let evidence = lead["evidence"].as_array().unwrap();
    let log: Vec<&Value> = evidence.iter().filter(|e| e.get("log").is_some()).collect();
    assert_eq!(log.len(), 1, "{evidence:?}");
    let e = log[0];
    assert_eq!(e["object"], "pod/chart-demo-ntmp458kfb-pvgk2");
    assert_eq!(e["field"], "log of server (previous)");
    assert_eq!(
        e["value"],
        "2026-11-28T10:06:10.734Z FATAL missing env MODEL_PATH"
    );
    assert_eq!(e["log"]["container"], "server");
    assert_eq!(e["log"]["previous"], true);
    assert_eq!(e["log"]["total_lines"], 9);
    assert_eq!(e["log"]["lines"].as_array().unwrap().len(), 5);
    // The other evidence is still there, without a log field.
    assert!(evidence.iter().any(
        |e| e["field"] == "status.containerStatuses[server].restartCount" && e.get("log").is_none()
    ));
    assert_eq!(
        r["verdict"]["next"],
        "kubectl -n modeldock-lab logs chart-demo-ntmp458kfb-pvgk2 -c server --previous"
    );
}

#[test]
fn next_follows_the_pod_whose_log_was_captured() {
    // The same snapshot with the log captured from the other Pod: the
    // finding, its evidence and `next` all move to that Pod.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/snapshot-crash-loop.yaml"),
    )
    .unwrap();
    let (objects, logs) = text.split_once("\nlogs:\n").unwrap();
    let moved = format!(
        "{objects}\nlogs:\n{}",
        logs.replace(
            "pod: chart-demo-ntmp458kfb-pvgk2",
            "pod: chart-demo-ntmp458kfb-ltbsl"
        )
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("moved.yaml");
    std::fs::write(&path, moved).unwrap();
    let path = path.to_str().unwrap();
    let (_, out, _) = run(&["trace", "chart-demo", "--snapshot", path, "-o", "json"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        r["verdict"]["next"],
        "kubectl -n modeldock-lab logs chart-demo-ntmp458kfb-ltbsl -c server --previous"
    );
    let lead = &r["findings"][0];
    assert_eq!(lead["subject"]["name"], "chart-demo-ntmp458kfb-ltbsl");
    let log = lead["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e.get("log").is_some())
        .unwrap();
    assert_eq!(log["object"], "pod/chart-demo-ntmp458kfb-ltbsl");
    // And the human view names that Pod in the tree, in next and under the finding.
    let (_, human, _) = run(&["trace", "chart-demo", "--snapshot", path]);
    assert!(human.contains("Pod chart-demo-ntmp458kfb-ltbsl and 1 more alike"));
    assert!(human.contains("crash-loop  pod/chart-demo-ntmp458kfb-ltbsl"));
    assert!(!human.contains("pvgk2"), "{human}");
}

#[test]
fn the_slowest_mark_is_on_the_step_that_waited_longest() {
    // rollout-in-progress: nothing is wrong; stored took 32s, started has
    // waited less.
    let marked = |file: &str, mark: &str| -> Vec<String> {
        let (_, out, _) = run(&[
            "trace",
            "chart-demo",
            "--snapshot",
            file,
            "-v",
            "--width",
            "200",
        ]);
        out.lines()
            .filter(|l| l.contains(mark))
            .map(|l| l.trim_start().to_string())
            .collect()
    };
    let slow = marked("fixtures/demo/rollout-in-progress.yaml", "← slowest");
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert!(slow[0].starts_with("stored"), "{}", slow[0]);
    assert!(marked("fixtures/demo/rollout-in-progress.yaml", "← failing").is_empty());
    // oom-killed: started has waited 2m9s since bound, but an error holds
    // it up: it is failing, not slow, and says its container restarted.
    let failing = marked("fixtures/demo/oom-killed.yaml", "← failing");
    assert_eq!(failing.len(), 1, "{failing:?}");
    assert!(failing[0].starts_with("started"), "{}", failing[0]);
    assert!(failing[0].contains("restarted 3 times"), "{}", failing[0]);
    let slow = marked("fixtures/demo/oom-killed.yaml", "← slowest");
    assert!(slow.iter().all(|l| !l.starts_with("started")), "{slow:?}");
    assert!(failing[0].contains("+2m9s"), "{}", failing[0]);
    // healthy: every step reached; started (+56s) is the slow one.
    let (_, out, _) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/healthy.yaml",
        "-v",
        "--width",
        "200",
    ]);
    let marked: Vec<&str> = out.lines().filter(|l| l.contains("← slowest")).collect();
    assert_eq!(marked.len(), 1, "{out}");
    assert!(
        marked[0].trim_start().starts_with("started"),
        "{}",
        marked[0]
    );
    assert!(marked[0].contains("+56s"));
}

#[test]
fn at_before_the_data_is_refused() {
    let file = "fixtures/demo/crash-loop.yaml";
    let (code, out, err) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        file,
        "--at",
        "2026-11-28T09:00:00Z",
    ]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty());
    assert!(err.contains("before the data"), "{err}");
    assert!(
        err.contains("deployment/chart-demo was last written at 2026-11-28T10:00:01Z"),
        "{err}"
    );
    assert!(
        err.contains("pick a time from 2026-11-28T10:00:01Z"),
        "{err}"
    );
    // The spec the file holds was written at 10:10: at 10:05 it held
    // another one, which the file does not have.
    let (code, _, err) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/controller-paused.yaml",
        "--at",
        "2026-11-28T10:05:00Z",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("modelservice/chart-demo was last written at 2026-11-28T10:10:00Z"),
        "{err}"
    );
    // From then on, it judges.
    let (code, _, err) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        file,
        "--at",
        "2026-11-28T10:05:00Z",
    ]);
    assert_eq!(code, Some(1), "{err}");
}

/// Every time in a report, with where it is, but the capture's own.
fn times_in(report: &serde_json::Value) -> Vec<(String, jiff::Timestamp)> {
    fn walk(v: &serde_json::Value, path: String, out: &mut Vec<(String, jiff::Timestamp)>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    walk(x, format!("{path}.{k}"), out);
                }
            }
            serde_json::Value::Array(list) => {
                for (i, x) in list.iter().enumerate() {
                    walk(x, format!("{path}[{i}]"), out);
                }
            }
            serde_json::Value::String(s) => {
                if let Ok(t) = s.parse::<jiff::Timestamp>() {
                    out.push((path, t));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(report, String::new(), &mut out);
    out.retain(|(path, _)| path != ".source.captured_at");
    out
}

/// The crash-loop demo's Deployment gave up at 10:10:02
/// (ProgressDeadlineExceeded); its Pods crash-looped from 10:00 to the
/// dump at 10:11. Judged at 10:05, nothing from later is used: no
/// deadline yet, no Event, condition or container run dated after it.
#[test]
fn at_leaves_out_what_happened_after_it() {
    let file = "fixtures/demo/crash-loop.yaml";
    let json = |extra: &[&str]| {
        let mut args = vec!["trace", "chart-demo", "--snapshot", file, "-o", "json"];
        args.extend_from_slice(extra);
        let (_, out, err) = run(&args);
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {err}"))
    };
    let ids = |r: &serde_json::Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    let whole = json(&[]);
    assert!(ids(&whole).contains(&"progress-deadline-exceeded".to_string()));
    let newest = times_in(&whole).into_iter().map(|(_, t)| t).max().unwrap();
    let at: jiff::Timestamp = "2026-11-28T10:05:00Z".parse().unwrap();
    assert!(newest > at, "the demo holds times after {at}");

    let earlier = json(&["--at", "2026-11-28T10:05:00Z"]);
    assert_eq!(earlier["clock"]["source"], "at");
    assert!(
        !ids(&earlier).contains(&"progress-deadline-exceeded".to_string()),
        "{:?}",
        ids(&earlier)
    );
    let later: Vec<_> = times_in(&earlier)
        .into_iter()
        .filter(|(_, t)| *t > at)
        .collect();
    assert!(later.is_empty(), "times after --at: {later:?}");
    // Nor does the human view show a time of day after it.
    let (_, text, _) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        file,
        "--at",
        "2026-11-28T10:05:00Z",
        "-v",
        "--width",
        "200",
    ]);
    let clock_times: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_digit() || c == ':'))
        .filter(|w| w.len() == 8 && w.as_bytes()[2] == b':' && w.as_bytes()[5] == b':')
        .collect();
    assert!(clock_times.contains(&"10:00:01"), "{text}");
    assert!(
        clock_times.iter().all(|t| *t <= "10:05:00"),
        "{clock_times:?}\n{text}"
    );
    assert!(!text.contains("progress-deadline-exceeded"), "{text}");
}

/// Judged at its own clock, a file reaches what it reaches without
/// `--at`: the cut leaves out only what is later than the clock.
#[test]
fn at_the_files_own_clock_changes_nothing() {
    for (file, target) in crate::common::expected_fixtures() {
        let (_, out, err) = run(&["trace", &target, "--snapshot", &file, "-o", "json"]);
        let Ok(whole) = serde_json::from_str::<serde_json::Value>(&out) else {
            panic!("{file}: {err}");
        };
        let now = whole["clock"]["now"].as_str().unwrap().to_string();
        let (_, out, err) = run(&[
            "trace",
            &target,
            "--snapshot",
            &file,
            "-o",
            "json",
            "--at",
            &now,
        ]);
        let Ok(mut at) = serde_json::from_str::<serde_json::Value>(&out) else {
            panic!("{file} --at {now}: {err}");
        };
        assert_eq!(at["clock"]["source"], "at", "{file}");
        at["clock"] = whole["clock"].clone();
        assert_eq!(at["verdict"], whole["verdict"], "{file} --at {now}");
        assert_eq!(at["findings"], whole["findings"], "{file} --at {now}");
        assert_eq!(at["pods"], whole["pods"], "{file} --at {now}");
        assert_eq!(at["steps"], whole["steps"], "{file} --at {now}");
    }
}

#[test]
fn logs_is_for_a_live_read() {
    let (code, _, err) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/snapshot-crash-loop.yaml",
        "--logs",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--logs reads logs from the cluster"), "{err}");
}

#[test]
fn colour_keeps_the_layout() {
    let strip = regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap();
    for lang in ["en", "zh"] {
        let args = |color: &'static str| {
            vec![
                "trace",
                "chart-demo",
                "--snapshot",
                "fixtures/demo/snapshot-crash-loop.yaml",
                "--lang",
                lang,
                "--color",
                color,
                "-v",
            ]
        };
        let (_, plain, _) = run(&args("never"));
        let (_, painted, _) = run(&args("always"));
        assert!(painted.contains('\u{1b}'));
        assert_eq!(strip.replace_all(&painted, ""), plain, "--lang {lang}");
    }
}

#[test]
fn cjk_labels_stay_aligned() {
    let (_, out, _) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/snapshot-crash-loop.yaml",
        "--lang",
        "zh",
        "-v",
    ]);
    // Every labelled row of a finding starts its text at the same column.
    let starts: Vec<usize> = out
        .lines()
        .filter_map(|l| {
            [
                "    证据 ",
                "    日志 ",
                "    原因 ",
                "    检查 ",
                "    修复 ",
                "    验证 ",
            ]
            .iter()
            .find(|p| l.starts_with(*p))
            .map(|p| columns(p))
        })
        .collect();
    assert!(starts.len() >= 8, "{out}");
    assert!(starts.iter().all(|s| *s == starts[0]));
    let continuation = out
        .lines()
        .find(|l| l.contains("FATAL missing env MODEL_PATH"))
        .unwrap();
    assert_eq!(
        columns(continuation) - columns(continuation.trim_start()),
        starts[0]
    );
}

/// The default view of every demo, as people see it, at 80 and 120
/// columns, in English and Chinese.
#[test]
fn default_views_of_the_demos() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, target) in common::expected_fixtures() {
        if !file.starts_with("fixtures/demo/") {
            continue;
        }
        let name = Path::new(&file)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        for lang in ["en", "zh"] {
            for width in ["80", "120"] {
                let (_, out, _) = run(&[
                    "trace",
                    &target,
                    "--snapshot",
                    &file,
                    "--lang",
                    lang,
                    "--width",
                    width,
                ]);
                insta::with_settings!({
                    snapshot_path => root.join("tests/suite/snapshots/trace_view"),
                    prepend_module_to_snapshot => false,
                    description => format!("mdiag trace {target} --snapshot {file} --lang {lang} --width {width}"),
                    omit_expression => true,
                }, {
                    insta::assert_snapshot!(format!("{name}.{lang}.{width}"), out);
                });
            }
        }
    }
}
