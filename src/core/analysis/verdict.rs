//! The verdict: the last step with a persisted record, the first missing
//! one after it, and the finding closest to it (reverse reasoning).

use crate::catalogue::{FindingId, Message};
use jiff::Timestamp;

use super::facts;
use super::state::{self, Serving, State, StateInputs};
use super::status::{self, Basis};
use super::summary::RevisionCount;
use super::{
    Diagnosis, Evidence, Finding, PodState, Replicas, Step, StepState, TargetInfo, Verdict,
};
use crate::catalogue::{Severity, catalogue};
use crate::chain::{CONTROLLER_REVISION_HASH, Chain, PodSet, SetStrategy};
use crate::command::Command;
use crate::model::{Gap, ObjectRef};

/// What the ladder and the rules produced, for the verdict to weigh.
pub struct Observations {
    pub steps: Vec<StepState>,
    pub replicas: Replicas,
    pub pods: Vec<PodState>,
    pub findings: Vec<Finding>,
    pub gaps: Vec<Gap>,
    /// What a gap hides of the workload's own chain: (resource, reason).
    pub unread: Vec<(String, String)>,
    /// Vars every finding's commands get so that an `mdiag` command reads
    /// the same file again ([`crate::model::Origin::replay_vars`]).
    pub replay: Vec<(String, String)>,
}

pub fn decide(chain: &Chain, now: Timestamp, seen: Observations) -> Diagnosis {
    let Observations {
        steps,
        replicas,
        pods,
        mut findings,
        gaps,
        unread,
        replay,
    } = seen;
    let incomplete = !unread.is_empty();
    // The rollout stands on the last step of the unbroken run from the start.
    let first_missing = steps.iter().position(|s| !s.reached);
    let (last_step, missing) = match first_missing {
        None => (steps.last().map_or(Step::Serving, |s| s.step), None),
        Some(0) => (steps[0].step, Some(steps[0].step)),
        Some(i) => (steps[i - 1].step, Some(steps[i].step)),
    };

    // An unread chain is not "still moving": what it does is unknown.
    if !incomplete && let Some(f) = rollout_in_progress(chain, &replicas, &findings, missing) {
        findings.push(f);
    }
    if !incomplete && let Some(f) = set_rollout(chain, &replicas, &pods, &findings, missing) {
        findings.push(f);
    }

    for f in &mut findings {
        f.vars.extend(replay.iter().cloned());
    }
    let target_step = missing.unwrap_or(Step::Serving);
    let present: Vec<FindingId> = findings.iter().map(|f| f.id).collect();
    findings.sort_by_key(|f| {
        (
            f.severity == Severity::Info,
            f.step.index().abs_diff(target_step.index()),
            outranked(f.id, &present),
            f.severity,
            f.id,
            f.subject.name.clone(),
        )
    });
    let lead = if findings.is_empty() { None } else { Some(0) };

    let target = target_info(chain);
    let problems = findings.iter().any(|f| f.severity != Severity::Info);
    let revisions = super::summary::revision_counts(chain, &pods);
    let serving = serving(chain, &steps, &replicas, &revisions, unread);
    let state = match &serving.status {
        Some(status) => status::decide(status, &serving, &steps, problems),
        None => state::decide(StateInputs {
            unreadable: serving
                .unread
                .iter()
                .any(|(r, _)| !serving.unread_counted(r)),
            observed: serving.observed,
            desired: serving.desired,
            current_serving: if serving.counts_ready() {
                // A run-to-completion Pod that completed counts as a Ready one.
                replicas.ready + super::completion::completed_count(&pods)
            } else {
                replicas.serving
            },
            total_serving: revisions.iter().map(|r| serving.count_of(r)).sum(),
            problems,
        }),
    };
    // A Job or CronJob is judged by the Job's own status; a bare Pod that
    // runs to completion, by whether it ended.
    let state = super::jobs::state(chain).unwrap_or(
        if super::completion::still_running(chain, &pods, problems) {
            State::Progressing
        } else {
            state
        },
    );
    let healthy = state == State::Serving && !problems;
    let next = if healthy {
        None
    } else {
        next_command(chain, lead.and_then(|i| findings.get(i)), &serving, &gaps)
    };
    Diagnosis {
        target,
        now,
        healthy,
        verdict: Verdict {
            last_step,
            missing,
            lead,
            state,
            serving,
            next,
        },
        steps,
        replicas,
        revisions,
        chain: super::summary::summarize(chain, &pods, now),
        pods,
        findings,
        gaps,
        incomplete,
        replay,
    }
}

/// What serving is counted on: ready endpoints (a worker: Ready Pods) of
/// every revision against the desired replicas, and whether the current
/// declaration reached every controller.
fn serving(
    chain: &Chain,
    steps: &[StepState],
    replicas: &Replicas,
    revisions: &[RevisionCount],
    unread: Vec<(String, String)>,
) -> Serving {
    let hidden = |r: &str| unread.iter().any(|(x, _)| x == r);
    let services_hidden = hidden("services");
    // The ladder ends at ready when no Service selects the Pods (unknown
    // when the Services were not read).
    let worker = !services_hidden && chain.platform.is_none() && chain.services.is_empty();
    // The verdict's basis (docs/contract.md#basis): the workload's own
    // status when its Pods (a Deployment's: or its ReplicaSets, with no
    // Pod) are not in the input; Ready Pods when no Service fronts them or
    // the Services were not read; else the endpoints.
    let status = status::read(chain).filter(|_| {
        hidden("pods")
            || (chain.pods.is_empty() && chain.deployment.is_some() && hidden("replicasets"))
    });
    let basis = if status.is_some() {
        Basis::WorkloadStatus
    } else if worker || services_hidden {
        Basis::Pods
    } else {
        Basis::Endpoints
    };
    let ready_endpoints = (basis == Basis::Endpoints && unread.is_empty())
        .then(|| revisions.iter().map(|r| r.serving).sum::<i32>());
    let desired = match &status {
        Some(s) => s.desired,
        None => replicas.desired,
    };
    Serving {
        basis,
        ready_endpoints,
        desired,
        worker,
        current_revision: chain
            .current_replica_set()
            .and_then(|r| r.revision)
            .or_else(|| chain.current_set_revision().map(|r| r.revision))
            .or_else(|| {
                chain
                    .deployment
                    .filter(|_| status.is_some())
                    .and_then(|d| d.metadata.annotations.as_ref())
                    .and_then(|a| a.get(crate::chain::REVISION_ANNOTATION))
                    .and_then(|r| r.parse().ok())
            }),
        status,
        // Declared, observed, deployment and replicaset: the chain above
        // the Pods runs the current declaration.
        observed: steps
            .iter()
            .filter(|s| s.step < Step::Stored)
            .all(|s| s.reached),
        unread,
    }
}

/// The command to run first: the lead finding's first check that has
/// every name filled in; without a lead, what would complete the read,
/// or the rollout's own status.
fn next_command(
    chain: &Chain,
    lead: Option<&Finding>,
    serving: &Serving,
    gaps: &[Gap],
) -> Option<Command> {
    // What cannot be read comes first, unless a problem was found anyway.
    let lead = lead.filter(|f| serving.unread.is_empty() || f.severity != Severity::Info);
    if let Some(f) = lead
        && let Some(entry) = catalogue().get(f.id)
    {
        // Without a ModelService its commands are left out.
        let filled: Vec<Command> = entry.checks_for(&f.vars);
        if let Some(c) = filled
            .iter()
            .find(|c| !c.has_placeholder())
            .or(filled.first())
        {
            return Some(c.clone());
        }
    }
    let ns = &chain.namespace;
    if let Some((resource, reason)) = serving.unread.first() {
        // KServe's Knative mode: the Knative Service of its predictor
        // carries the InferenceService's label.
        if reason == Gap::KNATIVE_PREDICTOR_ABSENT
            && let Some(p) = chain.platform
        {
            let selector = format!(
                "serving.kserve.io/inferenceservice={}",
                facts::name(&p.object.metadata)
            );
            return Some(Command::new([
                "kubectl", "-n", ns, "get", "ksvc", "-l", &selector, "-o", "yaml",
            ]));
        }
        // A kind the dump was not asked for: the `kubectl get` that adds
        // this workload's share of it.
        if gaps
            .iter()
            .any(|g| g.hides(resource, ns) && g.complete_with.is_some())
        {
            return Some(Command::new([
                "kubectl", "get", resource, "-n", ns, "-o", "yaml",
            ]));
        }
        return Some(match resource.as_str() {
            "apis" => Command::new(["kubectl", "api-resources"]),
            r => Command::new(["kubectl", "-n", ns, "auth", "can-i", "list", r]),
        });
    }
    // `kubectl rollout status` knows no Rollout (Argo's plugin does, and
    // may not be installed): its phase and step, read plainly.
    if let Some(p) = chain.workload_platform() {
        return Some(Command::new([
            "kubectl",
            "-n",
            ns,
            "get",
            "rollout",
            facts::name(&p.object.metadata),
            "-o",
            ROLLOUT_PHASE_JSONPATH,
        ]));
    }
    if let Some(d) = chain.deployment {
        return Some(Command::new([
            "kubectl".to_string(),
            "-n".into(),
            ns.clone(),
            "rollout".into(),
            "status".into(),
            format!("deployment/{}", facts::name(&d.metadata)),
        ]));
    }
    if let Some(set) = chain.pod_set {
        let kind = set.kind().as_str().to_ascii_lowercase();
        // kubectl rollout status refuses an OnDelete set: list the Pods'
        // revisions instead.
        return Some(match set.strategy() {
            SetStrategy::OnDelete => Command::new([
                "kubectl".to_string(),
                "-n".into(),
                ns.clone(),
                "get".into(),
                "pods".into(),
                "-L".into(),
                CONTROLLER_REVISION_HASH.into(),
                "-l".into(),
                selector_text(set),
            ]),
            SetStrategy::RollingUpdate { .. } => Command::new([
                "kubectl".to_string(),
                "-n".into(),
                ns.clone(),
                "rollout".into(),
                "status".into(),
                format!("{kind}/{}", set.name()),
            ]),
        });
    }
    // A ReplicaSet does not roll out: its description lists its Pods'
    // states and its controller's events.
    if let Some(rs) = chain.lone_replica_set() {
        return Some(Command::new([
            "kubectl",
            "-n",
            ns,
            "describe",
            "replicaset",
            facts::name(&rs.metadata),
        ]));
    }
    chain.pods.first().map(|p| {
        Command::new([
            "kubectl",
            "-n",
            ns,
            "describe",
            "pod",
            facts::name(&p.pod.metadata),
        ])
    })
}

/// (specific, general): when both hold, the specific one says why the
/// general one happens, so it leads.
const MORE_SPECIFIC: &[(FindingId, FindingId)] = &[
    // KServe reads a failed load off the predictor's first Pod: the Pod's
    // own finding is the cause, the model status its account.
    (
        FindingId::INIT_CONTAINER_FAILING,
        FindingId::MODEL_NOT_LOADED,
    ),
    (FindingId::CRASH_LOOP, FindingId::MODEL_NOT_LOADED),
    (FindingId::OOM_KILLED, FindingId::MODEL_NOT_LOADED),
    (FindingId::PROBE_KILLS_STARTUP, FindingId::MODEL_NOT_LOADED),
    (FindingId::CONTAINER_CANNOT_RUN, FindingId::MODEL_NOT_LOADED),
    (
        FindingId::CONTAINER_CONFIG_ERROR,
        FindingId::MODEL_NOT_LOADED,
    ),
    // A Knative Revision fails on whatever its Pod shows: that leads.
    (FindingId::IMAGE_PULL_DENIED, FindingId::MODEL_NOT_LOADED),
    (FindingId::IMAGE_PULL_NOT_FOUND, FindingId::MODEL_NOT_LOADED),
    (FindingId::IMAGE_PULL_TIMEOUT, FindingId::MODEL_NOT_LOADED),
    (FindingId::IMAGE_PULL_FAILED, FindingId::MODEL_NOT_LOADED),
    (FindingId::POD_UNSCHEDULABLE, FindingId::MODEL_NOT_LOADED),
    (
        FindingId::RESOURCE_CLAIM_PENDING,
        FindingId::MODEL_NOT_LOADED,
    ),
    (FindingId::READINESS_FAILING, FindingId::MODEL_NOT_LOADED),
    (FindingId::POD_NOT_STARTED, FindingId::MODEL_NOT_LOADED),
    // Once its Pod is gone, the Revision's own reason says more than the
    // Deployment's deadline does.
    (
        FindingId::MODEL_NOT_LOADED,
        FindingId::PROGRESS_DEADLINE_EXCEEDED,
    ),
    // What no node offers is why the scheduler cannot place the Pod.
    (
        FindingId::RESOURCE_CLAIM_PENDING,
        FindingId::POD_UNSCHEDULABLE,
    ),
    (
        FindingId::ROLLOUT_SURGE_BLOCKED,
        FindingId::POD_UNSCHEDULABLE,
    ),
    // A container running again after a kill or a crash is not ready
    // because it is starting over: the kill or the crash is why.
    (FindingId::OOM_KILLED, FindingId::READINESS_FAILING),
    (FindingId::CRASH_LOOP, FindingId::READINESS_FAILING),
    (FindingId::PROBE_KILLS_STARTUP, FindingId::READINESS_FAILING),
    // A LeaderWorkerSet group serves nothing while one of its Pods is not
    // Ready: that Pod's own finding says why.
    (FindingId::READINESS_FAILING, FindingId::GROUP_NOT_READY),
    (FindingId::CRASH_LOOP, FindingId::GROUP_NOT_READY),
    (FindingId::OOM_KILLED, FindingId::GROUP_NOT_READY),
    (FindingId::PROBE_KILLS_STARTUP, FindingId::GROUP_NOT_READY),
    (
        FindingId::INIT_CONTAINER_FAILING,
        FindingId::GROUP_NOT_READY,
    ),
    (
        FindingId::CONTAINER_CONFIG_ERROR,
        FindingId::GROUP_NOT_READY,
    ),
    (FindingId::CONTAINER_CANNOT_RUN, FindingId::GROUP_NOT_READY),
    (FindingId::POD_UNSCHEDULABLE, FindingId::GROUP_NOT_READY),
    (
        FindingId::RESOURCE_CLAIM_PENDING,
        FindingId::GROUP_NOT_READY,
    ),
    (FindingId::SCHEDULER_SILENT, FindingId::GROUP_NOT_READY),
    (FindingId::POD_NOT_STARTED, FindingId::GROUP_NOT_READY),
    (FindingId::NODE_NOT_READY, FindingId::GROUP_NOT_READY),
    (FindingId::IMAGE_PULL_DENIED, FindingId::GROUP_NOT_READY),
    (FindingId::IMAGE_PULL_NOT_FOUND, FindingId::GROUP_NOT_READY),
    (FindingId::IMAGE_PULL_TIMEOUT, FindingId::GROUP_NOT_READY),
    (FindingId::IMAGE_PULL_FAILED, FindingId::GROUP_NOT_READY),
    // The deadline is a statement about time; the refused create is why.
    (
        FindingId::PODS_NOT_CREATED,
        FindingId::PROGRESS_DEADLINE_EXCEEDED,
    ),
];

/// What an Argo Rollout says of itself, in one line.
const ROLLOUT_PHASE_JSONPATH: &str = "jsonpath=phase={.status.phase} step={.status.currentStepIndex} \
     {.status.message}{\"\\n\"}";

fn outranked(id: FindingId, present: &[FindingId]) -> bool {
    MORE_SPECIFIC
        .iter()
        .any(|(specific, general)| *general == id && present.contains(specific))
}

fn target_info(chain: &Chain) -> TargetInfo {
    let (kind, meta) = if let Some(p) = chain.platform {
        (p.kind(), &p.object.metadata)
    } else if let Some(d) = chain.deployment {
        ("Deployment", &d.metadata)
    } else if let Some(set) = chain.pod_set {
        (set.kind().as_str(), set.meta())
    } else if let Some(rs) = chain.lone_replica_set() {
        ("ReplicaSet", &rs.metadata)
    } else if let Some(c) = chain
        .job
        .as_ref()
        .and_then(|r| r.cron_job)
        .filter(|_| chain.target.kind == crate::model::TargetKind::CronJob)
    {
        ("CronJob", &c.metadata)
    } else if let Some(j) = chain.job.as_ref().and_then(|r| r.job) {
        ("Job", &j.metadata)
    } else if let Some(p) = chain.pods.first() {
        ("Pod", &p.pod.metadata)
    } else {
        return TargetInfo {
            kind: chain.target.kind.to_string(),
            namespace: chain.namespace.clone(),
            name: chain.target.name.clone(),
            uid: String::new(),
            context: None,
        };
    };
    TargetInfo {
        kind: kind.to_string(),
        namespace: chain.namespace.clone(),
        name: facts::name(meta).to_string(),
        uid: facts::uid(meta).to_string(),
        context: None,
    }
}

/// A rollout (or rollback) that is still moving with nothing wrong: judged
/// by generations and the new revision's counts, not by counting Pods.
fn rollout_in_progress(
    chain: &Chain,
    replicas: &Replicas,
    findings: &[Finding],
    missing: Option<Step>,
) -> Option<Finding> {
    let d = chain.deployment?;
    if findings.iter().any(|f| f.severity != Severity::Info) {
        return None;
    }
    let moving = missing.is_some_and(|m| m >= Step::ReplicaSet);
    let draining = missing.is_none() && replicas.old > 0;
    if !moving && !draining {
        return None;
    }
    let status = d.status.as_ref();
    let updated = status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    let generation = d.metadata.generation.unwrap_or(0);
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    let revision = chain
        .current_replica_set()
        .and_then(|r| r.revision)
        .map_or("?".to_string(), |r| r.to_string());
    let detail = if draining {
        Message::new("rollout.draining")
            .arg("revision", revision.as_str())
            .arg("desired", replicas.desired)
            .arg("old", replicas.old)
    } else {
        Message::new("rollout.moving")
            .arg("revision", revision.as_str())
            .arg("ready", replicas.ready)
            .arg("desired", replicas.desired)
            .arg("serving", replicas.serving)
            .arg("old", replicas.old)
    };
    let name = facts::name(&d.metadata);
    let mut f = Finding::new(
        FindingId::ROLLOUT_IN_PROGRESS,
        ObjectRef::new(chain.deployment_kind(), &d.metadata),
        missing.unwrap_or(Step::Serving),
        detail,
    )
    .evidence(Evidence::new(
        chain.deployment_ref(name),
        "metadata.generation / status.observedGeneration",
        format!("{generation} / {observed}"),
    ))
    .evidence(Evidence::new(
        chain.deployment_ref(name),
        "status.updatedReplicas / availableReplicas",
        format!("{updated} / {available} of {}", replicas.desired),
    ));
    f.vars.insert("namespace".into(), chain.namespace.clone());
    f.vars.insert(
        chain.deployment_kind().to_ascii_lowercase(),
        name.to_string(),
    );
    f.vars.insert("workload".into(), chain.deployment_ref(name));
    if let Some(m) = chain.model_service() {
        f.vars
            .insert("modelservice".into(), facts::name(&m.metadata).to_string());
    }
    f.vars.insert("resource".into(), "msvc".into());
    Some(f)
}

/// A pod set's selector as `kubectl -l` takes it (its matchLabels).
fn selector_text(set: PodSet) -> String {
    let selector = match set {
        PodSet::StatefulSet(s) => s.spec.as_ref().map(|s| &s.selector),
        PodSet::DaemonSet(d) => d.spec.as_ref().map(|s| &s.selector),
    };
    selector
        .and_then(|s| s.match_labels.as_ref())
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "<selector>".into())
}

/// A StatefulSet's or DaemonSet's rollout with nothing wrong, as its own
/// strategy has it: Pods an OnDelete set left on an older revision wait for
/// someone to delete them (info, never "stuck"); a rolling update still
/// moving is rollout-in-progress. A partitioned StatefulSet that reached its
/// partition is done, and says nothing.
fn set_rollout(
    chain: &Chain,
    replicas: &Replicas,
    pods: &[PodState],
    findings: &[Finding],
    missing: Option<Step>,
) -> Option<Finding> {
    let set = chain.pod_set?;
    let meta = set.meta();
    let name = facts::name(meta);
    let kind = set.kind().as_str();
    let object = format!("{}/{name}", kind.to_ascii_lowercase());
    let held: Vec<&PodState> = pods
        .iter()
        .zip(chain.pods.iter())
        .filter(|(s, p)| p.held && !s.terminating)
        .map(|(s, _)| s)
        .collect();
    let (updated, update_revision, current_revision) = match set {
        PodSet::StatefulSet(s) => {
            let st = s.status.as_ref();
            (
                st.and_then(|st| st.updated_replicas).unwrap_or(0),
                st.and_then(|st| st.update_revision.clone()),
                st.and_then(|st| st.current_revision.clone()),
            )
        }
        PodSet::DaemonSet(d) => (
            d.status
                .as_ref()
                .and_then(|st| st.updated_number_scheduled)
                .unwrap_or(0),
            chain.current_set_revision().map(|r| r.name().to_string()),
            None,
        ),
    };
    let mut vars = super::rules::chain_vars(chain);
    let problems = findings.iter().any(|f| f.severity != Severity::Info);
    // A LeaderWorkerSet's rollout is its own and counted in groups; its
    // leader set is evidence.
    let grouped = chain.platform.filter(|p| p.platform.serves_in_groups);
    let subject = match grouped {
        Some(p) => ObjectRef::new(p.kind(), &p.object.metadata),
        None => ObjectRef::new(kind, meta),
    };
    let f = if set.strategy() == SetStrategy::OnDelete && !held.is_empty() {
        let names: Vec<&str> = held.iter().map(|p| p.name.as_str()).collect();
        vars.insert("pod".into(), names[0].to_string());
        Finding::new(
            FindingId::UPDATE_ON_DELETE,
            ObjectRef::new(kind, meta),
            missing.unwrap_or(Step::Serving),
            Message::new("on-delete.detail")
                .arg("held", held.len())
                .arg("desired", replicas.desired)
                .arg("names", names.join(", ")),
        )
        .evidence(Evidence::new(
            &object,
            "spec.updateStrategy.type",
            "OnDelete",
        ))
    } else {
        if problems {
            return None;
        }
        let moving = missing.is_some_and(|m| m > Step::DaemonSet);
        let draining = missing.is_none() && replicas.old > 0;
        if !moving && !draining {
            return None;
        }
        let detail = if draining {
            Message::new(if grouped.is_some() {
                "rollout.groups_draining"
            } else {
                "rollout.set_draining"
            })
            .arg("desired", replicas.desired)
            .arg("old", replicas.old)
        } else {
            Message::new(if grouped.is_some() {
                "rollout.groups_moving"
            } else {
                "rollout.set_moving"
            })
            .arg("ready", replicas.ready)
            .arg("desired", replicas.desired)
            .arg("serving", replicas.serving)
            .arg("old", replicas.old)
        };
        Finding::new(
            FindingId::ROLLOUT_IN_PROGRESS,
            subject,
            missing.unwrap_or(Step::Serving),
            detail,
        )
        .evidence(Evidence::new(
            &object,
            "metadata.generation / status.observedGeneration",
            format!(
                "{} / {}",
                meta.generation.unwrap_or(0),
                set.observed_generation().unwrap_or(0)
            ),
        ))
    };
    let mut f = f.evidence(Evidence::new(
        &object,
        match set {
            PodSet::StatefulSet(_) => "status.updatedReplicas",
            PodSet::DaemonSet(_) => "status.updatedNumberScheduled",
        },
        format!("{updated} of {}", replicas.desired),
    ));
    if let Some(r) = update_revision {
        f = f.evidence(Evidence::new(
            &object,
            match set {
                PodSet::StatefulSet(_) => "status.updateRevision / currentRevision",
                PodSet::DaemonSet(_) => "newest ControllerRevision",
            },
            match current_revision {
                Some(c) => format!("{r} / {c}"),
                None => r,
            },
        ));
    }
    f.vars = vars;
    Some(f)
}
