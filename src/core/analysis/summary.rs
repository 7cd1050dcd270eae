//! The facts of a chain a person is shown (the object tree), read from the
//! raw objects once, so that renderers read only the [`Diagnosis`] and
//! never a Kubernetes type.
//!
//! [`Diagnosis`]: super::Diagnosis

use jiff::Timestamp;
use serde::Serialize;

use super::PodState;
use super::facts::{self, lease_state};
use crate::chain::{self, Chain, SERVICE_NAME_LABEL};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainSummary {
    /// The serving platform's object at the top (a ModelService, an
    /// InferenceService).
    pub platform: Option<PlatformFacts>,
    /// The Knative Service whose Revisions the chain counts: the target,
    /// or the predictor of an InferenceService in KServe's Knative mode.
    /// Each Revision has desired replicas of its own, and a traffic split,
    /// not an update strategy, holds Pods on an older one.
    pub knative_service: Option<PlatformFacts>,
    pub deployment: Option<DeploymentFacts>,
    /// Newest revision first, as the chain holds them.
    pub replica_sets: Vec<ReplicaSetFacts>,
    /// A StatefulSet or DaemonSet target (a LeaderWorkerSet's leader set).
    pub pod_set: Option<PodSetFacts>,
    /// A LeaderWorkerSet's groups, in its order.
    pub groups: Vec<GroupFacts>,
    pub services: Vec<ServiceFacts>,
    /// The workload (a ModelService or a Deployment) should have a Service.
    pub wants_service: bool,
    pub controller: Option<ControllerFacts>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlatformFacts {
    /// `ModelService`, `InferenceService`.
    pub kind: String,
    pub name: String,
    pub generation: i64,
    /// The generation its controller observed; `None` too when its status
    /// does not say (KServe's observedGeneration is the Deployment's).
    pub observed: Option<i64>,
    /// Its status reports its own generation observed.
    pub observes_generation: bool,
    /// Its readiness condition as written (`Ready`; a LeaderWorkerSet's
    /// `Available`): its type, status and reason.
    pub ready: Option<(String, String)>,
    /// The type of that condition.
    pub ready_condition: String,
    /// It is itself the workload (an Argo Rollout): the Deployment facts
    /// are its own, not a Deployment's.
    pub is_workload: bool,
    /// The phase its controller writes, with its message (Argo's
    /// `status.phase`: Healthy, Progressing, Paused, Degraded).
    pub phase: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeploymentFacts {
    pub name: String,
    pub desired: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
    /// The Progressing condition's status and reason, as the cluster wrote it.
    pub progressing: Option<(String, String)>,
}

/// A StatefulSet's or DaemonSet's own counts, as its controller wrote them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodSetFacts {
    /// `StatefulSet` or `DaemonSet`.
    pub kind: String,
    pub name: String,
    pub desired: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
    /// The update revision's number and name, when known.
    pub update_revision: Option<(i64, String)>,
    /// `RollingUpdate`, `RollingUpdate, partition 2` or `OnDelete`.
    pub strategy: String,
}

/// One LeaderWorkerSet group: its leader's name, how many of its Pods are
/// Ready of how many it has when whole, and whether it serves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupFacts {
    pub name: String,
    pub ready: i32,
    pub size: i32,
    pub serving: bool,
    /// The UIDs of its Pods in the chain, leader first.
    pub pod_uids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicaSetFacts {
    pub name: String,
    pub revision: Option<i64>,
    pub current: bool,
    pub ready: i32,
    pub desired: i32,
    /// `status.replicas`: Pods it still has, as its controller counted.
    pub replicas: i32,
    /// The UIDs of its Pods in the chain.
    pub pod_uids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceFacts {
    pub name: String,
    /// `port→targetPort` (or `port`), in the Service's order.
    pub ports: Vec<String>,
    pub slices: Vec<SliceFacts>,
    /// The replicas desired behind it, when that is not the workload's
    /// (a Knative Revision's private Service, whose revision the
    /// autoscaler sizes on its own).
    pub desired: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SliceFacts {
    pub name: String,
    pub ready: usize,
    pub endpoints: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControllerFacts {
    pub namespace: String,
    pub name: String,
    /// Ready and desired replicas of its Deployment, when it was read.
    pub replicas: Option<(i32, i32)>,
    pub lease: Option<LeaseFacts>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeaseFacts {
    pub renewed: Option<Timestamp>,
    pub stale: bool,
}

/// Ready endpoints and Pods of one revision: what serves users now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevisionCount {
    pub revision: Option<i64>,
    pub current: bool,
    /// Pods of the revision that are not terminating.
    pub pods: i32,
    pub ready: i32,
    /// Pods with a ready endpoint.
    pub serving: i32,
    /// Its own desired replicas, when it runs in a Deployment of its own
    /// (a Knative Revision); `None`: the workload's.
    pub desired: Option<i32>,
}

fn platform_facts(p: chain::PlatformObject) -> PlatformFacts {
    let m = p.object;
    let own = p.platform.observes_own_generation;
    PlatformFacts {
        kind: p.kind().to_string(),
        name: facts::name(&m.metadata).to_string(),
        generation: m.metadata.generation.unwrap_or(0),
        observed: own.then(|| chain::observed_generation(m)).flatten(),
        observes_generation: own,
        ready: facts::condition_of(m, p.platform.ready_condition).map(|c| {
            let stale = p.platform.false_keeps_old_reason && c.status == "False";
            let reason = if stale { "" } else { c.reason };
            (c.status.to_string(), reason.to_string())
        }),
        ready_condition: p.platform.ready_condition.to_string(),
        is_workload: p.workload.is_some(),
        phase: m.data["status"]["phase"]
            .as_str()
            .filter(|p| !p.is_empty())
            .map(|p| {
                let message = m.data["status"]["message"].as_str().unwrap_or("");
                (p.to_string(), message.to_string())
            }),
    }
}

pub fn summarize(chain: &Chain, pods: &[PodState], now: Timestamp) -> ChainSummary {
    let platform = chain.platform.map(platform_facts);
    let deployment = chain.deployment.map(|d| {
        let st = d.status.as_ref();
        DeploymentFacts {
            name: facts::name(&d.metadata).to_string(),
            // A Knative Revision's Deployment as written: the chain's
            // desired can be above it (a Revision that never was Ready).
            desired: chain
                .revision_desired(chain.current_replica_set().and_then(|r| r.revision))
                .unwrap_or_else(|| chain.desired_replicas()),
            ready: st.and_then(|s| s.ready_replicas).unwrap_or(0),
            updated: st.and_then(|s| s.updated_replicas).unwrap_or(0),
            available: st.and_then(|s| s.available_replicas).unwrap_or(0),
            progressing: st
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Progressing"))
                .map(|c| (c.status.clone(), c.reason.clone().unwrap_or_default())),
        }
    });
    let groups = super::groups::group_states(chain, pods)
        .iter()
        .map(|g| GroupFacts {
            name: g.name.clone(),
            ready: g.members.iter().filter(|p| p.moments.ready.reached).count() as i32,
            size: g.size,
            serving: g.serving(),
            pod_uids: g.members.iter().map(|p| p.uid.clone()).collect(),
        })
        .collect();
    let replica_sets = chain
        .replica_sets
        .iter()
        .map(|rs| {
            let r = rs.replica_set;
            let st = r.status.as_ref();
            let rs_uid = r.metadata.uid.as_ref();
            ReplicaSetFacts {
                name: facts::name(&r.metadata).to_string(),
                revision: rs.revision,
                current: rs.current,
                ready: st.and_then(|s| s.ready_replicas).unwrap_or(0),
                desired: r.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0),
                replicas: st.map_or(0, |s| s.replicas),
                pod_uids: chain
                    .pods
                    .iter()
                    .filter(|p| {
                        p.pod
                            .metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .any(|o| Some(&o.uid) == rs_uid)
                    })
                    .filter_map(|p| p.pod.metadata.uid.clone())
                    .collect(),
            }
        })
        .collect();
    let services = chain
        .services
        .iter()
        .map(|svc| ServiceFacts {
            name: facts::name(&svc.metadata).to_string(),
            ports: svc
                .spec
                .as_ref()
                .and_then(|s| s.ports.as_ref())
                .map(|ports| {
                    ports
                        .iter()
                        .map(|p| match &p.target_port {
                            Some(t) => format!("{}→{}", p.port, crate::model::int_or_string(t)),
                            None => p.port.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            slices: chain
                .endpoint_slices
                .iter()
                .filter(|s| {
                    s.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(SERVICE_NAME_LABEL))
                        == svc.metadata.name.as_ref()
                })
                .map(|slice| SliceFacts {
                    name: facts::name(&slice.metadata).to_string(),
                    ready: slice
                        .endpoints
                        .iter()
                        .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
                        .count(),
                    endpoints: slice.endpoints.len(),
                })
                .collect(),
            desired: chain.service_desired(svc),
        })
        .collect();
    let controller = chain.controller.as_ref().map(|c| ControllerFacts {
        namespace: c.location.namespace.clone(),
        name: c.location.name.clone(),
        replicas: c.deployment.map(|dep| {
            (
                dep.status
                    .as_ref()
                    .and_then(|s| s.ready_replicas)
                    .unwrap_or(0),
                dep.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            )
        }),
        lease: c.lease.map(|l| {
            let ls = lease_state(l, now);
            LeaseFacts {
                renewed: ls.renewed,
                stale: ls.stale,
            }
        }),
    });
    let pod_set = chain.pod_set.map(|set| {
        let (ready, updated, available) = match set {
            chain::PodSet::StatefulSet(s) => {
                let st = s.status.as_ref();
                (
                    st.and_then(|s| s.ready_replicas).unwrap_or(0),
                    st.and_then(|s| s.updated_replicas).unwrap_or(0),
                    st.and_then(|s| s.available_replicas).unwrap_or(0),
                )
            }
            chain::PodSet::DaemonSet(d) => {
                let st = d.status.as_ref();
                (
                    st.map_or(0, |s| s.number_ready),
                    st.and_then(|s| s.updated_number_scheduled).unwrap_or(0),
                    st.and_then(|s| s.number_available).unwrap_or(0),
                )
            }
        };
        PodSetFacts {
            kind: set.kind().as_str().to_string(),
            name: set.name().to_string(),
            desired: set.desired(),
            ready,
            updated,
            available,
            update_revision: chain
                .current_set_revision()
                .map(|r| (r.revision, r.name().to_string())),
            strategy: match set.strategy() {
                chain::SetStrategy::OnDelete => "OnDelete".into(),
                chain::SetStrategy::RollingUpdate { partition } if partition > 0 => {
                    format!("RollingUpdate, partition {partition}")
                }
                chain::SetStrategy::RollingUpdate { .. } => "RollingUpdate".into(),
            },
        }
    });
    ChainSummary {
        platform,
        knative_service: chain.knative_service.map(platform_facts),
        deployment,
        replica_sets,
        pod_set,
        groups,
        services,
        wants_service: chain.platform.is_some()
            || chain.deployment.is_some()
            // A StatefulSet names its governing Service; a DaemonSet (a
            // node agent) often has none.
            || matches!(chain.pod_set, Some(chain::PodSet::StatefulSet(_))),
        controller,
    }
}

/// The Pods counted per revision, newest first; a LeaderWorkerSet's
/// groups instead, each counted once, by its leader's revision.
pub fn revision_counts(chain: &Chain, pods: &[PodState]) -> Vec<RevisionCount> {
    // (revision, current, ready, serving) of each unit that counts.
    let units: Vec<(Option<i64>, bool, bool, bool)> = if chain.serves_in_groups() {
        super::groups::group_states(chain, pods)
            .iter()
            .filter(|g| !g.terminating)
            .map(|g| (g.revision, g.current, g.ready(), g.serving()))
            .collect()
    } else {
        pods.iter()
            .filter(|p| !p.terminating)
            .map(|p| (p.revision, p.current, p.moments.ready.reached, p.serving))
            .collect()
    };
    let mut out: Vec<RevisionCount> = Vec::new();
    for (revision, current, ready, serving) in units {
        let i = match out
            .iter()
            .position(|r| r.revision == revision && r.current == current)
        {
            Some(i) => i,
            None => {
                out.push(RevisionCount {
                    revision,
                    current,
                    pods: 0,
                    ready: 0,
                    serving: 0,
                    desired: chain.revision_desired(revision),
                });
                out.len() - 1
            }
        };
        let r = &mut out[i];
        r.pods += 1;
        r.ready += i32::from(ready);
        r.serving += i32::from(serving);
    }
    out.sort_by(|a, b| b.current.cmp(&a.current).then(b.revision.cmp(&a.revision)));
    out
}
