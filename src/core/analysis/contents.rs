//! What a snapshot holds, counted: the objects per kind and the logs it
//! carries, for a summary of a file (`mdiag mcp`'s `snapshot_summary`).
//! Pure: it reads the snapshot and nothing else.

use crate::model::{Gap, Kind, Origin, Redaction, Snapshot};

/// A snapshot's contents, without the objects themselves.
#[derive(Debug, Clone)]
pub struct Contents {
    pub origin: Origin,
    /// Objects per kind (`Pod`, `Event`...), only the kinds it has, in
    /// the order a trace reads them; kinds mdiag does not read by their
    /// own `kind` field, after them.
    pub objects: Vec<(String, usize)>,
    pub logs: Vec<LogFacts>,
    pub gaps: Vec<Gap>,
    pub redactions: Vec<Redaction>,
}

/// One container log the snapshot holds, without its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFacts {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    /// The previous run's log (`kubectl logs --previous`).
    pub previous: bool,
    /// Cut to the capture's size cap.
    pub truncated: bool,
    /// Non-empty lines held.
    pub lines: usize,
    pub bytes: usize,
}

pub fn contents(snapshot: &Snapshot) -> Contents {
    let o = &snapshot.objects;
    let mut objects: Vec<(String, usize)> = Kind::ALL
        .iter()
        .map(|k| (k.name().to_string(), o.count(*k)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let mut other: std::collections::BTreeMap<String, usize> = Default::default();
    for v in &o.other {
        let kind = v["kind"].as_str().unwrap_or("(no kind)");
        *other.entry(kind.to_string()).or_default() += 1;
    }
    objects.extend(other);
    Contents {
        origin: snapshot.origin.clone(),
        objects,
        logs: snapshot
            .logs
            .iter()
            .map(|l| LogFacts {
                namespace: l.namespace.clone(),
                pod: l.pod.clone(),
                container: l.container.clone(),
                previous: l.previous,
                truncated: l.truncated,
                lines: l.text.lines().filter(|l| !l.trim().is_empty()).count(),
                bytes: l.text.len(),
            })
            .collect(),
        gaps: snapshot.gaps.clone(),
        redactions: snapshot.redactions.clone(),
    }
}

impl Contents {
    /// Every object, all kinds together.
    pub fn total(&self) -> usize {
        self.objects.iter().map(|(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LogRecord;

    #[test]
    fn counts_kinds_it_has_and_logs_without_their_text() {
        let mut s = Snapshot::default();
        s.objects.pods.push(Default::default());
        s.objects.pods.push(Default::default());
        s.objects
            .other
            .push(serde_json::json!({"kind": "ConfigMap"}));
        s.logs.push(LogRecord {
            namespace: "ns".into(),
            pod: "p".into(),
            container: "server".into(),
            previous: true,
            truncated: false,
            text: "one\n\ntwo\n".into(),
        });
        let c = contents(&s);
        assert_eq!(
            c.objects,
            vec![("Pod".to_string(), 2), ("ConfigMap".to_string(), 1)]
        );
        assert_eq!(c.total(), 3);
        assert_eq!(c.logs[0].lines, 2);
        assert_eq!(c.logs[0].bytes, 9);
    }
}
