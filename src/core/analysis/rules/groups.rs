//! `group-not-ready`: a LeaderWorkerSet group of the current revision with
//! a Pod that is not Ready (or not there) past its readiness budget. The
//! group serves nothing then, even where its Ready Pods' endpoints say
//! ready. The member's own finding is the cause and leads (verdict's
//! MORE_SPECIFIC); this one says what it costs: the whole group.

use super::Ctx;
use crate::analysis::groups::{GroupState, group_states};
use crate::analysis::{Evidence, Finding, Step, facts};
use crate::catalogue::{Arg, FindingId, Message};
use crate::model::ObjectRef;

/// How long a group's Pod may be not Ready after it was created before
/// the group is called not ready, beside its probe's initial delay: the
/// same grace readiness-failing gives one Pod.
const GROUP_GRACE_SECONDS: f64 = 30.0;

pub fn group_not_ready(ctx: &Ctx) -> Vec<Finding> {
    let Some(top) = ctx.chain.platform.filter(|p| p.platform.serves_in_groups) else {
        return Vec::new();
    };
    let groups = group_states(ctx.chain, ctx.pods);
    let overdue: Vec<&GroupState> = groups
        .iter()
        .filter(|g| g.current && !g.terminating && !g.ready() && past_budget(ctx, g))
        .collect();
    let Some(first) = overdue.first() else {
        return Vec::new();
    };
    let meta = &top.object.metadata;
    let lws = facts::name(meta);
    let described = overdue.iter().map(|g| {
        Message::new("group-not-ready.group")
            .arg("group", g.name.as_str())
            .arg(
                "ready",
                g.members.iter().filter(|p| p.moments.ready.reached).count(),
            )
            .arg("size", g.size)
    });
    let mut f = Finding::new(
        FindingId::GROUP_NOT_READY,
        ObjectRef::new("LeaderWorkerSet", meta),
        Step::Ready,
        Message::new("group-not-ready.detail")
            .arg("count", overdue.len())
            .arg("desired", ctx.chain.desired_replicas())
            .arg("groups", Arg::list(described, "sep.semicolon")),
    );
    for g in &overdue {
        for p in g.not_ready() {
            f = f.evidence(Evidence::labelled(
                format!("pod/{}", p.name),
                Message::new("group-not-ready.member").arg("group", g.name.as_str()),
                member_state(ctx, &p.name),
            ));
        }
        if (g.members.len() as i32) < g.size {
            f = f.evidence(Evidence::labelled(
                format!("pod/{}", g.name),
                Message::new("group-not-ready.pods").arg("group", g.name.as_str()),
                format!("{} / {}", g.members.len(), g.size),
            ));
        }
    }
    if let Some(ready) = top.object.data["status"]["readyReplicas"]
        .as_i64()
        .or(top.object.data["status"].is_object().then_some(0))
    {
        f = f.evidence(Evidence::new(
            format!("leaderworkerset/{lws}"),
            "status.readyReplicas / spec.replicas",
            format!("{ready} / {}", ctx.chain.desired_replicas()),
        ));
    }
    f.vars = ctx.base_vars();
    f.vars.insert("group".into(), first.name.clone());
    if let Some(p) = first.not_ready().next() {
        f.vars.insert("pod".into(), p.name.clone());
    }
    vec![f]
}

/// A Pod's state in the cluster's words: its phase and its Ready
/// condition as written (`Running · Ready=False ContainersNotReady`).
fn member_state(ctx: &Ctx, name: &str) -> String {
    let Some(pod) = ctx
        .chain
        .pods
        .iter()
        .map(|cp| cp.pod)
        .find(|p| facts::name(&p.metadata) == name)
    else {
        return String::new();
    };
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("?");
    match facts::pod_condition(pod, "Ready") {
        Some(c) => {
            let reason = c
                .reason
                .as_deref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            format!("{phase} · Ready={}{reason}", c.status)
        }
        None => phase.to_string(),
    }
}

/// A Pod of the group has been not Ready longer than its readiness probe's
/// initial delay and the grace, or the group has been missing a Pod that
/// long: a group still starting is not called broken.
fn past_budget(ctx: &Ctx, g: &GroupState) -> bool {
    let age = |p: &crate::analysis::PodState| {
        p.moments
            .stored
            .at
            .map(|at| facts::seconds_between(at, ctx.now))
    };
    let delay = |name: &str| {
        ctx.chain
            .pods
            .iter()
            .find(|cp| facts::name(&cp.pod.metadata) == name)
            .map_or(0.0, |cp| super::pods::readiness_initial_delay(cp.pod))
    };
    let late = |p: &crate::analysis::PodState| {
        age(p).is_some_and(|a| a >= delay(&p.name).max(GROUP_GRACE_SECONDS))
    };
    g.not_ready().any(late)
        || (g.members.len() < g.size as usize && g.members.first().is_some_and(|p| late(p)))
}
