//! An Argo Rollout, kept as read and as the Deployment it stands in for.
//!
//! A Rollout is shaped as a Deployment on purpose: `spec.replicas`,
//! `selector`, `template`, `paused`, `minReadySeconds` and
//! `progressDeadlineSeconds` mean what they mean there, its status counts
//! replicas the same way and its conditions carry the same fields
//! (Progressing=False with ProgressDeadlineExceeded included), and it owns
//! its ReplicaSets directly. So the chain walks it in the Deployment's
//! place, and only what is Argo's own (pause conditions, abort, the
//! current and stable pod-template hashes) is read from the object
//! (docs/platforms.md#argo-rollouts).

use k8s_openapi::api::apps::v1::Deployment;
use kube_core::DynamicObject;
use serde_json::{Value, json};

/// The label Argo puts on a Rollout's ReplicaSets, their Pods and the
/// selectors of the Services it manages, in place of `pod-template-hash`.
pub const ROLLOUT_HASH_LABEL: &str = "rollouts-pod-template-hash";
/// The revision Argo writes on a Rollout and its ReplicaSets.
pub const ROLLOUT_REVISION_ANNOTATION: &str = "rollout.argoproj.io/revision";
/// The annotation Argo adds to a Service it switches between hashes.
pub const ROLLOUT_MANAGED_BY_ANNOTATION: &str = "argo-rollouts.argoproj.io/managed-by-rollouts";
/// The pause reasons a Rollout's own plan writes: a canary reached a
/// `pause` step, or a blue-green waits for promotion. They are the plan,
/// not a fault.
pub const ROLLOUT_STEP_PAUSES: &[&str] = &["CanaryPauseStep", "BlueGreenPause"];

/// An Argo Rollout and its Deployment view. The two are made together and
/// only together, so they cannot drift apart.
#[derive(Debug, Clone)]
pub struct Rollout {
    object: DynamicObject,
    workload: Deployment,
}

impl Rollout {
    pub fn new(object: DynamicObject) -> Self {
        let workload = as_deployment(&object);
        Rollout { object, workload }
    }

    /// The Rollout as read.
    pub fn object(&self) -> &DynamicObject {
        &self.object
    }

    /// The Deployment it stands in for: its metadata (name, UID,
    /// generation), the Deployment-shaped part of its spec and status.
    pub fn workload(&self) -> &Deployment {
        &self.workload
    }

    /// Changes the object and makes the view again.
    pub fn update(&mut self, change: impl FnOnce(&mut DynamicObject)) {
        change(&mut self.object);
        self.workload = as_deployment(&self.object);
    }
}

/// The Rollout waits at a step of its own plan and for nothing else: every
/// pause condition is a step's (ROLLOUT_STEP_PAUSES), it is not paused by
/// hand (`spec.paused`) and not aborted. Then its stable Pods are the
/// declaration in effect and the pause is a note, not a fault; the walk and
/// the rollout-paused rule both ask this one question.
pub fn waits_at_a_step(rollout: &DynamicObject) -> bool {
    let status = &rollout.data["status"];
    let reasons: Vec<&str> = status["pauseConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["reason"].as_str())
        .collect();
    !reasons.is_empty()
        && reasons.iter().all(|r| ROLLOUT_STEP_PAUSES.contains(r))
        && rollout.data["spec"]["paused"].as_bool() != Some(true)
        && status["abort"].as_bool() != Some(true)
}

/// The Deployment a Rollout stands in for. What does not fit is left out
/// rather than guessed: a blue-green strategy has no surge, a
/// `workloadRef` Rollout has no template of its own, and an
/// `observedGeneration` that is not a number (Argo before v0.10 wrote a
/// hash there) is not a generation.
fn as_deployment(object: &DynamicObject) -> Deployment {
    let spec = &object.data["spec"];
    let status = &object.data["status"];
    let keep = |from: &Value, fields: &[&str]| -> serde_json::Map<String, Value> {
        fields
            .iter()
            .filter_map(|f| {
                from.get(*f)
                    .filter(|v| !v.is_null())
                    .map(|v| ((*f).to_string(), v.clone()))
            })
            .collect()
    };
    let mut view_spec = keep(
        spec,
        &[
            "replicas",
            "selector",
            "template",
            "minReadySeconds",
            "paused",
            "progressDeadlineSeconds",
            "revisionHistoryLimit",
        ],
    );
    // Argo's canary defaults, as its controller resolves them.
    if let Some(canary) = spec["strategy"].get("canary") {
        let or_default = |v: &Value| if v.is_null() { json!("25%") } else { v.clone() };
        view_spec.insert(
            "strategy".into(),
            json!({"type": "RollingUpdate", "rollingUpdate": {
                "maxSurge": or_default(&canary["maxSurge"]),
                "maxUnavailable": or_default(&canary["maxUnavailable"]),
            }}),
        );
    }
    let mut view_status = keep(
        status,
        &[
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "collisionCount",
        ],
    );
    let observed = match &status["observedGeneration"] {
        Value::String(s) => s.parse::<i64>().ok(),
        Value::Number(n) => n.as_i64(),
        _ => None,
    };
    if let Some(g) = observed {
        view_status.insert("observedGeneration".into(), json!(g));
    }
    let conditions: Vec<Value> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"].is_string() && c["status"].is_string())
        .cloned()
        .collect();
    if !conditions.is_empty() {
        view_status.insert("conditions".into(), Value::Array(conditions));
    }
    let typed = |spec: serde_json::Map<String, Value>| {
        serde_json::from_value::<Deployment>(json!({
            "metadata": {},
            "spec": spec,
            "status": view_status.clone(),
        }))
    };
    // A spec this cannot read (a template of the wrong shape) still leaves
    // the status; a status it cannot read leaves the metadata.
    let mut view = typed(view_spec.clone())
        .or_else(|_| {
            let mut bare = view_spec.clone();
            bare.remove("template");
            bare.remove("selector");
            typed(bare)
        })
        .unwrap_or_default();
    view.metadata = object.metadata.clone();
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rollout(data: Value) -> Rollout {
        let mut object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
            "metadata": {"name": "llama", "namespace": "serving", "uid": "u1", "generation": 3},
        }))
        .unwrap();
        object.data = data;
        Rollout::new(object)
    }

    #[test]
    fn a_canary_rollout_reads_as_its_deployment() {
        let r = rollout(json!({
            "spec": {"replicas": 2, "paused": true, "progressDeadlineSeconds": 300,
                "selector": {"matchLabels": {"app": "llama"}},
                "template": {"metadata": {"labels": {"app": "llama"}},
                    "spec": {"containers": [{"name": "server", "image": "x"}]}},
                "strategy": {"canary": {"maxUnavailable": 0, "steps": [{"setWeight": 20}]}}},
            "status": {"observedGeneration": "3", "replicas": 3, "updatedReplicas": 1,
                "availableReplicas": 2, "HPAReplicas": 3, "currentPodHash": "5c4b6c4bd5",
                "conditions": [{"type": "Progressing", "status": "False",
                    "reason": "ProgressDeadlineExceeded", "lastUpdateTime": "2026-11-28T10:10:01Z",
                    "lastTransitionTime": "2026-11-28T10:10:01Z", "message": "timed out"}]},
        }));
        let d = r.workload();
        assert_eq!(d.metadata.uid.as_deref(), Some("u1"));
        let spec = d.spec.as_ref().unwrap();
        assert_eq!(
            (spec.replicas, spec.paused, spec.progress_deadline_seconds),
            (Some(2), Some(true), Some(300))
        );
        let rolling = spec
            .strategy
            .as_ref()
            .unwrap()
            .rolling_update
            .as_ref()
            .unwrap();
        assert_eq!(format!("{:?}", rolling.max_surge), "Some(String(\"25%\"))");
        assert_eq!(format!("{:?}", rolling.max_unavailable), "Some(Int(0))");
        let status = d.status.as_ref().unwrap();
        assert_eq!(status.observed_generation, Some(3));
        assert_eq!(
            (
                status.replicas,
                status.updated_replicas,
                status.available_replicas
            ),
            (Some(3), Some(1), Some(2))
        );
        let c = &status.conditions.as_ref().unwrap()[0];
        assert_eq!(
            (c.type_.as_str(), c.reason.as_deref()),
            ("Progressing", Some("ProgressDeadlineExceeded"))
        );
    }

    #[test]
    fn what_does_not_fit_a_deployment_is_left_out() {
        // A hash where Argo before v0.10 wrote observedGeneration, a
        // blue-green strategy, and a workloadRef with no template.
        let r = rollout(json!({
            "spec": {"replicas": 1, "workloadRef": {"kind": "Deployment", "name": "llama"},
                "strategy": {"blueGreen": {"activeService": "llama"}}},
            "status": {"observedGeneration": "7d84d44bb8"},
        }));
        let d = r.workload();
        assert_eq!(d.spec.as_ref().unwrap().replicas, Some(1));
        assert!(d.spec.as_ref().unwrap().strategy.is_none());
        assert_eq!(d.status.as_ref().unwrap().observed_generation, None);
        // A template of the wrong shape keeps the rest.
        let r = rollout(
            json!({"spec": {"replicas": 2, "template": "oops"}, "status": {"replicas": 2}}),
        );
        assert_eq!(r.workload().spec.as_ref().unwrap().replicas, Some(2));
        assert_eq!(r.workload().status.as_ref().unwrap().replicas, Some(2));
    }

    #[test]
    fn an_update_makes_the_view_again() {
        let mut r = rollout(json!({"spec": {"replicas": 1}}));
        r.update(|o| o.data["spec"]["replicas"] = json!(4));
        assert_eq!(r.workload().spec.as_ref().unwrap().replicas, Some(4));
    }
}
