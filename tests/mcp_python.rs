//! `mdiag mcp` and a client we did not write: tests/mcp_client.py, the
//! Python `mcp` SDK's stdio client, lists the tools and calls all four on
//! fixtures; every answer must be the CLI's `-o json` for the same input.
//! It needs Python with the pinned `mcp` package (.ci/run installs it), so
//! it runs with the live ring (`cargo xtask test`, MDIAG_LIVE=1) and is
//! listed as ignored in plain `cargo test`.

#[path = "common/python_mcp.rs"]
mod python_mcp;

use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

const LIVE_ENV: &str = "MDIAG_LIVE";

fn cli_json(args: &[&str]) -> Result<Value, Failed> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env("LANG", "C")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "mdiag {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into()
    })
}

fn cli_stderr(args: &[&str]) -> Result<String, Failed> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env("LANG", "C")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

fn lists_and_calls_every_tool() -> Result<(), Failed> {
    let demo = "fixtures/demo/crash-loop.yaml";
    let snap = "fixtures/demo/snapshot-crash-loop.yaml";
    let triage_file = "fixtures/triage/pods-only.yaml";
    let calls = json!([
        ["trace", {"target": "chart-demo", "snapshot": demo}],
        ["trace", {"target": "chart-demo", "snapshot": snap, "lang": "zh"}],
        ["triage", {"snapshot": triage_file}],
        ["explain", {"query": "CrashLoopBackOff", "target": "chart-demo", "snapshot": demo}],
        ["snapshot_summary", {"snapshot": snap}],
        ["trace", {"target": "deploy/nothing-here", "snapshot": demo}],
    ]);
    // The server reads only the files it is started to allow.
    let got = python_mcp::run(&calls, &["--allow-file", "fixtures"])?;

    if got["server"]["name"] != "mdiag" || got["server"]["version"] != env!("CARGO_PKG_VERSION") {
        return Err(format!("server info: {}", got["server"]).into());
    }
    let tools: Vec<&str> = got["tools"]
        .as_array()
        .ok_or("no tools")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    if tools != ["explain", "snapshot_summary", "trace", "triage"] {
        return Err(format!("tools: {tools:?}").into());
    }
    for t in got["tools"].as_array().unwrap() {
        if t["read_only"] != true || t["properties"].as_array().is_none_or(|p| p.is_empty()) {
            return Err(format!("tool without a read-only hint or a schema: {t}").into());
        }
    }
    let want_required =
        json!({"trace": ["target"], "snapshot_summary": ["snapshot"], "triage": [], "explain": []});
    for t in got["tools"].as_array().unwrap() {
        if t["required"] != want_required[t["name"].as_str().unwrap()] {
            return Err(format!("{}: required {}", t["name"], t["required"]).into());
        }
    }

    let answers = got["calls"].as_array().ok_or("no calls")?;
    let expected = [
        cli_json(&["trace", "chart-demo", "--snapshot", demo, "-o", "json"])?,
        cli_json(&[
            "trace",
            "chart-demo",
            "--snapshot",
            snap,
            "--lang",
            "zh",
            "-o",
            "json",
        ])?,
        cli_json(&["triage", "--snapshot", triage_file, "-o", "json"])?,
        cli_json(&[
            "explain",
            "CrashLoopBackOff",
            "chart-demo",
            "--snapshot",
            demo,
            "-o",
            "json",
        ])?,
    ];
    for (answer, want) in answers.iter().zip(&expected) {
        if answer["is_error"] != false || &answer["structured"] != want {
            return Err(format!(
                "{} {}: the client got {}\nthe CLI prints {}",
                answer["tool"], answer["arguments"], answer["structured"], want
            )
            .into());
        }
    }
    // The text answer: the headline, then the next command, then (a block
    // of its own, which the client joined with a newline) the report as JSON.
    let trace = &answers[0];
    let want_text = format!(
        "{}\nnext: {}\n",
        expected[0]["verdict"]["summary"].as_str().unwrap(),
        expected[0]["verdict"]["next"].as_str().unwrap()
    );
    let text = trace["text"].as_str().unwrap_or_default();
    let json_block = text
        .strip_prefix(want_text.as_str())
        .and_then(|rest| serde_json::from_str::<Value>(rest).ok());
    if json_block.as_ref() != Some(&expected[0]) {
        return Err(format!("trace text {text:?}, want {want_text:?} and the report").into());
    }
    // The same findings as the CLI, read from the structured content.
    let ids = |r: &Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["id"].as_str().map(String::from))
            .collect()
    };
    if ids(&trace["structured"]).first().map(String::as_str) != Some("crash-loop") {
        return Err(format!("trace findings {:?}", ids(&trace["structured"])).into());
    }
    let summary = &answers[4];
    let triage_of_file = cli_json(&["triage", "--snapshot", snap, "-o", "json"])?;
    if summary["is_error"] != false
        || summary["structured"]["kind"] != "SnapshotSummary"
        || summary["structured"]["triage"] != triage_of_file
        || summary["structured"]["source"]["captured_at"] != "2026-11-28T10:11:11Z"
        || summary["structured"]["logs"]
            .as_array()
            .is_none_or(|l| l.is_empty())
    {
        return Err(format!("snapshot_summary: {}", summary["structured"]).into());
    }
    let failure = &answers[5];
    let stderr = cli_stderr(&["trace", "deploy/nothing-here", "--snapshot", demo])?;
    if failure["is_error"] != true
        || format!(
            "mdiag: {}\n",
            failure["text"]
                .as_str()
                .and_then(|t| t.strip_prefix("trace: "))
                .unwrap_or("")
        ) != stderr
    {
        return Err(format!("error: client got {failure}, the CLI says {stderr:?}").into());
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    let trials = vec![Trial::test(
        "python-mcp-client-lists-and-calls-every-tool",
        lists_and_calls_every_tool,
    )];
    if std::env::var_os(LIVE_ENV).is_none_or(|v| v.is_empty() || v == "0") {
        eprintln!(
            "the Python MCP client test is not run: it needs Python with the `mcp` package \
             (tests/mcp_client.requirements.txt, installed by .ci/run into target/mcp-venv); \
             run it with `cargo xtask test`, or `{LIVE_ENV}=1 cargo test --test mcp_python`"
        );
        args.ignored = false;
        args.include_ignored = false;
        let trials = trials
            .into_iter()
            .map(|t| t.with_ignored_flag(true))
            .collect();
        return libtest_mimic::run(&args, trials).exit_code();
    }
    libtest_mimic::run(&args, trials).exit_code()
}
