//! Writes Events the way Kubernetes components do, in both shapes:
//!
//! - core/v1 Events with `count`, `firstTimestamp`, `lastTimestamp` and
//!   `source` (what the kubelet's recorder writes); a repeat of the same
//!   event patches `count` and `lastTimestamp` instead of creating another;
//! - events.k8s.io/v1 Events with `eventTime`, `action`, `reportingController`
//!   and, from the second occurrence on, `series {count, lastObservedTime}`.
//!
//! Names are `<object>.<hex nanoseconds>` as client-go makes them. Errors are
//! reported on stderr and never fail the caller: an Event is best effort.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event as NewEvent;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::{Mutex, watch};

use crate::{event_name, fmt_micro, fmt_time, is_not_found, now};

/// The object an Event is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObjRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    /// `spec.containers{NAME}` for container events.
    pub field_path: Option<String>,
}

impl ObjRef {
    /// Where Events about this object go: its namespace, or `default` for
    /// cluster-scoped objects (Nodes).
    pub fn event_namespace(&self) -> &str {
        if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// The same object, about one of its containers.
    pub fn container(&self, name: &str) -> ObjRef {
        ObjRef {
            field_path: Some(format!("spec.containers{{{name}}}")),
            ..self.clone()
        }
    }

    pub fn init_container(&self, name: &str) -> ObjRef {
        ObjRef {
            field_path: Some(format!("spec.initContainers{{{name}}}")),
            ..self.clone()
        }
    }

    fn to_json(&self) -> Value {
        let mut v = json!({
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
        });
        if !self.namespace.is_empty() {
            v["namespace"] = json!(self.namespace);
        }
        if !self.resource_version.is_empty() {
            v["resourceVersion"] = json!(self.resource_version);
        }
        if let Some(fp) = &self.field_path {
            v["fieldPath"] = json!(fp);
        }
        v
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    namespace: String,
    uid: String,
    field_path: Option<String>,
    type_: String,
    reason: String,
    message: String,
}

impl Key {
    /// Repeats of the same event about the same object share a key.
    fn new(obj: &ObjRef, type_: &str, reason: &str, message: &str) -> Self {
        Key {
            namespace: obj.namespace.clone(),
            uid: obj.uid.clone(),
            field_path: obj.field_path.clone(),
            type_: type_.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

#[derive(Clone, Debug)]
struct Seen {
    name: String,
    count: i32,
}

/// One reporter (`kubelet` on a node, or a controller).
pub struct Recorder {
    client: Client,
    component: String,
    instance: String,
    /// Source host for core/v1 events (the node for a kubelet).
    host: Option<String>,
    core: Mutex<HashMap<Key, Seen>>,
    series: Mutex<HashMap<Key, Seen>>,
    /// While true, writes wait (a stopped node writes nothing).
    paused: Option<watch::Receiver<bool>>,
}

impl Recorder {
    pub fn new(client: Client, component: &str, instance: &str, host: Option<&str>) -> Arc<Self> {
        Arc::new(Recorder {
            client,
            component: component.to_owned(),
            instance: instance.to_owned(),
            host: host.map(str::to_owned),
            core: Mutex::new(HashMap::new()),
            series: Mutex::new(HashMap::new()),
            paused: None,
        })
    }

    /// A recorder whose writes wait while `paused` holds true.
    pub fn with_pause(
        client: Client,
        component: &str,
        instance: &str,
        host: Option<&str>,
        paused: watch::Receiver<bool>,
    ) -> Arc<Self> {
        Arc::new(Recorder {
            client,
            component: component.to_owned(),
            instance: instance.to_owned(),
            host: host.map(str::to_owned),
            core: Mutex::new(HashMap::new()),
            series: Mutex::new(HashMap::new()),
            paused: Some(paused),
        })
    }

    async fn wait_unpaused(&self) {
        if let Some(rx) = &self.paused {
            let mut rx = rx.clone();
            let _ = rx.wait_for(|p| !*p).await;
        }
    }

    /// Forgets what was recorded about the object with this UID.
    pub async fn forget(&self, uid: &str) {
        self.core.lock().await.retain(|k, _| k.uid != uid);
        self.series.lock().await.retain(|k, _| k.uid != uid);
    }

    /// Records a core/v1 Event; a repeat bumps `count` and `lastTimestamp`.
    pub async fn core(&self, obj: &ObjRef, type_: &str, reason: &str, message: &str) {
        self.wait_unpaused().await;
        let key = Key::new(obj, type_, reason, message);
        let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), obj.event_namespace());
        let t = now();
        let mut cache = self.core.lock().await;
        if let Some(seen) = cache.get(&key).cloned() {
            let count = seen.count + 1;
            let patch = json!({"count": count, "lastTimestamp": fmt_time(t)});
            match api
                .patch(&seen.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    cache.insert(key, Seen { count, ..seen });
                    return;
                }
                Err(e) if is_not_found(&e) => {} // expired: start again
                Err(e) => {
                    eprintln!("mdiag-sim: updating event {}: {e}", seen.name);
                    return;
                }
            }
        }
        let name = event_name(&obj.name, t);
        let mut source = json!({"component": self.component});
        if let Some(h) = &self.host {
            source["host"] = json!(h);
        }
        let ev = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": obj.event_namespace()},
            "involvedObject": obj.to_json(),
            "reason": reason,
            "message": message,
            "type": type_,
            "source": source,
            "firstTimestamp": fmt_time(t),
            "lastTimestamp": fmt_time(t),
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        });
        let ev: CoreEvent = match serde_json::from_value(ev) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("mdiag-sim: building event: {e}");
                return;
            }
        };
        match api.create(&PostParams::default(), &ev).await {
            Ok(_) => {
                cache.insert(key, Seen { name, count: 1 });
            }
            Err(e) => eprintln!("mdiag-sim: creating event {name}: {e}"),
        }
    }

    /// Records an events.k8s.io/v1 Event; a repeat creates or bumps its
    /// `series`.
    pub async fn series(&self, obj: &ObjRef, type_: &str, reason: &str, action: &str, note: &str) {
        self.wait_unpaused().await;
        let key = Key::new(obj, type_, reason, note);
        let api: Api<NewEvent> = Api::namespaced(self.client.clone(), obj.event_namespace());
        let t = now();
        let mut cache = self.series.lock().await;
        if let Some(seen) = cache.get(&key).cloned() {
            let count = seen.count + 1;
            let patch = json!({"series": {"count": count, "lastObservedTime": fmt_micro(t)}});
            match api
                .patch(&seen.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    cache.insert(key, Seen { count, ..seen });
                    return;
                }
                Err(e) if is_not_found(&e) => {}
                Err(e) => {
                    eprintln!("mdiag-sim: updating event {}: {e}", seen.name);
                    return;
                }
            }
        }
        let name = event_name(&obj.name, t);
        let ev = json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": obj.event_namespace()},
            "eventTime": fmt_micro(t),
            "reportingController": self.component,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "regarding": obj.to_json(),
            "note": note,
            "type": type_,
        });
        let ev: NewEvent = match serde_json::from_value(ev) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("mdiag-sim: building event: {e}");
                return;
            }
        };
        match api.create(&PostParams::default(), &ev).await {
            Ok(_) => {
                cache.insert(key, Seen { name, count: 1 });
            }
            Err(e) => eprintln!("mdiag-sim: creating event {name}: {e}"),
        }
    }
}
