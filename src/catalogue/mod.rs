//! The symptom catalogue: every finding id with its severity and texts
//! (English and Chinese), kept as data in `catalogue.yaml` and embedded in
//! the binary. Rules name an id; renderers take the texts from here.

mod ids;
pub use ids::FindingId;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

const CATALOGUE_YAML: &str = include_str!("catalogue.yaml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    // Ordered most severe first, so sorting ascending ranks worst first.
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// The language a LANG / LC_ALL value asks for (`zh_CN.UTF-8` -> zh).
    pub fn from_locale(value: &str) -> Lang {
        if value.to_ascii_lowercase().starts_with("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }
}

/// A text in both languages.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    pub en: String,
    pub zh: String,
}

impl Text {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => self.en.trim(),
            Lang::Zh => self.zh.trim(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub severity: Severity,
    #[serde(default)]
    pub symptoms: Vec<String>,
    pub title: Text,
    pub cause: Text,
    pub judge: Text,
    /// Read-only commands, with `{placeholders}` for the real names.
    pub check: Vec<String>,
    pub fix: Text,
    pub verify: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub version: u32,
    pub entries: Vec<Entry>,
}

/// The placeholders a check template may use.
pub const PLACEHOLDERS: &[&str] = &[
    "namespace",
    "modelservice",
    "deployment",
    "replicaset",
    "pod",
    "container",
    "service",
    "node",
    "controller_namespace",
    "controller",
    "hpa",
    "pdb",
    "resource",
];

/// The embedded catalogue. It is checked by tests, so a parse failure here
/// is a build defect, not a user error.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        serde_saphyr::from_str(CATALOGUE_YAML).expect("the embedded catalogue.yaml is valid")
    })
}

impl Catalogue {
    pub fn get(&self, id: impl AsRef<str>) -> Option<&Entry> {
        let id = id.as_ref();
        self.entries.iter().find(|e| e.id == id)
    }

    /// An entry by id or by a symptom word (`CrashLoopBackOff`), ignoring case.
    pub fn lookup(&self, query: &str) -> Vec<&Entry> {
        let q = query.trim().to_ascii_lowercase();
        if let Some(e) = self.entries.iter().find(|e| e.id == q) {
            return vec![e];
        }
        self.entries
            .iter()
            .filter(|e| e.symptoms.iter().any(|s| s.to_ascii_lowercase() == q))
            .collect()
    }
}

/// The severity the catalogue gives an id (`Info` for an unknown id, which
/// tests rule out).
pub fn severity_of(id: &str) -> Severity {
    catalogue()
        .get(id)
        .map(|e| e.severity)
        .unwrap_or(Severity::Info)
}

/// Fills `{placeholder}`s from `vars`; `{{` and `}}` stand for literal
/// braces. A placeholder without a value is shown as `<name>` so the user
/// sees what to fill in.
pub fn fill(template: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(pos) = rest.find(['{', '}']) {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if tail.starts_with('{')
            && let Some(end) = tail.find('}')
        {
            let key = &tail[1..end];
            match vars.get(key) {
                Some(value) => out.push_str(value),
                None => {
                    out.push('<');
                    out.push_str(key);
                    out.push('>');
                }
            }
            rest = &tail[end + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The placeholders a template uses (for tests of the catalogue).
pub fn placeholders_in(template: &str) -> Vec<String> {
    let cleaned = template.replace("{{", "").replace("}}", "");
    let mut out = Vec::new();
    let mut rest = cleaned.as_str();
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push(rest[start + 1..start + len].to_string());
        rest = &rest[start + len + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_known_and_marks_unknown_placeholders() {
        let vars = BTreeMap::from([
            ("namespace".to_string(), "lab".to_string()),
            ("pod".to_string(), "web-1".to_string()),
        ]);
        assert_eq!(
            fill("kubectl -n {namespace} logs {pod} -c {container}", &vars),
            "kubectl -n lab logs web-1 -c <container>"
        );
        assert_eq!(
            fill("-o jsonpath='{{.status}}' {pod}", &vars),
            "-o jsonpath='{.status}' web-1"
        );
    }

    #[test]
    fn lang_follows_locale() {
        assert_eq!(Lang::from_locale("zh_CN.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("en_US.UTF-8"), Lang::En);
        assert_eq!(Lang::from_locale("C"), Lang::En);
    }

    /// The finding ids SPEC section 4 makes a contract.
    const SPEC_IDS: &[&str] = &[
        "pod-unschedulable",
        "scheduler-silent",
        "pod-not-started",
        "crash-loop",
        "container-config-error",
        "container-cannot-run",
        "oom-killed",
        "image-pull-denied",
        "image-pull-not-found",
        "image-pull-timeout",
        "image-pull-failed",
        "readiness-failing",
        "endpoints-not-ready",
        "selector-mismatch",
        "port-mismatch",
        "service-missing",
        "endpoints-stale",
        "dns-check",
        "controller-not-converging",
        "deployment-not-observed",
        "deployment-missing",
        "pods-not-created",
        "rollout-surge-blocked",
        "progress-deadline-exceeded",
        "managed-deployment-edited",
        "field-conflict",
        "hpa-metrics-unavailable",
        "hpa-at-max",
        "hpa-target-missing",
        "node-not-ready",
        "pdb-blocking",
        "rollout-in-progress",
    ];

    #[test]
    fn the_catalogue_covers_every_spec_id_once_in_both_languages() {
        let cat = catalogue();
        for id in SPEC_IDS {
            assert!(cat.get(id).is_some(), "{id} missing");
        }
        let mut ids: Vec<&str> = cat.entries.iter().map(|e| e.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), cat.entries.len(), "duplicate ids");
        for e in &cat.entries {
            for (what, text) in [
                ("title", &e.title),
                ("cause", &e.cause),
                ("judge", &e.judge),
                ("fix", &e.fix),
                ("verify", &e.verify),
            ] {
                assert!(!text.get(Lang::En).is_empty(), "{} {what} en", e.id);
                assert!(!text.get(Lang::Zh).is_empty(), "{} {what} zh", e.id);
            }
            assert!(!e.check.is_empty(), "{} has no check", e.id);
        }
    }

    #[test]
    fn check_templates_use_known_placeholders_and_only_read() {
        for e in &catalogue().entries {
            for c in &e.check {
                for p in placeholders_in(c) {
                    assert!(
                        PLACEHOLDERS.contains(&p.as_str()),
                        "{}: {{{p}}} in {c}",
                        e.id
                    );
                }
                let words: Vec<&str> = c.split_whitespace().collect();
                for verb in [
                    "apply", "edit", "delete", "patch", "scale", "create", "replace", "label",
                    "annotate",
                ] {
                    assert!(
                        !(words.first() == Some(&"kubectl") && words.contains(&verb)),
                        "{}: {c} writes",
                        e.id
                    );
                }
            }
        }
    }
}
