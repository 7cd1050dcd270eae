//! The live reader against a fake API server (a `tower::service_fn`
//! answering scripted responses): paging, retries, relists, per-namespace
//! fallback and the trimming of pages. Waits run on tokio's paused clock, so
//! the back-off is checked by the virtual time it took, not by sleeping.

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

#[tokio::test(start_paused = true)]
async fn a_429_is_retried_after_the_time_the_server_asks_for() {
    let fake = Fake::new();
    let mut busy = failure(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
    );
    busy.headers.push(("Retry-After", "3".into()));
    fake.script(
        PODS,
        vec![busy, ok(list("Pod", vec![pod("a", "p1")], None))],
    );
    let conn = fake.connection(ReadPolicy::default());
    let started = tokio::time::Instant::now();
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1"]);
    assert_eq!(conn.requests(), 2);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(4),
        "waited {waited:?}, the server asked for 3 s"
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_are_retried_with_a_growing_back_off() {
    let fake = Fake::new();
    fake.script(
        PODS,
        vec![
            failure(500, "InternalError", "etcdserver: leader changed"),
            failure(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            ok(list("Pod", vec![pod("a", "p1")], None)),
        ],
    );
    let conn = fake.connection(ReadPolicy::default());
    let started = tokio::time::Instant::now();
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1"]);
    assert_eq!(conn.requests(), 3);
    // 200 ms, then 400 ms.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_millis(700),
        "waited {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_stays_overloaded_is_given_up_after_the_last_attempt() {
    let fake = Fake::new();
    fake.otherwise(|_, _| Some(failure(503, "ServiceUnavailable", "overloaded")));
    let policy = ReadPolicy {
        max_attempts: 4,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 503));
    assert_eq!(conn.requests(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_forbidden_list_is_not_retried() {
    let fake = Fake::new();
    fake.otherwise(|_, _| Some(failure(403, "Forbidden", "pods is forbidden")));
    let conn = fake.connection(ReadPolicy::default());
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 403));
    assert_eq!(conn.requests(), 1);
}

#[tokio::test]
async fn pages_are_followed_with_limit_and_continue() {
    let fake = Fake::new();
    fake.script(
        "continue=t1",
        vec![ok(list("Pod", vec![pod("a", "p3")], None))],
    );
    fake.script(
        PODS,
        vec![ok(list(
            "Pod",
            vec![pod("a", "p1"), pod("a", "p2")],
            Some("t1"),
        ))],
    );
    let policy = ReadPolicy {
        page_size: 2,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    assert_eq!(names(&pods), ["p1", "p2", "p3"]);
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0].contains("limit=2") && !seen[0].contains("continue"),
        "{seen:?}"
    );
    assert!(
        seen[1].contains("limit=2") && seen[1].contains("continue=t1"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_expired_continue_token_relists_from_the_first_page() {
    let fake = Fake::new();
    fake.script(
        "continue=old",
        vec![failure(
            410,
            "Expired",
            "The provided continue parameter is too old to display a consistent list result.",
        )],
    );
    fake.script(
        "continue=fresh",
        vec![ok(list("Pod", vec![pod("a", "p3")], None))],
    );
    fake.script(
        PODS,
        vec![
            ok(list(
                "Pod",
                vec![pod("a", "p1"), pod("a", "p2")],
                Some("old"),
            )),
            ok(list(
                "Pod",
                vec![pod("a", "p1"), pod("a", "p2")],
                Some("fresh"),
            )),
        ],
    );
    let conn = fake.connection(ReadPolicy::default());
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap();
    // Each Pod once: the first, abandoned pass is not kept.
    assert_eq!(names(&pods), ["p1", "p2", "p3"]);
    assert_eq!(conn.requests(), 4);
    let seen = fake.seen();
    assert!(
        !seen[2].contains("continue"),
        "the relist starts over: {seen:?}"
    );
}

#[tokio::test]
async fn relists_stop_after_the_policy_limit() {
    let fake = Fake::new();
    fake.otherwise(|_, query| {
        Some(if query.contains("continue") {
            failure(410, "Expired", "too old")
        } else {
            ok(list("Pod", vec![pod("a", "p1")], Some("old")))
        })
    });
    let policy = ReadPolicy {
        max_relists: 2,
        ..ReadPolicy::default()
    };
    let conn = fake.connection(policy);
    let err = conn
        .list_pages(PODS, &ListParams::default(), &keep_all)
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 410));
    // Three passes of two requests: the first and two relists.
    assert_eq!(conn.requests(), 6);
}

/// A whole read where the identity may list namespaces and namespace `a`,
/// but not namespace `b` nor anything cluster-wide.
fn namespace_scoped_identity(fake: &Fake) {
    fake.otherwise(|path, _| {
        let forbidden = |what: &str, ns: &str| {
            failure(
                403,
                "Forbidden",
                &format!("{what} is forbidden: User \"reader\" cannot list resource \"{what}\" in the namespace \"{ns}\""),
            )
        };
        let answer = match path {
            "/version" => ok(json!({
                "major": "1", "minor": "35", "gitVersion": "v1.35.8", "gitCommit": "", "gitTreeState": "",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64",
            })),
            "/apis" => ok(json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": []})),
            "/api/v1/namespaces" => ok(list(
                "Namespace",
                vec![json!({"metadata": {"name": "a"}}), json!({"metadata": {"name": "b"}})],
                None,
            )),
            "/api/v1/namespaces/a/pods" => ok(list("Pod", vec![pod("a", "p1")], None)),
            p if p.starts_with("/api/v1/namespaces/b/") || p.starts_with("/apis/apps/v1/namespaces/b/") => {
                forbidden(p.rsplit('/').next().unwrap_or(""), "b")
            }
            p if p.starts_with("/api/v1/namespaces/a/")
                || p.starts_with("/apis/apps/v1/namespaces/a/")
                || p.starts_with("/apis/discovery.k8s.io/v1/namespaces/a/")
                || p.starts_with("/apis/autoscaling/v2/namespaces/a/")
                || p.starts_with("/apis/policy/v1/namespaces/a/") =>
            {
                ok(list("Thing", vec![], None))
            }
            p if p.contains("/namespaces/b/") => forbidden(p.rsplit('/').next().unwrap_or(""), "b"),
            p => forbidden(p.rsplit('/').next().unwrap_or(""), ""),
        };
        Some(answer)
    });
}

#[tokio::test]
async fn a_forbidden_namespace_is_a_gap_and_the_others_are_read() {
    let fake = Fake::new();
    namespace_scoped_identity(&fake);
    let conn = fake.connection(ReadPolicy::default());
    let snapshot = read_scoped(
        &conn,
        &TraceRead {
            namespace: None,
            resource: None,
            controller: None,
        },
        None,
    )
    .await
    .expect("a partial read is not an error");
    assert_eq!(
        snapshot
            .objects
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["p1"]
    );
    let pods_gaps: Vec<&Gap> = snapshot
        .gaps
        .iter()
        .filter(|g| g.resource == "pods")
        .collect();
    assert_eq!(pods_gaps.len(), 1, "{:?}", snapshot.gaps);
    assert_eq!(pods_gaps[0].namespace.as_deref(), Some("b"));
    assert!(pods_gaps[0].reason.contains("forbidden"));
    assert!(
        snapshot
            .gaps
            .iter()
            .all(|g| g.namespace.as_deref() != Some("a"))
    );
    // The namespaces are listed once, however many lists fell back.
    let namespace_lists = fake
        .seen()
        .iter()
        .filter(|s| s.starts_with("/api/v1/namespaces?"))
        .count();
    assert_eq!(namespace_lists, 1);
}

#[tokio::test]
async fn without_the_namespaces_a_forbidden_list_is_one_gap() {
    let fake = Fake::new();
    fake.otherwise(|_, _| Some(failure(403, "Forbidden", "forbidden")));
    let conn = fake.connection(ReadPolicy::default());
    let listed = conn
        .list_scope(&typed_path::<Pod>, None, &ListParams::default(), &keep_all)
        .await;
    assert!(listed.items.is_empty());
    assert_eq!(listed.failures.len(), 1);
    assert_eq!(listed.failures[0].0, None);
}

#[tokio::test]
async fn pages_are_trimmed_as_they_arrive() {
    let fake = Fake::new();
    fake.script(PODS, vec![ok(list("Pod", vec![pod("a", "p1")], None))]);
    let conn = fake.connection(ReadPolicy::default());
    let trimmed = |p: &mut Pod| {
        trim_meta(&mut p.metadata, ManagedFields::Drop);
        true
    };
    let pods = conn
        .list_pages(PODS, &ListParams::default(), &trimmed)
        .await
        .unwrap();
    let meta = &pods[0].metadata;
    assert!(meta.managed_fields.is_none());
    let annotations = meta.annotations.as_ref().unwrap();
    assert!(!annotations.contains_key(LAST_APPLIED));
    assert_eq!(annotations.get("team").map(String::as_str), Some("serving"));

    // A spec write and a status write, as a Deployment carries them.
    let mut deployment_like: Pod = serde_json::from_value(pod("a", "p2")).unwrap();
    let spec_write: k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry =
        serde_json::from_value(json!({"manager": "kubectl-edit", "operation": "Update",
            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}}))
        .unwrap();
    deployment_like
        .metadata
        .managed_fields
        .as_mut()
        .unwrap()
        .push(spec_write);
    let kept = |managed: ManagedFields| {
        let mut meta = deployment_like.metadata.clone();
        trim_meta(&mut meta, managed);
        assert!(!meta.annotations.unwrap().contains_key(LAST_APPLIED));
        meta.managed_fields.map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e.manager.clone().unwrap(),
                        e.time.is_some(),
                        e.fields_v1.is_some(),
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(kept(ManagedFields::Drop), None);
    assert_eq!(
        kept(ManagedFields::Writes),
        Some(vec![
            ("kubelet".into(), false, false),
            ("kubectl-edit".into(), true, false)
        ]),
        "who wrote and when, not what"
    );
    assert_eq!(
        kept(ManagedFields::Fields),
        Some(vec![
            ("kubelet".into(), false, false),
            ("kubectl-edit".into(), true, true)
        ]),
        "the fields written to the main resource, not the status's"
    );
}

#[test]
fn events_about_kinds_nothing_reads_are_dropped() {
    let event = |kind: &str| -> CoreEvent {
        serde_json::from_value(json!({
            "metadata": {"name": "e", "namespace": "a",
                         "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "involvedObject": {"kind": kind, "name": "x", "namespace": "a", "uid": "u"},
        }))
        .unwrap()
    };
    for kind in ["Job", "CronJob", "ConfigMap", "Lease"] {
        assert!(!event(kind).keep(), "{kind}");
    }
    for kind in [
        "Pod",
        "ReplicaSet",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "Node",
        "ModelService",
        "Service",
    ] {
        let mut e = event(kind);
        assert!(e.keep(), "{kind}");
        assert!(e.metadata.managed_fields.is_none());
    }
}

#[test]
fn events_about_objects_not_read_are_dropped_at_the_end() {
    let mut o = mdiag_core::model::Objects::default();
    o.pods.push(serde_json::from_value(pod("a", "p1")).unwrap());
    let event = |uid: &str, name: &str| -> EventRecord {
        EventRecord::Core(Box::new(
            serde_json::from_value(json!({
                "metadata": {"name": format!("{name}.1"), "namespace": "a"},
                "involvedObject": {"kind": "Pod", "name": name, "namespace": "a", "uid": uid},
            }))
            .unwrap(),
        ))
    };
    o.events = vec![
        event("uid-a-p1", "p1"),
        event("uid-of-another", "p9"),
        event("", "p1"),
        event("", "p9"),
    ];
    keep_events_about_read_objects(&mut o);
    let kept: Vec<(String, String)> = o
        .events
        .iter()
        .map(|e| (e.subject().uid, e.subject().name))
        .collect();
    assert_eq!(
        kept,
        [
            ("uid-a-p1".to_string(), "p1".to_string()),
            (String::new(), "p1".to_string())
        ]
    );
}

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

/// A reader who may list everything: namespaces `a` and `b`, a Deployment
/// and a Pod in each, served both per namespace and across all of them.
fn two_namespaces(fake: &Fake) {
    fake.otherwise(|path, _| {
        let per_ns = |ns: &str, rest: &str| -> Option<Value> {
            match rest {
                "pods" => {
                    let mut p = pod(ns, "p1");
                    p["metadata"]["labels"] = json!({"app": "web"});
                    Some(list("Pod", vec![p], None))
                }
                "deployments" => Some(list("Deployment", vec![deployment(ns, "web")], None)),
                _ => None,
            }
        };
        let answer = match path {
            "/version" => ok(json!({
                "major": "1", "minor": "35", "gitVersion": "v1.35.8", "gitCommit": "", "gitTreeState": "",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64",
            })),
            "/apis" => ok(json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": []})),
            "/api/v1/namespaces" => ok(list(
                "Namespace",
                vec![json!({"metadata": {"name": "a"}}), json!({"metadata": {"name": "b"}})],
                None,
            )),
            p => {
                let last = p.rsplit('/').next().unwrap_or("");
                let ns = p.split("/namespaces/").nth(1).and_then(|r| r.split('/').next());
                match ns {
                    // A get of one object (the controller's): absent.
                    Some(_) if p.matches('/').count() > 5 && !p.contains("/namespaces/a/") && !p.contains("/namespaces/b/") => {
                        failure(404, "NotFound", "not found")
                    }
                    Some(ns) => per_ns(ns, last)
                        .map(ok)
                        .unwrap_or_else(|| ok(list("Thing", vec![], None))),
                    None => {
                        let both: Vec<Value> = ["a", "b"]
                            .iter()
                            .filter_map(|ns| per_ns(ns, last))
                            .flat_map(|l| l["items"].as_array().cloned().unwrap_or_default())
                            .collect();
                        ok(list("Thing", both, None))
                    }
                }
            }
        };
        Some(answer)
    });
}

fn all_namespaces() -> TraceRead<'static> {
    TraceRead {
        namespace: None,
        resource: None,
        controller: None,
    }
}

/// Diagnoses of the namespaces read one after the other, ranked once.
async fn judged_by_namespace(
    conn: &Connection,
) -> (Vec<mdiag_core::analysis::Diagnosis>, Vec<Gap>, Vec<String>) {
    let now = jiff::Timestamp::now();
    let names = namespace_list(conn).await.expect("namespaces listed");
    let common = read_common(conn, &all_namespaces()).await.unwrap();
    let mut items = Vec::new();
    let mut gaps = common.gaps.clone();
    let mut pods = Vec::new();
    for ns in &names {
        let snapshot = read_namespace(conn, &common, ns, None).await.unwrap();
        items.extend(
            mdiag_core::analysis::triage::triage_unranked(&snapshot, Some(ns), None, None, now)
                .items,
        );
        gaps.extend(snapshot.gaps[common.gaps.len()..].iter().cloned());
        pods.extend(snapshot.objects.pods.iter().map(|p| {
            format!(
                "{}/{}",
                p.metadata.namespace.clone().unwrap(),
                p.metadata.name.clone().unwrap()
            )
        }));
    }
    mdiag_core::analysis::triage::rank(&mut items);
    (items, gaps, pods)
}

#[tokio::test]
async fn namespaces_read_one_after_the_other_give_the_rows_of_one_read_of_all() {
    let fake = Fake::new();
    two_namespaces(&fake);
    let conn = fake.connection(ReadPolicy::default());
    let whole = read_scoped(&conn, &all_namespaces(), None).await.unwrap();
    assert!(whole.gaps.is_empty(), "{:?}", whole.gaps);
    let now = jiff::Timestamp::now();
    let want = mdiag_core::analysis::triage::triage(&whole, None, None, None, now).items;
    // Each namespace's Deployment, and its Pod, which nothing owns (the
    // fake serves no ReplicaSet): a row of its own.
    assert_eq!(want.len(), 4);

    let fake = Fake::new();
    two_namespaces(&fake);
    let conn = fake.connection(ReadPolicy::default());
    let (got, gaps, pods) = judged_by_namespace(&conn).await;
    assert!(gaps.is_empty(), "{gaps:?}");
    assert_eq!(pods, ["a/p1", "b/p1"]);
    // The same rows (the clock differs by the time between the reads).
    let rows = |items: &[mdiag_core::analysis::Diagnosis]| {
        items
            .iter()
            .map(|d| {
                (
                    d.target.namespace.clone(),
                    d.target.name.clone(),
                    d.healthy,
                    d.verdict.last_step,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&got), rows(&want));
    // Nothing is read across all namespaces but the Nodes.
    let seen = fake.seen();
    assert!(
        seen.iter()
            .filter(|s| !s.starts_with("/api/v1/nodes?") && !s.starts_with("/api/v1/namespaces?"))
            .filter(|s| s.contains('?') && s.split('?').next().unwrap().matches('/').count() <= 4)
            .all(|s| s.starts_with("/version") || s.starts_with("/apis?")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn read_a_namespace_at_a_time_a_forbidden_namespace_is_a_gap() {
    let fake = Fake::new();
    namespace_scoped_identity(&fake);
    let conn = fake.connection(ReadPolicy::default());
    let (_, gaps, pods) = judged_by_namespace(&conn).await;
    assert_eq!(pods, ["a/p1"]);
    let pods_gaps: Vec<&Gap> = gaps.iter().filter(|g| g.resource == "pods").collect();
    assert_eq!(pods_gaps.len(), 1, "{gaps:?}");
    assert_eq!(pods_gaps[0].namespace.as_deref(), Some("b"));
    assert!(pods_gaps[0].reason.contains("forbidden"));
    assert!(gaps.iter().all(|g| g.namespace.as_deref() != Some("a")));
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

/// The trace of a target reads only its chain, in two sequential waves
/// when its selector requires one of the guessed labels (SPEC section 8),
/// and tells what the namespace read tells, byte for byte.
#[tokio::test(start_paused = true)]
async fn a_targeted_read_brings_only_the_chain_and_judges_as_the_namespace_read() {
    // The waves each read takes, and whether the Pods' name label is
    // renamed to one the first wave does not guess (their Events then wait
    // for the selector's lists: a third wave).
    for (file, target, ns, other, waves, relabel) in [
        (
            "fixtures/demo/crash-loop.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            2,
            false,
        ),
        (
            "fixtures/demo/rollout-in-progress.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            2,
            false,
        ),
        (
            "fixtures/cases/plain-deployment-broken.yaml",
            "deploy/web",
            "shop",
            "web",
            2,
            false,
        ),
        (
            "fixtures/cases/statefulset-crash-loop.yaml",
            "sts/shard",
            "serve",
            "shard",
            2,
            false,
        ),
        (
            "fixtures/cases/daemonset-image-pull.yaml",
            "ds/model-prefetch",
            "modeldock-nodes",
            "model-prefetch",
            2,
            false,
        ),
        (
            "fixtures/cases/hpa-at-max.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            2,
            false,
        ),
        (
            "fixtures/cases/endpoints-stale.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            2,
            false,
        ),
        (
            "fixtures/demo/crash-loop.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            3,
            true,
        ),
        (
            "fixtures/cases/endpoints-stale.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            3,
            true,
        ),
    ] {
        let mut mine = fixture_objects(&[file]);
        if relabel {
            // In labels and selectors; managedFields spell it `f:...`.
            let text = serde_json::to_string(&mine)
                .unwrap()
                .replace("\"app.kubernetes.io/name\":", "\"tier\":");
            assert!(text.contains("\"tier\":"), "{file}: nothing relabelled");
            mine = serde_json::from_str(&text).unwrap();
        }
        if !mine.iter().any(|o| o["metadata"]["namespace"] == ns) {
            panic!("{file}: no object in namespace {ns}");
        }
        let mut objects = mine.clone();
        objects.extend(neighbour(&mine, other, "zz-neighbour"));
        let target = mdiag_core::model::TargetSpec::parse(target, Some(ns)).unwrap();
        let now = fixture_now(file);

        let fake = Fake::new();
        serve_objects(&fake, objects.clone());
        let conn = fake.connection(ReadPolicy::default());
        let (_, whole) = traced(&conn, &target, ns, false, now).await;

        let fake = Fake::in_rounds();
        serve_objects(&fake, objects);
        // Every request of a wave in flight at once, so that the rounds
        // count the waves, not the limiter's queue.
        let conn = fake.connection(ReadPolicy {
            concurrency: 1000,
            ..ReadPolicy::default()
        });
        let (snapshot, targeted) = traced(&conn, &target, ns, true, now).await;
        let rounds = fake.rounds.as_ref().unwrap().count();
        assert_eq!(
            rounds, waves,
            "{file} (relabelled: {relabel}): sequential waves"
        );

        let summary = |d: &mdiag_core::analysis::Diagnosis| {
            (
                d.verdict.state,
                d.verdict.last_step,
                d.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
                d.pods.len(),
                d.healthy,
            )
        };
        assert_eq!(summary(&targeted), summary(&whole), "{file}");
        // What the report says, byte for byte.
        assert_eq!(diagnosis_json(&targeted), diagnosis_json(&whole), "{file}");
        // None of the neighbour's objects was read.
        let names: Vec<String> = snapshot
            .objects
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .chain(
                snapshot
                    .objects
                    .replica_sets
                    .iter()
                    .map(|r| r.metadata.name.clone().unwrap_or_default()),
            )
            .chain(snapshot.objects.events.iter().map(|e| e.subject().name))
            .collect();
        assert!(
            !names.iter().any(|n| n.contains("zz-neighbour")),
            "{file}: {names:?}"
        );
        // Pods, ReplicaSets and EndpointSlices are never listed without a
        // selector; Events are listed once a wave after the first (a field
        // selector per object would cost the apiserver a scan each), and
        // only those about the chain are kept (above).
        let mut event_lists: u32 = 0;
        for seen in fake.seen() {
            let (path, query) = seen.split_once('?').unwrap_or((&seen, ""));
            let last = path.rsplit('/').next().unwrap_or("");
            if [
                "pods",
                "replicasets",
                "endpointslices",
                "controllerrevisions",
            ]
            .contains(&last)
            {
                assert!(
                    query.contains("labelSelector") || query.contains("fieldSelector"),
                    "{file}: {seen} reads the namespace"
                );
            }
            event_lists += u32::from(last == "events");
        }
        assert!(
            (1..waves).contains(&event_lists),
            "{file}: {event_lists} lists of Events in {waves} waves"
        );
    }
}

/// A namespace too big for one shard is read in parts, none holding all
/// its Pods, and judged as it is whole, row for row.
#[tokio::test]
async fn a_namespace_read_in_parts_is_judged_as_it_is_whole() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<String> = std::fs::read_dir(root.join("fixtures/demo"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .filter(|p| !p.ends_with("expected.yaml") && !p.contains("snapshot-"))
        .collect();
    files.sort();
    // Each demo under a name and UIDs of its own, side by side.
    let mut objects = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let mine = fixture_objects(&[file]);
        let mut text = serde_json::to_string(&mine)
            .unwrap()
            .replace("chart-demo", &format!("chart-demo-w{i:02}"));
        for o in &mine {
            if let Some(u) = o["metadata"]["uid"].as_str() {
                text = text.replace(u, &format!("w{i:02}-{u}"));
            }
        }
        let mut own: Vec<Value> = serde_json::from_str(&text).unwrap();
        // One copy of what the demos share (Nodes, the controller).
        own.retain(|o| i == 0 || o["metadata"]["namespace"] == "modeldock-lab");
        objects.extend(own);
    }
    let ns = "modeldock-lab";
    let read = TraceRead {
        namespace: Some(ns),
        resource: None,
        controller: None,
    };
    let now = jiff::Timestamp::from_second(1_795_000_000).unwrap();
    let fake = Fake::new();
    serve_objects(&fake, objects);
    let conn = fake.connection(ReadPolicy::default());
    let common = read_common(&conn, &read).await.unwrap();
    let whole = read_namespace(&conn, &common, ns, None).await.unwrap();
    assert!(whole.gaps.is_empty(), "{:?}", whole.gaps);
    let want = mdiag_core::analysis::triage::triage(&whole, Some(ns), None, None, now);
    assert!(want.items.len() >= 10, "{} rows", want.items.len());

    let parts = read_namespace_in_parts(&conn, &common, ns, None, 8)
        .await
        .unwrap();
    let mut got = mdiag_core::analysis::triage::Triage::default();
    let mut covered = mdiag_core::analysis::outside::Covered::default();
    let (mut shards, mut most_pods) = (0, 0);
    let objects = parts
        .judge_each(|part, snapshot, (split, facts)| {
            assert!(snapshot.gaps.is_empty(), "{part:?}: {:?}", snapshot.gaps);
            if let mdiag_core::chain::shard::Part::Shard(_) = part {
                shards += 1;
                most_pods = most_pods.max(snapshot.objects.pods.len());
            }
            let mut t = mdiag_core::analysis::triage::triage_part(
                snapshot,
                ns,
                None,
                None,
                now,
                (split, facts, part),
                &mut covered,
            );
            got.items.append(&mut t.items);
            got.outside.append(&mut t.outside);
        })
        .await
        .unwrap();
    got.rank();
    assert!(shards >= 3, "{shards} shards");
    assert!(
        most_pods < whole.objects.pods.len() / 2,
        "a shard held {most_pods} of {} Pods",
        whole.objects.pods.len()
    );
    assert_eq!(format!("{got:#?}"), format!("{want:#?}"));
    assert_eq!(
        objects,
        whole.objects.len() - common.object_count(),
        "objects read"
    );
}

/// The first whole view a gate on `target` gets from the fake, and the
/// watches it ran.
async fn gate_view(
    conn: &Connection,
    target: &mdiag_core::model::TargetSpec,
    ns: &str,
) -> (Snapshot, Vec<crate::watch::WatchId>) {
    use crate::watch::{Feed, FeedEvent};
    let mut feed = Feed::start(conn, ns, None, None, target).await.unwrap();
    loop {
        match feed.next().await {
            FeedEvent::View(view) => return (*view, feed.watch_ids().to_vec()),
            FeedEvent::Note(_) => {}
            other => panic!("{other:?}"),
        }
    }
}

/// A gate watches only its target's chain (issue 16 item 2): its workload
/// by name, its ReplicaSets or revisions and its Pods by their selector,
/// and keeps only the chain's Events; its view judges as the namespace
/// read does, byte for byte. The last case moves a Pod out of its
/// selector while an endpoint still names it: the gate gets it by name,
/// so the endpoint is not called stale.
#[tokio::test(start_paused = true)]
async fn a_gate_watches_only_the_chain_and_judges_as_the_namespace_read() {
    for (file, target, ns, other, unlabel) in [
        (
            "fixtures/demo/crash-loop.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            false,
        ),
        (
            "fixtures/cases/plain-deployment-broken.yaml",
            "deploy/web",
            "shop",
            "web",
            false,
        ),
        (
            "fixtures/cases/statefulset-crash-loop.yaml",
            "sts/shard",
            "serve",
            "shard",
            false,
        ),
        (
            "fixtures/cases/daemonset-image-pull.yaml",
            "ds/model-prefetch",
            "modeldock-nodes",
            "model-prefetch",
            false,
        ),
        (
            "fixtures/cases/endpoints-stale.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            false,
        ),
        (
            "fixtures/demo/healthy.yaml",
            "chart-demo",
            "modeldock-lab",
            "chart-demo",
            true,
        ),
    ] {
        let mut mine = fixture_objects(&[file]);
        let mut unlabelled = None;
        if unlabel {
            let named: Vec<String> = mine
                .iter()
                .filter(|o| o["kind"] == "EndpointSlice")
                .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
                .filter_map(|e| e["targetRef"]["name"].as_str().map(str::to_string))
                .collect();
            let pod = mine
                .iter_mut()
                .find(|o| o["kind"] == "Pod" && named.iter().any(|n| o["metadata"]["name"] == *n))
                .expect("a Pod an endpoint names");
            pod["metadata"]["labels"] = json!({"moved": "out"});
            unlabelled = pod["metadata"]["name"].as_str().map(str::to_string);
        }
        let mut objects = mine.clone();
        objects.extend(neighbour(&mine, other, "zz-neighbour"));
        let target = mdiag_core::model::TargetSpec::parse(target, Some(ns)).unwrap();
        let now = fixture_now(file);

        let fake = Fake::new();
        serve_objects(&fake, objects.clone());
        let conn = fake.connection(ReadPolicy::default());
        let (_, whole) = traced(&conn, &target, ns, false, now).await;

        let fake = Fake::new();
        serve_objects(&fake, objects);
        let conn = fake.connection(ReadPolicy::default());
        let (view, watches) = gate_view(&conn, &target, ns).await;
        let chain = mdiag_core::chain::walk(&view, &target, ns, None).unwrap();
        let gated = mdiag_core::analysis::analyze(&view, &chain, now);

        assert_eq!(diagnosis_json(&gated), diagnosis_json(&whole), "{file}");
        if let Some(name) = &unlabelled {
            assert!(
                view.objects
                    .pods
                    .iter()
                    .any(|p| p.metadata.name.as_ref() == Some(name)),
                "{file}: the Pod moved out of the selector was got by name"
            );
            assert!(
                !gated
                    .findings
                    .iter()
                    .any(|f| f.id.as_str() == "endpoints-stale"),
                "{file}: an endpoint of a Pod that exists is not stale"
            );
        }
        // None of the neighbour's objects was held.
        let names: Vec<String> = view
            .objects
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .chain(
                view.objects
                    .replica_sets
                    .iter()
                    .map(|r| r.metadata.name.clone().unwrap_or_default()),
            )
            .chain(
                view.objects
                    .controller_revisions
                    .iter()
                    .map(|r| r.metadata.name.clone().unwrap_or_default()),
            )
            .chain(
                view.objects
                    .deployments
                    .iter()
                    .map(|r| r.metadata.name.clone().unwrap_or_default()),
            )
            .chain(view.objects.events.iter().map(|e| e.subject().name))
            .collect();
        assert!(
            !names.iter().any(|n| n.contains("zz-neighbour")),
            "{file}: {names:?}"
        );
        // Pods, ReplicaSets and revisions are watched by selector only, and
        // the lists and watches the fake saw say the same.
        for resource in ["pods", "replicasets", "controllerrevisions"] {
            let w = watches.iter().find(|w| w.resource == resource).unwrap();
            assert!(w.labels.is_some(), "{file}: {}", w.label());
        }
        for seen in fake.seen() {
            let (path, query) = seen.split_once('?').unwrap_or((&seen, ""));
            let last = path.rsplit('/').next().unwrap_or("");
            if ["pods", "replicasets", "controllerrevisions", "deployments"].contains(&last) {
                assert!(
                    query.contains("labelSelector") || query.contains("fieldSelector"),
                    "{file}: {seen} reads the namespace"
                );
            }
        }
    }
}
