//! Ring 1: the gate calls a crash loop that repeats itself exactly at its
//! second crash, and keeps the restart budget for one whose crashes differ
//! or whose words could not be read. Each test plays two moments of the
//! crash-loop demo, as the gate's watch would see them.

use crate::common;

use common::*;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::GatePolicy;
use mdiag_core::model::{LogRecord, Snapshot};

const FATAL: &str = "FATAL missing env MODEL_PATH";

/// The default restart budget, failing on crash loops only (the demo's
/// Deployment is also past its progress deadline, which fails at once).
fn crash_loops_only() -> GatePolicy {
    GatePolicy {
        fail_on: [mdiag_core::catalogue::FindingId::CRASH_LOOP].into(),
        ..GatePolicy::default()
    }
}

/// The crash-loop demo at its `run`-th crash: every crash-looping
/// container restarted `run` times, its last run dead with its own id.
fn at_crash(run: i32) -> Snapshot {
    let mut s = load("crash-loop");
    for pod in &mut s.objects.pods {
        let statuses = pod
            .status
            .as_mut()
            .and_then(|st| st.container_statuses.as_mut())
            .unwrap();
        for c in statuses.iter_mut() {
            let Some(t) = c.last_state.as_mut().and_then(|l| l.terminated.as_mut()) else {
                continue;
            };
            c.restart_count = run;
            t.container_id = Some(format!("containerd://{}-run-{run}", c.name));
        }
    }
    s
}

/// What the kubelet answers for each crashed run's log: its last line.
fn logs_saying(s: &Snapshot, line: &str) -> Vec<LogRecord> {
    s.objects
        .pods
        .iter()
        .flat_map(|p| {
            let pod = p.metadata.name.clone().unwrap();
            let namespace = p.metadata.namespace.clone().unwrap();
            p.spec
                .iter()
                .flat_map(|spec| spec.containers.iter())
                .map(move |c| LogRecord {
                    namespace: namespace.clone(),
                    pod: pod.clone(),
                    container: c.name.clone(),
                    previous: true,
                    truncated: false,
                    text: format!("loading model\n{line}\n"),
                })
        })
        .collect()
}

/// Watches the demo through its first and second crash, the logs saying
/// `first` then `second`; returns what the gate decided at each.
fn two_crashes(
    first: Option<&str>,
    second: Option<&str>,
) -> [Option<(&'static str, Option<String>)>; 2] {
    let policy = crash_loops_only();
    let mut crashes = CrashHistory::default();
    let mut out = [None, None];
    for (i, (run, line)) in [(1, first), (2, second)].into_iter().enumerate() {
        let s = at_crash(run);
        let target = mdiag_core::model::TargetSpec::parse("chart-demo", None).unwrap();
        let chain = mdiag_core::chain::walk(&s, &target, NAMESPACE, None).unwrap();
        let unseen = crashes.unseen(&chain);
        assert!(!unseen.is_empty(), "crash {run} is new to the gate");
        let logs = line.map(|l| logs_saying(&s, l)).unwrap_or_default();
        crashes.record(unseen, &logs);
        let (d, view) = gate_view(&s, &crashes, &policy);
        out[i] = failed_on(&d, &view);
    }
    out
}

#[test]
fn a_loop_that_repeats_itself_fails_at_its_second_crash() {
    let [first, second] = two_crashes(Some(FATAL), Some(FATAL));
    // One crash is not yet a loop the gate calls: 1 restart of 3.
    assert_eq!(first, None);
    let (id, why) = second.expect("failed at the second crash");
    assert_eq!(id, "crash-loop");
    let why = why.expect("the report says why");
    assert!(why.contains("crashed twice in a row the same way"), "{why}");
    assert!(why.contains(FATAL), "{why}");
}

#[test]
fn a_loop_whose_crashes_differ_keeps_the_restart_budget() {
    let [_, second] = two_crashes(
        Some("waiting for shard 1 of 4"),
        Some("waiting for shard 2 of 4"),
    );
    assert_eq!(second, None);
    // Words that could not be read cannot be compared either.
    let [_, second] = two_crashes(None, None);
    assert_eq!(second, None);
    // Past the budget the gate fails whatever the words, and needs no reason.
    let s = at_crash(3);
    let (d, view) = gate_view(&s, &CrashHistory::default(), &crash_loops_only());
    assert_eq!(failed_on(&d, &view), Some(("crash-loop", None)));
}

#[test]
fn a_crash_already_recorded_is_not_read_again() {
    let s = at_crash(1);
    let target = mdiag_core::model::TargetSpec::parse("chart-demo", None).unwrap();
    let chain = mdiag_core::chain::walk(&s, &target, NAMESPACE, None).unwrap();
    let mut crashes = CrashHistory::default();
    let unseen = crashes.unseen(&chain);
    assert!(unseen.iter().all(|u| u.previous), "{unseen:?}");
    crashes.record(unseen, &logs_saying(&s, FATAL));
    assert!(crashes.unseen(&chain).is_empty());
}
