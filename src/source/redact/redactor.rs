//! The [`Redactor`]: the user's `--redact` patterns and whether the
//! default shapes apply, run over objects and logs, and the tally of what
//! it replaced where.

use std::collections::HashMap;

use regex::{Captures, Regex};
use serde_json::Value;

use super::shapes::{MARKER_PREFIX, marker, redact_shapes};
use super::walk::object_label;
use mdiag_core::model::{Gap, LogRecord, Redaction};

#[derive(Clone)]
pub struct Redactor {
    /// Whether the credential shapes of [`RULES`](super::RULES) are replaced.
    defaults: bool,
    patterns: Vec<Regex>,
}

impl Default for Redactor {
    /// The default shapes and no pattern of the user's.
    fn default() -> Self {
        Redactor {
            defaults: true,
            patterns: Vec::new(),
        }
    }
}

/// A `--redact` pattern that is not a valid regular expression.
#[derive(Debug, thiserror::Error)]
#[error("{}", mdiag_core::catalogue::Localized::message(self).en())]
pub struct PatternError {
    pub pattern: String,
    pub cause: regex::Error,
}

impl mdiag_core::catalogue::Localized for PatternError {
    fn message(&self) -> mdiag_core::catalogue::Message {
        mdiag_core::catalogue::Message::new("error.redact_pattern")
            .arg("pattern", format!("{:?}", self.pattern))
            .arg("detail", one_line(&self.cause.to_string()))
    }
}

/// The regex crate's reason on one line: it draws the pattern with a
/// caret under the fault, then `error: REASON`.
fn one_line(text: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| text.lines().next().unwrap_or_default().trim())
        .to_string()
}

/// Redactions in the order first made, one entry per path and rule.
#[derive(Default)]
pub(crate) struct Tally {
    list: Vec<Redaction>,
    index: HashMap<(String, String), usize>,
}

impl Tally {
    pub(crate) fn add(&mut self, path: &str, rule: &str, count: u32) {
        let key = (path.to_string(), rule.to_string());
        match self.index.get(&key) {
            Some(&i) => self.list[i].count += count,
            None => {
                self.index.insert(key, self.list.len());
                self.list.push(Redaction {
                    path: path.to_string(),
                    rule: rule.to_string(),
                    count,
                });
            }
        }
    }
}

/// The rule name of the `n`th `--redact` pattern (from 1). The pattern
/// itself is not written: it may hold the very value it removes.
fn user_rule(n: usize) -> String {
    format!("redact-{n}")
}

impl Redactor {
    /// `patterns` are the user's `--redact` expressions; `defaults` turns
    /// on the credential shapes (off with `--no-default-redaction`).
    pub fn new(patterns: &[String], defaults: bool) -> Result<Self, PatternError> {
        let patterns = patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|cause| PatternError {
                    pattern: p.clone(),
                    cause,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Redactor { defaults, patterns })
    }

    /// Redacts objects and logs in place; returns where, by which rule and
    /// how many times.
    pub fn redact(&self, objects: &mut [Value], logs: &mut [LogRecord]) -> Vec<Redaction> {
        let mut tally = Tally::default();
        for object in objects.iter_mut() {
            let label = object_label(object);
            let kind = object["kind"].as_str().unwrap_or("").to_string();
            let mut at = String::new();
            self.walk(object, &mut at, &label, &kind, false, &mut tally);
        }
        for log in logs.iter_mut() {
            let path = format!(
                "pods/log/{}/{}/{}{}",
                log.namespace,
                log.pod,
                log.container,
                if log.previous { " (previous)" } else { "" }
            );
            self.text(&mut log.text, true, &path, &mut tally);
        }
        tally.list
    }

    /// Gaps as a file keeps them: each reason (an API's error text, which
    /// may quote a URL with its password) searched for shapes.
    pub fn redact_gaps(&self, gaps: &mut [Gap]) -> Vec<Redaction> {
        let mut tally = Tally::default();
        for (i, gap) in gaps.iter_mut().enumerate() {
            self.text(
                &mut gap.reason,
                true,
                &format!("gaps[{i}]: reason"),
                &mut tally,
            );
        }
        tally.list
    }

    /// Whether the credential shapes are replaced (not `--no-default-redaction`).
    pub(crate) fn defaults(&self) -> bool {
        self.defaults
    }

    /// Replaces in one string: the default shapes where `shapes` says
    /// they apply (and defaults are on), the user's patterns everywhere.
    pub(crate) fn text(&self, s: &mut String, shapes: bool, path: &str, tally: &mut Tally) {
        self.replace(s, shapes, &mut |rule, count| tally.add(path, rule, count));
    }

    /// [`Redactor::text`] without a tally: `found` hears each rule that
    /// replaced something, with its count.
    pub(crate) fn replace(&self, s: &mut String, shapes: bool, found: &mut dyn FnMut(&str, u32)) {
        if shapes && self.defaults {
            for (rule, count) in redact_shapes(s) {
                found(rule, count);
            }
        }
        for (i, p) in self.patterns.iter().enumerate() {
            if !p.is_match(s) {
                continue;
            }
            let rule = user_rule(i + 1);
            let mark = marker(&rule);
            let mut count = 0;
            let replaced = p.replace_all(s, |caps: &Captures| {
                let whole = caps.get(0).map(|m| m.as_str()).unwrap_or_default();
                // An empty match or a marker already there is left alone.
                if whole.is_empty() || whole.contains(MARKER_PREFIX) {
                    whole.to_string()
                } else {
                    count += 1;
                    mark.clone()
                }
            });
            if count > 0 {
                *s = replaced.into_owned();
                found(&rule, count);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Redactor::new(&["(".into()], true).err().unwrap();
        assert!(err.to_string().contains("--redact \"(\""));
    }

    #[test]
    fn counts_add_up_per_path_and_rule() {
        let mut logs = vec![LogRecord {
            namespace: "lab".into(),
            pod: "p".into(),
            container: "c".into(),
            previous: false,
            truncated: false,
            text: "password=a\npassword=b\nAuthorization: Bearer abcdef123456\n".into(),
        }];
        let found = Redactor::new(&[], true).unwrap().redact(&mut [], &mut logs);
        assert_eq!(
            found,
            vec![
                Redaction {
                    path: "pods/log/lab/p/c".into(),
                    rule: "bearer".into(),
                    count: 1
                },
                Redaction {
                    path: "pods/log/lab/p/c".into(),
                    rule: "credential".into(),
                    count: 2
                },
            ]
        );
    }
}
