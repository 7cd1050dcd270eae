//! The walk over an object: which fields are searched for shapes, and the
//! annotations, env values and Secret data replaced whatever they hold.

use serde_json::Value;

use super::redactor::{Redactor, Tally};
use super::shapes::{is_marker, looks_like_credential, marker};
use crate::plan::LAST_APPLIED;

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
                        ("command" | "args", child @ Value::Array(_)) => {
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

    #[test]
    fn other_fields_are_not_searched_by_the_defaults() {
        // An Event message is what the analysis reads: it stays as written.
        let mut objects = vec![json!({
            "kind": "Event", "metadata": {"name": "e", "namespace": "lab"},
            "message": "Error: secret \"db\" not found; token=abc123"
        })];
        let found = Redactor::new(&[], true)
            .unwrap()
            .redact(&mut objects, &mut []);
        assert!(found.is_empty());
    }
}
