//! A workload judged from its own status, when the objects below it are
//! not in the input (a bare `kubectl get deploy -o yaml`): the verdict's
//! `workload-status` basis (docs/contract.md#basis). The stages follow the
//! order in which `kubectl rollout status` checks them (its
//! `DeploymentStatusViewer`, `StatefulSetStatusViewer` and
//! `DaemonSetStatusViewer`), kstatus's for a ReplicaSet, and the Job
//! controller's conditions for a Job, so that mdiag answers what they
//! answer on the same object.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use serde::Serialize;

use crate::chain::{Chain, PodSet};

/// What a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The Service's EndpointSlices were read: ready endpoints are counted.
    Endpoints,
    /// The Pods were read but no Service fronts them, or Services were not
    /// read: Ready Pods are counted.
    Pods,
    /// Only the workload object is there: its own status is read.
    WorkloadStatus,
}

/// Where a rollout stands by its workload's status, in the order the
/// peers check it; the first that holds is the stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// `metadata.generation` is ahead of `status.observedGeneration`.
    NotObserved,
    /// Progressing=False with ProgressDeadlineExceeded.
    DeadlineExceeded,
    /// Fewer replicas run the current template than are desired.
    Updating,
    /// Replicas of an older template are still there.
    OldPending,
    /// Updated replicas are not all available (ready, for a StatefulSet).
    Unavailable,
    /// A StatefulSet whose Pods are ready but not all at the update revision.
    RevisionPending,
    /// Every desired replica runs the current template and is available;
    /// a Job: its required completions succeeded.
    Complete,
    /// A Job started and not yet complete or failed.
    Running,
    /// A Job with `spec.suspend`: it starts no Pod until resumed.
    Suspended,
    /// A Job the controller failed (Failed or FailureTarget).
    Failed,
}

/// A workload's status, as its verdict is decided on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusReading {
    /// `Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`, `Job`, or
    /// `InferenceService` when KServe says its spec gets no Deployment,
    /// `KnativeService` for one read alone (its counts are of Revisions).
    pub kind: &'static str,
    pub stage: Stage,
    /// Desired replicas; a Job's required completions.
    pub desired: i32,
    /// Replicas of the current template (a ReplicaSet's are all current);
    /// a Job's succeeded Pods.
    pub updated: i32,
    /// Available replicas (a StatefulSet: ready ones), of any template; a
    /// Job's succeeded Pods, as a completed run counts as a Ready Pod.
    pub available: i32,
    /// Replicas beyond the updated ones: older, pending termination; a
    /// Job's failed Pods.
    pub old: i32,
    /// `spec.paused` (a Deployment), `spec.suspend` (a Job).
    pub paused: bool,
}

impl StatusReading {
    /// Available replicas of the current template: what serves on it.
    pub fn current_available(&self) -> i32 {
        self.available.min(self.updated)
    }
}

/// The target's own status, when it has a workload object with one.
pub fn read(chain: &Chain) -> Option<StatusReading> {
    // A LeaderWorkerSet's own status counts groups; its leader set's
    // would count leader Pods, whatever their workers do.
    if let Some(p) = chain.platform.filter(|p| p.platform.serves_in_groups) {
        return leader_worker_set(p.object);
    }
    // A Knative Service with none of its Revisions' Deployments in the
    // input: its own conditions and traffic.
    if let Some(k) = chain.knative_service.filter(|_| chain.deployment.is_none()) {
        return knative_service(k.object);
    }
    if let Some(d) = chain.deployment {
        return deployment(d).map(|r| StatusReading {
            // An Argo Rollout's status is read as a Deployment's, and named
            // as what it is.
            kind: chain.deployment_kind(),
            ..r
        });
    }
    match chain.pod_set {
        Some(PodSet::StatefulSet(s)) => return stateful_set(s),
        Some(PodSet::DaemonSet(s)) => return daemon_set(s),
        None => {}
    }
    if let Some(run) = &chain.job {
        return run.job.map(job);
    }
    // KServe's word that no Deployment will be made for this spec (no
    // runtime serves it): nothing below it to read, nothing serving.
    if chain.platform.is_some() && super::rules::declaration_failure(chain) {
        return Some(StatusReading {
            kind: "InferenceService",
            stage: Stage::Failed,
            desired: chain.desired_replicas(),
            updated: 0,
            available: 0,
            old: 0,
            paused: false,
        });
    }
    chain.lone_replica_set().and_then(replica_set)
}

fn observed(generation: Option<i64>, observed: Option<i64>) -> bool {
    // Without a generation (a hand-written manifest) there is nothing the
    // controller could be behind on.
    match (generation, observed) {
        (Some(g), Some(o)) => g <= o,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

/// kubectl's order: observed; the progress deadline; updated < desired;
/// old replicas pending termination; available < updated.
fn deployment(d: &Deployment) -> Option<StatusReading> {
    let spec = d.spec.as_ref()?;
    let status = d.status.as_ref()?;
    let desired = spec.replicas.unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let replicas = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    let deadline = status.conditions.iter().flatten().any(|c| {
        c.type_ == "Progressing"
            && c.status == "False"
            && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
    });
    let stage = if !observed(d.metadata.generation, status.observed_generation) {
        Stage::NotObserved
    } else if deadline {
        Stage::DeadlineExceeded
    } else if updated < desired {
        Stage::Updating
    } else if replicas > updated {
        Stage::OldPending
    } else if available < updated {
        Stage::Unavailable
    } else {
        Stage::Complete
    };
    Some(StatusReading {
        kind: "Deployment",
        stage,
        desired,
        updated,
        available,
        old: (replicas - updated).max(0),
        paused: spec.paused == Some(true),
    })
}

/// kubectl's order: observed (a zero observedGeneration is not); ready <
/// desired; a partition's share updated; the update revision current.
/// A LeaderWorkerSet's counts are of groups: `readyReplicas` the groups
/// whose leader and every worker are Ready, `updatedReplicas` those on the
/// current revision, `replicas` the leader Pods (surge included). Its
/// status has `observedGeneration` since v0.9 only: without it, the
/// generation is not judged. Its conditions are not read: a False one
/// keeps the reason it had when True.
fn leader_worker_set(object: &kube_core::DynamicObject) -> Option<StatusReading> {
    let status = object.data.get("status").filter(|s| s.is_object())?;
    let int = |v: &serde_json::Value| {
        v.as_i64()
            .map_or(0, |n| n.clamp(0, i64::from(i32::MAX)) as i32)
    };
    let desired = object.data["spec"]["replicas"]
        .as_i64()
        .map_or(1, |n| n.clamp(0, i64::from(i32::MAX)) as i32);
    let ready = int(&status["readyReplicas"]);
    let updated = int(&status["updatedReplicas"]);
    let replicas = int(&status["replicas"]);
    let seen = status["observedGeneration"]
        .as_i64()
        .is_none_or(|o| observed(object.metadata.generation, Some(o)));
    let stage = if !seen {
        Stage::NotObserved
    } else if updated < desired {
        Stage::Updating
    } else if replicas > updated {
        Stage::OldPending
    } else if ready < desired {
        Stage::Unavailable
    } else {
        Stage::Complete
    };
    Some(StatusReading {
        kind: "LeaderWorkerSet",
        stage,
        desired,
        updated,
        available: ready,
        old: (replicas - updated).max(0),
        paused: false,
    })
}

/// A Knative Service alone, counted in Revisions: the one it declares
/// (`latestCreatedRevisionName`) is the one desired; it is updated once it
/// is also the latest Ready one; something is available when the Route
/// sends a share of the traffic anywhere (it routes only to Ready
/// Revisions), and old when that is to another Revision. Its stage is its
/// Ready condition (kstatus reads it the same way): True is complete,
/// False with ConfigurationsReady False is a failed Revision, and anything
/// else is still going. Its status observes its own generation.
fn knative_service(object: &kube_core::DynamicObject) -> Option<StatusReading> {
    let status = object.data.get("status").filter(|s| s.is_object())?;
    fn text(v: &serde_json::Value) -> Option<&str> {
        v.as_str().filter(|s| !s.is_empty())
    }
    let created = text(&status["latestCreatedRevisionName"]);
    let ready_revision = text(&status["latestReadyRevisionName"]);
    let routed: Vec<&str> = status["traffic"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["percent"].as_i64().is_some_and(|n| n > 0))
        .filter_map(|t| text(&t["revisionName"]))
        .collect();
    let condition = |kind: &str| {
        status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == kind)
            .and_then(|c| c["status"].as_str())
    };
    let seen = observed(
        object.metadata.generation,
        status["observedGeneration"].as_i64(),
    );
    let stage = if !seen {
        Stage::NotObserved
    } else if condition("Ready") == Some("True") {
        Stage::Complete
    } else if condition("ConfigurationsReady") == Some("False") {
        Stage::Failed
    } else {
        Stage::Updating
    };
    let updated = i32::from(created.is_some() && created == ready_revision);
    Some(StatusReading {
        kind: "KnativeService",
        stage,
        desired: 1,
        updated,
        available: i32::from(!routed.is_empty()),
        old: i32::from(routed.iter().any(|r| Some(*r) != created)),
        paused: false,
    })
}

fn stateful_set(s: &StatefulSet) -> Option<StatusReading> {
    let spec = s.spec.as_ref()?;
    let status = s.status.as_ref()?;
    let desired = spec.replicas.unwrap_or(1);
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    let partition = spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .filter(|p| *p > 0);
    let on_delete = spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.type_.as_deref())
        == Some("OnDelete");
    let seen = status.observed_generation.is_some_and(|o| o > 0)
        && observed(s.metadata.generation, status.observed_generation);
    let revision_current =
        status.update_revision.is_none() || status.update_revision == status.current_revision;
    let stage = if !seen {
        Stage::NotObserved
    } else if ready < desired {
        Stage::Unavailable
    } else if let Some(p) = partition {
        // Pods below the partition stay on the older revision on purpose.
        if updated < (desired - p).max(0) {
            Stage::Updating
        } else {
            Stage::Complete
        }
    } else if on_delete || revision_current {
        // OnDelete updates a Pod only when it is deleted: ready is done.
        Stage::Complete
    } else {
        Stage::RevisionPending
    };
    // A partition or OnDelete holds Pods back on purpose: count them as
    // current, as the endpoint-based verdict counts held Pods.
    let updated = if matches!(stage, Stage::Complete) {
        desired
    } else {
        updated
    };
    Some(StatusReading {
        kind: "StatefulSet",
        stage,
        desired,
        updated,
        available: ready,
        old: 0,
        paused: false,
    })
}

/// kubectl's order: observed; updatedNumberScheduled < desired;
/// numberAvailable < desired. An OnDelete set (kubectl refuses to answer
/// for it) is complete once its Pods are available, as a StatefulSet's is
/// and as Argo CD judges it: its older Pods wait to be deleted on purpose.
fn daemon_set(s: &DaemonSet) -> Option<StatusReading> {
    let status = s.status.as_ref()?;
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    let available = status.number_available.unwrap_or(0);
    let on_delete = s
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.type_.as_deref())
        == Some("OnDelete");
    let stage = if !observed(s.metadata.generation, status.observed_generation) {
        Stage::NotObserved
    } else if updated < desired && !on_delete {
        Stage::Updating
    } else if available < desired {
        Stage::Unavailable
    } else {
        Stage::Complete
    };
    // Held Pods count as current, as a StatefulSet's do once complete;
    // availability is then counted against every desired Pod.
    let updated = if on_delete { desired } else { updated };
    Some(StatusReading {
        kind: "DaemonSet",
        stage,
        desired,
        updated,
        available,
        old: (status.current_number_scheduled - updated).max(0),
        paused: false,
    })
}

/// kstatus's order for a ReplicaSet: observed; available (and ready)
/// replicas against desired.
fn replica_set(r: &ReplicaSet) -> Option<StatusReading> {
    let status = r.status.as_ref()?;
    let desired = r.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let available = status
        .available_replicas
        .unwrap_or(0)
        .min(status.ready_replicas.unwrap_or(0));
    let stage = if !observed(r.metadata.generation, status.observed_generation) {
        Stage::NotObserved
    } else if status.replicas < desired {
        Stage::Updating
    } else if available < desired {
        Stage::Unavailable
    } else {
        Stage::Complete
    };
    Some(StatusReading {
        kind: "ReplicaSet",
        stage,
        desired,
        updated: status.replicas,
        available,
        old: 0,
        paused: false,
    })
}

/// The Job controller's word, in the order kstatus reads it: Failed (or
/// FailureTarget), Complete, then `spec.suspend`, then started or not
/// (`status.startTime`). The state is [`super::jobs::state`]'s; this is
/// what the headline says the verdict rests on.
fn job(j: &Job) -> StatusReading {
    let status = j.status.as_ref();
    let suspended = j.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    let stage = if super::jobs::failure(j).is_some() {
        Stage::Failed
    } else if super::jobs::complete(j) {
        Stage::Complete
    } else if suspended {
        Stage::Suspended
    } else if status.and_then(|s| s.start_time.as_ref()).is_none() {
        Stage::NotObserved
    } else {
        Stage::Running
    };
    let succeeded = status.and_then(|s| s.succeeded).unwrap_or(0);
    StatusReading {
        kind: "Job",
        stage,
        desired: j.spec.as_ref().and_then(|s| s.completions).unwrap_or(1),
        updated: succeeded,
        available: succeeded,
        old: status.and_then(|s| s.failed).unwrap_or(0),
        paused: suspended,
    }
}

/// The state from a workload's status: unknown when something else the
/// verdict needs is unread (a ModelService); serving when the status says
/// the rollout is complete and the chain above observed it; not-serving
/// when nothing is available; then degraded when a finding says why, else
/// progressing. The same order as [`super::state::decide`].
pub fn decide(
    status: &StatusReading,
    serving: &super::Serving,
    steps: &[super::StepState],
    problems: bool,
) -> super::State {
    use super::{State, Step};
    // What the status stands for (the objects below the workload) is not
    // missing; anything else is.
    let below = [
        "pods",
        "replicasets",
        "controllerrevisions",
        "services",
        "endpointslices",
    ];
    // An InferenceService that gets no Deployment stands for that too, and
    // a Knative Service read alone for its Revisions' Deployments.
    let platform_below = matches!(status.kind, "InferenceService" | "KnativeService");
    let unreadable = serving
        .unread
        .iter()
        .any(|(r, _)| !(below.contains(&r.as_str()) || platform_below && r == "deployments"));
    // The steps above the workload: declared and observed (a ModelService).
    let above_observed = steps
        .iter()
        .filter(|s| s.step < Step::Deployment)
        .all(|s| s.reached);
    if unreadable {
        State::Unknown
    } else if above_observed && status.stage == Stage::Complete {
        State::Serving
    } else if status.available == 0 && status.desired > 0 {
        State::NotServing
    } else if problems {
        State::Degraded
    } else {
        State::Progressing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daemon(strategy: &str, updated: i32, available: i32) -> DaemonSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "d", "generation": 3},
            "spec": {
                "selector": {},
                "updateStrategy": {"type": strategy},
                "template": {}
            },
            "status": {
                "observedGeneration": 3,
                "desiredNumberScheduled": 4,
                "currentNumberScheduled": 4,
                "numberMisscheduled": 0,
                "numberReady": available,
                "numberAvailable": available,
                "updatedNumberScheduled": updated
            }
        }))
        .unwrap()
    }

    #[test]
    fn an_on_delete_daemon_set_is_complete_once_its_pods_are_available() {
        // Argo CD: an OnDelete set is healthy; its older Pods wait to be
        // deleted on purpose.
        let r = daemon_set(&daemon("OnDelete", 1, 4)).unwrap();
        assert_eq!((r.stage, r.updated), (Stage::Complete, 4));
        // Not while one is unavailable.
        let r = daemon_set(&daemon("OnDelete", 1, 3)).unwrap();
        assert_eq!(
            (r.stage, r.available, r.updated),
            (Stage::Unavailable, 3, 4)
        );
        // A rolling update with the same counts is still updating (kubectl).
        let r = daemon_set(&daemon("RollingUpdate", 1, 4)).unwrap();
        assert_eq!((r.stage, r.updated), (Stage::Updating, 1));
    }

    fn batch(spec: serde_json::Value, status: serde_json::Value) -> Job {
        let mut spec = spec;
        spec["template"] = serde_json::json!({});
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "j"},
            "spec": spec,
            "status": status
        }))
        .unwrap()
    }

    fn cond(kind: &str) -> serde_json::Value {
        serde_json::json!({"type": kind, "status": "True"})
    }

    #[test]
    fn a_job_reads_failed_complete_suspended_then_started() {
        let stage = |spec, status| job(&batch(spec, status)).stage;
        let started = serde_json::json!({"startTime": "2026-11-30T08:00:01Z", "active": 1});
        assert_eq!(
            stage(serde_json::json!({}), serde_json::json!({})),
            Stage::NotObserved
        );
        assert_eq!(
            stage(serde_json::json!({}), started.clone()),
            Stage::Running
        );
        assert_eq!(
            stage(
                serde_json::json!({"suspend": true}),
                serde_json::json!({"conditions": [cond("Suspended")]})
            ),
            Stage::Suspended
        );
        // A resumed Job whose Suspended condition lingers runs.
        assert_eq!(
            stage(serde_json::json!({"suspend": false}), started),
            Stage::Running
        );
        let failed = serde_json::json!({
            "startTime": "2026-11-30T08:00:01Z", "failed": 1,
            "conditions": [cond("FailureTarget"), cond("Failed")]
        });
        assert_eq!(stage(serde_json::json!({}), failed.clone()), Stage::Failed);
        let r = job(&batch(serde_json::json!({"completions": 4}), failed));
        assert_eq!((r.desired, r.available, r.old), (4, 0, 1));
        let done = serde_json::json!({"succeeded": 1, "conditions": [cond("Complete")]});
        let r = job(&batch(serde_json::json!({}), done));
        assert_eq!((r.stage, r.available, r.desired), (Stage::Complete, 1, 1));
    }
}
