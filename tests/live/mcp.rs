//! `mdiag mcp` against the live cluster, through the Python `mcp` SDK's
//! client (tests/mcp_client.py) with the view-only kubeconfig: trace and
//! triage must tell what the CLI tells about the same rollout, and a
//! missing target must be a tool error with the CLI's line.

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use serde_json::{Value, json};

use super::{Want, apply, finding_ids, mdiag, namespace, python_mcp, spec, until_live, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "mcp-trace-and-triage-match-the-cli",
        trace_and_triage,
    )]
}

/// The facts of a trace report that do not move while a crash loop goes on
/// (restart counts, ages and the clock do).
fn verdict(r: &Value) -> Value {
    json!({
        "target": r["target"],
        "healthy": r["healthy"],
        "state": r["verdict"]["state"],
        "last_step": r["verdict"]["last_step"],
        "missing": r["verdict"]["missing"],
        "lead": r["verdict"]["lead"],
        "next": r["verdict"]["next"],
        "findings": finding_ids(r),
        "source": r["source"]["kind"],
        "location": r["source"]["location"],
    })
}

fn trace_and_triage() -> Result<(), Failed> {
    let ns = namespace("mcp")?;
    apply(&ns, &spec("crash-loop:1"))?;
    until_live(
        &ns,
        Want {
            must: &["crash-loop"],
            ..Want::default()
        },
    )?;
    let viewer = world().layout.viewer_kubeconfig();
    let viewer = viewer.to_str().unwrap();
    // Both read what the server's flags pin (`mdiag mcp --kubeconfig ...
    // -n ...`); trace names the same kubeconfig and namespace again, which
    // is not a change (another would be refused: tests/suite/hostile_mcp.rs).
    let calls = json!([
        ["trace", {"target": "chart-demo", "namespace": ns, "kubeconfig": viewer}],
        ["triage", {}],
        ["trace", {"target": "deploy/nothing-here"}],
    ]);
    let flags = ["--kubeconfig", viewer, "-n", ns.as_str()];
    // The rollout keeps crashing while both are asked: compare what does
    // not move, and ask again if a Pod was replaced in between.
    let t0 = Instant::now();
    loop {
        let got = python_mcp::run(&calls, &flags)?;
        let answers = got["calls"].as_array().ok_or("no calls")?;
        let (_, cli_trace) = mdiag(&[
            "--kubeconfig",
            viewer,
            "-n",
            &ns,
            "trace",
            "chart-demo",
            "-o",
            "json",
        ])?;
        let (_, cli_triage) = mdiag(&["--kubeconfig", viewer, "-n", &ns, "triage", "-o", "json"])?;
        let mut problems = Vec::new();
        let trace = &answers[0];
        if trace["is_error"] != false {
            return Err(format!("trace failed through MCP: {}", trace["text"]).into());
        }
        if verdict(&trace["structured"]) != verdict(&cli_trace) {
            problems.push(format!(
                "trace: MCP {} vs CLI {}",
                verdict(&trace["structured"]),
                verdict(&cli_trace)
            ));
        }
        if trace["structured"]["source"]["kind"] != "live" {
            return Err(format!("not a live read: {}", trace["structured"]["source"]).into());
        }
        let triage = &answers[1];
        if triage["is_error"] != false {
            return Err(format!("triage failed through MCP: {}", triage["text"]).into());
        }
        let items = |r: &Value| -> Vec<Value> {
            r["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(verdict)
                .collect()
        };
        if items(&triage["structured"]) != items(&cli_triage)
            || triage["structured"]["total"] != cli_triage["total"]
        {
            problems.push(format!(
                "triage: MCP {:?} vs CLI {:?}",
                items(&triage["structured"]),
                items(&cli_triage)
            ));
        }
        let missing = &answers[2];
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mdiag"))
            .args([
                "--kubeconfig",
                viewer,
                "-n",
                &ns,
                "trace",
                "deploy/nothing-here",
            ])
            .env_remove("KUBECONFIG")
            .output()
            .map_err(|e| e.to_string())?;
        let line = String::from_utf8_lossy(&out.stderr);
        if missing["is_error"] != true
            || format!(
                "mdiag: {}\n",
                missing["text"]
                    .as_str()
                    .and_then(|t| t.strip_prefix("trace: "))
                    .unwrap_or("")
            ) != line
        {
            return Err(format!("missing target: MCP {missing}, CLI {line:?}").into());
        }
        if problems.is_empty() {
            if !trace["text"]
                .as_str()
                .is_some_and(|t| t.contains("[crash-loop]") && t.contains("\nnext: "))
            {
                return Err(format!("trace text: {}", trace["text"]).into());
            }
            return Ok(());
        }
        if t0.elapsed() > Duration::from_secs(60) {
            return Err(problems.join("\n").into());
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}
