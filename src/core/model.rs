//! The in-memory snapshot every data source produces, and the small value
//! types the rest of the crate shares. No IO here.

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event as NewEvent;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube_core::DynamicObject;
use serde::{Deserialize, Serialize};

/// Everything one run knows about the cluster: objects, logs, what could not
/// be read, and where it came from.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub origin: Origin,
    pub objects: Objects,
    pub logs: Vec<LogRecord>,
    pub gaps: Vec<Gap>,
    /// Where values were replaced when the snapshot was taken (paths,
    /// rules and counts, never the values).
    pub redactions: Vec<Redaction>,
}

/// Where a snapshot came from and when it was taken.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub kind: OriginKind,
    /// A file path, or the cluster server URL for a live read.
    pub location: String,
    pub captured_at: Option<Timestamp>,
    pub captured_by: Option<String>,
    pub context: Option<String>,
    pub server_version: Option<String>,
    pub target: Option<TargetSpec>,
    /// The namespace a snapshot file captured.
    pub namespace: Option<String>,
    /// The newest timestamp found in any object (the clock for a dump).
    pub newest_seen: Option<Timestamp>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OriginKind {
    #[default]
    Live,
    /// mdiag's own snapshot format.
    SnapshotFile,
    /// `kubectl get -o yaml|json` output or plain manifests: no capture metadata.
    KubectlDump,
}

/// The Kubernetes objects of a snapshot, typed where the analysis reads them.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub model_services: Vec<DynamicObject>,
    pub deployments: Vec<Deployment>,
    pub replica_sets: Vec<ReplicaSet>,
    pub stateful_sets: Vec<StatefulSet>,
    pub daemon_sets: Vec<DaemonSet>,
    /// The revisions of StatefulSets and DaemonSets (their `data` dropped
    /// on a live read: only the metadata and `revision` are read).
    pub controller_revisions: Vec<ControllerRevision>,
    pub pods: Vec<Pod>,
    pub services: Vec<Service>,
    pub endpoint_slices: Vec<EndpointSlice>,
    pub events: Vec<EventRecord>,
    pub nodes: Vec<Node>,
    pub leases: Vec<Lease>,
    pub hpas: Vec<HorizontalPodAutoscaler>,
    pub pdbs: Vec<PodDisruptionBudget>,
    pub http_routes: Vec<DynamicObject>,
    /// Objects of kinds the analysis does not read, kept so nothing is lost.
    pub other: Vec<serde_json::Value>,
}

impl Objects {
    pub fn len(&self) -> usize {
        self.model_services.len()
            + self.deployments.len()
            + self.replica_sets.len()
            + self.stateful_sets.len()
            + self.daemon_sets.len()
            + self.controller_revisions.len()
            + self.pods.len()
            + self.services.len()
            + self.endpoint_slices.len()
            + self.events.len()
            + self.nodes.len()
            + self.leases.len()
            + self.hpas.len()
            + self.pdbs.len()
            + self.http_routes.len()
            + self.other.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An Event in either of its two API shapes, or cut to what the analysis
/// reads of it.
#[derive(Debug, Clone)]
pub enum EventRecord {
    Core(Box<CoreEvent>),
    New(Box<NewEvent>),
    Brief(Box<BriefEvent>),
}

/// An Event cut to what the analysis reads of it, for a read that holds
/// tens of thousands and writes none back (a namespace triaged in parts):
/// a few hundred bytes, against the kilobytes of the API type. A snapshot
/// or evidence file keeps the Event as the API gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefEvent {
    pub subject: EventSubject,
    pub uid: String,
    pub reason: String,
    pub message: String,
    pub event_type: String,
    pub reporter: String,
    pub count: u32,
    pub first_seen: Option<Timestamp>,
    pub last_seen: Option<Timestamp>,
}

/// The object an event is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSubject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub field_path: String,
}

impl EventRecord {
    /// The same Event as a [`BriefEvent`]: every accessor below answers
    /// as before.
    pub fn brief(self) -> EventRecord {
        if let EventRecord::Brief(_) = self {
            return self;
        }
        let brief = BriefEvent {
            subject: self.subject(),
            uid: self.uid().to_string(),
            reason: self.reason().to_string(),
            message: self.message().to_string(),
            event_type: self.event_type().to_string(),
            reporter: self.reporter().to_string(),
            count: self.count(),
            first_seen: self.first_seen(),
            last_seen: self.last_seen(),
        };
        EventRecord::Brief(Box::new(brief))
    }

    pub fn subject(&self) -> EventSubject {
        let r = match self {
            EventRecord::Core(e) => Some(&e.involved_object),
            EventRecord::New(e) => e.regarding.as_ref(),
            EventRecord::Brief(b) => return b.subject.clone(),
        };
        let Some(r) = r else {
            return EventSubject::default();
        };
        EventSubject {
            kind: r.kind.clone().unwrap_or_default(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
            uid: r.uid.clone().unwrap_or_default(),
            field_path: r.field_path.clone().unwrap_or_default(),
        }
    }

    /// The UID of the object it is about, when the Event gives one.
    pub fn subject_uid(&self) -> Option<&str> {
        match self {
            EventRecord::Core(c) => c.involved_object.uid.as_deref(),
            EventRecord::New(n) => n.regarding.as_ref().and_then(|r| r.uid.as_deref()),
            EventRecord::Brief(b) => Some(b.subject.uid.as_str()),
        }
        .filter(|uid| !uid.is_empty())
    }

    pub fn reason(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.reason.as_deref(),
            EventRecord::New(e) => e.reason.as_deref(),
            EventRecord::Brief(b) => Some(b.reason.as_str()),
        }
        .unwrap_or("")
    }

    pub fn message(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.message.as_deref(),
            EventRecord::New(e) => e.note.as_deref(),
            EventRecord::Brief(b) => Some(b.message.as_str()),
        }
        .unwrap_or("")
    }

    pub fn event_type(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.type_.as_deref(),
            EventRecord::New(e) => e.type_.as_deref(),
            EventRecord::Brief(b) => Some(b.event_type.as_str()),
        }
        .unwrap_or("")
    }

    /// The component that reported it (kubelet, default-scheduler, ...).
    pub fn reporter(&self) -> &str {
        match self {
            EventRecord::Core(e) => e
                .reporting_component
                .as_deref()
                .filter(|s| !s.is_empty())
                .or(e.source.as_ref().and_then(|s| s.component.as_deref())),
            EventRecord::New(e) => e.reporting_controller.as_deref(),
            EventRecord::Brief(b) => Some(b.reporter.as_str()),
        }
        .unwrap_or("")
    }

    /// How many times it was seen (series count, or count).
    pub fn count(&self) -> u32 {
        let n = match self {
            EventRecord::Core(e) => e
                .series
                .as_ref()
                .and_then(|s| s.count)
                .or(e.count)
                .unwrap_or(1),
            EventRecord::New(e) => e
                .series
                .as_ref()
                .map(|s| s.count)
                .or(e.deprecated_count)
                .unwrap_or(1),
            EventRecord::Brief(b) => return b.count,
        };
        n.max(1) as u32
    }

    /// When it was first seen: the oldest of the times either shape carries.
    pub fn first_seen(&self) -> Option<Timestamp> {
        match self {
            EventRecord::Core(e) => e
                .first_timestamp
                .as_ref()
                .map(|t| t.0)
                .or(e.event_time.as_ref().map(|t| t.0))
                .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0)),
            EventRecord::New(e) => e
                .deprecated_first_timestamp
                .as_ref()
                .map(|t| t.0)
                .or(e.event_time.as_ref().map(|t| t.0)),
            EventRecord::Brief(b) => b.first_seen,
        }
    }

    /// When it was last seen: series last observation, last timestamp, or event time.
    pub fn last_seen(&self) -> Option<Timestamp> {
        let candidates: Vec<Option<Timestamp>> = match self {
            EventRecord::Core(e) => vec![
                e.series
                    .as_ref()
                    .and_then(|s| s.last_observed_time.as_ref())
                    .map(|t| t.0),
                e.last_timestamp.as_ref().map(|t| t.0),
                e.event_time.as_ref().map(|t| t.0),
                e.first_timestamp.as_ref().map(|t| t.0),
                e.metadata.creation_timestamp.as_ref().map(|t| t.0),
            ],
            EventRecord::New(e) => vec![
                e.series.as_ref().map(|s| s.last_observed_time.0),
                e.deprecated_last_timestamp.as_ref().map(|t| t.0),
                e.event_time.as_ref().map(|t| t.0),
            ],
            EventRecord::Brief(b) => return b.last_seen,
        };
        candidates.into_iter().flatten().max()
    }

    pub fn uid(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.metadata.uid.as_deref(),
            EventRecord::New(e) => e.metadata.uid.as_deref(),
            EventRecord::Brief(b) => Some(b.uid.as_str()),
        }
        .unwrap_or("")
    }

    pub fn to_value(&self) -> serde_json::Value {
        let v = match self {
            EventRecord::Core(e) => serde_json::to_value(e),
            EventRecord::New(e) => serde_json::to_value(e),
            EventRecord::Brief(b) => Ok(b.to_value()),
        };
        v.unwrap_or(serde_json::Value::Null)
    }
}

impl BriefEvent {
    /// A core/v1 Event holding what was kept (nothing writes a brief
    /// Event to a file; this keeps one readable where it is printed).
    fn to_value(&self) -> serde_json::Value {
        let s = &self.subject;
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": text(&s.namespace), "uid": text(&self.uid)},
            "involvedObject": {
                "kind": text(&s.kind), "namespace": text(&s.namespace),
                "name": text(&s.name), "uid": text(&s.uid),
                "fieldPath": text(&s.field_path),
            },
            "reason": text(&self.reason),
            "message": text(&self.message),
            "type": text(&self.event_type),
            "reportingComponent": text(&self.reporter),
            "count": self.count,
            "firstTimestamp": self.first_seen.map(|t| t.to_string()),
            "lastTimestamp": self.last_seen.map(|t| t.to_string()),
        })
    }
}

/// A container log read at capture time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    /// The log of the previous (terminated) run of the container.
    #[serde(default)]
    pub previous: bool,
    /// True when the text was cut to the size cap.
    #[serde(default)]
    pub truncated: bool,
    #[serde(default)]
    pub text: String,
}

/// Values replaced in one place of a snapshot: where (an object's field or
/// a container's log), by which rule (the name its marker carries,
/// `<redacted:RULE>`), and how many times. Never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RedactionEntry")]
pub struct Redaction {
    pub path: String,
    pub rule: String,
    pub count: u32,
}

/// A redaction as files hold it: format version 1 listed paths only.
#[derive(Deserialize)]
#[serde(untagged)]
enum RedactionEntry {
    Path(String),
    Full(RedactionFields),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RedactionFields {
    path: String,
    rule: String,
    #[serde(default = "one")]
    count: u32,
}

fn one() -> u32 {
    1
}

impl From<RedactionEntry> for Redaction {
    fn from(entry: RedactionEntry) -> Self {
        match entry {
            RedactionEntry::Full(f) => Redaction {
                path: f.path,
                rule: f.rule,
                count: f.count,
            },
            // Version 1 redacted three things, each recognisable by its path.
            RedactionEntry::Path(path) => {
                let rule = if path.contains("last-applied-configuration") {
                    "last-applied"
                } else if path.contains("env[name=") && path.ends_with("].value") {
                    "env-name"
                } else {
                    "redact"
                };
                Redaction {
                    path,
                    rule: rule.to_string(),
                    count: 1,
                }
            }
        }
    }
}

/// Something that could not be read, and why. A forbidden list is not an
/// empty list: rules that need it stay silent and the gap is reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The resource (plural, as kubectl names it), e.g. `pods` or `pods/log`.
    pub resource: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default = "default_verb")]
    pub verb: String,
    /// The object, for a `get` of one name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub reason: String,
    /// The command that would fill the gap, when one would (a kind a
    /// kubectl dump was not asked for: the `kubectl get` that adds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_with: Option<String>,
}

fn default_verb() -> String {
    "list".into()
}

impl Gap {
    /// Why a kind a kubectl dump does not hold is a gap.
    pub const NOT_IN_DUMP: &'static str =
        "not in the file (a kubectl dump holds only the kinds it was asked for)";

    /// Whether this gap hides objects of `resource` in `namespace`.
    pub fn hides(&self, resource: &str, namespace: &str) -> bool {
        let resource_matches = self.resource == resource
            || self.resource.split('.').next() == Some(resource)
            || self.resource == "*";
        let namespace_matches = match &self.namespace {
            None => true,
            Some(ns) => ns == namespace,
        };
        resource_matches && namespace_matches
    }
}

/// What the user asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetSpec {
    pub kind: TargetKind,
    #[serde(default)]
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TargetKind {
    ModelService,
    Deployment,
    StatefulSet,
    DaemonSet,
    /// A ReplicaSet no Deployment in the snapshot owns: a workload of its
    /// own. One a Deployment owns is traced through that Deployment.
    ReplicaSet,
    Pod,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::ModelService => "ModelService",
            TargetKind::Deployment => "Deployment",
            TargetKind::StatefulSet => "StatefulSet",
            TargetKind::DaemonSet => "DaemonSet",
            TargetKind::ReplicaSet => "ReplicaSet",
            TargetKind::Pod => "Pod",
        }
    }

    /// The short name kubectl prints and accepts (`deploy`, `sts`, `ds`).
    pub fn short(self) -> &'static str {
        match self {
            TargetKind::ModelService => "msvc",
            TargetKind::Deployment => "deploy",
            TargetKind::StatefulSet => "sts",
            TargetKind::DaemonSet => "ds",
            TargetKind::ReplicaSet => "rs",
            TargetKind::Pod => "pod",
        }
    }

    /// The kind named as [`Self::as_str`] writes it (`StatefulSet`).
    pub fn from_name(kind: &str) -> Option<TargetKind> {
        [
            TargetKind::ModelService,
            TargetKind::Deployment,
            TargetKind::StatefulSet,
            TargetKind::DaemonSet,
            TargetKind::ReplicaSet,
            TargetKind::Pod,
        ]
        .into_iter()
        .find(|k| k.as_str() == kind)
    }

    /// A StatefulSet or a DaemonSet: Pods owned directly, revisions kept
    /// in ControllerRevisions, no ReplicaSet between.
    pub fn is_pod_set(self) -> bool {
        matches!(self, TargetKind::StatefulSet | TargetKind::DaemonSet)
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bad target argument.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "cannot read target {given:?}: {why} (use NAME, msvc/NAME, deploy/NAME, sts/NAME, ds/NAME, rs/NAME or pod/NAME)"
)]
pub struct TargetParseError {
    pub given: String,
    pub why: &'static str,
}

impl TargetSpec {
    /// Parses `NAME`, `msvc/NAME`, `deploy/NAME`, `sts/NAME`, `ds/NAME`,
    /// `rs/NAME`, `pod/NAME` (and the long kind names kubectl accepts).
    pub fn parse(text: &str, namespace: Option<&str>) -> Result<Self, TargetParseError> {
        let err = |why| TargetParseError {
            given: text.to_string(),
            why,
        };
        let (kind, name) = match text.split_once('/') {
            None => (TargetKind::ModelService, text),
            Some((kind, name)) => {
                let kind = match kind.to_ascii_lowercase().as_str() {
                    "msvc" | "modelservice" | "modelservices" => TargetKind::ModelService,
                    "deploy" | "deployment" | "deployments" | "deployment.apps"
                    | "deployments.apps" => TargetKind::Deployment,
                    "sts" | "statefulset" | "statefulsets" | "statefulset.apps"
                    | "statefulsets.apps" => TargetKind::StatefulSet,
                    "ds" | "daemonset" | "daemonsets" | "daemonset.apps" | "daemonsets.apps" => {
                        TargetKind::DaemonSet
                    }
                    "rs" | "replicaset" | "replicasets" | "replicaset.apps"
                    | "replicasets.apps" => TargetKind::ReplicaSet,
                    "po" | "pod" | "pods" => TargetKind::Pod,
                    _ => return Err(err("unknown kind")),
                };
                (kind, name)
            }
        };
        if name.is_empty() {
            return Err(err("the name is empty"));
        }
        if name.contains('/') {
            return Err(err("too many '/'"));
        }
        if !is_dns_subdomain(name) {
            return Err(err("not a valid Kubernetes object name"));
        }
        Ok(TargetSpec {
            kind,
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        })
    }
}

/// RFC 1123 subdomain, as object names must be.
fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A reference to an object in a finding or a report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRef {
    pub kind: String,
    pub name: String,
    pub uid: String,
}

impl ObjectRef {
    pub fn new(
        kind: &str,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> Self {
        ObjectRef {
            kind: kind.to_string(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind.to_ascii_lowercase(), self.name)
    }
}

/// Values used to fill catalogue command templates (`{pod}`, `{namespace}`...).
pub type TemplateVars = BTreeMap<String, String>;

/// The time a run judges at, and why that one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Clock {
    pub now: Timestamp,
    pub source: ClockSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockSource {
    /// The machine's clock, for a live read.
    Live,
    /// The capture time recorded in a snapshot file.
    Capture,
    /// A file without capture time: the newest timestamp it holds.
    NewestTimestamp,
    /// Given with `--at`.
    At,
}

impl Clock {
    /// Picks the clock: `--at` wins, then a live read's own time, then the
    /// capture time, then the newest timestamp in the file.
    pub fn choose(origin: &Origin, at: Option<Timestamp>, system_now: Timestamp) -> Clock {
        let (now, source) = if let Some(at) = at {
            (at, ClockSource::At)
        } else if origin.kind == OriginKind::Live {
            (system_now, ClockSource::Live)
        } else if let Some(captured) = origin.captured_at {
            (captured, ClockSource::Capture)
        } else if let Some(newest) = origin.newest_seen {
            (newest, ClockSource::NewestTimestamp)
        } else {
            (system_now, ClockSource::Live)
        };
        Clock { now, source }
    }
}

/// A port or a port name, as written.
pub fn int_or_string(v: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_kubectl_names_them() {
        let t = TargetSpec::parse("chart-demo", Some("lab")).unwrap();
        assert_eq!(
            (t.kind, t.name.as_str()),
            (TargetKind::ModelService, "chart-demo")
        );
        assert_eq!(t.namespace.as_deref(), Some("lab"));
        for (text, kind) in [
            ("msvc/a", TargetKind::ModelService),
            ("deploy/a", TargetKind::Deployment),
            ("deployment.apps/a", TargetKind::Deployment),
            ("sts/a", TargetKind::StatefulSet),
            ("statefulset/a", TargetKind::StatefulSet),
            ("statefulsets.apps/a", TargetKind::StatefulSet),
            ("ds/a", TargetKind::DaemonSet),
            ("daemonset/a", TargetKind::DaemonSet),
            ("DaemonSets.apps/a", TargetKind::DaemonSet),
            ("rs/a", TargetKind::ReplicaSet),
            ("replicaset/a", TargetKind::ReplicaSet),
            ("ReplicaSets.apps/a", TargetKind::ReplicaSet),
            ("pod/a", TargetKind::Pod),
            ("po/a", TargetKind::Pod),
        ] {
            assert_eq!(TargetSpec::parse(text, None).unwrap().kind, kind, "{text}");
        }
        for bad in [
            "", "svc/a", "job/a", "sts/", "ds/A", "deploy/", "a/b/c", "Upper", "-lead", "x_y",
        ] {
            assert!(TargetSpec::parse(bad, None).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_gap_hides_only_its_resource_and_namespace() {
        let gap = Gap {
            resource: "pods".into(),
            namespace: Some("lab".into()),
            verb: "list".into(),
            name: None,
            reason: "forbidden".into(),
            complete_with: None,
        };
        assert!(gap.hides("pods", "lab"));
        assert!(!gap.hides("pods", "other"));
        assert!(!gap.hides("services", "lab"));
        let cluster_wide = Gap {
            namespace: None,
            ..gap
        };
        assert!(cluster_wide.hides("pods", "anything"));
    }

    #[test]
    fn the_clock_prefers_at_then_capture_then_newest() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let mut origin = Origin {
            kind: OriginKind::KubectlDump,
            newest_seen: Some(t("2026-01-01T00:00:00Z")),
            ..Origin::default()
        };
        let system = t("2030-01-01T00:00:00Z");
        assert_eq!(
            Clock::choose(&origin, None, system).source,
            ClockSource::NewestTimestamp
        );
        origin.captured_at = Some(t("2026-01-02T00:00:00Z"));
        assert_eq!(
            Clock::choose(&origin, None, system).now,
            t("2026-01-02T00:00:00Z")
        );
        let at = Clock::choose(&origin, Some(t("2026-01-03T00:00:00Z")), system);
        assert_eq!(at.source, ClockSource::At);
        origin.kind = OriginKind::Live;
        assert_eq!(Clock::choose(&origin, None, system).now, system);
    }
}

/// A label selector as kubectl's `-l` takes it: `k=v`, `k==v`, `k!=v`,
/// `k` (exists) and `!k` (absent), joined by commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelFilter(Vec<LabelRequirement>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

#[derive(Debug, thiserror::Error)]
#[error("cannot read selector {0:?}: use k=v, k!=v, k or !k, joined by commas")]
pub struct SelectorError(pub String);

impl LabelFilter {
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let err = || SelectorError(text.to_string());
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(err());
            }
            let requirement = if let Some((k, v)) = part.split_once("!=") {
                LabelRequirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                LabelRequirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some(k) = part.strip_prefix('!') {
                LabelRequirement::Absent(k.trim().into())
            } else {
                LabelRequirement::Exists(part.into())
            };
            let key = match &requirement {
                LabelRequirement::Equals(k, _)
                | LabelRequirement::NotEquals(k, _)
                | LabelRequirement::Exists(k)
                | LabelRequirement::Absent(k) => k,
            };
            if key.is_empty() || key.contains(['(', ')', ' ']) {
                return Err(err());
            }
            out.push(requirement);
        }
        Ok(LabelFilter(out))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::Absent(k) => !labels.contains_key(k),
        })
    }
}

#[cfg(test)]
mod selector_tests {
    use super::*;

    #[test]
    fn selectors_read_as_kubectl_writes_them() {
        let labels = BTreeMap::from([
            ("app".to_string(), "web".to_string()),
            ("tier".to_string(), "gpu".to_string()),
        ]);
        let yes = [
            "app=web",
            "app==web,tier",
            "tier!=cpu",
            "!missing",
            "app=web,!missing",
        ];
        for s in yes {
            assert!(LabelFilter::parse(s).unwrap().matches(&labels), "{s}");
        }
        for s in ["app=api", "missing", "!tier", "tier!=gpu"] {
            assert!(!LabelFilter::parse(s).unwrap().matches(&labels), "{s}");
        }
        for bad in ["", "a=b,", "=v", "app in (a,b)"] {
            assert!(LabelFilter::parse(bad).is_err(), "{bad:?}");
        }
    }
}

/// The Helm release as read from its storage Secret's labels: never its
/// values, which Helm keeps in the same Secret's data.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HelmRelease {
    pub name: String,
    pub namespace: String,
    /// Whether the release's metadata could be read.
    pub read: bool,
    pub revision: Option<i64>,
    /// deployed, failed, pending-upgrade...
    pub status: Option<String>,
    /// The target's `helm.sh/chart` label.
    pub chart: Option<String>,
    /// The target's `app.kubernetes.io/version` label.
    pub app_version: Option<String>,
    /// The target's Helm annotations name this release.
    pub manages_target: Option<bool>,
    /// What could not be read or does not match, in words.
    pub notes: Vec<crate::catalogue::Message>,
    /// The read that was refused, when it was.
    pub gap: Option<Gap>,
}
