//! `init-container-failing` on a model download in an init container
//! (fixtures/cases/init-download-failing.yaml), changed one fact at a time:
//! a download still running far past what it took in the other Pod of the
//! revision (stalled), one running no longer than that took (a download in
//! progress), and the same container as a sidecar (`restartPolicy:
//! Always`), which is judged as an app container.

use crate::common::{self, diagnose, ids};
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use mdiag_core::analysis::Diagnosis;
use mdiag_core::model::Snapshot;

const CASE: &str = "fixtures/cases/init-download-failing.yaml";

fn case() -> Snapshot {
    common::load_file(CASE)
}

fn detail_of(d: &Diagnosis, id: &str) -> Vec<String> {
    d.findings
        .iter()
        .filter(|f| f.id.as_str() == id)
        .map(|f| f.detail.en())
        .collect()
}

fn init_status(pod: &mut Pod) -> &mut k8s_openapi::api::core::v1::ContainerStatus {
    &mut pod
        .status
        .as_mut()
        .unwrap()
        .init_container_statuses
        .as_mut()
        .unwrap()[0]
}

/// The first Pod's download completed in `took`; the second's has run for
/// `running` and is still running.
fn one_done_one_running(took: SignedDuration, running: SignedDuration) -> Snapshot {
    let mut s = case();
    let at = common::clock(&s).now;
    let (done, busy) = s.objects.pods.split_at_mut(1);
    let d = init_status(&mut done[0]);
    d.restart_count = 0;
    d.last_state = None;
    d.state = Some(ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: 0,
            reason: Some("Completed".into()),
            started_at: Some(Time(at - SignedDuration::from_mins(20))),
            finished_at: Some(Time(at - SignedDuration::from_mins(20) + took)),
            ..ContainerStateTerminated::default()
        }),
        ..ContainerState::default()
    });
    let b = init_status(&mut busy[0]);
    b.restart_count = 0;
    b.last_state = None;
    b.state = Some(ContainerState {
        running: Some(ContainerStateRunning {
            started_at: Some(Time(at - running)),
        }),
        ..ContainerState::default()
    });
    s
}

#[test]
fn a_download_that_keeps_failing_names_the_container_its_exit_and_what_it_fetches() {
    let d = diagnose(&case());
    let lead = &d.findings[d.verdict.lead.unwrap()];
    assert_eq!(lead.id.as_str(), "init-container-failing");
    assert_eq!(
        lead.detail.en(),
        "init container model-download exits with code 1 (Error), 5 restarts; the app containers wait for it"
    );
    let values: Vec<(&str, &str)> = lead
        .evidence
        .iter()
        .map(|e| (e.field.as_str(), e.value.as_str()))
        .collect();
    assert!(
        values.contains(&(
            "spec.initContainers[model-download].args",
            "--source=s3://models-prod/tiny-llama-1.1b/ --dest=/mnt/models"
        )),
        "{values:#?}"
    );
    assert!(!ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
    assert!(!ids(&d).contains(&"pod-not-started"), "{:?}", ids(&d));
    assert_eq!(
        lead.vars.get("container").map(String::as_str),
        Some("model-download")
    );
}

#[test]
fn a_download_running_far_past_its_time_elsewhere_is_stalled() {
    let s = one_done_one_running(SignedDuration::from_secs(90), SignedDuration::from_mins(12));
    let d = diagnose(&s);
    assert_eq!(
        detail_of(&d, "init-container-failing"),
        [
            "init container model-download has run for 12m0s; it completed in 1m30s in the other Pods of its revision"
        ]
    );
}

#[test]
fn a_download_still_within_its_time_elsewhere_is_progress() {
    let s = one_done_one_running(SignedDuration::from_mins(10), SignedDuration::from_mins(12));
    let d = diagnose(&s);
    assert!(
        !ids(&d).contains(&"init-container-failing"),
        "{:?}",
        ids(&d)
    );
}

#[test]
fn a_sidecar_is_an_app_container_not_an_init_step() {
    let mut s = case();
    for pod in &mut s.objects.pods {
        pod.spec.as_mut().unwrap().init_containers.as_mut().unwrap()[0].restart_policy =
            Some("Always".into());
    }
    let d = diagnose(&s);
    assert!(
        !ids(&d).contains(&"init-container-failing"),
        "{:?}",
        ids(&d)
    );
    assert!(ids(&d).contains(&"crash-loop"), "{:?}", ids(&d));
}
