//! A LeaderWorkerSet's groups as they stand. A group serves only when all
//! its Pods are Ready: a model split over a leader and its workers answers
//! nothing while one of them is down, whatever the others' endpoints say
//! (the headless Service publishes not-ready addresses, so its slices call
//! every Pod with an IP ready). So a grouped chain counts groups, not Pods.

use std::collections::HashMap;

use super::ladder::PodState;
use crate::chain::Chain;

/// One group: its leader's name and revision, and its Pods' states.
#[derive(Debug, Clone)]
pub struct GroupState<'p> {
    /// The leader Pod's name, as LWS names the group.
    pub name: String,
    /// The leader's revision.
    pub revision: Option<i64>,
    /// Every Pod of it is on its set's update revision.
    pub current: bool,
    /// The leader is being deleted (LWS recreates a group from its leader).
    pub terminating: bool,
    /// Its Pods, leader first, terminating ones left out.
    pub members: Vec<&'p PodState>,
    /// How many Pods it has when whole.
    pub size: i32,
}

impl GroupState<'_> {
    /// All its Pods exist and are Ready.
    pub fn ready(&self) -> bool {
        self.members.len() as i32 >= self.size
            && self.members.iter().all(|p| p.moments.ready.reached)
    }

    /// Ready, and every Pod of it has a serving endpoint.
    pub fn serving(&self) -> bool {
        self.ready() && self.members.iter().all(|p| p.serving)
    }

    /// Its Pods that are not Ready.
    pub fn not_ready(&self) -> impl Iterator<Item = &PodState> {
        self.members
            .iter()
            .copied()
            .filter(|p| !p.moments.ready.reached)
    }
}

/// The chain's groups in its order, each with its Pods' states.
pub fn group_states<'p>(chain: &Chain, pods: &'p [PodState]) -> Vec<GroupState<'p>> {
    let by_uid: HashMap<&str, &PodState> = pods.iter().map(|p| (p.uid.as_str(), p)).collect();
    chain
        .groups
        .iter()
        .map(|g| {
            let members: Vec<&PodState> = chain
                .pods
                .iter()
                .filter(|cp| g.holds(cp.pod))
                .filter_map(|cp| by_uid.get(cp.pod.metadata.uid.as_deref().unwrap_or("")))
                .copied()
                .filter(|p| !p.terminating)
                .collect();
            let leader = by_uid
                .get(g.leader.metadata.uid.as_deref().unwrap_or(""))
                .copied();
            GroupState {
                name: g.name().to_string(),
                revision: leader.and_then(|l| l.revision),
                current: leader.is_some_and(|l| l.current) && members.iter().all(|p| p.current),
                terminating: leader.is_none_or(|l| l.terminating),
                members,
                size: g.size,
            }
        })
        .collect()
}
