//! Ring 2: what `mdiag snapshot` keeps out of the file it writes. The
//! credential shapes of fixtures/redaction/corpus.yaml (all fake) are put in
//! a Pod's logs, annotations, env values and args; none may reach the
//! written bytes, and the ordinary lines around them must stay as written.

use crate::common;
use common::mdiag;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

#[derive(serde::Deserialize)]
struct Corpus {
    secrets: Vec<Case>,
    ordinary: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Case {
    rule: String,
    text: String,
    secret: String,
    want: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> Corpus {
    let text = std::fs::read_to_string(root().join("fixtures/redaction/corpus.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// An mdiag snapshot file whose one Pod carries every corpus line (secret
/// and ordinary) as an annotation, an env value, an arg and a log line.
fn corpus_snapshot(corpus: &Corpus) -> Value {
    let lines: Vec<&str> = corpus
        .secrets
        .iter()
        .map(|c| c.text.as_str())
        .chain(corpus.ordinary.iter().map(String::as_str))
        .collect();
    let annotations: serde_json::Map<String, Value> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (format!("example.com/note-{i}"), json!(l)))
        .collect();
    let env: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| json!({"name": format!("NOTE_{i}"), "value": l}))
        .collect();
    let mut log = lines.join("\n");
    log.push('\n');
    json!({
        "format": "mdiag.dev/snapshot",
        "version": 2,
        "captured_at": "2026-12-01T09:00:00Z",
        "namespace": "lab",
        "objects": [{
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "model-0", "namespace": "lab", "uid": "u-1",
                "creationTimestamp": "2026-12-01T08:50:00Z",
                "annotations": annotations},
            "spec": {"nodeName": "node-1", "containers": [{
                "name": "server", "image": "registry.example.com/ml/vllm-server:0.6.3",
                "args": lines, "env": env}]},
            "status": {"phase": "Running"}
        }],
        "logs": [{"namespace": "lab", "pod": "model-0", "container": "server",
            "previous": false, "truncated": false, "text": log}]
    })
}

fn snapshot_to(input: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let output = mdiag()
        .args(["snapshot", "-n", "lab", "--snapshot"])
        .arg(input)
        .arg("--output-file")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn read_back(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).unwrap()
    } else {
        serde_saphyr::from_str(&text).unwrap()
    };
    (text, doc)
}

fn write_input(dir: &Path, doc: &Value) -> PathBuf {
    let input = dir.join("input.json");
    std::fs::write(&input, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    input
}

#[test]
fn no_shape_of_the_corpus_survives_into_the_written_bytes() {
    let corpus = corpus();
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &corpus_snapshot(&corpus));
    for name in ["out.yaml", "out.json"] {
        let out = dir.path().join(name);
        snapshot_to(&input, &out, &[]);
        let (bytes, doc) = read_back(&out);
        for case in &corpus.secrets {
            assert!(
                !bytes.contains(&case.secret),
                "{name}: {} ({}) survived",
                case.secret,
                case.rule
            );
        }
        let pod = &doc["objects"][0];
        let container = &pod["spec"]["containers"][0];
        let n = corpus.secrets.len();
        // Each place holds the line as the corpus says it is kept.
        for (i, want) in corpus
            .secrets
            .iter()
            .map(|c| &c.want)
            .chain(corpus.ordinary.iter())
            .enumerate()
        {
            let annotation = &pod["metadata"]["annotations"][format!("example.com/note-{i}")];
            assert_eq!(annotation, want.as_str(), "{name}: annotation {i}");
            assert_eq!(
                container["env"][i]["value"],
                want.as_str(),
                "{name}: env {i}"
            );
            assert_eq!(container["args"][i], want.as_str(), "{name}: arg {i}");
        }
        let mut want_log: Vec<&str> = corpus.secrets.iter().map(|c| c.want.as_str()).collect();
        want_log.extend(corpus.ordinary.iter().map(String::as_str));
        assert_eq!(
            doc["logs"][0]["text"].as_str().unwrap(),
            format!("{}\n", want_log.join("\n")),
            "{name}: the log"
        );
        assert_eq!(
            container["image"],
            "registry.example.com/ml/vllm-server:0.6.3"
        );

        // The file lists where, by which rule and how often; never what.
        let redactions = doc["redactions"].as_array().unwrap();
        for (i, case) in corpus.secrets.iter().enumerate() {
            for path in [
                format!("pod/lab/model-0: metadata.annotations[example.com/note-{i}]"),
                format!("pod/lab/model-0: spec.containers[0].env[name=NOTE_{i}].value"),
                format!("pod/lab/model-0: spec.containers[0].args[{i}]"),
            ] {
                assert!(
                    redactions
                        .iter()
                        .any(|r| r["path"] == path.as_str() && r["rule"] == case.rule.as_str()),
                    "{name}: no {} at {path}",
                    case.rule
                );
            }
        }
        for (i, _) in corpus.ordinary.iter().enumerate() {
            let i = i + n;
            assert!(
                !redactions.iter().any(|r| r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(&format!("[example.com/note-{i}]")))),
                "{name}: ordinary line {i} listed as redacted"
            );
        }
        let log_count: u64 = redactions
            .iter()
            .filter(|r| r["path"] == "pods/log/lab/model-0/server")
            .map(|r| r["count"].as_u64().unwrap())
            .sum();
        assert!(log_count >= n as u64, "{name}: {log_count} log redactions");
        for r in redactions {
            let path = r["path"].as_str().unwrap();
            assert!(
                corpus.secrets.iter().all(|c| !path.contains(&c.secret)),
                "{path}"
            );
        }
    }
}

#[test]
fn no_default_redaction_keeps_the_shapes_and_still_drops_what_names_a_credential() {
    let corpus = corpus();
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &corpus_snapshot(&corpus));
    let out = dir.path().join("out.yaml");
    snapshot_to(&input, &out, &["--no-default-redaction"]);
    let (_, doc) = read_back(&out);
    let log = doc["logs"][0]["text"].as_str().unwrap();
    for case in &corpus.secrets {
        assert!(log.contains(&case.text), "{} was redacted", case.rule);
    }
    assert_eq!(doc["redactions"], json!([]));

    // The fixture's DB_PASSWORD is replaced by its name whatever the flag.
    let fixture = root().join("fixtures/redaction/secrets-snapshot.yaml");
    snapshot_to(&fixture, &out, &["--no-default-redaction"]);
    let (bytes, _) = read_back(&out);
    assert!(!bytes.contains("hunter2-in-env"));
    assert!(bytes.contains("Authorization: Bearer 7Fq2mZp9WkX4rT8vLs3nYd6Hc1Bg0Ja5"));
    assert!(bytes.contains("password=Hunter2-fake-pass"));
}

#[test]
fn the_fixture_is_written_with_its_exact_list_of_redactions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("evidence.yaml");
    let fixture = root().join("fixtures/redaction/secrets-snapshot.yaml");
    let output = snapshot_to(&fixture, &out, &["--redact", "model_app"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("redacted 10 values in 7 places"),
        "{stderr}"
    );
    let (bytes, doc) = read_back(&out);
    for secret in [
        "hunter2-in-env",
        "7Fq2mZp9WkX4rT8vLs3nYd6Hc1Bg0Ja5",
        "hf_FakeHuggingFaceTokenForMdiagTests01",
        "Xk9-fake-Pw-2026",
        "ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3Rz",
        "Hunter2-fake-pass",
        "AKIAZQ4MDIAGFAKE7X2P",
        "model_app",
    ] {
        assert!(!bytes.contains(secret), "{secret} in {bytes}");
    }
    for ordinary in [
        "team-models (password policy updated 2026-11)",
        "--max-tokens=512",
        "/models/demo",
        "https://api.models.example.com/v1",
        "INFO token bucket refilled: 40 of 100 tokens",
        "INFO max_tokens=512 time_to_first_token=0.12s",
        "registry.example.com/ml/vllm-server:0.6.3",
        "Authorization: Bearer <redacted:bearer>",
        "user=model password=<redacted:credential>",
        "--hf-token=<redacted:huggingface-token>",
        "postgres://<redacted:redact-1>:<redacted:url-password>@pg.lab.svc:5432/registry",
    ] {
        assert!(bytes.contains(ordinary), "{ordinary} missing from {bytes}");
    }
    assert_eq!(doc["version"], 2);
    let pod = "pod/lab/model-0: ";
    let mut want: Vec<(String, &str, u64)> = vec![
        // Carried over from the version 1 file it was read from.
        (
            format!("{pod}spec.containers[0].env[name=HF_TOKEN].value"),
            "env-name",
            1,
        ),
        (
            format!("{pod}metadata.annotations[example.com/upstream]"),
            "bearer",
            1,
        ),
        (
            format!("{pod}metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]"),
            "last-applied",
            1,
        ),
        (
            format!("{pod}spec.containers[0].args[1]"),
            "huggingface-token",
            1,
        ),
        (
            format!("{pod}spec.containers[0].env[name=DB_PASSWORD].value"),
            "env-name",
            1,
        ),
        (
            format!("{pod}spec.containers[0].env[name=DATABASE_URL].value"),
            "url-password",
            1,
        ),
        (
            format!("{pod}spec.containers[0].env[name=DATABASE_URL].value"),
            "redact-1",
            1,
        ),
        ("pods/log/lab/model-0/server".to_string(), "bearer", 1),
        ("pods/log/lab/model-0/server".to_string(), "credential", 1),
        (
            "pods/log/lab/model-0/server".to_string(),
            "aws-access-key-id",
            1,
        ),
    ];
    let mut got: Vec<(String, &str, u64)> = doc["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["rule"].as_str().unwrap(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);

    // Read back, the redactions are the same list.
    let again = dir.path().join("again.json");
    snapshot_to(&out, &again, &[]);
    let (_, doc2) = read_back(&again);
    assert_eq!(doc2["redactions"], doc["redactions"]);
}

/// The lines the test images' model server logs with `--log-secrets`
/// (harness/images/model-server.sh), which a live trial captures from a
/// real container: each must lose its fake value.
#[test]
fn the_model_server_stand_ins_secret_lines_are_all_redacted() {
    let script = std::fs::read_to_string(root().join("harness/images/model-server.sh")).unwrap();
    let block = script
        .split("if [ \"$log_secrets\" = 1 ]; then")
        .nth(1)
        .and_then(|rest| rest.split("\nfi").next())
        .expect("the --log-secrets block of model-server.sh");
    let lines: Vec<&str> = block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("log DEBUG \""))
        .filter_map(|l| l.strip_suffix('"'))
        .collect();
    assert_eq!(lines.len(), 5, "{block}");
    // The fake values, as the script writes them.
    let values = [
        "AKIAMDIAGFAKE0000001",
        "mdiagFakeSecretAccessKey0000000000000000",
        "hf_mdiagFakeToken0000000000000000000000",
        "eyJzdWIiOiJtZGlhZy1mYWtlIn0",
        "mdiag-fake-password",
    ];
    let mut text = lines.join("\n");
    for v in values {
        assert!(text.contains(v), "{v} is no longer in model-server.sh");
    }
    let found = mdiag_source::redact::redact_shapes(&mut text);
    for v in values {
        assert!(!text.contains(v), "{v} survived: {text}");
    }
    assert_eq!(text.matches("<redacted:").count(), 5, "{text}");
    assert!(text.contains("env AWS_SECRET_ACCESS_KEY=<redacted:credential>"));
    assert!(text.contains("Authorization: Bearer <redacted:bearer>"));
    assert!(text.contains("postgres://modeldock:<redacted:url-password>@db.modeldock.svc"));
    assert_eq!(found.iter().map(|f| f.1).sum::<u32>(), 5, "{found:?}");
}
