//! A targeted read: only the chain, in sequential waves, judged as the
//! namespace read.

use super::*;

/// The trace of a target reads only its chain, in two sequential waves
/// when its selector requires one of the guessed labels (docs/contract.md#performance-targets),
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
