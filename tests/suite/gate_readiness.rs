//! Ring 1: with `readiness-failing` in `--fail-on`, the gate fails a Pod
//! only once it has been not ready for twice what its probes allow, so a
//! slow-warming model server is not failed at first sight.

use crate::common;

use common::*;
use jiff::SignedDuration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{GatePolicy, readiness_allowance};
use mdiag_core::catalogue::FindingId;
use mdiag_core::model::Snapshot;

/// The readiness-failing demo, its containers started `running_for`
/// seconds ago under a readiness probe of `delay` s, 3 failures x 10 s.
fn started(running_for: i64, delay: i32) -> Snapshot {
    let mut s = load("readiness-failing");
    let now = clock(&s).now;
    for pod in &mut s.objects.pods {
        for c in pod.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
            if let Some(p) = c.readiness_probe.as_mut() {
                p.initial_delay_seconds = Some(delay);
                p.failure_threshold = Some(3);
                p.period_seconds = Some(10);
            }
        }
        let statuses = pod
            .status
            .as_mut()
            .and_then(|st| st.container_statuses.as_mut())
            .unwrap();
        for c in statuses.iter_mut() {
            if let Some(r) = c.state.as_mut().and_then(|st| st.running.as_mut()) {
                r.started_at = Some(Time(now - SignedDuration::from_secs(running_for)));
            }
        }
    }
    s
}

fn readiness_policy() -> GatePolicy {
    GatePolicy {
        fail_on: [FindingId::READINESS_FAILING].into(),
        ..GatePolicy::default()
    }
}

#[test]
fn the_allowance_is_what_the_probes_say() {
    let s = started(0, 120);
    // 120 s delay + 3 failures x 10 s.
    assert_eq!(readiness_allowance(&s.objects.pods[0]), 150.0);
}

#[test]
fn a_warming_server_is_not_failed_before_twice_its_allowance() {
    // 150 s allowed, budget 300 s: at 200 s it is still warming.
    let (d, view) = gate_view(
        &started(200, 120),
        &CrashHistory::default(),
        &readiness_policy(),
    );
    assert!(ids(&d).contains(&"readiness-failing"), "{:?}", ids(&d));
    assert_eq!(failed_on(&d, &view), None);
    // Past the budget it fails, and the report says why.
    let (d, view) = gate_view(
        &started(320, 120),
        &CrashHistory::default(),
        &readiness_policy(),
    );
    let (id, why) = failed_on(&d, &view).expect("failed past the budget");
    assert_eq!(id, "readiness-failing");
    let why = why.expect("a reason");
    assert!(why.contains("past the readiness budget of 300 s"), "{why}");
}
