//! `mdiag gate TARGET --timeout D`: wait on watches until the rollout
//! converges (0), fails on a definitive symptom (1), or times out (3); 4
//! when the API cannot be reached or read, so no verdict either way.
//!
//! The loop only wires: the watches fill stores ([`mdiag_source::watch`]),
//! each change is judged on a fresh snapshot by the pure analysis
//! ([`mdiag_core::analysis::gate`]), and the render module shows and writes it.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use jiff::Timestamp;

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
use mdiag_source::write::{to_file, write_atomic, write_file};

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

/// One judged moment: the snapshot it was judged on and the verdicts.
struct Judged {
    snapshot: Snapshot,
    diagnosis: Diagnosis,
    decision: Decision,
}

pub async fn run(request: &GateRequest) -> anyhow::Result<Exit> {
    let started = Instant::now();
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

/// Watches and judges until a verdict or the timeout.
async fn wait(
    request: &GateRequest,
    conn: &Connection,
    namespace: &str,
    helm: Option<&HelmRelease>,
    started: Instant,
    stop: &Stop,
) -> anyhow::Result<Ended> {
    let feed = stop
        .unless(Feed::start(
            conn,
            namespace,
            request.source.resource.as_deref(),
            request.source.controller.as_ref(),
            &request.target,
        ))
        .await;
    let mut feed = match feed {
        Err(signal) => return Ok(Ended::interrupted(signal)),
        Ok(Ok(f)) => f,
        Ok(Err(e @ live::LiveError::NoResource { .. })) => return Err(e.into()),
        Ok(Err(e)) => return Ok(Ended::undecided(e.to_string())),
    };
    let mut progress = Progress::new(std::io::stderr().is_terminal(), request.lang);
    let deadline = tokio::time::Instant::now() + request.timeout;
    let mut last: Option<Judged> = None;
    let mut crashes = CrashHistory::default();
    let (outcome, reason) = loop {
        let event = tokio::select! {
            event = feed.next() => event,
            signal = stop.signalled() => {
                break (Outcome::Interrupted, Some(interrupted_reason(signal, last.is_some())));
            }
            _ = tokio::time::sleep_until(deadline) => {
                break match (feed.failing(), &last) {
                    (Some(why), _) => (
                        Outcome::CouldNotDecide,
                        Some(Message::new("gate.api_stopped").arg("why", why)),
                    ),
                    (None, None) => (
                        Outcome::CouldNotDecide,
                        Some(Message::new("gate.never_listed")),
                    ),
                    (None, Some(_)) => (Outcome::TimedOut, None),
                };
            }
        };
        let mut snapshot = match event {
            FeedEvent::View(snapshot) => *snapshot,
            FeedEvent::Note(text) => {
                progress.note(started.elapsed(), &text);
                continue;
            }
            FeedEvent::Denied(reason) => break (Outcome::CouldNotDecide, Some(reason)),
            FeedEvent::Ended => {
                break (
                    Outcome::CouldNotDecide,
                    Some(Message::new("gate.watches_ended")),
                );
            }
        };
        // A Helm Secret that may not be read is a gap of the judged view.
        snapshot.gaps.extend(helm.and_then(|h| h.gap.clone()));
        let chain = match chain::walk(
            &snapshot,
            &request.target,
            namespace,
            request.source.controller.as_ref(),
        ) {
            Ok(c) => c,
            Err(not_found) => {
                progress.finish();
                return Err(super::source::explain_not_found(&snapshot, not_found));
            }
        };
        // Each new crash of the new revision is recorded with its last log
        // line, so a loop that repeats itself is called at its second crash.
        let unseen = crashes.unseen(&chain);
        if !unseen.is_empty() {
            let requests = unseen
                .iter()
                .map(|u| live::LogRequest {
                    namespace: u.namespace.clone(),
                    pod: u.pod.clone(),
                    container: u.container.clone(),
                    previous: u.previous,
                })
                .collect();
            // A log that cannot be read leaves the crash uncompared: the
            // restart budget decides, as without this memory.
            let (logs, _) =
                live::read_requested(conn, requests, LogCaps::CRASH_TAIL, &|_| {}).await;
            crashes.record(unseen, &logs);
        }
        let diagnosis = analysis::analyze(&snapshot, &chain, Timestamp::now());
        let moment = gate::Observation {
            snapshot: &snapshot,
            chain: &chain,
            diagnosis: &diagnosis,
            crashes: &crashes,
        };
        let decision = gate::decide(moment, &request.policy, helm);
        progress.update(started.elapsed(), &diagnosis, &decision.view);
        drop(chain);
        let ends = decision.outcome.map(|o| (o, decision.reason.clone()));
        last = Some(Judged {
            snapshot,
            diagnosis,
            decision,
        });
        if let Some(ended) = ends {
            break ended;
        }
    };
    progress.finish();
    Ok(Ended {
        outcome,
        last,
        reason,
        relists: feed.relists(),
        disconnects: feed.disconnects(),
    })
}

/// Evidence, reports and the verdict on stdout.
async fn finish(
    request: &GateRequest,
    conn: Option<&Connection>,
    namespace: &str,
    ended: Ended,
    helm: Option<HelmRelease>,
    started: Instant,
) -> anyhow::Result<()> {
    let mut ended = ended;
    let mut evidence_file = None;
    // Evidence first: Pods may be replaced as soon as CI moves on.
    if let (Some(path), Some(conn), Some(judged)) = (&request.evidence, conn, &mut ended.last)
        && ended.outcome != Outcome::Converged
    {
        match write_evidence(conn, judged, namespace, request, path).await {
            Ok(bytes) => {
                eprintln!(
                    "mdiag: evidence written to {} ({bytes} bytes)",
                    path.display()
                );
                evidence_file = Some(path.display().to_string());
            }
            Err(e) => eprintln!("mdiag: could not write the evidence: {e:#}"),
        }
    }
    let elapsed = started.elapsed();
    let judged = ended.last.as_ref();
    let view = judged.map(|j| &j.decision.view);
    let diagnosis = judged.map(|j| &j.diagnosis);
    let decided_by = gate::decided_by(ended.outcome, judged.map(|j| &j.decision), diagnosis);
    let details = GateDetails {
        timeout_seconds: request.timeout.as_secs_f64(),
        fail_on: request
            .policy
            .fail_on
            .iter()
            .map(|i| i.to_string())
            .collect(),
        max_restarts: request.policy.max_restarts,
        decided_by,
        waiting_for: match ended.outcome {
            Outcome::Converged | Outcome::Failed => None,
            _ => view.and_then(waiting_text),
        },
        waiting: match ended.outcome {
            Outcome::Converged | Outcome::Failed => None,
            _ => view.and_then(waiting_message),
        },
        reason: ended.reason.as_ref().map(Message::en),
        said_reason: ended.reason.clone(),
        checks: view
            .map(|v| v.checks.iter().map(ReportCheck::from).collect())
            .unwrap_or_default(),
        relists: ended.relists,
        disconnects: ended.disconnects,
        helm: helm.as_ref().map(ReportHelm::from),
        evidence_file,
    };
    let target = ReportTarget {
        kind: request.target.kind.as_str().to_string(),
        namespace: namespace.to_string(),
        name: request.target.name.clone(),
        uid: String::new(),
    };
    let clock = Clock {
        now: diagnosis.map_or_else(Timestamp::now, |d| d.now),
        source: ClockSource::Live,
    };
    let default_origin = Origin::default();
    let run = RunInfo {
        origin: judged.map_or(&default_origin, |j| &j.snapshot.origin),
        clock,
        requests: None,
    };
    let trace = diagnosis.map(|d| trace_report(d, &run, request.lang));
    let report = GateReport::new(trace, target, ended.outcome, elapsed, details);
    if let Some(path) = &request.report {
        let text = mdiag_render::encode(&report, Encoding::Json)?;
        write_atomic(path, text.as_bytes(), false)?;
    }
    if let Some(path) = &request.junit {
        let label = format!("{namespace}/{}", request.target.name);
        let xml = junit(
            &label,
            ended.outcome,
            elapsed,
            view,
            diagnosis,
            &report.gate,
        )?;
        write_atomic(path, xml.as_bytes(), false)?;
    }
    if let Some(path) = &request.html {
        let page = mdiag_render::html::gate(&report, request.lang);
        write_atomic(path, page.as_bytes(), false)?;
    }
    let text = match request.output {
        OutputFormat::Json => mdiag_render::encode(&report, Encoding::Json)?,
        OutputFormat::Yaml => mdiag_render::encode(&report, Encoding::Yaml)?,
        OutputFormat::Html => mdiag_render::html::gate(&report, request.lang),
        OutputFormat::Table => {
            let style = Style {
                lang: request.lang,
                color: request.color,
                now: clock.now,
                width: request.width,
                verbose: request.verbose,
            };
            human_report(
                ended.outcome,
                elapsed,
                judged.map(|j| (&j.diagnosis, &j.decision.view)),
                &report.gate,
                &run,
                &style,
            )
        }
    };
    super::emit(&text)
}

/// The chain as the gate last saw it, with its Pods' logs, in the
/// snapshot format.
async fn write_evidence(
    conn: &Connection,
    judged: &mut Judged,
    namespace: &str,
    request: &GateRequest,
    path: &Path,
) -> anyhow::Result<u64> {
    let target = &request.target;
    let mut snapshot = Snapshot {
        origin: judged.snapshot.origin.clone(),
        objects: judged.snapshot.objects.clone(),
        logs: Vec::new(),
        gaps: judged.snapshot.gaps.clone(),
        redactions: Vec::new(),
    };
    if let Ok(chain) = chain::walk(
        &judged.snapshot,
        target,
        namespace,
        request.source.controller.as_ref(),
    ) {
        snapshot.objects = chain::chain_objects(&judged.snapshot, &chain);
    }
    super::snapshot::add_logs(conn, &mut snapshot, namespace, LogCaps::DEFAULT, false).await;
    // The capture time is the moment judged, so a replay reaches the same verdict.
    snapshot.origin.captured_at = Some(judged.diagnosis.now);
    snapshot.origin.namespace = Some(namespace.to_string());
    snapshot.origin.target = Some(TargetSpec {
        namespace: Some(namespace.to_string()),
        ..target.clone()
    });
    let file = to_file(&snapshot, &request.redactor);
    Ok(write_file(path, &file)?)
}
