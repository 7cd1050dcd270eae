//! The rules: one small function per finding, evidence in, findings out.
//! Adding a finding is one function here plus one entry in the catalogue.

mod controller;
mod groups;
mod job_failed;
mod platform;
pub(super) use platform::declaration_failure;
mod pods;
pub(super) mod replicasets;
pub(super) mod scaling;
pub(super) mod service;

use crate::catalogue::FindingId;
use jiff::Timestamp;

use super::facts::EventIndex;
use super::{Finding, PodState};
use crate::chain::{Chain, ChainPod};
use crate::model::{Snapshot, TemplateVars};

/// What every rule may read. Nothing here does IO.
pub struct Ctx<'a> {
    pub snapshot: &'a Snapshot,
    pub chain: &'a Chain<'a>,
    pub now: Timestamp,
    pub events: &'a EventIndex<'a>,
    /// Every Pod UID of the snapshot, indexed once per snapshot.
    pub pod_uids: &'a std::collections::HashSet<&'a str>,
    pub pods: &'a [PodState],
}

type Rule = fn(&Ctx) -> Vec<Finding>;

/// Every rule, with the ids it may emit.
const RULES: &[(&[FindingId], Rule)] = &[
    (
        &[FindingId::CONTROLLER_NOT_CONVERGING],
        controller::controller_not_converging,
    ),
    (
        &[FindingId::DEPLOYMENT_MISSING],
        controller::deployment_missing,
    ),
    (
        &[FindingId::DEPLOYMENT_NOT_OBSERVED],
        controller::deployment_not_observed,
    ),
    (
        &[FindingId::PODS_NOT_CREATED],
        replicasets::pods_not_created,
    ),
    (
        &[FindingId::PROGRESS_DEADLINE_EXCEEDED],
        controller::progress_deadline_exceeded,
    ),
    (&[FindingId::ROLLOUT_PAUSED], controller::rollout_paused),
    (
        &[FindingId::MANAGED_DEPLOYMENT_EDITED],
        controller::managed_deployment_edited,
    ),
    (&[FindingId::FIELD_CONFLICT], controller::field_conflict),
    (
        &[FindingId::ROLLOUT_SURGE_BLOCKED],
        controller::rollout_surge_blocked,
    ),
    (&[FindingId::POD_UNSCHEDULABLE], pods::unschedulable),
    (
        &[FindingId::RESOURCE_CLAIM_PENDING],
        pods::resource_claim_pending,
    ),
    (&[FindingId::SCHEDULER_SILENT], pods::scheduler_silent),
    (&[FindingId::POD_NOT_STARTED], pods::pod_not_started),
    (
        &[FindingId::INIT_CONTAINER_FAILING],
        pods::init_container_failing,
    ),
    (
        &[
            FindingId::CRASH_LOOP,
            FindingId::CONTAINER_CANNOT_RUN,
            FindingId::CONTAINER_CONFIG_ERROR,
        ],
        pods::container_failures,
    ),
    (&[FindingId::OOM_KILLED], pods::oom_killed),
    (&[FindingId::PROBE_KILLS_STARTUP], pods::probe_kills_startup),
    (&[FindingId::POD_EVICTED], pods::pod_evicted),
    (&[FindingId::POD_FAILED], pods::pod_failed),
    (&[FindingId::JOB_FAILED], job_failed::job_failed),
    (&[FindingId::MODEL_NOT_LOADED], platform::model_not_loaded),
    (&[FindingId::GROUP_NOT_READY], groups::group_not_ready),
    (
        &[
            FindingId::IMAGE_PULL_DENIED,
            FindingId::IMAGE_PULL_NOT_FOUND,
            FindingId::IMAGE_PULL_TIMEOUT,
            FindingId::IMAGE_PULL_FAILED,
        ],
        pods::image_pull,
    ),
    (&[FindingId::READINESS_FAILING], pods::readiness_failing),
    (&[FindingId::NODE_NOT_READY], pods::node_not_ready),
    (&[FindingId::DNS_CHECK], pods::dns_check),
    (&[FindingId::SERVICE_MISSING], service::service_missing),
    (&[FindingId::SELECTOR_MISMATCH], service::selector_mismatch),
    (&[FindingId::PORT_MISMATCH], service::port_mismatch),
    (
        &[FindingId::ENDPOINTS_NOT_READY],
        service::endpoints_not_ready,
    ),
    (&[FindingId::ENDPOINTS_STALE], service::endpoints_stale),
    (
        &[FindingId::HPA_METRICS_UNAVAILABLE],
        scaling::hpa_metrics_unavailable,
    ),
    (&[FindingId::HPA_AT_MAX], scaling::hpa_at_max),
    (
        &[FindingId::HPA_TARGET_MISSING],
        scaling::hpa_target_missing,
    ),
    (&[FindingId::PDB_BLOCKING], scaling::pdb_blocking),
];

/// Ids the verdict itself may add beside the rules.
const VERDICT_IDS: &[FindingId] = &[FindingId::ROLLOUT_IN_PROGRESS, FindingId::UPDATE_ON_DELETE];

/// Every finding id this build can emit.
pub fn rule_ids() -> Vec<FindingId> {
    let mut ids: Vec<FindingId> = RULES
        .iter()
        .flat_map(|(ids, _)| ids.iter().copied())
        .collect();
    ids.extend(VERDICT_IDS);
    ids
}

pub fn run_all(ctx: &Ctx) -> Vec<Finding> {
    let mut findings: Vec<Finding> = Vec::new();
    // Pods whose log the snapshot holds: the finding is about one of them
    // when it can be, so its commands name the Pod the evidence is about.
    let logged: std::collections::HashSet<&str> = ctx
        .snapshot
        .logs
        .iter()
        .filter(|l| l.namespace == ctx.chain.namespace && !l.text.is_empty())
        .map(|l| l.pod.as_str())
        .collect();
    for (_, rule) in RULES {
        for finding in rule(ctx) {
            merge_or_push(&mut findings, finding, &logged);
        }
    }
    findings
}

/// The same symptom on several Pods of a revision is one finding about the
/// first Pod (the first whose log is held, if any), with the others'
/// evidence beside it.
fn merge_or_push(
    findings: &mut Vec<Finding>,
    mut finding: Finding,
    logged: &std::collections::HashSet<&str>,
) {
    const MAX_EVIDENCE: usize = 12;
    if finding.subject.kind == "Pod"
        && let Some(existing) = findings
            .iter_mut()
            .find(|f| f.id == finding.id && f.subject.kind == "Pod")
    {
        if logged.contains(finding.subject.name.as_str())
            && !logged.contains(existing.subject.name.as_str())
        {
            // The new one leads: its subject, names and evidence first.
            if let Some(also) = existing.vars.remove("also") {
                finding.vars.insert("also".into(), also);
            }
            std::mem::swap(existing, &mut finding);
            let mut evidence = std::mem::take(&mut existing.evidence);
            evidence.append(&mut finding.evidence);
            existing.evidence = evidence;
            let others = existing
                .vars
                .entry("also".into())
                .or_insert_with(|| "0".into());
            let n: usize = others.parse().unwrap_or(0) + 1;
            *others = n.to_string();
            existing.evidence.truncate(MAX_EVIDENCE);
            return;
        }
        let others = existing
            .vars
            .entry("also".into())
            .or_insert_with(|| "0".into());
        let n: usize = others.parse().unwrap_or(0) + 1;
        *others = n.to_string();
        let room = MAX_EVIDENCE.saturating_sub(existing.evidence.len());
        existing
            .evidence
            .extend(finding.evidence.into_iter().take(room.min(3)));
        return;
    }
    findings.push(finding);
}

impl<'a> Ctx<'a> {
    /// Whether a gap hides `resource` in the chain's namespace: rules that
    /// need it stay silent.
    pub fn hidden(&self, resource: &str) -> bool {
        self.hidden_in(resource, &self.chain.namespace)
    }

    /// The same, for another namespace (`kube-system` for its Leases).
    pub fn hidden_in(&self, resource: &str, namespace: &str) -> bool {
        self.snapshot
            .gaps
            .iter()
            .any(|g| g.hides(resource, namespace))
    }

    /// Pods of the current revision that are not being deleted, with their state.
    pub fn current_pods(&self) -> impl Iterator<Item = (&'a ChainPod<'a>, &'a PodState)> + '_ {
        self.chain
            .pods
            .iter()
            .zip(self.pods.iter())
            .filter(|(_, s)| s.current && !s.terminating)
    }

    /// Template values every finding shares.
    pub fn base_vars(&self) -> TemplateVars {
        chain_vars(self.chain)
    }
}

/// The names of one Pod (its node, its first container) beside
/// [`chain_vars`], for the commands about that Pod.
pub fn pod_vars(pod: &k8s_openapi::api::core::v1::Pod) -> TemplateVars {
    let mut vars = TemplateVars::new();
    vars.insert("pod".into(), super::facts::name(&pod.metadata).to_string());
    if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
        vars.insert("node".into(), node);
    }
    if let Some(first) = super::facts::container_names(pod).first() {
        vars.insert("container".into(), first.to_string());
    }
    vars
}

/// The real names of a chain, to fill catalogue commands with: what every
/// finding about it shares.
pub fn chain_vars(c: &Chain) -> TemplateVars {
    let mut vars = TemplateVars::new();
    vars.insert("namespace".into(), c.namespace.clone());
    vars.insert("resource".into(), "msvc".into());
    if let Some(m) = c.model_service() {
        vars.insert(
            "modelservice".into(),
            m.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(p) = c
        .platform
        .filter(|p| p.platform.kind == crate::model::Kind::InferenceService)
    {
        vars.insert(
            "inferenceservice".into(),
            p.object.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(p) = c.workload_platform() {
        let name = p.object.metadata.name.clone().unwrap_or_default();
        vars.insert("target".into(), p.target_text());
        vars.insert("rollout".into(), name);
    } else if let Some(d) = c.deployment {
        vars.insert(
            "deployment".into(),
            d.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(set) = c.pod_set {
        let kind = set.kind();
        vars.insert(kind.as_str().to_ascii_lowercase(), set.name().to_string());
        vars.insert("target".into(), format!("{}/{}", kind.short(), set.name()));
        vars.insert(
            "workload".into(),
            format!("{}/{}", kind.as_str().to_ascii_lowercase(), set.name()),
        );
    } else if let Some(d) = c.deployment {
        vars.insert(
            "workload".into(),
            c.deployment_ref(d.metadata.name.as_deref().unwrap_or("")),
        );
    } else if let Some(rs) = c.lone_replica_set() {
        let name = rs.metadata.name.as_deref().unwrap_or("");
        vars.insert("target".into(), format!("rs/{name}"));
        vars.insert("workload".into(), format!("replicaset/{name}"));
    } else if let Some(run) = &c.job {
        super::jobs::job_vars(run, &mut vars);
    }
    // A Knative Service (or the InferenceService above it) is traced as
    // itself; its latest Revision's Deployment is its workload.
    if let Some(k) = c.knative_service {
        if let Some(p) = c.platform {
            vars.insert("target".into(), p.target_text());
        }
        vars.insert(
            "knativeservice".into(),
            k.object.metadata.name.clone().unwrap_or_default(),
        );
    }
    // A LeaderWorkerSet is traced as itself; its leader set is its workload.
    if let Some(p) = c.platform.filter(|p| p.platform.serves_in_groups) {
        vars.insert("target".into(), p.target_text());
        vars.insert(
            "leaderworkerset".into(),
            p.object.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(rs) = c.current_replica_set() {
        vars.insert(
            "replicaset".into(),
            rs.replica_set.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(s) = c.primary_service() {
        vars.insert(
            "service".into(),
            s.metadata.name.clone().unwrap_or_default(),
        );
    }
    if let Some(ctrl) = &c.controller {
        vars.insert("controller".into(), ctrl.location.name.clone());
        vars.insert(
            "controller_namespace".into(),
            ctrl.location.namespace.clone(),
        );
    }
    vars
}
