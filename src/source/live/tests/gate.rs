//! The gate's watches of one chain, judged as the namespace read.

use super::*;

/// The first whole view a gate on `target` gets from the fake, and the
/// watches it ran.
pub(super) async fn gate_view(
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

/// A gate watches only its target's chain: its workload
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

/// A verdict waits for a fresh read: the view's ModelService and
/// Deployment are confirmed only while the API still holds them at the
/// view's resourceVersion. The race this closes: the controller writes the
/// Deployment, then the ModelService's status, and the ModelService's
/// watch delivers first, pairing the new declaration with the old revision.
#[tokio::test(start_paused = true)]
async fn a_verdict_on_a_view_waits_until_a_fresh_read_confirms_its_workloads() {
    use crate::watch::{Feed, FeedEvent};
    let file = "fixtures/demo/healthy.yaml";
    let (ns, name) = ("modeldock-lab", "chart-demo");
    let versioned = |deployment_version: &str| {
        let mut objects = fixture_objects(&[file]);
        for o in &mut objects {
            let version = if o["kind"] == "Deployment" {
                deployment_version
            } else {
                "100"
            };
            o["metadata"]["resourceVersion"] = json!(version);
        }
        objects
    };
    let target = mdiag_core::model::TargetSpec::parse(name, Some(ns)).unwrap();
    let fake = Fake::new();
    serve_objects(&fake, versioned("200"));
    let conn = fake.connection(ReadPolicy::default());
    let mut feed = Feed::start(&conn, ns, None, None, &target).await.unwrap();
    let view = loop {
        match feed.next().await {
            FeedEvent::View(view) => break *view,
            FeedEvent::Note(_) => {}
            other => panic!("{other:?}"),
        }
    };
    let chain = mdiag_core::chain::walk(&view, &target, ns, None).unwrap();
    let workloads = chain.workloads();
    let kinds: Vec<&str> = workloads.iter().map(|(r, _)| *r).collect();
    assert_eq!(kinds, ["modelservices", "deployments"]);
    assert!(
        feed.confirms(&workloads).await,
        "the API holds what the view holds"
    );

    // The controller wrote the Deployment again; its watch has not said so.
    serve_objects(&fake, versioned("201"));
    assert!(
        !feed.confirms(&workloads).await,
        "a Deployment newer than the view's"
    );
    // Gone since the view: nothing to confirm the verdict on either.
    serve_objects(
        &fake,
        versioned("200")
            .into_iter()
            .filter(|o| o["kind"] != "Deployment")
            .collect(),
    );
    assert!(!feed.confirms(&workloads).await, "a Deployment deleted");
    // A get that fails says nothing about the view: it stands.
    fake.script(
        &format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}"),
        vec![failure(403, "Forbidden", "deployments is forbidden")],
    );
    serve_objects(&fake, versioned("201"));
    assert!(feed.confirms(&workloads).await, "a get that is refused");
}
