//! Helpers shared by the test binaries: load a fixture, diagnose it the
//! way `trace` does, with the file's own clock.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mdiag_core::analysis::{Diagnosis, analyze};
use mdiag_core::chain::walk;
use mdiag_core::model::{Clock, Objects, Snapshot, TargetSpec};
use mdiag_source::read_snapshot_file;

pub const NAMESPACE: &str = "modeldock-lab";

pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/demo")
        .join(format!("{name}.yaml"))
}

pub fn load(name: &str) -> Snapshot {
    read_snapshot_file(&fixture_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A fixture by its path from the project root (`fixtures/cases/x.yaml`).
pub fn load_file(path: &str) -> Snapshot {
    read_snapshot_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn clock(snapshot: &Snapshot) -> Clock {
    // The system clock must never be the answer for a file with times in it.
    Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH)
}

pub fn diagnose(snapshot: &Snapshot) -> Diagnosis {
    diagnose_target(snapshot, "chart-demo")
}

/// Diagnoses `target` in the one namespace of the file that holds it.
pub fn diagnose_target(snapshot: &Snapshot, target: &str) -> Diagnosis {
    let target = TargetSpec::parse(target, None).unwrap();
    let namespaces = mdiag_core::chain::namespaces_holding(snapshot, &target);
    let namespace = match namespaces.as_slice() {
        [one] => one.as_str(),
        _ => NAMESPACE,
    };
    let chain = walk(snapshot, &target, namespace, None).expect("target in fixture");
    analyze(snapshot, &chain, clock(snapshot).now)
}

/// The gate's judgement of `chart-demo` in the file, with the crashes
/// `crashes` remembers, under `policy`.
pub fn gate_view(
    snapshot: &Snapshot,
    crashes: &mdiag_core::analysis::crashes::CrashHistory,
    policy: &mdiag_core::analysis::gate::GatePolicy,
) -> (Diagnosis, mdiag_core::analysis::gate::GateView) {
    gate_view_of(snapshot, "chart-demo", crashes, policy)
}

/// [`gate_view`] of another target (`isvc/llama`).
pub fn gate_view_of(
    snapshot: &Snapshot,
    target: &str,
    crashes: &mdiag_core::analysis::crashes::CrashHistory,
    policy: &mdiag_core::analysis::gate::GatePolicy,
) -> (Diagnosis, mdiag_core::analysis::gate::GateView) {
    use mdiag_core::analysis::gate;
    let target = TargetSpec::parse(target, None).unwrap();
    let namespaces = mdiag_core::chain::namespaces_holding(snapshot, &target);
    let namespace = match namespaces.as_slice() {
        [one] => one.as_str(),
        _ => NAMESPACE,
    };
    let chain = walk(snapshot, &target, namespace, None).expect("target in fixture");
    let d = analyze(snapshot, &chain, clock(snapshot).now);
    let view = gate::judge(
        gate::Observation {
            snapshot,
            chain: &chain,
            diagnosis: &d,
            crashes,
        },
        policy,
    );
    (d, view)
}

/// The id of the finding that failed the gate, and why, if it failed.
pub fn failed_on(
    d: &Diagnosis,
    view: &mdiag_core::analysis::gate::GateView,
) -> Option<(&'static str, Option<String>)> {
    match &view.judgement {
        mdiag_core::analysis::gate::Judgement::Failed { finding, why } => Some((
            d.findings[*finding].id.as_str(),
            why.as_ref().map(|m| m.en()),
        )),
        _ => None,
    }
}

/// The workloads `triage -A --all` lists from a fixture, as `Kind/name`.
pub fn triage_workloads(fixture: &str) -> Vec<String> {
    let out = mdiag()
        .args(["triage", "-A", "--all", "--snapshot", fixture, "-o", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["target"]["kind"].as_str().unwrap_or("?"),
                i["target"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// `trace TARGET -n NAMESPACE -o json --snapshot FILE`: its exit code and report.
pub fn trace_json(target: &str, namespace: &str, file: &str) -> (Option<i32>, serde_json::Value) {
    let out = mdiag()
        .args([
            "-n",
            namespace,
            "trace",
            target,
            "-o",
            "json",
            "--snapshot",
            file,
        ])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code(), report)
}

pub fn ids(d: &Diagnosis) -> Vec<&'static str> {
    d.findings.iter().map(|f| f.id.as_str()).collect()
}

/// The id of the finding a diagnosis leads with.
pub fn lead(d: &Diagnosis) -> Option<&'static str> {
    d.lead().map(|f| f.id.as_str())
}

/// The objects `mdiag snapshot TARGET` keeps of a chain, after checking
/// that a replay of them judges the target as the whole input does.
pub fn kept_for_replay(snapshot: &Snapshot, target: &str, namespace: &str) -> Objects {
    let spec = TargetSpec::parse(target, None).unwrap();
    let chain = walk(snapshot, &spec, namespace, None).unwrap();
    let kept = mdiag_core::chain::chain_objects(snapshot, &chain);
    let replay = Snapshot {
        objects: kept.clone(),
        ..snapshot.clone()
    };
    let d = diagnose_target(snapshot, target);
    let again = diagnose_target(&replay, target);
    assert_eq!(
        (again.verdict.state, again.replicas.serving, ids(&again)),
        (d.verdict.state, d.replicas.serving, ids(&d)),
        "{target} replayed from its snapshot"
    );
    kept
}

/// The scenario names in fixtures/demo (every .yaml but expected.yaml).
pub fn scenarios() -> Vec<String> {
    files_in("fixtures/demo")
}

/// The fixture names (without .yaml) in a folder, expected.yaml aside.
pub fn files_in(folder: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".yaml")?;
            (stem != "expected").then(|| stem.to_string())
        })
        .collect();
    names.sort();
    names
}

/// The binary, run from the project root with no kubeconfig, no terminal
/// width and no colour setting from the caller's environment, in English.
pub fn mdiag() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("mdiag").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env("LANG", "C");
    cmd
}

/// Every demo and case fixture with expectations, and the target its
/// expectation names.
pub fn expected_fixtures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for folder in ["fixtures/demo", "fixtures/cases"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        let text = std::fs::read_to_string(root.join("expected.yaml")).unwrap();
        let expected: std::collections::BTreeMap<String, serde_json::Value> =
            serde_saphyr::from_str(&text).unwrap();
        for (name, want) in expected {
            let target = want["target"].as_str().unwrap_or("chart-demo").to_string();
            out.push((format!("{folder}/{name}.yaml"), target));
        }
    }
    assert!(out.len() > 40, "{} fixtures", out.len());
    out
}

/// The one overflow the views allow besides a shell word: a name, an
/// image reference or a field path wider than what is left of its line.
/// Wrapping never breaks one (it would not copy whole), so it ends a line
/// of its own, after at most a label.
pub fn one_long_token(line: &str, width: usize) -> bool {
    use unicode_width::UnicodeWidthStr;
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some((last, before)) = tokens.split_last() else {
        return false;
    };
    let rest: usize = before.iter().map(|t| t.width() + 1).sum::<usize>();
    last.width() >= 16 && before.len() <= 2 && rest < width
}
