//! Every served API version of the kinds mdiag judges, brought to the one
//! version the analysis types (apps/v1, autoscaling/v2, policy/v1...) while
//! the object is still a JSON value. A file may hold what an older cluster
//! served (`kubectl get hpa` printed autoscaling/v1 for years); the live
//! reads list the current versions and never meet these.
//!
//! An object of a judged kind in a version this table does not know is not
//! typed and becomes a gap: the file is still read, and the rules that
//! would need that object stay silent.

use serde_json::{Map, Value, json};

use mdiag_core::model::Kind;

/// Rewrites an object of an older version into the current one, in place.
type Convert = fn(&mut Map<String, Value>);

/// (apiVersion, kind) -> what brings it to the version the analysis types.
const CONVERSIONS: &[(&str, &str, Convert)] = &[
    // The workloads' fields kept their names into apps/v1; only defaults
    // changed, and a dump holds what the server wrote.
    ("apps/v1beta1", "Deployment", to_apps_v1),
    ("apps/v1beta1", "StatefulSet", to_apps_v1),
    ("apps/v1beta1", "ControllerRevision", to_apps_v1),
    ("apps/v1beta2", "Deployment", to_apps_v1),
    ("apps/v1beta2", "ReplicaSet", to_apps_v1),
    ("apps/v1beta2", "StatefulSet", to_apps_v1),
    ("apps/v1beta2", "DaemonSet", to_apps_v1),
    ("apps/v1beta2", "ControllerRevision", to_apps_v1),
    ("extensions/v1beta1", "Deployment", to_apps_v1),
    ("extensions/v1beta1", "ReplicaSet", to_apps_v1),
    ("extensions/v1beta1", "DaemonSet", to_apps_v1),
    ("autoscaling/v1", "HorizontalPodAutoscaler", hpa_from_v1),
    (
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        hpa_from_v2beta1,
    ),
    // The shape of autoscaling/v2.
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", |o| {
        set_version(o, "autoscaling/v2")
    }),
    // The same fields. An empty selector meant no Pods in v1beta1 and all
    // Pods in v1: the selector is kept as written, nothing is inferred.
    ("policy/v1beta1", "PodDisruptionBudget", |o| {
        set_version(o, "policy/v1")
    }),
    ("events.k8s.io/v1beta1", "Event", |o| {
        set_version(o, "events.k8s.io/v1")
    }),
    ("coordination.k8s.io/v1beta1", "Lease", |o| {
        set_version(o, "coordination.k8s.io/v1")
    }),
    // Served until 1.25 with the fields batch/v1 kept.
    ("batch/v1beta1", "CronJob", |o| set_version(o, "batch/v1")),
];

/// The versions read as they are, by kind. A ModelService (found in any
/// group by discovery), an InferenceService (v1beta1 and v1alpha1 hold the
/// status fields read), a Rollout (v1alpha1 is the only one Argo serves), a
/// LeaderWorkerSet (v1, the one version LWS serves)
/// and an HTTPRoute (read untyped) are read in any.
fn current(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::ModelService
        | Kind::InferenceService
        | Kind::Rollout
        | Kind::LeaderWorkerSet
        | Kind::KnativeService
        | Kind::HttpRoute => &[],
        Kind::Deployment
        | Kind::ReplicaSet
        | Kind::StatefulSet
        | Kind::DaemonSet
        | Kind::ControllerRevision => &["apps/v1"],
        Kind::Pod | Kind::Service | Kind::Node => &["v1"],
        Kind::EndpointSlice => &["discovery.k8s.io/v1"],
        Kind::Event => &["v1", "events.k8s.io/v1"],
        Kind::Lease => &["coordination.k8s.io/v1"],
        Kind::HorizontalPodAutoscaler => &["autoscaling/v2"],
        Kind::PodDisruptionBudget => &["policy/v1"],
        Kind::Job | Kind::CronJob => &["batch/v1"],
    }
}

/// The judged kind an object is of, whatever its version: its kind name in
/// the kind's group, or in a group the kind was served from before
/// (`extensions` for the workloads, `events.k8s.io` for Events).
fn judged_kind(group: &str, kind: &str) -> Option<Kind> {
    // Two kinds share a name (Knative's Service and the core one): each
    // is tried in its own groups.
    Kind::ALL.iter().copied().find(|&found| {
        let groups: &[&str] = match found {
            // Read in any version (see `current`): never converted.
            _ if current(found).is_empty() => &[],
            Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet => &["apps", "extensions"],
            Kind::Event => &["", "events.k8s.io"],
            other => &[other.group()],
        };
        found.name() == kind && groups.contains(&group)
    })
}

/// What reading an object's version came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// Read as written, or converted to the version the analysis types.
    Read,
    /// A judged kind in a version mdiag does not read: the words of its gap.
    NotRead { kind: Kind, reason: String },
}

/// Brings `object` to the version the analysis types, when it is of a
/// judged kind; any other object is left as it is.
pub(crate) fn convert(object: &mut Value) -> Version {
    let Value::Object(map) = object else {
        return Version::Read;
    };
    let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind_name = map.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let Some(kind) = judged_kind(group, kind_name) else {
        return Version::Read;
    };
    // The items of a typed list (`PodList`) may name no version of their
    // own: they are typed as they were.
    if api_version.is_empty() || current(kind).contains(&api_version) {
        return Version::Read;
    }
    let found = CONVERSIONS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind_name);
    match found {
        Some((_, _, convert)) => {
            convert(map);
            Version::Read
        }
        None => Version::NotRead {
            kind,
            reason: format!("apiVersion {api_version} of {kind_name} is not read"),
        },
    }
}

fn set_version(object: &mut Map<String, Value>, version: &str) {
    object.insert("apiVersion".into(), Value::String(version.into()));
}

fn to_apps_v1(object: &mut Map<String, Value>) {
    set_version(object, "apps/v1");
}

/// Where autoscaling/v1 kept what it had no field for.
const V1_CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const V1_METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const V1_CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const V1_BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// autoscaling/v1: one CPU target and its current value as fields; its
/// conditions, other metrics and behaviour as JSON in annotations (in the
/// v2beta1 shape for metrics), as the API server converts it.
fn hpa_from_v1(object: &mut Map<String, Value>) {
    set_version(object, "autoscaling/v2");
    let take = |object: &mut Map<String, Value>, key: &str| -> Option<Value> {
        let annotations = object.get_mut("metadata")?.get_mut("annotations")?;
        let annotations = annotations.as_object_mut()?;
        let parsed = serde_json::from_str(annotations.get(key)?.as_str()?).ok()?;
        annotations.remove(key);
        Some(parsed)
    };
    let conditions = take(object, V1_CONDITIONS);
    let metrics = take(object, V1_METRICS);
    let current_metrics = take(object, V1_CURRENT_METRICS);
    let behavior = take(object, V1_BEHAVIOR);
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        let mut converted: Vec<Value> = match metrics {
            Some(Value::Array(metrics)) => metrics.into_iter().map(metric_spec).collect(),
            _ => Vec::new(),
        };
        if let Some(target) = spec.remove("targetCPUUtilizationPercentage") {
            converted.insert(
                0,
                json!({"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": target}}}),
            );
        }
        if !converted.is_empty() {
            spec.insert("metrics".into(), Value::Array(converted));
        }
        if let Some(behavior) = behavior {
            spec.insert("behavior".into(), behavior);
        }
    }
    let status = object
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(status) = status.as_object_mut() else {
        return;
    };
    let mut current: Vec<Value> = match current_metrics {
        Some(Value::Array(metrics)) => metrics.into_iter().map(metric_status).collect(),
        _ => Vec::new(),
    };
    if let Some(cpu) = status.remove("currentCPUUtilizationPercentage") {
        current.insert(
            0,
            json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": cpu}}}),
        );
    }
    if !current.is_empty() {
        status.insert("currentMetrics".into(), Value::Array(current));
    }
    if let Some(conditions @ Value::Array(_)) = conditions {
        status.insert("conditions".into(), conditions);
    }
    if status.is_empty() {
        object.remove("status");
    }
}

/// autoscaling/v2beta1: its metrics name their target in fields of their
/// own (`targetAverageUtilization`...) where v2 has one `target`.
fn hpa_from_v2beta1(object: &mut Map<String, Value>) {
    set_version(object, "autoscaling/v2");
    for (part, field, convert) in [
        ("spec", "metrics", metric_spec as fn(Value) -> Value),
        ("status", "currentMetrics", metric_status),
    ] {
        let metrics = object
            .get_mut(part)
            .and_then(|p| p.get_mut(field))
            .and_then(Value::as_array_mut);
        for metric in metrics.into_iter().flatten() {
            *metric = convert(std::mem::take(metric));
        }
    }
}

/// The source of a v2beta1 metric: its key in the metric and its name's.
fn source_key(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        "External" => "external",
        _ => return None,
    })
}

/// One v2beta1 MetricSpec as v2 writes it.
fn metric_spec(metric: Value) -> Value {
    convert_metric(metric, |source| {
        let mut target = Map::new();
        let mut put = |kind: &str, field: &str, value: Option<Value>| {
            if let Some(value) = value
                && !target.contains_key("type")
            {
                target.insert("type".into(), Value::String(kind.into()));
                target.insert(field.into(), value);
            }
        };
        put(
            "Utilization",
            "averageUtilization",
            source.remove("targetAverageUtilization"),
        );
        put(
            "AverageValue",
            "averageValue",
            source.remove("targetAverageValue"),
        );
        put("Value", "value", source.remove("targetValue"));
        // An Object metric's average target was already named so.
        put(
            "AverageValue",
            "averageValue",
            source.remove("averageValue"),
        );
        ("target", target)
    })
}

/// One v2beta1 MetricStatus as v2 writes it.
fn metric_status(metric: Value) -> Value {
    convert_metric(metric, |source| {
        let mut current = Map::new();
        for (old, new) in [
            ("currentAverageUtilization", "averageUtilization"),
            ("currentAverageValue", "averageValue"),
            ("currentValue", "value"),
            ("averageValue", "averageValue"),
        ] {
            if let Some(value) = source.remove(old) {
                current.entry(new).or_insert(value);
            }
        }
        ("current", current)
    })
}

/// The parts every v2beta1 metric source renamed the same way: `metricName`
/// and its selector into `metric`, an Object's `target` into
/// `describedObject`; `values` takes out the target or current values.
fn convert_metric(
    mut metric: Value,
    values: impl FnOnce(&mut Map<String, Value>) -> (&'static str, Map<String, Value>),
) -> Value {
    let kind = metric["type"].as_str().unwrap_or("").to_string();
    let Some(key) = source_key(&kind) else {
        return metric;
    };
    let Some(source) = metric.get_mut(key).and_then(Value::as_object_mut) else {
        return metric;
    };
    if kind == "Object"
        && let Some(described) = source.remove("target")
    {
        source.insert("describedObject".into(), described);
    }
    let (field, converted) = values(source);
    if let Some(name) = source.remove("metricName") {
        let mut identifier = Map::new();
        identifier.insert("name".into(), name);
        let selector = source
            .remove("selector")
            .or_else(|| source.remove("metricSelector"));
        if let Some(selector) = selector {
            identifier.insert("selector".into(), selector);
        }
        source.insert("metric".into(), Value::Object(identifier));
    }
    source.insert(field.into(), Value::Object(converted));
    metric
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;

    fn hpa(mut value: Value) -> HorizontalPodAutoscaler {
        assert_eq!(convert(&mut value), Version::Read);
        assert_eq!(value["apiVersion"], "autoscaling/v2");
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_v1_hpa_has_its_cpu_target_and_its_annotated_conditions() {
        let conditions = r#"[{"type":"ScalingActive","status":"False","lastTransitionTime":"2026-11-30T09:00:00Z","reason":"FailedGetResourceMetric","message":"unable to get metrics for resource cpu"}]"#;
        let h = hpa(json!({
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {
                V1_CONDITIONS: conditions, "team": "shop"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60},
            "status": {"currentReplicas": 2, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 45}
        }));
        let spec = h.spec.unwrap();
        let metric = &spec.metrics.unwrap()[0];
        assert_eq!(metric.type_, "Resource");
        let resource = metric.resource.as_ref().unwrap();
        assert_eq!(resource.name, "cpu");
        assert_eq!(resource.target.type_, "Utilization");
        assert_eq!(resource.target.average_utilization, Some(60));
        let status = h.status.unwrap();
        let current = &status.current_metrics.unwrap()[0];
        let current = &current.resource.as_ref().unwrap().current;
        assert_eq!(current.average_utilization, Some(45));
        let condition = &status.conditions.unwrap()[0];
        assert_eq!(condition.type_, "ScalingActive");
        assert_eq!(condition.reason.as_deref(), Some("FailedGetResourceMetric"));
        // The annotation became the field; the others stay.
        let annotations = h.metadata.annotations.unwrap();
        assert!(!annotations.contains_key(V1_CONDITIONS));
        assert_eq!(annotations["team"], "shop");
    }

    #[test]
    fn a_v1_hpa_without_a_cpu_target_gets_none_invented() {
        let h = hpa(json!({
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {V1_CONDITIONS: "not json"}},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5},
        }));
        assert!(h.spec.unwrap().metrics.is_none());
        assert!(h.status.is_none());
        // What cannot be read as conditions is left where it was.
        assert!(h.metadata.annotations.unwrap().contains_key(V1_CONDITIONS));
    }

    #[test]
    fn v2beta1_metrics_have_one_target_each() {
        let h = hpa(json!({
            "apiVersion": "autoscaling/v2beta1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "api"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "maxReplicas": 9, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70}},
                {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}},
                {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "100"}},
                {"type": "Object", "object": {"metricName": "hits", "targetValue": "2k",
                    "target": {"kind": "Service", "name": "api"}}},
                {"type": "External", "external": {"metricName": "queue", "targetValue": "30",
                    "metricSelector": {"matchLabels": {"q": "jobs"}}}}
            ]},
            "status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 81, "currentAverageValue": "400m"}},
                {"type": "External", "external": {"metricName": "queue", "currentValue": "12"}}
            ]}
        }));
        let metrics = h.spec.unwrap().metrics.unwrap();
        let cpu = &metrics[0].resource.as_ref().unwrap().target;
        assert_eq!(
            (cpu.type_.as_str(), cpu.average_utilization),
            ("Utilization", Some(70))
        );
        let memory = &metrics[1].resource.as_ref().unwrap().target;
        assert_eq!(memory.type_, "AverageValue");
        assert_eq!(memory.average_value.as_ref().unwrap().0, "1Gi");
        let pods = metrics[2].pods.as_ref().unwrap();
        assert_eq!(pods.metric.name, "qps");
        assert_eq!(pods.target.type_, "AverageValue");
        let object = metrics[3].object.as_ref().unwrap();
        assert_eq!(object.described_object.name, "api");
        assert_eq!(object.target.type_, "Value");
        assert_eq!(object.target.value.as_ref().unwrap().0, "2k");
        let external = metrics[4].external.as_ref().unwrap();
        assert!(external.metric.selector.is_some());
        let current = h.status.unwrap().current_metrics.unwrap();
        let cpu = &current[0].resource.as_ref().unwrap().current;
        assert_eq!(cpu.average_utilization, Some(81));
        assert_eq!(cpu.average_value.as_ref().unwrap().0, "400m");
        let queue = &current[1].external.as_ref().unwrap();
        assert_eq!(queue.metric.name, "queue");
        assert_eq!(queue.current.value.as_ref().unwrap().0, "12");
    }

    #[test]
    fn v2beta2_is_read_as_v2() {
        let h = hpa(json!({
            "apiVersion": "autoscaling/v2beta2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "api"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "maxReplicas": 9, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}
        }));
        assert_eq!(h.spec.unwrap().metrics.unwrap().len(), 1);
    }

    #[test]
    fn a_v1beta1_pdb_keeps_its_selector_as_written() {
        let mut value = json!({
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {"minAvailable": 1, "selector": {}},
            "status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 1}
        });
        assert_eq!(convert(&mut value), Version::Read);
        let pdb: k8s_openapi::api::policy::v1::PodDisruptionBudget =
            serde_json::from_value(value).unwrap();
        let selector = pdb.spec.unwrap().selector.unwrap();
        assert!(selector.match_labels.is_none() && selector.match_expressions.is_none());
        assert_eq!(pdb.status.unwrap().disruptions_allowed, 0);
    }

    #[test]
    fn old_workload_versions_are_read_as_apps_v1() {
        for (version, kind) in [
            ("apps/v1beta1", "Deployment"),
            ("apps/v1beta2", "ReplicaSet"),
            ("apps/v1beta2", "StatefulSet"),
            ("extensions/v1beta1", "DaemonSet"),
        ] {
            let mut value = json!({"apiVersion": version, "kind": kind, "metadata": {"name": "w"},
                "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {}}});
            assert_eq!(convert(&mut value), Version::Read, "{version} {kind}");
            assert_eq!(value["apiVersion"], "apps/v1");
        }
    }

    #[test]
    fn an_unknown_version_of_a_judged_kind_is_not_read_and_says_so() {
        let mut value = json!({"apiVersion": "policy/v1alpha1", "kind": "PodDisruptionBudget"});
        assert_eq!(
            convert(&mut value),
            Version::NotRead {
                kind: Kind::PodDisruptionBudget,
                reason: "apiVersion policy/v1alpha1 of PodDisruptionBudget is not read".into()
            }
        );
        // A workload from its old group, in a version never served.
        let mut value = json!({"apiVersion": "extensions/v1beta2", "kind": "Deployment"});
        assert!(matches!(convert(&mut value), Version::NotRead { .. }));
    }

    #[test]
    fn kinds_mdiag_does_not_judge_are_left_alone() {
        for value in [
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            json!({"apiVersion": "example.com/v9", "kind": "Deployment"}),
            json!({"apiVersion": "modeldock.io/v1alpha1", "kind": "ModelService"}),
            json!({"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "HTTPRoute"}),
        ] {
            let mut converted = value.clone();
            assert_eq!(convert(&mut converted), Version::Read);
            assert_eq!(converted, value);
        }
    }
}
