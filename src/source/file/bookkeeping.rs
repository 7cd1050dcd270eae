//! The bookkeeping of a dump: which kinds it listed, the gaps for those it
//! did not, and the newest time it holds (the replay clock).

use jiff::Timestamp;
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

/// A gap for every judged kind the dump has no object and no typed list of,
/// each with the `kubectl get` that would add it.
pub(crate) fn unlisted_kinds(snapshot: &Snapshot, listed: &Listed) -> Vec<Gap> {
    let o = &snapshot.objects;
    // A Service's v1 Endpoints stand for its slices.
    let present = |kind: Kind| {
        o.count(kind) > 0 || (kind == Kind::EndpointSlice && listed.0.contains("Endpoints"))
    };
    let scope: Vec<String> = match dump_namespaces(o).as_slice() {
        [one] => vec!["-n".into(), one.to_string()],
        _ => vec!["-A".into()],
    };
    JUDGED_KINDS
        .iter()
        .filter(|kind| !present(**kind) && !listed.0.contains(kind.name()))
        .map(|kind| kind.resource())
        .map(|resource| Gap {
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
        })
        .collect()
}

/// The namespaces a dump's namespaced objects are in, sorted.
fn dump_namespaces(o: &mdiag_core::model::Objects) -> Vec<String> {
    use k8s_openapi::Metadata;
    fn of<T: Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>>(
        items: &[T],
    ) -> impl Iterator<Item = &str> {
        items
            .iter()
            .filter_map(|i| i.metadata().namespace.as_deref())
    }
    let mut out: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    out.extend(
        o.model_services
            .iter()
            .filter_map(|m| m.metadata.namespace.as_deref()),
    );
    out.extend(of(&o.deployments));
    out.extend(of(&o.replica_sets));
    out.extend(of(&o.pods));
    out.extend(of(&o.services));
    out.extend(of(&o.endpoint_slices));
    out.into_iter().map(str::to_string).collect()
}

/// A kubectl dump has no capture time: remember the newest timestamp seen
/// in any object, which becomes the replay clock.
pub(crate) fn track_newest(origin: &mut Origin, object: &Value) {
    if let Some(newest) = newest_timestamp(object)
        && origin.newest_seen.is_none_or(|seen| newest > seen)
    {
        origin.newest_seen = Some(newest);
    }
}

fn newest_timestamp(value: &Value) -> Option<Timestamp> {
    match value {
        Value::String(s) if looks_like_timestamp(s) => s.parse::<Timestamp>().ok(),
        Value::Array(items) => items.iter().filter_map(newest_timestamp).max(),
        Value::Object(map) => map
            .iter()
            // Field sets, free text and annotations are not observations; a
            // deletionTimestamp is a deadline in the future, not a time seen.
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "fieldsV1" | "data" | "annotations" | "deletionTimestamp"
                )
            })
            .filter_map(|(_, v)| newest_timestamp(v))
            .max(),
        _ => None,
    }
}

fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    (20..=40).contains(&b.len())
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::read::parse_snapshot_text;

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
