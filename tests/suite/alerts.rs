//! `mdiag triage --alert`: real Alertmanager payload shapes (webhook firing
//! and resolved, several alerts at once, the API's list, bare labels) read
//! against the crash-loop demo snapshot.

use assert_cmd::Command;
use serde_json::Value;

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .env("LANG", "C")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn alert_json(file: &str) -> (i32, Value) {
    let out = mdiag()
        .args([
            "triage",
            "--alert",
            &format!("fixtures/alerts/{file}"),
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

#[test]
fn a_firing_webhook_traces_the_workload_once_with_both_alerts() {
    let (code, report) = alert_json("webhook-firing.json");
    assert_eq!(code, 1, "the workload is crash-looping");
    assert_eq!(report["schema"], "mdiag/v1");
    assert_eq!(report["kind"], "AlertTrace");
    let items = report["items"].as_array().unwrap();
    assert_eq!(
        items.len(),
        1,
        "a Pod alert and a ModelService alert: one workload"
    );
    assert_eq!(items[0]["alerts"], serde_json::json!([0, 1]));
    assert_eq!(items[0]["target"]["kind"], "ModelService");
    assert_eq!(items[0]["target"]["name"], "chart-demo");
    assert_eq!(items[0]["verdict"]["lead"], "crash-loop");
    // kube-state-metrics' exported_ labels name the object, not the scraper.
    let first = &report["alerts"][0];
    assert_eq!(first["alertname"], "KubePodCrashLooping");
    assert_eq!(first["starts_at"], "2026-11-28T10:06:30Z");
    assert_eq!(
        first["ends_at"],
        Value::Null,
        "Alertmanager's zero time is no end"
    );
    assert_eq!(first["item"], 0);
}

#[test]
fn a_resolved_alert_is_still_traced_and_says_when_it_ended() {
    let (code, report) = alert_json("webhook-resolved.json");
    assert_eq!(code, 1);
    assert_eq!(report["alerts"][0]["status"], "resolved");
    assert_eq!(report["alerts"][0]["ends_at"], "2026-11-28T10:10:00Z");
    assert_eq!(report["items"][0]["target"]["name"], "chart-demo");
    let text = mdiag()
        .args([
            "triage",
            "--alert",
            "fixtures/alerts/webhook-resolved.json",
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("resolved 2026-11-28 10:10:00 UTC (the trace shows the rollout now)"),
        "{text}"
    );
    assert!(
        text.contains("fired    59s after bound (10:00:01); started is still missing"),
        "the alert's start sits on the timeline:\n{text}"
    );
}

#[test]
fn several_alerts_map_what_they_can_and_list_the_rest() {
    let (code, report) = alert_json("several.json");
    assert_eq!(code, 1);
    let alerts = report["alerts"].as_array().unwrap();
    let by_name = |n: &str| alerts.iter().find(|a| a["alertname"] == n).unwrap();
    // A Service and a ReplicaSet of the same workload: one trace.
    assert_eq!(report["items"].as_array().unwrap().len(), 1);
    assert_eq!(by_name("ServiceNoReadyEndpoints")["item"], 0);
    assert_eq!(
        by_name("ServiceNoReadyEndpoints")["note"],
        "service/chart-demo belongs to ModelService chart-demo"
    );
    assert_eq!(
        by_name("KubeReplicaSetUnavailable")["note"],
        "replicaset/chart-demo-ntmp458kfb belongs to deployment/chart-demo"
    );
    assert_eq!(by_name("NodeFilesystemAlmostFull")["item"], Value::Null);
    assert_eq!(
        by_name("NodeFilesystemAlmostFull")["note"],
        "no namespace label"
    );
    assert_eq!(
        by_name("KubePodNotReady")["note"],
        "no Pod \"chart-demo-gone-x1y2z\" in modeldock-lab"
    );
    // The name as the alert gave it: the quotes are the sentence's.
    assert_eq!(
        by_name("KubePodNotReady")["note_args"]["name"],
        "chart-demo-gone-x1y2z"
    );
}

#[test]
fn bare_labels_and_the_api_list_read_too() {
    let (code, report) = alert_json("labels.yaml");
    assert_eq!(code, 1);
    assert_eq!(report["items"][0]["target"]["name"], "chart-demo");
    assert_eq!(report["alerts"][0]["status"], Value::Null);

    // Only a namespace: its worst workload, and the note says so.
    let (code, report) = alert_json("api-v2-alerts.json");
    assert_eq!(code, 1);
    assert_eq!(report["alerts"][0]["status"], "active");
    assert!(
        report["alerts"][0]["note"]
            .as_str()
            .unwrap()
            .contains("names only the namespace modeldock-lab")
    );
    assert_eq!(report["items"][0]["verdict"]["lead"], "crash-loop");
}

#[test]
fn an_alert_on_stdin_works_and_a_non_alert_is_a_usage_error() {
    let on_stdin = |text: String| {
        mdiag()
            .args([
                "triage",
                "--alert",
                "-",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
            ])
            .write_stdin(text)
            .assert()
    };
    let payload = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/alerts/webhook-firing.json"),
    )
    .unwrap();
    on_stdin(payload).code(1).stdout(predicates::str::contains(
        "Alert KubePodCrashLooping firing since",
    ));
    on_stdin("{\"hello\": [1]}".into())
        .code(2)
        .stderr(predicates::str::contains("no alert in it"));
    on_stdin("{\"alertname\": \"X\", \"instance\": \"n1\"}".into())
        .code(2)
        .stderr(predicates::str::contains("no namespace label"));
    mdiag()
        .args([
            "triage",
            "-A",
            "--alert",
            "fixtures/alerts/labels.yaml",
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
        ])
        .assert()
        .code(2);
}
