//! One namespace read in parts for triage (issue 16 item 3): a namespace
//! of 10,000 Pods is judged a shard at a time, so what is held is one
//! shard's Pods and Events, not the namespace's.
//!
//! First the namespace's small kinds (everything the plan lists but Pods
//! and Events: the skeleton). Their ReplicaSets, StatefulSets and
//! DaemonSets say about how many Pods there are; when they fit
//! [`PODS_PER_SHARD`], Pods and Events are listed once and the namespace is
//! judged whole, as before. Otherwise it is split into shards
//! ([`crate::chain::shard`]): a first pass over the Pods notes each one
//! (its UID, its shard, the Services that select it) and keeps the first
//! shard's; every further shard lists the Pods and Events again and keeps
//! its own, page by page. Every pass costs a list of the namespace's Pods
//! and Events; the memory is the skeleton plus one shard.

use std::sync::Mutex;

use k8s_openapi::api::core::v1::Event as CoreEvent;

use super::read::{keep_events_about_read_objects, read_lists_wanted, typed_path};
use super::*;
use crate::chain::shard::{Part, Place, PodFacts, Shards};

/// About how many Pods one shard holds: with their Events (five or six
/// each in a busy namespace) about 100 MB less than holding 10,000.
pub const PODS_PER_SHARD: usize = 2_000;

/// A namespace being read in parts; [`NamespaceParts::next`] reads the next.
pub struct NamespaceParts<'c> {
    conn: &'c Connection,
    namespace: String,
    skeleton: Snapshot,
    shards: Shards,
    facts: PodFacts,
    parts: std::vec::IntoIter<Part>,
    /// The namespace whole, when it fits one shard.
    whole: Option<Snapshot>,
    /// The first shard's Pods and Events, kept by the first pass.
    first: Option<(Vec<Pod>, Vec<CoreEvent>)>,
    /// The Pods and Events every shard holds, for the rest.
    every: (Vec<Pod>, Vec<CoreEvent>),
    /// The namespace's own objects read (not the shared ones).
    objects: usize,
}

/// Reads the skeleton of `namespace` and plans its parts.
pub async fn read_namespace_in_parts<'c>(
    conn: &'c Connection,
    common: &Common,
    namespace: &str,
    model_service_selector: Option<&str>,
    pods_per_shard: usize,
) -> Result<NamespaceParts<'c>, LiveError> {
    let not_pods_or_events = |r: &str| r != "pods" && r != "events";
    let skeleton = read_lists_wanted(
        conn,
        common,
        Some(namespace),
        model_service_selector,
        &not_pods_or_events,
    )
    .await?;
    let count = estimated_pods(&skeleton.objects)
        .div_ceil(pods_per_shard.max(1))
        .max(1);
    let shards = Shards::new(&skeleton.objects, count);
    let mut parts = NamespaceParts {
        conn,
        namespace: namespace.to_string(),
        objects: skeleton.objects.len().saturating_sub(common.object_count()),
        facts: PodFacts::new(&skeleton.objects),
        skeleton,
        shards,
        parts: Vec::new().into_iter(),
        whole: None,
        first: None,
        every: (Vec::new(), Vec::new()),
    };
    if count == 1 {
        let whole = parts.read_whole().await?;
        parts.objects += whole.objects.len() - parts.skeleton.objects.len();
        parts.whole = Some(whole);
        parts.parts = vec![Part::Whole].into_iter();
        return Ok(parts);
    }
    // The first pass: every Pod noted, the first shard's kept.
    let facts = Mutex::new(std::mem::take(&mut parts.facts));
    let shards = &parts.shards;
    let keep_first = |p: &mut Pod| {
        if !p.keep() {
            return false;
        }
        let place = shards.of_pod(p);
        facts.lock().expect("not poisoned").note(p, place);
        place.in_shard(0)
    };
    let listed = conn
        .list_pages(
            &typed_path::<Pod>(Some(namespace)),
            &ListParams::default(),
            &keep_first,
        )
        .await;
    parts.facts = facts.into_inner().expect("not poisoned");
    let pods = match listed {
        Ok(pods) => pods,
        // Without the Pods nothing can be split: the namespace whole, with
        // the gap, as before.
        Err(_) => {
            let whole = parts.read_whole().await?;
            parts.objects += whole.objects.len() - parts.skeleton.objects.len();
            parts.whole = Some(whole);
            parts.parts = vec![Part::Whole].into_iter();
            return Ok(parts);
        }
    };
    parts.objects += parts.facts.uids.len();
    parts.every.0 = pods
        .iter()
        .filter(|p| parts.shards.of_pod(p) == Place::Every)
        .cloned()
        .collect();
    let events = parts.events_of(0).await;
    if let Ok(events) = &events {
        parts.objects += events.len();
        parts.every.1 = events
            .iter()
            .filter(|e| parts.place_of(e) == Some(Place::Every))
            .cloned()
            .collect();
    }
    parts.first = Some((pods, events.unwrap_or_default()));
    let mut plan: Vec<Part> = (0..count).map(Part::Shard).collect();
    plan.push(Part::Rest);
    parts.parts = plan.into_iter();
    Ok(parts)
}

/// The Pods the skeleton's controllers say they have.
fn estimated_pods(o: &crate::model::Objects) -> usize {
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
    /// How the namespace is split, for judging its parts.
    pub fn split(&self) -> (&Shards, &PodFacts) {
        (&self.shards, &self.facts)
    }

    /// The namespace's own objects read so far.
    pub fn objects_read(&self) -> usize {
        self.objects
    }

    /// The next part and what it holds; `None` after the last.
    pub async fn next(&mut self) -> Option<Result<(Part, Snapshot), LiveError>> {
        let part = self.parts.next()?;
        let result = match part {
            Part::Whole => match self.whole.take() {
                Some(whole) => Ok(whole),
                None => return None,
            },
            Part::Shard(0) => {
                let (pods, events) = self.first.take().unwrap_or_default();
                self.assemble(Ok(pods), Ok(events))
            }
            Part::Shard(k) => {
                let shards = &self.shards;
                let keep = |p: &mut Pod| p.keep() && shards.of_pod(p).in_shard(k);
                let path = typed_path::<Pod>(Some(&self.namespace));
                let all = ListParams::default();
                let (pods, events) =
                    tokio::join!(self.conn.list_pages(&path, &all, &keep), self.events_of(k));
                if let Ok(events) = &events {
                    self.objects += events
                        .iter()
                        .filter(|e| self.place_of(e) != Some(Place::Every))
                        .count();
                }
                self.assemble(pods, events)
            }
            Part::Rest => {
                let (pods, events) = std::mem::take(&mut self.every);
                self.assemble(Ok(pods), Ok(events))
            }
        };
        Some(result.map(|snapshot| (part, snapshot)))
    }

    /// The namespace whole: the skeleton with every Pod and Event.
    async fn read_whole(&self) -> Result<Snapshot, LiveError> {
        let path = typed_path::<Pod>(Some(&self.namespace));
        let all = ListParams::default();
        let keep_pod = |p: &mut Pod| p.keep();
        let keep_event = |e: &mut CoreEvent| e.keep();
        let events_path = typed_path::<CoreEvent>(Some(&self.namespace));
        let (pods, events) = tokio::join!(
            self.conn.list_pages(&path, &all, &keep_pod),
            self.conn.list_pages(&events_path, &all, &keep_event),
        );
        self.assemble(pods, events)
    }

    /// The Events of shard `k` (with those every shard holds).
    async fn events_of(&self, k: usize) -> Result<Vec<CoreEvent>, kube::Error> {
        let keep = |e: &mut CoreEvent| e.keep() && self.place_of(e).is_some_and(|p| p.in_shard(k));
        self.conn
            .list_pages(
                &typed_path::<CoreEvent>(Some(&self.namespace)),
                &ListParams::default(),
                &keep,
            )
            .await
    }

    fn place_of(&self, e: &CoreEvent) -> Option<Place> {
        let r = &e.involved_object;
        Shards::of_subject(
            r.kind.as_deref().unwrap_or(""),
            r.namespace.as_deref().unwrap_or(""),
            r.name.as_deref().unwrap_or(""),
            &self.facts,
        )
    }

    /// The skeleton with these Pods and Events; a failed list is a gap.
    fn assemble(
        &self,
        pods: Result<Vec<Pod>, kube::Error>,
        events: Result<Vec<CoreEvent>, kube::Error>,
    ) -> Result<Snapshot, LiveError> {
        let mut c = Collector {
            conn: self.conn,
            gaps: self.skeleton.gaps.clone(),
            fatal: None,
        };
        let ns = Some(self.namespace.as_str());
        let mut snapshot = self.skeleton.clone();
        let o = &mut snapshot.objects;
        Pod::land(c.take(pods, "pods", ns, "list", None), o);
        CoreEvent::land(c.take(events, "events", ns, "list", None), o);
        if let Some(fatal) = c.fatal.take() {
            return Err(fatal);
        }
        if c.gaps.is_empty() {
            keep_events_about_read_objects(o);
        }
        snapshot.gaps = c.gaps;
        Ok(snapshot)
    }
}
