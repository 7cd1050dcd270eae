//! A crash's own words: the last lines of the failing container's log,
//! added as evidence to the findings about a container that will not run.
//! The log is the previous run's when the snapshot holds it, else the
//! current one (on a real kubelet the crashed run's log is the current
//! log while the container is still terminated).

use serde::Serialize;

use super::{Evidence, Finding};
use crate::catalogue::{FindingId, Message};
use crate::model::{LogRecord, Snapshot};

/// How many lines of a log the evidence keeps (the last ones).
pub const TAIL_LINES: usize = 5;

/// The findings whose cause is usually in the container's own log.
const WITH_LOGS: &[FindingId] = &[
    FindingId::CRASH_LOOP,
    FindingId::OOM_KILLED,
    FindingId::CONTAINER_CANNOT_RUN,
    // How far the model got loading before the kill.
    FindingId::PROBE_KILLS_STARTUP,
    // What the download said before it failed or while it stalls.
    FindingId::INIT_CONTAINER_FAILING,
];

/// Whether a finding's cause is usually in its container's log, so its
/// Pod's log is worth reading (`trace --logs`).
pub fn wants_log(f: &Finding) -> bool {
    WITH_LOGS.contains(&f.id) && f.subject.kind == "Pod"
}

/// The last lines of one container log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogTail {
    pub container: String,
    /// The log of the run before the current one (`kubectl logs --previous`).
    pub previous: bool,
    /// Non-empty lines the held log has.
    pub total_lines: usize,
    /// The held log was cut to the capture's size cap (its start is gone).
    pub truncated: bool,
    /// The last non-empty lines, oldest first, as the container wrote them.
    pub lines: Vec<String>,
}

/// Adds the log tail of each finding's Pod and container, right after the
/// evidence about that Pod (before that of the other Pods it stands for).
pub fn attach(findings: &mut [Finding], snapshot: &Snapshot, namespace: &str) {
    for f in findings.iter_mut().filter(|f| wants_log(f)) {
        let container = f.vars.get("container").map(String::as_str);
        let Some(e) = tail_evidence(&snapshot.logs, namespace, &f.subject.name, container) else {
            continue;
        };
        let at = f
            .evidence
            .iter()
            .position(|x| x.object != e.object)
            .unwrap_or(f.evidence.len());
        f.evidence.insert(at, e);
    }
}

fn tail_evidence(
    logs: &[LogRecord],
    namespace: &str,
    pod: &str,
    container: Option<&str>,
) -> Option<Evidence> {
    let held: Vec<&LogRecord> = logs
        .iter()
        .filter(|l| l.namespace == namespace && l.pod == pod)
        .filter(|l| container.is_none_or(|c| l.container == c))
        .filter(|l| l.text.lines().any(|line| !line.trim().is_empty()))
        .collect();
    let log = held
        .iter()
        .find(|l| l.previous)
        .or_else(|| held.iter().find(|l| !l.previous))?;
    let lines: Vec<&str> = log.text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail: Vec<String> = lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    let mut e = Evidence::labelled(
        format!("pod/{pod}"),
        log_field(&log.container, log.previous),
        tail.last().cloned().unwrap_or_default(),
    );
    e.log = Some(Box::new(LogTail {
        container: log.container.clone(),
        previous: log.previous,
        total_lines: lines.len(),
        truncated: log.truncated,
        lines: tail,
    }));
    Some(e)
}

/// `log of CONTAINER (previous|current)`: the field of log evidence.
pub fn log_field(container: &str, previous: bool) -> Message {
    Message::new(if previous {
        "evidence.log_previous"
    } else {
        "evidence.log_current"
    })
    .arg("container", container)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pod: &str, previous: bool, text: &str) -> LogRecord {
        LogRecord {
            namespace: "ns".into(),
            pod: pod.into(),
            container: "server".into(),
            previous,
            truncated: false,
            text: text.into(),
        }
    }

    #[test]
    fn the_previous_log_is_preferred_and_its_last_lines_kept() {
        let text: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        let logs = vec![record("p", false, "now\n"), record("p", true, &text)];
        let e = tail_evidence(&logs, "ns", "p", Some("server")).unwrap();
        let tail = e.log.unwrap();
        assert!(tail.previous);
        assert_eq!(tail.total_lines, 9);
        assert_eq!(
            tail.lines,
            ["line 5", "line 6", "line 7", "line 8", "line 9"]
        );
        assert_eq!(e.value, "line 9");
        assert_eq!(e.object, "pod/p");
    }

    #[test]
    fn without_a_previous_log_the_current_one_is_the_crash() {
        let logs = vec![record("p", true, "\n\n"), record("p", false, "boom\n")];
        let e = tail_evidence(&logs, "ns", "p", Some("server")).unwrap();
        assert!(!e.log.unwrap().previous);
        assert_eq!(e.value, "boom");
    }

    #[test]
    fn another_pod_or_container_log_is_not_evidence() {
        let logs = vec![record("q", true, "boom\n")];
        assert!(tail_evidence(&logs, "ns", "p", Some("server")).is_none());
        assert!(tail_evidence(&logs, "ns", "q", Some("sidecar")).is_none());
        assert!(tail_evidence(&logs, "other", "q", Some("server")).is_none());
    }
}
