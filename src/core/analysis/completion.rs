//! Run-to-completion Pods (a Job's, or any whose restartPolicy is Never or
//! OnFailure): their ladder ends at `completed` (every container
//! terminated with exit 0) instead of `ready` and `serving`, and a Pod that
//! ended (phase Failed or Succeeded) keeps the moments it reached: its
//! containers' `terminated.startedAt` say when they started.

use k8s_openapi::api::core::v1::{ContainerStateTerminated, Pod};

use super::facts::container_statuses;
use super::ladder::{Moment, Moments, PodState};
use super::{Replicas, Step, StepState};
use crate::catalogue::Message;

/// Its restartPolicy is Never or OnFailure: it runs to an end, as a Job's
/// Pods do (a ReplicaSet's, StatefulSet's or DaemonSet's is always Always).
pub fn runs_to_completion(pod: &Pod) -> bool {
    matches!(
        pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()),
        Some("Never" | "OnFailure")
    )
}

/// In a terminal phase: nothing will restart its containers.
pub fn ended(pod: &Pod) -> bool {
    matches!(phase(pod), Some("Failed" | "Succeeded"))
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref().and_then(|s| s.phase.as_deref())
}

/// The terminated state of every main container, when every one has one
/// (`None` while any runs, waits or has no status yet).
fn all_terminated(pod: &Pod) -> Option<Vec<&ContainerStateTerminated>> {
    let count = pod.spec.as_ref().map_or(0, |s| s.containers.len());
    let statuses = container_statuses(pod);
    if count == 0 || statuses.len() < count {
        return None;
    }
    statuses
        .iter()
        .map(|s| s.state.as_ref()?.terminated.as_ref())
        .collect()
}

/// Reasons a container is terminated with without its process ever
/// having run.
const NEVER_RAN: &[&str] = &["ContainerCannotRun", "StartError"];

/// For a Pod that ended or runs to completion and whose containers are no
/// longer running: it started once every container had run, at the latest
/// `terminated.startedAt`. `None` when this does not apply (the running
/// containers' times are read instead).
pub fn started_after_the_end(pod: &Pod, bound: Moment) -> Option<Moment> {
    if !(ended(pod) || runs_to_completion(pod)) {
        return None;
    }
    let terminated = all_terminated(pod)?;
    let ran = terminated
        .iter()
        .all(|t| t.started_at.is_some() && !NEVER_RAN.contains(&t.reason.as_deref().unwrap_or("")));
    Some(if bound.reached && ran {
        Moment {
            reached: true,
            at: terminated
                .iter()
                .filter_map(|t| t.started_at.as_ref().map(|s| s.0))
                .max(),
        }
    } else {
        Moment::default()
    })
}

/// Every container terminated with exit 0 (phase Succeeded, or a
/// run-to-completion Pod the kubelet has not yet moved there), at the
/// latest `finishedAt`.
pub fn completed(pod: &Pod, started: Moment) -> Moment {
    if !(phase(pod) == Some("Succeeded") || runs_to_completion(pod)) || phase(pod) == Some("Failed")
    {
        return Moment::default();
    }
    match all_terminated(pod) {
        Some(t) if started.reached && t.iter().all(|t| t.exit_code == 0) => Moment {
            reached: true,
            at: t
                .iter()
                .filter_map(|t| t.finished_at.as_ref().map(|f| f.0))
                .max()
                .or(started.at),
        },
        _ => Moment::default(),
    }
}

/// A Pod that completed stands at `completed`.
pub fn last_step(moments: &Moments, otherwise: Step) -> Step {
    if moments.completed.reached {
        Step::Completed
    } else {
        otherwise
    }
}

/// Whether the chain's Pods run to completion: every Pod of it that
/// exists does, and no Service, ModelService or replicating workload is
/// above them (a bare Pod or a Job's).
pub fn ladder_ends_at_completed(pods: &[&Pod]) -> bool {
    !pods.is_empty() && pods.iter().all(|p| runs_to_completion(p))
}

/// A Job's chain, or a bare Pod that runs to completion: its ladder ends
/// at completed and no Service is part of its verdict.
pub fn judged_as_a_run(chain: &crate::chain::Chain) -> bool {
    chain.job.is_some()
        || (chain.bare_pod()
            && ladder_ends_at_completed(&chain.pods.iter().map(|p| p.pod).collect::<Vec<_>>()))
}

/// A bare Pod that runs to completion and has neither ended nor
/// completed: it is still running, as a Job's run reads (`progressing`),
/// whether or not it is Ready (Ready says nothing about finishing). A
/// problem found meanwhile decides as for any Pod.
pub fn still_running(chain: &crate::chain::Chain, pods: &[PodState], problems: bool) -> bool {
    chain.job.is_none()
        && judged_as_a_run(chain)
        && !problems
        && !chain.pods.iter().any(|p| ended(p.pod))
        && !pods.iter().any(|p| p.moments.completed.reached)
}

/// The last rung of a run-to-completion ladder: every current Pod completed.
pub fn completed_step(current: &[&PodState], replicas: &Replicas) -> StepState {
    let n = current
        .iter()
        .filter(|p| p.moments.completed.reached)
        .count();
    let reached = !current.is_empty() && n == current.len();
    StepState {
        step: Step::Completed,
        reached,
        at: if reached {
            current.iter().filter_map(|p| p.moments.completed.at).max()
        } else {
            None
        },
        note: Message::new("note.pods")
            .arg("n", n)
            .arg("current", current.len())
            .arg("desired", replicas.desired),
        unread: None,
        restarted: 0,
    }
}

/// Current Pods that completed, for the state to count as a worker's
/// Ready ones are counted.
pub fn completed_count(pods: &[PodState]) -> i32 {
    pods.iter()
        .filter(|p| p.current && !p.terminating && p.moments.completed.reached)
        .count() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).unwrap()
    }

    fn ended_pod(phase: &str, code: i32, reason: &str) -> Pod {
        pod(serde_json::json!({
            "metadata": {"name": "p", "uid": "u"},
            "spec": {"nodeName": "n", "restartPolicy": "Never", "containers": [{"name": "c"}]},
            "status": {
                "phase": phase,
                "containerStatuses": [{
                    "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                    "state": {"terminated": {
                        "exitCode": code, "reason": reason,
                        "startedAt": "2026-11-28T09:00:04Z", "finishedAt": "2026-11-28T09:02:08Z"
                    }}
                }]
            }
        }))
    }

    const BOUND: Moment = Moment {
        reached: true,
        at: None,
    };

    #[test]
    fn an_ended_pod_started_when_its_terminated_containers_did() {
        let p = ended_pod("Failed", 137, "OOMKilled");
        let started = started_after_the_end(&p, BOUND).unwrap();
        assert!(started.reached);
        assert_eq!(started.at.unwrap().to_string(), "2026-11-28T09:00:04Z");
        assert!(
            !completed(&p, started).reached,
            "a failed run did not complete"
        );
        // Never run: not started.
        let p = ended_pod("Failed", 128, "StartError");
        assert!(!started_after_the_end(&p, BOUND).unwrap().reached);
    }

    #[test]
    fn a_succeeded_pod_completed_at_its_last_finish() {
        let p = ended_pod("Succeeded", 0, "Completed");
        let started = started_after_the_end(&p, BOUND).unwrap();
        let done = completed(&p, started);
        assert!(done.reached);
        assert_eq!(done.at.unwrap().to_string(), "2026-11-28T09:02:08Z");
    }

    #[test]
    fn a_running_replica_is_not_read_this_way() {
        let mut p = ended_pod("Running", 1, "Error");
        p.spec.as_mut().unwrap().restart_policy = Some("Always".into());
        assert!(started_after_the_end(&p, BOUND).is_none());
        assert!(!completed(&p, BOUND).reached);
    }
}
