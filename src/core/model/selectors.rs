//! Label selectors as kubectl's `-l` takes them.

use std::collections::BTreeMap;

/// A label selector as kubectl's `-l` takes it: `k=v`, `k==v`, `k!=v`,
/// `k` (exists) and `!k` (absent), joined by commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelFilter(Vec<LabelRequirement>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

#[derive(Debug, thiserror::Error)]
#[error("{}", crate::catalogue::Localized::message(self).en())]
pub struct SelectorError(pub String);

impl crate::catalogue::Localized for SelectorError {
    fn message(&self) -> crate::catalogue::Message {
        crate::catalogue::Message::new("error.selector").arg("given", format!("{:?}", self.0))
    }
}

impl LabelFilter {
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let err = || SelectorError(text.to_string());
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(err());
            }
            let requirement = if let Some((k, v)) = part.split_once("!=") {
                LabelRequirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                LabelRequirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some(k) = part.strip_prefix('!') {
                LabelRequirement::Absent(k.trim().into())
            } else {
                LabelRequirement::Exists(part.into())
            };
            let key = match &requirement {
                LabelRequirement::Equals(k, _)
                | LabelRequirement::NotEquals(k, _)
                | LabelRequirement::Exists(k)
                | LabelRequirement::Absent(k) => k,
            };
            if key.is_empty() || key.contains(['(', ')', ' ']) {
                return Err(err());
            }
            out.push(requirement);
        }
        Ok(LabelFilter(out))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::Absent(k) => !labels.contains_key(k),
        })
    }
}

#[cfg(test)]
mod selector_tests {
    use super::*;

    #[test]
    fn selectors_read_as_kubectl_writes_them() {
        let labels = BTreeMap::from([
            ("app".to_string(), "web".to_string()),
            ("tier".to_string(), "gpu".to_string()),
        ]);
        let yes = [
            "app=web",
            "app==web,tier",
            "tier!=cpu",
            "!missing",
            "app=web,!missing",
        ];
        for s in yes {
            assert!(LabelFilter::parse(s).unwrap().matches(&labels), "{s}");
        }
        for s in ["app=api", "missing", "!tier", "tier!=gpu"] {
            assert!(!LabelFilter::parse(s).unwrap().matches(&labels), "{s}");
        }
        for bad in ["", "a=b,", "=v", "app in (a,b)"] {
            assert!(LabelFilter::parse(bad).is_err(), "{bad:?}");
        }
    }
}
