//! Triage: every workload of a snapshot judged, and ranked worst first.
//! Pure like the rest of the analysis.

use jiff::Timestamp;

use super::{Analyzer, Diagnosis, State};
use crate::catalogue::Severity;
use crate::chain::{ControllerLocation, Index, label_selector_matches, workloads};
use crate::model::{Gap, LabelFilter, OriginKind, Snapshot, TargetKind, TargetSpec};

/// Orders diagnoses worst first: unhealthy before healthy, then by what
/// users get (not-serving, degraded, unknown, progressing, serving), the
/// smaller share of replicas serving, the more severe leading finding, the
/// earlier step on the ladder.
pub fn rank(items: &mut [Diagnosis]) {
    items.sort_by_key(rank_key);
}

/// How broken, for ranking: smaller is worse.
fn rank_key(d: &Diagnosis) -> (bool, State, i64, u8, usize, String, String) {
    let s = &d.verdict.serving;
    let serves: i32 = d.revisions.iter().map(|r| s.count_of(r)).sum();
    let serving = if s.desired <= 0 {
        1000
    } else {
        i64::from(serves.min(s.desired)) * 1000 / i64::from(s.desired)
    };
    let severity = match d.lead().map(|f| f.severity) {
        Some(Severity::Error) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Info) => 2,
        None => 3,
    };
    (
        d.healthy,
        d.verdict.state,
        serving,
        severity,
        d.verdict.last_step.index(),
        d.target.namespace.clone(),
        d.target.name.clone(),
    )
}

/// Every workload of `namespace` (or of all) that `filter` keeps, analysed
/// at `now` and ranked worst first. The snapshot is indexed once (its
/// chains and its Events) and every workload is judged in it, so the work
/// grows with the objects, not with workloads times objects.
pub fn diagnose_all(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Vec<Diagnosis> {
    let mut items = diagnose_unranked(snapshot, namespace, filter, controller, now);
    rank(&mut items);
    items
}

/// [`diagnose_all`] before the ranking, for callers that gather the
/// diagnoses of several snapshots (a namespace at a time) and rank once.
pub fn diagnose_unranked(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Vec<Diagnosis> {
    let index = Index::new(snapshot);
    let analyzer = Analyzer::new(snapshot);
    workloads(snapshot, namespace)
        .into_iter()
        .filter(|w| filter.is_none_or(|f| f.matches(&w.labels)))
        .filter(|w| !controller_context(snapshot, &w.target, controller))
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            let chain = index.walk(&w.target, &ns, controller).ok()?;
            Some(analyzer.analyze(&chain, now))
        })
        .collect()
}

/// The gaps a triage reports for the whole read: every failed read, and a
/// kind a dump was not asked for only when some judged workload needed it
/// (a dump of plain Deployments is not incomplete for lacking Leases).
pub fn read_gaps(gaps: &[Gap], items: &[Diagnosis]) -> Vec<Gap> {
    gaps.iter()
        .filter(|g| g.complete_with.is_none() || items.iter().any(|d| d.gaps.contains(g)))
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
