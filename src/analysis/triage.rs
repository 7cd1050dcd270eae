//! Triage: every workload of a snapshot judged, and ranked worst first.
//! Pure like the rest of the analysis.

use jiff::Timestamp;

use super::{Analyzer, Diagnosis, State};
use crate::catalogue::Severity;
use crate::chain::{ControllerLocation, Index, workloads};
use crate::model::{LabelFilter, Snapshot};

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
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            let chain = index.walk(&w.target, &ns, controller).ok()?;
            Some(analyzer.analyze(&chain, now))
        })
        .collect()
}
