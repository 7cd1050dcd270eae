//! Ring 1: the pure analysis on every demo fixture, against what
//! fixtures/demo/expected.yaml says a correct diagnosis is (written from the
//! contract (docs/contract.md) by the fixture author, not from program
//! output).

use crate::common;

use std::collections::BTreeMap;

use common::*;
use mdiag_core::analysis::Step;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Expected {
    #[serde(default)]
    target: Option<String>,
    /// `verdict.state`: what users get now.
    state: String,
    /// The headline's first word(s), as a person reads them.
    headline: String,
    /// The exit code of `mdiag trace`.
    exit: u8,
    healthy: bool,
    #[serde(default)]
    last_step: Option<String>,
    #[serde(default)]
    missing: Option<String>,
    must: Vec<String>,
    must_not: Vec<String>,
}

/// The fixture folders with expectations: demo scenarios and per-id cases.
const FOLDERS: &[&str] = &["fixtures/demo", "fixtures/cases"];

fn expected(folder: &str) -> BTreeMap<String, Expected> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(folder).join("expected.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

#[test]
fn every_fixture_has_an_expectation_and_every_expectation_a_fixture() {
    assert!(
        scenarios().len() >= 7,
        "a healthy state and at least six broken ones"
    );
    for folder in FOLDERS {
        let expected = expected(folder);
        let names = files_in(folder);
        for name in &names {
            assert!(
                expected.contains_key(name),
                "{folder}/{name} has no expectation"
            );
        }
        for name in expected.keys() {
            assert!(
                names.contains(name),
                "{folder}/expected.yaml names {name}, which has no file"
            );
        }
    }
}

#[test]
fn every_fixture_gets_the_expected_verdict_and_findings() {
    let mut failures = Vec::new();
    for folder in FOLDERS {
        for (name, want) in expected(folder) {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(folder)
                .join(format!("{name}.yaml"));
            let snapshot = mdiag_source::read_snapshot_file(&path).unwrap();
            let d = diagnose_target(&snapshot, want.target.as_deref().unwrap_or("chart-demo"));
            let got_ids = ids(&d);
            let mut problems = Vec::new();
            if d.verdict.state.as_str() != want.state {
                problems.push(format!(
                    "state {} want {}",
                    d.verdict.state.as_str(),
                    want.state
                ));
            }
            let word = mdiag_render::headline::word(&d, mdiag_core::catalogue::Lang::En);
            if word != want.headline {
                problems.push(format!("headline {word:?} want {:?}", want.headline));
            }
            let code = mdiag::exit::for_diagnosis(&d).code();
            if code != want.exit {
                problems.push(format!("exit {code} want {}", want.exit));
            }
            if d.healthy != want.healthy {
                problems.push(format!("healthy {} want {}", d.healthy, want.healthy));
            }
            if let Some(step) = &want.last_step {
                if d.verdict.last_step.as_str() != step {
                    problems.push(format!(
                        "last_step {} want {step}",
                        d.verdict.last_step.as_str()
                    ));
                }
                let missing = d.verdict.missing.map(|s| s.as_str().to_string());
                if missing != want.missing {
                    problems.push(format!("missing {missing:?} want {:?}", want.missing));
                }
            }
            for id in &want.must {
                if !got_ids.contains(&id.as_str()) {
                    problems.push(format!("{id} not found"));
                }
            }
            for id in &want.must_not {
                if got_ids.contains(&id.as_str()) {
                    problems.push(format!("{id} is a false alarm"));
                }
            }
            // The verdict leads with the first expected cause.
            if let Some(first) = want.must.first()
                && d.lead().map(|f| f.id.as_str()) != Some(first.as_str())
            {
                problems.push(format!(
                    "verdict leads with {:?} instead of {first}",
                    d.lead().map(|f| f.id)
                ));
            }
            if !problems.is_empty() {
                failures.push(format!(
                    "{folder}/{name}: {} (got {got_ids:?})",
                    problems.join("; ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_catalogue_id_has_a_rule_a_firing_fixture_and_a_quiet_neighbour() {
    let mut fire: BTreeMap<String, usize> = BTreeMap::new();
    let mut quiet: BTreeMap<String, usize> = BTreeMap::new();
    for folder in FOLDERS {
        for (_, want) in expected(folder) {
            for id in want.must {
                *fire.entry(id).or_default() += 1;
            }
            for id in want.must_not {
                *quiet.entry(id).or_default() += 1;
            }
        }
    }
    let rules = mdiag_core::analysis::rule_ids();
    let mut missing = Vec::new();
    for e in &mdiag_core::catalogue::catalogue().entries {
        let id = e.id.as_str();
        if !rules.iter().any(|r| r.as_str() == id) {
            missing.push(format!("{id}: no rule"));
        }
        let (f, q) = (
            fire.get(id).copied().unwrap_or(0),
            quiet.get(id).copied().unwrap_or(0),
        );
        if f == 0 || q == 0 {
            missing.push(format!("{id}: {f} firing, {q} quiet fixtures"));
        }
        println!("{id:<28} fires in {f:>2}, must stay quiet in {q:>2}");
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn a_healthy_rollout_has_all_four_moments_in_order_on_every_current_pod() {
    let d = diagnose(&load("healthy"));
    let current: Vec<_> = d.pods.iter().filter(|p| p.current).collect();
    assert_eq!(current.len(), 2);
    for p in current {
        let m = &p.moments;
        let times = [m.stored.at, m.bound.at, m.started.at, m.ready.at];
        assert!(times.iter().all(Option::is_some), "{}: {times:?}", p.name);
        let times: Vec<_> = times.into_iter().flatten().collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "{}: out of order {times:?}",
            p.name
        );
        assert!(p.serving);
        assert_eq!(p.last_step, Step::Serving);
    }
    assert_eq!(d.replicas.desired, 2);
    assert_eq!(d.replicas.serving, 2);
}

#[test]
fn the_ladder_is_complete_and_ordered_for_a_model_service() {
    let d = diagnose(&load("healthy"));
    let steps: Vec<Step> = d.steps.iter().map(|s| s.step).collect();
    // Every step but the rungs of the other workload kinds.
    let model_service_ladder: Vec<Step> = Step::ALL
        .into_iter()
        .filter(|s| {
            !matches!(
                s,
                Step::StatefulSet | Step::DaemonSet | Step::Job | Step::Completed
            )
        })
        .collect();
    assert_eq!(steps, model_service_ladder);
    assert!(d.steps.iter().all(|s| s.reached));
    // Every step but serving has a persisted time; slices keep none.
    for s in &d.steps {
        assert_eq!(s.at.is_some(), s.step != Step::Serving, "{:?}", s.step);
    }
}

#[test]
fn an_unbound_pod_has_only_its_stored_moment() {
    let d = diagnose(&load("unschedulable"));
    for p in d.pods.iter().filter(|p| p.current) {
        assert!(p.moments.stored.at.is_some());
        assert!(!p.moments.bound.reached && !p.moments.started.reached && !p.moments.ready.reached);
        assert_eq!(p.node, None);
        assert_eq!(p.last_step, Step::Stored);
    }
}

#[test]
fn pods_of_older_revisions_are_beside_the_ladder_not_on_it() {
    // oom-killed: the old revision still serves 2/2, the new Pod crashes.
    let d = diagnose(&load("oom-killed"));
    assert!(d.pods.iter().any(|p| !p.current && p.serving));
    assert_eq!(d.verdict.last_step, Step::Bound);
    assert_eq!(d.replicas.current, 1);
    assert!(d.replicas.old >= 2);
    assert!(!d.healthy);
}

#[test]
fn the_replay_clock_of_a_dump_is_its_newest_timestamp() {
    let s = load("crash-loop");
    let c = clock(&s);
    assert_eq!(c.source, mdiag_core::model::ClockSource::NewestTimestamp);
    assert_eq!(c.now.to_string(), "2026-11-28T10:11:06.532418Z");
}

#[test]
fn the_replay_clock_of_a_snapshot_is_its_capture_time() {
    let s = load("snapshot-crash-loop");
    let c = clock(&s);
    assert_eq!(c.source, mdiag_core::model::ClockSource::Capture);
    assert_eq!(Some(c.now), s.origin.captured_at);
}

#[test]
fn the_snapshot_and_the_dump_of_the_same_state_reach_the_same_findings() {
    let dump = diagnose(&load("crash-loop"));
    let snap = diagnose(&load("snapshot-crash-loop"));
    assert_eq!(ids(&dump), ids(&snap));
    assert_eq!(dump.verdict.last_step, snap.verdict.last_step);
    assert_eq!(dump.verdict.missing, snap.verdict.missing);
    // The snapshot says Nodes could not be read: that is reported.
    assert!(snap.gaps.iter().any(|g| g.resource == "nodes"));
}

#[test]
fn a_target_can_be_the_deployment_or_a_pod() {
    let s = load("crash-loop");
    let by_msvc = diagnose_target(&s, "chart-demo");
    let by_deploy = diagnose_target(&s, "deploy/chart-demo");
    let pod = by_msvc.pods[0].name.clone();
    let by_pod = diagnose_target(&s, &format!("pod/{pod}"));
    // Walking up from the Pod finds the ModelService again.
    assert_eq!(by_pod.target, by_msvc.target);
    assert_eq!(ids(&by_pod), ids(&by_msvc));
    // From the Deployment the ladder starts there.
    assert_eq!(by_deploy.steps[0].step, Step::Declared);
    assert_eq!(by_deploy.target.kind, "ModelService");
}

/// Every fixture with expectations, diagnosed as `trace` does.
fn every_diagnosis() -> Vec<(String, mdiag_core::analysis::Diagnosis)> {
    let mut out = Vec::new();
    for folder in FOLDERS {
        for (name, want) in expected(folder) {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(folder)
                .join(format!("{name}.yaml"));
            let snapshot = mdiag_source::read_snapshot_file(&path).unwrap();
            let d = diagnose_target(&snapshot, want.target.as_deref().unwrap_or("chart-demo"));
            out.push((format!("{folder}/{name}"), d));
        }
    }
    out
}

#[test]
fn no_headline_says_not_serving_while_any_replica_serves() {
    use mdiag_core::analysis::State;
    use mdiag_core::catalogue::Lang;
    let mut checked = 0;
    for (name, d) in every_diagnosis() {
        let serving = d.pods.iter().filter(|p| p.serving).count();
        let text = mdiag_render::headline::text(&d, Lang::En);
        if serving > 0 {
            checked += 1;
            assert_ne!(d.verdict.state, State::NotServing, "{name}: {text}");
            assert!(!text.contains("NOT SERVING"), "{name}: {text}");
        }
        // What the headline counts is what the slices say, per revision;
        // for a LeaderWorkerSet, the groups all of whose Pods serve.
        if let Some(n) = d.verdict.serving.ready_endpoints {
            let counted = match d.replicas.group_size {
                Some(_) => d.chain.groups.iter().filter(|g| g.serving).count(),
                None => serving,
            };
            assert_eq!(n as usize, counted, "{name}: {text}");
        }
    }
    assert!(checked > 20, "only {checked} fixtures with a serving Pod");
}

#[test]
fn the_headline_names_the_lead_finding_and_a_next_command_that_pastes() {
    use mdiag_core::catalogue::{Lang, Severity, catalogue};
    for (name, d) in every_diagnosis() {
        let text = mdiag_render::headline::text(&d, Lang::En);
        let Some(lead) = d.lead() else {
            continue;
        };
        if lead.severity != Severity::Info || !d.healthy {
            assert!(
                text.contains(&format!("[{}]", lead.id)),
                "{name}: the headline does not name {}: {text}",
                lead.id
            );
        }
        if d.healthy {
            assert_eq!(d.verdict.next, None, "{name}: healthy needs no next");
            continue;
        }
        let next = d.verdict.next.as_ref().map(|c| c.shell());
        let next = next.as_deref().unwrap_or_else(|| {
            panic!("{name}: no next command for {}", lead.id);
        });
        // Every name filled in: nothing left to replace before pasting.
        assert!(!next.contains('<'), "{name}: {next}");
        // The command is about the object the evidence is about.
        let template = catalogue().get(lead.id).unwrap().check.first().unwrap();
        if lead.subject.kind == "Pod" && template.contains("{pod}") {
            assert!(
                next.contains(&lead.subject.name),
                "{name}: {next} does not name {}",
                lead.subject.name
            );
        }
    }
}

#[test]
fn a_workload_no_service_selects_ends_at_ready_not_at_not_serving() {
    // The plain Deployment `web` without its Service (and slices): a worker.
    let worker = as_worker("plain-deployment-healthy", |_| false);
    assert!(worker.verdict.serving.worker);
    assert_eq!(worker.verdict.serving.ready_endpoints, None);
    assert_eq!(worker.verdict.state, mdiag_core::analysis::State::Serving);
    assert_eq!(worker.verdict.last_step, Step::Ready);
    assert_eq!(mdiag::exit::for_diagnosis(&worker).code(), 0);
    let text = mdiag_render::headline::text(&worker, mdiag_core::catalogue::Lang::En);
    assert!(
        text.starts_with("READY  3/3 ready on revision 1, rollout complete"),
        "{text}"
    );
    assert!(text.contains("no Service selects these Pods"), "{text}");
    assert!(!text.contains("SERVING"), "{text}");
}

/// The plain Deployment `web` of `fixtures/cases/NAME.yaml` without its
/// Service and slices (a worker), nor the items `drop` picks, diagnosed.
fn as_worker(
    name: &str,
    drop: impl Fn(&serde_json::Value) -> bool,
) -> mdiag_core::analysis::Diagnosis {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cases")
        .join(format!("{name}.yaml"));
    let mut list: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    list["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| !matches!(i["kind"].as_str(), Some("Service" | "EndpointSlice")) && !drop(i));
    // The API's own typed lists, empty: the dump asked for Services and
    // slices and there were none (a plain `List` without them would leave
    // them unknown).
    let text = format!(
        "{}\n{}\n{}",
        serde_json::to_string(&list).unwrap(),
        r#"{"apiVersion": "v1", "kind": "ServiceList", "items": []}"#,
        r#"{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSliceList", "items": []}"#
    );
    let snapshot =
        mdiag_source::file::parse_snapshot_text(&text, std::path::Path::new("worker.json"))
            .unwrap();
    diagnose_target(&snapshot, "deploy/web")
}

#[test]
fn a_worker_with_no_ready_pod_is_not_ready() {
    use mdiag_core::catalogue::Lang;
    // The broken plain Deployment without its Service and without the
    // Pods of the old revision: the new Pod cannot pull its image, and
    // nothing else runs.
    let d = as_worker("plain-deployment-broken", |i| {
        i["kind"] == "Pod"
            && i["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("web-clpfnvwgmb-"))
    });
    assert!(d.verdict.serving.worker);
    assert_eq!(d.verdict.state, mdiag_core::analysis::State::NotServing);
    assert_eq!(mdiag::exit::for_diagnosis(&d).code(), 1);
    assert_eq!(
        d.lead().map(|f| f.id.as_str()),
        Some("image-pull-not-found")
    );
    let en = mdiag_render::headline::text(&d, Lang::En);
    assert!(
        en.starts_with("NOT READY  0/3 ready (no Service selects these Pods"),
        "{en}"
    );
    assert!(en.ends_with("[image-pull-not-found]"), "{en}");
    assert!(!en.contains("SERVING") && !en.contains("endpoint"), "{en}");
    let zh = mdiag_render::headline::text(&d, Lang::Zh);
    assert!(
        zh.starts_with("未就绪  0/3 就绪（没有 Service 选中这些 Pod"),
        "{zh}"
    );
    assert!(zh.ends_with("[image-pull-not-found]"), "{zh}");
}
