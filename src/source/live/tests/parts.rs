//! A namespace read in parts, judged as it is whole.

use super::*;

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
            got.checked.add(t.checked);
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
