//! Ring 2: untrusted text stays inert, credentials included. Every
//! command that prints or writes evidence is run on
//! fixtures/hostile/snapshot.yaml, whose every outside field holds each
//! credential shape of fixtures/hostile/shapes.yaml (all made up): no
//! secret may reach the bytes of any output, the markers must be there,
//! and with `--no-default-redaction` the same output must show the
//! secrets, so each check is known to look where they would be.

use crate::common;
use common::mdiag;

use std::collections::BTreeSet;
use std::path::Path;

use clap::Parser as _;
use serde_json::Value;

const FIXTURE: &str = "fixtures/hostile/snapshot.yaml";
const NS: &str = "hostile-lab";
const TARGET: &str = "vault-chat";

#[derive(serde::Deserialize)]
struct Shapes {
    shapes: Vec<Shape>,
    placed: Vec<Shape>,
}

#[derive(serde::Deserialize, Clone)]
struct Shape {
    rule: String,
    text: String,
    secret: String,
}

/// Standard base64, as a ConfigMap's binaryData holds it.
fn unbase64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for b in text.bytes().filter(|b| *b != b'=') {
        let v = ALPHABET.iter().position(|a| *a == b).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn shapes() -> Shapes {
    let text = std::fs::read_to_string(root().join("fixtures/hostile/shapes.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// Every secret of the fixture: each shape's, and each placed one's.
fn all_secrets() -> Vec<Shape> {
    let s = shapes();
    s.shapes.into_iter().chain(s.placed).collect()
}

fn fixture() -> Value {
    let text = std::fs::read_to_string(root().join(FIXTURE)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// HTML's entities undone, so that a secret or a marker an HTML page
/// escaped is seen as the other views print it.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// The secrets `text` holds.
fn leaked<'a>(text: &str, secrets: &'a [Shape]) -> Vec<&'a str> {
    secrets
        .iter()
        .filter(|s| text.contains(&s.secret))
        .map(|s| s.secret.as_str())
        .collect()
}

/// The rule names of the markers in `text`.
fn markers(text: &str) -> BTreeSet<String> {
    text.split("<redacted:")
        .skip(1)
        .filter_map(|rest| rest.split_once('>').map(|(rule, _)| rule.to_string()))
        .collect()
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = mdiag().args(args).output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `args` with default redaction and with `--no-default-redaction`;
/// asserts the first shows no secret and the second shows at least
/// `must_show` (every shape's, for views that quote whole messages).
/// Returns both outputs (stdout then stderr, joined).
fn both_ways(args: &[&str], must_show: &[&str]) -> (String, String) {
    let secrets = all_secrets();
    let redacted = run(args);
    let mut plain_args = args.to_vec();
    plain_args.push("--no-default-redaction");
    let plain = run(&plain_args);
    assert_eq!(redacted.code, plain.code, "{args:?}: {}", redacted.stderr);
    let r = unescape(&format!("{}{}", redacted.stdout, redacted.stderr));
    let p = unescape(&format!("{}{}", plain.stdout, plain.stderr));
    assert!(
        leaked(&r, &secrets).is_empty(),
        "{args:?} printed {:?}",
        leaked(&r, &secrets)
    );
    let shown = leaked(&p, &secrets);
    for secret in must_show {
        assert!(
            shown.contains(secret),
            "{args:?} --no-default-redaction does not show {secret}: the check would not see it"
        );
    }
    (r, p)
}

fn shape_secrets() -> Vec<String> {
    shapes().shapes.into_iter().map(|s| s.secret).collect()
}

fn shape_rules() -> BTreeSet<String> {
    shapes().shapes.into_iter().map(|s| s.rule).collect()
}

/// The fixture is what its header says: each shape in each field.
#[test]
fn the_fixture_holds_every_shape_in_every_field() {
    let doc = fixture();
    let objects = doc["objects"].as_array().unwrap();
    let of = |kind: &str| -> Vec<&Value> {
        objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .collect::<Vec<_>>()
    };
    let pod = of("Pod")[0];
    let container = &pod["spec"]["containers"][0];
    let status = &pod["status"]["containerStatuses"][0];
    let msvc = of("ModelService")[0];
    let events = of("Event");
    let config = of("ConfigMap")[0];
    let binary = unbase64(config["binaryData"]["blob.bin"].as_str().unwrap());
    let binary = String::from_utf8(binary).unwrap();
    let log = doc["logs"][0]["text"].as_str().unwrap();
    let strings = |v: &Value| -> Vec<String> {
        match v {
            Value::Array(a) => a.iter().map(|x| x.to_string()).collect(),
            Value::Object(m) => m.values().map(|x| x.to_string()).collect(),
            x => vec![x.to_string()],
        }
    };
    let s = shapes();
    assert!(s.shapes.len() >= 28, "{}", s.shapes.len());
    for (i, shape) in s.shapes.iter().enumerate() {
        let text = Value::String(shape.text.clone()).to_string();
        let fields: Vec<(&str, bool)> = vec![
            (
                "pod annotation",
                pod["metadata"]["annotations"][format!("hostile.example/note-{i}")] == *shape.text,
            ),
            ("env", container["env"][i + 1]["value"] == *shape.text),
            ("args", strings(&container["args"]).contains(&text)),
            (
                "probe header",
                container["readinessProbe"]["httpGet"]["httpHeaders"][i + 1]["value"]
                    == *shape.text,
            ),
            (
                "termination message",
                status["lastState"]["terminated"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(&shape.text),
            ),
            (
                "waiting message",
                status["state"]["waiting"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(&shape.text),
            ),
            (
                "event message",
                events.iter().any(|e| {
                    e["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(&shape.text))
                }),
            ),
            (
                "event note",
                events
                    .iter()
                    .any(|e| e["note"].as_str().is_some_and(|m| m.contains(&shape.text))),
            ),
            (
                "modelservice spec",
                msvc["spec"]["notes"][format!("note-{i}")] == *shape.text,
            ),
            (
                "modelservice annotation",
                msvc["metadata"]["annotations"][format!("hostile.example/note-{i}")] == *shape.text,
            ),
            (
                "configmap data",
                config["data"]["server.conf"]
                    .as_str()
                    .unwrap()
                    .contains(&shape.text),
            ),
            ("configmap binaryData", binary.contains(&shape.text)),
            ("log", log.contains(&shape.secret)),
        ];
        for (field, holds) in fields {
            assert!(
                holds,
                "{} ({}) is not in the {field}",
                shape.secret, shape.rule
            );
        }
    }
    let text = std::fs::read_to_string(root().join(FIXTURE)).unwrap();
    for placed in &s.placed {
        assert!(text.contains(&placed.secret), "{}", placed.secret);
    }
    // The last lines of the log, the ones the views quote, hold a key block
    // whose BEGIN line is not among the last five until it is redacted.
    let last5: Vec<&str> = log.lines().rev().take(5).collect();
    assert!(!last5.iter().any(|l| l.contains("BEGIN PRIVATE KEY")));
    assert!(last5.iter().any(|l| l.contains("MIIEhostileFAKEkeyTAIL")));
}

#[test]
fn every_trace_view_quotes_no_secret_and_marks_each_shape() {
    let base = [
        "trace",
        TARGET,
        "-n",
        NS,
        "--snapshot",
        FIXTURE,
        "--color",
        "never",
        "--width",
        "400",
    ];
    let every_shape = shape_secrets();
    let every: Vec<&str> = every_shape.iter().map(String::as_str).collect();
    for view in [
        &["-v"][..],
        &["-o", "json"],
        &["-o", "yaml"],
        &["-o", "html"],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(view);
        let mut must: Vec<&str> = every.clone();
        // The tail's key block, and the gap's reason.
        must.push("MIIEhostileFAKEkeyTAILforMDIAGtests9876543210");
        must.push("HostileGapPw14");
        let (out, _) = both_ways(&args, &must);
        let found = markers(&out);
        for rule in shape_rules() {
            assert!(
                found.contains(&rule),
                "{view:?}: no <redacted:{rule}> in the output"
            );
        }
        // The key block of the log's tail is redacted whole, as one line.
        assert!(
            out.contains(
                "-----BEGIN PRIVATE KEY-----<redacted:private-key>-----END PRIVATE KEY-----"
            ),
            "{view:?}"
        );
        // What names each value stays beside it.
        for kept in [
            "password=<redacted:credential>",
            "X-Amz-Signature=<redacted:aws-presigned>",
        ] {
            assert!(out.contains(kept), "{view:?}: {kept}");
        }
    }
}

#[test]
fn triage_views_quote_no_secret() {
    let every_shape = shape_secrets();
    let every: Vec<&str> = every_shape.iter().map(String::as_str).collect();
    for view in [&["-o", "json"][..], &["-o", "yaml"], &["-o", "html"]] {
        let mut args = vec![
            "triage",
            "-n",
            NS,
            "--snapshot",
            FIXTURE,
            "--color",
            "never",
        ];
        args.extend_from_slice(view);
        let (out, _) = both_ways(&args, &every);
        assert!(out.contains("<redacted:credential>"), "{view:?}");
    }
    // The table: one line a workload, the lead's detail.
    let (out, _) = both_ways(
        &[
            "triage",
            "-n",
            NS,
            "--snapshot",
            FIXTURE,
            "--color",
            "never",
            "--width",
            "400",
            "-v",
        ],
        &[],
    );
    assert!(out.contains(TARGET), "{out}");
}

#[test]
fn an_alert_traced_quotes_no_secret_of_the_cluster_or_the_alert() {
    let dir = tempfile::tempdir().unwrap();
    let alert = dir.path().join("alert.json");
    std::fs::write(
        &alert,
        serde_json::json!({"status": "firing", "alerts": [{
            "status": "firing",
            "labels": {"alertname": "ChatDown", "namespace": NS, "modelservice": TARGET},
            "annotations": {"description": "probe https://ops:HostileAlertPw16@status.hostile.example failed"},
            "startsAt": "2026-12-01T08:50:00Z"
        }]})
        .to_string(),
    )
    .unwrap();
    let alert = alert.to_str().unwrap();
    for view in [&["-o", "json"][..], &["--width", "400", "-v"]] {
        let mut args = vec![
            "triage",
            "--alert",
            alert,
            "--snapshot",
            FIXTURE,
            "--color",
            "never",
        ];
        args.extend_from_slice(view);
        let (out, plain) = both_ways(&args, &["Hx7fakeBearerValue0mdiagHostile"]);
        assert!(!out.contains("HostileAlertPw16"), "{view:?}");
        assert!(
            plain.contains("HostileAlertPw16"),
            "{view:?}: the alert is not shown"
        );
    }
}

#[test]
fn a_rewritten_snapshot_keeps_no_secret_in_any_field() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = all_secrets();
    for name in ["out.yaml", "out.json"] {
        let out = dir.path().join(name);
        let out = out.to_str().unwrap();
        let r = run(&[
            "snapshot",
            "-n",
            NS,
            "--snapshot",
            FIXTURE,
            "--output-file",
            out,
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let bytes = std::fs::read_to_string(out).unwrap();
        assert!(
            leaked(&bytes, &secrets).is_empty(),
            "{name}: {:?}",
            leaked(&bytes, &secrets)
        );
        assert!(leaked(&r.stderr, &secrets).is_empty());
        let found = markers(&bytes);
        for rule in shape_rules()
            .into_iter()
            .chain(["env-name", "header-name", "binary-data"].map(String::from))
        {
            assert!(found.contains(&rule), "{name}: no <redacted:{rule}>");
        }
        // The file says where, field by field.
        let doc: Value = if name.ends_with(".json") {
            serde_json::from_str(&bytes).unwrap()
        } else {
            serde_saphyr::from_str(&bytes).unwrap()
        };
        let paths: Vec<String> = doc["redactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r["path"].as_str().unwrap(),
                    r["rule"].as_str().unwrap()
                )
            })
            .collect();
        let pod = "pod/hostile-lab/vault-chat-6f8b9c7d5-q7x2m: ";
        for want in [
            format!("{pod}status.containerStatuses[0].lastState.terminated.message credential"),
            format!("{pod}status.containerStatuses[0].state.waiting.message jwt"),
            format!(
                "{pod}spec.containers[0].readinessProbe.httpGet.httpHeaders[name=Authorization].value header-name"
            ),
            format!(
                "{pod}spec.containers[0].readinessProbe.httpGet.httpHeaders[name=X-Hostile-13].value credential"
            ),
            format!("{pod}spec.containers[0].args[29] flag-value"),
            format!("{pod}spec.containers[0].args[31] flag-value"),
            format!("{pod}spec.containers[0].env[name=DB_PASSWORD].value env-name"),
            "event/hostile-lab/vault-chat-6f8b9c7d5-q7x2m.backoff: message stripe-key".into(),
            "event/hostile-lab/vault-chat-6f8b9c7d5-q7x2m.unhealthy: note npm-token".into(),
            "modelservice/hostile-lab/vault-chat: spec.model.source aws-presigned".into(),
            "modelservice/hostile-lab/vault-chat: spec.notes.note-20 mysql-dsn".into(),
            "configmap/hostile-lab/vault-chat-config: data.server.conf discord-webhook".into(),
            "configmap/hostile-lab/vault-chat-config: binaryData[blob.bin] binary-data".into(),
            "gaps[0]: reason url-password".into(),
        ] {
            assert!(paths.contains(&want), "{name}: no {want:?} in {paths:#?}");
        }
        // Written again, nothing more is found and nothing changes.
        let again = dir.path().join(format!("again-{name}"));
        let again = again.to_str().unwrap();
        let r = run(&[
            "snapshot",
            "-n",
            NS,
            "--snapshot",
            out,
            "--output-file",
            again,
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let back: Value = if name.ends_with(".json") {
            serde_json::from_str(&std::fs::read_to_string(again).unwrap()).unwrap()
        } else {
            serde_saphyr::from_str(&std::fs::read_to_string(again).unwrap()).unwrap()
        };
        assert_eq!(back["objects"], doc["objects"], "{name}");
        assert_eq!(back["redactions"], doc["redactions"], "{name}");
    }

    // Without the defaults every shape is written as it was, and what is
    // replaced by its name or kind still is.
    let out = dir.path().join("plain.yaml");
    let out = out.to_str().unwrap();
    let r = run(&[
        "snapshot",
        "-n",
        NS,
        "--snapshot",
        FIXTURE,
        "--output-file",
        out,
        "--no-default-redaction",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let bytes = std::fs::read_to_string(out).unwrap();
    let shown = leaked(&bytes, &secrets);
    for secret in shape_secrets() {
        assert!(
            shown.contains(&secret.as_str()),
            "{secret} not written without the defaults"
        );
    }
    for always in ["HostileEnvNamed13", "HostileProbeHeader12"] {
        assert!(!bytes.contains(always), "{always}");
    }
    let doc = fixture();
    let config = doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .unwrap();
    let binary = config["binaryData"]["blob.bin"].as_str().unwrap();
    assert!(!bytes.contains(&binary[..40]), "binaryData copied raw");
    assert!(bytes.contains("<redacted:binary-data>"));
}

#[test]
fn user_patterns_reach_every_command_and_every_string() {
    // A name and a word of mdiag's own output: both replaced where shown.
    for args in [
        &[
            "trace",
            TARGET,
            "-n",
            NS,
            "--snapshot",
            FIXTURE,
            "-o",
            "json",
        ][..],
        &["triage", "-n", NS, "--snapshot", FIXTURE, "-o", "json"],
        &[
            "trace",
            TARGET,
            "-n",
            NS,
            "--snapshot",
            FIXTURE,
            "-v",
            "--width",
            "400",
        ],
    ] {
        let mut with = args.to_vec();
        with.extend(["--redact", "node-a", "--redact", r"pg\.hostile\.svc"]);
        let r = run(&with);
        assert!(!r.stdout.contains("node-a"), "{args:?}");
        assert!(!r.stdout.contains("pg.hostile.svc"), "{args:?}");
        assert!(r.stdout.contains("<redacted:redact-1>"), "{args:?}");
        assert!(r.stdout.contains("<redacted:redact-2>"), "{args:?}");
        let plain = run(args);
        assert!(plain.stdout.contains("node-a"), "{args:?}");
    }
    let r = run(&[
        "trace",
        TARGET,
        "-n",
        NS,
        "--snapshot",
        FIXTURE,
        "--redact",
        "(",
    ]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("--redact \"(\" is not a valid regular expression"),
        "{}",
        r.stderr
    );
}

/// The gate waits on a live cluster only; its views of a moment are made
/// by the code its wait runs (`mdiag::cmd::gate::views_of_moment`). The
/// moment: a crash loop whose two crashes end on the same line, a line
/// full of credentials the gate quotes as the reason it failed.
fn gate_views(extra: &[&str]) -> mdiag::cmd::gate::Views {
    use mdiag_core::analysis::crashes::CrashHistory;
    use mdiag_core::model::LogRecord;

    let dir = tempfile::tempdir().unwrap();
    let mut argv = vec!["mdiag", "-n", NS, "gate", TARGET, "--max-restarts", "9"];
    let files: Vec<String> = ["r.json", "j.xml", "p.html"]
        .iter()
        .map(|f| dir.path().join(f).to_str().unwrap().to_string())
        .collect();
    argv.extend([
        "--report", &files[0], "--junit", &files[1], "--html", &files[2],
    ]);
    argv.extend_from_slice(extra);
    let cli = mdiag::cli::Cli::try_parse_from(&argv).unwrap();
    let mdiag::cli::Command::Gate(args) = &cli.command else {
        unreachable!()
    };
    let request = mdiag::request::GateRequest::from_cli(&cli.global, args).unwrap();
    let line = shapes().shapes[21..28]
        .iter()
        .map(|s| s.text.clone())
        .collect::<Vec<_>>()
        .join(" ; ");
    let mut crashes = CrashHistory::default();
    let mut last = None;
    for run in 1..=2 {
        let mut s = mdiag_source::read_snapshot_file(&root().join(FIXTURE)).unwrap();
        for pod in &mut s.objects.pods {
            let c = &mut pod
                .status
                .as_mut()
                .unwrap()
                .container_statuses
                .as_mut()
                .unwrap()[0];
            c.restart_count = run;
            let t = c.last_state.as_mut().unwrap().terminated.as_mut().unwrap();
            t.container_id = Some(format!("containerd://hostile-run-{run}"));
        }
        let target = mdiag_core::model::TargetSpec::parse(TARGET, None).unwrap();
        let chain = mdiag_core::chain::walk(&s, &target, NS, None).unwrap();
        let unseen = crashes.unseen(&chain);
        let logs: Vec<LogRecord> = unseen
            .iter()
            .map(|u| LogRecord {
                namespace: u.namespace.clone(),
                pod: u.pod.clone(),
                container: u.container.clone(),
                previous: u.previous,
                truncated: false,
                text: format!("starting\n{line}\n"),
            })
            .collect();
        crashes.record(unseen, &logs);
        drop(chain);
        last = Some(s);
    }
    mdiag::cmd::gate::views_of_moment(
        &request,
        last.unwrap(),
        &crashes,
        mdiag_core::analysis::gate::Outcome::Failed,
    )
    .unwrap()
}

#[test]
fn the_gates_reports_junit_html_and_stdout_quote_no_secret() {
    let secrets = all_secrets();
    let repeated: Vec<&str> = ["HostileMysqlPw5", "HostileRegistryPw6", "HostileFlagToken8"].into();
    for format in [&[][..], &["-o", "json"]] {
        let views = gate_views(format);
        let plain = gate_views(&[format, &["--no-default-redaction"][..]].concat());
        // The line the wait printed on stderr for this moment.
        let progress = unescape(views.progress.as_deref().unwrap());
        assert!(
            leaked(&progress, &secrets).is_empty(),
            "progress: {progress}"
        );
        assert!(progress.contains("[crash-loop]"), "{progress}");
        let texts = [
            ("report", views.report.unwrap(), plain.report.unwrap()),
            ("junit", views.junit.unwrap(), plain.junit.unwrap()),
            ("html", views.html.unwrap(), plain.html.unwrap()),
            ("stdout", views.stdout, plain.stdout),
        ]
        .map(|(what, text, plain)| (what, unescape(&text), unescape(&plain)));
        for (what, text, plain) in &texts {
            assert!(
                leaked(text, &secrets).is_empty(),
                "{what}: {:?}",
                leaked(text, &secrets)
            );
            assert!(text.contains("<redacted:"), "{what}");
            let shown = leaked(plain, &secrets);
            assert!(
                !shown.is_empty(),
                "{what}: no secret without the defaults: the check is blind"
            );
            // The crash's last line, which the gate quotes as why it failed.
            for s in &repeated {
                assert!(
                    shown.contains(s),
                    "{what} {format:?}: the repeated line is not quoted ({s})"
                );
            }
        }
        let report: Value = serde_json::from_str(&gate_views(format).report.unwrap()).unwrap();
        assert_eq!(report["outcome"], "failed");
        let reason = report["gate"]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("-p<redacted:mysql-password>"), "{reason}");
    }
}

#[test]
fn an_unreachable_gate_quotes_no_password_of_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://admin:HostileGatePw15@127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: lab\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let kc = path("kubeconfig");
    for defaults in [true, false] {
        let (report, junit, html) = (path("r.json"), path("j.xml"), path("p.html"));
        let mut args = vec![
            "--kubeconfig",
            &kc,
            "--request-timeout",
            "2",
            "gate",
            "chart-demo",
            "--timeout",
            "3s",
            "--report",
            &report,
            "--junit",
            &junit,
            "--html",
            &html,
        ];
        if !defaults {
            args.push("--no-default-redaction");
        }
        let r = run(&args);
        assert_eq!(r.code, Some(4), "{}", r.stderr);
        let outputs = [
            r.stdout.clone(),
            r.stderr.clone(),
            std::fs::read_to_string(&report).unwrap(),
            std::fs::read_to_string(&junit).unwrap(),
            std::fs::read_to_string(&html).unwrap(),
        ];
        for (i, text) in outputs.iter().enumerate() {
            if defaults {
                assert!(!text.contains("HostileGatePw15"), "output {i}: {text}");
            } else if i != 1 {
                assert!(
                    text.contains("HostileGatePw15"),
                    "output {i} does not quote the server"
                );
            }
        }
        if defaults {
            assert!(outputs[2].contains("https://admin:<redacted:url-password>@127.0.0.1:1"));
        }
    }
    // A command's error line is redacted too.
    let r = run(&[
        "--kubeconfig",
        &kc,
        "--request-timeout",
        "2",
        "trace",
        "chart-demo",
        "-n",
        "lab",
    ]);
    assert_eq!(r.code, Some(4), "{}", r.stderr);
    assert!(!r.stderr.contains("HostileGatePw15"), "{}", r.stderr);
    assert!(r.stderr.contains("<redacted:url-password>"), "{}", r.stderr);
}

mod mcp {
    use super::*;

    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::{RoleClient, RunningService};
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

    type Client = RunningService<RoleClient, ()>;

    async fn start(flags: &[&str]) -> Client {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mdiag")).configure(|c| {
            c.args(&flags)
                .arg("mcp")
                .args(["--allow-file", "fixtures"])
                .current_dir(root())
                .env_remove("KUBECONFIG")
                .env("LANG", "C");
        });
        let transport = TokioChildProcess::new(command).expect("spawn mdiag mcp");
        ().serve(transport).await.expect("initialize")
    }

    /// The whole answer (structured content and text) as one string.
    async fn answer(client: &Client, tool: &'static str, args: Value) -> String {
        let args = args.as_object().unwrap().clone();
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{tool}: {result:?}");
        serde_json::to_string(&result).unwrap()
    }

    #[tokio::test]
    async fn mcp_answers_quote_no_secret_and_follow_the_servers_flags() {
        let secrets = all_secrets();
        let every = shape_secrets();
        let source = serde_json::json!({"target": TARGET, "namespace": NS, "snapshot": FIXTURE});
        let triage = serde_json::json!({"namespace": NS, "snapshot": FIXTURE});
        let summary = serde_json::json!({"snapshot": FIXTURE});

        let client = start(&[]).await;
        for (tool, args) in [("trace", source.clone()), ("triage", triage.clone())] {
            let text = answer(&client, tool, args).await;
            let shown = leaked(&text, &secrets);
            assert!(shown.is_empty(), "{tool}: {shown:?}");
            assert!(text.contains("<redacted:"), "{tool}");
        }
        // The summary tool is redacted as the CLI's is: its gaps too.
        let text = answer(&client, "snapshot_summary", summary.clone()).await;
        assert_eq!(
            leaked(&text, &secrets),
            Vec::<&str>::new(),
            "snapshot_summary"
        );
        assert!(text.contains("<redacted:"));
        client.cancel().await.unwrap();

        // Started without the defaults, its answers show what the CLI's do.
        let client = start(&["--no-default-redaction"]).await;
        for (tool, args) in [("trace", source.clone()), ("triage", triage.clone())] {
            let text = answer(&client, tool, args).await;
            let shown = leaked(&text, &secrets);
            for s in &every {
                assert!(shown.contains(&s.as_str()), "{tool}: {s} is not shown");
            }
        }
        // The summary of a file has no request to carry the flags: it keeps
        // the defaults whatever the server was started with.
        let text = answer(&client, "snapshot_summary", summary).await;
        assert_eq!(leaked(&text, &secrets), Vec::<&str>::new());
        client.cancel().await.unwrap();

        // The server's patterns reach every tool's answer.
        let client = start(&["--redact", "node-a"]).await;
        let text = answer(&client, "trace", source).await;
        assert!(!text.contains("node-a"));
        assert!(text.contains("<redacted:redact-1>"));
        client.cancel().await.unwrap();
    }
}

/// What `mdiag mcp`'s snapshot_summary should answer once it calls
/// `triage::summary_of`: the file's contents and triage, no secret in either.
#[test]
fn a_summary_of_the_file_holds_no_secret() {
    let secrets = all_secrets();
    let snapshot = mdiag_source::read_snapshot_file(&root().join(FIXTURE)).unwrap();
    let (contents, judged) = mdiag::cmd::triage::summary_of(snapshot, None);
    let lang = mdiag_core::catalogue::Lang::En;
    let report = mdiag_render::summary::report(&contents, judged.report(lang));
    let text = format!(
        "{}\n{}",
        serde_json::to_string(&report).unwrap(),
        mdiag_render::answer::summary(&contents, &judged.items, lang)
    );
    assert!(
        leaked(&text, &secrets).is_empty(),
        "{:?}",
        leaked(&text, &secrets)
    );
    assert!(
        text.contains("https://admin:<redacted:url-password>@api.hostile.example"),
        "{text}"
    );
}
