//! One namespace judged in shards: a namespace of 10,000
//! Pods need not be held whole to be triaged. Every Pod and Event of a
//! workload lands in the same shard, so each shard holds what its
//! workloads' chains walk and gives the diagnoses the whole namespace gives.
//!
//! A shard is the namespace's small kinds (the "skeleton": workloads,
//! ReplicaSets, ControllerRevisions, Services, slices, HPAs, PDBs, Nodes),
//! the Pods whose root workload hashes to it, and the Events about those
//! Pods and about everything else. The root of a Pod is the owner its
//! controller reference leads to through a ReplicaSet to its Deployment (a
//! Deployment's chain walks its ReplicaSets by owner). A Pod a workload may
//! adopt by selector (no controller reference) goes in every shard. What no
//! shard judges (a Pod nobody owns, a ModelService with no Deployment, the
//! objects outside every workload) is judged last in the rest, with what
//! the shards covered; the facts that need every Pod of the namespace (the
//! Pod UIDs endpoints are checked against, the Pods a lone Service selects)
//! are gathered as the Pods stream by ([`PodFacts`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use k8s_openapi::api::core::v1::Pod;

use super::{Chain, controller_ref, map_selector_matches, name, ns_of, uid};
use crate::model::{EventRecord, Objects, Snapshot, TargetKind};

/// Where a Pod or an Event goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    One(usize),
    Every,
}

impl Place {
    /// Whether shard `k` holds it.
    pub fn in_shard(self, k: usize) -> bool {
        match self {
            Place::One(i) => i == k,
            Place::Every => true,
        }
    }
}

/// Which part of a namespace judged in shards a snapshot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The namespace whole (it fits one shard).
    Whole,
    Shard(usize),
    /// What no shard judges: Pods nobody owns, ModelServices with no
    /// Deployment, what fails outside every workload.
    Rest,
}

/// How a namespace's Pods and Events are split, from its skeleton.
#[derive(Debug, Clone)]
pub struct Shards {
    count: usize,
    /// A ReplicaSet's UID -> its Deployment's or Rollout's (when exactly
    /// one of the skeleton's owns it); a Job's -> its CronJob's; a
    /// LeaderWorkerSet's StatefulSets' -> its own.
    replica_set_root: HashMap<String, String>,
}

impl Shards {
    /// `count` shards (at least one) of the namespace whose small kinds
    /// `skeleton` holds.
    pub fn new(skeleton: &Objects, count: usize) -> Shards {
        // A Rollout owns its ReplicaSets as a Deployment does.
        let deployments: HashSet<&str> = skeleton
            .deployments
            .iter()
            .map(|d| uid(&d.metadata))
            .chain(skeleton.rollouts.iter().map(|r| uid(&r.object().metadata)))
            .filter(|u| !u.is_empty())
            .collect();
        // A Knative Revision's Deployment (and so its ReplicaSets and Pods)
        // goes where its Knative Service does: the Service walks every
        // Revision's.
        let knative_root: HashMap<&str, &str> = skeleton
            .deployments
            .iter()
            .filter_map(|d| {
                let ksvc = skeleton
                    .knative_services
                    .iter()
                    .map(|k| uid(&k.metadata))
                    .find(|k| super::knative::runs_revision_of(&d.metadata, k))?;
                Some((uid(&d.metadata), ksvc))
            })
            .collect();
        let mut replica_set_root = HashMap::new();
        for rs in &skeleton.replica_sets {
            let owners: BTreeSet<&str> = rs
                .metadata
                .owner_references
                .iter()
                .flatten()
                .map(|o| o.uid.as_str())
                .filter(|u| deployments.contains(u))
                .collect();
            if let [only] = owners.into_iter().collect::<Vec<_>>()[..] {
                let root = knative_root.get(only).copied().unwrap_or(only);
                replica_set_root.insert(uid(&rs.metadata).to_string(), root.to_string());
            }
        }
        // A LeaderWorkerSet's sets (and so their Pods) go where it does: its
        // leader set is its own, and each worker set is its leader Pod's,
        // which is read only later, so the worker set is known by the
        // label LWS puts on it.
        let lws = super::groups::lws_by_name(skeleton);
        for set in &skeleton.stateful_sets {
            if let Some(root) = super::groups::lws_of_set(&lws, set) {
                replica_set_root.insert(uid(&set.metadata).to_string(), root.to_string());
            }
        }
        // A CronJob's Jobs (and so their Pods) go where the CronJob does:
        // its chain walks its last Job's Pods.
        let cron_jobs: HashSet<&str> = skeleton
            .cron_jobs
            .iter()
            .map(|c| uid(&c.metadata))
            .filter(|u| !u.is_empty())
            .collect();
        for job in &skeleton.jobs {
            if let Some(c) =
                controller_ref(&job.metadata).filter(|c| cron_jobs.contains(c.uid.as_str()))
            {
                replica_set_root.insert(uid(&job.metadata).to_string(), c.uid.clone());
            }
        }
        Shards {
            count: count.max(1),
            replica_set_root,
        }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// The shard of a root workload's UID: a stable hash, so the same
    /// skeleton splits the same way on every pass.
    fn slot(&self, root: &str) -> usize {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        root.hash(&mut h);
        (h.finish() % self.count as u64) as usize
    }

    fn root<'u>(&'u self, owner_uid: &'u str) -> &'u str {
        self.replica_set_root
            .get(owner_uid)
            .map_or(owner_uid, String::as_str)
    }

    /// A Pod's shard: its controller's root; every shard when no
    /// controller owns it (a workload may adopt it by selector) or when it
    /// names owners of more than one root.
    pub fn of_pod(&self, pod: &Pod) -> Place {
        let Some(controller) = controller_ref(&pod.metadata) else {
            return Place::Every;
        };
        let root = self.root(&controller.uid);
        let one_root = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .all(|o| self.root(&o.uid) == root);
        if one_root {
            Place::One(self.slot(root))
        } else {
            Place::Every
        }
    }

    /// The shard that judges a walked chain; `None` for the rest (a Pod
    /// target, a ModelService with no Deployment).
    pub fn of_chain(&self, chain: &Chain) -> Option<usize> {
        if chain.target.kind == TargetKind::Pod {
            return None;
        }
        // Knative Revisions' Pods go where their Knative Service does,
        // the predictor's of an InferenceService too.
        let root = chain
            .knative_service
            .or(chain.platform.filter(|_| chain.serves_in_groups()))
            .map(|p| uid(&p.object.metadata))
            .or_else(|| chain.deployment.map(|d| uid(&d.metadata)))
            .or_else(|| chain.pod_set.map(|s| uid(s.meta())))
            .or_else(|| chain.lone_replica_set().map(|r| uid(&r.metadata)))
            .or_else(|| {
                let run = chain.job.as_ref()?;
                let root = run.cron_job.map(|c| uid(&c.metadata));
                root.or(run.job.map(|j| self.root(uid(&j.metadata))))
            })?;
        (!root.is_empty()).then(|| self.slot(root))
    }

    /// An Event's shard: its Pod's, or every shard for an Event about
    /// anything else; `None` for an Event about a Pod that was not read.
    pub fn of_event(&self, event: &EventRecord, facts: &PodFacts) -> Option<Place> {
        let subject = event.subject();
        Self::of_subject(&subject.kind, &subject.namespace, &subject.name, facts)
    }

    /// [`Shards::of_event`] of an Event about `kind` `namespace/name`.
    pub fn of_subject(kind: &str, namespace: &str, name: &str, facts: &PodFacts) -> Option<Place> {
        if kind == "Pod" {
            facts
                .place_by_name
                .get(&(namespace.to_string(), name.to_string()))
                .copied()
        } else {
            Some(Place::Every)
        }
    }
}

/// How many Pods a lone Service selects, and the first of them.
#[derive(Debug, Clone, Default)]
pub struct Selected {
    pub first: Option<String>,
    uids: HashSet<String>,
}

impl Selected {
    pub fn count(&self) -> usize {
        self.uids.len()
    }
}

/// A Service as [`PodFacts`] tests Pods against it.
#[derive(Debug)]
struct SelectingService {
    namespace: String,
    name: String,
    selector: std::collections::BTreeMap<String, String>,
}

/// What needs every Pod of the namespace, gathered as they stream by (each
/// Pod noted once, so a list restarted from its first page notes nothing
/// twice).
#[derive(Debug, Default)]
pub struct PodFacts {
    /// Every Pod UID (a slice's endpoint naming none of them is stale).
    pub uids: HashSet<String>,
    /// By namespace and name.
    place_by_name: HashMap<(String, String), Place>,
    /// By Service namespace and name: what its selector selects.
    selected: HashMap<(String, String), Selected>,
    /// The Services by one pair of their selector, to test a Pod against
    /// only those that may select it: each one's namespace, name and
    /// whole selector (not a second copy of the Service).
    services_by_pair: HashMap<(String, String), Vec<SelectingService>>,
}

impl PodFacts {
    pub fn new(skeleton: &Objects) -> PodFacts {
        let mut services_by_pair: HashMap<(String, String), Vec<SelectingService>> = HashMap::new();
        for s in &skeleton.services {
            let selector = s.spec.as_ref().and_then(|spec| spec.selector.as_ref());
            if let Some(selector) = selector
                && let Some((k, v)) = selector.iter().next()
            {
                services_by_pair
                    .entry((k.clone(), v.clone()))
                    .or_default()
                    .push(SelectingService {
                        namespace: ns_of(&s.metadata).to_string(),
                        name: name(&s.metadata).to_string(),
                        selector: selector.clone(),
                    });
            }
        }
        PodFacts {
            services_by_pair,
            ..PodFacts::default()
        }
    }

    /// Notes one Pod, in list order.
    pub fn note(&mut self, pod: &Pod, place: Place) {
        let pod_uid = uid(&pod.metadata).to_string();
        if !pod_uid.is_empty() {
            self.uids.insert(pod_uid.clone());
        }
        let ns = ns_of(&pod.metadata);
        self.place_by_name
            .insert((ns.to_string(), name(&pod.metadata).to_string()), place);
        let labels = pod.metadata.labels.as_ref();
        for (k, v) in labels.into_iter().flatten() {
            let Some(services) = self.services_by_pair.get(&(k.clone(), v.clone())) else {
                continue;
            };
            for s in services {
                if s.namespace == ns && map_selector_matches(&s.selector, labels) {
                    let entry = self
                        .selected
                        .entry((ns.to_string(), s.name.clone()))
                        .or_default();
                    entry
                        .first
                        .get_or_insert_with(|| name(&pod.metadata).to_string());
                    entry.uids.insert(pod_uid.clone());
                }
            }
        }
    }

    /// What the Service `namespace/service` selects (`None`: no Pod).
    pub fn selected_by(&self, namespace: &str, service: &str) -> Option<&Selected> {
        self.selected
            .get(&(namespace.to_string(), service.to_string()))
    }
}

/// A snapshot of one namespace split the way a sharded read splits it: the
/// shards, the facts, each shard's snapshot and the rest's. For the tests
/// that hold the split to the whole, and for a file read in shards.
pub fn split(snapshot: &Snapshot, count: usize) -> (Shards, PodFacts, Vec<Snapshot>, Snapshot) {
    let mut skeleton = snapshot.clone();
    skeleton.objects.pods.clear();
    skeleton.objects.events.clear();
    let shards = Shards::new(&skeleton.objects, count);
    let mut facts = PodFacts::new(&skeleton.objects);
    let places: Vec<Place> = snapshot
        .objects
        .pods
        .iter()
        .map(|p| {
            let place = shards.of_pod(p);
            facts.note(p, place);
            place
        })
        .collect();
    // As a read in parts lays them out: what every shard holds first,
    // then the shard's own, each in list order.
    let piece = |own: Option<usize>| {
        let mut s = skeleton.clone();
        let wanted = |place: Place| place == Place::Every;
        let mine = |place: Place| own.is_some_and(|k| place == Place::One(k));
        for keep in [&wanted as &dyn Fn(Place) -> bool, &mine] {
            s.objects.pods.extend(
                snapshot
                    .objects
                    .pods
                    .iter()
                    .zip(&places)
                    .filter(|(_, place)| keep(**place))
                    .map(|(p, _)| p.clone()),
            );
            s.objects.events.extend(
                snapshot
                    .objects
                    .events
                    .iter()
                    .filter(|e| shards.of_event(e, &facts).is_some_and(keep))
                    .cloned(),
            );
        }
        s
    };
    let pieces = (0..shards.count()).map(|k| piece(Some(k))).collect();
    let rest = piece(None);
    (shards, facts, pieces, rest)
}
