//! The walk over an object: which fields are searched for shapes, and the
//! annotations, env values, credential-named headers, Secret data and
//! ConfigMap binary data replaced whatever they hold.
//!
//! Searched for shapes: annotations, env values, container command and
//! args (each word, and the words together: `--password VALUE`), probe
//! and lifecycle `httpHeaders` values, every `message` and `note` (status
//! and condition messages, termination and waiting messages, Events),
//! ConfigMap `data`, and the `spec` of a custom resource (a ModelService).

use serde_json::{Map, Value};

use super::redactor::{Redactor, Tally};
use super::shapes::{Span, is_marker, looks_like_credential, marker, value_spans};
use crate::plan::LAST_APPLIED;

/// Header names whose value is a credential whatever it looks like, beside
/// the words of an env name: `Authorization`, `Cookie`, `X-Api-Key`.
fn header_is_credential(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    looks_like_credential(name) || lower.contains("cookie") || lower.contains("session")
}

/// A custom resource: its API group has a dot and is not one of
/// Kubernetes' own (`*.k8s.io`). Its spec is free text to mdiag.
fn is_custom(api_version: &str) -> bool {
    match api_version.split_once('/') {
        Some((group, _)) => group.contains('.') && !group.ends_with(".k8s.io"),
        None => false,
    }
}

impl Redactor {
    /// `shapes`: whether the default shapes apply to strings below `v`.
    pub(crate) fn walk(
        &self,
        v: &mut Value,
        at: &mut String,
        label: &str,
        kind: &str,
        shapes: bool,
        tally: &mut Tally,
    ) {
        match v {
            Value::Object(map) => {
                let top = at.is_empty();
                let custom = top
                    && map
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .is_some_and(is_custom);
                if self.defaults() {
                    self.split_words(map, at, label, tally);
                }
                for (key, child) in map.iter_mut() {
                    let len = at.len();
                    if !at.is_empty() {
                        at.push('.');
                    }
                    at.push_str(key);
                    match (key.as_str(), child) {
                        ("annotations", Value::Object(annotations)) => {
                            self.annotations(annotations, at, label, tally);
                        }
                        ("env", Value::Array(vars)) => self.env(vars, at, label, kind, tally),
                        ("data" | "stringData", Value::Object(data)) if top && kind == "Secret" => {
                            // A Secret only reaches a snapshot from a dump.
                            for (name, value) in data.iter_mut() {
                                if value.as_str().is_some_and(|s| !is_marker(s)) {
                                    *value = Value::String(marker("secret-data"));
                                    tally.add(&format!("{label}: {at}[{name}]"), "secret-data", 1);
                                }
                            }
                        }
                        ("data", child) if top && kind == "ConfigMap" => {
                            self.walk(child, at, label, kind, true, tally);
                        }
                        ("binaryData", Value::Object(data)) if top && kind == "ConfigMap" => {
                            // Bytes mdiag cannot read are never copied.
                            for (name, value) in data.iter_mut() {
                                if value.as_str().is_some_and(|s| !is_marker(s)) {
                                    *value = Value::String(marker("binary-data"));
                                    tally.add(&format!("{label}: {at}[{name}]"), "binary-data", 1);
                                }
                            }
                        }
                        ("spec", child) if custom => {
                            self.walk(child, at, label, kind, true, tally);
                        }
                        ("httpHeaders", Value::Array(headers)) => {
                            self.headers(headers, at, label, tally);
                        }
                        ("command" | "args" | "message" | "note", child) => {
                            self.walk(child, at, label, kind, true, tally);
                        }
                        (_, child) => self.walk(child, at, label, kind, shapes, tally),
                    }
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("[{i}]"));
                    self.walk(item, at, label, kind, shapes, tally);
                    at.truncate(len);
                }
            }
            Value::String(s) => self.text(s, shapes, &format!("{label}: {at}"), tally),
            _ => {}
        }
    }

    /// Annotations: the last-applied copy of the object goes whole; every
    /// other value is searched for credential shapes.
    fn annotations(
        &self,
        annotations: &mut serde_json::Map<String, Value>,
        at: &str,
        label: &str,
        tally: &mut Tally,
    ) {
        for (key, value) in annotations.iter_mut() {
            let path = format!("{label}: {at}[{key}]");
            if value.as_str().is_some_and(is_marker) {
                continue;
            }
            if key == LAST_APPLIED {
                *value = Value::String(marker("last-applied"));
                tally.add(&path, "last-applied", 1);
            } else if let Value::String(s) = value {
                self.text(s, true, &path, tally);
            }
        }
    }

    /// Environment variables: a credential-like name loses its value
    /// whatever it is; any other value is searched for credential shapes.
    fn env(&self, vars: &mut [Value], at: &str, label: &str, kind: &str, tally: &mut Tally) {
        for (i, var) in vars.iter_mut().enumerate() {
            let name = var.get("name").and_then(Value::as_str).map(str::to_string);
            let mut here = match &name {
                Some(name) => format!("{at}[name={name}]"),
                None => format!("{at}[{i}]"),
            };
            if let Some(name) = &name
                && looks_like_credential(name)
                && let Some(value) = var.get_mut("value").filter(|v| v.is_string())
            {
                if value.as_str().is_some_and(is_marker) {
                    continue;
                }
                *value = Value::String(marker("env-name"));
                tally.add(&format!("{label}: {here}.value"), "env-name", 1);
                continue;
            }
            if let Value::Object(fields) = var {
                for (key, child) in fields.iter_mut() {
                    let len = here.len();
                    here.push('.');
                    here.push_str(key);
                    self.walk(child, &mut here, label, kind, key == "value", tally);
                    here.truncate(len);
                }
            }
        }
    }
}

impl Redactor {
    /// Probe and lifecycle `httpHeaders`: a credential-named header
    /// (`Authorization`, `X-Api-Key`, `Cookie`) loses its value whatever
    /// it is; any other value is searched for credential shapes.
    fn headers(&self, headers: &mut [Value], at: &str, label: &str, tally: &mut Tally) {
        for (i, header) in headers.iter_mut().enumerate() {
            let name = header
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string);
            let here = match &name {
                Some(name) => format!("{at}[name={name}]"),
                None => format!("{at}[{i}]"),
            };
            let Some(value) = header.get_mut("value") else {
                continue;
            };
            let Value::String(s) = value else {
                continue;
            };
            if is_marker(s) {
                continue;
            }
            if name.as_deref().is_some_and(header_is_credential) {
                *s = marker("header-name");
                tally.add(&format!("{label}: {here}.value"), "header-name", 1);
            } else {
                self.text(s, true, &format!("{label}: {here}.value"), tally);
            }
        }
    }

    /// A container's `command` and `args` read as one command line, for
    /// the shapes that span words: `["--password", "VALUE"]`,
    /// `["mysql", "-pVALUE"]`, `["docker", "login", "-p", "VALUE"]`. A
    /// value inside one word is replaced there; the shapes inside a word
    /// alone are left to the walk of that word.
    fn split_words(&self, map: &mut Map<String, Value>, at: &str, label: &str, tally: &mut Tally) {
        let mut words: Vec<(&'static str, usize, String)> = Vec::new();
        for key in ["command", "args"] {
            if let Some(Value::Array(items)) = map.get(key) {
                for (i, item) in items.iter().enumerate() {
                    if let Some(s) = item.as_str() {
                        words.push((key, i, s.to_string()));
                    }
                }
            }
        }
        if words.len() < 2 {
            return;
        }
        let line = words
            .iter()
            .map(|(_, _, w)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let mut starts = Vec::with_capacity(words.len());
        let mut offset = 0;
        for (_, _, w) in &words {
            starts.push(offset);
            offset += w.len() + 1;
        }
        let word_of = |pos: usize| starts.iter().rposition(|&s| s <= pos).unwrap_or(0);
        // Per word, the spans to replace (in the word's own offsets).
        let mut replace: Vec<Vec<Span>> = vec![Vec::new(); words.len()];
        for span in value_spans(&line) {
            let w = word_of(span.value.start);
            let crosses =
                word_of(span.whole.start) != w || word_of(span.whole.end.saturating_sub(1)) != w;
            let end = starts[w] + words[w].2.len();
            if !crosses || span.value.end > end || span.value.is_empty() {
                continue;
            }
            replace[w].push(Span {
                value: span.value.start - starts[w]..span.value.end - starts[w],
                ..span
            });
        }
        for ((key, i, word), spans) in words.into_iter().zip(replace) {
            if spans.is_empty() {
                continue;
            }
            let mut out = word;
            for span in spans.iter().rev() {
                out.replace_range(span.value.clone(), &marker(span.rule));
            }
            if let Some(Value::Array(items)) = map.get_mut(key) {
                items[i] = Value::String(out);
            }
            for span in &spans {
                let path = if at.is_empty() {
                    format!("{label}: {key}[{i}]")
                } else {
                    format!("{label}: {at}.{key}[{i}]")
                };
                tally.add(&path, span.rule, 1);
            }
        }
    }
}

pub(crate) fn object_label(object: &Value) -> String {
    let kind = object["kind"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    let name = object["metadata"]["name"].as_str().unwrap_or("?");
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdiag_core::model::LogRecord;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "lab", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{\"env\":[{\"name\":\"DB_PASSWORD\",\"value\":\"hunter2\"}]}"
            }},
            "spec": {"containers": [{"name": "server", "env": [
                {"name": "DB_PASSWORD", "value": "hunter2"},
                {"name": "HF_TOKEN", "value": "hf_abc"},
                {"name": "MODEL_PATH", "value": "/models/llama"},
                {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
            ]}]}
        })
    }

    #[test]
    fn credential_env_values_and_last_applied_are_replaced_and_listed_by_path() {
        let mut objects = vec![pod()];
        let found = Redactor::new(&[], true)
            .unwrap()
            .redact(&mut objects, &mut []);
        let text = objects[0].to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("hf_abc"));
        assert!(text.contains("/models/llama"), "ordinary values stay");
        assert!(text.contains("secretKeyRef"), "references stay");
        assert!(text.contains("<redacted:env-name>"));
        assert!(text.contains("<redacted:last-applied>"));
        let paths: Vec<_> = found.iter().map(|r| r.path.as_str()).collect();
        assert!(
            paths
                .iter()
                .any(|p| p.ends_with("spec.containers[0].env[name=DB_PASSWORD].value"))
        );
        assert!(paths.iter().any(|p| p.contains("env[name=HF_TOKEN].value")));
        assert!(
            found
                .iter()
                .any(|r| r.rule == "last-applied" && r.path.contains("last-applied-configuration"))
        );
        assert!(found.iter().all(|r| !r.path.contains("hunter2")));
    }

    #[test]
    fn env_names_and_last_applied_are_replaced_even_without_the_defaults() {
        let mut objects = vec![pod()];
        Redactor::new(&[], false)
            .unwrap()
            .redact(&mut objects, &mut []);
        let text = objects[0].to_string();
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn user_patterns_reach_every_string_and_the_logs() {
        let mut objects = vec![pod()];
        let mut logs = vec![LogRecord {
            namespace: "lab".into(),
            pod: "p".into(),
            container: "server".into(),
            previous: true,
            truncated: false,
            text: "connecting to db.internal.example with sk-live-123456\n".into(),
        }];
        let r = Redactor::new(&["sk-live-[0-9]+".into(), "/models/[a-z]+".into()], true).unwrap();
        let found = r.redact(&mut objects, &mut logs);
        assert_eq!(
            logs[0].text,
            "connecting to db.internal.example with <redacted:redact-1>\n"
        );
        assert!(!objects[0].to_string().contains("/models/llama"));
        assert!(
            found
                .iter()
                .any(|r| r.path == "pods/log/lab/p/server (previous)"
                    && r.rule == "redact-1"
                    && r.count == 1)
        );
        assert!(
            found
                .iter()
                .any(|r| r.rule == "redact-2" && r.path.contains("env[name=MODEL_PATH].value"))
        );
    }

    #[test]
    fn without_defaults_shapes_stay_but_names_go() {
        let mut objects = vec![json!({
            "kind": "Pod", "metadata": {"name": "p", "namespace": "lab",
                "annotations": {"note": "password=hunter2"}},
            "spec": {"containers": [{"name": "c", "env": [
                {"name": "URL", "value": "https://u:pw1@h"},
                {"name": "DB_PASSWORD", "value": "hunter2"}
            ]}]}
        })];
        let found = Redactor::new(&[], false)
            .unwrap()
            .redact(&mut objects, &mut []);
        let text = objects[0].to_string();
        assert!(text.contains("password=hunter2"));
        assert!(text.contains("https://u:pw1@h"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "env-name");
    }

    #[test]
    fn a_secret_from_a_dump_loses_its_values_and_configmap_data_is_searched() {
        let mut objects = vec![
            json!({"kind": "Secret", "metadata": {"name": "db", "namespace": "lab"},
                "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin"}}),
            json!({"kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "lab"},
                "data": {"app.conf": "url = redis://:s3cret@cache:6379\nlevel = info\n"}}),
        ];
        let found = Redactor::new(&[], true)
            .unwrap()
            .redact(&mut objects, &mut []);
        assert_eq!(objects[0]["data"]["password"], "<redacted:secret-data>");
        assert_eq!(objects[0]["stringData"]["user"], "<redacted:secret-data>");
        assert_eq!(
            objects[1]["data"]["app.conf"],
            "url = redis://:<redacted:url-password>@cache:6379\nlevel = info\n"
        );
        assert!(
            found
                .iter()
                .any(|r| r.path == "configmap/lab/cfg: data.app.conf")
        );
    }

    fn redacted(object: Value, defaults: bool) -> (Value, Vec<(String, String)>) {
        let mut objects = vec![object];
        let found = Redactor::new(&[], defaults)
            .unwrap()
            .redact(&mut objects, &mut []);
        let found = found.into_iter().map(|r| (r.path, r.rule)).collect();
        (objects.remove(0), found)
    }

    #[test]
    fn event_text_and_status_messages_are_searched_and_names_are_not() {
        let (event, found) = redacted(
            json!({
                "kind": "Event", "metadata": {"name": "e", "namespace": "lab"},
                "reason": "Failed",
                "message": "Error: secret \"db\" not found; token=abc123",
                "note": "pull https://robot:Pw-fake-9@registry.example.com/v2/"
            }),
            true,
        );
        assert_eq!(
            event["message"],
            "Error: secret \"db\" not found; token=<redacted:credential>"
        );
        assert_eq!(
            event["note"],
            "pull https://robot:<redacted:url-password>@registry.example.com/v2/"
        );
        assert_eq!(event["reason"], "Failed");
        assert!(found.contains(&("event/lab/e: message".into(), "credential".into())));

        let (pod, found) = redacted(
            json!({
                "kind": "Pod", "metadata": {"name": "p", "namespace": "lab",
                    "labels": {"app": "token=abc123"}},
                "spec": {"nodeName": "password=hunter2"},
                "status": {
                    "message": "evicted",
                    "conditions": [{"type": "Ready", "message": "probe sent password=cond-pw"}],
                    "containerStatuses": [{"name": "c",
                        "state": {"waiting": {"reason": "CrashLoopBackOff",
                            "message": "back-off; last error: api_key=wait-key-1"}},
                        "lastState": {"terminated": {"exitCode": 1,
                            "message": "FATAL dial postgres://app:term-pw-2@db:5432/app"}}}]
                }
            }),
            true,
        );
        let text = pod.to_string();
        for secret in ["cond-pw", "wait-key-1", "term-pw-2"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        // Names and labels are what a snapshot is walked by: left as read.
        assert_eq!(pod["spec"]["nodeName"], "password=hunter2");
        assert_eq!(pod["metadata"]["labels"]["app"], "token=abc123");
        assert!(found.iter().any(|(path, _)| path
            == "pod/lab/p: status.containerStatuses[0].lastState.terminated.message"));
    }

    #[test]
    fn probe_headers_lose_credential_values_by_name_and_shapes_by_shape() {
        let probe = json!({"httpGet": {"path": "/healthz", "port": 8080, "httpHeaders": [
            {"name": "Authorization", "value": "Bearer-less-fake-value"},
            {"name": "X-Upstream", "value": "https://u:hdr-pw@up.lab.svc/"},
            {"name": "X-Request-Source", "value": "kubelet"}
        ]}});
        let pod = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "lab"},
            "spec": {"containers": [{"name": "c", "readinessProbe": probe}]}});
        let (out, found) = redacted(pod.clone(), true);
        let headers = &out["spec"]["containers"][0]["readinessProbe"]["httpGet"]["httpHeaders"];
        assert_eq!(headers[0]["value"], "<redacted:header-name>");
        assert_eq!(
            headers[1]["value"],
            "https://u:<redacted:url-password>@up.lab.svc/"
        );
        assert_eq!(headers[2]["value"], "kubelet");
        assert!(found.contains(&(
            "pod/lab/p: spec.containers[0].readinessProbe.httpGet.httpHeaders[name=Authorization].value"
                .into(),
            "header-name".into()
        )));
        // By name whatever the flag, as an env value is.
        let (out, _) = redacted(pod, false);
        let headers = &out["spec"]["containers"][0]["readinessProbe"]["httpGet"]["httpHeaders"];
        assert_eq!(headers[0]["value"], "<redacted:header-name>");
        assert_eq!(headers[1]["value"], "https://u:hdr-pw@up.lab.svc/");
    }

    fn container_words(command: Value, args: Value) -> (Value, Vec<(String, String)>) {
        let (out, found) = redacted(
            json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "lab"},
                "spec": {"containers": [{"name": "c", "command": command, "args": args}]}}),
            true,
        );
        let c = out["spec"]["containers"][0].clone();
        (json!([c["command"], c["args"]]), found)
    }

    #[test]
    fn a_value_in_the_word_after_its_flag_is_replaced() {
        let (words, found) = container_words(
            json!(["/app/server"]),
            json!([
                "--port",
                "8080",
                "--db-password",
                "split-pw-1",
                "--api-key",
                "split-key-2",
                "-v"
            ]),
        );
        assert_eq!(
            words[1],
            json!([
                "--port",
                "8080",
                "--db-password",
                "<redacted:flag-value>",
                "--api-key",
                "<redacted:flag-value>",
                "-v"
            ])
        );
        assert!(found.contains(&(
            "pod/lab/p: spec.containers[0].args[3]".into(),
            "flag-value".into()
        )));
        // The program in `command`, its flags in `args`.
        let (words, _) = container_words(
            json!(["docker"]),
            json!([
                "login",
                "-u",
                "robot",
                "-p",
                "split-pw-3",
                "reg.example.com"
            ]),
        );
        assert_eq!(words[1][4], "<redacted:login-password>");
        let (words, _) = container_words(
            json!(["mysql", "-uroot", "-psplit-pw-4"]),
            json!(["models"]),
        );
        assert_eq!(words[0][2], "-p<redacted:mysql-password>");
        assert_eq!(words[1][0], "models");
    }

    #[test]
    fn words_that_only_look_like_a_split_value_stay() {
        for (command, args) in [
            (json!(["python"]), json!(["-m", "server", "-p", "8080"])),
            (json!(["docker"]), json!(["run", "-p", "8080:80", "web"])),
            (json!(["mysql"]), json!(["-u", "app", "-p", "models"])),
            (json!(["redis-cli"]), json!(["-p", "6379", "ping"])),
            (
                json!(["/app/server"]),
                json!(["--password-file", "/run/secrets/db", "--max-tokens", "512"]),
            ),
            (
                json!(["/app/server"]),
                json!(["--token", "$(HF_TOKEN)", "--secret", "--verbose"]),
            ),
        ] {
            let (words, found) = container_words(command.clone(), args.clone());
            assert_eq!(words, json!([command, args]));
            assert!(found.is_empty(), "{found:?}");
        }
    }

    #[test]
    fn a_custom_resources_spec_is_searched_and_configmap_binary_data_is_never_copied() {
        let (msvc, found) = redacted(
            json!({"apiVersion": "modeldock.io/v1alpha1", "kind": "ModelService",
                "metadata": {"name": "m", "namespace": "lab"},
                "spec": {"model": {"uri": "s3://weights/llama?X-Amz-Signature=cafe0123beef",
                    "pullSecret": "hf_FakeHuggingFaceTokenForSpecTests01"},
                    "replicas": 2, "owner": "team-models"}}),
            true,
        );
        assert_eq!(
            msvc["spec"]["model"]["uri"],
            "s3://weights/llama?X-Amz-Signature=<redacted:aws-presigned>"
        );
        assert_eq!(
            msvc["spec"]["model"]["pullSecret"],
            "<redacted:huggingface-token>"
        );
        assert_eq!(msvc["spec"]["owner"], "team-models");
        assert!(
            found
                .iter()
                .any(|(p, r)| p == "modelservice/lab/m: spec.model.uri" && r == "aws-presigned")
        );
        // A built-in kind's spec is read by the analysis, not searched.
        let (route, found) = redacted(
            json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": "r", "namespace": "lab"}, "spec": {"hostnames": ["token=abc"]}}),
            true,
        );
        assert_eq!(route["spec"]["hostnames"][0], "token=abc");
        assert!(found.is_empty());

        for defaults in [true, false] {
            let (cm, found) = redacted(
                json!({"kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "lab"},
                    "binaryData": {"key.der": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw"}}),
                defaults,
            );
            assert_eq!(cm["binaryData"]["key.der"], "<redacted:binary-data>");
            assert_eq!(
                found,
                vec![(
                    "configmap/lab/cfg: binaryData[key.der]".into(),
                    "binary-data".into()
                )]
            );
        }
    }
}
