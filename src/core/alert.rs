//! Alerts as the on-call engineer receives them: an Alertmanager webhook
//! payload, Alertmanager's API list of alerts, one alert, or just its labels.
//! Pure: text in, alerts out; then labels in, the workload they name out.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use crate::analysis::Diagnosis;
use crate::catalogue::Message;
use crate::chain::{self, TargetNotFound, workloads};
use crate::model::{Clock, Snapshot, TargetKind, TargetSpec};

/// One alert, in any of the shapes mdiag reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// `firing` or `resolved` (webhook), `active`/`suppressed` (API); unknown
    /// when only labels were given.
    pub status: Option<String>,
    pub starts_at: Option<Timestamp>,
    /// When it resolved; Alertmanager sends the zero time while firing.
    pub ends_at: Option<Timestamp>,
}

impl Alert {
    pub fn name(&self) -> &str {
        self.labels
            .get("alertname")
            .map_or("(no alertname)", String::as_str)
    }

    pub fn resolved(&self) -> bool {
        self.status.as_deref() == Some("resolved")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{}", crate::catalogue::Localized::message(self).en())]
pub enum AlertError {
    /// The parsers' own words.
    Syntax {
        json: String,
        yaml: String,
    },
    Shape,
}

impl crate::catalogue::Localized for AlertError {
    fn message(&self) -> crate::catalogue::Message {
        use crate::catalogue::Message;
        match self {
            AlertError::Syntax { json, yaml } => Message::new("error.alert.syntax")
                .arg("json", json.as_str())
                .arg("yaml", yaml.as_str()),
            AlertError::Shape => Message::new("error.alert.shape"),
        }
    }
}

#[derive(Deserialize)]
struct RawAlert {
    #[serde(default)]
    labels: BTreeMap<String, Value>,
    #[serde(default)]
    annotations: BTreeMap<String, Value>,
    #[serde(default)]
    status: Option<Value>,
    #[serde(default, rename = "startsAt")]
    starts_at: Option<String>,
    #[serde(default, rename = "endsAt")]
    ends_at: Option<String>,
}

/// Alertmanager writes `0001-01-01T00:00:00Z` for "not set".
fn time(text: Option<&str>) -> Option<Timestamp> {
    let t: Timestamp = text?.parse().ok()?;
    (t.as_second() > 0).then_some(t)
}

fn strings(map: BTreeMap<String, Value>) -> BTreeMap<String, String> {
    map.into_iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k, s)),
            Value::Number(n) => Some((k, n.to_string())),
            Value::Bool(b) => Some((k, b.to_string())),
            _ => None,
        })
        .collect()
}

fn from_raw(raw: RawAlert) -> Alert {
    // The API gives {"state": "active"}; the webhook a plain string.
    let status = match raw.status {
        Some(Value::String(s)) => Some(s),
        Some(Value::Object(o)) => o.get("state").and_then(|s| s.as_str()).map(str::to_string),
        _ => None,
    };
    // Annotations are prose the report quotes (a summary, a description);
    // labels name what to trace and are kept whole.
    let mut annotations = strings(raw.annotations);
    annotations
        .values_mut()
        .for_each(crate::analysis::quote::bound);
    Alert {
        labels: strings(raw.labels),
        annotations,
        status,
        starts_at: time(raw.starts_at.as_deref()),
        ends_at: time(raw.ends_at.as_deref()),
    }
}

/// Reads alerts from the text of a file or of stdin.
pub fn parse(text: &str) -> Result<Vec<Alert>, AlertError> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(json) => serde_saphyr::from_str(text).map_err(|yaml| AlertError::Syntax {
            json: json.to_string(),
            yaml: yaml.to_string(),
        })?,
    };
    let one = |v: Value| -> Result<Alert, AlertError> {
        serde_json::from_value::<RawAlert>(v)
            .map(from_raw)
            .map_err(|_| AlertError::Shape)
    };
    let alerts = match value {
        Value::Array(items) => items.into_iter().map(one).collect::<Result<Vec<_>, _>>()?,
        Value::Object(map) if map.get("alerts").is_some_and(Value::is_array) => {
            let Some(Value::Array(items)) = map.get("alerts").cloned() else {
                return Err(AlertError::Shape);
            };
            items.into_iter().map(one).collect::<Result<Vec<_>, _>>()?
        }
        Value::Object(map) if map.get("labels").is_some_and(Value::is_object) => {
            vec![one(Value::Object(map))?]
        }
        // Only labels: every value a string.
        Value::Object(map) if !map.is_empty() && map.values().all(Value::is_string) => {
            vec![Alert {
                labels: strings(map.into_iter().collect()),
                annotations: BTreeMap::new(),
                status: None,
                starts_at: None,
                ends_at: None,
            }]
        }
        _ => return Err(AlertError::Shape),
    };
    if alerts.is_empty() || alerts.iter().all(|a| a.labels.is_empty()) {
        return Err(AlertError::Shape);
    }
    Ok(alerts)
}

/// What an alert's labels name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A workload mdiag can trace directly (ModelService, Deployment, Pod).
    Target(TargetSpec),
    /// A ReplicaSet: traced through the Deployment that owns it, else on its own.
    ReplicaSet { namespace: String, name: String },
    /// A Service: traced through the workload whose chain holds it.
    Service { namespace: String, name: String },
    /// Only a namespace: its workloads are triaged.
    Namespace(String),
    /// Nothing to go on, and why.
    Unknown(Message),
}

/// A label, preferring the `exported_` copy Prometheus makes when a scraped
/// series (kube-state-metrics) had a label the target also has.
fn label<'a>(labels: &'a BTreeMap<String, String>, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| {
        labels
            .get(&format!("exported_{n}"))
            .or_else(|| labels.get(*n))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    })
}

/// Maps an alert's labels onto what to trace, most specific first: a
/// ModelService, a Deployment, a StatefulSet, a DaemonSet, a Pod, a
/// ReplicaSet, a Service; else the
/// namespace. `default_namespace` is used when the labels name none.
pub fn subject(alert: &Alert, default_namespace: Option<&str>) -> Subject {
    let l = &alert.labels;
    let Some(namespace) = label(l, &["namespace", "kubernetes_namespace"]).or(default_namespace)
    else {
        return Subject::Unknown(Message::new("alert.no_namespace"));
    };
    let target = |kind, name: &str| {
        Subject::Target(TargetSpec {
            kind,
            namespace: Some(namespace.to_string()),
            name: name.to_string(),
        })
    };
    if let Some(n) = label(l, &["modelservice", "msvc", "model_service"]) {
        return target(TargetKind::ModelService, n);
    }
    if let Some(n) = label(l, &["deployment"]) {
        return target(TargetKind::Deployment, n);
    }
    // kube-state-metrics names them so (KubeStatefulSetUpdateNotRolledOut,
    // KubeDaemonSetRolloutStuck).
    if let Some(n) = label(l, &["statefulset"]) {
        return target(TargetKind::StatefulSet, n);
    }
    if let Some(n) = label(l, &["daemonset"]) {
        return target(TargetKind::DaemonSet, n);
    }
    if let Some(n) = label(l, &["pod", "kubernetes_pod_name", "pod_name"]) {
        return target(TargetKind::Pod, n);
    }
    if let Some(n) = label(l, &["replicaset"]) {
        return Subject::ReplicaSet {
            namespace: namespace.to_string(),
            name: n.to_string(),
        };
    }
    if let Some(n) = label(l, &["service", "service_name"]) {
        return Subject::Service {
            namespace: namespace.to_string(),
            name: n.to_string(),
        };
    }
    Subject::Namespace(namespace.to_string())
}

/// The cluster an alert is about, as multi-cluster Prometheus setups
/// label it (`cluster`, `cluster_name`): what picks the kubeconfig context
/// when a triage names several.
pub fn cluster_of(alert: &Alert) -> Option<&str> {
    label(&alert.labels, &["cluster", "cluster_name"])
}

/// The namespace a subject is in, when the alert says.
pub fn namespace_of(subject: &Subject) -> Option<String> {
    match subject {
        Subject::Target(t) => t.namespace.clone(),
        Subject::ReplicaSet { namespace, .. }
        | Subject::Service { namespace, .. }
        | Subject::Namespace(namespace) => Some(namespace.clone()),
        Subject::Unknown(_) => None,
    }
}

/// The workload to trace for a subject, and a note when it was inferred.
/// `at` and `wall` are the clock the report is judged at (`--at`, and the
/// wall clock the command read once), so a namespace alert picks its worst
/// workload at the same time the report shows.
pub fn resolve(
    snapshot: &Snapshot,
    ns: &str,
    subject: &Subject,
    controller: Option<&chain::ControllerLocation>,
    at: Option<Timestamp>,
    wall: Timestamp,
) -> Result<(TargetSpec, Option<Message>), Message> {
    let in_ns = |kind, name: &str| TargetSpec {
        kind,
        namespace: Some(ns.to_string()),
        name: name.to_string(),
    };
    match subject {
        Subject::Target(t) => match chain::walk(snapshot, t, ns, controller) {
            Ok(_) => Ok((t.clone(), None)),
            Err(TargetNotFound { kind, name, .. }) => Err(Message::new("alert.no_target")
                .arg("kind", kind.to_string())
                .arg("name", name)
                .arg("namespace", ns)),
        },
        Subject::ReplicaSet { name, .. } => {
            // A Deployment's ReplicaSet is traced through the Deployment; one
            // no Deployment of the snapshot owns is a workload of its own.
            let rs = in_ns(TargetKind::ReplicaSet, name);
            match chain::walk(snapshot, &rs, ns, controller) {
                Ok(c) => match c.deployment {
                    Some(d) => {
                        let owner = d.metadata.name.clone().unwrap_or_default();
                        Ok((
                            in_ns(TargetKind::Deployment, &owner),
                            Some(
                                Message::new("alert.rs_owner")
                                    .arg("replicaset", name)
                                    .arg("deployment", owner.as_str()),
                            ),
                        ))
                    }
                    None => Ok((rs, None)),
                },
                Err(_) => Err(Message::new("alert.no_target")
                    .arg("kind", "ReplicaSet")
                    .arg("name", name)
                    .arg("namespace", ns)),
            }
        }
        Subject::Service { name, .. } => workloads(snapshot, Some(ns))
            .into_iter()
            .find(|w| {
                chain::walk(snapshot, &w.target, ns, controller).is_ok_and(|c| {
                    c.services
                        .iter()
                        .any(|s| s.metadata.name.as_deref() == Some(name.as_str()))
                })
            })
            .map(|w| {
                let note = Message::new("alert.service_owner")
                    .arg("service", name)
                    .arg("kind", w.target.kind.to_string())
                    .arg("workload", &w.target.name);
                (w.target, Some(note))
            })
            .ok_or_else(|| {
                Message::new("alert.no_service_owner")
                    .arg("namespace", ns)
                    .arg("service", format!("{name:?}"))
            }),
        Subject::Namespace(_) => {
            let mut items: Vec<(TargetSpec, Diagnosis)> = workloads(snapshot, Some(ns))
                .into_iter()
                .filter_map(|w| {
                    let c = chain::walk(snapshot, &w.target, ns, controller).ok()?;
                    let now = Clock::choose(&snapshot.origin, at, wall).now;
                    Some((w.target, crate::analysis::analyze(snapshot, &c, now)))
                })
                .collect();
            let mut ranked: Vec<Diagnosis> = items.iter().map(|(_, d)| d.clone()).collect();
            crate::analysis::triage::rank(&mut ranked);
            let worst = ranked.first().map(|d| d.target.clone());
            items.retain(|(_, d)| Some(&d.target) == worst.as_ref());
            items
                .into_iter()
                .next()
                .map(|(t, _)| {
                    (
                        t,
                        Some(
                            Message::new("alert.namespace_only")
                                .arg("namespace", ns)
                                .arg("program", crate::catalogue::program()),
                        ),
                    )
                })
                .ok_or_else(|| Message::new("alert.no_workload").arg("namespace", ns))
        }
        Subject::Unknown(why) => Err(why.clone()),
    }
}

/// Whether two targets are one workload (a Pod and its ModelService are).
pub fn same_workload(a: &TargetSpec, b: &TargetSpec, snapshot: &Snapshot, ns: &str) -> bool {
    if a == b {
        return true;
    }
    let root = |t: &TargetSpec| {
        chain::walk(snapshot, t, ns, None).ok().and_then(|c| {
            c.platform
                .and_then(|p| p.object.metadata.uid.clone())
                .or_else(|| c.deployment.and_then(|d| d.metadata.uid.clone()))
                .or_else(|| c.pod_set.and_then(|s| s.meta().uid.clone()))
        })
    };
    a.namespace == b.namespace && root(a).is_some() && root(a) == root(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_payload_gives_every_alert_with_its_times() {
        let text = r#"{"version":"4","status":"firing","receiver":"oncall","groupLabels":{},
            "alerts":[
              {"status":"firing","labels":{"alertname":"A","namespace":"ns","pod":"p-1"},
               "annotations":{"summary":"s"},"startsAt":"2026-11-28T10:05:00Z","endsAt":"0001-01-01T00:00:00Z"},
              {"status":"resolved","labels":{"alertname":"B","namespace":"ns"},
               "startsAt":"2026-11-28T09:00:00Z","endsAt":"2026-11-28T09:30:00Z"}]}"#;
        let alerts = parse(text).unwrap();
        assert_eq!(alerts.len(), 2);
        assert_eq!(alerts[0].name(), "A");
        assert_eq!(alerts[0].ends_at, None, "the zero time means not set");
        assert_eq!(
            alerts[0].starts_at,
            Some("2026-11-28T10:05:00Z".parse().unwrap())
        );
        assert!(alerts[1].resolved());
        assert_eq!(alerts[0].annotations["summary"], "s");
    }

    #[test]
    fn the_api_list_a_single_alert_and_bare_labels_all_read() {
        let api = r#"[{"labels":{"alertname":"A","namespace":"ns"},"status":{"state":"active"},"startsAt":"2026-11-28T10:05:00Z"}]"#;
        assert_eq!(parse(api).unwrap()[0].status.as_deref(), Some("active"));
        let one = "labels:\n  alertname: A\n  namespace: ns\n";
        assert_eq!(parse(one).unwrap()[0].labels["namespace"], "ns");
        let bare = r#"{"alertname":"A","namespace":"ns","deployment":"web"}"#;
        assert_eq!(parse(bare).unwrap()[0].labels["deployment"], "web");
    }

    #[test]
    fn what_is_not_an_alert_says_what_is_expected() {
        assert!(matches!(parse("{}"), Err(AlertError::Shape)));
        assert!(matches!(parse("[1, 2]"), Err(AlertError::Shape)));
        assert!(matches!(parse(r#"{"alerts": []}"#), Err(AlertError::Shape)));
        assert!(matches!(
            parse("{not json: ["),
            Err(AlertError::Syntax { .. })
        ));
    }

    fn with(labels: &[(&str, &str)]) -> Alert {
        Alert {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            annotations: BTreeMap::new(),
            status: None,
            starts_at: None,
            ends_at: None,
        }
    }

    #[test]
    fn labels_name_the_most_specific_workload() {
        let s = subject(
            &with(&[("namespace", "ns"), ("pod", "p"), ("deployment", "d")]),
            None,
        );
        assert_eq!(
            s,
            Subject::Target(TargetSpec {
                kind: TargetKind::Deployment,
                namespace: Some("ns".into()),
                name: "d".into()
            })
        );
        let s = subject(
            &with(&[("namespace", "ns"), ("modelservice", "m"), ("pod", "p")]),
            None,
        );
        assert!(matches!(s, Subject::Target(t) if t.kind == TargetKind::ModelService));
        let s = subject(&with(&[("namespace", "ns"), ("service", "svc")]), None);
        assert!(matches!(s, Subject::Service { name, .. } if name == "svc"));
        // kube-state-metrics' rollout alerts name the set, and the Pod of
        // the set is less specific than the set.
        let s = subject(
            &with(&[
                ("namespace", "ns"),
                ("statefulset", "web"),
                ("pod", "web-0"),
            ]),
            None,
        );
        assert!(
            matches!(s, Subject::Target(t) if t.kind == TargetKind::StatefulSet && t.name == "web")
        );
        let s = subject(&with(&[("namespace", "ns"), ("daemonset", "agent")]), None);
        assert!(
            matches!(s, Subject::Target(t) if t.kind == TargetKind::DaemonSet && t.name == "agent")
        );
        let s = subject(&with(&[("namespace", "ns")]), None);
        assert_eq!(s, Subject::Namespace("ns".into()));
        assert!(matches!(
            subject(&with(&[("pod", "p")]), None),
            Subject::Unknown(_)
        ));
        let s = subject(&with(&[("pod", "p")]), Some("fallback"));
        assert!(matches!(s, Subject::Target(t) if t.namespace.as_deref() == Some("fallback")));
    }

    #[test]
    fn kube_state_metrics_labels_win_over_the_scrape_target() {
        // The alert's `namespace`/`pod` are kube-state-metrics' own; the
        // exported_ ones are the object's.
        let s = subject(
            &with(&[
                ("namespace", "monitoring"),
                ("pod", "kube-state-metrics-0"),
                ("exported_namespace", "ns"),
                ("exported_pod", "p"),
            ]),
            None,
        );
        assert_eq!(
            s,
            Subject::Target(TargetSpec {
                kind: TargetKind::Pod,
                namespace: Some("ns".into()),
                name: "p".into()
            })
        );
    }
}
