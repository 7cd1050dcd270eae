//! Pod rules for containers that never start: volumes, sandbox or network
//! (the kubelet's events), and images that cannot be pulled.

use k8s_openapi::api::core::v1::ContainerStatus;

use super::{Ctx, container_label, event_evidence, pod_events, pod_finding, pod_label};
use crate::analysis::facts::{self, age};
use crate::analysis::{Evidence, Finding, Step};
use crate::catalogue::{FindingId, Message};
use crate::model::EventRecord;

/// Events a kubelet writes when a bound Pod cannot get its containers
/// created: volumes, sandbox, network.
const NOT_STARTED_REASONS: &[&str] = &[
    "FailedMount",
    "FailedAttachVolume",
    "FailedMapVolume",
    "FailedCreatePodSandBox",
    "FailedCreatePodContainer",
    "NetworkNotReady",
    "FailedSync",
];

pub fn pod_not_started(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, state) in ctx.current_pods() {
        if !state.moments.bound.reached || state.moments.started.reached {
            continue;
        }
        let pod = p.pod;
        // Containers still being created, not failing in a way other rules name.
        let creating = facts::all_container_statuses(pod).all(|s| {
            s.state
                .as_ref()
                .and_then(|st| st.waiting.as_ref())
                .and_then(|w| w.reason.as_deref())
                .is_none_or(|r| matches!(r, "ContainerCreating" | "PodInitializing"))
        });
        if !creating {
            continue;
        }
        let bound_at = state.moments.bound.at;
        let blockers: Vec<&EventRecord> = pod_events(ctx, pod)
            .into_iter()
            .filter(|e| e.event_type() == "Warning" && NOT_STARTED_REASONS.contains(&e.reason()))
            .filter(|e| match (bound_at, e.last_seen()) {
                (Some(b), Some(seen)) => seen >= b,
                _ => true,
            })
            .collect();
        let Some(latest) = blockers.last() else {
            continue;
        };
        let detail = match bound_at {
            Some(b) => Message::new("not-started.detail").arg("waited", age(b, ctx.now)),
            None => Message::new("not-started.detail_untimed"),
        }
        .arg("reason", latest.reason())
        .arg("message", latest.message());
        let mut f = pod_finding(ctx, FindingId::POD_NOT_STARTED, pod, Step::Started, detail)
            .evidence(
                Evidence::new(
                    pod_label(pod),
                    "spec.nodeName",
                    state.node.clone().unwrap_or_default(),
                )
                .at(bound_at),
            );
        // One line per distinct reason, the newest of each.
        let mut seen = Vec::new();
        for e in blockers.iter().rev() {
            if !seen.contains(&e.reason()) {
                seen.push(e.reason());
                f = f.evidence(event_evidence(pod, e));
            }
        }
        out.push(f);
    }
    out
}

const PULL_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "ImageInspectError",
    "RegistryUnavailable",
];

/// Sorts a registry's words into the four pull failures. Order matters:
/// a denial often also says "does not exist".
pub fn classify_pull_error(message: &str) -> FindingId {
    let m = message.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&[
        "pull access denied",
        "unauthorized",
        "authorization failed",
        "authentication required",
        "403 forbidden",
        "denied",
        "insufficient_scope",
        "no basic auth credentials",
    ]) {
        FindingId::IMAGE_PULL_DENIED
    } else if any(&[
        "not found",
        "manifest unknown",
        "notfound",
        "no such manifest",
        "no matching manifest",
        "name unknown",
    ]) {
        FindingId::IMAGE_PULL_NOT_FOUND
    } else if any(&[
        "i/o timeout",
        "deadlineexceeded",
        "deadline exceeded",
        "timeout",
        "timed out",
    ]) {
        FindingId::IMAGE_PULL_TIMEOUT
    } else {
        FindingId::IMAGE_PULL_FAILED
    }
}

pub fn image_pull(ctx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (p, _) in ctx.current_pods() {
        let pod = p.pod;
        for s in facts::all_container_statuses(pod) {
            let Some(waiting) = s.state.as_ref().and_then(|st| st.waiting.as_ref()) else {
                continue;
            };
            let reason = waiting.reason.as_deref().unwrap_or("");
            if !PULL_REASONS.contains(&reason) {
                continue;
            }
            // The registry's words are in the kubelet's Failed event (and in
            // the waiting message while the state is ErrImagePull).
            let failed = pod_events(ctx, pod).into_iter().rev().find(|e| {
                e.reason() == "Failed"
                    && e.message().contains("ull image")
                    && mentions_container_image(e, s)
            });
            let registry_words = failed
                .map(|e| e.message().to_string())
                .or_else(|| {
                    waiting
                        .message
                        .clone()
                        .filter(|m| !m.starts_with("Back-off"))
                })
                .unwrap_or_default();
            let id = if registry_words.is_empty() {
                FindingId::IMAGE_PULL_FAILED
            } else {
                classify_pull_error(&registry_words)
            };
            let detail = if registry_words.is_empty() {
                Message::new("image-pull.unrecorded")
                    .arg("container", &s.name)
                    .arg("reason", reason)
                    .arg("image", &s.image)
            } else {
                Message::new("image-pull.detail")
                    .arg("image", &s.image)
                    .arg("words", registry_words)
            };
            let mut f = pod_finding(ctx, id, pod, Step::Started, detail)
                .var("container", s.name.clone())
                .evidence(Evidence::new(
                    pod_label(pod),
                    format!("{}.state.waiting", container_label(s)),
                    format!("{reason}: {}", waiting.message.as_deref().unwrap_or("")),
                ));
            if let Some(e) = failed {
                f = f.evidence(event_evidence(pod, e));
            }
            out.push(f);
        }
    }
    out
}

fn mentions_container_image(e: &EventRecord, s: &ContainerStatus) -> bool {
    let field = e.subject().field_path;
    field.is_empty() || field.contains(&format!("{{{}}}", s.name)) || e.message().contains(&s.image)
}

#[cfg(test)]
mod tests {
    use super::classify_pull_error;
    use crate::catalogue::FindingId;

    #[test]
    fn registry_words_sort_into_the_four_pull_failures() {
        let cases = [
            (
                "pull access denied, repository does not exist or may require authorization",
                FindingId::IMAGE_PULL_DENIED,
            ),
            (
                "unexpected status: 401 Unauthorized",
                FindingId::IMAGE_PULL_DENIED,
            ),
            ("403 Forbidden", FindingId::IMAGE_PULL_DENIED),
            (
                "rpc error: code = NotFound desc = failed to resolve reference: not found",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "manifest unknown: manifest unknown",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "no matching manifest for linux/arm64 in the manifest list entries",
                FindingId::IMAGE_PULL_NOT_FOUND,
            ),
            (
                "dial tcp 203.0.113.10:443: i/o timeout",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "net/http: TLS handshake timeout",
                FindingId::IMAGE_PULL_TIMEOUT,
            ),
            (
                "dial tcp: lookup registry.example.com: no such host",
                FindingId::IMAGE_PULL_FAILED,
            ),
            (
                "x509: certificate signed by unknown authority",
                FindingId::IMAGE_PULL_FAILED,
            ),
        ];
        for (text, id) in cases {
            assert_eq!(classify_pull_error(text), id, "{text}");
        }
    }
}
