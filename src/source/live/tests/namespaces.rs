//! Reading namespace by namespace: a forbidden namespace is a gap and the
//! others are read, and reading one after the other judges as one read of
//! all.

use super::*;

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
                || p.starts_with("/apis/policy/v1/namespaces/a/")
                || p.starts_with("/apis/batch/v1/namespaces/a/") =>
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
