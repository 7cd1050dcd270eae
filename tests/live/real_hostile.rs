//! Hostile text from a real kubelet stays inert (docs/security.md, "Inert
//! output"): on the real node, one Deployment's image name carries an OSC 52
//! clipboard write and a screen clear (the apiserver refuses only
//! surrounding whitespace, so the kubelet reports it back in its own
//! message), another's exec readiness probe prints escape sequences, which
//! the kubelet quotes in its Unhealthy events. `trace` and `gate` on both:
//! no raw control character in any byte they print, and the escapes shown.

use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use mdiag_harness::helpers::REAL_NODE_LABEL;
use serde_json::json;

use super::{mdiag, namespace, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "safety-real-node-hostile-image-and-probe-output-stay-inert",
        hostile,
    )]
}

/// The image: a real one, with a clipboard write and a screen clear after
/// its tag.
fn hostile_image() -> String {
    format!(
        "{}\u{1b}]52;c;b3duZWQ=\u{7}\u{1b}[2J",
        world().images.model_server("v1.4.0")
    )
}

/// What the probe prints before it fails: a title change, a clipboard
/// write, a CR overwrite.
const PROBE: &str = "printf '\\033]0;owned\\007\\033]52;c;b3duZWQ=\\007ok\\rFAIL\\n'; exit 1";

fn deployment(ns: &str, name: &str, image: &str, probe: Option<&str>) -> serde_json::Value {
    let (k, v) = REAL_NODE_LABEL;
    let mut container = json!({"name": "server", "image": image,
                               "ports": [{"name": "http", "containerPort": 8080}]});
    if let Some(script) = probe {
        container["readinessProbe"] =
            json!({"exec": {"command": ["sh", "-c", script]}, "periodSeconds": 1});
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": name, "namespace": ns},
     "spec": {
         "replicas": 1,
         "progressDeadlineSeconds": 600,
         "selector": {"matchLabels": {"app": name}},
         "template": {
             "metadata": {"labels": {"app": name}},
             "spec": {
                 "nodeSelector": {k: v},
                 "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}],
                 "terminationGracePeriodSeconds": 1,
                 "containers": [container]}}}})
}

/// Lines of `bytes` holding a character that does not show as itself.
fn raw(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| l.chars().any(mdiag_core::inert::invisible))
        .map(|l| format!("{l:?}"))
        .collect()
}

/// Runs mdiag as the viewer; its exit code and both streams.
fn run(ns: &str, args: &[&str]) -> Result<(i32, Vec<u8>, Vec<u8>), Failed> {
    let viewer = world().layout.viewer_kubeconfig();
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(["--kubeconfig", viewer.to_str().unwrap(), "-n", ns])
        .args(args)
        .env_remove("KUBECONFIG")
        .env("LANG", "C")
        .output()
        .map_err(|e| e.to_string())?;
    Ok((out.status.code().unwrap_or(-1), out.stdout, out.stderr))
}

fn hostile() -> Result<(), Failed> {
    let w = world();
    let ns = namespace("real-hostile")?;
    let image = hostile_image();
    for (name, img, probe) in [
        ("odd-image", image.as_str(), None),
        ("loud-probe", w.images.model_server("v1.4.0"), Some(PROBE)),
    ] {
        let file = w.layout.dir().join(format!("{ns}-{name}.json"));
        std::fs::write(&file, deployment(&ns, name, img, probe).to_string())
            .map_err(|e| e.to_string())?;
        w.kubectl(&["apply", "-f", file.to_str().unwrap()])?;
    }

    // Until the kubelet has said something about each: the image refused,
    // the probe failed.
    let t0 = Instant::now();
    for (name, expect) in [("odd-image", "image"), ("loud-probe", "readiness")] {
        loop {
            let (_, report) = mdiag(&[
                "--kubeconfig",
                w.layout.viewer_kubeconfig().to_str().unwrap(),
                "-n",
                &ns,
                "trace",
                &format!("deploy/{name}"),
                "-o",
                "json",
            ])?;
            let ids: Vec<String> = report["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["id"].as_str().map(str::to_string))
                .collect();
            if ids.iter().any(|id| id.contains(expect)) {
                break;
            }
            if t0.elapsed() > Duration::from_secs(180) {
                return Err(format!("{name}: no {expect} finding yet: {ids:?}").into());
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    }

    let mut wrong = Vec::new();
    let mut shown = String::new();
    for name in ["odd-image", "loud-probe"] {
        let target = format!("deploy/{name}");
        for args in [
            vec!["trace", target.as_str(), "--color", "never", "-v"],
            vec!["trace", target.as_str(), "-o", "json"],
            vec!["trace", target.as_str(), "-o", "yaml"],
            vec!["trace", target.as_str(), "-o", "html"],
            vec![
                "gate",
                target.as_str(),
                "--timeout",
                "20s",
                "--color",
                "never",
            ],
            vec!["gate", target.as_str(), "--timeout", "20s", "-o", "json"],
        ] {
            let (code, stdout, stderr) = run(&ns, &args)?;
            if stdout.is_empty() {
                wrong.push(format!("{args:?} exited {code} printing nothing"));
            }
            for line in raw(&stdout).into_iter().chain(raw(&stderr)) {
                wrong.push(format!("{args:?}: {line}"));
            }
            if args.contains(&"never") {
                shown.push_str(&String::from_utf8_lossy(&stdout));
            }
        }
    }
    if !wrong.is_empty() {
        return Err(wrong.join("\n").into());
    }
    // The escapes are shown where the characters were: the reader sees
    // that something was there.
    if !shown.contains("\\x1b]52;c;b3duZWQ=\\x07") {
        return Err(format!("the clipboard write is not shown escaped:\n{shown}").into());
    }
    let _ = w.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    Ok(())
}
