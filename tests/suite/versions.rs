//! Ring 2: the binary on dumps of older API versions (docs/snapshot-format.md,
//! "API versions"): each is converted on read and judged, a version mdiag
//! does not read is a gap line, and a key named twice is a warning.

use crate::common;

use std::path::PathBuf;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cases/versions")
        .join(format!("{name}.yaml"))
        .to_str()
        .unwrap()
        .to_string()
}

/// `mdiag triage -A -f FILE` with `more` flags: exit code, stdout, stderr.
fn triage(name: &str, more: &[&str]) -> (i32, String, String) {
    let file = fixture(name);
    let out = common::mdiag()
        .args(["triage", "-A", "--snapshot", &file])
        .args(more)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn an_autoscaling_v1_hpa_that_cannot_read_its_metric_is_judged() {
    let (code, json, stderr) = triage("hpa-v1", &["-o", "json"]);
    assert!(code != 5 && code != 2 && code != 0, "exit {code}: {stderr}");
    assert!(json.contains("hpa-metrics-unavailable"), "{json}");
    assert!(json.contains("\"checkout\""), "{json}");
    // The healthy neighbour is no row.
    assert!(!json.contains("\"catalog\""), "{json}");
    let (_, text, _) = triage("hpa-v1", &[]);
    assert!(text.contains("checkout"), "{text}");
    assert!(!text.contains("catalog"), "{text}");
}

#[test]
fn a_policy_v1beta1_pdb_dump_is_read_and_judged() {
    // pdb-blocking is a note (info): the exit is 0, but the row is there.
    let (code, json, stderr) = triage("pdb-v1beta1", &["-o", "json"]);
    assert!(code != 5 && code != 2, "exit {code}: {stderr}");
    assert!(json.contains("pdb-blocking"), "{json}");
    assert!(json.contains("\"ledger-db\""), "{json}");
    assert!(!json.contains("\"ledger-cache\""), "{json}");
}

#[test]
fn an_apps_v1beta2_deployment_is_read_and_traced() {
    let file = fixture("deployment-v1beta2");
    let out = common::mdiag()
        .args(["trace", "deploy/ingest", "-n", "etl", "--snapshot", &file])
        .args(["-o", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(report["target"]["kind"], "Deployment", "{report}");
    assert_eq!(report["target"]["name"], "ingest");
    assert_eq!(report["pods"].as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(
        report["pods"][0]["moments"]["ready"],
        "2026-12-02T07:00:55Z"
    );
}

#[test]
fn a_key_named_twice_warns_with_its_line_and_the_last_value_is_used() {
    let (code, json, stderr) = triage("duplicate-key", &["-o", "json"]);
    assert!(code != 5 && code != 2, "exit {code}: {stderr}");
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("duplicate-key.yaml: line 32: the key \"status\" is given twice"),
        "{stderr}"
    );
    // The last value, "False", is the one judged.
    assert!(json.contains("hpa-metrics-unavailable"), "{json}");
}

#[test]
fn a_version_mdiag_does_not_read_is_a_gap_line_and_the_rest_is_judged() {
    let (code, text, stderr) = triage("unknown-version", &[]);
    assert!(code != 5 && code != 2, "exit {code}: {stderr}");
    // The line is cut to the terminal's width; the JSON has it whole.
    assert!(
        text.contains("read poddisruptionbudgets in vault: apiVersion policy/v1alpha1"),
        "{text}"
    );
    assert!(text.contains("vault-api"), "{text}");
    let (_, json, _) = triage("unknown-version", &["-o", "json"]);
    assert!(json.contains("hpa-metrics-unavailable"), "{json}");
    assert!(
        json.contains("apiVersion policy/v1alpha1 of PodDisruptionBudget is not read"),
        "{json}"
    );
}
