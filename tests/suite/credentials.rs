//! Credentials that fail, as a user meets them: a kubeconfig that is
//! missing or broken, a context it lacks, a file it names that is gone, an
//! exec credential plugin that fails, is missing or never answers, a token
//! the server refuses, and a server whose certificate does not match. Each
//! is one line naming the cause, exit 4 (2 for a bad kubeconfig file), and
//! never a hang past `--request-timeout`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Run {
    code: i32,
    stderr: String,
}

/// Runs `mdiag trace chart-demo -n ns` with the kubeconfig, killing it
/// (and failing the test) if it is still running after `deadline`: a hang
/// is the bug these tests exist for.
fn trace_with(kubeconfig: &Path, extra: &[&str], deadline: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(extra)
        .args(["trace", "chart-demo", "-n", "ns"])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t0.elapsed() > deadline {
            child.kill().unwrap();
            panic!("mdiag still running after {deadline:?} with {kubeconfig:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stderr,
    }
}

fn trace(kubeconfig: &Path) -> Run {
    trace_with(
        kubeconfig,
        &["--request-timeout", "2s"],
        Duration::from_secs(30),
    )
}

/// The error is one line, names `cause`, and shows none of kube's
/// internals.
fn assert_one_line(run: &Run, code: i32, cause: &str) {
    assert_eq!(run.code, code, "stderr: {}", run.stderr);
    let text = run.stderr.trim_end();
    assert_eq!(text.lines().count(), 1, "more than one line: {text}");
    assert!(text.starts_with("mdiag: "), "{text}");
    assert!(text.contains(cause), "want {cause:?} in: {text}");
    for noise in [
        "Output {",
        "ExitStatus(",
        "KUBERNETES_EXEC_INFO",
        "os error",
        "panicked",
    ] {
        assert!(!text.contains(noise), "{noise:?} in: {text}");
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A kubeconfig for `server` whose user gets its token from `command`.
fn with_plugin(dir: &Path, command: &str, args: &[&str]) -> PathBuf {
    let args = serde_json::to_string(args).unwrap();
    write(
        dir,
        "plugin.kubeconfig",
        &format!(
            "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: {command}
      args: {args}
      interactiveMode: Never
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
"
        ),
    )
}

#[test]
fn a_failing_plugin_is_named_with_what_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "login.sh",
        "echo 'error: the refresh token has expired; run login' >&2\nexit 1\n",
    );
    let config = with_plugin(dir.path(), "sh", &[script.to_str().unwrap()]);
    let run = trace(&config);
    assert_one_line(&run, 4, "credential plugin `sh ");
    assert!(
        run.stderr
            .contains("failed (exit status: 1): error: the refresh token has expired; run login"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_silent_failing_plugin_still_says_which_and_how() {
    let dir = tempfile::tempdir().unwrap();
    let config = with_plugin(dir.path(), "/bin/false", &[]);
    let run = trace(&config);
    assert_one_line(
        &run,
        4,
        "credential plugin `/bin/false` failed (exit status: 1); run it by hand",
    );
}

#[test]
fn a_missing_plugin_says_it_cannot_be_started() {
    let dir = tempfile::tempdir().unwrap();
    let config = with_plugin(dir.path(), "/nonexistent/kube-login", &["get-token"]);
    let run = trace(&config);
    assert_one_line(
        &run,
        4,
        "cannot start the kubeconfig's credential plugin `/nonexistent/kube-login get-token`",
    );
}

#[test]
fn a_plugin_that_never_answers_is_given_up_after_the_request_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let config = with_plugin(dir.path(), "sleep", &["600"]);
    // Well past 2 s, well short of the plugin's 600 s: mdiag must not
    // wait for the plugin, and must not wait for it at exit either.
    let run = trace_with(
        &config,
        &["--request-timeout", "2s"],
        Duration::from_secs(20),
    );
    assert_one_line(
        &run,
        4,
        "credential plugin `sleep 600` gave no answer within 2 s (--request-timeout)",
    );
}

#[test]
fn a_missing_or_broken_kubeconfig_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.kubeconfig");
    let run = trace(&missing);
    assert_one_line(&run, 2, "cannot read ");
    assert!(
        run.stderr
            .contains("nope.kubeconfig: No such file or directory")
    );

    let broken = write(dir.path(), "broken.kubeconfig", "clusters: [\n");
    let run = trace(&broken);
    assert_one_line(&run, 2, "broken.kubeconfig is not a valid kubeconfig: ");
}

#[test]
fn a_context_the_kubeconfig_lacks_lists_the_ones_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let config = with_plugin(dir.path(), "/bin/true", &[]);
    let run = trace_with(
        &config,
        &["--context", "prod", "--request-timeout", "2s"],
        Duration::from_secs(30),
    );
    assert_one_line(
        &run,
        4,
        "has no context named \"prod\" (it has c); choose one with --context",
    );
}

#[test]
fn a_certificate_file_the_kubeconfig_names_but_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "ca.kubeconfig",
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: 'https://127.0.0.1:9', certificate-authority: /nonexistent/ca.crt}
users:
- name: u
  user: {token: abc}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
",
    );
    let run = trace(&config);
    assert_one_line(
        &run,
        4,
        "the cluster's certificate authority file /nonexistent/ca.crt cannot be read: No such file or directory",
    );
}

/// A TLS server on loopback that answers every request 401 with `body`.
/// Its certificate is for `name`, issued by a CA of its own; returns its
/// port and that CA's PEM.
fn tls_server(name: &str, body: &'static str) -> (u16, String) {
    let response = format!(
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    // A name of its own, so that another test CA is another issuer.
    static CAS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CAS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("mdiag test CA {n}"));
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let cert = rcgen::CertificateParams::new(vec![name.to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let config = config.clone();
            let response = response.clone();
            std::thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls.write_all(response.as_bytes());
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    (port, ca.pem())
}

fn tls_kubeconfig(dir: &Path, port: u16, ca_pem: &str) -> PathBuf {
    let ca = write(dir, "ca.crt", ca_pem);
    write(
        dir,
        "tls.kubeconfig",
        &format!(
            "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'https://127.0.0.1:{port}', certificate-authority: {}}}
users:
- name: u
  user: {{token: expired-token}}
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
",
            ca.display()
        ),
    )
}

/// What an apiserver answers a token it does not accept.
const UNAUTHORIZED: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;

#[test]
fn a_token_the_server_refuses_says_access_was_denied() {
    let dir = tempfile::tempdir().unwrap();
    let (port, ca) = tls_server("127.0.0.1", UNAUTHORIZED);
    let run = trace(&tls_kubeconfig(dir.path(), port, &ca));
    assert_one_line(
        &run,
        4,
        "denied access: Unauthorized; check your credentials",
    );
}

#[test]
fn a_server_certificate_that_does_not_match_names_the_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    // Issued by the CA the kubeconfig trusts, but for another name.
    let (port, ca) = tls_server("apiserver.example", UNAUTHORIZED);
    let run = trace(&tls_kubeconfig(dir.path(), port, &ca));
    assert_one_line(
        &run,
        4,
        "the server's certificate is not issued for this address; check the kubeconfig's server \
         (certificate not valid for name \"127.0.0.1\"",
    );

    // Issued by a CA the kubeconfig does not trust.
    let (port, _) = tls_server("127.0.0.1", UNAUTHORIZED);
    let (_, other_ca) = tls_server("127.0.0.1", UNAUTHORIZED);
    let run = trace(&tls_kubeconfig(dir.path(), port, &other_ca));
    assert_one_line(&run, 4, "cannot reach the cluster at https://127.0.0.1:");
    assert!(
        run.stderr.contains("UnknownIssuer") || run.stderr.contains("unknown issuer"),
        "{}",
        run.stderr
    );
}

#[test]
fn request_timeouts_read_as_durations() {
    let dir = tempfile::tempdir().unwrap();
    let config = with_plugin(dir.path(), "/bin/false", &[]);
    for good in ["5", "5s", "1m"] {
        let run = trace_with(
            &config,
            &["--request-timeout", good],
            Duration::from_secs(30),
        );
        assert_eq!(run.code, 4, "--request-timeout {good}: {}", run.stderr);
    }
    let run = trace_with(
        &config,
        &["--request-timeout", "soon"],
        Duration::from_secs(30),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("not a duration"), "{}", run.stderr);
}
