//! A container its own liveness or startup probe kills before it ever
//! became healthy: what a model server that loads for longer than its
//! probe allows looks like (SPEC section 4, `probe-kills-startup`).
//!
//! The kubelet says it in two Events: `Unhealthy` (`Liveness probe
//! failed: ...`) and `Killing` (`Container NAME failed liveness probe,
//! will be restarted`). A liveness probe counts consecutive failures, so a
//! probe that never passed kills the container at its budget,
//! initialDelaySeconds + failureThreshold x periodSeconds, plus at most the
//! grace period to stop it. A run that lasted no longer than that never
//! passed its probe: it was killed while starting, not after serving.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, Probe};

use super::{Ctx, container_label, event_evidence, pod_events, pod_finding, pod_label};
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{FindingId, Message};
use crate::model::EventRecord;

/// The Pod's default `terminationGracePeriodSeconds`.
const DEFAULT_GRACE_SECONDS: i64 = 30;
/// Slack for the kubelet's sync and the probe's own timeout.
const SLACK_SECONDS: f64 = 10.0;

/// Which probe killed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Liveness,
    Startup,
}

impl Kind {
    fn field(self) -> &'static str {
        match self {
            Kind::Liveness => "livenessProbe",
            Kind::Startup => "startupProbe",
        }
    }
}

/// A probe kill during startup, with what proves it.
pub(super) struct ProbeKill<'a> {
    kind: Kind,
    probe: &'a Probe,
    killing: &'a EventRecord,
    unhealthy: Option<&'a EventRecord>,
    /// How long the killed run lasted, when the runtime recorded it.
    run: Option<(Timestamp, Timestamp)>,
}

fn spec_of<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == name)
}

/// The container `s` was killed by its liveness or startup probe in a run
/// that never passed it, and is not Ready now.
pub(super) fn probe_kill<'a>(
    ctx: &Ctx<'a>,
    pod: &'a Pod,
    s: &ContainerStatus,
) -> Option<ProbeKill<'a>> {
    if s.ready || s.restart_count < 1 {
        return None;
    }
    let spec = spec_of(pod, &s.name)?;
    let events = pod_events(ctx, pod);
    let (kind, killing) = events.iter().rev().find_map(|e| {
        if e.reason() != "Killing" {
            return None;
        }
        let said = e.message();
        let about = format!("Container {} failed ", s.name);
        let rest = said.strip_prefix(&about)?;
        if rest.starts_with("liveness probe") {
            Some((Kind::Liveness, *e))
        } else if rest.starts_with("startup probe") {
            Some((Kind::Startup, *e))
        } else {
            None
        }
    })?;
    let probe = match kind {
        Kind::Liveness => spec.liveness_probe.as_ref()?,
        Kind::Startup => spec.startup_probe.as_ref()?,
    };
    let terminated = [
        s.state.as_ref().and_then(|st| st.terminated.as_ref()),
        s.last_state.as_ref().and_then(|l| l.terminated.as_ref()),
    ]
    .into_iter()
    .flatten()
    .next()?;
    // An OOM kill is the kernel's, whatever the probe said after.
    if terminated.reason.as_deref() == Some("OOMKilled") {
        return None;
    }
    let run = terminated
        .started_at
        .as_ref()
        .zip(terminated.finished_at.as_ref())
        .map(|(a, b)| (a.0, b.0));
    let kill = ProbeKill {
        kind,
        probe,
        killing,
        unhealthy: events.iter().rev().copied().find(|e| {
            e.reason() == "Unhealthy"
                && e.message().starts_with(match kind {
                    Kind::Liveness => "Liveness probe failed",
                    Kind::Startup => "Startup probe failed",
                })
        }),
        run,
    };
    // A run longer than the budget and the grace to stop it passed its
    // probe for a while: it served, then hung; not a startup kill.
    let grace = pod
        .spec
        .as_ref()
        .and_then(|s| s.termination_grace_period_seconds)
        .unwrap_or(DEFAULT_GRACE_SECONDS);
    let (_, _, period) = facts::probe_timing(probe);
    let longest = (facts::probe_budget_seconds(kill.probe) + grace + i64::from(period)) as f64
        + SLACK_SECONDS;
    if let Some((started, finished)) = run
        && facts::seconds_between(started, finished) > longest
    {
        return None;
    }
    Some(kill)
}

pub fn probe_kills_startup(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::container_statuses(pod) {
            let Some(kill) = probe_kill(ctx, pod, s) else {
                continue;
            };
            out.push(finding(ctx, pod, s, &kill));
        }
    }
    out
}

fn finding(ctx: &Ctx, pod: &Pod, s: &ContainerStatus, kill: &ProbeKill) -> Finding {
    let (delay, threshold, period) = facts::probe_timing(kill.probe);
    let budget = Message::new("probe-kills.budget")
        .arg("budget", facts::probe_budget_seconds(kill.probe))
        .arg("delay", delay)
        .arg("threshold", threshold)
        .arg("period", period);
    let ran = match kill.run {
        Some((started, finished)) => {
            Message::new("probe-kills.ran").arg("run", facts::age(started, finished))
        }
        None => Message::new("probe-kills.ran_unrecorded"),
    };
    let detail = Message::new(match kill.kind {
        Kind::Liveness => "probe-kills.detail_liveness",
        Kind::Startup => "probe-kills.detail_startup",
    })
    .arg("container", &s.name)
    .arg("restarts", s.restart_count)
    .arg("budget", budget.clone())
    .arg("ran", ran.clone());
    // Running again, it fails at Ready (it is loading again); waiting or
    // terminated, at Started.
    let running = s.state.as_ref().is_some_and(|st| st.running.is_some());
    let step = if running { Step::Ready } else { Step::Started };
    let mut f = pod_finding(ctx, FindingId::PROBE_KILLS_STARTUP, pod, step, detail)
        .var("container", s.name.clone())
        .evidence(Evidence::said(
            pod_label(pod),
            format!("spec.containers[{}].{}", s.name, kill.kind.field()),
            budget,
        ));
    let terminated = s
        .last_state
        .as_ref()
        .and_then(|l| l.terminated.as_ref())
        .or_else(|| s.state.as_ref().and_then(|st| st.terminated.as_ref()));
    if let Some(t) = terminated {
        f = f.evidence(
            Evidence::said(
                pod_label(pod),
                format!("{}.lastState.terminated", container_label(s)),
                Message::new("probe-kills.terminated").arg("ran", ran).arg(
                    "terminated",
                    super::crashes::terminated_value(
                        t.exit_code,
                        t.reason.as_deref().unwrap_or(""),
                        None,
                    ),
                ),
            )
            .at(t.finished_at.as_ref().map(|t| t.0)),
        );
    }
    if let Some(e) = kill.unhealthy {
        f = f.evidence(event_evidence(pod, e));
    }
    f.evidence(event_evidence(pod, kill.killing))
        .evidence(Evidence::new(
            pod_label(pod),
            format!("{}.restartCount", container_label(s)),
            s.restart_count.to_string(),
        ))
}
