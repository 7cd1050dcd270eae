//! The DNS advice: the cluster's own words that point at name resolution.

use super::{Ctx, container_label, event_evidence, pod_events, pod_finding, pod_label};
use crate::analysis::facts;
use crate::analysis::{Evidence, Finding};
use crate::catalogue::{FindingId, Message};

/// What a resolver says when a name does not resolve or DNS is unreachable.
const DNS_ERRORS: &[&str] = &[
    "no such host",
    "temporary failure in name resolution",
    "name or service not known",
    "server misbehaving",
    "nxdomain",
    "could not resolve host",
    "getaddrinfo",
    ":53: i/o timeout",
];

fn dns_error_in(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    DNS_ERRORS.iter().any(|e| t.contains(e))
}

/// Advice: DNS cannot be seen from the API, but the cluster's own words
/// (termination messages, events, captured logs) can point at it.
pub fn dns_check(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if state.moments.ready.reached {
            continue;
        }
        let pod = p.pod;
        let mut evidence = Vec::new();
        for s in facts::all_container_statuses(pod) {
            let terminated = [
                s.last_state.as_ref().and_then(|l| l.terminated.as_ref()),
                s.state.as_ref().and_then(|st| st.terminated.as_ref()),
            ];
            for t in terminated.into_iter().flatten() {
                if let Some(m) = t.message.as_deref().filter(|m| dns_error_in(m)) {
                    evidence.push(
                        Evidence::new(
                            pod_label(pod),
                            format!("{}.lastState.terminated.message", container_label(s)),
                            m.trim(),
                        )
                        .at(t.finished_at.as_ref().map(|t| t.0)),
                    );
                }
            }
        }
        for e in pod_events(ctx, pod) {
            if dns_error_in(e.message()) {
                evidence.push(event_evidence(pod, e));
            }
        }
        let name = facts::name(&pod.metadata);
        for log in ctx
            .snapshot
            .logs
            .iter()
            .filter(|l| l.pod == name && l.namespace == ctx.chain.namespace)
        {
            if let Some(line) = log.text.lines().rev().find(|l| dns_error_in(l)) {
                evidence.push(Evidence::labelled(
                    pod_label(pod),
                    crate::analysis::logs::log_field(&log.container, log.previous),
                    line.trim(),
                ));
            }
        }
        let Some(first) = evidence.first() else {
            continue;
        };
        let detail = Message::new("dns.detail").arg("text", &first.value);
        let mut f = pod_finding(
            ctx,
            FindingId::DNS_CHECK,
            pod,
            state.last_step.next(),
            detail,
        );
        f.evidence = evidence;
        out.push(f);
    }
    out
}
