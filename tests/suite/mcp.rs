//! `mdiag mcp` as an agent meets it: the binary started as a child
//! process and spoken to by rmcp's own client over its stdin and stdout.
//! Every tool is called on fixtures and must answer with exactly the
//! report the CLI prints with `-o json` for the same input, and fail with
//! the message the CLI prints.

use crate::common;

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `mdiag mcp` in the repository (fixture paths are relative to it),
/// allowed to read the fixtures and README.md, with no kubeconfig from the
/// environment and English by default.
async fn start() -> Client {
    start_with(&["--allow-file", "fixtures", "--allow-file", "README.md"]).await
}

async fn start_with(flags: &[&str]) -> Client {
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mdiag")).configure(|c| {
        c.arg("mcp")
            .args(&flags)
            .current_dir(root())
            .env_remove("KUBECONFIG")
            .env_remove("NO_COLOR")
            .env("LANG", "C");
    });
    let transport = TokioChildProcess::new(command).expect("spawn mdiag mcp");
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let args = args.as_object().expect("arguments are an object").clone();
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The CLI's stdout (parsed as JSON) and its stderr, as a person runs it.
fn cli(args: &[&str]) -> (Option<Value>, String) {
    let out = common::mdiag().args(args).output().unwrap();
    let report = serde_json::from_slice(&out.stdout).ok();
    (report, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn cli_json(args: &[&str]) -> Value {
    let (report, stderr) = cli(args);
    report.unwrap_or_else(|| panic!("mdiag {args:?} printed no JSON: {stderr}"))
}

/// The tool's text block: an error's message, or an answer's headline
/// and next command (the report follows it as a JSON block).
fn text(result: &CallToolResult) -> String {
    let blocks = if result.is_error == Some(true) { 1 } else { 2 };
    assert_eq!(result.content.len(), blocks, "{result:?}");
    result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .expect("a text block")
}

/// The report, which the answer carries twice: as structured content and
/// as a JSON text block after the headline, for a client that hands its
/// model only the text.
fn structured(result: &CallToolResult, what: &str) -> Value {
    assert_eq!(result.is_error, Some(false), "{what}: {}", text(result));
    let report = result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{what}: no structured content"));
    let block = &result.content[1].as_text().expect("a JSON text block").text;
    let as_text: Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(as_text, report, "{what}: the JSON block is not the report");
    report
}

/// Where `value` does not fit `schema`, for the part of JSON Schema the
/// tools' output schemas use: type, const, enum, required, properties,
/// items, minimum.
fn misfits(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    let type_name = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if let Some(t) = schema.get("type") {
        let allowed: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = type_name(value);
        let fits =
            allowed.contains(&actual) || (actual == "integer" && allowed.contains(&"number"));
        if !fits {
            out.push(format!("{at}: {actual}, not {allowed:?}"));
            return out;
        }
    }
    if let Some(c) = schema.get("const")
        && c != value
    {
        out.push(format!("{at}: {value}, not {c}"));
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        out.push(format!("{at}: {value}, not one of {options:?}"));
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n < min
    {
        out.push(format!("{at}: {n} < {min}"));
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if value.get(r).is_none() {
                out.push(format!("{at}: no {r}"));
            }
        }
    }
    if let (Some(Value::Object(props)), Value::Object(fields)) = (schema.get("properties"), value) {
        for (k, s) in props {
            if let Some(v) = fields.get(k) {
                out.extend(misfits(s, v, &format!("{at}.{k}")));
            }
        }
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, v) in values.iter().enumerate() {
            out.extend(misfits(items, v, &format!("{at}[{i}]")));
        }
    }
    out
}

/// `fixtures/DIR/*.yaml` but the expectations, relative to the repository.
fn fixtures(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("fixtures").join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") && n != "expected.yaml")
        .map(|n| format!("fixtures/{dir}/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{dir}: {files:?}");
    files
}

fn ids(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn initialize_and_list_four_tools_with_schemas() {
    let client = start().await;
    let info = client.peer_info().expect("the server answered initialize");
    assert_eq!(info.server_info.as_ref().unwrap().name, "mdiag");
    assert_eq!(
        info.server_info.as_ref().unwrap().version,
        env!("CARGO_PKG_VERSION")
    );
    assert!(info.capabilities.tools.is_some());

    let mut tools = client.list_all_tools().await.unwrap();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["explain", "snapshot_summary", "trace", "triage"]);
    let required = |name: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        tool.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let properties = |name: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let mut p: Vec<String> = tool.input_schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: {:?}", tool.input_schema))
            .keys()
            .cloned()
            .collect();
        p.sort();
        p
    };
    // No kubeconfig, no context: they are the server's (docs/security.md#mcp).
    let source = ["at", "lang", "namespace", "snapshot"];
    let with = |extra: &[&str]| {
        let mut all: Vec<String> = source.iter().chain(extra).map(|s| s.to_string()).collect();
        all.sort();
        all
    };
    assert_eq!(properties("trace"), with(&["logs", "target"]));
    assert_eq!(required("trace"), ["target"]);
    assert_eq!(properties("triage"), with(&["all_namespaces", "selector"]));
    assert!(required("triage").is_empty());
    assert_eq!(properties("explain"), with(&["query", "target"]));
    assert!(required("explain").is_empty());
    assert_eq!(properties("snapshot_summary"), ["at", "lang", "snapshot"]);
    assert_eq!(required("snapshot_summary"), ["snapshot"]);
    for t in &tools {
        let schema = t
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no outputSchema", t.name));
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", t.name);
        assert_eq!(
            schema["properties"]["schema"]["const"], "mdiag/v1",
            "{}",
            t.name
        );
        assert!(
            t.description.as_deref().is_some_and(|d| d.len() > 40),
            "{}",
            t.name
        );
        let hints = t.annotations.as_ref().expect("annotations");
        assert_eq!(
            hints.read_only_hint,
            Some(true),
            "{} must say it only reads",
            t.name
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn trace_answers_what_the_cli_prints_for_every_demo() {
    let client = start().await;
    for file in fixtures("demo") {
        let result = call(
            &client,
            "trace",
            json!({"target": "chart-demo", "snapshot": file}),
        )
        .await;
        let report = structured(&result, &file);
        let expected = cli_json(&["trace", "chart-demo", "--snapshot", &file, "-o", "json"]);
        assert_eq!(report, expected, "{file}");
        // The text: the headline, then the next command.
        let text = text(&result);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            expected["verdict"]["summary"].as_str(),
            "{file}"
        );
        match expected["verdict"]["next"].as_str() {
            Some(next) => assert_eq!(lines.next(), Some(format!("next: {next}").as_str())),
            None => assert_eq!(lines.next(), None, "{file}: {text}"),
        }
    }
    // Another target kind, a clock and a language, passed as arguments.
    let file = "fixtures/demo/crash-loop.yaml";
    let result = call(
        &client,
        "trace",
        json!({"target": "deploy/chart-demo", "snapshot": file, "namespace": "modeldock-lab",
               "at": "2026-11-28T10:08:00Z", "lang": "zh"}),
    )
    .await;
    let expected = cli_json(&[
        "trace",
        "deploy/chart-demo",
        "-n",
        "modeldock-lab",
        "--snapshot",
        file,
        "--at",
        "2026-11-28T10:08:00Z",
        "--lang",
        "zh",
        "-o",
        "json",
    ]);
    let report = structured(&result, "deploy, --at, zh");
    assert_eq!(report, expected);
    assert_eq!(report["clock"]["source"], "at");
    assert!(text(&result).contains("下一步："), "{}", text(&result));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn triage_answers_what_the_cli_prints() {
    let client = start().await;
    let mut files = fixtures("triage");
    files.push("fixtures/demo/crash-loop.yaml".into());
    files.push("fixtures/demo/snapshot-crash-loop.yaml".into());
    for file in &files {
        let result = call(&client, "triage", json!({"snapshot": file})).await;
        let report = structured(&result, file);
        let expected = cli_json(&["triage", "--snapshot", file, "-o", "json"]);
        assert_eq!(report, expected, "{file}");
        assert_eq!(report["kind"], "Triage");
        // The text: the count line, then the worst workload that is not
        // healthy and its next command.
        let text = text(&result);
        let first = text.lines().next().unwrap();
        assert!(
            first.contains(&format!("{} workload", expected["total"])) || expected["total"] == 0,
            "{file}: {text}"
        );
        if let Some(worst) = expected["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["healthy"] == false)
        {
            assert!(
                text.contains(worst["verdict"]["summary"].as_str().unwrap()),
                "{file}: {text}"
            );
            if let Some(next) = worst["verdict"]["next"].as_str() {
                assert!(text.ends_with(&format!("next: {next}")), "{file}: {text}");
            }
        }
    }
    // A namespace, a selector and -A as arguments.
    let file = "fixtures/demo/crash-loop.yaml";
    let result = call(
        &client,
        "triage",
        json!({"snapshot": file, "namespace": "modeldock-lab",
               "selector": "app.kubernetes.io/name=chart-demo"}),
    )
    .await;
    let expected = cli_json(&[
        "triage",
        "-n",
        "modeldock-lab",
        "-l",
        "app.kubernetes.io/name=chart-demo",
        "--snapshot",
        file,
        "-o",
        "json",
    ]);
    let report = structured(&result, "-n -l");
    assert_eq!(report, expected);
    assert_eq!(ids(&report["items"][0])[0], "crash-loop");
    let all = call(
        &client,
        "triage",
        json!({"snapshot": file, "all_namespaces": true}),
    )
    .await;
    assert_eq!(
        structured(&all, "-A"),
        cli_json(&["triage", "-A", "--snapshot", file, "-o", "json"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn explain_answers_what_the_cli_prints() {
    let client = start().await;
    let file = "fixtures/demo/crash-loop.yaml";
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["explain", "-o", "json"]),
        (
            json!({"query": "crashloop"}),
            vec!["explain", "crashloop", "-o", "json"],
        ),
        (
            json!({"query": "137", "lang": "zh"}),
            vec!["explain", "137", "--lang", "zh", "-o", "json"],
        ),
        (
            json!({"query": "crash-loop", "target": "chart-demo", "snapshot": file}),
            vec![
                "explain",
                "crash-loop",
                "chart-demo",
                "--snapshot",
                file,
                "-o",
                "json",
            ],
        ),
    ];
    for (args, cli_args) in cases {
        let result = call(&client, "explain", args.clone()).await;
        let report = structured(&result, &args.to_string());
        assert_eq!(report, cli_json(&cli_args), "{args}");
        assert_eq!(report["kind"], "Explain");
        let text = text(&result);
        for e in report["entries"].as_array().unwrap() {
            assert!(text.contains(e["id"].as_str().unwrap()), "{args}: {text}");
        }
    }
    // With a target, the first check carries its real names and is `next`.
    let result = call(
        &client,
        "explain",
        json!({"query": "crash-loop", "target": "chart-demo", "snapshot": file}),
    )
    .await;
    let report = structured(&result, "with a target");
    let first = report["entries"][0]["check"][0].as_str().unwrap();
    assert!(
        first.contains("modeldock-lab") && !first.contains('{'),
        "{first}"
    );
    assert!(
        text(&result).ends_with(&format!("next: {first}")),
        "{}",
        text(&result)
    );
    // Every entry of the catalogue, as `explain -o json` lists it.
    let all = call(&client, "explain", json!({})).await;
    let count = structured(&all, "all")["entries"].as_array().unwrap().len();
    assert!(count >= 30, "{count}");
    assert!(
        text(&all).starts_with(&format!("{count} finding ids: ")),
        "{}",
        text(&all)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn snapshot_summary_holds_the_file_and_its_triage() {
    let client = start().await;
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    let result = call(&client, "snapshot_summary", json!({"snapshot": file})).await;
    let summary = structured(&result, file);
    assert_eq!(summary["schema"], "mdiag/v1");
    assert_eq!(summary["kind"], "SnapshotSummary");
    // The triage part is `triage --snapshot FILE -o json`.
    assert_eq!(
        summary["triage"],
        cli_json(&["triage", "--snapshot", file, "-o", "json"])
    );
    // What the file says of itself, counted from the file by another reader.
    let doc: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(root().join(file)).unwrap()).unwrap();
    assert_eq!(summary["source"]["kind"], "snapshot");
    assert_eq!(summary["source"]["location"], file);
    assert_eq!(summary["source"]["captured_at"], doc["captured_at"]);
    assert_eq!(summary["source"]["context"], doc["context"]);
    assert_eq!(summary["target"]["name"], doc["target"]["name"]);
    assert_eq!(summary["target"]["kind"], doc["target"]["kind"]);
    let objects = doc["objects"].as_array().unwrap();
    let mut by_kind = serde_json::Map::new();
    for o in objects {
        let kind = o["kind"].as_str().unwrap().to_string();
        let n = by_kind.get(&kind).and_then(Value::as_u64).unwrap_or(0);
        by_kind.insert(kind, json!(n + 1));
    }
    assert_eq!(summary["objects"]["by_kind"], Value::Object(by_kind));
    assert_eq!(summary["objects"]["total"], objects.len());
    let logs = doc["logs"].as_array().unwrap();
    assert_eq!(summary["logs"].as_array().unwrap().len(), logs.len());
    assert!(
        summary["logs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["previous"] == true && l["lines"].as_u64() > Some(0))
    );
    assert_eq!(
        summary["gaps"].as_array().unwrap().len(),
        doc["gaps"].as_array().unwrap().len()
    );
    let head = text(&result);
    assert!(
        head.starts_with(&format!(
            "{file} (an mdiag snapshot, captured 2026-11-28T10:11:11Z): {} objects, {} logs",
            objects.len(),
            logs.len()
        )),
        "{head}"
    );
    assert!(head.contains("crash-loop"), "{head}");

    // A kubectl dump has no capture time: it says its clock.
    let dump = "fixtures/demo/healthy.yaml";
    let result = call(&client, "snapshot_summary", json!({"snapshot": dump})).await;
    let summary = structured(&result, dump);
    assert_eq!(summary["source"]["kind"], "kubectl-dump");
    assert_eq!(summary["source"]["captured_at"], Value::Null);
    assert_eq!(
        summary["triage"],
        cli_json(&["triage", "--snapshot", dump, "-o", "json"])
    );
    assert!(
        text(&result).contains("a kubectl dump, no capture time"),
        "{}",
        text(&result)
    );

    // Redactions are listed, never their values.
    let redacted = "fixtures/redaction/secrets-snapshot.yaml";
    let result = call(&client, "snapshot_summary", json!({"snapshot": redacted})).await;
    let summary = structured(&result, redacted);
    assert_eq!(
        summary["redactions"][0]["path"],
        "pod/lab/model-0: spec.containers[0].env[name=HF_TOKEN].value"
    );
    client.cancel().await.unwrap();
}

/// A failure is a tool error (isError) whose text is the line the CLI
/// prints after `mdiag: `.
#[tokio::test]
async fn failures_are_tool_errors_with_the_cli_message() {
    let client = start().await;
    let cases: Vec<(&'static str, Value, Vec<&str>)> = vec![
        (
            "trace",
            json!({"target": "chart-demo", "snapshot": "fixtures/demo/no-such-file.yaml"}),
            vec![
                "trace",
                "chart-demo",
                "--snapshot",
                "fixtures/demo/no-such-file.yaml",
            ],
        ),
        (
            "trace",
            json!({"target": "deploy/nothing-here", "snapshot": "fixtures/demo/crash-loop.yaml"}),
            vec![
                "trace",
                "deploy/nothing-here",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
            ],
        ),
        (
            "trace",
            json!({"target": "chart-demo", "snapshot": "fixtures/demo/crash-loop.yaml", "at": "yesterday"}),
            vec![
                "trace",
                "chart-demo",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
                "--at",
                "yesterday",
            ],
        ),
        (
            "triage",
            json!({"snapshot": "fixtures/demo/crash-loop.yaml", "namespace": "elsewhere"}),
            vec![
                "triage",
                "-n",
                "elsewhere",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
            ],
        ),
        (
            "triage",
            json!({"snapshot": "fixtures/demo/crash-loop.yaml", "selector": "a in (b"}),
            vec![
                "triage",
                "-l",
                "a in (b",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
            ],
        ),
        (
            "explain",
            json!({"query": "crashlop"}),
            vec!["explain", "crashlop"],
        ),
        (
            "snapshot_summary",
            json!({"snapshot": "README.md"}),
            vec!["triage", "--snapshot", "README.md"],
        ),
    ];
    for (tool, args, cli_args) in cases {
        let result = call(&client, tool, args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{tool} {args}: {result:?}");
        assert!(result.structured_content.is_none());
        let (_, stderr) = cli(&cli_args);
        // The CLI's message, after the tool's name.
        assert_eq!(
            format!(
                "mdiag: {}\n",
                text(&result)
                    .strip_prefix(&format!("{tool}: "))
                    .unwrap_or("")
            ),
            stderr,
            "{tool} {args}"
        );
    }
    // Arguments that do not fit the schema are refused before mdiag runs,
    // as a tool error that names the argument.
    let result = call(
        &client,
        "trace",
        json!({"snapshot": "fixtures/demo/crash-loop.yaml"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("missing field `target`"),
        "{}",
        text(&result)
    );
    // The session is still alive after all of it.
    let ok = call(&client, "explain", json!({"query": "oom-killed"})).await;
    assert_eq!(ok.is_error, Some(false));
    client.cancel().await.unwrap();

    // The kubeconfig the server was started with, unreadable: the CLI's
    // message, whether the call names it again or not.
    let client = start_with(&["--kubeconfig", "/nonexistent/kubeconfig"]).await;
    let (_, stderr) = cli(&[
        "--kubeconfig",
        "/nonexistent/kubeconfig",
        "trace",
        "chart-demo",
    ]);
    for args in [
        json!({"target": "chart-demo"}),
        json!({"target": "chart-demo", "kubeconfig": "/nonexistent/kubeconfig"}),
    ] {
        let result = call(&client, "trace", args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{args}");
        assert_eq!(
            format!(
                "mdiag: {}\n",
                text(&result).strip_prefix("trace: ").unwrap_or("")
            ),
            stderr,
            "{args}"
        );
    }
    client.cancel().await.unwrap();
}

/// Every answer fits the outputSchema its tool lists, on every demo and
/// case fixture; and the check is not blind: a report with a wrong state
/// or without its findings does not fit.
#[tokio::test]
async fn every_answer_fits_its_tools_output_schema() {
    let client = start().await;
    let tools = client.list_all_tools().await.unwrap();
    let schema = |name: &str| -> Value {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        Value::Object(tool.output_schema.as_deref().unwrap().clone())
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in fixtures("demo").into_iter().chain(fixtures("lone")) {
        let calls = [
            (
                "trace",
                json!({"target": target_of(&file), "snapshot": file}),
            ),
            ("triage", json!({"all_namespaces": true, "snapshot": file})),
            ("snapshot_summary", json!({"snapshot": file})),
            ("explain", json!({"query": "crash-loop"})),
        ];
        for (tool, args) in calls {
            // A lone HPA or PDB is no trace target: triage judges it.
            let target = args["target"].as_str().unwrap_or("");
            if ["horizontalpodautoscaler/", "poddisruptionbudget/"]
                .iter()
                .any(|k| target.starts_with(k))
            {
                continue;
            }
            let result = call(&client, tool, args.clone()).await;
            if result.is_error == Some(true) {
                wrong.push(format!("{tool} {args}: {}", text(&result)));
                continue;
            }
            let report = structured(&result, &args.to_string());
            checked += 1;
            for m in misfits(&schema(tool), &report, tool) {
                wrong.push(format!("{file}: {m}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 60, "{checked}");
    let trace = schema("trace");
    let good = structured(
        &call(
            &client,
            "trace",
            json!({"target": "chart-demo", "snapshot": "fixtures/demo/crash-loop.yaml"}),
        )
        .await,
        "crash-loop",
    );
    let mut bad = good.clone();
    bad["verdict"]["state"] = json!("fine");
    assert!(!misfits(&trace, &bad, "trace").is_empty());
    let mut bad = good;
    bad.as_object_mut().unwrap().remove("findings");
    assert!(!misfits(&trace, &bad, "trace").is_empty());
    client.cancel().await.unwrap();
}

/// The target a fixture's trace names: the demos' ModelService, or the
/// workload of a lone object's file.
fn target_of(file: &str) -> String {
    if file.starts_with("fixtures/demo/") {
        return "chart-demo".into();
    }
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    let first = match doc.get("items") {
        Some(items) => items[0].clone(),
        None => doc,
    };
    // Knative's Service is `ksvc/`: `service/` names the core kind.
    let kind = match (first["apiVersion"].as_str(), first["kind"].as_str()) {
        (Some(v), Some("Service")) if v.starts_with("serving.knative.dev/") => "ksvc".to_string(),
        (_, kind) => kind.unwrap().to_ascii_lowercase(),
    };
    format!("{kind}/{}", first["metadata"]["name"].as_str().unwrap())
}
