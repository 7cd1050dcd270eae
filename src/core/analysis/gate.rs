//! The gate's judgement of one moment of a rollout: converged, failed on a
//! definitive symptom, or still waiting (and on what). Pure, like the rest
//! of the analysis: the caller watches, keeps time and decides when to stop.
//!
//! The order follows `kubectl rollout status`: generations observed first,
//! then the new revision's updated and available replicas; then what kubectl
//! does not look at, a ready endpoint for each replica. Pods of older
//! revisions neither fail nor pass the gate: after a rollback they may still
//! be there, draining.

use crate::catalogue::{Arg, FindingId, Message};
use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::crashes::CrashHistory;
use super::facts::{self, EventIndex};
use super::rules::replicasets::Refusal;
use super::{Diagnosis, Finding, PodState, Step};
use crate::chain::{self, Chain, PodSet, SetStrategy};
use crate::model::{Snapshot, TargetKind, TargetSpec};

/// The findings that fail the gate by default: symptoms that do not go away
/// by waiting. Transient ones (a slow pull, a readiness probe still
/// failing) wait for the timeout instead.
pub const DEFAULT_FAIL_ON: &[FindingId] = &[
    FindingId::IMAGE_PULL_NOT_FOUND,
    FindingId::IMAGE_PULL_DENIED,
    FindingId::CRASH_LOOP,
    FindingId::OOM_KILLED,
    FindingId::PROBE_KILLS_STARTUP,
    FindingId::INIT_CONTAINER_FAILING,
    FindingId::CONTAINER_CONFIG_ERROR,
    FindingId::CONTAINER_CANNOT_RUN,
    FindingId::POD_UNSCHEDULABLE,
    FindingId::RESOURCE_CLAIM_PENDING,
    FindingId::PROGRESS_DEADLINE_EXCEEDED,
    FindingId::CONTROLLER_NOT_CONVERGING,
    FindingId::PODS_NOT_CREATED,
    FindingId::MODEL_NOT_LOADED,
];

/// Restarts a crash-looping container may have before the gate fails.
pub const DEFAULT_MAX_RESTARTS: i32 = 3;

#[derive(Debug, Clone)]
pub struct GatePolicy {
    /// Finding ids that fail the gate.
    pub fail_on: BTreeSet<FindingId>,
    /// A crash loop fails the gate once a Pod restarted this many times.
    pub max_restarts: i32,
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            fail_on: DEFAULT_FAIL_ON.iter().copied().collect(),
            max_restarts: DEFAULT_MAX_RESTARTS,
        }
    }
}

/// One condition of convergence, as CI reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Stable name: `modelservice-observed`, `deployment-observed` (or
    /// `statefulset-observed`, `daemonset-observed`), `replicas-updated`, `replicas-available`, `endpoints-ready`,
    /// `declaration-in-effect`.
    pub name: &'static str,
    pub passed: bool,
    /// What was seen (`2 of 3`, `generation 4, observed 3`), for the
    /// views to word in their language.
    pub detail: Message,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Every check passed.
    Converged,
    /// A definitive symptom holds for the new revision: the index of the
    /// finding in the diagnosis, and why it is final when the finding alone
    /// does not say it (a repeated crash, a refusal no retry clears).
    Failed {
        finding: usize,
        why: Option<Message>,
    },
    /// Still moving: the first check that has not passed.
    Waiting {
        check: &'static str,
        detail: Message,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct GateView {
    pub judgement: Judgement,
    pub checks: Vec<Check>,
}

/// How the gate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Converged,
    Failed,
    TimedOut,
    /// The API could not be reached or read: no verdict either way.
    CouldNotDecide,
    /// SIGINT or SIGTERM came before a verdict.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Converged => "converged",
            Outcome::Failed => "failed",
            Outcome::TimedOut => "timed-out",
            Outcome::CouldNotDecide => "could-not-decide",
            Outcome::Interrupted => "interrupted",
        }
    }
}

pub use crate::model::HelmRelease;

/// The gate's decision at one moment: the view, and the outcome when the
/// wait is over.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub view: GateView,
    /// `None` while the rollout is still moving.
    pub outcome: Option<Outcome>,
    /// Why, when the checks alone do not say it (a failed Helm release).
    pub reason: Option<Message>,
}

/// Judges one moment, the Helm release included: a pending release is
/// awaited, a failed one fails the gate (what it declared may not be in
/// effect).
pub fn decide(
    moment: Observation<'_>,
    policy: &GatePolicy,
    helm: Option<&HelmRelease>,
) -> Decision {
    let mut view = judge(moment, policy);
    let release_failed = helm.is_some_and(|h| helm_check(h, &mut view));
    let outcome = match view.judgement {
        _ if release_failed => Some(Outcome::Failed),
        Judgement::Converged => Some(Outcome::Converged),
        Judgement::Failed { .. } => Some(Outcome::Failed),
        Judgement::Waiting { .. } => None,
    };
    let reason = if release_failed {
        Some(Message::new("gate.helm_failed"))
    } else if let Judgement::Failed { why, .. } = &view.judgement {
        why.clone()
    } else {
        None
    };
    Decision {
        view,
        outcome,
        reason,
    }
}

/// What decided the outcome: the finding that failed it, the Helm check,
/// or the check a timeout was still waiting on.
pub fn decided_by(
    outcome: Outcome,
    decision: Option<&Decision>,
    diagnosis: Option<&Diagnosis>,
) -> Option<String> {
    let decision = decision?;
    match (outcome, &decision.view.judgement) {
        (Outcome::Failed, _)
            if decision
                .view
                .checks
                .iter()
                .any(|c| c.name == HELM_CHECK && !c.passed) =>
        {
            Some(HELM_CHECK.to_string())
        }
        (Outcome::Failed, Judgement::Failed { finding, .. }) => diagnosis
            .and_then(|d| d.findings.get(*finding))
            .map(|f| f.id.to_string()),
        (Outcome::TimedOut, Judgement::Waiting { check, .. }) => Some(check.to_string()),
        _ => None,
    }
}

pub const HELM_CHECK: &str = "helm-release-deployed";

/// Adds the release's check. A pending release is awaited; returns whether
/// it failed.
fn helm_check(helm: &HelmRelease, view: &mut GateView) -> bool {
    let Some(status) = helm.status.as_deref() else {
        return false;
    };
    let passed = status == "deployed" || status == "superseded";
    view.checks.insert(
        0,
        Check {
            name: HELM_CHECK,
            passed,
            detail: Message::new("gate.helm")
                .arg("name", &helm.name)
                .arg(
                    "revision",
                    helm.revision.map_or("?".into(), |r| r.to_string()),
                )
                .arg("status", status),
        },
    );
    if !passed
        && matches!(
            view.judgement,
            Judgement::Converged | Judgement::Waiting { .. }
        )
    {
        view.judgement = Judgement::Waiting {
            check: HELM_CHECK,
            detail: view.checks[0].detail.clone(),
        };
    }
    status == "failed"
}

/// Compares the release with the target's Helm labels and annotations.
pub fn helm_matches(
    mut helm: HelmRelease,
    snapshot: &Snapshot,
    target: &TargetSpec,
    namespace: &str,
) -> HelmRelease {
    let objects = &snapshot.objects;
    let named = |m: &&k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.name.as_deref() == Some(target.name.as_str()) && m.namespace.as_deref() == Some(namespace)
    };
    // The object Helm manages: the target itself, or for any other kind
    // the Deployment of its name.
    let kind = match target.kind {
        TargetKind::ModelService | TargetKind::StatefulSet | TargetKind::DaemonSet => {
            crate::chain::OwnerKind::of_target(target.kind).kind
        }
        _ => crate::model::Kind::Deployment,
    };
    let meta = objects.metas(kind).into_iter().find(named);
    let Some(meta) = meta else {
        return helm;
    };
    let label = |k: &str| meta.labels.as_ref().and_then(|l| l.get(k)).cloned();
    let annotation = |k: &str| meta.annotations.as_ref().and_then(|a| a.get(k)).cloned();
    helm.chart = label("helm.sh/chart");
    helm.app_version = label("app.kubernetes.io/version");
    let release = annotation("meta.helm.sh/release-name");
    let release_ns = annotation("meta.helm.sh/release-namespace");
    let matches = release.as_deref() == Some(helm.name.as_str())
        && release_ns.as_deref() == Some(helm.namespace.as_str());
    helm.manages_target = Some(matches);
    if !matches {
        helm.notes.push(match release {
            Some(r) => Message::new("helm.other_release")
                .arg("kind", target.kind.as_str())
                .arg("target", &target.name)
                .arg("release", format!("{r:?}"))
                .arg("namespace", release_ns.as_deref().unwrap_or("?"))
                .arg("name", format!("{:?}", helm.name)),
            None => Message::new("helm.unmanaged")
                .arg("kind", target.kind.as_str())
                .arg("target", &target.name),
        });
    }
    helm
}

/// The checks that say the current declaration reached the workload's
/// controllers: until each one present passed, the Pods on show may be the
/// previous revision's.
const OBSERVED_CHECKS: [&str; 4] = [
    "modelservice-observed",
    "deployment-observed",
    "statefulset-observed",
    "daemonset-observed",
];

/// One moment of a rollout as the gate judges it: what was read, the
/// chain and diagnosis made of it, and the crashes seen so far.
#[derive(Clone, Copy)]
pub struct Observation<'m> {
    pub snapshot: &'m Snapshot,
    pub chain: &'m Chain<'m>,
    pub diagnosis: &'m Diagnosis,
    pub crashes: &'m CrashHistory,
}

/// Judges the rollout as it stands at `moment`.
pub fn judge(moment: Observation<'_>, policy: &GatePolicy) -> GateView {
    let Observation {
        chain, diagnosis, ..
    } = moment;
    let checks = checks(chain, diagnosis);
    // Until every controller of the target observed the change, the Pods on
    // show are the previous revision's: their symptoms say nothing about this
    // rollout. A plain Deployment has one controller, a ModelService two.
    let observed: Vec<&Check> = checks
        .iter()
        .filter(|c| OBSERVED_CHECKS.contains(&c.name))
        .collect();
    let revision_in_effect = !observed.is_empty() && observed.iter().all(|c| c.passed);
    let failed = diagnosis.findings.iter().enumerate().find_map(|(i, f)| {
        // A model no runtime serves, said after the spec was written,
        // gets no Deployment whose generation could be observed.
        let before_any_revision = f.id == FindingId::CONTROLLER_NOT_CONVERGING
            || (f.id == FindingId::MODEL_NOT_LOADED && super::rules::declaration_failure(chain));
        if !policy.fail_on.contains(&f.id) || !(revision_in_effect || before_any_revision) {
            return None;
        }
        match definitive(moment, f, policy) {
            Final::No => None,
            Final::Yes => Some((i, None)),
            Final::Because(why) => Some((i, Some(why))),
        }
    });
    let judgement = if let Some((finding, why)) = failed {
        Judgement::Failed { finding, why }
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

/// `generation G, observed O`, `none` for a missing one.
fn observed_message(generation: Option<i64>, observed: Option<i64>) -> Message {
    Message::new("gate.observed")
        .arg("generation", or_none(generation))
        .arg("observed", or_none(observed))
}

/// A number, or the word `none`.
fn or_none(n: Option<i64>) -> Arg {
    match n {
        Some(n) => Arg::from(n),
        None => Message::new("word.none").into(),
    }
}

/// The convergence checks, in the order a rollout passes them.
pub fn checks(chain: &Chain, d: &Diagnosis) -> Vec<Check> {
    let mut out = Vec::new();
    let has_model_service = chain.model_service().is_some()
        || chain.target.kind == crate::model::TargetKind::ModelService;
    if has_model_service {
        let (passed, detail) = match chain.model_service() {
            Some(m) => {
                let generation = m.metadata.generation;
                let observed = chain::observed_generation(m);
                (
                    chain::generation_observed(generation, observed),
                    observed_message(generation, observed),
                )
            }
            None => (false, Message::new("gate.no_model_service")),
        };
        out.push(Check {
            name: "modelservice-observed",
            passed,
            detail,
        });
    }
    if let Some(set) = chain.pod_set {
        out.extend(set_checks(set, d));
        return out;
    }
    if let Some(model) = model_check(chain, d) {
        out.push(model);
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
                detail: observed_message(d.metadata.generation, observed),
            }
        }
        None => Check {
            name: "deployment-observed",
            passed: false,
            detail: Message::new("gate.no_deployment"),
        },
    });
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    // A paused rollout (`spec.paused`, an Argo Rollout at a pause step or
    // aborted) moves no further until someone resumes or promotes it: the
    // gate waits on that, and says so, rather than on replica counts that
    // cannot change. Once every replica is updated the pause holds back
    // only the next change.
    if let Some(paused) = d
        .findings
        .iter()
        .find(|f| f.id == FindingId::ROLLOUT_PAUSED)
        .filter(|_| updated < desired)
    {
        out.push(Check {
            name: "rollout-resumed",
            passed: false,
            detail: paused.detail.clone(),
        });
    }
    out.push(Check {
        name: "replicas-updated",
        passed: deployment.is_some() && updated >= desired,
        detail: Message::new("gate.updated")
            .arg("updated", updated)
            .arg("desired", desired),
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
        detail: Message::new("gate.available")
            .arg("available", available)
            .arg("desired", desired),
    });
    let serving = d.replicas.serving;
    out.push(Check {
        name: "endpoints-ready",
        passed: deployment.is_some() && serving >= desired,
        detail: Message::new("gate.endpoints")
            .arg("serving", serving)
            .arg("desired", desired),
    });
    if has_model_service {
        let edited = d
            .findings
            .iter()
            .find(|f| f.id == FindingId::MANAGED_DEPLOYMENT_EDITED);
        out.push(Check {
            name: "declaration-in-effect",
            passed: edited.is_none(),
            detail: edited.map_or_else(
                || Message::new("gate.as_written"),
                |f| Message::new("gate.reverted").arg("detail", f.detail.clone()),
            ),
        });
    }
    out
}

/// The convergence checks of a StatefulSet or DaemonSet, as its own
/// controller counts them: observed, then updated (only the Pods its
/// strategy updates: a partition's ordinals, none for OnDelete), then
/// available and serving on the revision the declaration leaves each Pod on.
fn set_checks(set: PodSet, d: &Diagnosis) -> Vec<Check> {
    let desired = set.desired();
    let meta = set.meta();
    let observed = set.observed_generation();
    let revision_known = d
        .steps
        .iter()
        .find(|s| matches!(s.step, Step::StatefulSet | Step::DaemonSet))
        .is_some_and(|s| s.reached);
    let mut out = vec![Check {
        name: match set {
            PodSet::StatefulSet(_) => "statefulset-observed",
            PodSet::DaemonSet(_) => "daemonset-observed",
        },
        passed: set.observed() && revision_known,
        detail: Message::new("gate.set_observed")
            .arg("generation", or_none(meta.generation))
            .arg("observed", or_none(observed))
            .arg(
                "revision",
                if revision_known {
                    Arg::from("")
                } else {
                    Message::new("gate.no_update_revision").into()
                },
            ),
    }];
    let (updated, available) = match set {
        PodSet::StatefulSet(s) => {
            let st = s.status.as_ref();
            (
                st.and_then(|st| st.updated_replicas).unwrap_or(0),
                st.and_then(|st| st.available_replicas).unwrap_or(0),
            )
        }
        PodSet::DaemonSet(ds) => {
            let st = ds.status.as_ref();
            (
                st.and_then(|st| st.updated_number_scheduled).unwrap_or(0),
                st.map_or(0, |st| st.number_available.unwrap_or(0)),
            )
        }
    };
    let expected = set.expected_updated();
    out.push(Check {
        name: "replicas-updated",
        passed: updated >= expected,
        detail: match set.strategy() {
            SetStrategy::OnDelete => Message::new("gate.updated_on_delete")
                .arg("updated", updated)
                .arg("desired", desired),
            SetStrategy::RollingUpdate { partition } if partition > 0 => {
                Message::new("gate.updated_partition")
                    .arg("updated", updated)
                    .arg("expected", expected)
                    .arg("partition", partition)
            }
            SetStrategy::RollingUpdate { .. } => Message::new("gate.updated")
                .arg("updated", updated)
                .arg("desired", expected),
        },
    });
    // Ready Pods on the revision the declaration wants each on, and the
    // controller's own available count (minReadySeconds included).
    let ready = d.replicas.ready;
    out.push(Check {
        name: "replicas-available",
        passed: ready >= desired && available >= desired,
        detail: Message::new("gate.set_available")
            .arg("ready", ready)
            .arg("desired", desired)
            .arg("available", available),
    });
    let worker = d.verdict.serving.worker;
    let serving = if worker { ready } else { d.replicas.serving };
    out.push(Check {
        name: "endpoints-ready",
        passed: serving >= desired,
        detail: if worker {
            Message::new("gate.worker")
                .arg("serving", serving)
                .arg("desired", desired)
        } else {
            Message::new("gate.endpoints")
                .arg("serving", serving)
                .arg("desired", desired)
        },
    });
    out
}

/// An InferenceService's model, as its status says: loaded, or serving on
/// every desired replica (counts over a status that can lag). While it is
/// Pending or Loading the gate keeps waiting and names it.
fn model_check(chain: &Chain, d: &Diagnosis) -> Option<Check> {
    let top = chain
        .platform
        .filter(|p| p.platform.kind == crate::model::Kind::InferenceService)?;
    let model = &top.object.data["status"]["modelStatus"];
    let state = model["states"]["targetModelState"].as_str().unwrap_or("");
    let transition = model["transitionStatus"].as_str().unwrap_or("");
    let desired = chain.desired_replicas();
    let loaded = state == "Loaded" || (desired > 0 && d.replicas.serving >= desired);
    Some(Check {
        name: "model-loaded",
        passed: loaded,
        detail: Message::new("gate.model_state")
            .arg("state", if state.is_empty() { "?" } else { state })
            .arg(
                "transition",
                if transition.is_empty() {
                    "?"
                } else {
                    transition
                },
            ),
    })
}

/// How often the init container `name` of the Pod `uid` was restarted.
fn init_restarts(chain: &Chain, uid: &str, name: &str) -> i32 {
    chain
        .pods
        .iter()
        .filter(|p| p.pod.metadata.uid.as_deref() == Some(uid))
        .filter_map(|p| p.pod.status.as_ref()?.init_container_statuses.as_ref())
        .flatten()
        .filter(|s| s.name == name)
        .map(|s| s.restart_count)
        .sum()
}

/// Whether a finding is final for the new revision.
enum Final {
    No,
    Yes,
    /// Final, for a reason the report says.
    Because(Message),
}

impl From<bool> for Final {
    fn from(yes: bool) -> Self {
        if yes { Final::Yes } else { Final::No }
    }
}

fn definitive(moment: Observation<'_>, f: &Finding, policy: &GatePolicy) -> Final {
    let Observation {
        snapshot,
        chain,
        diagnosis: d,
        crashes,
    } = moment;
    if f.id == FindingId::PODS_NOT_CREATED {
        return refusal_is_final(f);
    }
    // A model that cannot load for want of a runtime, or before any
    // Deployment, gets no Pod by waiting; a failed load in a Pod is as
    // final as that Pod's own finding, which the gate judges itself.
    // A Knative Revision is marked failed only past its progress
    // deadline, and scaled to zero 30 s later: nothing more is tried.
    if f.id == FindingId::MODEL_NOT_LOADED {
        return (chain.deployment.is_none()
            || super::rules::declaration_failure(chain)
            || chain.revisions_own_deployments())
        .into();
    }
    if f.subject.kind != "Pod" {
        return Final::Yes;
    }
    let Some(state) = d.pods.iter().find(|p| p.uid == f.subject.uid) else {
        return Final::No;
    };
    if !state.current || state.terminating {
        return Final::No;
    }
    match f.id {
        // A probe kill is a restart loop with a known cause: a cache warmed
        // by the killed run can let the next one load in time, so it is
        // final as a crash loop is, after restarts or a repeat.
        FindingId::CRASH_LOOP
        | FindingId::PROBE_KILLS_STARTUP
        | FindingId::INIT_CONTAINER_FAILING => {
            let container = f.vars.get("container").map_or("", String::as_str);
            // The Pod's restarts count its app containers; a failing init
            // container's are its own.
            let restarts = if f.id == FindingId::INIT_CONTAINER_FAILING {
                init_restarts(chain, &state.uid, container)
            } else {
                state.restarts
            };
            if restarts >= policy.max_restarts {
                return Final::Yes;
            }
            match crashes.repeats(&state.uid, container) {
                Some(repeat) => Final::Because(repeat.why(container)),
                None => Final::No,
            }
        }
        FindingId::POD_UNSCHEDULABLE | FindingId::RESOURCE_CLAIM_PENDING => {
            (!could_still_schedule(snapshot, chain, d, state)).into()
        }
        FindingId::READINESS_FAILING => readiness_budget_spent(chain, d, state),
        _ => Final::Yes,
    }
}

/// How many times what its own probes allow a Pod may stay not ready
/// before `readiness-failing` fails the gate (when it is in `--fail-on`):
/// a model server warms for a while, and its probe settings say how long
/// its owners expect; the factor leaves room for a slow node.
pub const READINESS_BUDGET_FACTOR: f64 = 2.0;

/// Seconds a container's probes allow before it should be ready: the
/// startup probe's whole allowance (readiness probes wait for it), then the
/// readiness probe's delay and failure threshold; the longest container's.
pub fn readiness_allowance(pod: &Pod) -> f64 {
    let allows = |p: &k8s_openapi::api::core::v1::Probe| facts::probe_budget_seconds(p) as f64;
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| {
            c.startup_probe.as_ref().map_or(0.0, allows)
                + c.readiness_probe.as_ref().map_or(0.0, allows)
        })
        .fold(0.0, f64::max)
}

fn readiness_budget_spent(chain: &Chain, d: &Diagnosis, state: &PodState) -> Final {
    let Some(pod) = chain
        .pods
        .iter()
        .map(|p| p.pod)
        .find(|p| facts::uid(&p.metadata) == state.uid)
    else {
        return Final::No;
    };
    let Some(started) = state.moments.started.at else {
        return Final::No;
    };
    let allowance = readiness_allowance(pod);
    let budget = READINESS_BUDGET_FACTOR * allowance;
    let waited = facts::seconds_between(started, d.now);
    if waited < budget {
        return Final::No;
    }
    Final::Because(
        Message::new("gate.readiness_budget")
            .arg("waited", format!("{waited:.0}"))
            .arg("budget", format!("{budget:.0}"))
            .arg("factor", READINESS_BUDGET_FACTOR.to_string())
            .arg("allowance", format!("{allowance:.0}")),
    )
}

/// A refused Pod create is final when retrying cannot clear it: a policy
/// or admission denial, a missing ServiceAccount, a quota nothing in the
/// rollout frees. A webhook that could not be called may answer again,
/// and a quota a surge is waiting on frees itself: those are waited for.
fn refusal_is_final(f: &Finding) -> Final {
    let var = |name: &str| f.vars.get(name).map(String::as_str);
    let Some(refusal) = var("refusal").and_then(Refusal::parse) else {
        return Final::No;
    };
    if f.severity == crate::catalogue::Severity::Info
        || var("transient") != Some("false")
        || refusal.may_pass_on_retry()
    {
        return Final::No;
    }
    Final::Because(Message::new("gate.refusal_final").arg("refusal", refusal.message()))
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
    if d.findings
        .iter()
        .any(|f| f.id == FindingId::ROLLOUT_SURGE_BLOCKED)
    {
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
