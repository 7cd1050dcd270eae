//! Pure analysis: the step ladder, the four moments of every Pod, the
//! findings and the verdict. No IO and no clock: `now` is an argument.

mod completion;
pub mod contents;
pub mod crashes;
mod facts;
pub mod groups;
pub use facts::{chain_spec_floor, keep_written_paths_only, snapshot_spec_floor, written_paths};
pub mod gate;
pub mod jobs;
mod ladder;
pub mod logs;
pub mod outside;
pub mod quote;
mod rules;
pub mod state;
pub mod status;
pub mod summary;
pub mod timeline;
pub mod triage;
mod verdict;

use jiff::Timestamp;
use serde::Serialize;

pub use facts::{LeaseState, lease_state};
pub use ladder::{Moment, Moments, PodState};
pub use rules::{chain_vars, pod_vars, rule_ids};
pub use state::{Serving, State};
pub use status::{Basis, Stage, StatusReading};

use crate::catalogue::{FindingId, Message, Severity, severity_of};
use crate::chain::Chain;
use crate::model::{Gap, ObjectRef, Snapshot, TemplateVars};

/// The ladder a rollout climbs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// The ModelService is stored.
    Declared,
    /// Its controller observed the current generation.
    Observed,
    /// The Deployment exists and its generation is observed.
    Deployment,
    /// The ReplicaSet of the current revision exists.
    #[serde(rename = "replicaset")]
    ReplicaSet,
    /// A StatefulSet target: it exists, its generation is observed and its
    /// update revision is recorded (there is no ReplicaSet step).
    #[serde(rename = "statefulset")]
    StatefulSet,
    /// A DaemonSet target: it exists, its generation is observed and its
    /// newest ControllerRevision is known.
    #[serde(rename = "daemonset")]
    DaemonSet,
    /// A Job target (or a CronJob's last run): the Job exists and its
    /// controller started it.
    Job,
    Stored,
    Bound,
    Started,
    Ready,
    /// The Service has a ready endpoint for every desired replica.
    Serving,
    /// A run-to-completion Pod (a Job's, or any with restartPolicy Never or
    /// OnFailure): every container terminated with exit 0. Its ladder ends
    /// here instead of at ready and serving.
    Completed,
}

impl Step {
    pub const ALL: [Step; 13] = [
        Step::Declared,
        Step::Observed,
        Step::Deployment,
        Step::ReplicaSet,
        Step::StatefulSet,
        Step::DaemonSet,
        Step::Job,
        Step::Stored,
        Step::Bound,
        Step::Started,
        Step::Ready,
        Step::Serving,
        Step::Completed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Step::Declared => "declared",
            Step::Observed => "observed",
            Step::Deployment => "deployment",
            Step::ReplicaSet => "replicaset",
            Step::StatefulSet => "statefulset",
            Step::DaemonSet => "daemonset",
            Step::Job => "job",
            Step::Stored => "stored",
            Step::Bound => "bound",
            Step::Started => "started",
            Step::Ready => "ready",
            Step::Serving => "serving",
            Step::Completed => "completed",
        }
    }

    /// The step after this one (serving and completed end their ladders).
    pub fn next(self) -> Step {
        if self == Step::Completed {
            return self;
        }
        Step::ALL
            .get(self.index() + 1)
            .copied()
            .filter(|s| *s != Step::Completed)
            .unwrap_or(Step::Serving)
    }

    pub fn index(self) -> usize {
        Step::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// One fact that supports a finding, with where it was read and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// `pod/NAME`, `deployment/NAME`, `event/NAME`...
    pub object: String,
    /// The field path, or `event` for an Event's message.
    pub field: String,
    pub value: String,
    pub at: Option<Timestamp>,
    /// The last lines of a container log, when the evidence is one.
    /// Boxed: few evidence lines are logs, and every one would hold its room.
    pub log: Option<Box<logs::LogTail>>,
    /// The value in mdiag's own words, when it is not the cluster's: the
    /// views render it in their language (`value` keeps the English).
    pub said: Option<Message>,
    /// The field in mdiag's own words, when it is not a path or an Event
    /// (`log of server (previous)`): `field` keeps the English.
    pub field_said: Option<Message>,
}

impl Evidence {
    pub fn new(
        object: impl Into<String>,
        field: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        Evidence {
            object: object.into(),
            field: field.into(),
            value: value.into(),
            at: None,
            log: None,
            said: None,
            field_said: None,
        }
    }

    /// Evidence whose field mdiag words itself (`log of server (previous)`).
    pub fn labelled(object: impl Into<String>, field: Message, value: impl Into<String>) -> Self {
        Evidence::new(object, String::new(), value).field_words(field)
    }

    /// The field in mdiag's own words (`field` keeps the English).
    pub fn field_words(mut self, field: Message) -> Self {
        self.field = field.en();
        self.field_said = Some(field);
        self
    }

    /// Evidence whose value mdiag words itself (`unset`, `running, not ready`).
    pub fn said(object: impl Into<String>, field: impl Into<String>, value: Message) -> Self {
        let mut e = Evidence::new(object, field, value.en());
        e.said = Some(value);
        e
    }

    /// The field in `lang`: a path as it is, mdiag's own words translated.
    pub fn field_in(&self, lang: crate::catalogue::Lang) -> String {
        match &self.field_said {
            Some(m) => m.render(lang),
            None => self.field.clone(),
        }
    }

    /// The value in `lang`.
    pub fn value_in(&self, lang: crate::catalogue::Lang) -> String {
        match &self.said {
            Some(m) => m.render(lang),
            None => self.value.clone(),
        }
    }

    pub fn at(mut self, at: Option<Timestamp>) -> Self {
        self.at = at;
        self
    }
}

/// A symptom the rules found. Texts (title, cause, fix...) live in the
/// catalogue under `id`; `vars` fill its command templates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub id: FindingId,
    pub severity: Severity,
    pub subject: ObjectRef,
    /// The ladder step this finding keeps the rollout from reaching.
    pub step: Step,
    /// One line of the decisive facts, in the cluster's own words: a
    /// message the views render in their language.
    pub detail: Message,
    pub evidence: Vec<Evidence>,
    pub vars: TemplateVars,
}

impl Finding {
    pub fn new(id: FindingId, subject: ObjectRef, step: Step, detail: Message) -> Self {
        Finding {
            id,
            severity: severity_of(id.as_str()),
            subject,
            step,
            detail,
            evidence: Vec::new(),
            vars: TemplateVars::new(),
        }
    }

    pub fn evidence(mut self, e: Evidence) -> Self {
        self.evidence.push(e);
        self
    }

    pub fn var(mut self, key: &str, value: impl Into<String>) -> Self {
        self.vars.insert(key.to_string(), value.into());
        self
    }
}

/// One rung of the ladder as observed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepState {
    pub step: Step,
    pub reached: bool,
    /// The persisted time of the step, when the cluster keeps one.
    pub at: Option<Timestamp>,
    /// A short fact beside it (`2 of 2 Pods`, `generation 3, not observed`).
    pub note: Message,
    /// The kind this step stands on that a gap hid (`replicasets`): not
    /// reached, and unknown rather than missing. Its note says so.
    pub unread: Option<String>,
    /// Restarts of the current Pods' containers while the step is not
    /// reached: they started and stopped (a crash loop), not never ran.
    pub restarted: i32,
}

impl StepState {
    pub fn new(step: Step, reached: bool, at: Option<Timestamp>, note: Message) -> Self {
        StepState {
            step,
            reached,
            at,
            note,
            unread: None,
            restarted: 0,
        }
    }

    /// Not reached, and its data was not read.
    pub fn unknown(&self) -> bool {
        self.unread.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Replicas {
    pub desired: i32,
    /// Pods of the current revision that exist (not terminating).
    pub current: i32,
    pub ready: i32,
    /// Current-revision Pods with a ready endpoint in the Service.
    pub serving: i32,
    /// Pods of older revisions still present.
    pub old: i32,
    /// A LeaderWorkerSet's: every count above is of groups of this many
    /// Pods, not of Pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_size: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub last_step: Step,
    pub missing: Option<Step>,
    /// Index into `findings` of the one the verdict leads with.
    pub lead: Option<usize>,
    /// What users get now (the headline).
    pub state: State,
    /// Ready endpoints and desired replicas the state was decided on.
    pub serving: Serving,
    /// The command to run first, with the real names filled in.
    pub next: Option<crate::command::Command>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetInfo {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The kubeconfig context it was read in, when the user named one
    /// (`--context`; a triage over several names each row's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// Everything `trace` reports about one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    pub target: TargetInfo,
    pub now: Timestamp,
    pub healthy: bool,
    pub verdict: Verdict,
    pub steps: Vec<StepState>,
    pub replicas: Replicas,
    /// Pods and ready endpoints per revision, newest first.
    pub revisions: Vec<summary::RevisionCount>,
    /// The facts of the object tree, for people.
    pub chain: summary::ChainSummary,
    pub pods: Vec<PodState>,
    /// Ranked: the lead first, then by closeness to the missing step and severity.
    pub findings: Vec<Finding>,
    /// Everything that could not be read, in any namespace.
    pub gaps: Vec<Gap>,
    /// Whether a gap hides part of this workload's chain.
    pub incomplete: bool,
    /// What an `mdiag` command needs to read the same input again
    /// ([`crate::model::Origin::replay_vars`]): `--snapshot FILE`, `--at`.
    #[serde(skip)]
    pub replay: Vec<(String, String)>,
}

impl Diagnosis {
    /// A gap hid part of the chain itself, so health cannot be proven.
    pub fn chain_incomplete(&self) -> bool {
        self.incomplete
    }

    /// Whether a Pod serves is unknown: the Services or EndpointSlices
    /// of the workload were not read.
    pub fn serving_unread(&self) -> bool {
        self.verdict
            .serving
            .unread
            .iter()
            .any(|(r, _)| r == "services" || r == "endpointslices")
    }

    pub fn lead(&self) -> Option<&Finding> {
        self.verdict.lead.and_then(|i| self.findings.get(i))
    }

    /// When the rollout last moved: the newest time of a step it reached.
    pub fn last_progress(&self) -> Option<Timestamp> {
        self.steps
            .iter()
            .filter(|s| s.reached)
            .filter_map(|s| s.at)
            .max()
    }
}

/// Analyses a walked chain at `now`. Indexes the snapshot's Events on
/// every call: to judge many chains of one snapshot, build an [`Analyzer`]
/// once.
pub fn analyze(snapshot: &Snapshot, chain: &Chain, now: Timestamp) -> Diagnosis {
    Analyzer::new(snapshot).analyze(chain, now)
}

/// One snapshot, its Events indexed once, for judging many chains walked
/// in it (triage): each [`Analyzer::analyze`] gives what [`analyze`] gives.
pub struct Analyzer<'a> {
    snapshot: &'a Snapshot,
    events: facts::EventIndex<'a>,
    /// Every Pod UID of the snapshot (UIDs are unique cluster-wide).
    pod_uids: std::collections::HashSet<&'a str>,
}

impl<'a> Analyzer<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Analyzer {
            snapshot,
            events: facts::EventIndex::new(snapshot),
            pod_uids: snapshot
                .objects
                .pods
                .iter()
                .filter_map(|p| p.metadata.uid.as_deref())
                .collect(),
        }
    }

    /// An analyzer of one shard of a namespace: the Pod UIDs endpoints are
    /// checked against are the whole namespace's, not the shard's.
    pub fn with_pod_uids(snapshot: &'a Snapshot, pod_uids: impl Iterator<Item = &'a str>) -> Self {
        Analyzer {
            snapshot,
            events: facts::EventIndex::new(snapshot),
            pod_uids: pod_uids.collect(),
        }
    }

    /// Analyses a chain walked in this analyzer's snapshot at `now`.
    pub fn analyze(&self, chain: &Chain, now: Timestamp) -> Diagnosis {
        analyze_indexed(self, chain, now)
    }
}

fn analyze_indexed(analyzer: &Analyzer, chain: &Chain, now: Timestamp) -> Diagnosis {
    let snapshot = analyzer.snapshot;
    let pods = ladder::pod_states(chain);
    let replicas = ladder::replicas(chain, &pods);
    let mut steps = ladder::steps(chain, &pods, &replicas);
    let ctx = rules::Ctx {
        snapshot,
        chain,
        now,
        events: &analyzer.events,
        pod_uids: &analyzer.pod_uids,
        pods: &pods,
    };
    let mut findings = rules::run_all(&ctx);
    logs::attach(&mut findings, snapshot, &chain.namespace);
    let mut gaps: Vec<Gap> = snapshot
        .gaps
        .iter()
        .filter(|g| about_this_chain(chain, g))
        .filter_map(|g| in_the_chains_namespaces(chain, g))
        .collect();
    gaps.dedup();
    let unread = chain_hidden(chain, &gaps);
    ladder::mark_unread(&mut steps, &unread);
    let mut diagnosis = verdict::decide(
        chain,
        now,
        verdict::Observations {
            steps,
            replicas,
            pods,
            findings,
            gaps,
            unread,
            replay: snapshot.origin.replay_vars(now),
        },
    );
    diagnosis.target.context = snapshot.origin.named_context.clone();
    // Last, once every rule has read the cluster's words whole.
    quote::bound_diagnosis(&mut diagnosis);
    // A triage keeps thousands of these to its end: no room beyond what
    // they hold (merged evidence and the steps grow by doubling).
    for finding in &mut diagnosis.findings {
        finding.evidence.shrink_to_fit();
    }
    diagnosis.findings.shrink_to_fit();
    diagnosis.steps.shrink_to_fit();
    diagnosis
}

/// A gap about the ModelService controller matters only to a chain that
/// has a ModelService; ModelServices only to a chain that wants one; Leases
/// (the controller's, the scheduler's) only to one with a controller or a
/// Pod waiting for a node. Every other gap is reported.
fn about_this_chain(chain: &Chain, gap: &Gap) -> bool {
    let about_controller = gap.name.as_deref() == Some(crate::chain::CONTROLLER_NAME)
        || chain
            .controller
            .as_ref()
            .is_some_and(|c| gap.name.as_deref() == Some(c.location.name.as_str()));
    if about_controller {
        return chain.model_service().is_some();
    }
    let bare_pod = chain.bare_pod();
    let resource = gap.resource.split('.').next().unwrap_or("");
    // Another serving platform's objects matter only to its own chains:
    // a LeaderWorkerSet list refused says nothing of a Deployment.
    // Knative's `services` are told from the core ones by their group.
    let of_row = |kind: crate::model::Kind| {
        let qualified = kind.qualified_resource();
        if qualified == kind.resource() {
            resource == qualified
        } else {
            gap.resource == qualified
        }
    };
    if let Some(row) = crate::chain::PLATFORMS
        .iter()
        .find(|p| p.kind != crate::model::Kind::ModelService && of_row(p.kind))
    {
        return chain.target.kind == row.target
            || chain.platform.is_some_and(|p| p.platform.kind == row.kind);
    }
    match resource {
        "modelservices" => wants_model_service(chain),
        // A Rollout stands where a Deployment would: there is none to hide.
        "deployments" if chain.workload_platform().is_some() => false,
        // A lone ReplicaSet has a Deployment to hide only when it names one.
        "deployments" if chain.lone_replica_set().is_some() => {
            chain.lone_replica_set().is_some_and(|rs| {
                rs.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.kind == "Deployment")
            })
        }
        // A Pod nobody owns, or a StatefulSet's or DaemonSet's, has no
        // Deployment or ReplicaSet to hide.
        "deployments" | "replicasets" => !bare_pod && chain.pod_set.is_none(),
        "leases" => {
            chain.controller.is_some()
                || chain
                    .pods
                    .iter()
                    .any(|p| p.pod.spec.as_ref().is_none_or(|s| s.node_name.is_none()))
        }
        _ => true,
    }
}

/// A gap as it bears on the namespaces the chain reads: its own for its
/// objects, its controller's for the controller's Deployment and Lease,
/// and `kube-system` for the scheduler's Lease. A gap of another
/// namespace is none of the chain's business; a kind a dump holds in other
/// namespaces only becomes a gap of the first of these it hides.
fn in_the_chains_namespaces(chain: &Chain, gap: &Gap) -> Option<Gap> {
    let resource = gap.resource.split('.').next().unwrap_or("");
    let leases = resource == "leases";
    let mut namespaces = Vec::new();
    if !leases {
        namespaces.push(chain.namespace.as_str());
    }
    if let Some(c) = &chain.controller
        && (leases || resource == "deployments")
    {
        namespaces.push(c.location.namespace.as_str());
    }
    if leases {
        namespaces.push("kube-system");
    }
    match &gap.namespace {
        Some(ns) => namespaces.contains(&ns.as_str()).then(|| gap.clone()),
        None if gap.read_in.is_empty() => Some(gap.clone()),
        None => namespaces
            .iter()
            .find(|ns| !gap.read_in.iter().any(|read| read == *ns))
            .map(|ns| gap.in_namespace(ns)),
    }
}

/// Whether the workload has, or is owned by, or is, a ModelService.
fn wants_model_service(chain: &Chain) -> bool {
    chain.target.kind == crate::model::TargetKind::ModelService
        || chain.model_service().is_some()
        || chain.deployment.is_some_and(|d| {
            d.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "ModelService")
        })
}

/// The resources of the workload's own chain a gap hides, each with the
/// gap's reason. ModelServices matter only when the workload has (or is) one.
fn chain_hidden(chain: &Chain, gaps: &[Gap]) -> Vec<(String, String)> {
    const SHARED: &[&str] = &["pods", "services", "endpointslices"];
    // A run to completion is judged on its Pods (and its Job): no Service
    // serves it.
    let shared = if completion::judged_as_a_run(chain) {
        &SHARED[..1]
    } else {
        SHARED
    };
    let own: &[&str] = match chain.pod_set.map(|s| s.kind()) {
        Some(crate::model::TargetKind::StatefulSet) => &["statefulsets", "controllerrevisions"],
        Some(_) => &["daemonsets", "controllerrevisions"],
        None if chain.job.is_some() => &["jobs"],
        // A Pod nobody owns has no Deployment or ReplicaSet to hide.
        None if chain.bare_pod() => &[],
        // A lone ReplicaSet is judged on itself: an unread Deployment is
        // reported beside it, not a part of its own chain that is hidden.
        None if chain.lone_replica_set().is_some() => &["replicasets"],
        None if chain.workload_platform().is_some() => &["rollouts", "replicasets"],
        // A LeaderWorkerSet whose leader set was not walked.
        None if chain.serves_in_groups() => &["statefulsets", "controllerrevisions"],
        None => &["deployments", "replicasets"],
    };
    let mut wanted: Vec<&str> = own.iter().chain(shared).copied().collect();
    if wants_model_service(chain) {
        wanted.extend(["modelservices", "apis"]);
    }
    if chain.target.kind == crate::model::TargetKind::InferenceService {
        wanted.extend(["inferenceservices", "apis"]);
    }
    if matches!(
        chain.target.kind,
        crate::model::TargetKind::Rollout | crate::model::TargetKind::LeaderWorkerSet
    ) {
        wanted.push("apis");
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for r in wanted {
        let hidden = gaps.iter().find(|g| {
            if r == "apis" {
                g.resource == "apis"
            } else {
                g.hides(r, &chain.namespace)
            }
        });
        if let Some(g) = hidden {
            out.push((r.to_string(), g.reason.clone()));
        }
    }
    // KServe's Knative mode: the predictor runs in a Knative Service the
    // InferenceService owns. Without it in the input the chain is not
    // walked: unknown, not "no Deployment" (docs/platforms.md#kserve).
    const KSVC: &str = "services.serving.knative.dev";
    if chain
        .platform
        .is_some_and(|p| crate::chain::kserve_knative_mode(p.object))
        && chain.knative_service.is_none()
        && chain.deployment.is_none()
        && !out.iter().any(|(r, _)| r == KSVC)
    {
        out.push((KSVC.to_string(), Gap::KNATIVE_PREDICTOR_ABSENT.to_string()));
    }
    out
}

/// `95` -> `1m35s`, `3600` -> `1h0m`.
pub fn format_duration(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_kubectl_ages() {
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(95), "1m35s");
        assert_eq!(format_duration(3600), "1h0m");
        assert_eq!(format_duration(90_000), "1d1h");
        assert_eq!(format_duration(-5), "0s");
    }

    #[test]
    fn every_rule_id_is_in_the_catalogue() {
        for id in rule_ids() {
            assert!(crate::catalogue::catalogue().get(id).is_some(), "{id}");
        }
    }
}
