//! What the gate watches: the namespace, or one workload's chain chosen by
//! name and selectors, and the one request that decides which.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;

use crate::live::{self, Connection, Served};
use mdiag_core::chain::ControllerLocation;
use mdiag_core::model::{TargetKind, TargetSpec};

/// What to watch.
pub(crate) struct WatchPlan<'a> {
    pub namespace: &'a str,
    /// The namespace's every object, or one workload's chain.
    pub scope: &'a WatchScope,
    pub served: &'a Served,
    pub controller_spots: Vec<ControllerLocation>,
    /// The server closes each watch after this long and it is resumed; it must
    /// stay under the client's read timeout, which would cut an idle watch.
    pub watch_timeout: Duration,
}

/// What the gate watches in its namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WatchScope {
    /// Everything the plan lists: a target whose workload is not there yet,
    /// or whose Pods no selector brings (a Pod or ReplicaSet target).
    Namespace,
    /// One workload's chain.
    Chain(ChainScope),
}

/// One workload's chain as watches select it, so that a gate in a
/// namespace of 10,000 other Pods holds and copies only its own: the
/// workload by name, its ReplicaSets or revisions and its Pods by its
/// selector (which apps/v1 does not let change), and its ModelService by
/// name. The Events of the namespace are watched, but only those about the
/// chain are kept as they arrive. What a namespace has few of (Services,
/// HPAs, PDBs) and the EndpointSlices stay namespace-wide, so that a
/// Service created during the gate still brings its slices; a Pod their
/// endpoints name outside the selector is got by name ([`Feed`](super::Feed)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainScope {
    /// The Deployment, StatefulSet or DaemonSet.
    pub workload: String,
    /// Its Pods' selector, as the API takes it in `labelSelector`.
    pub selector: String,
    /// The ModelService that owns it.
    pub model_service: Option<String>,
    /// The InferenceService that owns it (KServe's predictor).
    pub inference_service: Option<String>,
}

/// The longest base the apiserver keeps of a `generateName`: a generated
/// name is the base cut to this many characters plus five random ones.
const GENERATED_BASE_MAX: usize = 58;

impl ChainScope {
    /// How a watch of `resource` in the namespace selects the chain: by
    /// name, by labels, or not at all (the whole namespace).
    pub fn selects(&self, resource: &str) -> (Option<&str>, Option<&str>) {
        match resource {
            "deployments" | "statefulsets" | "daemonsets" => (Some(&self.workload), None),
            "replicasets" | "pods" | "controllerrevisions" => (None, Some(&self.selector)),
            "modelservices" => (self.model_service.as_deref(), None),
            "inferenceservices" => (self.inference_service.as_deref(), None),
            _ => (None, None),
        }
    }

    /// Whether the Events about an object of `kind` named `name` may be
    /// about the chain. The Pods, ReplicaSets and revisions of a workload
    /// are named after it (`web-7d4b9c-x2x9z`, `shard-0`), so Events about
    /// those kinds are kept when the name starts as theirs do; a neighbour
    /// whose name starts the same way (`web-api`) only adds Events nothing
    /// reads. Of the workloads and ModelServices, only the chain's own;
    /// Events about other kinds are few and all kept.
    pub fn keeps_events_about(&self, kind: &str, name: &str) -> bool {
        match kind {
            "Pod" | "ReplicaSet" | "ControllerRevision" => {
                let prefix = format!("{}-", self.workload);
                let cut = prefix.len().min(GENERATED_BASE_MAX);
                name.as_bytes().starts_with(&prefix.as_bytes()[..cut])
            }
            "Deployment" | "StatefulSet" | "DaemonSet" => name == self.workload,
            "ModelService" => self.model_service.as_deref().is_none_or(|m| m == name),
            "InferenceService" => self.inference_service.as_deref().is_none_or(|m| m == name),
            _ => true,
        }
    }
}

/// The chain a gate on `target` watches: its workload's, when the workload
/// is there with a selector the API can take; else the namespace (a
/// workload not created yet, a Pod or ReplicaSet target). A ModelService's
/// Deployment is named after it by its controller, an InferenceService's
/// predictor `NAME-predictor` by KServe; either must be controlled by it.
/// One request, before the watches start.
pub(crate) async fn chain_scope(
    conn: &Connection,
    namespace: &str,
    target: &TargetSpec,
) -> WatchScope {
    use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
    let client = || conn.client.clone();
    let name = target.name.as_str();
    let predictor = format!("{name}-predictor");
    let read = match target.kind {
        TargetKind::InferenceService => conn
            .get_opt(
                Api::<Deployment>::namespaced(client(), namespace),
                &predictor,
            )
            .await
            .map(|d| d.map(|d| (d.metadata, d.spec.map(|s| s.selector)))),
        TargetKind::ModelService | TargetKind::Deployment => conn
            .get_opt(Api::<Deployment>::namespaced(client(), namespace), name)
            .await
            .map(|d| d.map(|d| (d.metadata, d.spec.map(|s| s.selector)))),
        TargetKind::StatefulSet => conn
            .get_opt(Api::<StatefulSet>::namespaced(client(), namespace), name)
            .await
            .map(|s| s.map(|s| (s.metadata, s.spec.map(|s| s.selector)))),
        TargetKind::DaemonSet => conn
            .get_opt(Api::<DaemonSet>::namespaced(client(), namespace), name)
            .await
            .map(|d| d.map(|d| (d.metadata, d.spec.map(|s| s.selector)))),
        _ => return WatchScope::Namespace,
    };
    let Ok(Some((meta, Some(selector)))) = read else {
        return WatchScope::Namespace;
    };
    let controlled_by = |kind: &str| {
        meta.owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == kind && o.controller == Some(true))
            .map(|o| o.name.clone())
    };
    let owner = controlled_by("ModelService");
    let inference_service = controlled_by("InferenceService");
    if target.kind == TargetKind::ModelService && owner.as_deref() != Some(name) {
        return WatchScope::Namespace;
    }
    if target.kind == TargetKind::InferenceService && inference_service.as_deref() != Some(name) {
        return WatchScope::Namespace;
    }
    match live::selector_query(&selector) {
        Some(selector) => WatchScope::Chain(ChainScope {
            workload: meta.name.clone().unwrap_or_else(|| name.to_string()),
            selector,
            model_service: owner,
            inference_service,
        }),
        None => WatchScope::Namespace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(workload: &str) -> ChainScope {
        ChainScope {
            workload: workload.into(),
            selector: format!("app={workload}"),
            model_service: Some(workload.into()),
            inference_service: None,
        }
    }

    #[test]
    fn a_chain_watches_its_workload_by_name_and_its_pods_by_selector() {
        let c = chain("web");
        assert_eq!(c.selects("deployments"), (Some("web"), None));
        assert_eq!(c.selects("statefulsets"), (Some("web"), None));
        assert_eq!(c.selects("modelservices"), (Some("web"), None));
        for resource in ["pods", "replicasets", "controllerrevisions"] {
            assert_eq!(c.selects(resource), (None, Some("app=web")), "{resource}");
        }
        for resource in ["services", "endpointslices", "events", "nodes"] {
            assert_eq!(c.selects(resource), (None, None), "{resource}");
        }
        let plain = ChainScope {
            model_service: None,
            ..chain("web")
        };
        assert_eq!(plain.selects("modelservices"), (None, None));
        // KServe's predictor: the Deployment by its own name, the
        // InferenceService above it by its.
        let predictor = ChainScope {
            model_service: None,
            inference_service: Some("llama".into()),
            ..chain("llama-predictor")
        };
        assert_eq!(
            predictor.selects("deployments"),
            (Some("llama-predictor"), None)
        );
        assert_eq!(
            predictor.selects("inferenceservices"),
            (Some("llama"), None)
        );
        assert!(predictor.keeps_events_about("InferenceService", "llama"));
        assert!(!predictor.keeps_events_about("InferenceService", "mistral"));
        assert!(predictor.keeps_events_about("Pod", "llama-predictor-7d4b9c-x2x9z"));
    }

    #[test]
    fn a_chain_keeps_the_events_about_what_is_named_after_its_workload() {
        let c = chain("web");
        assert!(c.keeps_events_about("Pod", "web-7d4b9c-x2x9z"));
        assert!(c.keeps_events_about("ReplicaSet", "web-7d4b9c"));
        assert!(c.keeps_events_about("Pod", "web-0"));
        assert!(!c.keeps_events_about("Pod", "shop-7d4b9c-x2x9z"));
        assert!(!c.keeps_events_about("Pod", "web"));
        assert!(!c.keeps_events_about("ControllerRevision", "webx-1"));
        // Other kinds are few: all kept.
        assert!(c.keeps_events_about("Service", "anything"));
        assert!(c.keeps_events_about("HorizontalPodAutoscaler", "other"));
        assert!(c.keeps_events_about("Deployment", "web"));
        assert!(!c.keeps_events_about("Deployment", "web-api"));
        assert!(!c.keeps_events_about("ModelService", "shop"));
        // A long name: the apiserver cuts a generateName base to 58
        // characters before adding five of its own.
        let long = "a".repeat(60);
        let c = chain(&long);
        let generated = format!("{}x2x9z", &format!("{long}-7d4b9c-")[..58]);
        assert!(c.keeps_events_about("Pod", &generated));
        assert!(!c.keeps_events_about("Pod", &format!("b{}", &generated[1..])));
    }
}
