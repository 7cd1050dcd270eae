//! What fails on its own, outside every workload triage judges: a Service
//! no workload's chain holds that has no ready endpoint, an HPA whose target
//! is missing or that cannot scale, a PDB that protects Pods of no judged
//! workload and allows no disruption. Pure, like the rest of the analysis:
//! the objects in, one row per object with its findings out.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use super::rules::{scaling, service};
use super::{Evidence, Finding, State};
use crate::catalogue::{Message, Severity};
use crate::chain::shard::PodFacts;
use crate::chain::{Chain, SERVICE_NAME_LABEL, label_selector_matches, selector_matches};
use crate::model::{Gap, Kind, OriginKind, Snapshot, TemplateVars};

/// One object outside every workload, with what is wrong with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outside {
    /// `Service`, `HorizontalPodAutoscaler`, `PodDisruptionBudget`.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// What users get from it, when that is a question it answers (a
    /// Service: not serving); `None` for what serves nobody itself.
    pub state: Option<State>,
    /// Worst first; never empty (an object with nothing wrong is no row).
    pub findings: Vec<Finding>,
    /// Gaps that kept a finding about it from being made in full.
    pub gaps: Vec<Gap>,
    /// The kubeconfig context it was read in, when the user named one
    /// (as [`super::TargetInfo::context`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Its labels, for `-l`.
    #[serde(skip)]
    pub labels: std::collections::BTreeMap<String, String>,
}

impl Outside {
    pub fn lead(&self) -> Option<&Finding> {
        self.findings.first()
    }

    /// The most severe finding's severity.
    pub fn severity(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.severity)
            .min()
            .unwrap_or(Severity::Info)
    }
}

/// What the workloads' chains already hold: their Services, the labels of
/// their Pods, and the names HPAs would target them by.
#[derive(Debug, Default)]
pub struct Covered {
    services: HashSet<(String, String)>,
    /// (namespace, kind, name) of every judged workload and its parents.
    targets: HashSet<(String, String, String)>,
    /// By namespace, each set of labels a judged Pod carried, once: the
    /// Pods of one ReplicaSet share theirs, so a namespace of 10,000 Pods
    /// holds about as many sets as it has workloads.
    pod_labels: HashMap<String, HashSet<std::collections::BTreeMap<String, String>>>,
    pods: HashSet<(String, String)>,
    /// UIDs of the judged ModelServices (an HPA they own is theirs).
    owners: HashSet<String>,
}

impl Covered {
    /// Adds what one walked chain holds.
    pub fn add(&mut self, chain: &Chain) {
        let ns = chain.namespace.clone();
        for s in &chain.services {
            self.services
                .insert((ns.clone(), name(&s.metadata).to_string()));
        }
        // A Rollout's view is the Rollout, added below as the platform.
        if let Some(d) = chain
            .deployment
            .filter(|_| chain.workload_platform().is_none())
        {
            self.targets
                .insert((ns.clone(), "Deployment".into(), name(&d.metadata).into()));
        }
        if let Some(set) = &chain.pod_set {
            self.targets.insert((
                ns.clone(),
                set.kind().as_str().to_string(),
                name(set.meta()).to_string(),
            ));
        }
        if let Some(rs) = chain.lone_replica_set() {
            self.targets
                .insert((ns.clone(), "ReplicaSet".into(), name(&rs.metadata).into()));
        }
        if let Some(p) = chain.platform {
            let m = p.object;
            self.targets
                .insert((ns.clone(), p.kind().into(), name(&m.metadata).into()));
            self.owners
                .insert(m.metadata.uid.clone().unwrap_or_default());
        }
        for p in &chain.pods {
            self.pods
                .insert((ns.clone(), name(&p.pod.metadata).to_string()));
            if let Some(labels) = &p.pod.metadata.labels {
                let sets = self.pod_labels.entry(ns.clone()).or_default();
                if !sets.contains(labels) {
                    sets.insert(labels.clone());
                }
            }
        }
    }
}

impl Covered {
    /// Adds what other chains (another shard's) covered.
    pub fn merge(&mut self, other: Covered) {
        self.services.extend(other.services);
        self.targets.extend(other.targets);
        for (ns, sets) in other.pod_labels {
            self.pod_labels.entry(ns).or_default().extend(sets);
        }
        self.pods.extend(other.pods);
        self.owners.extend(other.owners);
    }

    /// Whether a walked chain holds this Pod (an ownerless Pod a ReplicaSet
    /// adopts by its selector is that workload's, not a row of its own).
    pub fn holds_pod(&self, namespace: &str, pod: &str) -> bool {
        self.pods
            .contains(&(namespace.to_string(), pod.to_string()))
    }
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

fn namespace(meta: &ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("")
}

fn hidden(snapshot: &Snapshot, resource: &str, ns: &str) -> Vec<Gap> {
    snapshot
        .gaps
        .iter()
        .filter(|g| g.hides(resource, ns))
        .cloned()
        .collect()
}

fn vars_in(ns: &str) -> TemplateVars {
    let mut vars = TemplateVars::new();
    vars.insert("namespace".into(), ns.to_string());
    vars
}

/// Every object of `namespace` (or of all) outside the covered chains that
/// has something wrong, one row each.
///
/// `pod_facts`: what the Services select among every Pod of the namespace
/// when the snapshot holds only some of them (the rest of a namespace
/// judged in shards); `None` reads it from the snapshot's Pods.
pub fn judge(
    snapshot: &Snapshot,
    wanted_namespace: Option<&str>,
    covered: &Covered,
    pod_facts: Option<&PodFacts>,
) -> Vec<Outside> {
    let wanted = |meta: &ObjectMeta| wanted_namespace.is_none_or(|ns| namespace(meta) == ns);
    let mut out = Vec::new();
    for s in snapshot
        .objects
        .services
        .iter()
        .filter(|s| wanted(&s.metadata))
    {
        let key = (
            namespace(&s.metadata).to_string(),
            name(&s.metadata).to_string(),
        );
        if !covered.services.contains(&key)
            && let Some(row) = lone_service(snapshot, s, pod_facts)
        {
            out.push(row);
        }
    }
    for h in snapshot.objects.hpas.iter().filter(|h| wanted(&h.metadata)) {
        if let Some(row) = lone_hpa(snapshot, h, covered) {
            out.push(row);
        }
    }
    for pdb in snapshot.objects.pdbs.iter().filter(|p| wanted(&p.metadata)) {
        let ns = namespace(&pdb.metadata);
        let selector = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
        let protects_a_workload = covered.pod_labels.get(ns).is_some_and(|sets| {
            sets.iter()
                .any(|labels| selector.is_some_and(|sel| label_selector_matches(sel, Some(labels))))
        });
        // A PDB that expects no Pod protects nothing: no row. One its
        // controller could not compute counts none but blocks every
        // eviction of what it selects.
        let expects_pods = pdb.status.as_ref().is_some_and(|s| s.expected_pods > 0);
        if protects_a_workload || !(expects_pods || scaling::pdb_sync_failed(pdb).is_some()) {
            continue;
        }
        if let Some(f) = scaling::allows_no_disruption(pdb, &vars_in(ns)) {
            out.push(row(
                "PodDisruptionBudget",
                &pdb.metadata,
                None,
                vec![f],
                Vec::new(),
            ));
        }
    }
    out
}

fn row(
    kind: &'static str,
    meta: &ObjectMeta,
    state: Option<State>,
    mut findings: Vec<Finding>,
    mut gaps: Vec<Gap>,
) -> Outside {
    findings.sort_by_key(|f| f.severity);
    super::quote::bound_findings(&mut findings);
    for g in &mut gaps {
        super::quote::bound(&mut g.reason);
    }
    Outside {
        kind,
        namespace: namespace(meta).to_string(),
        name: name(meta).to_string(),
        uid: meta.uid.clone().unwrap_or_default(),
        state,
        findings,
        gaps,
        context: None,
        labels: meta.labels.clone().unwrap_or_default(),
    }
}

/// A Service no workload holds: a row when it selects Pods (it is meant to
/// serve) and none of its slices' endpoints is ready.
fn lone_service(snapshot: &Snapshot, s: &Service, pod_facts: Option<&PodFacts>) -> Option<Outside> {
    let spec = s.spec.as_ref()?;
    let selects = spec.selector.as_ref().is_some_and(|sel| !sel.is_empty());
    if !selects || spec.type_.as_deref() == Some("ExternalName") {
        return None;
    }
    let ns = namespace(&s.metadata);
    // Unread slices are not empty ones: the gap is reported with the read.
    if !hidden(snapshot, "endpointslices", ns).is_empty() {
        return None;
    }
    let slices: Vec<_> = snapshot
        .objects
        .endpoint_slices
        .iter()
        .filter(|sl| {
            namespace(&sl.metadata) == ns
                && sl
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .map(String::as_str)
                    == Some(name(&s.metadata))
        })
        .collect();
    let mut vars = vars_in(ns);
    vars.insert("service".into(), name(&s.metadata).to_string());
    let mut f = service::no_ready_endpoint(s, &slices, &vars)?;
    // Which Pods it selects, when the Pods were read.
    let pods_gap = hidden(snapshot, "pods", ns);
    if pods_gap.is_empty() {
        let (count, first) = match pod_facts {
            Some(facts) => facts
                .selected_by(ns, name(&s.metadata))
                .map_or((0, None), |sel| (sel.count(), sel.first.clone())),
            None => {
                let selected: Vec<_> = snapshot
                    .objects
                    .pods
                    .iter()
                    .filter(|p| namespace(&p.metadata) == ns)
                    .filter(|p| selector_matches(s, p.metadata.labels.as_ref()))
                    .collect();
                let first = selected.first().map(|p| name(&p.metadata).to_string());
                (selected.len(), first)
            }
        };
        let value = match first {
            None => Message::new("outside.no_pod_selected"),
            Some(first) => {
                vars.insert("pod".into(), first);
                Message::new("outside.none_ready").arg("n", count)
            }
        };
        f = f.evidence(Evidence::said(
            format!("service/{}", name(&s.metadata)),
            "spec.selector",
            value,
        ));
        f.vars.extend(vars);
    }
    Some(row(
        "Service",
        &s.metadata,
        Some(State::NotServing),
        vec![f],
        pods_gap,
    ))
}

/// Whether an HPA's scale target is absent from the snapshot: only for a
/// kind an HPA can scale whose list was read in the namespace. A kind that
/// was not read, or one mdiag does not read (a custom resource with a scale
/// subresource), is unknown: the HPA's own condition (AbleToScale=False,
/// FailedGetScale) is then the only evidence. A DaemonSet has no scale
/// subresource, so an HPA never scales one; its controller says so in the
/// same condition.
fn target_absent(snapshot: &Snapshot, ns: &str, kind: &str, target: &str) -> bool {
    let o = &snapshot.objects;
    // The kinds an HPA can scale that mdiag reads.
    const SCALED: &[Kind] = &[
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::ReplicaSet,
        Kind::ModelService,
        Kind::InferenceService,
    ];
    let Some(scaled) = SCALED.iter().copied().find(|k| k.name() == kind) else {
        return false;
    };
    let (resource, metas) = (scaled.resource(), o.metas(scaled));
    // A kubectl dump records a gap only for the kinds absence is judged on
    // (mdiag-source's file/bookkeeping.rs, JUDGED_KINDS); StatefulSets are
    // not among them, so a dump with none of them was not asked for them.
    let unrecorded = snapshot.origin.kind == OriginKind::KubectlDump
        && kind == "StatefulSet"
        && metas.is_empty();
    !unrecorded
        && hidden(snapshot, resource, ns).is_empty()
        && !metas
            .iter()
            .any(|m| namespace(m) == ns && name(m) == target)
}

/// An HPA no judged workload is the target of: a row when its target is
/// missing, it cannot compute a replica count, or it is capped.
fn lone_hpa(
    snapshot: &Snapshot,
    h: &HorizontalPodAutoscaler,
    covered: &Covered,
) -> Option<Outside> {
    let target = &h.spec.as_ref()?.scale_target_ref;
    let ns = namespace(&h.metadata);
    // The workload's own, as its rules find it: by target, by owner, or by
    // the workload's name.
    let key = (ns.to_string(), target.kind.clone(), target.name.clone());
    let owned = h
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| covered.owners.contains(&o.uid));
    let named = [
        "ModelService",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
    ]
    .iter()
    .any(|kind| {
        covered.targets.contains(&(
            ns.to_string(),
            kind.to_string(),
            name(&h.metadata).to_string(),
        ))
    });
    if covered.targets.contains(&key) || owned || named {
        return None;
    }
    let absent = target_absent(snapshot, ns, &target.kind, &target.name);
    let mut vars = vars_in(ns);
    vars.insert("hpa".into(), name(&h.metadata).to_string());
    let findings: Vec<Finding> = [
        scaling::target_missing(h, &vars, absent),
        scaling::metrics_unavailable(h, &vars),
        scaling::at_max(h, &vars),
    ]
    .into_iter()
    .flatten()
    .collect();
    if findings.is_empty() {
        return None;
    }
    Some(row(
        "HorizontalPodAutoscaler",
        &h.metadata,
        None,
        findings,
        Vec::new(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};

    fn hpa(kind: &str, target: &str) -> HorizontalPodAutoscaler {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "scaler", "namespace": "serve", "uid": "hpa-uid"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
                "minReplicas": 1,
                "maxReplicas": 4
            }
        }))
        .unwrap()
    }

    fn meta(name: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("serve".into()),
            uid: Some(format!("{name}-uid")),
            ..ObjectMeta::default()
        }
    }

    fn snapshot(origin: OriginKind, h: HorizontalPodAutoscaler) -> Snapshot {
        let mut s = Snapshot::default();
        s.origin.kind = origin;
        s.objects.hpas.push(h);
        s
    }

    /// The lead finding of each row `judge` gives.
    fn leads(s: &Snapshot) -> Vec<String> {
        judge(s, None, &Covered::default(), None)
            .iter()
            .map(|o| format!("{} {}", o.name, o.lead().map_or("-", |f| f.id.as_str())))
            .collect()
    }

    #[test]
    fn an_hpa_whose_statefulset_or_replicaset_is_gone_is_target_missing_when_that_kind_was_read() {
        for kind in ["StatefulSet", "ReplicaSet", "Deployment"] {
            let s = snapshot(OriginKind::SnapshotFile, hpa(kind, "shard"));
            assert_eq!(leads(&s), ["scaler hpa-target-missing"], "{kind}");
            let detail = judge(&s, None, &Covered::default(), None)[0].findings[0]
                .detail
                .en();
            assert!(detail.contains("does not exist"), "{kind}: {detail}");
        }
        // Present: nothing wrong (the HPA reports no failed condition).
        let mut s = snapshot(OriginKind::SnapshotFile, hpa("StatefulSet", "shard"));
        s.objects.stateful_sets.push(StatefulSet {
            metadata: meta("shard"),
            ..StatefulSet::default()
        });
        assert!(leads(&s).is_empty());
        let mut s = snapshot(OriginKind::SnapshotFile, hpa("ReplicaSet", "shard"));
        s.objects.replica_sets.push(ReplicaSet {
            metadata: meta("shard"),
            ..ReplicaSet::default()
        });
        assert!(leads(&s).is_empty());
    }

    #[test]
    fn an_unread_kind_is_not_an_absent_target() {
        // A list that failed hides the target.
        let mut s = snapshot(OriginKind::Live, hpa("ReplicaSet", "shard"));
        s.gaps.push(Gap {
            contexts: Vec::new(),
            resource: "replicasets".into(),
            namespace: Some("serve".into()),
            verb: "list".into(),
            name: None,
            reason: "forbidden".into(),
            complete_with: None,
            read_in: Vec::new(),
        });
        assert!(leads(&s).is_empty());
        // A kubectl dump with no StatefulSet was not asked for them (it
        // records no gap for that kind); with one, it was.
        let mut s = snapshot(OriginKind::KubectlDump, hpa("StatefulSet", "shard"));
        assert!(leads(&s).is_empty());
        s.objects.stateful_sets.push(StatefulSet {
            metadata: meta("other"),
            ..StatefulSet::default()
        });
        assert_eq!(leads(&s), ["scaler hpa-target-missing"]);
        // A DaemonSet cannot be scaled: only the HPA's own condition speaks.
        let s = snapshot(OriginKind::SnapshotFile, hpa("DaemonSet", "agents"));
        assert!(leads(&s).is_empty());
    }
}
