//! `mdiag gate TARGET --timeout D`: wait on watches until the rollout
//! converges (0), fails on a definitive symptom (1), or times out (3); 4
//! when the API cannot be reached or read, so no verdict either way.
//!
//! The loop only wires: the watches fill stores ([`mdiag_source::watch`]),
//! each change is judged on a fresh snapshot by the pure analysis
//! ([`mdiag_core::analysis::gate`]), and the render module shows and writes it.
//! This file starts the gate; `wait` runs the loop, `finish` writes what
//! it ended with.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use jiff::Timestamp;

mod finish;
mod wait;

pub use finish::Views;
use finish::finish;
use wait::wait;

use super::signals::Stop;
use crate::cli::OutputFormat;
use crate::exit::Exit;
use crate::request::GateRequest;
use mdiag_core::analysis::crashes::CrashHistory;
use mdiag_core::analysis::gate::{self, Decision, HelmRelease, Outcome};
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::catalogue::Message;
use mdiag_core::chain;
use mdiag_core::model::{Clock, ClockSource, Origin, Snapshot, TargetSpec};
use mdiag_render::gate::{
    GateDetails, GateReport, Progress, ReportCheck, ReportHelm, human_report, junit,
    waiting_message, waiting_text,
};
use mdiag_render::report::{ReportTarget, RunInfo, trace_report};
use mdiag_render::{Encoding, Style};
use mdiag_source::live::{self, Connection, LogCaps};
use mdiag_source::watch::{Feed, FeedEvent};
use mdiag_source::write::{check_writable, to_file, write_atomic, write_file};

/// What the wait ended with.
struct Ended {
    outcome: Outcome,
    /// The last judged moment, if any.
    last: Option<Judged>,
    reason: Option<Message>,
    relists: u32,
    disconnects: u32,
}

/// Why the wait ended early: Ctrl-C, or SIGTERM from a cancelled CI job.
/// (`elapsed_seconds` says when.)
fn interrupted_reason(signal: &str, seen: bool) -> Message {
    let id = if seen {
        "gate.interrupted_seen"
    } else {
        "gate.interrupted_unseen"
    };
    Message::new(id).arg("signal", signal)
}

impl Ended {
    fn interrupted(signal: &str) -> Self {
        Ended {
            outcome: Outcome::Interrupted,
            reason: Some(interrupted_reason(signal, false)),
            ..Ended::undecided(String::new())
        }
    }

    /// No verdict, for the API's own words (an error).
    fn undecided(reason: String) -> Self {
        Ended {
            outcome: Outcome::CouldNotDecide,
            last: None,
            reason: Some(Message::new("quote").arg("text", reason)),
            relists: 0,
            disconnects: 0,
        }
    }
}

/// Judges one moment: the analysis and the gate's decision, made on the
/// cluster's own words, then both redacted, since from here on they are
/// only shown (progress, reports, JUnit, HTML, stdout; a repeated crash
/// quotes its last log line). The snapshot stays whole for the evidence
/// file, which is redacted as it is written.
fn judge(
    request: &GateRequest,
    snapshot: &Snapshot,
    chain: &chain::Chain,
    crashes: &CrashHistory,
    helm: Option<&HelmRelease>,
    now: Timestamp,
) -> (Diagnosis, Decision) {
    let mut diagnosis = analysis::analyze(snapshot, chain, now);
    let moment = gate::Observation {
        snapshot,
        chain,
        diagnosis: &diagnosis,
        crashes,
    };
    let mut decision = gate::decide(moment, &request.policy, helm);
    request.redactor.diagnosis(&mut diagnosis);
    request.redactor.decision(&mut decision);
    (diagnosis, decision)
}

/// What the gate would write and print had its wait ended with `outcome`
/// on this moment, judged at its capture time by the code the wait runs
/// ([`judge`], then what `finish` renders). The gate only waits on a live
/// cluster; this is how a test sees its views of a file.
pub fn views_of_moment(
    request: &GateRequest,
    mut snapshot: Snapshot,
    crashes: &CrashHistory,
    outcome: Outcome,
) -> anyhow::Result<Views> {
    let namespace = request
        .target
        .namespace
        .clone()
        .or_else(|| snapshot.origin.namespace.clone())
        .unwrap_or_default();
    request.redactor.logs(&mut snapshot.logs);
    let chain = chain::walk(
        &snapshot,
        &request.target,
        &namespace,
        request.source.controller.as_ref(),
    )
    .map_err(|nf| crate::cmd::source::explain_not_found(&snapshot, nf))?;
    let now = snapshot.origin.captured_at.unwrap_or_else(Timestamp::now);
    let (diagnosis, decision) = judge(request, &snapshot, &chain, crashes, None, now);
    drop(chain);
    let mut ended = Ended {
        outcome,
        reason: decision.reason.clone(),
        last: Some(Judged {
            snapshot,
            diagnosis,
            decision,
        }),
        relists: 0,
        disconnects: 0,
    };
    finish::render(
        request,
        &namespace,
        &mut ended,
        None,
        std::time::Duration::from_secs(1),
        None,
    )
}

/// One judged moment: the snapshot it was judged on and the verdicts.
struct Judged {
    snapshot: Snapshot,
    diagnosis: Diagnosis,
    decision: Decision,
}

pub async fn run(request: &GateRequest) -> anyhow::Result<Exit> {
    let started = Instant::now();
    // A file that cannot be written is found now, not after the wait.
    let files = [
        &request.report,
        &request.junit,
        &request.html,
        &request.evidence,
    ];
    for path in files.into_iter().flatten() {
        check_writable(path)?;
    }
    // Ctrl-C or SIGTERM (a CI job cancelled) ends the gate like its
    // timeout does: the report and JUnit still say what was last seen.
    let stop = Stop::listen();
    let early_namespace = request.target.namespace.clone().unwrap_or_default();
    let conn = match stop.unless(live::connect(&request.source.live)).await {
        Err(signal) => {
            let ended = Ended::interrupted(signal);
            finish(request, None, &early_namespace, ended, None, started).await?;
            return Ok(Exit::Interrupted);
        }
        Ok(Ok(c)) => c,
        // A kubeconfig that is missing or not one is a usage error like a
        // bad flag: said once on stderr, with no verdict line or report.
        Ok(Err(e)) if crate::exit::for_live_error(&e) == Exit::Usage => return Err(e.into()),
        Ok(Err(e)) => {
            let exit = crate::exit::for_live_error(&e);
            let ended = Ended::undecided(e.to_string());
            finish(request, None, &early_namespace, ended, None, started).await?;
            return Ok(exit);
        }
    };
    let namespace = request
        .target
        .namespace
        .clone()
        .or_else(|| request.source.namespace.clone())
        .unwrap_or_else(|| conn.default_namespace.clone());

    let helm = match &request.helm_release {
        Some(name) => match stop
            .unless(live::read_helm_release(&conn, name, &namespace))
            .await
        {
            Err(signal) => {
                let ended = Ended::interrupted(signal);
                finish(request, None, &namespace, ended, None, started).await?;
                return Ok(Exit::Interrupted);
            }
            Ok(Ok(release)) => Some(release),
            Ok(Err(e)) => {
                let exit = crate::exit::for_live_error(&e);
                finish(
                    request,
                    None,
                    &namespace,
                    Ended::undecided(e.to_string()),
                    None,
                    started,
                )
                .await?;
                return Ok(exit);
            }
        },
        None => None,
    };
    let ended = wait(request, &conn, &namespace, helm.as_ref(), started, &stop).await?;
    let helm = match &ended.last {
        Some(j) => helm.map(|h| gate::helm_matches(h, &j.snapshot, &request.target, &namespace)),
        None => helm,
    };
    let exit = crate::exit::for_outcome(ended.outcome);
    finish(request, Some(&conn), &namespace, ended, helm, started).await?;
    Ok(exit)
}
