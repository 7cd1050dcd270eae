//! One namespace read in parts for triage: a namespace
//! of 10,000 Pods is judged a shard at a time, so what is held is one
//! shard's Pods and Events, not the namespace's.
//!
//! First the namespace's small kinds (everything the plan lists but Pods
//! and Events: the skeleton). Their ReplicaSets, StatefulSets and
//! DaemonSets say about how many Pods there are; when they fit
//! [`PODS_PER_SHARD`], Pods and Events are listed once and the namespace is
//! judged whole, as before. Otherwise it is split into shards
//! ([`mdiag_core::chain::shard`]): a first pass over the Pods and Events notes
//! each Pod (its UID, its shard, the Services that select it), keeps the
//! first shard's, and adds to the skeleton what every shard holds (Pods no
//! controller owns, Events about anything but a Pod). Every further shard
//! lists the Pods and Events again and keeps its own, page by page, boxed
//! as they land. One skeleton serves every part: a shard's Pods and Events
//! are appended to it while the shard is judged, and cut off after.

use std::sync::Mutex;

use k8s_openapi::api::core::v1::Event as CoreEvent;

use super::read::{keep_events_about_read_objects, read_lists_wanted, typed_path};
use super::*;
use mdiag_core::chain::shard::{Part, Place, PodFacts, Shards};
use mdiag_core::model::EventRecord;

/// About how many Pods one shard holds.
pub const PODS_PER_SHARD: usize = 2_000;

/// A namespace being read in parts; [`NamespaceParts::judge_each`] reads
/// and hands over each part in turn.
pub struct NamespaceParts<'c> {
    conn: &'c Connection,
    namespace: String,
    /// The small kinds, with what every shard holds once it is known.
    skeleton: Snapshot,
    shards: Shards,
    facts: PodFacts,
    plan: Vec<Part>,
    /// The first shard's own Pods and Events, kept by the first pass.
    first: (Vec<Pod>, Vec<EventRecord>),
    /// What lists each shard's own Pods, from the first pass.
    shard_pods: Vec<ShardPods>,
    /// The namespace's own objects read (not the shared ones).
    objects: usize,
}

/// Reads the skeleton of `namespace` and, when it is too big for one
/// part, makes the first pass over its Pods and Events.
pub async fn read_namespace_in_parts<'c>(
    conn: &'c Connection,
    common: &Common,
    namespace: &str,
    model_service_selector: Option<&str>,
    pods_per_shard: usize,
) -> Result<NamespaceParts<'c>, LiveError> {
    let not_pods_or_events = |r: &str| r != "pods" && r != "events";
    let mut skeleton = read_lists_wanted(
        conn,
        common,
        Some(namespace),
        model_service_selector,
        &not_pods_or_events,
    )
    .await?;
    // A triage judges and never writes back: its Pod templates and
    // Deployments' field owners lose what no rule reads, as its Pods do as
    // they land ([`triaged`]).
    crate::plan::trim_judged(&mut skeleton.objects);
    let count = estimated_pods(&skeleton.objects)
        .div_ceil(pods_per_shard.max(1))
        .max(1);
    let mut parts = NamespaceParts {
        conn,
        namespace: namespace.to_string(),
        objects: skeleton.objects.len().saturating_sub(common.object_count()),
        facts: PodFacts::new(&skeleton.objects),
        shards: Shards::new(&skeleton.objects, count),
        skeleton,
        plan: vec![Part::Whole],
        first: (Vec::new(), Vec::new()),
        shard_pods: vec![ShardPods::default(); count],
    };
    if count == 1 {
        return Ok(parts);
    }
    // The first pass: every Pod noted, the first shard's kept.
    let facts = Mutex::new(std::mem::take(&mut parts.facts));
    let shard_pods = Mutex::new(std::mem::take(&mut parts.shard_pods));
    let shards = &parts.shards;
    let keep_first = |mut p: Pod| {
        if !triaged(&mut p) {
            return None;
        }
        let place = shards.of_pod(&p);
        facts.lock().expect("not poisoned").note(&p, place);
        if let Place::One(k) = place
            && let Some(s) = shard_pods.lock().expect("not poisoned").get_mut(k)
        {
            s.note(&p);
        }
        place.in_shard(0).then_some((p, place))
    };
    let listed = conn
        .list_pages_into(
            &typed_path::<Pod>(Some(namespace)),
            &ListParams::default(),
            &keep_first,
        )
        .await;
    parts.facts = facts.into_inner().expect("not poisoned");
    parts.shard_pods = shard_pods.into_inner().expect("not poisoned");
    // Without the Pods nothing can be split: the namespace whole, with
    // the gap, as before.
    let Ok(pods) = listed else {
        return Ok(parts);
    };
    parts.objects += parts.facts.uids.len();
    let events = parts.events_where(|place| place.in_shard(0)).await;
    let mut c = Collector {
        conn,
        gaps: parts.skeleton.gaps.clone(),
        fatal: None,
    };
    let events = c.take(events, "events", Some(namespace), "list", None);
    parts.objects += events.len();
    let o = &mut parts.skeleton.objects;
    for (pod, place) in pods {
        if place == Place::Every {
            o.pods.push(pod);
        } else {
            parts.first.0.push(pod);
        }
    }
    for (event, place) in events {
        if place == Place::Every {
            o.events.push(event);
        } else {
            parts.first.1.push(event);
        }
    }
    if c.gaps.is_empty() {
        keep_events_about_read_objects(o);
    }
    parts.skeleton.gaps = c.gaps;
    parts.plan = (0..count).map(Part::Shard).collect();
    parts.plan.push(Part::Rest);
    Ok(parts)
}

/// The Pods the skeleton's controllers say they have.
fn estimated_pods(o: &mdiag_core::model::Objects) -> usize {
    let replica_sets: i32 = o
        .replica_sets
        .iter()
        .filter_map(|r| r.status.as_ref())
        .map(|s| s.replicas)
        .sum();
    let stateful_sets: i32 = o
        .stateful_sets
        .iter()
        .filter_map(|s| s.status.as_ref())
        .map(|s| s.replicas)
        .sum();
    let daemon_sets: i32 = o
        .daemon_sets
        .iter()
        .filter_map(|d| d.status.as_ref())
        .map(|s| s.current_number_scheduled + s.number_misscheduled)
        .sum();
    usize::try_from(replica_sets.max(0) + stateful_sets.max(0) + daemon_sets.max(0)).unwrap_or(0)
}

impl NamespaceParts<'_> {
    /// Reads each part in turn and hands it to `judge` with how the
    /// namespace is split; returns the namespace's own objects read. A
    /// part's failed list is a gap in its snapshot, not an error.
    pub async fn judge_each(
        mut self,
        mut judge: impl FnMut(Part, &Snapshot, (&Shards, &PodFacts)),
    ) -> Result<usize, LiveError> {
        for part in std::mem::take(&mut self.plan) {
            let (pods, events) = match part {
                Part::Whole => self.read_rest_whole().await,
                Part::Shard(0) => {
                    let (pods, events) = std::mem::take(&mut self.first);
                    (Ok(pods), Ok(events))
                }
                Part::Shard(k) => {
                    let (pods, events) = tokio::join!(
                        self.shard_pods(k),
                        self.events_where(|place| place == Place::One(k))
                    );
                    let events = events.map(|e| e.into_iter().map(|(e, _)| e).collect::<Vec<_>>());
                    if let Ok(events) = &events {
                        self.objects += events.len();
                    }
                    (pods, events)
                }
                Part::Rest => (Ok(Vec::new()), Ok(Vec::new())),
            };
            if part == Part::Whole
                && let Ok(p) = &pods
            {
                self.objects += p.len() + events.as_ref().map_or(0, Vec::len);
            }
            // The part's own objects go after the skeleton's, and are cut
            // off once it is judged.
            let (pods_before, events_before) = (
                self.skeleton.objects.pods.len(),
                self.skeleton.objects.events.len(),
            );
            let gaps_before = self.skeleton.gaps.clone();
            let mut c = Collector {
                conn: self.conn,
                gaps: self.skeleton.gaps.clone(),
                fatal: None,
            };
            let ns = Some(self.namespace.as_str());
            let pods = c.take(pods, "pods", ns, "list", None);
            let mut events = c.take(events, "events", ns, "list", None);
            if let Some(fatal) = c.fatal.take() {
                return Err(fatal);
            }
            if c.gaps.is_empty() && part != Part::Whole {
                // What the namespace read keeps: Events about a Pod read.
                events.retain(|e| {
                    let uid = e.subject().uid;
                    uid.is_empty() || self.facts.uids.contains(&uid)
                });
            }
            let o = &mut self.skeleton.objects;
            o.pods.extend(pods);
            o.events.extend(events);
            if part == Part::Whole && c.gaps.is_empty() {
                keep_events_about_read_objects(o);
            }
            self.skeleton.gaps = c.gaps;
            judge(part, &self.skeleton, (&self.shards, &self.facts));
            let o = &mut self.skeleton.objects;
            o.pods.truncate(pods_before);
            o.events.truncate(events_before);
            o.pods.shrink_to_fit();
            o.events.shrink_to_fit();
            self.skeleton.gaps = gaps_before;
        }
        Ok(self.objects)
    }

    /// Shard `k`'s own Pods: listed by the labels their controllers gave
    /// them ([`ShardPods`]) when the first pass could name them all that
    /// way, else the namespace's Pods listed again and the shard's kept.
    async fn shard_pods(&self, k: usize) -> Result<Vec<Pod>, kube::Error> {
        let shards = &self.shards;
        let keep =
            |mut p: Pod| (triaged(&mut p) && shards.of_pod(&p) == Place::One(k)).then_some(p);
        let path = typed_path::<Pod>(Some(&self.namespace));
        let Some(selectors) = self.shard_pods.get(k).and_then(ShardPods::selectors) else {
            return self
                .conn
                .list_pages_into(&path, &ListParams::default(), &keep)
                .await;
        };
        let mut pods: Vec<Pod> = Vec::new();
        for selector in selectors {
            let params = ListParams::default().labels(&selector);
            for pod in self.conn.list_pages_into(&path, &params, &keep).await? {
                // A Pod with two of the labels is listed twice.
                if !pods.iter().any(|p| p.metadata.uid == pod.metadata.uid) {
                    pods.push(pod);
                }
            }
        }
        Ok(pods)
    }

    /// Every Pod and Event of a namespace that fits one part.
    async fn read_rest_whole(
        &self,
    ) -> (
        Result<Vec<Pod>, kube::Error>,
        Result<Vec<EventRecord>, kube::Error>,
    ) {
        let path = typed_path::<Pod>(Some(&self.namespace));
        let events_path = typed_path::<CoreEvent>(Some(&self.namespace));
        let all = ListParams::default();
        let keep_pod = |p: &mut Pod| triaged(p);
        let take_event = |mut e: CoreEvent| e.keep().then(|| brief(e));
        tokio::join!(
            self.conn.list_pages(&path, &all, &keep_pod),
            self.conn.list_pages_into(&events_path, &all, &take_event),
        )
    }

    /// The Events whose place `wanted` keeps, boxed as they land.
    async fn events_where(
        &self,
        wanted: impl Fn(Place) -> bool + Sync,
    ) -> Result<Vec<(EventRecord, Place)>, kube::Error> {
        let take = |mut e: CoreEvent| {
            if !e.keep() {
                return None;
            }
            let r = &e.involved_object;
            let place = Shards::of_subject(
                r.kind.as_deref().unwrap_or(""),
                r.namespace.as_deref().unwrap_or(""),
                r.name.as_deref().unwrap_or(""),
                &self.facts,
            )?;
            wanted(place).then(|| (brief(e), place))
        };
        self.conn
            .list_pages_into(
                &typed_path::<CoreEvent>(Some(&self.namespace)),
                &ListParams::default(),
                &take,
            )
            .await
    }
}

/// The labels a Pod's controller gives it and no other controller's
/// Pods share by design: a ReplicaSet's template hash, a StatefulSet's or
/// DaemonSet's revision, a Job's UID.
const POD_SET_LABELS: [&str; 3] = [
    "pod-template-hash",
    "controller-revision-hash",
    "batch.kubernetes.io/controller-uid",
];

/// Values past which a shard's Pods are listed with the namespace's again:
/// a selector that long is a URL of several kilobytes.
const MAX_SELECTOR_VALUES: usize = 300;

/// What lists one shard's own Pods instead of the namespace's again: the
/// values of [`POD_SET_LABELS`] its Pods carried in the first pass. A Pod
/// of the shard with none of them (a controller of another kind) means the
/// shard lists the namespace's Pods, as before.
#[derive(Debug, Clone, Default)]
struct ShardPods {
    values: [std::collections::BTreeSet<String>; 3],
    unlabelled: bool,
}

impl ShardPods {
    fn note(&mut self, pod: &Pod) {
        let labels = pod.metadata.labels.as_ref();
        let found = POD_SET_LABELS
            .iter()
            .enumerate()
            .find_map(|(i, key)| Some((i, labels?.get(*key)?)));
        match found {
            Some((i, value)) => {
                self.values[i].insert(value.clone());
            }
            None => self.unlabelled = true,
        }
    }

    /// One `key in (...)` selector per label some Pod carried; `None` when
    /// a Pod carried none, or there are too many values.
    fn selectors(&self) -> Option<Vec<String>> {
        let total: usize = self.values.iter().map(|v| v.len()).sum();
        if self.unlabelled || total > MAX_SELECTOR_VALUES {
            return None;
        }
        let selectors = POD_SET_LABELS
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| !v.is_empty())
            .map(|(key, v)| {
                let list: Vec<&str> = v.iter().map(String::as_str).collect();
                format!("{key} in ({})", list.join(","))
            })
            .collect();
        Some(selectors)
    }
}

/// A Pod as a triage holds it: trimmed as every read trims it, and
/// without what no rule reads of its spec
/// ([`crate::plan::UNREAD_POD_SPEC_FIELDS`]).
fn triaged(pod: &mut Pod) -> bool {
    if let Some(spec) = pod.spec.as_mut() {
        crate::plan::trim_unread_pod_spec(spec);
    }
    pod.keep()
}

/// Triage holds the Events of a namespace (or of a shard) at once and
/// writes none back: each is kept as what the analysis reads of it.
fn brief(event: CoreEvent) -> EventRecord {
    EventRecord::Core(Box::new(event)).brief()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(labels: &[(&str, &str)]) -> Pod {
        let mut p = Pod::default();
        p.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        p
    }

    #[test]
    fn a_shards_pods_are_listed_by_their_controllers_labels() {
        let mut s = ShardPods::default();
        s.note(&pod(&[("app", "web"), ("pod-template-hash", "7d9f")]));
        s.note(&pod(&[("pod-template-hash", "5c4b")]));
        s.note(&pod(&[("pod-template-hash", "7d9f")]));
        s.note(&pod(&[("controller-revision-hash", "db-6f7")]));
        assert_eq!(
            s.selectors().unwrap(),
            [
                "pod-template-hash in (5c4b,7d9f)",
                "controller-revision-hash in (db-6f7)"
            ]
        );
        // A shard with no Pod lists nothing.
        assert_eq!(
            ShardPods::default().selectors().unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_pod_no_label_names_or_too_many_values_list_the_namespace_again() {
        let mut s = ShardPods::default();
        s.note(&pod(&[("pod-template-hash", "7d9f")]));
        s.note(&pod(&[("app", "owned-by-a-custom-controller")]));
        assert_eq!(s.selectors(), None);
        let mut many = ShardPods::default();
        for i in 0..=MAX_SELECTOR_VALUES {
            many.note(&pod(&[("pod-template-hash", &format!("h{i}"))]));
        }
        assert_eq!(many.selectors(), None);
    }
}
