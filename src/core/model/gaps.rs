//! What a snapshot does not hold as it was: what could not be read (gaps)
//! and where values were replaced (redactions).

use serde::{Deserialize, Serialize};

/// Values replaced in one place of a snapshot: where (an object's field or
/// a container's log), by which rule (the name its marker carries,
/// `<redacted:RULE>`), and how many times. Never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RedactionEntry")]
pub struct Redaction {
    pub path: String,
    pub rule: String,
    pub count: u32,
}

/// A redaction as files hold it: format version 1 listed paths only.
#[derive(Deserialize)]
#[serde(untagged)]
enum RedactionEntry {
    Path(String),
    Full(RedactionFields),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedactionFields {
    path: String,
    rule: String,
    #[serde(default = "one")]
    count: u32,
}

fn one() -> u32 {
    1
}

impl From<RedactionEntry> for Redaction {
    fn from(entry: RedactionEntry) -> Self {
        match entry {
            RedactionEntry::Full(f) => Redaction {
                path: f.path,
                rule: f.rule,
                count: f.count,
            },
            // Version 1 redacted three things, each recognisable by its path.
            RedactionEntry::Path(path) => {
                let rule = if path.contains("last-applied-configuration") {
                    "last-applied"
                } else if path.contains("env[name=") && path.ends_with("].value") {
                    "env-name"
                } else {
                    "redact"
                };
                Redaction {
                    path,
                    rule: rule.to_string(),
                    count: 1,
                }
            }
        }
    }
}

/// Something that could not be read, and why. A forbidden list is not an
/// empty list: rules that need it stay silent and the gap is reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The resource (plural, as kubectl names it), e.g. `pods` or `pods/log`.
    pub resource: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default = "default_verb")]
    pub verb: String,
    /// The object, for a `get` of one name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub reason: String,
    /// The command that would fill the gap, when one would (a kind a
    /// kubectl dump was not asked for: the `kubectl get` that adds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_with: Option<crate::command::Command>,
    /// The namespaces where the kind was read after all, for a gap with
    /// no namespace: a kubectl dump holds a kind only where it has
    /// objects, so the kind is unknown everywhere else
    /// (docs/contract.md#basis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_in: Vec<String>,
    /// The kubeconfig contexts (clusters) it was seen in, for a triage
    /// over several (`--context a,b`); empty for a read of one cluster
    /// or a file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<String>,
}

fn default_verb() -> String {
    "list".into()
}

impl Gap {
    /// The resource of a gap that stands for everything of a cluster: it
    /// could not be reached, or refused the first read.
    pub const EVERYTHING: &'static str = "*";

    /// A cluster (kubeconfig `context`) of which nothing could be read,
    /// and why: a triage over several clusters lists it, never counts it
    /// healthy.
    pub fn cluster_unread(context: &str, reason: String) -> Gap {
        Gap {
            resource: Self::EVERYTHING.to_string(),
            namespace: None,
            verb: "list".to_string(),
            name: None,
            reason,
            complete_with: None,
            read_in: Vec::new(),
            contexts: vec![context.to_string()],
        }
    }

    /// Whether this gap is [`Gap::cluster_unread`]'s.
    pub fn is_cluster_unread(&self) -> bool {
        self.resource == Self::EVERYTHING && !self.contexts.is_empty()
    }

    /// The same gap seen in several contexts: equal but for them.
    pub fn same_but_context(&self, other: &Gap) -> bool {
        Gap {
            contexts: Vec::new(),
            ..self.clone()
        } == Gap {
            contexts: Vec::new(),
            ..other.clone()
        }
    }

    /// Why a kind a kubectl dump does not hold is a gap.
    pub const NOT_IN_DUMP: &'static str =
        "not in the file (a kubectl dump holds only the kinds it was asked for)";

    /// Why an InferenceService in KServe's Knative mode is not walked: the
    /// Knative Service its predictor runs in is not in the input.
    pub const KNATIVE_PREDICTOR_ABSENT: &'static str = "its predictor runs in a Knative Service (KServe's Knative mode), which is not in the input";

    /// This gap as it bears on `namespace` alone: a kind a dump holds in
    /// other namespaces only is a gap of `namespace`, completed by the
    /// `kubectl get` of that namespace. Other gaps are returned unchanged.
    pub fn in_namespace(&self, namespace: &str) -> Gap {
        if self.read_in.is_empty() || self.namespace.is_some() {
            return self.clone();
        }
        let complete_with = self.complete_with.as_ref().map(|_| {
            crate::command::Command::new(
                [
                    "kubectl",
                    "get",
                    self.resource.as_str(),
                    "-n",
                    namespace,
                    "-o",
                    "yaml",
                ]
                .map(str::to_string),
            )
        });
        Gap {
            namespace: Some(namespace.to_string()),
            complete_with,
            read_in: Vec::new(),
            ..self.clone()
        }
    }

    /// Whether this gap hides objects of `resource` in `namespace`.
    pub fn hides(&self, resource: &str, namespace: &str) -> bool {
        let resource_matches = self.resource == resource
            || self.resource.split('.').next() == Some(resource)
            || self.resource == Self::EVERYTHING;
        let namespace_matches = match &self.namespace {
            None => !self.read_in.iter().any(|read| read == namespace),
            Some(ns) => ns == namespace,
        };
        resource_matches && namespace_matches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_hides_only_its_resource_and_namespace() {
        let gap = Gap {
            contexts: Vec::new(),
            resource: "pods".into(),
            namespace: Some("lab".into()),
            verb: "list".into(),
            name: None,
            reason: "forbidden".into(),
            complete_with: None,
            read_in: Vec::new(),
        };
        assert!(gap.hides("pods", "lab"));
        assert!(!gap.hides("pods", "other"));
        assert!(!gap.hides("services", "lab"));
        let cluster_wide = Gap {
            namespace: None,
            ..gap
        };
        assert!(cluster_wide.hides("pods", "anything"));
        let read_in_one = Gap {
            read_in: vec!["lab".into()],
            reason: Gap::NOT_IN_DUMP.into(),
            ..cluster_wide
        };
        assert!(!read_in_one.hides("pods", "lab"));
        assert!(read_in_one.hides("pods", "kube-system"));
        let there = read_in_one.in_namespace("kube-system");
        assert_eq!(there.namespace.as_deref(), Some("kube-system"));
        assert!(there.read_in.is_empty());
        assert!(!there.hides("pods", "lab"));
    }
}
