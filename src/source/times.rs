//! The times of an object, as Kubernetes writes them: which fields hold
//! one, which of those were observed (the replay clock of a dump is the
//! newest), and one rule for a valid time jiff cannot hold. Kubernetes
//! accepts any RFC 3339 time up to 9999-12-31T23:59:59Z, but jiff's range
//! ends about a day earlier (9999-12-30T22:00:00Z, so that every offset
//! stays in range); a time past it is held at the last second jiff holds, in
//! every reader (a file, a list page, a get, a watch), so that one far-future
//! time does not make its object, and the list it came in, unreadable.

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Whether a field is one Kubernetes keeps a time in (every `metav1.Time`
/// and `MicroTime` of the API): creation, conditions, container states,
/// Events, Leases, managedFields' write times and the rest. Only these are
/// read as times; a string elsewhere (a termination message, a log line,
/// an environment value) is free text whatever it looks like.
pub(crate) fn is_time_field(key: &str) -> bool {
    matches!(
        key,
        "acquireTime"
            | "allocationTimestamp"
            | "beginRefreshAt"
            | "completionTime"
            | "creationTimestamp"
            | "deletionTimestamp"
            | "deprecatedFirstTimestamp"
            | "deprecatedLastTimestamp"
            | "eventTime"
            | "expirationTimestamp"
            | "finishedAt"
            | "firstTimestamp"
            | "lastHeartbeatTime"
            | "lastObservedTime"
            | "lastPhaseTransitionTime"
            | "lastProbeTime"
            | "lastScaleTime"
            | "lastScheduleTime"
            | "lastSuccessfulTime"
            | "lastTimestamp"
            | "lastTransitionTime"
            | "lastUpdateTime"
            | "notAfter"
            | "notBefore"
            | "pingTime"
            | "renewTime"
            | "startTime"
            | "startedAt"
            | "time"
            | "timeAdded"
    )
}

/// Time fields that are deadlines or validity bounds, not moments anything
/// was seen: a deletionTimestamp is in the future while a Pod drains.
pub(crate) fn is_deadline(key: &str) -> bool {
    matches!(
        key,
        "deletionTimestamp" | "expirationTimestamp" | "notAfter" | "notBefore"
    )
}

/// Maps whose values are the user's strings, never the object's times.
fn is_free_map(key: &str) -> bool {
    matches!(
        key,
        "annotations" | "labels" | "data" | "binaryData" | "stringData" | "fieldsV1"
    )
}

pub(crate) fn walk_times(value: &mut Value, spec_observed: bool, newest: &mut Option<Timestamp>) {
    walk_times_in(value, spec_observed, true, newest);
}

fn walk_times_in(
    value: &mut Value,
    spec_observed: bool,
    observed: bool,
    newest: &mut Option<Timestamp>,
) {
    match value {
        Value::Array(items) => {
            for item in items {
                walk_times_in(item, spec_observed, observed, newest);
            }
        }
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let key = key.as_str();
                if is_free_map(key) {
                    continue;
                }
                if is_time_field(key)
                    && let Value::String(text) = v
                {
                    let Some(at) = time_of(text) else {
                        continue;
                    };
                    if observed && !is_deadline(key) {
                        *newest = (*newest).max(Some(at));
                    }
                    continue;
                }
                let observed = observed && (key != "spec" || spec_observed);
                walk_times_in(v, false, observed, newest);
            }
        }
        _ => {}
    }
}

/// The time a time field holds; one past jiff's range is saturated in
/// place to the last whole second jiff holds. Anything else (not a time at
/// all) is left for the typed parse to judge.
pub(crate) fn time_of(text: &mut String) -> Option<Timestamp> {
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(at);
    }
    let pieces = jiff::fmt::temporal::Pieces::parse(text.as_str()).ok()?;
    // Only the end of year 9999 (or an offset pushing it past) falls out
    // of a range that starts in year -9999.
    if pieces.date().year() < 9999 || pieces.time().is_none() || pieces.offset().is_none() {
        return None;
    }
    let last = last_instant();
    *text = last.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    Some(last)
}

/// The last whole second jiff holds.
fn last_instant() -> Timestamp {
    Timestamp::from_second(Timestamp::MAX.as_second()).unwrap_or(Timestamp::MAX)
}

/// Brings every time past jiff's range down to the last second it holds,
/// wherever a time field is (spec and status alike), but for the free maps.
pub(crate) fn saturate(value: &mut Value) {
    let mut newest = None;
    walk_times_in(value, false, false, &mut newest);
}

/// `K` from a JSON value, typed as it is when it can be, and otherwise once
/// more with its far-future times saturated; the first error is the one
/// reported when even that fails.
pub(crate) fn typed<K: DeserializeOwned>(mut value: Value) -> Result<K, serde_json::Error> {
    match K::deserialize(&value) {
        Ok(typed) => Ok(typed),
        Err(first) => {
            saturate(&mut value);
            serde_json::from_value(value).map_err(|_| first)
        }
    }
}

/// An object read as a JSON value first, so that its far-future times can
/// be saturated before it is typed: what a page's items, a get and a watch
/// decode into. It is the resource it wraps, so a watch can be of it.
#[derive(Clone, Debug)]
pub(crate) struct Lenient<K>(pub(crate) K);

impl<'de, K: DeserializeOwned> serde::Deserialize<'de> for Lenient<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        typed(value).map(Lenient).map_err(serde::de::Error::custom)
    }
}

impl<K: kube::Resource<DynamicType = ()>> kube::Resource for Lenient<K> {
    type DynamicType = ();
    // Dynamic, so that one constructor serves the namespaced and the
    // cluster-wide URL of whatever `K` is (`Api::namespaced_with`).
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &()) -> std::borrow::Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> std::borrow::Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> std::borrow::Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &()) -> std::borrow::Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        self.0.meta()
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        self.0.meta_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    #[test]
    fn a_time_past_jiffs_range_is_held_at_its_last_second_wherever_it_is() {
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": "9999-12-31T23:59:59Z",
                         "annotations": {"until": "9999-12-31T23:59:59Z"}},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                                       "lastTransitionTime": "9999-12-31T23:59:59.999999Z"}]},
        });
        assert!(
            serde_json::from_value::<Pod>(pod.clone()).is_err(),
            "jiff's range ends before"
        );
        let typed: Pod = typed(pod.clone()).unwrap();
        let created = typed.metadata.creation_timestamp.unwrap().0;
        assert_eq!(created.to_string(), "9999-12-30T22:00:00Z");
        // A free map is the user's text, never rewritten.
        assert_eq!(
            typed.metadata.annotations.unwrap()["until"],
            "9999-12-31T23:59:59Z"
        );
        let Lenient(same): Lenient<Pod> = serde_json::from_value(pod).unwrap();
        assert_eq!(same.metadata.creation_timestamp.unwrap().0, created);
    }

    #[test]
    fn what_does_not_type_for_another_reason_keeps_its_first_error() {
        let bad = json!({"metadata": {"name": 3}, "spec": {"containers": []}});
        let err = typed::<Pod>(bad).unwrap_err().to_string();
        assert!(err.contains("invalid type"), "{err}");
    }
}
