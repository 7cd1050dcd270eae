//! Rules that read a serving platform's own status, above the Deployment.
//!
//! `model-not-loaded`: KServe's `status.modelStatus` says the model failed
//! to load (targetModelState FailedToLoad, transitionStatus
//! BlockedByFailedLoad or InvalidSpec), with `lastFailureInfo`. KServe
//! derives it from the first predictor Pod, so a current Pod's own finding
//! is the cause and leads (verdict's MORE_SPECIFIC); a status older than
//! Ready Pods is not claimed (docs/platforms.md#kserve). A Knative
//! Service's own condition says the same of its latest Revision
//! (ConfigurationsReady=False, RevisionFailed): Knative writes it once the
//! Revision's progress deadline passed, and scales that Revision to zero
//! 30 s later, so it is often the only account left
//! (docs/platforms.md#knative-serving).

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
    // A Knative Service's word on its latest Revision: its own, or the
    // predictor's of an InferenceService in KServe's Knative mode, whose
    // modelStatus copies the failure without saying why.
    if let Some(k) = ctx.chain.knative_service {
        let said = knative_revision_failed(ctx, k.object);
        let alone = ctx
            .chain
            .platform
            .is_none_or(|p| p.platform.kind == Kind::KnativeService);
        if said.is_some() || alone {
            return said.into_iter().collect();
        }
    }
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
    f.vars = newest_current_pod_vars(ctx);
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

/// `model-not-loaded` from a Knative Service's own status: the
/// Configuration's Ready, copied as ConfigurationsReady, is False for the
/// latest created Revision, on the generation its status observed. Not
/// when the latest Revision's Pods are Ready for every desired replica
/// (the status is older than they are).
fn knative_revision_failed(ctx: &Ctx, ksvc: &kube_core::DynamicObject) -> Option<Finding> {
    let observed = crate::chain::observed_generation(ksvc);
    if !crate::chain::generation_observed(ksvc.metadata.generation, observed) {
        return None;
    }
    let failed =
        facts::condition_of(ksvc, "ConfigurationsReady").filter(|c| c.status == "False")?;
    let status = &ksvc.data["status"];
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let created = text(&status["latestCreatedRevisionName"]);
    let ready_revision = text(&status["latestReadyRevisionName"]);
    if !created.is_empty() && created == ready_revision {
        return None;
    }
    let desired = ctx.chain.desired_replicas();
    let ready_now = ctx
        .pods
        .iter()
        .filter(|p| p.current && !p.terminating && p.moments.ready.reached)
        .count() as i32;
    if desired > 0 && ready_now >= desired {
        return None;
    }
    let name = facts::name(&ksvc.metadata);
    let label = format!("ksvc/{name}");
    // An empty name is said as "(none)", in the reader's language.
    let or_none = |s: &str| -> crate::catalogue::Arg {
        if s.is_empty() {
            Message::new("word.none_paren").into()
        } else {
            s.to_string().into()
        }
    };
    let mut f = Finding::new(
        FindingId::MODEL_NOT_LOADED,
        ObjectRef::new("KnativeService", &ksvc.metadata),
        if ctx.chain.deployment.is_none() {
            Step::Deployment
        } else {
            Step::Ready
        },
        Message::new("model-not-loaded.knative_detail")
            .arg("revision", or_none(&created))
            .arg("reason", or_none(failed.reason)),
    );
    f.vars = newest_current_pod_vars(ctx);
    let said = [failed.status, failed.reason, failed.message.trim()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    f = f.evidence(
        Evidence::new(
            label.clone(),
            "status.conditions[ConfigurationsReady]",
            said,
        )
        .at(failed.at),
    );
    f = f.evidence(Evidence::said(
        label.clone(),
        "status.latestCreatedRevisionName / latestReadyRevisionName",
        Message::new("model-not-loaded.knative_revisions")
            .arg("created", or_none(&created))
            .arg("ready", or_none(&ready_revision)),
    ));
    let traffic: Vec<String> = status["traffic"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(format!(
                "{} {}%",
                t["revisionName"].as_str()?,
                t["percent"].as_i64().unwrap_or(0)
            ))
        })
        .collect();
    f = f.evidence(if traffic.is_empty() {
        Evidence::said(label, "status.traffic", Message::new("word.none_paren"))
    } else {
        Evidence::new(label, "status.traffic", traffic.join(", "))
    });
    Some(f)
}

/// The chain's names and its newest current Pod's: what a platform's
/// finding's commands are filled with.
fn newest_current_pod_vars(ctx: &Ctx) -> crate::model::TemplateVars {
    let mut vars = ctx.base_vars();
    if let Some(pod) = ctx
        .chain
        .current_pods()
        .map(|p| p.pod)
        .max_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0))
    {
        vars.extend(super::pod_vars(pod));
    }
    vars
}

/// `rollout-paused` for an Argo Rollout: `spec.paused`, its
/// `status.pauseConditions` (a step's pause, an inconclusive analysis) or
/// an abort (`status.abort`). Nothing rolls out until someone promotes,
/// resumes or retries it, and Argo applies no progress deadline meanwhile.
/// Info while it waits at a step of its own plan; a warning otherwise
/// (docs/platforms.md#argo-rollouts).
pub fn argo_rollout_paused(ctx: &Ctx, rollout: &kube_core::DynamicObject) -> Vec<Finding> {
    let spec = &rollout.data["spec"];
    let status = &rollout.data["status"];
    let by_spec = spec["paused"].as_bool() == Some(true);
    let aborted = status["abort"].as_bool() == Some(true);
    let pauses: Vec<(&str, Option<jiff::Timestamp>)> = status["pauseConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let reason = c["reason"].as_str().filter(|r| !r.is_empty())?;
            Some((reason, c["startTime"].as_str().and_then(|t| t.parse().ok())))
        })
        .collect();
    if !by_spec && !aborted && pauses.is_empty() {
        return Vec::new();
    }
    let name = facts::name(&rollout.metadata);
    let object = ctx.chain.deployment_ref(name);
    let desired = ctx.chain.desired_replicas();
    let updated = ctx
        .chain
        .deployment
        .and_then(|d| d.status.as_ref())
        .and_then(|s| s.updated_replicas)
        .unwrap_or(0);
    let steps = spec["strategy"]["canary"]["steps"]
        .as_array()
        .map_or(0, Vec::len);
    let step = status["currentStepIndex"].as_u64();
    let reasons = pauses
        .iter()
        .map(|(r, _)| *r)
        .collect::<Vec<_>>()
        .join(", ");
    let since = pauses.iter().filter_map(|(_, t)| *t).min();
    let at_a_step = crate::model::waits_at_a_step(rollout);
    let aborted_at = status["abortedAt"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let detail = if aborted {
        let revision = ctx
            .chain
            .current_replica_set()
            .and_then(|r| r.revision)
            .map_or_else(|| "?".to_string(), |r| r.to_string());
        let stable = status["stableRS"].as_str();
        let no_fallback = stable.is_some() && stable == status["currentPodHash"].as_str();
        Message::new(if no_fallback {
            "rollout-paused.argo_aborted_alone"
        } else {
            "rollout-paused.argo_aborted"
        })
        .arg("name", name)
        .arg("revision", revision)
        .arg(
            "ago",
            aborted_at.map_or_else(|| "?".to_string(), |t| facts::age(t, ctx.now)),
        )
    } else if at_a_step && reasons == "BlueGreenPause" {
        Message::new("rollout-paused.argo_promotion")
            .arg("name", name)
            .arg("updated", updated)
            .arg("desired", desired)
    } else if at_a_step
        && steps > 0
        && let Some(i) = step
    {
        Message::new("rollout-paused.argo_step")
            .arg("name", name)
            .arg("step", (i + 1).to_string())
            .arg("steps", steps.to_string())
            .arg("reason", reasons.as_str())
            .arg("updated", updated)
            .arg("desired", desired)
    } else {
        Message::new("rollout-paused.argo_paused")
            .arg("name", name)
            .arg(
                "reasons",
                if by_spec && reasons.is_empty() {
                    "spec.paused".to_string()
                } else {
                    reasons.clone()
                },
            )
            .arg("updated", updated)
            .arg("desired", desired)
    };
    let mut f = Finding::new(
        FindingId::ROLLOUT_PAUSED,
        ObjectRef::new(ctx.chain.deployment_kind(), &rollout.metadata),
        Step::Deployment,
        detail,
    );
    if by_spec {
        f = f.evidence(Evidence::new(&object, "spec.paused", "true"));
    }
    if !pauses.is_empty() {
        f = f
            .evidence(Evidence::new(&object, "status.pauseConditions", reasons.as_str()).at(since));
    }
    if let Some(i) = step.filter(|_| steps > 0) {
        f = f.evidence(Evidence::new(
            &object,
            "status.currentStepIndex",
            format!("{i} of {steps}"),
        ));
    }
    if aborted {
        f = f.evidence(Evidence::new(&object, "status.abort", "true").at(aborted_at));
    }
    if at_a_step {
        f.severity = crate::catalogue::Severity::Info;
    }
    f.vars = ctx.base_vars();
    vec![f]
}
