//! `mdiag gate` without a cluster: bad flags are usage errors (2), and an
//! apiserver that does not answer is "could not decide" (4), with the
//! report and the JUnit file still written for the CI job to read.

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::Value;

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .env("LANG", "C");
    cmd
}

#[test]
fn flags_that_cannot_work_are_usage_errors() {
    for (args, says) in [
        (
            vec!["gate", "chart-demo", "--snapshot", "x.yaml"],
            "unexpected argument '--snapshot'",
        ),
        (
            vec!["gate", "chart-demo", "--fail-on", "crash-loop,nope"],
            "\"nope\" is not a finding id",
        ),
        (
            vec!["gate", "chart-demo", "--fail-on", "none,crash-loop"],
            "--fail-on none stands alone",
        ),
        (vec!["gate", "pod/chart-demo-1"], "not a Pod"),
        (
            vec!["gate", "chart-demo", "--timeout", "0"],
            "longer than zero",
        ),
        (
            vec!["gate", "chart-demo", "--timeout", "soon"],
            "not a duration",
        ),
        (vec!["gate", "chart-demo", "-A"], "unexpected argument '-A'"),
        (
            vec!["gate", "chart-demo", "--max-restarts", "0"],
            "at least 1",
        ),
    ] {
        mdiag().args(&args).assert().code(2).stderr(contains(says));
    }
}

#[test]
fn an_unreachable_apiserver_is_could_not_decide_with_reports_written() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1 of the loopback.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: lab\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let report = dir.path().join("gate.json");
    let junit = dir.path().join("gate.xml");
    let html = dir.path().join("gate.html");
    let out = mdiag()
        .args([
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--request-timeout",
            "2",
            "gate",
            "chart-demo",
            "--timeout",
            "3s",
            "--report",
            report.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(written["schema"], "mdiag/v1");
    assert_eq!(written["kind"], "Gate");
    assert_eq!(written["outcome"], "could-not-decide");
    assert_eq!(written["target"]["name"], "chart-demo");
    assert_eq!(
        written["target"]["namespace"], "lab",
        "the context's namespace"
    );
    assert!(
        written["gate"]["reason"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1:1"),
        "{}",
        written["gate"]["reason"]
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testcase name=\"api-access\""), "{xml}");
    assert!(xml.contains("type=\"could-not-decide\""), "{xml}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-outcome=\"could-not-decide\""), "{page}");
    assert!(page.contains("COULD NOT DECIDE"), "{page}");
    assert!(page.contains("127.0.0.1:1"), "{page}");
    assert!(page.contains("lab/chart-demo"), "{page}");
}

/// `--report -` writes the report to stdout, as `-` means everywhere, and
/// leaves no file named `-` behind.
#[test]
fn a_report_to_dash_goes_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: lab\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let out = mdiag()
        .current_dir(dir.path())
        .args([
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--request-timeout",
            "2",
            "gate",
            "chart-demo",
            "--timeout",
            "3s",
            "-o",
            "json",
            "--report",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(!dir.path().join("-").exists(), "a file named - was written");
    // Two JSON documents on stdout: the report, then the -o json view.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let documents: Vec<Value> = serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(documents.len(), 2, "{stdout}");
    for d in &documents {
        assert_eq!(d["kind"], "Gate");
        assert_eq!(d["outcome"], "could-not-decide");
    }
}
