//! The finding ids, typed: a rule can only emit an id listed here, and a
//! test checks that this list and the catalogue's entries are the same set.
//! The ids are the contract (docs/contract.md#findings): never rename one.

use serde::Serialize;

/// A finding's stable id, such as `crash-loop`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct FindingId(&'static str);

macro_rules! finding_ids {
    ($($name:ident = $id:literal,)*) => {
        impl FindingId {
            $(pub const $name: FindingId = FindingId($id);)*
            /// Every id, in the catalogue's order.
            pub const ALL: &[FindingId] = &[$(FindingId::$name),*];
        }
    };
}

finding_ids! {
    POD_UNSCHEDULABLE = "pod-unschedulable",
    RESOURCE_CLAIM_PENDING = "resource-claim-pending",
    SCHEDULER_SILENT = "scheduler-silent",
    POD_NOT_STARTED = "pod-not-started",
    INIT_CONTAINER_FAILING = "init-container-failing",
    CRASH_LOOP = "crash-loop",
    CONTAINER_CONFIG_ERROR = "container-config-error",
    CONTAINER_CANNOT_RUN = "container-cannot-run",
    OOM_KILLED = "oom-killed",
    PROBE_KILLS_STARTUP = "probe-kills-startup",
    IMAGE_PULL_DENIED = "image-pull-denied",
    IMAGE_PULL_NOT_FOUND = "image-pull-not-found",
    IMAGE_PULL_TIMEOUT = "image-pull-timeout",
    IMAGE_PULL_FAILED = "image-pull-failed",
    READINESS_FAILING = "readiness-failing",
    ENDPOINTS_NOT_READY = "endpoints-not-ready",
    SELECTOR_MISMATCH = "selector-mismatch",
    PORT_MISMATCH = "port-mismatch",
    SERVICE_MISSING = "service-missing",
    ENDPOINTS_STALE = "endpoints-stale",
    DNS_CHECK = "dns-check",
    CONTROLLER_NOT_CONVERGING = "controller-not-converging",
    DEPLOYMENT_NOT_OBSERVED = "deployment-not-observed",
    DEPLOYMENT_MISSING = "deployment-missing",
    PODS_NOT_CREATED = "pods-not-created",
    ROLLOUT_SURGE_BLOCKED = "rollout-surge-blocked",
    PROGRESS_DEADLINE_EXCEEDED = "progress-deadline-exceeded",
    ROLLOUT_PAUSED = "rollout-paused",
    MANAGED_DEPLOYMENT_EDITED = "managed-deployment-edited",
    FIELD_CONFLICT = "field-conflict",
    HPA_METRICS_UNAVAILABLE = "hpa-metrics-unavailable",
    HPA_AT_MAX = "hpa-at-max",
    HPA_TARGET_MISSING = "hpa-target-missing",
    NODE_NOT_READY = "node-not-ready",
    PDB_BLOCKING = "pdb-blocking",
    POD_EVICTED = "pod-evicted",
    POD_FAILED = "pod-failed",
    JOB_FAILED = "job-failed",
    GROUP_NOT_READY = "group-not-ready",
    MODEL_NOT_LOADED = "model-not-loaded",
    ROLLOUT_IN_PROGRESS = "rollout-in-progress",
    UPDATE_ON_DELETE = "update-on-delete",
}

impl FindingId {
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The id named `text`, if there is one.
    pub fn parse(text: &str) -> Option<FindingId> {
        FindingId::ALL.iter().copied().find(|id| id.0 == text)
    }
}

impl std::fmt::Display for FindingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl AsRef<str> for FindingId {
    fn as_ref(&self) -> &str {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_ids_are_exactly_the_catalogue_entries() {
        let typed: Vec<&str> = FindingId::ALL.iter().map(|i| i.as_str()).collect();
        let catalogue: Vec<&str> = super::super::catalogue()
            .entries
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(typed, catalogue);
    }
}
