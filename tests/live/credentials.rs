//! Credentials from an exec plugin, against the real apiserver: a plugin
//! that hands over the viewer's certificate is used as kubectl would use
//! it; one that hands over a token the apiserver does not know is denied;
//! one that fails, or never answers, is named in one line with exit 4,
//! within `--request-timeout`. tests/suite/credentials.rs covers the same without
//! a cluster.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use serde_json::json;

use super::{HEALTHY, apply, namespace, spec, until_live, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("safety-credentials-from-exec-plugins", plugins)]
}

/// `key: value` of the viewer kubeconfig (its fields are one per line).
fn field(kubeconfig: &str, key: &str) -> Result<String, Failed> {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
        .map(str::to_owned)
        .ok_or_else(|| format!("no {key} in the viewer kubeconfig").into())
}

fn base64_decode(text: &str) -> Result<String, Failed> {
    let out = Command::new("sh")
        .args(["-c", "printf %s \"$1\" | base64 -d", "sh", text])
        .output()
        .map_err(|e| e.to_string())?;
    String::from_utf8(out.stdout).map_err(|e| e.to_string().into())
}

/// A kubeconfig for the cluster whose user runs `command args`.
fn with_plugin(dir: &Path, name: &str, command: &str, args: &[&str]) -> Result<PathBuf, Failed> {
    let viewer =
        std::fs::read_to_string(world().layout.viewer_kubeconfig()).map_err(|e| e.to_string())?;
    let server = field(&viewer, "server")?;
    let ca = field(&viewer, "certificate-authority-data")?;
    let path = dir.join(name);
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: '{server}', certificate-authority-data: {ca}}}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: {command}
      args: {}
      interactiveMode: Never
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
",
        serde_json::to_string(args).unwrap()
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path)
}

/// An ExecCredential answer, written where `cat` can hand it over.
fn credential(dir: &Path, name: &str, status: serde_json::Value) -> Result<PathBuf, Failed> {
    let path = dir.join(name);
    let answer = json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": status,
    });
    std::fs::write(&path, answer.to_string()).map_err(|e| e.to_string())?;
    Ok(path)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn trace(kubeconfig: &Path, ns: &str) -> Result<Run, Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--request-timeout", "3s", "-n", ns, "trace", "chart-demo"])
        .args(["-o", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .map_err(|e| e.to_string())?;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

fn one_line(run: &Run, says: &str) -> Result<(), Failed> {
    let text = run.stderr.trim_end();
    if run.code != 4 || text.lines().count() != 1 || !text.contains(says) {
        return Err(format!(
            "want exit 4 and one line with {says:?}; got {}: {text}",
            run.code
        )
        .into());
    }
    Ok(())
}

fn plugins() -> Result<(), Failed> {
    let ns = namespace("credentials")?;
    apply(&ns, &spec("ready"))?;
    until_live(&ns, HEALTHY)?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = dir.path();

    // The viewer's own certificate, handed over by a plugin: the trace
    // reads as the viewer's does.
    let viewer =
        std::fs::read_to_string(world().layout.viewer_kubeconfig()).map_err(|e| e.to_string())?;
    let cert = credential(
        dir,
        "cert.json",
        json!({
            "clientCertificateData": base64_decode(&field(&viewer, "client-certificate-data")?)?,
            "clientKeyData": base64_decode(&field(&viewer, "client-key-data")?)?,
        }),
    )?;
    let config = with_plugin(dir, "cert.kubeconfig", "cat", &[cert.to_str().unwrap()])?;
    let run = trace(&config, &ns)?;
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("no report through the plugin ({e}): {}", run.stderr))?;
    if run.code != 0 || report["verdict"]["state"] != "serving" {
        return Err(format!(
            "through the plugin: exit {}, {}",
            run.code, report["verdict"]
        )
        .into());
    }

    // A token the apiserver does not know.
    let token = credential(
        dir,
        "token.json",
        json!({"token": "not-a-token-of-this-cluster"}),
    )?;
    let config = with_plugin(dir, "token.kubeconfig", "cat", &[token.to_str().unwrap()])?;
    one_line(&trace(&config, &ns)?, "denied access: Unauthorized")?;

    // A plugin that fails with a reason, and one that never answers.
    let script = dir.join("login.sh");
    std::fs::write(
        &script,
        "echo 'error: session expired, run sso login' >&2\nexit 1\n",
    )
    .map_err(|e| e.to_string())?;
    let config = with_plugin(dir, "fails.kubeconfig", "sh", &[script.to_str().unwrap()])?;
    one_line(
        &trace(&config, &ns)?,
        "failed (exit status: 1): error: session expired, run sso login",
    )?;
    let config = with_plugin(dir, "hangs.kubeconfig", "sleep", &["600"])?;
    let t0 = Instant::now();
    one_line(
        &trace(&config, &ns)?,
        "credential plugin `sleep 600` gave no answer within 3 s",
    )?;
    if t0.elapsed() > Duration::from_secs(60) {
        return Err(format!("the hanging plugin held mdiag {:?}", t0.elapsed()).into());
    }
    let _ = world().kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    Ok(())
}
