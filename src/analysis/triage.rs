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

    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.outside.is_empty()
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
/// step on the ladder.
type RankKey = (bool, bool, State, i64, u8, usize, String, String);

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
    Triage { items, outside }
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
            Triage { items, outside }
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
        outside::judge(self.snapshot, self.namespace, covered, pod_facts)
            .into_iter()
            .filter(|o| self.filter.is_none_or(|f| f.matches(&o.labels)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Step;
    use crate::model::Clock;
    use crate::source::read_snapshot_file;
    use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;

    fn load() -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/triage/rs-without-deployment.yaml");
        read_snapshot_file(&path).unwrap()
    }

    fn judged(s: &Snapshot) -> Triage {
        let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
        triage(s, None, None, None, now)
    }

    fn item<'a>(t: &'a Triage, name: &str) -> &'a Diagnosis {
        t.items.iter().find(|d| d.target.name == name).unwrap()
    }

    fn hpa(name: &str, kind: &str, target: &str) -> HorizontalPodAutoscaler {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "inference", "uid": format!("hpa-{name}")},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
                "minReplicas": 1,
                "maxReplicas": 3
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_lone_replica_set_climbs_a_ladder_without_the_deployment_step() {
        let t = judged(&load());
        let d = item(&t, "embedder-7c9d5f8b6");
        assert_eq!(d.target.kind, "ReplicaSet");
        let steps: Vec<Step> = d.steps.iter().map(|s| s.step).collect();
        assert_eq!(
            steps,
            [
                Step::ReplicaSet,
                Step::Stored,
                Step::Bound,
                Step::Started,
                Step::Ready,
                Step::Serving
            ]
        );
        assert!(d.steps[0].reached, "{:?}", d.steps[0]);
        assert_eq!(d.replicas.desired, 2);
        assert_eq!(d.verdict.state, State::Degraded);
        let lead = d.lead().unwrap();
        assert_eq!(lead.id.as_str(), "pods-not-created");
        assert_eq!(lead.subject.name, "embedder-7c9d5f8b6");
        assert_eq!(
            lead.vars.get("transient").map(String::as_str),
            Some("false")
        );
        assert_eq!(
            lead.vars.get("target").map(String::as_str),
            Some("rs/embedder-7c9d5f8b6")
        );
        assert!(
            lead.detail.en().contains("exceeded quota: pods-cap"),
            "{}",
            lead.detail.en()
        );
        // A worker ReplicaSet (no Service selects it) ends at ready.
        let d = item(&t, "reranker-5b6c7d8e9f");
        assert_eq!(d.steps.last().map(|s| s.step), Some(Step::Ready));
        assert_eq!(d.lead().map(|f| f.id.as_str()), Some("crash-loop"));
        assert_eq!(d.verdict.state, State::NotServing);
        // The Deployment's own ReplicaSet is judged once, in its chain.
        let d = item(&t, "gateway");
        assert!(d.healthy, "{:?}", d.findings);
        assert_eq!(t.items.len(), 3);
        assert!(t.outside.is_empty(), "{:?}", t.outside);
    }

    #[test]
    fn an_hpa_that_scales_a_lone_replica_set_is_its_own_and_one_whose_replica_set_is_gone_is_a_row()
    {
        let mut s = load();
        s.objects
            .hpas
            .push(hpa("reranker", "ReplicaSet", "reranker-5b6c7d8e9f"));
        s.objects
            .hpas
            .push(hpa("tokenizer", "ReplicaSet", "tokenizer-8d9e0f1a2b"));
        let t = judged(&s);
        let outside: Vec<(&str, Option<&str>)> = t
            .outside
            .iter()
            .map(|o| (o.name.as_str(), o.lead().map(|f| f.id.as_str())))
            .collect();
        assert_eq!(outside, [("tokenizer", Some("hpa-target-missing"))]);
    }
}

#[cfg(test)]
mod shard_tests {
    use super::*;
    use crate::chain::shard::split;
    use crate::model::Clock;
    use crate::source::read_snapshot_file;
    use std::collections::BTreeSet;

    /// A namespace judged in shards gives what it gives whole, row for row
    /// and finding for finding: every fixture, every namespace, split 2, 3
    /// and 7 ways.
    #[test]
    fn a_namespace_judged_in_shards_gives_what_it_gives_whole() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for dir in [
            "fixtures/demo",
            "fixtures/cases",
            "fixtures/triage",
            "fixtures/redaction",
        ] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
                .filter(|p| !p.ends_with("expected.yaml") && !p.ends_with("corpus.yaml"))
                .collect();
            files.sort();
            for file in files {
                let s = read_snapshot_file(&file).unwrap();
                let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
                let namespaces: BTreeSet<String> = workloads(&s, None)
                    .into_iter()
                    .filter_map(|w| w.target.namespace)
                    .chain(
                        s.objects
                            .services
                            .iter()
                            .filter_map(|x| x.metadata.namespace.clone()),
                    )
                    .collect();
                for ns in namespaces {
                    let whole = triage(&s, Some(&ns), None, None, now);
                    for count in [2, 3, 7] {
                        let t = judged_in_shards(&s, &ns, count, now, |_, _| {});
                        assert_eq!(
                            format!("{t:#?}"),
                            format!("{whole:#?}"),
                            "{} namespace {ns} in {count} shards",
                            file.display()
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 150, "{checked} splits checked");
    }

    /// Every demo and case of `chart-demo` side by side in one namespace,
    /// each under a name and UIDs of its own: 49 workloads in every state
    /// the fixtures hold, split 2, 3 and 7 ways, give what the namespace
    /// gives whole.
    #[test]
    fn a_crowded_namespace_judged_in_shards_gives_what_it_gives_whole() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let uid =
            regex::Regex::new(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
                .unwrap();
        let mut files: Vec<_> = ["fixtures/demo", "fixtures/cases"]
            .iter()
            .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .filter(|p| !p.ends_with("expected.yaml"))
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                !name.starts_with("snapshot-")
            })
            .filter(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .contains("name: chart-demo")
            })
            .collect();
        files.sort();
        let mut text = String::new();
        for (i, file) in files.iter().enumerate() {
            let own = std::fs::read_to_string(file)
                .unwrap()
                .replace("chart-demo", &format!("chart-demo-w{i:02}"));
            let own = uid.replace_all(&own, |c: &regex::Captures| format!("{i:08x}{}", &c[0][8..]));
            text.push_str("---\n");
            text.push_str(&own);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crowded.yaml");
        std::fs::write(&path, text).unwrap();
        let s = read_snapshot_file(&path).unwrap();
        let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
        let ns = "modeldock-lab";
        let whole = triage(&s, Some(ns), None, None, now);
        assert!(
            whole.items.len() >= files.len(),
            "{} rows",
            whole.items.len()
        );
        for count in [2, 3, 7] {
            let (shards, _, pieces, _) = split(&s, count);
            let holding = pieces
                .iter()
                .filter(|p| {
                    p.objects
                        .pods
                        .iter()
                        .any(|pod| shards.of_pod(pod) != crate::chain::shard::Place::Every)
                })
                .count();
            assert_eq!(holding, count, "every shard holds some Pods");
            let t = judged_in_shards(&s, ns, count, now, |k, part| {
                assert!(
                    !part.items.is_empty(),
                    "shard {k} of {count} judged nothing"
                );
            });
            assert_eq!(format!("{t:#?}"), format!("{whole:#?}"), "{count} shards");
        }
    }

    /// `s` judged as the live read in parts judges a namespace: `count`
    /// shards, then the rest, ranked. `each_shard` sees what each shard
    /// gave.
    fn judged_in_shards(
        s: &Snapshot,
        ns: &str,
        count: usize,
        now: Timestamp,
        mut each_shard: impl FnMut(usize, &Triage),
    ) -> Triage {
        let (shards, facts, pieces, rest) = split(s, count);
        let mut covered = Covered::default();
        let mut t = Triage::default();
        let parts = pieces.iter().enumerate().map(|(k, p)| (p, Part::Shard(k)));
        for (piece, part) in parts.chain([(&rest, Part::Rest)]) {
            let mut judged = triage_part(
                piece,
                ns,
                None,
                None,
                now,
                (&shards, &facts, part),
                &mut covered,
            );
            if let Part::Shard(k) = part {
                each_shard(k, &judged);
            }
            t.items.append(&mut judged.items);
            t.outside.append(&mut judged.outside);
        }
        t.rank();
        t
    }
}
