//! The gate's judgement of one moment of a rollout: converged, failed on a
//! definitive symptom, or still waiting (and on what). Pure, like the rest
//! of the analysis: the caller watches, keeps time and decides when to stop.
//!
//! The order follows `kubectl rollout status`: generations observed first,
//! then the new revision's updated and available replicas; then what kubectl
//! does not look at, a ready endpoint for each replica. Pods of older
//! revisions neither fail nor pass the gate: after a rollback they may still
//! be there, draining.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use super::facts::{self, EventIndex};
use super::{Diagnosis, Finding, PodState};
use crate::chain::{self, Chain};
use crate::model::Snapshot;

/// The findings that fail the gate by default: symptoms that do not go away
/// by waiting. Transient ones (a slow pull, a readiness probe still
/// failing) wait for the timeout instead.
pub const DEFAULT_FAIL_ON: &[&str] = &[
    "image-pull-not-found",
    "image-pull-denied",
    "crash-loop",
    "oom-killed",
    "container-config-error",
    "container-cannot-run",
    "pod-unschedulable",
    "progress-deadline-exceeded",
    "controller-not-converging",
];

/// Restarts a crash-looping container may have before the gate fails.
pub const DEFAULT_MAX_RESTARTS: i32 = 3;

#[derive(Debug, Clone)]
pub struct GatePolicy {
    /// Finding ids that fail the gate.
    pub fail_on: BTreeSet<String>,
    /// A crash loop fails the gate once a Pod restarted this many times.
    pub max_restarts: i32,
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            fail_on: DEFAULT_FAIL_ON.iter().map(|s| s.to_string()).collect(),
            max_restarts: DEFAULT_MAX_RESTARTS,
        }
    }
}

/// One condition of convergence, as CI reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Stable name: `modelservice-observed`, `deployment-observed`,
    /// `replicas-updated`, `replicas-available`, `endpoints-ready`,
    /// `declaration-in-effect`.
    pub name: &'static str,
    pub passed: bool,
    /// What was seen (`2 of 3`, `generation 4, observed 3`).
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Every check passed.
    Converged,
    /// A definitive symptom holds for the new revision: the index of the
    /// finding in the diagnosis.
    Failed { finding: usize },
    /// Still moving: the first check that has not passed.
    Waiting { check: &'static str, detail: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct GateView {
    pub judgement: Judgement,
    pub checks: Vec<Check>,
}

/// Judges the rollout as it stands in `snapshot`.
pub fn judge(
    snapshot: &Snapshot,
    chain: &Chain,
    diagnosis: &Diagnosis,
    policy: &GatePolicy,
) -> GateView {
    let checks = checks(chain, diagnosis);
    let passed = |name: &str| checks.iter().any(|c| c.name == name && c.passed);
    // Until both controllers observed the change, the Pods on show are the
    // previous revision's: their symptoms say nothing about this rollout.
    let revision_in_effect = passed("modelservice-observed") && passed("deployment-observed");
    let failed = diagnosis.findings.iter().position(|f| {
        policy.fail_on.contains(f.id)
            && (revision_in_effect || f.id == "controller-not-converging")
            && definitive(snapshot, chain, diagnosis, f, policy)
    });
    let judgement = if let Some(finding) = failed {
        Judgement::Failed { finding }
    } else if let Some(first) = checks.iter().find(|c| !c.passed) {
        Judgement::Waiting {
            check: first.name,
            detail: first.detail.clone(),
        }
    } else {
        Judgement::Converged
    };
    GateView { judgement, checks }
}

/// The convergence checks, in the order a rollout passes them.
pub fn checks(chain: &Chain, d: &Diagnosis) -> Vec<Check> {
    let mut out = Vec::new();
    let has_model_service = chain.model_service.is_some()
        || chain.target.kind == crate::model::TargetKind::ModelService;
    if has_model_service {
        let (passed, detail) = match chain.model_service {
            Some(m) => {
                let generation = m.metadata.generation;
                let observed = chain::observed_generation(m);
                (
                    chain::generation_observed(generation, observed),
                    format!(
                        "generation {}, observed {}",
                        generation.map_or("none".into(), |g| g.to_string()),
                        observed.map_or("none".into(), |o| o.to_string())
                    ),
                )
            }
            None => (false, "no ModelService".into()),
        };
        out.push(Check {
            name: "modelservice-observed",
            passed,
            detail,
        });
    }
    let deployment = chain.deployment;
    let desired = deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    let status = deployment.and_then(|d| d.status.as_ref());
    out.push(match deployment {
        Some(d) => {
            let observed = status.and_then(|s| s.observed_generation);
            Check {
                name: "deployment-observed",
                passed: chain::generation_observed(d.metadata.generation, observed),
                detail: format!(
                    "generation {}, observed {}",
                    d.metadata
                        .generation
                        .map_or("none".into(), |g| g.to_string()),
                    observed.map_or("none".into(), |o| o.to_string())
                ),
            }
        }
        None => Check {
            name: "deployment-observed",
            passed: false,
            detail: "no Deployment yet".into(),
        },
    });
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    out.push(Check {
        name: "replicas-updated",
        passed: deployment.is_some() && updated >= desired,
        detail: format!("{updated} of {desired} updated"),
    });
    // Available on the current revision: its ReplicaSet's count, not the
    // Deployment's, which also counts old Pods.
    let available = chain
        .replica_sets
        .iter()
        .find(|r| r.current)
        .and_then(|r| r.replica_set.status.as_ref())
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    out.push(Check {
        name: "replicas-available",
        passed: deployment.is_some() && available >= desired,
        detail: format!("{available} of {desired} available on the current revision"),
    });
    let serving = d.replicas.serving;
    out.push(Check {
        name: "endpoints-ready",
        passed: deployment.is_some() && serving >= desired,
        detail: format!("{serving} of {desired} with a ready endpoint"),
    });
    if has_model_service {
        let edited = d
            .findings
            .iter()
            .find(|f| f.id == "managed-deployment-edited");
        out.push(Check {
            name: "declaration-in-effect",
            passed: edited.is_none(),
            detail: edited.map_or_else(
                || "the Deployment is as the controller wrote it".into(),
                |f| format!("{} (the controller will revert it)", f.detail),
            ),
        });
    }
    out
}

/// Whether a finding is final for the new revision.
fn definitive(
    snapshot: &Snapshot,
    chain: &Chain,
    d: &Diagnosis,
    f: &Finding,
    policy: &GatePolicy,
) -> bool {
    if f.subject.kind != "Pod" {
        return true;
    }
    let Some(state) = d.pods.iter().find(|p| p.uid == f.subject.uid) else {
        return false;
    };
    if !state.current || state.terminating {
        return false;
    }
    match f.id {
        "crash-loop" => state.restarts >= policy.max_restarts,
        "pod-unschedulable" => !could_still_schedule(snapshot, chain, d, state),
        _ => true,
    }
}

/// An unschedulable Pod may still be placed when something is changing:
/// Pods terminating free their requests, a preemption is pending, a
/// cluster autoscaler is adding a node, the rollout waits on its surge, or
/// the nodes that refuse it are only not ready (yet).
fn could_still_schedule(
    snapshot: &Snapshot,
    chain: &Chain,
    d: &Diagnosis,
    state: &PodState,
) -> bool {
    if d.pods.iter().any(|p| p.terminating) {
        return true;
    }
    if d.findings.iter().any(|f| f.id == "rollout-surge-blocked") {
        return true;
    }
    let Some(pod) = chain
        .pods
        .iter()
        .map(|p| p.pod)
        .find(|p: &&Pod| p.metadata.uid.as_deref() == Some(state.uid.as_str()))
    else {
        return false;
    };
    if pod
        .status
        .as_ref()
        .and_then(|s| s.nominated_node_name.as_deref())
        .is_some_and(|n| !n.is_empty())
    {
        return true;
    }
    let events = EventIndex::new(snapshot);
    let pod_events = events.about("Pod", &pod.metadata);
    if pod_events.iter().any(|e| e.reason() == "TriggeredScaleUp") {
        return true;
    }
    let message = pod_events
        .iter()
        .rev()
        .find(|e| e.reason() == "FailedScheduling")
        .map(|e| e.message().to_string())
        .or_else(|| facts::pod_condition(pod, "PodScheduled").and_then(|c| c.message.clone()))
        .unwrap_or_default();
    message.contains("node.kubernetes.io/not-ready")
        || message.contains("node.kubernetes.io/unreachable")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::walk;
    use crate::model::TargetSpec;
    use crate::source::read_snapshot_file;

    fn view_of(file: &str, policy: &GatePolicy) -> (Diagnosis, GateView) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let snapshot = read_snapshot_file(&path).unwrap();
        let target = TargetSpec::parse("chart-demo", None).unwrap();
        let ns = snapshot
            .objects
            .model_services
            .first()
            .and_then(|m| m.metadata.namespace.clone())
            .unwrap();
        let chain = walk(&snapshot, &target, &ns, None).unwrap();
        let now = snapshot
            .origin
            .captured_at
            .or(snapshot.origin.newest_seen)
            .unwrap();
        let d = super::super::analyze(&snapshot, &chain, now);
        let view = judge(&snapshot, &chain, &d, policy);
        (d, view)
    }

    fn failed_id(d: &Diagnosis, v: &GateView) -> Option<&'static str> {
        match v.judgement {
            Judgement::Failed { finding } => Some(d.findings[finding].id),
            _ => None,
        }
    }

    #[test]
    fn a_serving_rollout_converges_with_every_check_passed() {
        let (_, v) = view_of("fixtures/demo/healthy.yaml", &GatePolicy::default());
        assert_eq!(v.judgement, Judgement::Converged, "{:?}", v.checks);
        assert!(v.checks.iter().all(|c| c.passed));
        assert_eq!(v.checks.len(), 6);
    }

    #[test]
    fn a_crash_loop_fails_once_restarts_reach_the_limit() {
        let (d, v) = view_of("fixtures/demo/crash-loop.yaml", &GatePolicy::default());
        assert_eq!(failed_id(&d, &v), Some("crash-loop"));
        let patient = GatePolicy {
            max_restarts: 1000,
            ..GatePolicy::default()
        };
        let (d, v) = view_of("fixtures/demo/crash-loop.yaml", &patient);
        // Still failed, by the Deployment's progress deadline, not the loop.
        assert_ne!(failed_id(&d, &v), Some("crash-loop"));
    }

    #[test]
    fn fail_on_decides_which_findings_are_final() {
        let none = GatePolicy {
            fail_on: BTreeSet::new(),
            ..GatePolicy::default()
        };
        let (_, v) = view_of("fixtures/demo/crash-loop.yaml", &none);
        assert!(
            matches!(v.judgement, Judgement::Waiting { .. }),
            "{:?}",
            v.judgement
        );
    }

    #[test]
    fn each_demo_rollout_gets_the_judgement_a_ci_job_needs() {
        let cases = [
            ("image-pull-not-found", Some("image-pull-not-found")),
            ("image-pull-denied", Some("image-pull-denied")),
            ("oom-killed", Some("oom-killed")),
            ("unschedulable", Some("pod-unschedulable")),
            ("controller-paused", Some("controller-not-converging")),
            // Transient: they wait for the timeout.
            ("image-pull-timeout", None),
            ("readiness-failing", None),
            ("rollout-in-progress", None),
        ];
        for (name, want) in cases {
            let (d, v) = view_of(
                &format!("fixtures/demo/{name}.yaml"),
                &GatePolicy::default(),
            );
            assert_eq!(failed_id(&d, &v), want, "{name}: {:?}", v.judgement);
        }
    }
}
