//! Triage judges each workload in a snapshot of its own chain, found
//! through an index of the whole snapshot (so 10,000 Pods stay linear).
//! These tests check that it reaches exactly the diagnosis of the plain
//! walk and analysis over the whole snapshot, on every fixture alone and on
//! all of them in one snapshot (many namespaces and workloads side by side).
//! The same for an [`analysis::Analyzer`] (the Events indexed once per
//! snapshot) and for a triage gathered a namespace at a time, as a live
//! `triage -A` reads it.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use mdiag_core::analysis::triage::{controller_context, triage, triage_unranked};
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::chain::{self, workloads};
use mdiag_core::model::{Clock, Kind, Snapshot, TargetKind};
use mdiag_source::read_snapshot_file;

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in ["fixtures/demo", "fixtures/cases"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if (name.ends_with(".yaml") || name.ends_with(".json")) && name != "expected.yaml" {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 20, "fixtures found: {}", files.len());
    files
}

/// What triage did before the index: walk and analyse each workload in
/// the whole snapshot.
fn plain(snapshot: &Snapshot, now: Timestamp) -> Vec<Diagnosis> {
    let mut items: Vec<Diagnosis> = workloads(snapshot, None)
        .into_iter()
        .filter(|w| !controller_context(snapshot, &w.target, None))
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            let chain = chain::walk(snapshot, &w.target, &ns, None).ok()?;
            Some(analysis::analyze(snapshot, &chain, now))
        })
        .collect();
    analysis::triage::rank(&mut items);
    items
}

/// The plain walk, each chain judged by one Analyzer of the snapshot.
fn with_analyzer(snapshot: &Snapshot, now: Timestamp) -> Vec<Diagnosis> {
    let analyzer = analysis::Analyzer::new(snapshot);
    let mut items: Vec<Diagnosis> = workloads(snapshot, None)
        .into_iter()
        .filter(|w| !controller_context(snapshot, &w.target, None))
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            let chain = chain::walk(snapshot, &w.target, &ns, None).ok()?;
            Some(analyzer.analyze(&chain, now))
        })
        .collect();
    analysis::triage::rank(&mut items);
    items
}

/// Triage a namespace at a time, ranked once at the end.
fn by_namespace(snapshot: &Snapshot, now: Timestamp) -> Vec<Diagnosis> {
    let mut namespaces: Vec<String> = workloads(snapshot, None)
        .into_iter()
        .filter_map(|w| w.target.namespace)
        .collect();
    namespaces.sort();
    namespaces.dedup();
    let mut items: Vec<Diagnosis> = namespaces
        .iter()
        .flat_map(|ns| triage_unranked(snapshot, Some(ns), None, None, now).items)
        .collect();
    analysis::triage::rank(&mut items);
    items
}

#[test]
fn every_fixture_is_judged_the_same_through_the_index() {
    let mut compared = 0;
    for file in fixture_files() {
        let snapshot = read_snapshot_file(&file).unwrap();
        let now = Clock::choose(&snapshot.origin, None, Timestamp::now()).now;
        let want = plain(&snapshot, now);
        let got = triage(&snapshot, None, None, None, now).items;
        assert_eq!(got, want, "{}", file.display());
        assert_eq!(with_analyzer(&snapshot, now), want, "{}", file.display());
        assert_eq!(by_namespace(&snapshot, now), want, "{}", file.display());
        compared += want.len();
    }
    assert!(compared > 20, "only {compared} workloads compared");
}

#[test]
fn all_fixtures_in_one_snapshot_are_judged_the_same_through_the_index() {
    let mut merged = Snapshot::default();
    let mut now = None;
    for (i, file) in fixture_files().into_iter().enumerate() {
        let mut s = read_snapshot_file(&file).unwrap();
        now.get_or_insert(Clock::choose(&s.origin, None, Timestamp::now()).now);
        if i == 0 {
            merged.origin = s.origin.clone();
        }
        // Every kind, the sets and their revisions included.
        merged.objects.append(std::mem::take(&mut s.objects));
        merged.logs.append(&mut s.logs);
        // A kind one dump lacks is in another: the merged one lacks none.
        merged
            .gaps
            .extend(s.gaps.drain(..).filter(|g| g.complete_with.is_none()));
    }
    let now = now.unwrap();
    // The merge takes every kind (Objects::append is exhaustive); the
    // fixtures hold every kind but HTTPRoutes, which none has yet.
    for kind in Kind::ALL.iter().filter(|k| **k != Kind::HttpRoute) {
        assert!(
            merged.objects.count(*kind) > 0,
            "no {} in the fixtures",
            kind.name()
        );
    }
    let want = plain(&merged, now);
    assert!(want.len() > 20);
    for kind in [TargetKind::StatefulSet, TargetKind::DaemonSet] {
        assert!(
            want.iter().any(|d| d.target.kind == kind.as_str()),
            "no {kind} judged in the merged snapshot"
        );
    }
    assert_eq!(triage(&merged, None, None, None, now).items, want);
    assert_eq!(with_analyzer(&merged, now), want);
    assert_eq!(by_namespace(&merged, now), want);
}
