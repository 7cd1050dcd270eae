//! Triage: every workload of a snapshot judged, and ranked worst first.
//! Pure like the rest of the analysis.

use jiff::Timestamp;

use super::outside::{self, Covered, Outside};
use super::{Analyzer, Diagnosis, State};
use crate::catalogue::Severity;
use crate::chain::shard::{Part, PodFacts, Shards};
use crate::chain::{ControllerLocation, Index, label_selector_matches, workloads};
use crate::model::{Gap, LabelFilter, OriginKind, Snapshot, TargetKind, TargetSpec};

/// Orders diagnoses worst first, by [`rank_key`].
pub fn rank(items: &mut [Diagnosis]) {
    items.sort_by_key(|d| rank_key(Row::Workload(d)));
}

/// A triage: the workloads judged, and what fails outside all of them.
#[derive(Debug, Default)]
pub struct Triage {
    /// Worst first.
    pub items: Vec<Diagnosis>,
    /// Worst first.
    pub outside: Vec<Outside>,
    /// The objects outside every workload that were judged, with or
    /// without a row: Services, HPAs, PDBs. A file of only healthy ones
    /// is a triage with nothing failing, not one with nothing to judge.
    pub checked: Checked,
    /// The kubeconfig contexts a triage over several clusters read (each
    /// row names its own); empty for one cluster or a file.
    pub contexts: Vec<String>,
}

/// How many objects outside the workloads a triage judged, per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    pub services: usize,
    pub hpas: usize,
    pub pdbs: usize,
}

impl Checked {
    /// The lone objects of `snapshot` in scope: in the namespace, and
    /// with labels the filter keeps (as their rows are kept).
    pub fn of(
        snapshot: &Snapshot,
        namespace: Option<&str>,
        filter: Option<&LabelFilter>,
    ) -> Checked {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
        let no_labels = std::collections::BTreeMap::new();
        let wanted = |m: &ObjectMeta| {
            namespace.is_none_or(|ns| m.namespace.as_deref() == Some(ns))
                && filter.is_none_or(|f| f.matches(m.labels.as_ref().unwrap_or(&no_labels)))
        };
        let o = &snapshot.objects;
        Checked {
            services: o.services.iter().filter(|s| wanted(&s.metadata)).count(),
            hpas: o.hpas.iter().filter(|h| wanted(&h.metadata)).count(),
            pdbs: o.pdbs.iter().filter(|p| wanted(&p.metadata)).count(),
        }
    }

    pub fn add(&mut self, other: Checked) {
        self.services += other.services;
        self.hpas += other.hpas;
        self.pdbs += other.pdbs;
    }

    pub fn total(&self) -> usize {
        self.services + self.hpas + self.pdbs
    }
}

impl Triage {
    /// Both kinds of row, worst first, as one ranking.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let mut rows: Vec<Row> = self
            .items
            .iter()
            .map(Row::Workload)
            .chain(self.outside.iter().map(Row::Outside))
            .collect();
        rows.sort_by_key(|r| rank_key(*r));
        rows
    }

    /// Ranks both lists (after gathering them a namespace at a time).
    pub fn rank(&mut self) {
        rank(&mut self.items);
        self.outside.sort_by_key(|o| rank_key(Row::Outside(o)));
    }

    /// Adds another triage's rows (another namespace's, or another
    /// cluster's), unranked.
    pub fn append(&mut self, mut other: Triage) {
        self.items.append(&mut other.items);
        self.outside.append(&mut other.outside);
        self.checked.add(other.checked);
    }

    /// Nothing was judged: no workload, and no object outside one.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.outside.is_empty() && self.checked.total() == 0
    }
}

/// One triage row: a workload, or an object outside every workload.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    Workload(&'a Diagnosis),
    Outside(&'a Outside),
}

/// How broken, for ranking: smaller is worse. Unhealthy first; then
/// anything with a warning or error, or that does not serve, before what
/// only has information (a rollout still moving); then by what users get
/// (not-serving, degraded, unknown, progressing, serving), the smaller
/// share of replicas serving, the more severe leading finding, the earlier
/// step on the ladder; then by name, and by the context it was read in.
type RankKey = (
    bool,
    bool,
    State,
    i64,
    u8,
    usize,
    String,
    String,
    Option<String>,
);

fn rank_key(row: Row) -> RankKey {
    let severity_rank = |s: Option<Severity>| match s {
        Some(Severity::Error) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Info) => 2,
        None => 3,
    };
    match row {
        Row::Workload(d) => {
            let s = &d.verdict.serving;
            let serves: i32 = d.revisions.iter().map(|r| s.count_of(r)).sum();
            let serving = if s.desired <= 0 {
                1000
            } else {
                i64::from(serves.min(s.desired)) * 1000 / i64::from(s.desired)
            };
            let severity = severity_rank(d.lead().map(|f| f.severity));
            let outage = matches!(
                d.verdict.state,
                State::NotServing | State::Degraded | State::Unknown
            );
            (
                d.healthy,
                !(outage || severity < 2),
                d.verdict.state,
                serving,
                severity,
                d.verdict.last_step.index(),
                d.target.namespace.clone(),
                d.target.name.clone(),
                d.target.context.clone(),
            )
        }
        Row::Outside(o) => {
            let severity = severity_rank(Some(o.severity()));
            let state = o.state.unwrap_or(State::Serving);
            (
                false,
                !(state == State::NotServing || severity < 2),
                state,
                if state == State::NotServing { 0 } else { 1000 },
                severity,
                0,
                o.namespace.clone(),
                o.name.clone(),
                o.context.clone(),
            )
        }
    }
}

/// Every workload of `namespace` (or of all) that `filter` keeps, analysed
/// at `now`, and what fails outside them, ranked worst first. The snapshot
/// is indexed once (its chains and its Events) and every workload is judged
/// in it, so the work grows with the objects, not with workloads times
/// objects.
pub fn triage(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Triage {
    let mut t = triage_unranked(snapshot, namespace, filter, controller, now);
    t.rank();
    t
}

/// [`triage`] before the ranking, for callers that gather several
/// snapshots (a namespace at a time) and rank once.
pub fn triage_unranked(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Triage {
    let analyzer = Analyzer::new(snapshot);
    let judge = Judge {
        snapshot,
        namespace,
        filter,
        controller,
        now,
    };
    let (items, covered) = judge.workloads(&analyzer, |_| true, None);
    let outside = judge.outside(&covered, None);
    Triage {
        items,
        outside,
        checked: Checked::of(snapshot, namespace, filter),
        contexts: Vec::new(),
    }
}

/// One part of a namespace judged in shards ([`crate::chain::shard`]):
/// a shard judges the workloads whose Pods it holds, and returns what their
/// chains covered; the rest judges what no shard did (given what every
/// shard covered) and what fails outside every workload. The parts
/// together give what [`triage_unranked`] gives of the whole namespace.
pub fn triage_part(
    snapshot: &Snapshot,
    namespace: &str,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
    (shards, facts, part): (&Shards, &PodFacts, Part),
    covered_by_shards: &mut Covered,
) -> Triage {
    if part == Part::Whole {
        return triage_unranked(snapshot, Some(namespace), filter, controller, now);
    }
    let analyzer = Analyzer::with_pod_uids(snapshot, facts.uids.iter().map(String::as_str));
    let judge = Judge {
        snapshot,
        namespace: Some(namespace),
        filter,
        controller,
        now,
    };
    match part {
        Part::Shard(k) => {
            let (items, covered) =
                judge.workloads(&analyzer, |chain| shards.of_chain(chain) == Some(k), None);
            covered_by_shards.merge(covered);
            Triage {
                items,
                outside: Vec::new(),
                checked: Checked::default(),
                contexts: Vec::new(),
            }
        }
        _ => {
            let (items, covered) = judge.workloads(
                &analyzer,
                |chain| shards.of_chain(chain).is_none(),
                Some(covered_by_shards),
            );
            covered_by_shards.merge(covered);
            let outside = judge.outside(covered_by_shards, Some(facts));
            Triage {
                items,
                outside,
                checked: Checked::of(snapshot, Some(namespace), filter),
                contexts: Vec::new(),
            }
        }
    }
}

/// What every triage judges with.
struct Judge<'s> {
    snapshot: &'s Snapshot,
    namespace: Option<&'s str>,
    filter: Option<&'s LabelFilter>,
    controller: Option<&'s ControllerLocation>,
    now: Timestamp,
}

impl Judge<'_> {
    /// The workloads whose walked chain `mine` keeps, judged; and what
    /// their chains cover. A Pod some chain holds (here, or in `before`)
    /// is not judged on its own.
    fn workloads(
        &self,
        analyzer: &Analyzer,
        mine: impl Fn(&crate::chain::Chain) -> bool,
        before: Option<&Covered>,
    ) -> (Vec<Diagnosis>, Covered) {
        let snapshot = self.snapshot;
        let index = Index::new(snapshot);
        let mut covered = Covered::default();
        let items: Vec<Diagnosis> = workloads(snapshot, self.namespace)
            .into_iter()
            .filter(|w| self.filter.is_none_or(|f| f.matches(&w.labels)))
            .filter(|w| !controller_context(snapshot, &w.target, self.controller))
            .filter_map(|w| {
                let ns = w.target.namespace.clone().unwrap_or_default();
                // Pods come last in `workloads`: those a chain holds are judged.
                let held = |c: &Covered| c.holds_pod(&ns, &w.target.name);
                if w.target.kind == TargetKind::Pod && (held(&covered) || before.is_some_and(held))
                {
                    return None;
                }
                let chain = index.walk(&w.target, &ns, self.controller).ok()?;
                if !mine(&chain) {
                    return None;
                }
                covered.add(&chain);
                Some(analyzer.analyze(&chain, self.now))
            })
            .collect();
        (items, covered)
    }

    /// What fails outside the covered chains, that the filter keeps.
    fn outside(&self, covered: &Covered, pod_facts: Option<&PodFacts>) -> Vec<Outside> {
        let replay = self.snapshot.origin.replay_vars(self.now);
        outside::judge(self.snapshot, self.namespace, covered, pod_facts)
            .into_iter()
            .filter(|o| self.filter.is_none_or(|f| f.matches(&o.labels)))
            .map(|mut o| {
                o.context = self.snapshot.origin.named_context.clone();
                for f in &mut o.findings {
                    f.vars.extend(replay.iter().cloned());
                }
                o
            })
            .collect()
    }
}

/// The gaps a triage reports for the whole read: every failed read, and a
/// kind a dump was not asked for only when some judged workload needed it
/// (a dump of plain Deployments is not incomplete for lacking Leases).
pub fn read_gaps(gaps: &[Gap], t: &Triage) -> Vec<Gap> {
    let needed = |g: &Gap| {
        t.items.iter().any(|d| d.gaps.contains(g)) || t.outside.iter().any(|o| o.gaps.contains(g))
    };
    gaps.iter()
        .filter(|g| g.complete_with.is_none() || needed(g))
        .cloned()
        .collect()
}

/// Whether a workload is the ModelService controller's Deployment in a file
/// that holds none of its ReplicaSets or Pods: it is there as context for
/// the ModelServices (its spec, its Lease), not as a workload to rank. Live,
/// the controller is judged like any Deployment.
pub fn controller_context(
    snapshot: &Snapshot,
    target: &TargetSpec,
    controller: Option<&ControllerLocation>,
) -> bool {
    if snapshot.origin.kind == OriginKind::Live || target.kind != TargetKind::Deployment {
        return false;
    }
    let namespace = target.namespace.as_deref().unwrap_or("");
    let is_controller = ControllerLocation::spots(controller, Some(namespace))
        .iter()
        .any(|spot| spot.name == target.name && spot.namespace == namespace);
    if !is_controller {
        return false;
    }
    let Some(deployment) = snapshot.objects.deployments.iter().find(|d| {
        d.metadata.name.as_deref() == Some(target.name.as_str())
            && d.metadata.namespace.as_deref() == Some(namespace)
    }) else {
        return false;
    };
    let uid = deployment.metadata.uid.as_deref().unwrap_or("");
    let owns_a_replica_set = snapshot.objects.replica_sets.iter().any(|rs| {
        rs.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| !uid.is_empty() && o.uid == uid)
    });
    let selector = deployment.spec.as_ref().map(|s| &s.selector);
    let selects_a_pod = snapshot.objects.pods.iter().any(|p| {
        p.metadata.namespace.as_deref() == Some(namespace)
            && selector.is_some_and(|sel| label_selector_matches(sel, p.metadata.labels.as_ref()))
    });
    !owns_a_replica_set && !selects_a_pod
}
