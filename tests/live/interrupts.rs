//! A gate cancelled mid-wait, as a CI job is: SIGTERM after the gate has
//! judged the rollout at least once. It exits 130 and still writes its
//! report and JUnit with outcome `interrupted` and the last state it saw.
//! tests/suite/interrupts.rs covers the same before anything was seen, SIGINT,
//! and a snapshot interrupted before its write, without a cluster.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use serde_json::Value;

use super::gate::viewer;
use super::{apply, namespace, spec};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "safety-gate-interrupted-by-sigterm-writes-its-report",
        interrupted_gate,
    )]
}

fn interrupted_gate() -> Result<(), Failed> {
    let ns = namespace("gate-interrupted")?;
    apply(&ns, &spec("never-ready"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let report = dir.path().join("gate.json");
    let junit = dir.path().join("gate.xml");
    let viewer = viewer();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(["--kubeconfig", viewer.to_str().unwrap(), "-n", &ns])
        .args(["gate", "chart-demo", "--timeout", "5m"])
        .arg("--report")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Long enough for its watches to list and for a first judgement.
    std::thread::sleep(Duration::from_secs(8));
    let pid = child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            return Err("the gate did not stop within 30 s of SIGTERM".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    if status.code() != Some(130) {
        return Err(format!("exit {:?}, want 130", status.code()).into());
    }
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(&report).map_err(|e| format!("no report: {e}"))?,
    )
    .map_err(|e| e.to_string())?;
    if written["outcome"] != "interrupted"
        || written["gate"]["reason"]
            != "SIGTERM came before a verdict; the last state seen is reported"
    {
        return Err(format!("report: {} / {}", written["outcome"], written["gate"]).into());
    }
    // The last state seen: a rollout whose Pods never turn ready.
    if written["verdict"]["state"].as_str().is_none() || written["findings"].as_array().is_none() {
        return Err(format!("no trace part in the report: {written}").into());
    }
    let xml = std::fs::read_to_string(&junit).map_err(|e| format!("no JUnit: {e}"))?;
    if !xml.contains("<testcase name=\"interrupted\"") {
        return Err(format!("JUnit without the interrupted case: {xml}").into());
    }
    let _ = super::world().kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    Ok(())
}
