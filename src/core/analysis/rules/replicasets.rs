//! Rules about the ReplicaSets of the target: Pods the apiserver refuses to
//! create.
//!
//! The ReplicaSet controller (kube-controller-manager, replica_set.go and
//! controller_utils.go) records every refused create twice: a Warning Event
//! `FailedCreate` from `replicaset-controller` with the message
//! `Error creating: <the apiserver's error>`, and the status condition
//! `ReplicaFailure=True`, reason `FailedCreate`, with the error text. It
//! removes the condition at the first sync whose creates all succeed, and
//! the Deployment controller copies it onto the Deployment (progress.go,
//! getReplicaFailures).

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Ctx;
use crate::analysis::facts::{self, age, deployment_condition};
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{FindingId, Message, Severity};
use crate::chain::RevisionSet;
use crate::model::{EventRecord, ObjectRef};

/// The component that writes the FailedCreate events of a ReplicaSet.
const REPLICASET_CONTROLLER: &str = "replicaset-controller";
/// What the event recorder prefixes when it folds similar events into one.
const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// What refused the Pod, read from the apiserver's own wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `exceeded quota: NAME, requested: ..., used: ..., limited: ...`
    QuotaExceeded,
    /// `failed quota: NAME: must specify limits.cpu,...`: the quota needs
    /// requests or limits the template does not set.
    QuotaNeedsResources,
    /// `violates PodSecurity "restricted:latest": ...`
    PodSecurity,
    /// `admission webhook "NAME" denied the request: ...`
    WebhookDenied,
    /// `failed calling webhook "NAME": ...` with failurePolicy Fail.
    WebhookUnreachable,
    /// `error looking up service account NS/NAME: serviceaccount "NAME" not found`
    ServiceAccountMissing,
    /// `maximum cpu usage per Container is 2, but limit is 4` and the like.
    LimitRange,
    Other,
}

impl Refusal {
    /// Classifies a create error. A webhook's own text may say anything,
    /// so the webhook wording is looked for first.
    pub fn of(message: &str) -> Refusal {
        let m = message.to_ascii_lowercase();
        if m.contains("admission webhook") && m.contains("denied the request") {
            Refusal::WebhookDenied
        } else if m.contains("failed calling webhook") {
            Refusal::WebhookUnreachable
        } else if m.contains("exceeded quota:") {
            Refusal::QuotaExceeded
        } else if m.contains("failed quota:") {
            Refusal::QuotaNeedsResources
        } else if m.contains("violates podsecurity") {
            Refusal::PodSecurity
        } else if m.contains("error looking up service account")
            || (m.contains("serviceaccount \"") && m.contains("not found"))
        {
            Refusal::ServiceAccountMissing
        } else if m.contains("usage per container")
            || m.contains("usage per pod")
            || m.contains("limit to request ratio per")
        {
            Refusal::LimitRange
        } else {
            Refusal::Other
        }
    }

    /// A stable name, for the finding's vars (the gate reads it).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::QuotaExceeded => "quota-exceeded",
            Refusal::QuotaNeedsResources => "quota-needs-resources",
            Refusal::PodSecurity => "pod-security",
            Refusal::WebhookDenied => "webhook-denied",
            Refusal::WebhookUnreachable => "webhook-unreachable",
            Refusal::ServiceAccountMissing => "service-account-missing",
            Refusal::LimitRange => "limit-range",
            Refusal::Other => "other",
        }
    }

    pub const ALL: [Refusal; 8] = [
        Refusal::QuotaExceeded,
        Refusal::QuotaNeedsResources,
        Refusal::PodSecurity,
        Refusal::WebhookDenied,
        Refusal::WebhookUnreachable,
        Refusal::ServiceAccountMissing,
        Refusal::LimitRange,
        Refusal::Other,
    ];

    pub fn parse(name: &str) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// Whether a retry of the same create can be answered differently
    /// without anyone acting: a webhook that could not be called may answer
    /// again, and an unrecognised refusal (an apiserver or etcd hiccup) is
    /// not known to be final.
    pub fn may_pass_on_retry(self) -> bool {
        matches!(self, Refusal::WebhookUnreachable | Refusal::Other)
    }

    pub fn message(self) -> Message {
        Message::new(match self {
            Refusal::QuotaExceeded => "refusal.quota",
            Refusal::QuotaNeedsResources => "refusal.quota_resources",
            Refusal::PodSecurity => "refusal.pod_security",
            Refusal::WebhookDenied => "refusal.webhook_denied",
            Refusal::WebhookUnreachable => "refusal.webhook_unreachable",
            Refusal::ServiceAccountMissing => "refusal.service_account",
            Refusal::LimitRange => "refusal.limit_range",
            Refusal::Other => "refusal.other",
        })
    }
}

/// What one ReplicaSet shows now.
struct Refused<'a> {
    replica_set: &'a ReplicaSet,
    current: bool,
    want: i32,
    have: i32,
    condition: Option<&'a ReplicaSetCondition>,
    /// FailedCreate events that are still current, oldest first.
    events: Vec<&'a EventRecord>,
}

impl Refused<'_> {
    /// The refusal in the cluster's words: the condition's message, else the
    /// newest event's without the recorder's prefixes.
    fn message(&self) -> String {
        if let Some(m) = self.condition.and_then(|c| c.message.as_deref())
            && !m.is_empty()
        {
            return m.to_string();
        }
        self.events
            .last()
            .map(|e| event_error(e.message()).to_string())
            .unwrap_or_default()
    }
}

/// `(combined from similar events): Error creating: pods "x" is forbidden:
/// ...` gives `pods "x" is forbidden: ...`.
fn event_error(message: &str) -> &str {
    let m = message.strip_prefix(COMBINED_PREFIX).unwrap_or(message);
    m.strip_prefix("Error creating: ").unwrap_or(m)
}

fn is_failed_create(e: &EventRecord) -> bool {
    e.reason() == "FailedCreate"
        && e.event_type() != "Normal"
        && matches!(e.reporter(), "" | REPLICASET_CONTROLLER)
}

fn replica_failure(rs: &ReplicaSet) -> Option<&ReplicaSetCondition> {
    rs.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")
        .filter(|c| c.reason.as_deref().is_none_or(|r| r == "FailedCreate"))
}

fn owned_by(meta: &ObjectMeta, owner: &ObjectMeta) -> bool {
    let uid = facts::uid(owner);
    !uid.is_empty() && meta.owner_references.iter().flatten().any(|o| o.uid == uid)
}

/// The Pods a ReplicaSet has: its status count, else (hand-written data)
/// its Pods in the snapshot that are not being deleted.
fn pods_of(ctx: &Ctx, rs: &ReplicaSet) -> i32 {
    if let Some(n) = rs.status.as_ref().map(|s| s.replicas) {
        return n;
    }
    ctx.chain
        .pods
        .iter()
        .filter(|p| !p.terminating() && owned_by(&p.pod.metadata, &rs.metadata))
        .count() as i32
}

fn refused<'a>(ctx: &Ctx<'a>, set: &RevisionSet<'a>) -> Option<Refused<'a>> {
    let rs = set.replica_set;
    let want = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let have = pods_of(ctx, rs);
    let condition = replica_failure(rs);
    let about = ctx.events.about("ReplicaSet", &rs.metadata);
    let last_success = about
        .iter()
        .filter(|e| e.reason() == "SuccessfulCreate")
        .filter_map(|e| e.last_seen())
        .max();
    // The controller retries at once after every scale, so a failure older
    // than the last write of the ReplicaSet's spec, or than a Pod created
    // since, is history.
    let moved_on = [last_success, facts::spec_write_time(&rs.metadata, None)]
        .into_iter()
        .flatten()
        .max();
    let events: Vec<&EventRecord> = about
        .into_iter()
        .filter(|e| is_failed_create(e))
        .filter(|e| match (e.last_seen(), moved_on) {
            (Some(seen), Some(moved)) => seen.as_second() >= moved.as_second(),
            _ => true,
        })
        .collect();
    // Once it has every Pod it wants, an event is history; a condition that
    // says otherwise is stale (reported as such below).
    if have >= want && condition.is_none() {
        return None;
    }
    if condition.is_none() && events.is_empty() {
        return None;
    }
    Some(Refused {
        replica_set: rs,
        current: set.current,
        want,
        have,
        condition,
        events,
    })
}

/// Whether an exhausted quota frees itself: only when Pods of older
/// revisions are going away, which is what a surge is waiting for.
fn quota_clears(ctx: &Ctx, r: &Refused) -> (bool, Message) {
    let going = ctx
        .chain
        .pods
        .iter()
        .filter(|p| !owned_by(&p.pod.metadata, &r.replica_set.metadata) && p.terminating())
        .count();
    if going > 0 {
        return (true, Message::new("clears.terminating").arg("n", going));
    }
    let old_wanted: i32 = ctx
        .chain
        .replica_sets
        .iter()
        .filter(|s| !std::ptr::eq(s.replica_set, r.replica_set))
        .filter_map(|s| s.replica_set.spec.as_ref().and_then(|s| s.replicas))
        .sum();
    let limits = ctx
        .chain
        .deployment
        .and_then(|d| facts::rolling_limits(d, ctx.chain.desired_replicas()));
    match limits {
        Some(l) if l.unavailable > 0 && old_wanted > 0 && r.current => (
            true,
            Message::new("clears.unavailable").arg("n", l.unavailable),
        ),
        Some(l) if old_wanted > 0 => (
            false,
            Message::new("clears.never_unavailable").arg("n", l.unavailable),
        ),
        _ => (false, Message::new("clears.never_quota")),
    }
}

fn transience(ctx: &Ctx, refusal: Refusal, r: &Refused) -> (bool, Message) {
    match refusal {
        Refusal::QuotaExceeded => quota_clears(ctx, r),
        Refusal::WebhookUnreachable => (false, Message::new("clears.never_webhook")),
        Refusal::ServiceAccountMissing => (false, Message::new("clears.never_service_account")),
        _ => (false, Message::new("clears.never")),
    }
}

fn condition_evidence(label: &str, field: &str, reason: &str, message: &str) -> Evidence {
    Evidence::new(label, field, format!("True {reason}: {message}"))
}

fn deployment_evidence(chain: &crate::chain::Chain, d: &Deployment) -> Option<Evidence> {
    let c = deployment_condition(d, "ReplicaFailure").filter(|c| c.status == "True")?;
    Some(
        condition_evidence(
            &chain.deployment_ref(facts::name(&d.metadata)),
            "status.conditions[ReplicaFailure]",
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or(""),
        )
        .at(c
            .last_transition_time
            .as_ref()
            .or(c.last_update_time.as_ref())
            .map(|t| t.0)),
    )
}

fn finding_for(ctx: &Ctx, r: &Refused) -> Finding {
    let rs = r.replica_set;
    let name = facts::name(&rs.metadata);
    let label = format!("replicaset/{name}");
    let message = r.message();
    let refusal = Refusal::of(&message);
    let (transient, clears) = transience(ctx, refusal, r);
    // With no Pod of the current revision the rollout stops before stored;
    // with some, the missing ones keep it from serving.
    let step = if r.current && ctx.current_pods().next().is_none() {
        Step::Stored
    } else {
        Step::Serving
    };
    let mut f = Finding::new(
        FindingId::PODS_NOT_CREATED,
        ObjectRef::new("ReplicaSet", &rs.metadata),
        step,
        Message::new("pods-not-created.detail")
            .arg("replicaset", label.as_str())
            .arg("have", r.have)
            .arg("want", r.want)
            .arg("refusal", refusal.message())
            .arg("message", message.as_str())
            .arg("clears", clears),
    );
    if let Some(c) = r.condition {
        f = f.evidence(
            condition_evidence(
                &label,
                "status.conditions[ReplicaFailure]",
                c.reason.as_deref().unwrap_or(""),
                c.message.as_deref().unwrap_or(""),
            )
            .at(c.last_transition_time.as_ref().map(|t| t.0)),
        );
    }
    f = f.evidence(Evidence::new(
        label.clone(),
        "spec.replicas / status.replicas",
        format!("{} / {}", r.want, r.have),
    ));
    if let Some(e) = r.events.last() {
        let count: u32 = r.events.iter().map(|e| e.count()).sum();
        let first = r.events.iter().filter_map(|e| e.first_seen()).min();
        let evidence = match first {
            Some(t) if count > 1 => Evidence::said(
                label.clone(),
                "event FailedCreate",
                Message::new("pods-not-created.refusals")
                    .arg("message", e.message())
                    .arg("count", count)
                    .arg("ago", age(t, ctx.now)),
            ),
            _ => Evidence::new(label.clone(), "event FailedCreate", e.message()),
        };
        f = f.evidence(evidence.at(e.last_seen()));
    }
    if let Some(d) = ctx.chain.deployment
        && let Some(e) = deployment_evidence(ctx.chain, d)
    {
        f = f.evidence(e);
    }
    if r.have >= r.want {
        // Counts win over a stale summary condition; say that they disagree.
        f.severity = Severity::Info;
        f.step = Step::Serving;
        f.detail = Message::new("pods-not-created.stale")
            .arg("replicaset", label.as_str())
            .arg("message", message.as_str())
            .arg("have", r.have)
            .arg("want", r.want);
    }
    f.vars = ctx.base_vars();
    f.vars.insert("replicaset".into(), name.to_string());
    // Whether waiting can clear it, for whoever decides to wait (the gate).
    f.vars.insert("transient".into(), transient.to_string());
    f.vars
        .insert("refusal".into(), refusal.as_str().to_string());
    f
}

/// With no ReplicaSet to read (absent from the dump or hidden), the
/// Deployment's copy of the condition is the evidence.
fn from_deployment(ctx: &Ctx) -> Option<Finding> {
    let d = ctx.chain.deployment?;
    let c = deployment_condition(d, "ReplicaFailure")
        .filter(|c| c.status == "True" && c.reason.as_deref() == Some("FailedCreate"))?;
    let desired = ctx.chain.desired_replicas();
    let status = d.status.as_ref();
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    if updated >= desired && available >= desired {
        return None;
    }
    let name = facts::name(&d.metadata);
    let message = c.message.clone().unwrap_or_default();
    let refusal = Refusal::of(&message);
    let mut f = Finding::new(
        FindingId::PODS_NOT_CREATED,
        ObjectRef::new(ctx.chain.deployment_kind(), &d.metadata),
        Step::Stored,
        Message::new("pods-not-created.deployment")
            .arg("name", name)
            .arg("updated", updated)
            .arg("desired", desired)
            .arg("refusal", refusal.message())
            .arg("message", message.as_str()),
    );
    f = f.evidence(deployment_evidence(ctx.chain, d)?);
    f = f.evidence(Evidence::said(
        ctx.chain.deployment_ref(name),
        "status.updatedReplicas / availableReplicas",
        Message::new("counts.of_desired")
            .arg("a", updated)
            .arg("b", available)
            .arg("desired", desired),
    ));
    f.vars = ctx.base_vars();
    Some(f)
}

pub fn pods_not_created(ctx: &Ctx) -> Vec<Finding> {
    if ctx.chain.replica_sets.is_empty() {
        return from_deployment(ctx).into_iter().collect();
    }
    ctx.chain
        .replica_sets
        .iter()
        .filter_map(|set| refused(ctx, set))
        .map(|r| finding_for(ctx, &r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_the_apiservers_wording() {
        let cases = [
            (
                r#"pods "web-5b7c9d-abcde" is forbidden: exceeded quota: pods-per-namespace, requested: pods=1, used: pods=2, limited: pods=2"#,
                Refusal::QuotaExceeded,
            ),
            (
                r#"pods "web-5b7c9d-abcde" is forbidden: failed quota: compute: must specify limits.cpu for: server"#,
                Refusal::QuotaNeedsResources,
            ),
            (
                r#"pods "web-5b7c9d-abcde" is forbidden: violates PodSecurity "restricted:latest": privileged (container "server" must not set securityContext.privileged=true)"#,
                Refusal::PodSecurity,
            ),
            (
                r#"admission webhook "validate.policy.example.com" denied the request: images must come from registry.example.com (exceeded quota: is only a word here)"#,
                Refusal::WebhookDenied,
            ),
            (
                r#"Internal error occurred: failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy.policy-system.svc:443/validate": dial tcp 10.96.7.9:443: connect: connection refused"#,
                Refusal::WebhookUnreachable,
            ),
            (
                r#"pods "web-5b7c9d-" is forbidden: error looking up service account shop/runner: serviceaccount "runner" not found"#,
                Refusal::ServiceAccountMissing,
            ),
            (
                r#"pods "web-5b7c9d-abcde" is forbidden: maximum cpu usage per Container is 2, but limit is 4"#,
                Refusal::LimitRange,
            ),
            (
                r#"pods "web-5b7c9d-abcde" is forbidden: minimum memory usage per Pod is 64Mi, but request is 32Mi"#,
                Refusal::LimitRange,
            ),
            (
                r#"Pod "web-5b7c9d-abcde" is invalid: spec.containers[0].image: Required value"#,
                Refusal::Other,
            ),
        ];
        for (message, want) in cases {
            assert_eq!(Refusal::of(message), want, "{message}");
        }
    }

    #[test]
    fn the_event_text_loses_the_recorders_prefixes_only() {
        assert_eq!(
            event_error(
                r#"(combined from similar events): Error creating: pods "a-b" is forbidden: exceeded quota: q"#
            ),
            r#"pods "a-b" is forbidden: exceeded quota: q"#
        );
        assert_eq!(event_error("something else"), "something else");
    }
}
