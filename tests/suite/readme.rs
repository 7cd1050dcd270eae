//! README's demo output is what the binary prints: the crash-loop demo's
//! default view, byte for byte, and the `oom-killed` headline it quotes. And docs/json.md
//! documents every field of the verdict and every state.

use crate::common;

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The fenced block that follows the line starting with `after`.
fn block_after(text: &str, after: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(after));
    assert!(lines.next().is_some(), "README has no line {after:?}");
    let mut lines = lines.skip_while(|l| !l.starts_with("```"));
    assert!(lines.next().is_some(), "no block after {after:?}");
    let mut out = String::new();
    for line in lines.take_while(|l| !l.starts_with("```")) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Runs mdiag as a pipe (80 columns, no colour); (exit code, stdout).
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = common::mdiag().args(args).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn the_demo_output_in_readme_is_what_the_demo_prints() {
    let readme = readme();
    // The command README's first block runs.
    let command =
        "cargo run --quiet -- trace chart-demo --snapshot fixtures/demo/snapshot-crash-loop.yaml";
    assert!(readme.contains(command), "README no longer runs {command}");
    let shown = block_after(&readme, "What the demo prints");
    let (code, printed) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/snapshot-crash-loop.yaml",
    ]);
    assert_eq!(code, Some(1));
    assert!(shown.lines().count() > 20, "{shown}");
    assert_eq!(
        printed.trim_end(),
        shown.trim_end(),
        "README's demo output differs from what the demo prints"
    );
}

/// README's triage table is what `triage` prints on the fixture it names.
#[test]
fn the_triage_table_in_readme_is_what_triage_prints() {
    let readme = readme();
    let file = "fixtures/triage/rs-without-deployment.yaml";
    let shown = block_after(&readme, &format!("{file}` prints at 80 columns:"));
    let (code, printed) = run(&["triage", "--snapshot", file]);
    assert_eq!(code, Some(1));
    assert!(shown.lines().count() > 4, "{shown}");
    assert_eq!(
        printed.trim_end(),
        shown.trim_end(),
        "README's triage table differs from what triage prints"
    );
}

#[test]
fn the_oom_killed_headline_readme_quotes_is_what_the_demo_says() {
    let readme = readme().replace('\n', " ");
    let intro = "On the `oom-killed` demo it reads `";
    let at = readme
        .find(intro)
        .expect("README quotes the oom-killed headline")
        + intro.len();
    let quoted = &readme[at..at + readme[at..].find('`').unwrap()];
    let (_, json) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/oom-killed.yaml",
        "-o",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let summary = report["verdict"]["summary"].as_str().unwrap();
    assert_eq!(quoted, format!("! {summary}"));
}

#[test]
fn docs_json_documents_every_verdict_field_and_state() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .unwrap();
    // A rollout whose two revisions both have Pods: every field is there.
    let (_, json) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/oom-killed.yaml",
        "-o",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let verdict = &report["verdict"];
    let mut fields = Vec::new();
    for object in [
        verdict,
        &verdict["serving"],
        &verdict["serving"]["revisions"][0],
    ] {
        fields.extend(object.as_object().expect("an object").keys().cloned());
    }
    for key in ["state", "serving", "next", "ready_endpoints", "revisions"] {
        assert!(fields.iter().any(|f| f == key), "verdict has no {key}");
    }
    for key in &fields {
        assert!(
            doc.contains(&format!("\"{key}\":")),
            "docs/json.md does not document verdict field {key:?}"
        );
    }
    for state in mdiag_core::analysis::State::ALL {
        assert!(
            doc.contains(&format!("| `{}` |", state.as_str())),
            "docs/json.md's state table lacks {}",
            state.as_str()
        );
    }
}
