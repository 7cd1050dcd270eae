//! The crashes a gate has seen, one record per dead container, so that a
//! loop which repeats itself exactly can be called at its second crash
//! instead of after `--max-restarts`. A Pod's status shows at most two
//! runs (the current and the last), and the kubelet keeps one dead
//! container per name, so the memory has to be the gate's: it is filled
//! moment by moment, each crash with the last line of its own log.
//!
//! Pure: the caller reads the logs [`CrashHistory::unseen`] asks for and
//! hands them to [`CrashHistory::record`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ContainerStateTerminated;

use super::facts;
use crate::catalogue::{Arg, Message};
use crate::chain::Chain;
use crate::model::LogRecord;

/// One crashed run of a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// The runtime's id of the dead container: one per run.
    pub container_id: String,
    pub exit_code: i32,
    pub reason: String,
    /// The last non-empty line of the run's log; `None` when it could not
    /// be read (then the crash cannot be compared).
    pub last_line: Option<String>,
}

/// A crash not yet recorded, and which log read returns its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnseenCrash {
    pub namespace: String,
    pub pod: String,
    pub pod_uid: String,
    pub container: String,
    /// `kubectl logs --previous`: the crash is the container's last state,
    /// not its current one.
    pub previous: bool,
    crash: Crash,
}

/// Two crashes of one container that are the same crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub exit_code: i32,
    pub reason: String,
    pub last_line: String,
}

impl Repeat {
    /// Why the gate stops waiting, for its report.
    pub fn why(&self, container: &str) -> Message {
        let reason: Arg = if self.reason.is_empty() {
            "".into()
        } else {
            Message::new("gate.repeat_reason")
                .arg("reason", &self.reason)
                .into()
        };
        Message::new("gate.repeat")
            .arg("container", container)
            .arg("code", self.exit_code)
            .arg("reason", reason)
            .arg("line", format!("{:?}", self.last_line))
    }
}

/// Every crash seen, per Pod UID and container, oldest first.
#[derive(Debug, Clone, Default)]
pub struct CrashHistory {
    seen: BTreeMap<(String, String), Vec<Crash>>,
}

impl CrashHistory {
    /// The crashes of the chain's current-revision Pods this history has
    /// not recorded: a terminated state is read with the current log, a
    /// terminated last state with the previous one.
    pub fn unseen(&self, chain: &Chain) -> Vec<UnseenCrash> {
        let mut out = Vec::new();
        for p in chain.current_pods() {
            let pod = p.pod;
            let uid = facts::uid(&pod.metadata).to_string();
            for s in facts::all_container_statuses(pod) {
                let now = s.state.as_ref().and_then(|st| st.terminated.as_ref());
                let last = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
                for (t, previous) in [(last, true), (now, false)] {
                    let Some(crash) = t.and_then(crash_of) else {
                        continue;
                    };
                    let key = (uid.clone(), s.name.clone());
                    let known = self
                        .seen
                        .get(&key)
                        .is_some_and(|v| v.iter().any(|c| c.container_id == crash.container_id));
                    if !known {
                        out.push(UnseenCrash {
                            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
                            pod: facts::name(&pod.metadata).to_string(),
                            pod_uid: uid.clone(),
                            container: s.name.clone(),
                            previous,
                            crash,
                        });
                    }
                }
            }
        }
        out
    }

    /// Records the crashes `unseen` listed, each with the last line of the
    /// log read for it (if `logs` holds it).
    pub fn record(&mut self, unseen: Vec<UnseenCrash>, logs: &[LogRecord]) {
        for u in unseen {
            let mut crash = u.crash;
            crash.last_line = logs
                .iter()
                .find(|l| {
                    l.namespace == u.namespace
                        && l.pod == u.pod
                        && l.container == u.container
                        && l.previous == u.previous
                })
                .and_then(|l| last_line(&l.text));
            let runs = self.seen.entry((u.pod_uid, u.container)).or_default();
            if !runs.iter().any(|c| c.container_id == crash.container_id) {
                runs.push(crash);
            }
        }
    }

    /// The container's last two crashes, when they are the same crash: the
    /// same exit code, reason and last log line (both lines read).
    pub fn repeats(&self, pod_uid: &str, container: &str) -> Option<Repeat> {
        let runs = self
            .seen
            .get(&(pod_uid.to_string(), container.to_string()))?;
        let [.., a, b] = runs.as_slice() else {
            return None;
        };
        let line = b.last_line.as_ref()?;
        let same = a.exit_code == b.exit_code
            && a.reason == b.reason
            && a.last_line.as_ref().map(|l| comparable(l)) == Some(comparable(line));
        same.then(|| Repeat {
            exit_code: b.exit_code,
            reason: b.reason.clone(),
            last_line: line.clone(),
        })
    }
}

/// A dead run with a container id (without one it cannot be told apart
/// from the next run).
fn crash_of(t: &ContainerStateTerminated) -> Option<Crash> {
    let id = t.container_id.as_deref().filter(|id| !id.is_empty())?;
    Some(Crash {
        container_id: id.to_string(),
        exit_code: t.exit_code,
        reason: t.reason.clone().unwrap_or_default(),
        last_line: None,
    })
}

fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
        .map(str::to_string)
}

/// A log line without a leading RFC 3339 timestamp, which differs between
/// any two runs and says nothing about the cause. Nothing else is
/// normalised: `retry 1 of 3` and `retry 2 of 3` are different crashes.
fn comparable(line: &str) -> &str {
    let trimmed = line.trim();
    match trimmed.split_once(char::is_whitespace) {
        Some((first, rest)) if first.parse::<jiff::Timestamp>().is_ok() => rest.trim_start(),
        _ => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crash(id: &str, code: i32, line: Option<&str>) -> Crash {
        Crash {
            container_id: id.into(),
            exit_code: code,
            reason: "Error".into(),
            last_line: line.map(str::to_string),
        }
    }

    fn history(runs: Vec<Crash>) -> CrashHistory {
        let mut h = CrashHistory::default();
        h.seen.insert(("uid".into(), "server".into()), runs);
        h
    }

    #[test]
    fn two_identical_crashes_in_a_row_repeat() {
        let h = history(vec![
            crash("c1", 1, Some("FATAL missing env MODEL_PATH")),
            crash("c2", 1, Some("FATAL missing env MODEL_PATH")),
        ]);
        let r = h.repeats("uid", "server").expect("a repeat");
        assert_eq!(r.exit_code, 1);
        assert!(
            r.why("server")
                .en()
                .contains("FATAL missing env MODEL_PATH")
        );
    }

    #[test]
    fn crashes_that_differ_or_cannot_be_compared_do_not_repeat() {
        // One crash is not a repetition.
        let one = history(vec![crash("c1", 1, Some("FATAL x"))]);
        assert_eq!(one.repeats("uid", "server"), None);
        // A different exit code, or a different last line.
        let code = history(vec![
            crash("c1", 1, Some("FATAL x")),
            crash("c2", 2, Some("FATAL x")),
        ]);
        assert_eq!(code.repeats("uid", "server"), None);
        let line = history(vec![
            crash("c1", 1, Some("retry 1 of 3 failed")),
            crash("c2", 1, Some("retry 2 of 3 failed")),
        ]);
        assert_eq!(line.repeats("uid", "server"), None);
        // A log that could not be read keeps the restart budget.
        let unread = history(vec![crash("c1", 1, None), crash("c2", 1, None)]);
        assert_eq!(unread.repeats("uid", "server"), None);
        // Only the last two count: an old different crash does not matter,
        // a new different one breaks the run.
        let broken = history(vec![
            crash("c1", 1, Some("FATAL x")),
            crash("c2", 1, Some("FATAL x")),
            crash("c3", 1, Some("FATAL y")),
        ]);
        assert_eq!(broken.repeats("uid", "server"), None);
    }

    #[test]
    fn a_leading_timestamp_is_not_part_of_the_crash() {
        let h = history(vec![
            crash(
                "c1",
                1,
                Some("2026-12-01T10:00:01Z FATAL missing env MODEL_PATH"),
            ),
            crash(
                "c2",
                1,
                Some("2026-12-01T10:00:12Z FATAL missing env MODEL_PATH"),
            ),
        ]);
        assert!(h.repeats("uid", "server").is_some());
        assert_eq!(comparable("2026-12-01T10:00:12.123456Z  x y"), "x y");
        assert_eq!(comparable("not-a-time x"), "not-a-time x");
    }
}
