//! Rules that read a serving platform's own status, above the Deployment.
//!
//! `model-not-loaded`: KServe's `status.modelStatus` says the model failed
//! to load (targetModelState FailedToLoad, transitionStatus
//! BlockedByFailedLoad or InvalidSpec), with `lastFailureInfo`. KServe
//! derives it from the first predictor Pod, so a current Pod's own finding
//! is the cause and leads (verdict's MORE_SPECIFIC); a status older than
//! Ready Pods is not claimed (docs/platforms.md#kserve).

use super::Ctx;
use crate::analysis::{Evidence, Finding, Step, facts};
use crate::catalogue::{FindingId, Message};
use crate::model::{Kind, ObjectRef};

/// The failure reasons that are about the declaration (no runtime serves
/// it, the predictor is invalid): no Pod will ever come.
const DECLARATION_REASONS: &[&str] = &[
    "NoSupportingRuntime",
    "RuntimeNotRecognized",
    "RuntimeDisabled",
    "InvalidPredictorSpec",
];

/// The InferenceService says it failed for its declaration (no runtime
/// serves it, its predictor is invalid), and said so after its spec was
/// last written: KServe's status carries no generation of its own, so the
/// times are what tell a verdict on this spec from one left by the last.
pub fn declaration_failure(chain: &crate::chain::Chain) -> bool {
    let Some(top) = chain
        .platform
        .filter(|p| p.platform.kind == Kind::InferenceService)
    else {
        return false;
    };
    let isvc = top.object;
    let model = &isvc.data["status"]["modelStatus"];
    let about_the_spec = model["transitionStatus"].as_str() == Some("InvalidSpec")
        || model["lastFailureInfo"]["reason"]
            .as_str()
            .is_some_and(|r| DECLARATION_REASONS.contains(&r));
    let said_at = model["lastFailureInfo"]["time"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .or_else(|| facts::condition_of(isvc, "PredictorReady").and_then(|c| c.at));
    let written_at = facts::spec_write_time(&isvc.metadata, None)
        .or_else(|| isvc.metadata.creation_timestamp.as_ref().map(|t| t.0));
    let current = match (said_at, written_at) {
        (Some(said), Some(written)) => said >= written,
        _ => false,
    };
    about_the_spec && current
}

pub fn model_not_loaded(ctx: &Ctx) -> Vec<Finding> {
    let Some(top) = ctx
        .chain
        .platform
        .filter(|p| p.platform.kind == Kind::InferenceService)
    else {
        return Vec::new();
    };
    let isvc = top.object;
    let model = &isvc.data["status"]["modelStatus"];
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let transition = text(&model["transitionStatus"]);
    let target_state = text(&model["states"]["targetModelState"]);
    let failed = target_state == "FailedToLoad"
        || matches!(transition.as_str(), "BlockedByFailedLoad" | "InvalidSpec");
    if !failed {
        return Vec::new();
    }
    let failure = &model["lastFailureInfo"];
    let reason = text(&failure["reason"]);
    // Evidence must be current: Ready Pods of the current revision for
    // every desired replica mean the model is loaded, whatever an older
    // status says.
    let desired = ctx.chain.desired_replicas();
    let ready_now = ctx
        .pods
        .iter()
        .filter(|p| p.current && !p.terminating && p.moments.ready.reached)
        .count() as i32;
    if desired > 0 && ready_now >= desired && !DECLARATION_REASONS.contains(&reason.as_str()) {
        return Vec::new();
    }
    let name = facts::name(&isvc.metadata);
    let label = format!("inferenceservice/{name}");
    let message = text(&failure["message"]);
    let mut f = Finding::new(
        FindingId::MODEL_NOT_LOADED,
        ObjectRef::new("InferenceService", &isvc.metadata),
        // A runtime that cannot serve it stops the chain before the
        // Deployment; a failed load stops its Pods short of ready.
        if ctx.chain.deployment.is_none() {
            Step::Deployment
        } else {
            Step::Ready
        },
        Message::new("model-not-loaded.detail")
            .arg(
                "state",
                if target_state.is_empty() {
                    "?"
                } else {
                    &target_state
                },
            )
            .arg(
                "transition",
                if transition.is_empty() {
                    "?"
                } else {
                    &transition
                },
            )
            .arg("reason", if reason.is_empty() { "?" } else { &reason }),
    );
    f.vars = ctx.base_vars();
    if let Some(pod) = ctx
        .chain
        .current_pods()
        .map(|p| p.pod)
        .max_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0))
    {
        f.vars.extend(super::pod_vars(pod));
    }
    f = f.evidence(Evidence::new(
        label.clone(),
        "status.modelStatus.transitionStatus / states.targetModelState",
        format!("{transition} / {target_state}"),
    ));
    if !reason.is_empty() || !message.is_empty() {
        let mut value = reason.clone();
        if !message.is_empty() {
            value = format!("{value}: {}", message.trim());
        }
        let at = failure["time"].as_str().and_then(|t| t.parse().ok());
        f = f.evidence(
            Evidence::new(label.clone(), "status.modelStatus.lastFailureInfo", value).at(at),
        );
    }
    if let Some(code) = failure["exitCode"].as_i64() {
        f = f.evidence(Evidence::new(
            label.clone(),
            "status.modelStatus.lastFailureInfo.exitCode",
            code.to_string(),
        ));
    }
    if let Some(ready) = facts::condition_of(isvc, "PredictorReady") {
        let value = [ready.status, ready.reason, ready.message]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        f = f.evidence(
            Evidence::new(label, "status.conditions[PredictorReady]", value).at(ready.at),
        );
    }
    vec![f]
}
