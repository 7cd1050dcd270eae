//! Ring 2: the binary on files. Exit codes, input shapes, bad input, output
//! formats, and the rendered views (insta snapshots, fixed clock, no colour).

use crate::common;
use common::mdiag;

use std::io::Write;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    format!("fixtures/demo/{name}.yaml")
}

fn trace_json(file: &str) -> Value {
    let out = mdiag()
        .args(["trace", "chart-demo", "--snapshot", file, "-o", "json"])
        .output()
        .unwrap();
    // 0 serving, 1 a problem, 3 progressing, 4 unknown: never a usage error.
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3 | 4)),
        "{:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn finding_ids(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn temp_with(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn healthy_exits_zero_and_broken_exits_one() {
    mdiag()
        .args(["trace", "chart-demo", "--snapshot", &fixture("healthy")])
        .args(["--width", "200"])
        .assert()
        .code(0)
        .stdout(
            predicate::str::starts_with("ModelService").and(predicate::str::contains(
                "\n✔ SERVING  2/2 on revision 2, rollout complete\n",
            )),
        );
    mdiag()
        .args(["trace", "chart-demo", "--snapshot", &fixture("crash-loop")])
        .args(["--width", "200"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "\n✘ NOT SERVING  0/2 ready endpoints; stopped at bound: CrashLoopBackOff [crash-loop]\n",
        ));
}

#[test]
fn the_headline_and_the_exit_code_follow_the_state() {
    // (fixture, exit, first line of the verdict)
    for (file, code, headline) in [
        (
            fixture("oom-killed"),
            1,
            "! ROLLOUT STUCK  revision 2 stopped at bound: OOMKilled [oom-killed]; revision 1 still serving 2/2",
        ),
        (
            fixture("rollout-in-progress"),
            3,
            "⧗ PROGRESSING  revision 2: 1/2 ready; revision 1 still serving 1/2 [rollout-in-progress]",
        ),
        (
            "fixtures/cases/hpa-at-max.yaml".to_string(),
            1,
            "✔ SERVING  6/6 on revision 1, rollout complete, 1 warning: HPA at maxReplicas [hpa-at-max]",
        ),
        (
            "fixtures/cases/endpointslices-forbidden.yaml".to_string(),
            4,
            "? UNKNOWN  EndpointSlices could not be read (forbidden); last known step: ready",
        ),
    ] {
        // Wide enough that the headline is one line.
        let out = mdiag()
            .args(["trace", "chart-demo", "--snapshot", &file, "--width", "200"])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(code), "{file}: {text}");
        assert_eq!(text.lines().nth(2), Some(headline), "{file}:\n{text}");
    }
}

#[test]
fn json_verdict_carries_the_state_what_serves_and_the_next_command() {
    let r = trace_json(&fixture("oom-killed"));
    let v = &r["verdict"];
    assert_eq!(v["state"], "degraded");
    assert_eq!(v["serving"]["ready_endpoints"], 2);
    assert_eq!(v["serving"]["desired"], 2);
    assert_eq!(v["serving"]["worker"], false);
    let revisions: Vec<(i64, bool, i64)> = v["serving"]["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().unwrap(),
                r["current"].as_bool().unwrap(),
                r["ready_endpoints"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(revisions, [(2, true, 0), (1, false, 2)]);
    let next = v["next"].as_str().unwrap();
    let lead_pod = r["findings"][0]["subject"]["name"].as_str().unwrap();
    assert!(next.starts_with("kubectl -n modeldock-lab "), "{next}");
    assert!(next.contains(lead_pod), "{next} names {lead_pod}");
    assert_eq!(
        v["next"], r["findings"][0]["check"][0],
        "the lead's first check"
    );
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .starts_with("ROLLOUT STUCK  revision 2")
    );

    // Unread slices: unknown, and no count pretends to be 0.
    let r = trace_json("fixtures/cases/endpointslices-forbidden.yaml");
    assert_eq!(r["verdict"]["state"], "unknown");
    assert_eq!(r["verdict"]["serving"]["ready_endpoints"], Value::Null);
    assert_eq!(
        r["verdict"]["serving"]["revisions"][0]["ready_endpoints"],
        Value::Null
    );
    assert_eq!(r["healthy"], false);
    assert!(
        r["verdict"]["next"]
            .as_str()
            .unwrap()
            .contains("endpointslices"),
        "{}",
        r["verdict"]["next"]
    );

    let r = trace_json(&fixture("healthy"));
    assert_eq!(r["verdict"]["state"], "serving");
    assert_eq!(r["verdict"]["next"], Value::Null);
}

#[test]
fn json_report_has_the_documented_shape() {
    let r = trace_json(&fixture("crash-loop"));
    assert_eq!(r["schema"], "mdiag/v1");
    assert_eq!(r["target"]["kind"], "ModelService");
    assert_eq!(r["target"]["namespace"], "modeldock-lab");
    assert_eq!(r["target"]["name"], "chart-demo");
    assert!(r["target"]["uid"].as_str().unwrap().len() == 36);
    assert_eq!(r["healthy"], false);
    assert_eq!(r["verdict"]["last_step"], "bound");
    assert_eq!(r["verdict"]["missing"], "started");
    assert!(
        r["verdict"]["summary"]
            .as_str()
            .unwrap()
            .contains("crash-loop")
    );
    let steps: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "declared",
            "observed",
            "deployment",
            "replicaset",
            "stored",
            "bound",
            "started",
            "ready",
            "serving"
        ]
    );
    let pod = &r["pods"][0];
    for key in ["name", "uid", "revision", "node", "serving", "last_step"] {
        assert!(pod.get(key).is_some(), "pod.{key}");
    }
    for moment in ["stored", "bound", "started", "ready"] {
        assert!(pod["moments"].get(moment).is_some(), "moments.{moment}");
    }
    assert!(pod["moments"]["stored"].as_str().unwrap().ends_with('Z'));
    assert!(pod["moments"]["started"].is_null());
    let f = &r["findings"][0];
    assert_eq!(f["id"], "crash-loop");
    assert_eq!(f["severity"], "error");
    for key in ["kind", "name", "uid"] {
        assert!(f["subject"][key].is_string(), "subject.{key}");
    }
    assert!(!f["evidence"].as_array().unwrap().is_empty());
    let check = f["check"][0].as_str().unwrap();
    assert!(
        check.starts_with("kubectl -n modeldock-lab logs chart-demo-"),
        "{check}"
    );
    assert!(!check.contains('{'), "placeholders filled: {check}");
    assert!(f["fix"].as_str().unwrap().len() > 20);
    assert!(f["verify"].as_str().unwrap().len() > 20);
    assert!(r["gaps"].as_array().unwrap().is_empty());
    assert_eq!(r["clock"]["source"], "newest-timestamp");
}

#[test]
fn yaml_output_carries_the_same_report() {
    let json = trace_json(&fixture("oom-killed"));
    let out = mdiag()
        .args([
            "trace",
            "chart-demo",
            "--snapshot",
            &fixture("oom-killed"),
            "-o",
            "yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let yaml: Value = serde_saphyr::from_slice(&out.stdout).unwrap();
    assert_eq!(yaml["verdict"], json["verdict"]);
    assert_eq!(yaml["healthy"], json["healthy"]);
    assert_eq!(finding_ids(&yaml), finding_ids(&json));
}

/// The fixture as a kubectl List in JSON.
fn fixture_value(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join(fixture(name))).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

#[test]
fn a_kubectl_list_in_json_reads_like_the_yaml() {
    let list = fixture_value("image-pull-denied");
    let (_dir, path) = temp_with(
        "dump.json",
        serde_json::to_string(&list).unwrap().as_bytes(),
    );
    let from_json = trace_json(path.to_str().unwrap());
    let from_yaml = trace_json(&fixture("image-pull-denied"));
    assert_eq!(from_json["verdict"], from_yaml["verdict"]);
    assert_eq!(finding_ids(&from_json), finding_ids(&from_yaml));
    assert!(finding_ids(&from_json).contains(&"image-pull-denied".to_string()));
}

#[test]
fn multi_document_yaml_and_gzip_are_read() {
    let list = fixture_value("selector-mismatch");
    let mut docs = String::new();
    for item in list["items"].as_array().unwrap() {
        docs.push_str("---\n");
        docs.push_str(&serde_saphyr::to_string(item).unwrap());
    }
    let (_d1, multi) = temp_with("objects.yaml", docs.as_bytes());
    let r = trace_json(multi.to_str().unwrap());
    assert_eq!(finding_ids(&r), vec!["selector-mismatch"]);

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(docs.as_bytes()).unwrap();
    let (_d2, zipped) = temp_with("objects.yaml.gz", &gz.finish().unwrap());
    let r = trace_json(zipped.to_str().unwrap());
    assert_eq!(finding_ids(&r), vec!["selector-mismatch"]);
}

#[test]
fn deployment_and_pod_targets_work_from_a_file() {
    let out = mdiag()
        .args([
            "trace",
            "deploy/chart-demo",
            "--snapshot",
            &fixture("readiness-failing"),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(finding_ids(&r).contains(&"readiness-failing".to_string()));
    let pod = r["pods"][0]["name"].as_str().unwrap().to_string();
    mdiag()
        .args([
            "trace",
            &format!("pod/{pod}"),
            "--snapshot",
            &fixture("readiness-failing"),
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("readiness-failing"));
}

#[test]
fn a_missing_target_exits_five_and_names_what_exists() {
    mdiag()
        .args([
            "trace",
            "chart-demo-typo",
            "--snapshot",
            &fixture("healthy"),
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("msvc/chart-demo"))
        .stderr(predicate::str::contains("deploy/chart-demo"));
    mdiag()
        .args([
            "trace",
            "chart-demo",
            "-n",
            "other",
            "--snapshot",
            &fixture("healthy"),
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("\"other\""));
}

#[test]
fn a_missing_file_is_a_usage_error_naming_the_path() {
    mdiag()
        .args(["trace", "chart-demo", "--snapshot", "no/such/file.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/file.yaml"));
}

#[test]
fn bad_files_get_clear_errors_and_never_panic() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.yaml", b"".to_vec(), "is empty"),
        ("binary.yaml", vec![0xff, 0xfe, 0x00, 0x12, 0x80], "not valid UTF-8"),
        ("notk8s.yaml", b"foo: bar\n".to_vec(), "not a Kubernetes object"),
        ("broken.yaml", b"items: [\n  {a: 1\n".to_vec(), "not valid YAML"),
        ("broken.json", b"{\"kind\": \"List\", \"items\": [".to_vec(), "not valid JSON"),
        ("future.yaml", b"format: mdiag.dev/snapshot\nversion: 99\nobjects: []\n".to_vec(), "upgrade mdiag"),
        ("notgzip.yaml.gz", b"plain text".to_vec(), "not valid gzip"),
        (
            "badpod.yaml",
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 5}\n".to_vec(),
            "does not fit its schema",
        ),
        (
            "bomb.yaml",
            b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n".to_vec(),
            "",
        ),
    ];
    for (name, bytes, message) in cases {
        let (_dir, path) = temp_with(name, &bytes);
        let out = mdiag()
            .args(["trace", "chart-demo", "--snapshot", path.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn a_file_cut_anywhere_never_panics() {
    let text = std::fs::read(root().join(fixture("crash-loop"))).unwrap();
    for cut in (0..text.len()).step_by(text.len() / 23 + 1) {
        let (_dir, path) = temp_with("cut.yaml", &text[..cut]);
        let out = mdiag()
            .args([
                "trace",
                "chart-demo",
                "--snapshot",
                path.to_str().unwrap(),
                "-o",
                "json",
            ])
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(1 | 2 | 5)), "cut at {cut}: {code:?}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "cut at {cut}"
        );
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    let cases: &[&[&str]] = &[
        &["trace"],
        &["trace", "chart-demo", "-o", "xml"],
        &["trace", "a/b/c"],
        &["trace", "ingress/chart-demo"],
        &["trace", "Chart_Demo"],
        &["trace", "chart-demo", "-A"],
        &["trace", "chart-demo", "--at", "2026-11-28T10:00:00Z"],
        &[
            "trace",
            "chart-demo",
            "--snapshot",
            "fixtures/demo/healthy.yaml",
            "--at",
            "yesterday",
        ],
        &["trace", "chart-demo", "--controller", "nonamespace"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = mdiag().args(*args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn at_moves_the_clock_of_a_replay() {
    // The replay clock is what --at says, and the report says so.
    let out = mdiag()
        .args([
            "trace",
            "chart-demo",
            "--snapshot",
            &fixture("crash-loop"),
            "-o",
            "json",
            "--at",
            "2026-11-28T10:30:00Z",
        ])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["clock"]["source"], "at");
    assert_eq!(r["clock"]["now"], "2026-11-28T10:30:00Z");
}

#[test]
fn the_snapshot_format_says_its_capture_clock() {
    let r = trace_json(&fixture("snapshot-crash-loop"));
    assert_eq!(r["clock"]["source"], "capture");
    assert_eq!(r["source"]["kind"], "snapshot");
    assert_eq!(r["gaps"][0]["resource"], "nodes");
}

#[test]
fn explain_renders_the_catalogue() {
    mdiag()
        .args(["explain", "CrashLoopBackOff"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("crash-loop"))
        .stdout(predicate::str::contains("--previous"));
    mdiag()
        .args(["explain", "oom-killed", "--lang", "zh"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("原因"));
    mdiag().args(["explain", "no-such-thing"]).assert().code(2);
    let out = mdiag().args(["explain", "--list"]).output().unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    for id in mdiag_core::analysis::rule_ids() {
        assert!(listed.contains(id.as_str()), "{id} not listed");
    }
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = mdiag()
        .args(["trace", "chart-demo", "--snapshot", &fixture("crash-loop")])
        .output()
        .unwrap();
    assert!(!plain.stdout.contains(&0x1b), "no escape codes when piped");
    let forced = mdiag()
        .args([
            "trace",
            "chart-demo",
            "--snapshot",
            &fixture("crash-loop"),
            "--color",
            "always",
        ])
        .output()
        .unwrap();
    assert!(forced.stdout.contains(&0x1b));
}

#[test]
fn lang_defaults_from_the_environment() {
    let out = mdiag()
        .env("LANG", "zh_CN.UTF-8")
        .args([
            "trace",
            "chart-demo",
            "--snapshot",
            &fixture("unschedulable"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("未在服务"), "{text}");
}

#[test]
fn help_lists_the_exit_codes() {
    mdiag()
        .arg("--help")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("5    target not found"))
        .stdout(predicate::str::contains(
            "130  interrupted (SIGINT/SIGTERM): gate wrote its report, snapshot wrote none",
        ));
}

// The rendered views, reviewed like code. The clock is the file's own.

fn rendered(args: &[&str]) -> String {
    let out = mdiag().args(args).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn snapshot_human_crash_loop() {
    insta::assert_snapshot!(rendered(&[
        "trace",
        "chart-demo",
        "--snapshot",
        &fixture("crash-loop")
    ]));
}

#[test]
fn snapshot_human_healthy() {
    insta::assert_snapshot!(rendered(&[
        "trace",
        "chart-demo",
        "--snapshot",
        &fixture("healthy")
    ]));
}

#[test]
fn snapshot_human_rollout_in_progress_zh() {
    insta::assert_snapshot!(rendered(&[
        "trace",
        "chart-demo",
        "--snapshot",
        &fixture("rollout-in-progress"),
        "--lang",
        "zh"
    ]));
}

#[test]
fn snapshot_json_unschedulable() {
    insta::assert_snapshot!(rendered(&[
        "trace",
        "chart-demo",
        "--snapshot",
        &fixture("unschedulable"),
        "-o",
        "json"
    ]));
}

#[test]
fn a_snapshot_of_a_dump_replays_to_the_same_verdict() {
    for name in [
        "crash-loop",
        "selector-mismatch",
        "healthy",
        "controller-paused",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("evidence.yaml.gz");
        mdiag()
            .args(["snapshot", "chart-demo", "--snapshot", &fixture(name)])
            .arg("--output-file")
            .arg(&out)
            .assert()
            .code(0)
            .stderr(predicate::str::contains("objects"));
        let original = trace_json(&fixture(name));
        let replayed = trace_json(out.to_str().unwrap());
        assert_eq!(replayed["verdict"], original["verdict"], "{name}");
        assert_eq!(finding_ids(&replayed), finding_ids(&original), "{name}");
        assert_eq!(replayed["clock"]["now"], original["clock"]["now"], "{name}");
        assert_eq!(replayed["source"]["kind"], "snapshot");
    }
}

#[test]
fn snapshot_flags_are_checked() {
    mdiag().args(["snapshot", "chart-demo"]).assert().code(2);
    mdiag()
        .args([
            "snapshot",
            "--snapshot",
            &fixture("healthy"),
            "chart-demo",
            "--output-file",
            "/tmp/x.yaml",
            "--redact",
            "(",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--redact"));
    mdiag()
        .args([
            "snapshot",
            "nope",
            "--snapshot",
            &fixture("healthy"),
            "--output-file",
            "/tmp/x.yaml",
        ])
        .assert()
        .code(5);
}

/// Two demo scenarios in one List, each moved to its own namespace.
fn two_namespaces() -> (tempfile::TempDir, PathBuf) {
    let mut items = Vec::new();
    for (name, ns) in [
        ("crash-loop", "team-a"),
        ("healthy", "team-b"),
        ("oom-killed", "team-c"),
    ] {
        let mut list = fixture_value(name);
        for mut item in list["items"].as_array_mut().unwrap().drain(..) {
            if item["metadata"]["namespace"] != "modeldock-lab" {
                // The controller's objects (its Deployment, its Lease): once.
                if ns == "team-a" {
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
            if item["kind"] == "ModelService" {
                item["metadata"]["labels"]["team"] = ns.into();
            }
            items.push(item);
        }
    }
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    temp_with(
        "teams.json",
        serde_json::to_string(&list).unwrap().as_bytes(),
    )
}

#[test]
fn triage_ranks_every_workload_worst_first_and_folds_the_healthy() {
    let (_dir, file) = two_namespaces();
    let out = mdiag()
        .args([
            "triage",
            "-A",
            "--snapshot",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["kind"], "Triage");
    assert_eq!(r["total"], 3);
    assert_eq!(r["healthy"], 1);
    let order: Vec<&str> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["target"]["namespace"].as_str().unwrap())
        .collect();
    // Nothing serving before half serving (the old revision), healthy last.
    assert_eq!(order, ["team-a", "team-c", "team-b"]);
    assert_eq!(r["items"][0]["findings"][0]["id"], "crash-loop");

    let table = mdiag()
        .args(["triage", "-A", "--snapshot", file.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("msvc/chart-demo") && text.contains("✘ crash-loop"),
        "{text}"
    );
    assert!(!text.contains("team-b"), "healthy folded: {text}");
    assert!(
        text.contains("1 healthy workload not shown (--all shows it)"),
        "{text}"
    );
    assert!(text.contains("next: mdiag trace chart-demo -n team-a"));
}

#[test]
fn triage_filters_by_namespace_and_selector() {
    let (_dir, file) = two_namespaces();
    let f = file.to_str().unwrap();
    mdiag()
        .args(["triage", "-n", "team-b", "--snapshot", f])
        .assert()
        .code(0)
        .stdout("the one workload in team-b is healthy (--all lists it)\n");
    let out = mdiag()
        .args([
            "triage",
            "-A",
            "-l",
            "team=team-c",
            "--snapshot",
            f,
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["total"], 1);
    assert_eq!(r["items"][0]["target"]["namespace"], "team-c");
    mdiag()
        .args(["triage", "-A", "-n", "x", "--snapshot", f])
        .assert()
        .code(2);
    mdiag()
        .args(["triage", "-A", "-l", "a in (b)", "--snapshot", f])
        .assert()
        .code(2);
    mdiag()
        .args(["triage", "-n", "nobody-here", "--snapshot", f])
        .assert()
        .code(5);
}

#[test]
fn triage_json_lists_what_could_not_be_read() {
    let out = mdiag()
        .args([
            "triage",
            "--snapshot",
            "fixtures/demo/snapshot-crash-loop.yaml",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["gaps"][0]["resource"], "nodes", "{}", r["gaps"]);
    assert_eq!(r["gaps"][0]["verb"], "list");
}

/// Runs mdiag and returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = mdiag().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn each_bad_input_is_one_sentence_naming_the_problem_and_what_to_do() {
    let (_dir, teams) = two_namespaces();
    let teams = teams.to_str().unwrap();
    let (_gz_dir, not_gzip) = temp_with("plain.yaml.gz", b"plain text");
    let not_gzip = not_gzip.to_str().unwrap();
    let healthy = fixture("healthy");
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["trace", "chart-demo", "--snapshot", "no/such/file.yaml"],
            2,
            "mdiag: no/such/file.yaml does not exist; check the path (`--snapshot -` reads standard input)".into(),
        ),
        (
            vec!["trace", "chart-demo", "--snapshot", not_gzip],
            2,
            format!("mdiag: {not_gzip} is not valid gzip data (invalid gzip header); drop the .gz suffix if the file is not compressed"),
        ),
        (
            vec!["triage", "-n", "nobody-here", "--snapshot", teams],
            5,
            format!("mdiag: no workload (ModelService, Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod) and nothing failing in namespace \"nobody-here\" of {teams}; name another namespace, or use -A for all the file holds"),
        ),
        (
            vec!["triage", "-A", "-l", "app=nothing", "--snapshot", &healthy],
            5,
            format!("mdiag: no workload or Service matches -l app=nothing in any namespace of {healthy}; check the selector, or leave it out to see what the file holds"),
        ),
        (
            vec!["trace", "chart-demo-typo", "--snapshot", &healthy],
            5,
            "mdiag: ModelService \"chart-demo-typo\" not found in any namespace of the file; trace one of these instead: deploy/chart-demo -n modeldock-lab, msvc/chart-demo -n modeldock-lab, deploy/modeldock-controller -n modeldock-system".into(),
        ),
        (
            vec!["explain", "crashlop"],
            2,
            "mdiag: no finding id or symptom matches \"crashlop\"; did you mean crash-loop? `mdiag explain` lists every id".into(),
        ),
        (
            vec!["explain", "no-such-thing"],
            2,
            "mdiag: no finding id or symptom matches \"no-such-thing\"; `mdiag explain` lists every id".into(),
        ),
    ];
    for (args, code, stderr) in cases {
        let (got_code, _, got_stderr) = run(&args);
        assert_eq!(got_code, Some(code), "{args:?}: {got_stderr}");
        assert_eq!(got_stderr, format!("{stderr}\n"), "{args:?}");
    }
}

#[test]
fn snapshot_dash_reads_standard_input_plain_or_gzip() {
    let path = root().join(fixture("crash-loop"));
    let bytes = std::fs::read(&path).unwrap();
    let from_file = trace_json(&fixture("crash-loop"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let gzipped = gz.finish().unwrap();
    for input in [bytes, gzipped] {
        let out = mdiag()
            .args(["trace", "chart-demo", "--snapshot", "-", "-o", "json"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(finding_ids(&r), finding_ids(&from_file));
        assert_eq!(r["verdict"], from_file["verdict"]);
    }
    let out = mdiag()
        .args(["trace", "chart-demo", "--snapshot", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mdiag: standard input is empty\n"
    );
}

#[test]
fn explain_without_an_argument_lists_every_id_with_its_title() {
    let (code, listed, _) = run(&["explain"]);
    assert_eq!(code, Some(0));
    let cat = mdiag_core::catalogue::catalogue();
    assert_eq!(listed.lines().count(), cat.entries.len(), "{listed}");
    for (line, e) in listed.lines().zip(&cat.entries) {
        assert!(line.starts_with(&format!("{} ", e.id)), "{line}");
        assert!(line.ends_with(e.title.en.trim()), "{line}");
    }
    assert_eq!(run(&["explain", "--list"]).1, listed);
}

#[test]
fn explain_finds_symptom_words_aliases_reasons_and_exit_codes() {
    let first_ids = |word: &str| -> Vec<String> {
        let (code, out, err) = run(&["explain", word]);
        assert_eq!(code, Some(0), "{word}: {err}");
        let chunks: Vec<&str> = out.split("\n---\n\n").collect();
        let ids: Vec<String> = chunks
            .iter()
            .enumerate()
            .map(|(i, e)| {
                // More than one: a line first that names them, in order.
                let e = match (i, chunks.len()) {
                    (0, 2..) => e.split_once("\n\n").unwrap().1,
                    _ => e,
                };
                e.split_whitespace().next().unwrap().to_string()
            })
            .collect();
        if ids.len() > 1 {
            let header = out.split_once("\n\n").unwrap().0.replace("\n  ", " ");
            assert_eq!(
                header,
                format!(
                    "{} entries match {word}, the likeliest first: {}",
                    ids.len(),
                    ids.join(", ")
                )
            );
        }
        ids
    };
    assert_eq!(first_ids("crashloop"), ["crash-loop"]);
    assert_eq!(first_ids("CrashLoopBackOff"), ["crash-loop"]);
    assert_eq!(first_ids("Crash Loop"), ["crash-loop"]);
    assert_eq!(first_ids("OOM"), ["oom-killed"]);
    assert_eq!(first_ids("OOMKilled"), ["oom-killed"]);
    assert_eq!(first_ids("127"), ["container-cannot-run"]);
    assert_eq!(first_ids("exit 126"), ["container-cannot-run"]);
    // 137 is a kill: OOMKilled only when the reason says so.
    assert_eq!(first_ids("137"), ["crash-loop", "oom-killed"]);
    let pulls = [
        "image-pull-denied",
        "image-pull-not-found",
        "image-pull-timeout",
        "image-pull-failed",
    ];
    assert_eq!(first_ids("ErrImagePull"), pulls);
    assert_eq!(first_ids("ImagePullBackOff"), pulls);
    assert_eq!(
        first_ids("Pending"),
        [
            "pod-unschedulable",
            "resource-claim-pending",
            "scheduler-silent"
        ]
    );
}

#[test]
fn explain_crash_loop_prints_single_braced_jsonpath() {
    let (_, out, _) = run(&["explain", "crash-loop"]);
    assert!(
        out.contains(
            "'jsonpath={range .status.containerStatuses[*]}{.name} restarts={.restartCount}"
        ),
        "{out}"
    );
    assert!(!out.contains("{{") && !out.contains("}}"), "{out}");
}

/// explain fits the width: prose wraps under its label, a check command
/// wider than the line breaks at its arguments with ` \` (each line
/// alone wider only when one argument is), and a name to fill in is
/// `<pod>` everywhere (braces are jsonpath's), in the terminal as in JSON.
#[test]
fn explain_wraps_to_the_width_with_one_placeholder_style() {
    for lang in ["en", "zh"] {
        for width in ["40", "60", "80", "120"] {
            let out = mdiag()
                .args(["explain", "crash-loop", "--lang", lang])
                .env("COLUMNS", width)
                .output()
                .unwrap();
            let out = String::from_utf8(out.stdout).unwrap();
            let columns: usize = width.parse().unwrap();
            for line in out.lines() {
                let words = line.split_whitespace().count();
                assert!(
                    unicode_width::UnicodeWidthStr::width(line) <= columns
                        || words <= 2
                        || line.trim_start().starts_with("'jsonpath="),
                    "{lang} at {width}: {line:?}"
                );
            }
            assert!(out.contains("<pod>"), "{lang} at {width}:\n{out}");
            for p in mdiag_core::catalogue::PLACEHOLDERS {
                assert!(!out.contains(&format!("{{{p}}}")), "{{{p}}} in {out}");
            }
            // Every check is one command once its ` \` lines are joined.
            let checks: Vec<String> = out
                .replace(" \\\n", " ")
                .lines()
                .filter(|l| l.trim_start().starts_with("kubectl "))
                .map(|l| l.trim().to_string())
                .collect();
            let entry = mdiag_core::catalogue::catalogue()
                .get("crash-loop")
                .unwrap();
            assert_eq!(
                checks.len(),
                entry.check.len(),
                "{lang} at {width}: {checks:?}"
            );
            for (shown, template) in checks.iter().zip(&entry.check) {
                assert_eq!(
                    shlex::split(shown).unwrap(),
                    mdiag_core::catalogue::template_shown(template).argv(),
                    "{lang} at {width}"
                );
            }
        }
    }
    let (_, json, _) = run(&["explain", "crash-loop", "-o", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let check = report["entries"][0]["check"][0].as_str().unwrap();
    assert_eq!(
        check,
        "kubectl -n <namespace> logs <pod> -c <container> --previous"
    );
}

#[test]
fn explain_with_a_target_fills_in_its_real_names() {
    let file = fixture("crash-loop");
    let r = trace_json(&file);
    let pod = r["findings"][0]["subject"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, out, err) = run(&[
        "explain",
        "crash-loop",
        &format!("pod/{pod}"),
        "--snapshot",
        &file,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!("kubectl -n modeldock-lab logs {pod} -c ")),
        "{out}"
    );
    assert!(!out.contains('<') && !out.contains("{pod}"), "{out}");
    // The same finding's own names, through the ModelService.
    let (_, by_msvc, _) = run(&["explain", "crash-loop", "chart-demo", "--snapshot", &file]);
    assert!(by_msvc.contains(&pod), "{by_msvc}");
    // A plain Deployment gets no ModelService command.
    let (code, out, err) = run(&[
        "explain",
        "rollout-in-progress",
        "deploy/web",
        "--snapshot",
        "fixtures/cases/plain-deployment-healthy.yaml",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !out.contains("msvc") && !out.contains("<modelservice>"),
        "{out}"
    );
    assert!(out.contains("  mdiag trace deploy/web -n shop\n"), "{out}");
}

/// The binary under the name kubectl runs it by.
fn as_plugin() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-mdiag");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("mdiag"), &plugin).unwrap();
    (dir, plugin)
}

#[test]
fn run_as_the_kubectl_plugin_it_prints_kubectl_mdiag_commands() {
    let (_dir, plugin) = as_plugin();
    let (_teams_dir, teams) = two_namespaces();
    let out = std::process::Command::new(&plugin)
        .current_dir(root())
        .env("LANG", "C")
        .args(["triage", "-A", "--snapshot", teams.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kubectl mdiag trace chart-demo -n team-a --snapshot "),
        "{text}"
    );
    let out = std::process::Command::new(&plugin)
        .args(["explain", "progress-deadline-exceeded"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  kubectl mdiag trace <target> -n <namespace>\n"),
        "{text}"
    );
    let out = std::process::Command::new(&plugin)
        .args(["explain", "no-such-thing"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "kubectl mdiag: no finding id or symptom matches \"no-such-thing\"; `kubectl mdiag explain` lists every id\n"
    );
    let out = std::process::Command::new(&plugin)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: kubectl mdiag [OPTIONS] <COMMAND>"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Without a kubeconfig, outside a cluster: one sentence saying where mdiag
/// looked and the ways on, not kube's chain of both failures.
#[test]
fn no_kubeconfig_says_where_it_looked_and_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = mdiag()
            .args(args)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("HOME", home.path())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let expected = format!(
        "mdiag: no kubeconfig: KUBECONFIG is not set, there is no {}, and this is not a \
         Pod in a cluster; set KUBECONFIG or --kubeconfig, or read a file with --snapshot FILE\n",
        home.path().join(".kube/config").display()
    );
    assert_eq!(run(&["trace", "chart-demo"]), (Some(2), expected.clone()));
    // The gate says the same, as a usage error: no verdict line.
    assert_eq!(
        run(&["gate", "chart-demo", "--timeout", "5s"]),
        (Some(2), expected)
    );
}
