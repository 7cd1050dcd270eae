//! The snapshot itself: the objects, logs, gaps and redactions of one
//! read, where it came from (origin, Helm release), and the clock a run
//! judges at.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube_core::DynamicObject;
use serde::{Deserialize, Serialize};

use super::{EventRecord, Gap, Redaction, TargetSpec};

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
    /// What the reader of a file read but says about it (a key named twice
    /// in one mapping), one sentence each: printed as `warning:` lines on
    /// stderr, never part of a judgement.
    pub warnings: Vec<crate::catalogue::Message>,
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
    /// The context the user named for this live read (`--context`, or
    /// one of several): every command printed about it names it too, so
    /// it reads the same cluster whatever the current context is then.
    pub named_context: Option<String>,
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
    /// KServe InferenceServices (any served version of serving.kserve.io).
    pub inference_services: Vec<DynamicObject>,
    /// Argo Rollouts (argoproj.io), each with the Deployment it stands in for.
    pub rollouts: Vec<super::Rollout>,
    /// LeaderWorkerSets (leaderworkerset.x-k8s.io): groups of Pods that
    /// serve together, a leader StatefulSet and one worker set per group.
    pub leader_worker_sets: Vec<DynamicObject>,
    /// Knative Services (serving.knative.dev): each Revision gets a
    /// Deployment of its own, and traffic is split over Revisions.
    pub knative_services: Vec<DynamicObject>,
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
    /// Jobs and CronJobs: run-to-completion targets (`job/NAME`,
    /// `cronjob/NAME`).
    pub jobs: Vec<Job>,
    pub cron_jobs: Vec<CronJob>,
    /// Objects of kinds the analysis does not read, kept so nothing is lost.
    pub other: Vec<serde_json::Value>,
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

/// The location of a snapshot read from standard input (`--snapshot -`).
pub const STDIN_LOCATION: &str = "standard input";

impl Origin {
    /// What an `mdiag` command printed about this snapshot must add to read
    /// it again (docs/security.md, "Commands"): nothing for a live read;
    /// for a file, the file, and the clock when it was not the file's own
    /// (so the command reaches the same findings). As template vars
    /// ([`crate::catalogue::REPLAY_FILE`], [`crate::catalogue::REPLAY_AT`]).
    pub fn replay_vars(&self, now: Timestamp) -> Vec<(String, String)> {
        if self.kind == OriginKind::Live {
            return self
                .named_context
                .iter()
                .map(|c| (crate::catalogue::REPLAY_CONTEXT.to_string(), c.clone()))
                .collect();
        }
        // Read from standard input: `--snapshot -` again.
        let file = if self.location == STDIN_LOCATION {
            "-".to_string()
        } else {
            self.location.clone()
        };
        let mut vars = vec![(crate::catalogue::REPLAY_FILE.to_string(), file)];
        let own_clock = match self.kind {
            OriginKind::SnapshotFile => self.captured_at.or(self.newest_seen),
            _ => self.newest_seen,
        };
        if own_clock != Some(now) {
            vars.push((crate::catalogue::REPLAY_AT.to_string(), now.to_string()));
        }
        vars
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
