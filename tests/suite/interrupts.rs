//! Interrupts lose nothing: SIGTERM or Ctrl-C (SIGINT) during a gate
//! still writes its report, JUnit and HTML with outcome `interrupted` and exits
//! 130; during a snapshot it writes no file, not even half of one, and
//! says so; a reader that closes the pipe early gets silence, not an error.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn spawn_mdiag(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .env("LANG", "C")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `signal` once the child has had time to start waiting on the
/// API, then waits for it to exit (at most 30 s).
/// Returns the exit code, stdout and stderr.
fn signal_and_wait(child: &mut Child, signal: &str) -> (i32, String, String) {
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args([format!("-{signal}").as_str(), &pid])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("mdiag did not stop within 30 s of {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stdout, stderr)
}

/// A kubeconfig for an apiserver on `port` of the loopback.
fn kubeconfig(dir: &Path, port: u16) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: lab\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// A server that accepts connections and never answers: every request
/// hangs until its timeout.
fn silent_server() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

#[test]
fn an_interrupted_gate_writes_its_report_and_junit() {
    for signal in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        // An apiserver that never answers: the gate waits on its first lists.
        let (_listener, port) = silent_server();
        let config = kubeconfig(dir.path(), port);
        let report = dir.path().join("gate.json");
        let junit = dir.path().join("gate.xml");
        let html = dir.path().join("gate.html");
        let mut child = spawn_mdiag(&[
            "--kubeconfig",
            &config,
            "--request-timeout",
            "60",
            "gate",
            "chart-demo",
            "--timeout",
            "5m",
            "--report",
            report.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ]);
        let (code, stdout, stderr) = signal_and_wait(&mut child, signal);
        assert_eq!(code, 130, "SIG{signal}: {stderr}");
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(written["outcome"], "interrupted", "SIG{signal}");
        let reason = written["gate"]["reason"].as_str().unwrap_or_default();
        assert!(
            reason == format!("SIG{signal} came before a verdict; nothing was seen yet"),
            "{reason}"
        );
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(xml.contains("<testcase name=\"interrupted\""), "{xml}");
        assert!(xml.contains("type=\"interrupted\""), "{xml}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("data-outcome=\"interrupted\""), "{page}");
        assert!(page.contains("INTERRUPTED"), "{page}");
        assert!(
            page.contains(&format!("SIG{signal} came before a verdict")),
            "{page}"
        );
        assert!(stdout.contains("INTERRUPTED"), "{stdout}");
    }
}

/// `mdiag snapshot chart-demo -n lab --output-file FILE`, waiting on the API.
fn snapshot_into(config: &str, file: &Path) -> Child {
    spawn_mdiag(&[
        "--kubeconfig",
        config,
        "--request-timeout",
        "60",
        "-n",
        "lab",
        "snapshot",
        "chart-demo",
        "--output-file",
        file.to_str().unwrap(),
    ])
}

#[test]
fn an_interrupted_snapshot_writes_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (_listener, port) = silent_server();
    let config = kubeconfig(dir.path(), port);

    // No file before: none after.
    let file = dir.path().join("evidence.yaml.gz");
    let mut child = snapshot_into(&config, &file);
    let (code, _, stderr) = signal_and_wait(&mut child, "INT");
    assert_eq!(code, 130, "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "mdiag: interrupted by SIGINT: no snapshot was written; {} is as it was",
            file.display()
        )
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["kubeconfig"], "nothing but the kubeconfig is left");

    // A file that was there stays as it was.
    std::fs::write(&file, b"an older capture").unwrap();
    let mut child = snapshot_into(&config, &file);
    let (code, _, _) = signal_and_wait(&mut child, "TERM");
    assert_eq!(code, 130);
    assert_eq!(std::fs::read(&file).unwrap(), b"an older capture");
}

#[test]
fn a_closed_stdout_pipe_stays_quiet() {
    let root = env!("CARGO_MANIFEST_DIR");
    for args in [
        vec![
            "trace",
            "chart-demo",
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
        ],
        vec![
            "triage",
            "-A",
            "--snapshot",
            "fixtures/demo/crash-loop.yaml",
            "-o",
            "json",
        ],
        vec!["explain"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mdiag"))
            .args(&args)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before mdiag writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
        assert!(
            out.status.code().is_some(),
            "{args:?}: killed by a signal: {:?}",
            out.status
        );
    }
}
