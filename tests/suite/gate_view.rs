//! What `gate` shows, as people and CI read it: the progress lines on
//! stderr, the final report on stdout (headline, checks, the trace view of
//! the last moment) and the JUnit XML. The gate only runs against a live
//! cluster, so these are its rendering functions fed the moment the gate
//! would judge: a demo fixture, walked, analysed and decided as the gate
//! does it, with a fixed elapsed time.

use crate::common;

use std::path::Path;
use std::time::Duration;

use mdiag_core::analysis::gate::{self, Decision, GatePolicy, Outcome};
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::catalogue::Lang;
use mdiag_core::chain::walk;
use mdiag_core::model::{Clock, ClockSource, Origin, OriginKind, TargetSpec};
use mdiag_render::Style;
use mdiag_render::gate::{
    GateDetails, ReportCheck, human_report, junit, progress_line, progress_state, waiting_message,
    waiting_text,
};
use mdiag_render::report::RunInfo;

/// One judged moment of a fixture, as the gate's loop makes it.
struct Moment {
    diagnosis: Diagnosis,
    decision: Decision,
}

fn moment(name: &str) -> Moment {
    let snapshot = common::load(name);
    let target = TargetSpec::parse("chart-demo", None).unwrap();
    let chain = walk(&snapshot, &target, common::NAMESPACE, None).unwrap();
    let now = common::clock(&snapshot).now;
    let diagnosis = analysis::analyze(&snapshot, &chain, now);
    let crashes = mdiag_core::analysis::crashes::CrashHistory::default();
    let observed = gate::Observation {
        snapshot: &snapshot,
        chain: &chain,
        diagnosis: &diagnosis,
        crashes: &crashes,
    };
    let decision = gate::decide(observed, &GatePolicy::default(), None);
    Moment {
        diagnosis,
        decision,
    }
}

/// The report's `gate` section as `finish` fills it.
fn details(outcome: Outcome, m: Option<&Moment>, reason: Option<&str>) -> GateDetails {
    let policy = GatePolicy::default();
    let view = m.map(|m| &m.decision.view);
    GateDetails {
        timeout_seconds: 600.0,
        fail_on: policy.fail_on.iter().map(|i| i.to_string()).collect(),
        max_restarts: policy.max_restarts,
        decided_by: gate::decided_by(outcome, m.map(|m| &m.decision), m.map(|m| &m.diagnosis)),
        waiting_for: match outcome {
            Outcome::Converged | Outcome::Failed => None,
            _ => view.and_then(waiting_text),
        },
        waiting: match outcome {
            Outcome::Converged | Outcome::Failed => None,
            _ => view.and_then(waiting_message),
        },
        reason: reason.map(str::to_string),
        said_reason: None,
        checks: view
            .map(|v| v.checks.iter().map(ReportCheck::from).collect())
            .unwrap_or_default(),
        relists: 0,
        disconnects: 0,
        helm: None,
        evidence_file: None,
    }
}

/// A live read, as the gate's snapshots come from one.
fn live_origin() -> Origin {
    Origin {
        kind: OriginKind::Live,
        location: "https://127.0.0.1:6443".into(),
        context: Some("kind-lab".into()),
        ..Origin::default()
    }
}

fn snapshot(name: &str, description: String, text: &str) {
    insta::with_settings!({
        snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/snapshots/gate_view"),
        prepend_module_to_snapshot => false,
        description => description,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// The gate on each demo that ends it a different way: the progress line
/// it printed last, then what it prints on stdout.
#[test]
fn progress_and_final_report() {
    let elapsed = Duration::from_secs(83);
    for (fixture, outcome) in [
        ("healthy", Outcome::Converged),
        ("crash-loop", Outcome::Failed),
        ("oom-killed", Outcome::Failed),
        ("rollout-in-progress", Outcome::TimedOut),
    ] {
        let m = moment(fixture);
        // The decision the loop would stop on (a timeout: none, it waits).
        let expected = match outcome {
            Outcome::TimedOut => None,
            o => Some(o),
        };
        assert_eq!(m.decision.outcome, expected, "{fixture}");
        let details = details(outcome, Some(&m), None);
        let origin = live_origin();
        let run = RunInfo {
            origin: &origin,
            clock: Clock {
                now: m.diagnosis.now,
                source: ClockSource::Live,
            },
            requests: None,
        };
        for (lang, tag) in [(Lang::En, "en"), (Lang::Zh, "zh")] {
            let style = Style::plain(lang, m.diagnosis.now);
            let progress = progress_line(
                elapsed,
                &progress_state(&m.diagnosis, &m.decision.view, lang),
            );
            let report = human_report(
                outcome,
                elapsed,
                Some((&m.diagnosis, &m.decision.view)),
                &details,
                &run,
                &style,
            );
            // Progress lines are for CI logs; the report fits 80 columns
            // but for a quoted jsonpath (checked in trace_view).
            let text = format!("stderr (last progress line):\n{progress}\n\nstdout:\n{report}");
            snapshot(
                &format!("{fixture}.{tag}"),
                format!(
                    "gate chart-demo on {fixture} ({}), --lang {tag}, 80 columns, after 1m23s",
                    outcome.as_str()
                ),
                &text,
            );
        }
    }
}

/// No view at all: the API never answered.
#[test]
fn could_not_decide_report() {
    let reason = "cannot reach the API server at https://127.0.0.1:1 (connection refused)";
    let details = details(Outcome::CouldNotDecide, None, Some(reason));
    let origin = live_origin();
    let run = RunInfo {
        origin: &origin,
        clock: Clock {
            now: jiff::Timestamp::UNIX_EPOCH,
            source: ClockSource::Live,
        },
        requests: None,
    };
    let style = Style::plain(Lang::En, jiff::Timestamp::UNIX_EPOCH);
    let report = human_report(
        Outcome::CouldNotDecide,
        Duration::from_millis(3200),
        None,
        &details,
        &run,
        &style,
    );
    assert!(report.contains(reason), "{report}");
    snapshot(
        "could-not-decide.en",
        "gate chart-demo with nothing listening: no view of the rollout".into(),
        &report,
    );
}

/// JUnit XML, one test case per check and one for the finding that failed
/// the gate.
#[test]
fn junit_reports() {
    let elapsed = Duration::from_secs(83);
    for (fixture, outcome) in [
        ("healthy", Outcome::Converged),
        ("crash-loop", Outcome::Failed),
        ("rollout-in-progress", Outcome::TimedOut),
    ] {
        let m = moment(fixture);
        let details = details(outcome, Some(&m), None);
        let xml = junit(
            "modeldock-lab/chart-demo",
            outcome,
            elapsed,
            Some(&m.decision.view),
            Some(&m.diagnosis),
            &details,
        )
        .unwrap();
        let failures = xml.matches("<failure").count();
        let failed_checks = m.decision.view.checks.iter().filter(|c| !c.passed).count();
        let failed_finding = usize::from(outcome == Outcome::Failed);
        assert_eq!(failures, failed_checks + failed_finding, "{xml}");
        snapshot(
            &format!("junit.{fixture}"),
            format!(
                "gate chart-demo --junit FILE on {fixture} ({})",
                outcome.as_str()
            ),
            &xml,
        );
    }
    let details = details(
        Outcome::CouldNotDecide,
        None,
        Some("cannot reach the API server at https://127.0.0.1:1 (connection refused)"),
    );
    let xml = junit(
        "modeldock-lab/chart-demo",
        Outcome::CouldNotDecide,
        Duration::from_millis(3200),
        None,
        None,
        &details,
    )
    .unwrap();
    snapshot(
        "junit.could-not-decide",
        "gate chart-demo --junit FILE with nothing listening".into(),
        &xml,
    );
}
