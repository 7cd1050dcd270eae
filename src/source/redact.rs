//! Keeping secrets out of snapshot files. Secrets themselves are never
//! read; what remains is environment values whose names look like
//! credentials, the last-applied annotation (a copy of the whole object),
//! and whatever the user's `--redact` patterns match, in objects and logs.
//! The file records where it redacted (paths), never what.

use regex::Regex;
use serde_json::Value;

use crate::model::LogRecord;

pub const MARKER: &str = "<redacted by mdiag>";
use super::plan::LAST_APPLIED;
/// Parts of an environment variable name that mark a credential.
const CREDENTIAL_WORDS: &[&str] = &[
    "password",
    "passwd",
    "token",
    "secret",
    "key",
    "credential",
    "auth",
    "private",
];

pub struct Redactor {
    patterns: Vec<Regex>,
}

/// A `--redact` pattern that is not a valid regular expression.
#[derive(Debug, thiserror::Error)]
#[error("--redact {pattern:?} is not a valid regular expression: {cause}")]
pub struct PatternError {
    pub pattern: String,
    pub cause: regex::Error,
}

pub fn looks_like_credential(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CREDENTIAL_WORDS.iter().any(|w| lower.contains(w))
}

impl Redactor {
    pub fn new(patterns: &[String]) -> Result<Self, PatternError> {
        let patterns = patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|cause| PatternError {
                    pattern: p.clone(),
                    cause,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Redactor { patterns })
    }

    /// Redacts objects and logs in place; returns the paths it changed.
    pub fn redact(&self, objects: &mut [Value], logs: &mut [LogRecord]) -> Vec<String> {
        let mut paths = Vec::new();
        for object in objects.iter_mut() {
            let label = object_label(object);
            if let Some(annotations) = object
                .pointer_mut("/metadata/annotations")
                .and_then(Value::as_object_mut)
                && let Some(v) = annotations.get_mut(LAST_APPLIED)
            {
                *v = Value::String(MARKER.into());
                paths.push(format!("{label}: metadata.annotations[{LAST_APPLIED}]"));
            }
            let mut at = String::new();
            self.walk(object, &mut at, &label, &mut paths);
        }
        for log in logs.iter_mut() {
            let mut changed = false;
            for p in &self.patterns {
                if p.is_match(&log.text) {
                    log.text = p.replace_all(&log.text, MARKER).into_owned();
                    changed = true;
                }
            }
            if changed {
                paths.push(format!(
                    "pods/log/{}/{}/{}{}",
                    log.namespace,
                    log.pod,
                    log.container,
                    if log.previous { " (previous)" } else { "" }
                ));
            }
        }
        paths
    }

    fn walk(&self, v: &mut Value, at: &mut String, label: &str, paths: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    let len = at.len();
                    if !at.is_empty() {
                        at.push('.');
                    }
                    at.push_str(key);
                    if key == "env"
                        && let Value::Array(vars) = child
                    {
                        self.redact_env(vars, at, label, paths);
                    }
                    self.walk(child, at, label, paths);
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("[{i}]"));
                    self.walk(item, at, label, paths);
                    at.truncate(len);
                }
            }
            Value::String(s) if s != MARKER => {
                let mut changed = false;
                for p in &self.patterns {
                    if p.is_match(s) {
                        *s = p.replace_all(s, MARKER).into_owned();
                        changed = true;
                    }
                }
                if changed {
                    paths.push(format!("{label}: {at}"));
                }
            }
            _ => {}
        }
    }

    fn redact_env(&self, vars: &mut [Value], at: &str, label: &str, paths: &mut Vec<String>) {
        for var in vars {
            let Some(name) = var.get("name").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            if !looks_like_credential(&name) {
                continue;
            }
            if let Some(value) = var.get_mut("value").filter(|v| v.is_string()) {
                *value = Value::String(MARKER.into());
                paths.push(format!("{label}: {at}[name={name}].value"));
            }
        }
    }
}

fn object_label(object: &Value) -> String {
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
        let paths = Redactor::new(&[]).unwrap().redact(&mut objects, &mut []);
        let text = objects[0].to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("hf_abc"));
        assert!(text.contains("/models/llama"), "ordinary values stay");
        assert!(text.contains("secretKeyRef"), "references stay");
        assert!(
            paths
                .iter()
                .any(|p| p.contains("env[name=DB_PASSWORD].value"))
        );
        assert!(paths.iter().any(|p| p.contains("env[name=HF_TOKEN].value")));
        assert!(
            paths
                .iter()
                .any(|p| p.contains("last-applied-configuration"))
        );
        assert!(paths.iter().all(|p| !p.contains("hunter2")));
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
        let r = Redactor::new(&["sk-live-[0-9]+".into(), "/models/[a-z]+".into()]).unwrap();
        let paths = r.redact(&mut objects, &mut logs);
        assert!(!logs[0].text.contains("sk-live"));
        assert!(logs[0].text.contains(MARKER));
        assert!(!objects[0].to_string().contains("/models/llama"));
        assert!(paths.iter().any(|p| p.starts_with("pods/log/lab/p/server")));
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Redactor::new(&["(".into()]).err().unwrap();
        assert!(err.to_string().contains("--redact \"(\""));
    }
}
