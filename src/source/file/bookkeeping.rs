//! The bookkeeping of a dump: which kinds it listed, the gaps for those it
//! did not, and the newest time it holds (the replay clock).

use serde_json::Value;

use mdiag_core::model::{Gap, Kind, Origin, Snapshot};

/// The kinds of typed lists a dump holds (`PodList`, even with no item):
/// what the API was asked for, so an empty one is really empty.
#[derive(Default)]
pub(crate) struct Listed(pub(crate) std::collections::BTreeSet<String>);

/// The kinds whose absence changes a judgement. A kubectl dump holds only
/// what it was asked for, so a kind with no object (and no typed list) in
/// it is unknown, not empty (docs/contract.md#findings): rules that would
/// need its absence stay silent.
const JUDGED_KINDS: &[Kind] = &[
    Kind::ModelService,
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::Pod,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Event,
    Kind::Lease,
];

/// What a dump with every judged kind in it is made with.
pub const COMPLETE_DUMP_RESOURCES: &str =
    "msvc,deployments,replicasets,pods,services,endpointslices,events,leases";

/// A gap for every judged kind the dump has no typed list of, each with the
/// `kubectl get` that would add it. A kind the dump holds in some
/// namespaces counts as read there only (docs/contract.md#basis): the gap
/// names them (`read_in`) and hides the kind everywhere else, so `kubectl
/// get deploy -A` beside the Pods of one namespace says nothing of the
/// Pods of the others.
pub(crate) fn unlisted_kinds(snapshot: &Snapshot, listed: &Listed) -> Vec<Gap> {
    let o = &snapshot.objects;
    let scope: Vec<String> = match dump_namespaces(o).as_slice() {
        [one] => vec!["-n".into(), one.to_string()],
        _ => vec!["-A".into()],
    };
    JUDGED_KINDS
        .iter()
        // A typed list (`PodList`, even empty) is what the API was asked
        // for; a Service's v1 Endpoints stand for its slices.
        .filter(|kind| !listed.0.contains(kind.name()))
        .filter(|kind| !(**kind == Kind::EndpointSlice && listed.0.contains("Endpoints")))
        .map(|kind| {
            let resource = kind.resource();
            Gap {
                contexts: Vec::new(),
                resource: resource.to_string(),
                namespace: None,
                verb: "list".into(),
                name: None,
                reason: Gap::NOT_IN_DUMP.into(),
                complete_with: Some(mdiag_core::command::Command::new(
                    ["kubectl", "get", resource]
                        .into_iter()
                        .map(str::to_string)
                        .chain(scope.iter().cloned())
                        .chain(["-o".to_string(), "yaml".to_string()]),
                )),
                read_in: o.namespaces(*kind).into_iter().collect(),
            }
        })
        .collect()
}

/// The namespaces a dump's workloads, Pods and Services are in, sorted.
fn dump_namespaces(o: &mdiag_core::model::Objects) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for kind in [
        Kind::ModelService,
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::Pod,
        Kind::Service,
        Kind::EndpointSlice,
    ] {
        out.extend(o.namespaces(kind));
    }
    out.into_iter().collect()
}

/// Prepares an object for typing and for a dump's clock, in one walk:
/// remembers the newest time it observed (a kubectl dump has no capture
/// time; this becomes the replay clock), and brings a time past the last
/// instant jiff holds (9999-12-30T22:00:00Z; Kubernetes writes up to
/// 9999-12-31T23:59:59Z) down to that instant, so that a valid far-future
/// time does not make its object, and the file, unreadable.
///
/// Only the time fields count, outside `spec` (a desired state, written by
/// users; but for a Lease's) and the free maps.
pub(crate) fn object_times(origin: &mut Origin, object: &mut Value) {
    let mut newest = None;
    // A Lease's spec is its holder's record (acquired, renewed), written
    // as it happens: observed, as a status is elsewhere.
    let spec_observed = object["kind"] == "Lease";
    crate::times::walk_times(object, spec_observed, &mut newest);
    if let Some(newest) = newest
        && origin.newest_seen.is_none_or(|seen| newest > seen)
    {
        origin.newest_seen = Some(newest);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::read::parse_snapshot_text;
    use crate::times::time_of;

    #[test]
    fn the_clock_of_a_dump_ignores_deadlines_and_annotations() {
        let text = r#"
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: lab
  creationTimestamp: "2026-11-28T10:00:00Z"
  deletionTimestamp: "2026-11-28T10:05:30Z"
  annotations:
    example.com/expires: "2027-01-01T00:00:00Z"
status:
  startTime: "2026-11-28T10:00:05Z"
"#;
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        assert_eq!(
            s.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:05Z".to_string())
        );
    }

    #[test]
    fn the_clock_of_a_dump_ignores_free_text_shaped_like_a_time() {
        // A termination message, an environment value, a label and a
        // ModelService's spec: none is a time the cluster observed.
        let text = r#"
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: lab
  creationTimestamp: "2026-11-28T10:00:00Z"
  labels: {startTime: "2126-01-01T00:00:00Z"}
spec:
  containers:
  - name: c
    env: [{name: startTime, value: "2126-01-01T00:00:00Z"}]
status:
  containerStatuses:
  - name: c
    lastState:
      terminated:
        exitCode: 1
        message: "2126-01-01T00:00:00Z"
        reason: Error
        startedAt: "2026-11-28T10:00:03Z"
        finishedAt: "2026-11-28T10:00:04Z"
---
apiVersion: modeldock.io/v1alpha1
kind: ModelService
metadata: {name: m, namespace: lab, creationTimestamp: "2026-11-28T09:00:00Z"}
spec: {startTime: "2126-01-01T00:00:00Z"}
"#;
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        assert_eq!(
            s.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:04Z".to_string())
        );
    }

    #[test]
    fn a_lease_renewed_is_a_time_observed_though_it_is_in_its_spec() {
        let text = r#"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: kube-scheduler, namespace: kube-system, creationTimestamp: "2026-11-28T09:00:00Z"}
spec:
  holderIdentity: kind-control-plane_1
  acquireTime: "2026-11-28T09:00:01Z"
  renewTime: "2026-11-28T10:11:06.532418Z"
"#;
        let s = parse_snapshot_text(text, Path::new("l.yaml")).unwrap();
        assert_eq!(
            s.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:11:06.532418Z".to_string())
        );
    }

    #[test]
    fn a_time_at_the_end_of_year_9999_is_held_at_the_last_instant_jiff_holds() {
        let text = r#"
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: lab
  creationTimestamp: "9999-12-31T23:59:59Z"
status:
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "9999-12-31T23:59:59.999999Z"}
"#;
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        let pod = &s.objects.pods[0];
        let created = pod.metadata.creation_timestamp.as_ref().unwrap().0;
        assert_eq!(created.to_string(), "9999-12-30T22:00:00Z");
        let ready = pod.status.as_ref().unwrap().conditions.as_ref().unwrap()[0]
            .last_transition_time
            .as_ref()
            .unwrap()
            .0;
        assert_eq!(ready, created);
        assert_eq!(s.origin.newest_seen, Some(created));
    }

    #[test]
    fn a_time_field_that_is_no_time_is_left_to_the_typed_parse() {
        let mut text = "yesterday".to_string();
        assert_eq!(time_of(&mut text), None);
        assert_eq!(text, "yesterday");
        let mut text = "9999-12-30T21:59:59Z".to_string();
        assert_eq!(
            time_of(&mut text).map(|t| t.to_string()).as_deref(),
            Some("9999-12-30T21:59:59Z")
        );
        let mut text = "9999-12-31T10:00:00+02:00".to_string();
        assert!(time_of(&mut text).is_some());
        assert_eq!(text, "9999-12-30T22:00:00Z");
    }
}

#[cfg(test)]
mod judged_kinds_tests {
    use super::*;

    /// The `kubectl get` a partial dump is told to complete itself with
    /// names every judged kind (the ModelService by its short name).
    #[test]
    fn the_complete_dump_names_every_judged_kind() {
        let named: Vec<&str> = COMPLETE_DUMP_RESOURCES.split(',').collect();
        for kind in JUDGED_KINDS {
            let resource = match kind {
                Kind::ModelService => "msvc",
                other => other.resource(),
            };
            assert!(named.contains(&resource), "{resource} missing");
        }
        assert_eq!(named.len(), JUDGED_KINDS.len());
    }
}
