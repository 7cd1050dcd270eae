//! `job-failed`: the Job controller gave up on a Job (condition Failed,
//! or FailureTarget while it still ends the Pods), for a back-off limit,
//! a deadline or a Pod failure policy. The failed Pods' own exits are
//! `pod-failed`'s.

use super::Ctx;
use crate::analysis::jobs::failure;
use crate::analysis::{Evidence, Finding, Step, facts};
use crate::catalogue::{FindingId, Message};
use crate::model::ObjectRef;

pub fn job_failed(ctx: &Ctx) -> Vec<Finding> {
    let Some(job) = ctx.chain.job.as_ref().and_then(|r| r.job) else {
        return Vec::new();
    };
    let Some(c) = failure(job) else {
        return Vec::new();
    };
    let label = format!("job/{}", facts::name(&job.metadata));
    let reason = c.reason.as_deref().unwrap_or("");
    let message = c.message.as_deref().unwrap_or("").trim();
    let spec = job.spec.as_ref();
    let status = job.status.as_ref();
    let failed = status.and_then(|s| s.failed).unwrap_or(0);
    let backoff = spec.and_then(|s| s.backoff_limit).unwrap_or(6);
    let mut f = Finding::new(
        FindingId::JOB_FAILED,
        ObjectRef::new("Job", &job.metadata),
        Step::Completed,
        Message::new("job_failed.detail")
            .arg("condition", c.type_.as_str())
            .arg("reason", if reason.is_empty() { "?" } else { reason })
            .arg("failed", failed)
            .arg("backoff", backoff),
    );
    f.vars = ctx.base_vars();
    // The failed Pod its commands read: the newest that failed.
    if let Some(pod) = ctx
        .chain
        .pods
        .iter()
        .map(|p| p.pod)
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))
        .max_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0))
    {
        f.vars.extend(super::pod_vars(pod));
    }
    f = f.evidence(
        Evidence::new(
            label.clone(),
            format!("status.conditions[{}]", c.type_),
            if message.is_empty() {
                format!("True {reason}")
            } else {
                format!("True {reason}: {message}")
            },
        )
        .at(c.last_transition_time.as_ref().map(|t| t.0)),
    );
    f = f.evidence(Evidence::new(
        label.clone(),
        "status.failed / spec.backoffLimit",
        format!("{failed} / {backoff}"),
    ));
    if let Some(deadline) = spec.and_then(|s| s.active_deadline_seconds) {
        f = f.evidence(Evidence::new(
            label,
            "spec.activeDeadlineSeconds",
            deadline.to_string(),
        ));
    }
    vec![f]
}
