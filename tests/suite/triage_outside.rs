//! Triage of what fails on its own, outside any workload: ring 1
//! on the analysis (`triage::triage`), ring 2 on the binary, both against
//! fixtures/triage/expected.yaml.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use mdiag_core::analysis::triage;
use mdiag_core::model::Clock;
use mdiag_source::read_snapshot_file;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Expected {
    exit: i32,
    rows: Vec<String>,
    quiet: Vec<String>,
    gaps: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn expected() -> BTreeMap<String, Expected> {
    let text = std::fs::read_to_string(root().join("fixtures/triage/expected.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn path_of(name: &str) -> PathBuf {
    root().join("fixtures/triage").join(format!("{name}.yaml"))
}

fn short(kind: &str) -> &str {
    match kind {
        "Service" => "svc",
        "HorizontalPodAutoscaler" => "hpa",
        "PodDisruptionBudget" => "pdb",
        "Deployment" => "deploy",
        "ModelService" => "msvc",
        "Pod" => "pod",
        "ReplicaSet" => "rs",
        other => other,
    }
}

#[test]
fn every_file_has_an_expectation() {
    let want = expected();
    for name in common::files_in("fixtures/triage") {
        assert!(
            want.contains_key(&name),
            "fixtures/triage/{name} has no expectation"
        );
    }
    assert_eq!(want.len(), common::files_in("fixtures/triage").len());
}

#[test]
fn the_analysis_gives_a_row_for_what_fails_outside_any_workload() {
    for (name, want) in expected() {
        let snapshot = read_snapshot_file(&path_of(&name)).unwrap();
        let now = Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH).now;
        let t = triage::triage(&snapshot, None, None, None, now);
        let rows: Vec<String> = t
            .rows()
            .into_iter()
            .filter_map(|r| match r {
                triage::Row::Workload(d) if d.healthy => None,
                triage::Row::Workload(d) => Some(format!(
                    "{}/{} {}",
                    short(&d.target.kind),
                    d.target.name,
                    d.lead().map_or("-", |f| f.id.as_str())
                )),
                triage::Row::Outside(o) => Some(format!(
                    "{}/{} {}",
                    short(o.kind),
                    o.name,
                    o.lead().map_or("-", |f| f.id.as_str())
                )),
            })
            .collect();
        assert_eq!(rows, want.rows, "{name}");
        let all: Vec<String> = t
            .items
            .iter()
            .map(|d| format!("{}/{}", short(&d.target.kind), d.target.name))
            .chain(
                t.outside
                    .iter()
                    .map(|o| format!("{}/{}", short(o.kind), o.name)),
            )
            .collect();
        for quiet in &want.quiet {
            assert!(!all.contains(quiet), "{name}: {quiet} is a row: {all:?}");
        }
        assert_eq!(
            mdiag::exit::for_triage(&t).code() as i32,
            want.exit,
            "{name}"
        );
    }
}

#[test]
fn the_binary_shows_the_rows_the_count_and_the_gaps_instead_of_exit_5() {
    for (name, want) in expected() {
        let file = path_of(&name);
        let out = common::mdiag()
            .args(["triage", "-A", "--snapshot", file.to_str().unwrap()])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(want.exit), "{name}:\n{text}");
        for row in &want.rows {
            let workload = row.split(' ').next().unwrap();
            assert!(text.contains(workload), "{name}: no {workload}:\n{text}");
        }
        for quiet in &want.quiet {
            assert!(
                !text.contains(quiet.as_str()),
                "{name}: {quiet} shown:\n{text}"
            );
        }
        if want.rows.is_empty() {
            // Only healthy lone objects: what was checked, not "nothing to judge".
            assert!(
                text.contains("nothing failing: checked"),
                "{name}: no checked line:\n{text}"
            );
        } else {
            assert!(
                text.lines()
                    .any(|l| l.contains("with errors") || l.contains("with warnings")),
                "{name}: no count line:\n{text}"
            );
        }
        // The kinds a dump lacks in one namespace share one gap line.
        let listed: Vec<&str> = text
            .split("list ")
            .skip(1)
            .filter_map(|rest| rest.split_once(": not in the file"))
            .flat_map(|(kinds, _)| kinds.split(' ').next().unwrap_or("").split(','))
            .collect();
        for gap in &want.gaps {
            assert!(
                listed.contains(&gap.as_str()),
                "{name}: no gap for {gap}:\n{text}"
            );
        }

        let out = common::mdiag()
            .args([
                "triage",
                "-A",
                "--snapshot",
                file.to_str().unwrap(),
                "-o",
                "json",
            ])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let outside = report["outside"].as_array().unwrap();
        // Ownerless Pods and lone ReplicaSets are workloads, not rows outside.
        let outside_rows = want
            .rows
            .iter()
            .filter(|r| !r.starts_with("pod/") && !r.starts_with("rs/"))
            .count();
        assert_eq!(outside.len(), outside_rows, "{name}: {outside:?}");
        for o in outside {
            assert!(!o["findings"].as_array().unwrap().is_empty(), "{o}");
            assert!(o["findings"][0]["check"][0].as_str().is_some(), "{o}");
        }
    }
}

#[test]
fn services_and_hpas_of_a_workload_are_its_own_not_rows_outside() {
    // Every demo and case holds its Services, HPAs and PDBs inside a
    // workload's chain: none may come back as a row outside.
    for folder in ["fixtures/demo", "fixtures/cases"] {
        for name in common::files_in(folder) {
            let path = root().join(folder).join(format!("{name}.yaml"));
            let snapshot = read_snapshot_file(&path).unwrap();
            let now = Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH).now;
            let t = triage::triage(&snapshot, None, None, None, now);
            assert!(t.outside.is_empty(), "{folder}/{name}: {:?}", t.outside);
        }
    }
}

#[test]
fn an_info_only_row_ranks_below_a_serving_workload_with_a_warning() {
    // rollout-in-progress (info, progressing) and hpa-at-max (a warning
    // while serving) side by side, renamed apart.
    let mut merged = common::load("rollout-in-progress");
    let at_max = read_snapshot_file(&root().join("fixtures/cases/hpa-at-max.yaml")).unwrap();
    let rename = |ns: &mut Option<String>| *ns = Some("team-hpa".to_string());
    let mut other = at_max.objects;
    for d in &mut other.deployments {
        rename(&mut d.metadata.namespace);
    }
    for m in &mut other.model_services {
        rename(&mut m.metadata.namespace);
    }
    for r in &mut other.replica_sets {
        rename(&mut r.metadata.namespace);
    }
    for p in &mut other.pods {
        rename(&mut p.metadata.namespace);
    }
    for s in &mut other.services {
        rename(&mut s.metadata.namespace);
    }
    for s in &mut other.endpoint_slices {
        rename(&mut s.metadata.namespace);
    }
    for h in &mut other.hpas {
        rename(&mut h.metadata.namespace);
    }
    merged
        .objects
        .model_services
        .append(&mut other.model_services);
    merged.objects.deployments.append(&mut other.deployments);
    merged.objects.replica_sets.append(&mut other.replica_sets);
    merged.objects.pods.append(&mut other.pods);
    merged.objects.services.append(&mut other.services);
    merged
        .objects
        .endpoint_slices
        .append(&mut other.endpoint_slices);
    merged.objects.hpas.append(&mut other.hpas);
    let now = common::clock(&merged).now;
    let t = triage::triage(&merged, None, None, None, now);
    let order: Vec<(String, Option<&str>)> = t
        .items
        .iter()
        .filter(|d| d.target.kind == "ModelService")
        .map(|d| (d.target.namespace.clone(), d.lead().map(|f| f.id.as_str())))
        .collect();
    assert_eq!(
        order,
        [
            ("team-hpa".to_string(), Some("hpa-at-max")),
            ("modeldock-lab".to_string(), Some("rollout-in-progress")),
        ],
        "{order:?}"
    );
}
