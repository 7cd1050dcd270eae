//! Naming objects: the target the user asked about, as kubectl names it,
//! and the object references of findings and reports.

use std::fmt;

use serde::{Deserialize, Serialize};

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
    /// KServe's InferenceService: its predictor Deployment is traced.
    InferenceService,
    /// An Argo Rollout: walked as the Deployment it stands in for.
    Rollout,
    /// A LeaderWorkerSet: groups of Pods (a leader and its workers) that
    /// serve together.
    LeaderWorkerSet,
    /// A Knative Service: each Revision runs in a Deployment of its own,
    /// and traffic is split over Revisions.
    KnativeService,
    Deployment,
    StatefulSet,
    DaemonSet,
    /// A ReplicaSet no Deployment in the snapshot owns: a workload of its
    /// own. One a Deployment owns is traced through that Deployment.
    ReplicaSet,
    Pod,
    /// A Job: its Pods run to completion.
    Job,
    /// A CronJob, judged by its last Job.
    CronJob,
    /// A Service: the workload whose Pods it selects is traced.
    Service,
}

impl TargetKind {
    /// Every kind a target can name.
    pub const ALL: &[TargetKind] = &[
        TargetKind::ModelService,
        TargetKind::InferenceService,
        TargetKind::Rollout,
        TargetKind::LeaderWorkerSet,
        TargetKind::KnativeService,
        TargetKind::Deployment,
        TargetKind::StatefulSet,
        TargetKind::DaemonSet,
        TargetKind::ReplicaSet,
        TargetKind::Pod,
        TargetKind::Job,
        TargetKind::CronJob,
        TargetKind::Service,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::ModelService => "ModelService",
            TargetKind::InferenceService => "InferenceService",
            TargetKind::Rollout => "Rollout",
            TargetKind::LeaderWorkerSet => "LeaderWorkerSet",
            // Not `Service`: that names the core kind.
            TargetKind::KnativeService => "KnativeService",
            TargetKind::Deployment => "Deployment",
            TargetKind::StatefulSet => "StatefulSet",
            TargetKind::DaemonSet => "DaemonSet",
            TargetKind::ReplicaSet => "ReplicaSet",
            TargetKind::Pod => "Pod",
            TargetKind::Job => "Job",
            TargetKind::CronJob => "CronJob",
            TargetKind::Service => "Service",
        }
    }

    /// The short name kubectl prints and accepts (`deploy`, `sts`, `ds`).
    pub fn short(self) -> &'static str {
        match self {
            TargetKind::ModelService => "msvc",
            TargetKind::InferenceService => "isvc",
            TargetKind::Rollout => "rollout",
            TargetKind::LeaderWorkerSet => "lws",
            TargetKind::KnativeService => "ksvc",
            TargetKind::Deployment => "deploy",
            TargetKind::StatefulSet => "sts",
            TargetKind::DaemonSet => "ds",
            TargetKind::ReplicaSet => "rs",
            TargetKind::Pod => "pod",
            TargetKind::Job => "job",
            TargetKind::CronJob => "cronjob",
            TargetKind::Service => "svc",
        }
    }

    /// The kind named as [`Self::as_str`] writes it (`StatefulSet`).
    pub fn from_name(kind: &str) -> Option<TargetKind> {
        TargetKind::ALL.iter().copied().find(|k| k.as_str() == kind)
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
#[error("{}", crate::catalogue::Localized::message(self).en())]
pub struct TargetParseError {
    pub given: String,
    /// What is wrong with it: an id of `errors.yaml`.
    pub why: &'static str,
}

impl crate::catalogue::Localized for TargetParseError {
    fn message(&self) -> crate::catalogue::Message {
        // Every kind a target can name, from the one list, so a new row
        // is offered here too.
        let kinds: Vec<String> = TargetKind::ALL
            .iter()
            .map(|k| format!("{}/NAME", k.short()))
            .collect();
        crate::catalogue::Message::new("error.target")
            .arg("given", format!("{:?}", self.given))
            .arg("why", crate::catalogue::Message::new(self.why))
            .arg("kinds", crate::catalogue::Arg::list(kinds, "sep.comma"))
    }
}

impl TargetSpec {
    /// Parses `NAME`, `msvc/NAME`, `isvc/NAME`, `rollout/NAME`, `lws/NAME`, `ksvc/NAME`, `deploy/NAME`, `sts/NAME`, `ds/NAME`,
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
                    "isvc"
                    | "inferenceservice"
                    | "inferenceservices"
                    | "inferenceservice.serving.kserve.io"
                    | "inferenceservices.serving.kserve.io" => TargetKind::InferenceService,
                    "ro"
                    | "rollout"
                    | "rollouts"
                    | "rollout.argoproj.io"
                    | "rollouts.argoproj.io" => TargetKind::Rollout,
                    "lws"
                    | "leaderworkerset"
                    | "leaderworkersets"
                    | "leaderworkerset.leaderworkerset.x-k8s.io"
                    | "leaderworkersets.leaderworkerset.x-k8s.io" => TargetKind::LeaderWorkerSet,
                    "ksvc"
                    | "kservice"
                    | "knativeservice"
                    | "service.serving.knative.dev"
                    | "services.serving.knative.dev" => TargetKind::KnativeService,
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
                    "job" | "jobs" | "job.batch" | "jobs.batch" => TargetKind::Job,
                    "cj" | "cronjob" | "cronjobs" | "cronjob.batch" | "cronjobs.batch" => {
                        TargetKind::CronJob
                    }
                    "svc" | "service" | "services" => TargetKind::Service,
                    _ => return Err(err("error.target.unknown_kind")),
                };
                (kind, name)
            }
        };
        if name.is_empty() {
            return Err(err("error.target.empty_name"));
        }
        if name.contains('/') {
            return Err(err("error.target.slashes"));
        }
        if !is_dns_subdomain(name) {
            return Err(err("error.target.bad_name"));
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
        write!(f, "{}/{}", kubectl_kind(&self.kind), self.name)
    }
}

/// A kind as a kubectl reference names it (`deployment`): lower case,
/// except where that would name another kind (`ksvc`, since `service`
/// is the core Service).
pub fn kubectl_kind(kind: &str) -> String {
    match kind {
        "KnativeService" => TargetKind::KnativeService.short().to_string(),
        other => other.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_not_known_is_told_every_kind_there_is() {
        use crate::catalogue::Localized;
        let err = TargetSpec::parse("foo/x", None).unwrap_err();
        let text = err.message().en();
        for kind in TargetKind::ALL {
            assert!(text.contains(&format!("{}/NAME", kind.short())), "{text}");
        }
        assert!(text.contains("lws/NAME"), "{text}");
    }

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
            ("isvc/a", TargetKind::InferenceService),
            ("ro/a", TargetKind::Rollout),
            ("rollouts.argoproj.io/a", TargetKind::Rollout),
            ("lws/a", TargetKind::LeaderWorkerSet),
            ("ksvc/a", TargetKind::KnativeService),
            ("services.serving.knative.dev/a", TargetKind::KnativeService),
            (
                "leaderworkersets.leaderworkerset.x-k8s.io/a",
                TargetKind::LeaderWorkerSet,
            ),
            (
                "InferenceServices.serving.kserve.io/a",
                TargetKind::InferenceService,
            ),
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
            ("job/a", TargetKind::Job),
            ("jobs.batch/a", TargetKind::Job),
            ("cronjob/a", TargetKind::CronJob),
            ("cj/a", TargetKind::CronJob),
            ("svc/a", TargetKind::Service),
            ("services/a", TargetKind::Service),
        ] {
            assert_eq!(TargetSpec::parse(text, None).unwrap().kind, kind, "{text}");
        }
        for bad in [
            "", "ing/a", "sts/", "ds/A", "deploy/", "a/b/c", "Upper", "-lead", "x_y",
        ] {
            assert!(TargetSpec::parse(bad, None).is_err(), "{bad:?} accepted");
        }
    }
}
