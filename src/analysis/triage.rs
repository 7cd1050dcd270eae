//! Triage: every workload of a snapshot judged, and ranked worst first.
//! Pure like the rest of the analysis.

use jiff::Timestamp;

use super::outside::{self, Covered, Outside};
use super::{Analyzer, Diagnosis, State};
use crate::catalogue::Severity;
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
    let index = Index::new(snapshot);
    let analyzer = Analyzer::new(snapshot);
    let mut covered = Covered::default();
    let items: Vec<Diagnosis> = workloads(snapshot, namespace)
        .into_iter()
        .filter(|w| filter.is_none_or(|f| f.matches(&w.labels)))
        .filter(|w| !controller_context(snapshot, &w.target, controller))
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            // Pods come last in `workloads`: those a chain holds are judged.
            if w.target.kind == TargetKind::Pod && covered.holds_pod(&ns, &w.target.name) {
                return None;
            }
            let chain = index.walk(&w.target, &ns, controller).ok()?;
            covered.add(&chain);
            Some(analyzer.analyze(&chain, now))
        })
        .collect();
    let outside = outside::judge(snapshot, namespace, &covered)
        .into_iter()
        .filter(|o| filter.is_none_or(|f| f.matches(&o.labels)))
        .collect();
    Triage { items, outside }
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
