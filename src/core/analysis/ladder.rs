//! The four moments of each Pod and the step ladder of the whole rollout.

use std::collections::HashSet;

use crate::catalogue::{Arg, Message};

use jiff::Timestamp;
use serde::Serialize;

use super::facts::{self, container_statuses, created, pod_condition};
use super::{Replicas, Step, StepState};
use crate::chain::{CONTROLLER_NAME, Chain, ChainPod, PodSet, SetStrategy};

/// One moment of a Pod: whether its persisted record exists, and its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Moment {
    pub reached: bool,
    pub at: Option<Timestamp>,
}

impl Moment {
    fn reached_at(at: Option<Timestamp>) -> Self {
        Moment { reached: true, at }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Moments {
    pub stored: Moment,
    pub bound: Moment,
    pub started: Moment,
    pub ready: Moment,
    /// A run-to-completion Pod: every container terminated with exit 0.
    #[serde(skip_serializing_if = "not_reached")]
    pub completed: Moment,
}

fn not_reached(m: &Moment) -> bool {
    !m.reached
}

/// What the ladder needs to know about one Pod.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodState {
    pub name: String,
    pub uid: String,
    pub revision: Option<i64>,
    pub current: bool,
    /// A StatefulSet's or DaemonSet's Pod its update strategy keeps on an
    /// older revision on purpose (below the partition, or OnDelete); an
    /// Argo Rollout's stable Pod at a step; a Knative Revision's Pod that
    /// a traffic split pins.
    pub held: bool,
    pub terminating: bool,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub moments: Moments,
    /// Its address is ready in an EndpointSlice of the Service.
    pub serving: bool,
    /// In a slice but draining (ready=false, serving=true, terminating).
    pub draining: bool,
    pub last_step: Step,
    pub restarts: i32,
    /// The first container's waiting or terminated reason, if any.
    pub state_reason: Option<String>,
}

pub fn pod_states(chain: &Chain) -> Vec<PodState> {
    let serving_uids = endpoint_uids(chain, false, |ready, _| ready);
    let published_uids = endpoint_uids(chain, true, |ready, _| ready);
    let draining_uids = endpoint_uids(chain, false, |ready, serving| !ready && serving);
    chain
        .pods
        .iter()
        .map(|p| {
            let mut state = pod_state(p, &serving_uids, &draining_uids);
            // A Service that publishes not-ready addresses (a StatefulSet's
            // governing Service often does) marks every endpoint ready: its
            // endpoint says the Pod serves only once the Pod is Ready.
            if !state.serving
                && state.moments.ready.reached
                && pod_in(&published_uids, &state.uid, &state.name)
            {
                state.serving = true;
                state.last_step = Step::Serving;
            }
            state
        })
        .collect()
}

/// Whether a Service publishes the addresses of Pods that are not ready.
fn publishes_not_ready(service: &k8s_openapi::api::core::v1::Service) -> bool {
    service
        .spec
        .as_ref()
        .and_then(|s| s.publish_not_ready_addresses)
        .unwrap_or(false)
}

/// UIDs of Pods whose endpoint conditions satisfy `keep(ready, serving)`,
/// in the slices of Services that publish not-ready addresses or in the
/// others. An unset condition counts as true, as the EndpointSlice API says.
fn endpoint_uids(
    chain: &Chain,
    published: bool,
    keep: impl Fn(bool, bool) -> bool,
) -> HashSet<String> {
    let publishing: HashSet<&str> = chain
        .services
        .iter()
        .filter(|s| publishes_not_ready(s))
        .filter_map(|s| s.metadata.name.as_deref())
        .collect();
    chain
        .endpoint_slices
        .iter()
        .filter(|s| {
            let service = s
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(crate::chain::SERVICE_NAME_LABEL))
                .map_or("", String::as_str);
            publishing.contains(service) == published
        })
        .flat_map(|s| s.endpoints.iter())
        .filter(|e| {
            let c = e.conditions.as_ref();
            let ready = c.and_then(|c| c.ready).unwrap_or(true);
            let serving = c.and_then(|c| c.serving).unwrap_or(ready);
            keep(ready, serving)
        })
        .filter_map(|e| endpoint_key(e.target_ref.as_ref()?))
        .collect()
}

/// An endpoint names its Pod by `targetRef.uid`; a hand-made slice without
/// one is matched by the Pod's name instead.
fn endpoint_key(target: &k8s_openapi::api::core::v1::ObjectReference) -> Option<String> {
    match (&target.uid, &target.name) {
        (Some(uid), _) if !uid.is_empty() => Some(uid.clone()),
        (_, Some(name)) if target.kind.as_deref().is_none_or(|k| k == "Pod") => {
            Some(format!("name:{name}"))
        }
        _ => None,
    }
}

fn pod_in(set: &HashSet<String>, uid: &str, name: &str) -> bool {
    set.contains(uid) || set.contains(&format!("name:{name}"))
}

fn pod_state(p: &ChainPod, serving: &HashSet<String>, draining: &HashSet<String>) -> PodState {
    let pod = p.pod;
    let meta = &pod.metadata;
    let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
    let statuses = container_statuses(pod);
    let container_count = pod.spec.as_ref().map_or(0, |s| s.containers.len());

    let stored = Moment::reached_at(created(meta));
    let scheduled = pod_condition(pod, "PodScheduled").filter(|c| c.status == "True");
    let scheduled_at = scheduled.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0));
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let any_container_ran = statuses.iter().any(|s| {
        s.state
            .as_ref()
            .is_some_and(|st| st.running.is_some() || st.terminated.is_some())
    });
    // A hand-written or trimmed manifest may leave out spec.nodeName; a
    // Pod the kubelet ran (PodScheduled=True, Ready=True, a container that
    // ran, or phase Running) was bound all the same.
    let bound = if node.is_some() || scheduled.is_some() {
        Moment::reached_at(scheduled_at)
    } else if any_container_ran
        || matches!(phase, Some("Running" | "Succeeded" | "Failed"))
        || pod_condition(pod, "Ready").is_some_and(|c| c.status == "True")
    {
        Moment::reached_at(None)
    } else {
        Moment::default()
    };
    let running: Vec<Timestamp> = statuses
        .iter()
        .filter_map(|s| s.state.as_ref()?.running.as_ref())
        .filter_map(|r| r.started_at.as_ref().map(|t| t.0))
        .collect();
    let all_running = container_count > 0
        && statuses.len() >= container_count
        && statuses
            .iter()
            .all(|s| s.state.as_ref().is_some_and(|st| st.running.is_some()));
    let started = super::completion::started_after_the_end(pod, bound).unwrap_or(
        if bound.reached && all_running {
            Moment::reached_at(running.iter().max().copied())
        } else {
            Moment::default()
        },
    );
    let completed = super::completion::completed(pod, started);
    let ready_condition = pod_condition(pod, "Ready").filter(|c| c.status == "True");
    let ready = if started.reached && ready_condition.is_some() {
        Moment::reached_at(
            ready_condition.and_then(|c| c.last_transition_time.as_ref().map(|t| t.0)),
        )
    } else {
        Moment::default()
    };
    let uid = facts::uid(meta).to_string();
    let is_serving = pod_in(serving, &uid, facts::name(meta));
    let last_step = if ready.reached && is_serving {
        Step::Serving
    } else if ready.reached {
        Step::Ready
    } else if started.reached {
        Step::Started
    } else if bound.reached {
        Step::Bound
    } else {
        Step::Stored
    };
    let moments = Moments {
        stored,
        bound,
        started,
        ready,
        completed,
    };
    let last_step = super::completion::last_step(&moments, last_step);
    let state_reason = statuses.iter().find_map(|s| {
        let st = s.state.as_ref()?;
        st.waiting
            .as_ref()
            .and_then(|w| w.reason.clone())
            .or_else(|| st.terminated.as_ref().and_then(|t| t.reason.clone()))
    });
    PodState {
        name: facts::name(meta).to_string(),
        draining: pod_in(draining, &uid, facts::name(meta)),
        uid,
        revision: p.revision,
        current: p.current,
        held: p.held,
        terminating: p.terminating(),
        node,
        phase: pod.status.as_ref().and_then(|s| s.phase.clone()),
        moments,
        serving: is_serving,
        last_step,
        restarts: statuses.iter().map(|s| s.restart_count).sum(),
        state_reason,
    }
}

pub fn replicas(chain: &Chain, pods: &[PodState]) -> Replicas {
    if chain.serves_in_groups() {
        let groups = super::groups::group_states(chain, pods);
        let count = |f: &dyn Fn(&super::groups::GroupState) -> bool| {
            groups.iter().filter(|g| f(g)).count() as i32
        };
        return Replicas {
            desired: chain.desired_replicas(),
            current: count(&|g| g.current && !g.terminating),
            ready: count(&|g| g.current && !g.terminating && g.ready()),
            serving: count(&|g| g.current && !g.terminating && g.serving()),
            old: count(&|g| !g.current),
            group_size: chain.group_size(),
        };
    }
    let current: Vec<&PodState> = pods
        .iter()
        .filter(|p| p.current && !p.terminating)
        .collect();
    let count = |f: &dyn Fn(&PodState) -> bool| current.iter().filter(|p| f(p)).count() as i32;
    Replicas {
        desired: chain.desired_replicas(),
        current: current.len() as i32,
        ready: count(&|p| p.moments.ready.reached),
        serving: count(&|p| p.serving && p.moments.ready.reached),
        old: pods.iter().filter(|p| !p.current).count() as i32,
        group_size: None,
    }
}

/// The ladder from the first step that applies to the target.
pub fn steps(chain: &Chain, pods: &[PodState], replicas: &Replicas) -> Vec<StepState> {
    let mut out = Vec::new();
    let controller_name = chain
        .controller
        .as_ref()
        .map(|c| c.location.name.as_str())
        .unwrap_or(CONTROLLER_NAME);

    if let Some(top) = chain.platform {
        let msvc = top.object;
        let meta = &msvc.metadata;
        out.push(StepState {
            step: Step::Declared,
            reached: true,
            at: facts::declaration_time(meta, controller_name).or(created(meta)),
            note: Message::new("note.generation").arg("generation", meta.generation.unwrap_or(0)),
            unread: None,
            restarted: 0,
        });
        // A platform whose status does not observe its own generation
        // (KServe's is the Deployment's) has no observed step to judge.
        if top.platform.observes_own_generation {
            let generation = meta.generation.unwrap_or(0);
            let observed = crate::chain::observed_generation(msvc);
            let reached = crate::chain::generation_observed(meta.generation, observed);
            // The controller writing the Deployment after the declaration is the
            // earliest persisted proof that it observed it.
            let declared_at = out[0].at;
            let deployment_write = chain
                .deployment
                .and_then(|d| facts::spec_write_time(&d.metadata, Some(controller_name)))
                .filter(|t| declared_at.is_none_or(|d| *t >= d));
            let status_write = facts::status_write_time(meta);
            out.push(StepState {
                step: Step::Observed,
                reached,
                at: if reached {
                    [deployment_write, status_write].into_iter().flatten().min()
                } else {
                    None
                },
                note: match observed {
                    Some(o) => Message::new("note.observed")
                        .arg("observed", o)
                        .arg("generation", generation),
                    None => Message::new("note.no_observed"),
                },
                unread: None,
                restarted: 0,
            });
        }
    }

    // A LeaderWorkerSet's Pods are its leader StatefulSet's and the
    // worker sets': it has no Deployment step.
    let grouped = chain.serves_in_groups();
    if (chain.platform.is_some() && !grouped) || chain.deployment.is_some() {
        let (reached, at, note) = match chain.deployment {
            None => (false, None, Message::new("note.no_deployment")),
            Some(d) => {
                let generation = d.metadata.generation.unwrap_or(0);
                let observed = d.status.as_ref().and_then(|s| s.observed_generation);
                let reached = crate::chain::generation_observed(d.metadata.generation, observed);
                let at = facts::spec_write_time(&d.metadata, None).or(created(&d.metadata));
                let note = match observed {
                    Some(o) => Message::new("note.observed")
                        .arg("observed", o)
                        .arg("generation", generation),
                    None => Message::new("note.not_observed").arg("generation", generation),
                };
                (reached, at, note)
            }
        };
        out.push(StepState {
            step: Step::Deployment,
            reached,
            at,
            note,
            unread: None,
            restarted: 0,
        });
        let current = chain.current_replica_set();
        out.push(StepState {
            step: Step::ReplicaSet,
            reached: current.is_some(),
            at: current.and_then(|r| created(&r.replica_set.metadata)),
            note: match current {
                Some(r) => Message::new("note.revision").arg(
                    "revision",
                    r.revision.map_or("?".to_string(), |v| v.to_string()),
                ),
                None => Message::new("note.no_replicaset"),
            },
            unread: None,
            restarted: 0,
        });
    }

    if let Some(set) = chain.pod_set {
        out.push(pod_set_step(chain, set));
    } else if grouped {
        out.push(StepState {
            step: Step::StatefulSet,
            reached: false,
            at: None,
            note: Message::new("note.no_leader_set"),
            unread: None,
            restarted: 0,
        });
    }

    if let Some(rs) = chain.lone_replica_set() {
        out.push(lone_replica_set_step(rs));
    }

    if let Some(run) = &chain.job {
        out.push(super::jobs::job_step(run));
    }

    // A bare Pod being deleted is still its target's one Pod: nothing
    // replaces it, so the ladder stands where it got to.
    let bare = chain.bare_pod();
    let current: Vec<&PodState> = pods
        .iter()
        .filter(|p| p.current && (!p.terminating || bare))
        .collect();
    let of = current.len();
    // Pods are counted against the Pods wanted: a group's size each.
    let desired_pods = replicas
        .desired
        .saturating_mul(chain.group_size().unwrap_or(1));
    let pod_step = |step: Step, pick: fn(&Moments) -> Moment| {
        let moments: Vec<Moment> = current.iter().map(|p| pick(&p.moments)).collect();
        let n = moments.iter().filter(|m| m.reached).count();
        // Scaled to zero with no Pod left: nothing is owed at this step.
        let reached = if moments.is_empty() {
            desired_pods == 0
        } else {
            n == moments.len()
        };
        StepState {
            step,
            reached,
            at: if reached {
                moments.iter().filter_map(|m| m.at).max()
            } else {
                None
            },
            note: Message::new("note.pods")
                .arg("n", n)
                .arg("current", of)
                .arg("desired", desired_pods),
            unread: None,
            restarted: 0,
        }
    };
    out.push(pod_step(Step::Stored, |m| m.stored));
    out.push(pod_step(Step::Bound, |m| m.bound));
    let mut started = pod_step(Step::Started, |m| m.started);
    if !started.reached {
        started.restarted = current.iter().map(|p| p.restarts).sum();
    }
    out.push(started);
    // A bare Pod or a Job's that runs to completion ends at completed.
    if super::completion::judged_as_a_run(chain) {
        out.push(super::completion::completed_step(&current, replicas));
        return out;
    }
    out.push(pod_step(Step::Ready, |m| m.ready));
    // A plain Deployment need not be behind a Service (a worker, a
    // controller): without one, its ladder ends at ready.
    if chain.platform.is_none() && chain.services.is_empty() {
        return out;
    }
    let serving = if replicas.desired == 0 {
        true
    } else {
        replicas.serving >= replicas.desired
    };
    out.push(StepState {
        step: Step::Serving,
        reached: serving && !chain.services.is_empty(),
        // EndpointSlices keep no per-endpoint time: say so, invent none.
        at: None,
        note: match chain.primary_service() {
            None => Message::new("note.no_service"),
            Some(s) if grouped => Message::new("note.groups_serving")
                .arg("serving", replicas.serving)
                .arg("desired", replicas.desired)
                .arg("service", facts::name(&s.metadata)),
            // Counted over every Service of the chain (a Knative Service's
            // Revisions, a Rollout's stable and canary): name them all.
            Some(_) if chain.services.len() > 1 => Message::new("note.endpoints_services")
                .arg("serving", replicas.serving)
                .arg("desired", replicas.desired)
                .arg(
                    "services",
                    crate::catalogue::Arg::list(
                        chain
                            .services
                            .iter()
                            .map(|s| format!("service/{}", facts::name(&s.metadata))),
                        "sep.comma",
                    ),
                ),
            Some(s) => Message::new("note.endpoints")
                .arg("serving", replicas.serving)
                .arg("desired", replicas.desired)
                .arg("service", facts::name(&s.metadata)),
        },
        unread: None,
        restarted: 0,
    });
    out
}

/// A pod set's own rung: it exists, its controller observed the current
/// generation, and its update revision is known (the revision the Pods are
/// walked against).
fn pod_set_step(chain: &Chain, set: PodSet) -> StepState {
    let meta = set.meta();
    let generation = meta.generation.unwrap_or(0);
    let observed = set.observed_generation();
    let current = chain.current_set_revision();
    let revision_known = current.is_some()
        || match set {
            PodSet::StatefulSet(s) => s
                .status
                .as_ref()
                .and_then(|st| st.update_revision.as_deref())
                .is_some_and(|r| !r.is_empty()),
            // Without ControllerRevisions a DaemonSet's Pods are matched by
            // their template generation.
            PodSet::DaemonSet(_) => chain.set_revisions.is_empty(),
        };
    let observed_note = match observed {
        Some(o) => Message::new("note.observed")
            .arg("observed", o)
            .arg("generation", generation),
        None => Message::new("note.not_observed").arg("generation", generation),
    };
    let revision_note = match current {
        Some(r) => Message::new("note.update_revision")
            .arg("revision", r.revision)
            .arg("name", r.name()),
        None if revision_known => match set {
            PodSet::StatefulSet(s) => Message::new("note.update_revision_hash").arg(
                "revision",
                s.status
                    .as_ref()
                    .and_then(|st| st.update_revision.as_deref())
                    .unwrap_or("?"),
            ),
            PodSet::DaemonSet(_) => Message::new("note.no_controller_revision"),
        },
        None => Message::new("note.no_update_revision"),
    };
    let strategy_note: Arg = match set.strategy() {
        SetStrategy::OnDelete => Message::new("note.on_delete").into(),
        SetStrategy::RollingUpdate { partition } if partition > 0 => Message::new("note.partition")
            .arg("partition", partition)
            .into(),
        SetStrategy::RollingUpdate { .. } => Arg::from(""),
    };
    StepState {
        step: match set {
            PodSet::StatefulSet(_) => Step::StatefulSet,
            PodSet::DaemonSet(_) => Step::DaemonSet,
        },
        reached: set.observed() && revision_known,
        at: facts::spec_write_time(meta, None).or(created(meta)),
        note: Message::new("note.set")
            .arg("observed", observed_note)
            .arg("revision", revision_note)
            .arg("strategy", strategy_note),
        unread: None,
        restarted: 0,
    }
}

/// A ReplicaSet that is its own workload: its rung is reached once its
/// controller observed its current generation (there is no Deployment
/// above it, and its one template is the current revision).
fn lone_replica_set_step(rs: &k8s_openapi::api::apps::v1::ReplicaSet) -> StepState {
    let meta = &rs.metadata;
    let generation = meta.generation.unwrap_or(0);
    let observed = rs.status.as_ref().and_then(|s| s.observed_generation);
    let observed_note = match observed {
        Some(o) => Message::new("note.observed")
            .arg("observed", o)
            .arg("generation", generation),
        None => Message::new("note.not_observed").arg("generation", generation),
    };
    let revision_note: Arg = match crate::chain::revision_of(meta) {
        Some(r) => Message::new("note.lone_rs_revision")
            .arg("revision", r)
            .into(),
        None => Arg::from(""),
    };
    StepState {
        step: Step::ReplicaSet,
        reached: crate::chain::generation_observed(meta.generation, observed),
        at: facts::spec_write_time(meta, None).or(created(meta)),
        note: Message::new("note.lone_rs")
            .arg("observed", observed_note)
            .arg("revision", revision_note),
        unread: None,
        restarted: 0,
    }
}

/// The kinds a step is read from, the first that a gap hides named.
fn stands_on(step: Step) -> &'static [&'static str] {
    match step {
        Step::Declared | Step::Observed => &["modelservices", "apis"],
        // KServe's Knative mode: the predictor's Deployments are found
        // through its Knative Service.
        Step::Deployment => &["deployments", "services.serving.knative.dev"],
        Step::ReplicaSet => &["replicasets"],
        Step::StatefulSet => &["statefulsets", "controllerrevisions"],
        Step::DaemonSet => &["daemonsets", "controllerrevisions"],
        Step::Job => &["jobs"],
        // Which Pods are current is read from their ReplicaSets.
        Step::Stored | Step::Bound | Step::Started | Step::Ready | Step::Completed => {
            &["pods", "replicasets"]
        }
        Step::Serving => &["endpointslices", "services", "pods", "replicasets"],
    }
}

/// A step not reached whose objects a gap hid (`unread`: the chain's
/// hidden kinds) is unknown, not missing: its note names the kind instead
/// of stating a fact read from an absence (`no ReplicaSet runs ...`).
pub fn mark_unread(steps: &mut [StepState], unread: &[(String, String)]) {
    for s in steps.iter_mut().filter(|s| !s.reached) {
        let hidden = stands_on(s.step)
            .iter()
            .find(|k| unread.iter().any(|(r, _)| r == *k));
        if let Some(kind) = hidden {
            s.unread = Some(kind.to_string());
            s.note = Message::new("note.unread").arg("resource", *kind);
            s.restarted = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: Step, reached: bool, note: Message) -> StepState {
        StepState::new(step, reached, None, note)
    }

    fn ladder() -> Vec<StepState> {
        vec![
            step(Step::Deployment, true, Message::new("note.observed")),
            step(Step::ReplicaSet, false, Message::new("note.no_replicaset")),
            step(Step::Stored, false, Message::new("note.pods")),
            step(Step::Serving, false, Message::new("note.endpoints")),
        ]
    }

    fn unread(kinds: &[&str]) -> Vec<(String, String)> {
        kinds
            .iter()
            .map(|k| (k.to_string(), "forbidden".to_string()))
            .collect()
    }

    #[test]
    fn a_step_whose_kind_was_not_read_is_unknown_and_says_which() {
        let mut steps = ladder();
        mark_unread(&mut steps, &unread(&["replicasets"]));
        let rs = &steps[1];
        assert_eq!(rs.unread.as_deref(), Some("replicasets"));
        assert_eq!(rs.note.en(), "replicasets not read");
        assert!(!rs.note.en().contains("no ReplicaSet"));
        // Which Pods are current is read from the ReplicaSets too.
        assert_eq!(steps[2].unread.as_deref(), Some("replicasets"));
        // A reached step keeps what was read.
        assert_eq!(steps[0].unread, None);
        assert_eq!(steps[0].note.id, "note.observed");
    }

    #[test]
    fn read_replica_sets_with_none_for_the_template_still_say_so() {
        let mut steps = ladder();
        // Only the EndpointSlices were hidden.
        mark_unread(&mut steps, &unread(&["endpointslices"]));
        assert_eq!(steps[1].unread, None);
        assert_eq!(
            steps[1].note.en(),
            "no ReplicaSet runs the current template"
        );
        assert_eq!(steps[2].unread, None);
        assert_eq!(steps[3].unread.as_deref(), Some("endpointslices"));
        assert_eq!(steps[3].note.en(), "endpointslices not read");
        // Nothing hidden: nothing unknown.
        let mut read = ladder();
        mark_unread(&mut read, &[]);
        assert_eq!(read, ladder());
    }
}
