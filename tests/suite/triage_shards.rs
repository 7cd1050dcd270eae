//! Triage judged in shards gives what it gives whole.

use jiff::Timestamp;
use mdiag_core::analysis::outside::Covered;
use mdiag_core::analysis::triage::*;
use mdiag_core::chain::shard::Part;
use mdiag_core::chain::shard::split;
use mdiag_core::chain::workloads;
use mdiag_core::model::Clock;
use mdiag_core::model::Snapshot;
use mdiag_source::read_snapshot_file;
use std::collections::BTreeSet;

/// A namespace judged in shards gives what it gives whole, row for row
/// and finding for finding: every fixture, every namespace, split 2, 3
/// and 7 ways.
#[test]
fn a_namespace_judged_in_shards_gives_what_it_gives_whole() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for dir in [
        "fixtures/demo",
        "fixtures/cases",
        "fixtures/triage",
        "fixtures/redaction",
    ] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .filter(|p| !p.ends_with("expected.yaml") && !p.ends_with("corpus.yaml"))
            .collect();
        files.sort();
        for file in files {
            let s = read_snapshot_file(&file).unwrap();
            let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
            let namespaces: BTreeSet<String> = workloads(&s, None)
                .into_iter()
                .filter_map(|w| w.target.namespace)
                .chain(
                    s.objects
                        .services
                        .iter()
                        .filter_map(|x| x.metadata.namespace.clone()),
                )
                .collect();
            for ns in namespaces {
                let whole = triage(&s, Some(&ns), None, None, now);
                for count in [2, 3, 7] {
                    let t = judged_in_shards(&s, &ns, count, now, |_, _| {});
                    assert_eq!(
                        format!("{t:#?}"),
                        format!("{whole:#?}"),
                        "{} namespace {ns} in {count} shards",
                        file.display()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 150, "{checked} splits checked");
}

/// Every demo and case of `chart-demo` side by side in one namespace,
/// each under a name and UIDs of its own: 49 workloads in every state
/// the fixtures hold, split 2, 3 and 7 ways, give what the namespace
/// gives whole.
#[test]
fn a_crowded_namespace_judged_in_shards_gives_what_it_gives_whole() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let uid =
        regex::Regex::new(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
            .unwrap();
    let mut files: Vec<_> = ["fixtures/demo", "fixtures/cases"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| !p.ends_with("expected.yaml"))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.starts_with("snapshot-")
        })
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("name: chart-demo")
        })
        .collect();
    files.sort();
    let mut text = String::new();
    for (i, file) in files.iter().enumerate() {
        let own = std::fs::read_to_string(file)
            .unwrap()
            .replace("chart-demo", &format!("chart-demo-w{i:02}"));
        let own = uid.replace_all(&own, |c: &regex::Captures| format!("{i:08x}{}", &c[0][8..]));
        text.push_str("---\n");
        text.push_str(&own);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crowded.yaml");
    std::fs::write(&path, text).unwrap();
    let s = read_snapshot_file(&path).unwrap();
    let now = Clock::choose(&s.origin, None, Timestamp::UNIX_EPOCH).now;
    let ns = "modeldock-lab";
    let whole = triage(&s, Some(ns), None, None, now);
    assert!(
        whole.items.len() >= files.len(),
        "{} rows",
        whole.items.len()
    );
    for count in [2, 3, 7] {
        let (shards, _, pieces, _) = split(&s, count);
        let holding = pieces
            .iter()
            .filter(|p| {
                p.objects
                    .pods
                    .iter()
                    .any(|pod| shards.of_pod(pod) != mdiag_core::chain::shard::Place::Every)
            })
            .count();
        assert_eq!(holding, count, "every shard holds some Pods");
        let t = judged_in_shards(&s, ns, count, now, |k, part| {
            assert!(
                !part.items.is_empty(),
                "shard {k} of {count} judged nothing"
            );
        });
        assert_eq!(format!("{t:#?}"), format!("{whole:#?}"), "{count} shards");
    }
}

/// `s` judged as the live read in parts judges a namespace: `count`
/// shards, then the rest, ranked. `each_shard` sees what each shard
/// gave.
fn judged_in_shards(
    s: &Snapshot,
    ns: &str,
    count: usize,
    now: Timestamp,
    mut each_shard: impl FnMut(usize, &Triage),
) -> Triage {
    let (shards, facts, pieces, rest) = split(s, count);
    let mut covered = Covered::default();
    let mut t = Triage::default();
    let parts = pieces.iter().enumerate().map(|(k, p)| (p, Part::Shard(k)));
    for (piece, part) in parts.chain([(&rest, Part::Rest)]) {
        let mut judged = triage_part(
            piece,
            ns,
            None,
            None,
            now,
            (&shards, &facts, part),
            &mut covered,
        );
        if let Part::Shard(k) = part {
            each_shard(k, &judged);
        }
        t.items.append(&mut judged.items);
        t.outside.append(&mut judged.outside);
        t.checked.add(judged.checked);
    }
    t.rank();
    t
}
