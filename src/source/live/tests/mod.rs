//! The live reader against a fake API server (a `tower::service_fn`
//! answering scripted responses): paging, retries, relists, per-namespace
//! fallback and the trimming of pages. Waits run on tokio's paused clock, so
//! the back-off is checked by the virtual time it took, not by sleeping.
//! Here are the fake and the helpers the subjects share; each subject is a
//! file of its own.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};

use super::read::{keep_events_about_read_objects, typed_path};
use super::*;
use crate::plan::{LAST_APPLIED, Planned};
use k8s_openapi::api::core::v1::Event as CoreEvent;
use mdiag_core::model::EventRecord;

mod events;
mod gate;
mod namespaces;
mod pages;
mod parts;
mod platforms;
mod retries;
mod targeted;
mod times;

/// One scripted answer: status, extra headers, body.
struct Answer {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Value,
}

fn ok(body: Value) -> Answer {
    Answer {
        status: 200,
        headers: Vec::new(),
        body,
    }
}

fn failure(status: u16, reason: &str, message: &str) -> Answer {
    Answer {
        status,
        headers: Vec::new(),
        body: json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": status, "reason": reason, "message": message,
        }),
    }
}

/// Answers for requests whose path and query contain the string.
type Script = (String, VecDeque<Answer>);

type Route = Box<dyn Fn(&str, &str) -> Option<Answer> + Send>;

/// A fake API server: each request is answered by the first script queued
/// for its path (`(path, query)` given to it), else by the fallback route.
#[derive(Clone)]
struct Fake {
    scripts: Arc<Mutex<Vec<Script>>>,
    fallback: Arc<Mutex<Option<Route>>>,
    seen: Arc<Mutex<Vec<String>>>,
    rounds: Option<Arc<Rounds>>,
}

/// Holds every request until the client has nothing left to do but wait
/// for answers, then answers them all: a round. On tokio's paused clock
/// time only moves when every task waits, so the quiet period is over
/// exactly when the client can send nothing more, and the number of
/// rounds is the number of sequential waves, whatever the machine's load.
struct Rounds {
    state: Mutex<RoundState>,
    released: tokio::sync::watch::Sender<u32>,
}

struct RoundState {
    released: u32,
    waiting: usize,
    last_arrival: tokio::time::Instant,
}

impl Rounds {
    const QUIET: Duration = Duration::from_millis(10);

    fn start() -> Arc<Rounds> {
        let rounds = Arc::new(Rounds {
            state: Mutex::new(RoundState {
                released: 0,
                waiting: 0,
                last_arrival: tokio::time::Instant::now(),
            }),
            released: tokio::sync::watch::channel(0).0,
        });
        let ticking = rounds.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let mut s = ticking.state.lock().unwrap();
                if s.waiting > 0 && s.last_arrival.elapsed() >= Rounds::QUIET {
                    s.released += 1;
                    s.waiting = 0;
                    ticking.released.send_replace(s.released);
                }
            }
        });
        rounds
    }

    /// Waits for the round this request falls in; its number.
    async fn wait(&self) -> u32 {
        let mut released = self.released.subscribe();
        let mine = {
            let mut s = self.state.lock().unwrap();
            s.waiting += 1;
            s.last_arrival = tokio::time::Instant::now();
            s.released + 1
        };
        released
            .wait_for(|r| *r >= mine)
            .await
            .expect("the ticker never stops");
        mine
    }

    /// The rounds answered so far.
    fn count(&self) -> u32 {
        *self.released.borrow()
    }
}

impl Fake {
    fn new() -> Fake {
        Fake {
            scripts: Arc::new(Mutex::new(Vec::new())),
            fallback: Arc::new(Mutex::new(None)),
            seen: Arc::new(Mutex::new(Vec::new())),
            rounds: None,
        }
    }

    /// A fake that answers in rounds ([`Rounds`]); needs the paused clock.
    fn in_rounds() -> Fake {
        Fake {
            rounds: Some(Rounds::start()),
            ..Fake::new()
        }
    }

    /// Answers for requests whose path and query contain `matching`, in order.
    fn script(&self, matching: &str, answers: Vec<Answer>) -> &Fake {
        self.scripts
            .lock()
            .unwrap()
            .push((matching.to_string(), answers.into()));
        self
    }

    fn otherwise(&self, route: impl Fn(&str, &str) -> Option<Answer> + Send + 'static) {
        *self.fallback.lock().unwrap() = Some(Box::new(route));
    }

    fn answer(&self, path: &str, query: &str) -> Answer {
        self.seen.lock().unwrap().push(format!("{path}?{query}"));
        let full = format!("{path}?{query}");
        for (matching, answers) in self.scripts.lock().unwrap().iter_mut() {
            if full.contains(matching.as_str())
                && let Some(a) = answers.pop_front()
            {
                return a;
            }
        }
        self.fallback
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|route| route(path, query))
            .unwrap_or_else(|| failure(404, "NotFound", &format!("{path} not found")))
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    fn connection(&self, policy: ReadPolicy) -> Connection {
        let fake = self.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let fake = fake.clone();
            async move {
                let path = req.uri().path().to_string();
                let query = req.uri().query().unwrap_or("").to_string();
                if let Some(rounds) = &fake.rounds {
                    rounds.wait().await;
                }
                // A watch that is never answered: nothing changes after the
                // lists, and the watcher waits as on a quiet cluster.
                if query.split('&').any(|p| p == "watch=true") {
                    fake.seen.lock().unwrap().push(format!("{path}?{query}"));
                    std::future::pending::<()>().await;
                }
                let a = fake.answer(&path, &query);
                let mut response = Response::builder().status(a.status);
                for (k, v) in a.headers {
                    response = response.header(k, v);
                }
                let body = serde_json::to_vec(&a.body).unwrap();
                Ok::<_, std::convert::Infallible>(response.body(Body::from(body)).unwrap())
            }
        });
        Connection::from_client(Client::new(service, "default"), "https://fake", policy)
    }
}

fn pod(ns: &str, name: &str) -> Value {
    json!({
        "metadata": {
            "name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"),
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{\"a whole\": \"copy\"}",
                "team": "serving",
            },
            "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                               "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}],
        },
        "spec": {"containers": [{"name": "server", "image": "img:v1"}]},
    })
}

fn list(kind: &str, items: Vec<Value>, next: Option<&str>) -> Value {
    let mut metadata = json!({"resourceVersion": "100"});
    if let Some(token) = next {
        metadata["continue"] = json!(token);
    }
    json!({"kind": format!("{kind}List"), "apiVersion": "v1", "metadata": metadata, "items": items})
}

fn keep_all(_: &mut Pod) -> bool {
    true
}

fn names(pods: &[Pod]) -> Vec<String> {
    pods.iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect()
}

const PODS: &str = "/api/v1/pods";

fn deployment(ns: &str, name: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"), "generation": 1},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "server", "image": "img:v1"}]}},
        },
        "status": {"observedGeneration": 1, "replicas": 1},
    })
}

/// The objects of fixture files, served as an API server would: lists
/// filtered by namespace, `labelSelector` (`k=v`, `k in (a,b)`) and
/// `fieldSelector` (`involvedObject.kind=K,involvedObject.name=N`), gets by
/// name, aggregated discovery naming the ModelService by its short name.
fn serve_objects(fake: &Fake, objects: Vec<Value>) {
    fn resource_of(kind: &str) -> String {
        match kind {
            "EndpointSlice" => "endpointslices".into(),
            "HorizontalPodAutoscaler" => "horizontalpodautoscalers".into(),
            "PodDisruptionBudget" => "poddisruptionbudgets".into(),
            k => format!("{}s", k.to_lowercase()),
        }
    }
    fn label_matches(labels: &Value, selector: &str) -> bool {
        let mut rest = selector;
        let mut terms = Vec::new();
        while !rest.is_empty() {
            // Split on commas outside parentheses.
            let mut depth = 0;
            let mut end = rest.len();
            for (i, ch) in rest.char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            terms.push(&rest[..end]);
            rest = rest.get(end + 1..).unwrap_or("");
        }
        terms.iter().all(|t| {
            if let Some((k, vs)) = t.split_once(" in (") {
                let vs = vs.trim_end_matches(')');
                vs.split(',').any(|v| labels[k].as_str() == Some(v))
            } else if let Some((k, v)) = t.split_once('=') {
                labels[k].as_str() == Some(v)
            } else {
                panic!("the fake does not know the selector term {t:?}")
            }
        })
    }
    fn field_matches(object: &Value, selector: &str) -> bool {
        selector.split(',').all(|t| {
            let (k, v) = t.split_once('=').expect("k=v");
            let mut at = object;
            for part in k.split('.') {
                at = &at[part];
            }
            at.as_str() == Some(v)
        })
    }
    fake.otherwise(move |path, query| {
        let query = query_pairs(query);
        if path == "/version" {
            return Some(ok(json!({
                "major": "1", "minor": "35", "gitVersion": "v1.35.8", "gitCommit": "", "gitTreeState": "",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64",
            })));
        }
        if path == "/apis" {
            return Some(ok(json!({
                "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
                "items": [{"metadata": {"name": "modeldock.io"}, "versions": [{"version": "v1alpha1", "resources": [{
                    "resource": "modelservices", "singularResource": "modelservice", "scope": "Namespaced",
                    "shortNames": ["msvc"], "verbs": ["get", "list", "watch"],
                    "responseKind": {"group": "modeldock.io", "version": "v1alpha1", "kind": "ModelService"},
                }]}]}],
            })));
        }
        let (ns, rest) = match path.split_once("/namespaces/") {
            Some((_, r)) => {
                let (ns, rest) = r.split_once('/')?;
                (Some(ns.to_string()), rest.to_string())
            }
            None => (None, path.rsplit('/').next().unwrap_or("").to_string()),
        };
        let (resource, name) = match rest.split_once('/') {
            Some((r, n)) => (r.to_string(), Some(n.to_string())),
            None => (rest, None),
        };
        // `/api/v1/...` or `/apis/GROUP/VERSION/...`: the object's apiVersion.
        let api_version = match path.strip_prefix("/apis/") {
            Some(rest) => rest.splitn(3, '/').take(2).collect::<Vec<_>>().join("/"),
            None => "v1".to_string(),
        };
        let selected: Vec<Value> = objects
            .iter()
            .filter(|o| o["apiVersion"].as_str() == Some(api_version.as_str()))
            .filter(|o| resource_of(o["kind"].as_str().unwrap_or("")) == resource)
            .filter(|o| ns.is_none() || o["metadata"]["namespace"].as_str() == ns.as_deref())
            .filter(|o| name.is_none() || o["metadata"]["name"].as_str() == name.as_deref())
            .filter(|o| {
                query
                    .get("labelSelector")
                    .is_none_or(|s| label_matches(&o["metadata"]["labels"], s))
            })
            .filter(|o| {
                query
                    .get("fieldSelector")
                    .is_none_or(|s| field_matches(o, s))
            })
            .cloned()
            .collect();
        Some(match name {
            Some(_) => match selected.into_iter().next() {
                Some(o) => ok(o),
                None => failure(404, "NotFound", "not found"),
            },
            None => ok(list("Thing", selected, None)),
        })
    });
}

/// The items of fixture files, every document and list flattened.
fn fixture_objects(files: &[&str]) -> Vec<Value> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        for d in docs {
            match d.get("items").and_then(Value::as_array) {
                Some(items) => out.extend(items.iter().cloned()),
                None if !d.is_null() => out.push(d),
                None => {}
            }
        }
    }
    out
}

/// The same fixture copied under another name into its namespace, with
/// UIDs of its own: the other workloads a targeted read must leave alone.
fn neighbour(objects: &[Value], from: &str, to: &str) -> Vec<Value> {
    let mut text = serde_json::to_string(objects).unwrap().replace(from, to);
    for o in objects {
        if let Some(u) = o["metadata"]["uid"].as_str() {
            text = text.replace(u, &format!("n-{u}"));
        }
    }
    serde_json::from_str(&text).unwrap()
}

/// A query string's pairs, percent-decoded.
fn query_pairs(query: &str) -> std::collections::BTreeMap<String, String> {
    let decode = |s: &str| {
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                    out.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 3;
                }
                b'+' => {
                    out.push(b' ');
                    i += 1;
                }
                b => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        String::from_utf8(out).unwrap()
    };
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

/// The clock a fixture's replay judges at, as `trace --snapshot` takes it.
fn fixture_now(file: &str) -> jiff::Timestamp {
    let snapshot = crate::read_snapshot_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(file),
    )
    .unwrap();
    mdiag_core::model::Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH).now
}

/// The whole diagnosis as JSON, for byte-for-byte comparison: every field
/// the views are built from, not only what one view prints.
fn diagnosis_json(d: &mdiag_core::analysis::Diagnosis) -> String {
    serde_json::to_string(d).unwrap()
}

async fn traced(
    conn: &Connection,
    target: &mdiag_core::model::TargetSpec,
    ns: &str,
    targeted: bool,
    now: jiff::Timestamp,
) -> (Snapshot, mdiag_core::analysis::Diagnosis) {
    let read = TraceRead {
        namespace: Some(ns),
        resource: None,
        controller: None,
    };
    let snapshot = if targeted {
        read_for_target(conn, &read, target).await.unwrap()
    } else {
        read_for_trace(conn, &read).await.unwrap()
    };
    let chain = mdiag_core::chain::walk(&snapshot, target, ns, None).unwrap();
    let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
    (snapshot, d)
}
