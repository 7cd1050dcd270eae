//! `mdiag gate TARGET --timeout D`: wait on watches until the rollout
//! converges (0), fails on a definitive symptom (1), or times out (3); 4
//! when the API cannot be reached or read, so no verdict either way.
//!
//! The loop only wires: the watches fill stores ([`crate::source::watch`]),
//! each change is judged on a fresh snapshot by the pure analysis
//! ([`crate::analysis::gate`]), and the render module shows and writes it.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};

use super::source::SourceRequest;
use crate::analysis::gate::{self, GatePolicy, GateView, Judgement};
use crate::analysis::{self, Diagnosis};
use crate::catalogue::Lang;
use crate::chain::{self, CONTROLLER_NAME, CONTROLLER_NAMESPACE, ControllerLocation};
use crate::cli::{GateArgs, GlobalArgs, OutputFormat};
use crate::exit::{Exit, UsageError};
use crate::model::{Clock, ClockSource, Origin, OriginKind, Snapshot, TargetKind, TargetSpec};
use crate::render::gate::{
    GateDetails, GateReport, HelmRelease, Outcome, Progress, ReportCheck, checks_text, headline,
    junit, waiting_text,
};
use crate::render::report::{ReportTarget, RunInfo, trace_report};
use crate::render::{Style, human};
use crate::source::live::{self, Connection, LogCaps};
use crate::source::redact::Redactor;
use crate::source::watch::{BACKOFF_MAX, Signal, WatchFailure, WatchHealth, WatchPlan, WatchSet};
use crate::source::write::{to_file, write_atomic, write_file};

/// How often the rollout is judged without news: time-bound findings (a
/// Lease not renewed, a controller past its grace) and the probe for a lost API.
const TICK: Duration = Duration::from_secs(1);

/// The flags as a plain request.
pub struct GateRequest {
    pub target: TargetSpec,
    pub source: SourceRequest,
    pub timeout: Duration,
    pub policy: GatePolicy,
    pub report: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub evidence: Option<PathBuf>,
    pub helm_release: Option<String>,
    pub output: OutputFormat,
    pub lang: Lang,
    pub color: bool,
}

impl GateRequest {
    pub fn from_args(global: &GlobalArgs, args: &GateArgs) -> anyhow::Result<Self> {
        if global.snapshot.is_some() || global.at.is_some() {
            return Err(UsageError(
                "gate waits on a live cluster; to judge a file use trace --snapshot FILE".into(),
            )
            .into());
        }
        if global.all_namespaces || global.selector.is_some() {
            return Err(UsageError(
                "gate waits on one workload in one namespace; use -n NS".into(),
            )
            .into());
        }
        let target = TargetSpec::parse(&args.target, global.namespace.as_deref())?;
        if target.kind == TargetKind::Pod {
            return Err(UsageError(
                "gate waits on a rollout: name a ModelService or deploy/NAME, not a Pod".into(),
            )
            .into());
        }
        if args.max_restarts < 1 {
            return Err(UsageError("--max-restarts must be at least 1".into()).into());
        }
        let fail_on = match &args.fail_on {
            None => GatePolicy::default().fail_on,
            Some(ids) if ids.iter().any(|i| i == "none") => {
                if ids.len() > 1 {
                    return Err(UsageError("--fail-on none stands alone".into()).into());
                }
                BTreeSet::new()
            }
            Some(ids) => {
                let known = analysis::rule_ids();
                let mut set = BTreeSet::new();
                for id in ids.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
                    if !known.contains(&id) {
                        return Err(UsageError(format!(
                            "--fail-on: {id:?} is not a finding id; `mdiag explain --list` shows them"
                        ))
                        .into());
                    }
                    set.insert(id.to_string());
                }
                set
            }
        };
        Ok(GateRequest {
            target,
            source: SourceRequest::from_global(global)?,
            timeout: args.timeout,
            policy: GatePolicy {
                fail_on,
                max_restarts: args.max_restarts,
            },
            report: args.report.clone(),
            junit: args.junit.clone(),
            evidence: args.evidence.clone(),
            helm_release: args.helm_release.clone(),
            output: args.output,
            lang: super::lang(global),
            color: super::color(global),
        })
    }
}

/// What the wait ended with.
struct Ended {
    outcome: Outcome,
    /// The last judged moment, if any.
    last: Option<Judged>,
    reason: Option<String>,
    relists: u32,
    disconnects: u32,
}

/// One judged moment: the snapshot it was judged on and the verdicts.
struct Judged {
    snapshot: Snapshot,
    diagnosis: Diagnosis,
    view: GateView,
}

pub async fn run(global: &GlobalArgs, args: &GateArgs) -> anyhow::Result<Exit> {
    let request = GateRequest::from_args(global, args)?;
    let started = Instant::now();
    let conn = match live::connect(&request.source.live).await {
        Ok(c) => c,
        Err(e) => {
            let reason = e.to_string();
            let namespace = request.target.namespace.clone().unwrap_or_default();
            let ended = Ended {
                outcome: Outcome::CouldNotDecide,
                last: None,
                reason: Some(reason),
                relists: 0,
                disconnects: 0,
            };
            finish(&request, None, &namespace, ended, None, started).await?;
            return Ok(e.exit());
        }
    };
    let namespace = request
        .target
        .namespace
        .clone()
        .or_else(|| request.source.namespace.clone())
        .unwrap_or_else(|| conn.default_namespace.clone());

    let helm = match &request.helm_release {
        Some(name) => Some(read_helm_release(&conn, name, &namespace).await),
        None => None,
    };
    let ended = wait(&request, &conn, &namespace, helm.as_ref(), started).await?;
    let helm = match (&request.helm_release, &ended.last) {
        (Some(_), Some(j)) => helm.map(|h| helm_matches(h, j, &request.target)),
        _ => helm,
    };
    let exit = match ended.outcome {
        Outcome::Converged => Exit::Healthy,
        Outcome::Failed => Exit::Problem,
        Outcome::TimedOut => Exit::TimedOut,
        Outcome::CouldNotDecide => Exit::Unreachable,
    };
    finish(&request, Some(&conn), &namespace, ended, helm, started).await?;
    Ok(exit)
}

/// Watches and judges until a verdict or the timeout.
async fn wait(
    request: &GateRequest,
    conn: &Connection,
    namespace: &str,
    helm: Option<&HelmRelease>,
    started: Instant,
) -> anyhow::Result<Ended> {
    let wanted = request.source.resource.as_deref().unwrap_or("msvc");
    let served = match live::discover_served(conn, wanted).await {
        Ok(s) => s,
        Err(e) => {
            return Ok(Ended {
                outcome: Outcome::CouldNotDecide,
                last: None,
                reason: Some(e.to_string()),
                relists: 0,
                disconnects: 0,
            });
        }
    };
    if served.model_service.is_none() && request.target.kind == TargetKind::ModelService {
        return Err(live::LiveError::NoResource {
            wanted: wanted.to_string(),
        }
        .into());
    }
    let server_version = conn
        .client
        .apiserver_version()
        .await
        .ok()
        .map(|v| v.git_version);
    let origin = Origin {
        kind: OriginKind::Live,
        location: conn.server.clone(),
        context: conn.context.clone(),
        server_version,
        ..Origin::default()
    };
    let controller_spots = match &request.source.controller {
        Some(c) => vec![c.clone()],
        None => vec![
            ControllerLocation {
                namespace: namespace.to_string(),
                name: CONTROLLER_NAME.into(),
            },
            ControllerLocation {
                namespace: CONTROLLER_NAMESPACE.into(),
                name: CONTROLLER_NAME.into(),
            },
        ],
    };
    let watch_timeout = request
        .source
        .live
        .request_timeout
        .map_or(Duration::from_secs(290), |t| {
            t.saturating_sub(Duration::from_secs(5))
        });
    let mut watches = WatchSet::start(
        conn,
        &WatchPlan {
            namespace,
            served: &served,
            controller_spots,
            watch_timeout,
        },
    );
    let mut health = WatchHealth::new(watches.ids());
    let mut progress = Progress::new(std::io::stderr().is_terminal());
    let deadline = tokio::time::Instant::now() + request.timeout;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last: Option<Judged> = None;
    let mut disconnects = 0u32;
    // When the API answered again after failing watches.
    let mut answered_again: Option<Instant> = None;
    let mut relists_shown = 0u32;

    let ended = loop {
        let mut dirty = false;
        tokio::select! {
            signal = watches.next() => {
                let Some(signal) = signal else {
                    break Ended {
                        outcome: Outcome::CouldNotDecide,
                        last,
                        reason: Some("every watch ended".into()),
                        relists: health.relists,
                        disconnects,
                    };
                };
                let mut batch = vec![signal];
                while let Some(more) = watches.try_next() {
                    batch.push(more);
                }
                for s in &batch {
                    let was_failing = health.failing().is_some();
                    dirty |= health.record(s);
                    if let Signal::Failed { id, failure, reason, .. } = s {
                        answered_again = None;
                        if !was_failing && *failure == WatchFailure::Unreachable {
                            disconnects += 1;
                            progress.note(started.elapsed(), &format!("lost the watch on {}: {reason}; retrying", id.label()));
                        } else if *failure == WatchFailure::Expired {
                            progress.note(started.elapsed(), &format!("watch on {} expired (410 Gone): listing again", id.label()));
                        } else if *failure == WatchFailure::Denied {
                            progress.note(started.elapsed(), &format!("may not watch {}: {reason}", id.label()));
                        }
                    }
                }
                if health.relists > relists_shown {
                    relists_shown = health.relists;
                    progress.note(started.elapsed(), &format!("relisted ({} so far)", health.relists));
                }
            }
            _ = tick.tick() => {
                dirty = true;
                if health.failing().is_some() {
                    match answered_again {
                        None => {
                            let mut all = true;
                            for id in health.failing_ids() {
                                all &= watches.probe(&conn.client, &id).await;
                            }
                            if all {
                                answered_again = Some(Instant::now());
                            }
                        }
                        // Each watcher retries within its backoff: after that,
                        // one that has not failed again is watching again.
                        Some(at) if at.elapsed() > BACKOFF_MAX + TICK => {
                            health.recovered();
                            answered_again = None;
                            progress.note(started.elapsed(), "the API answers again; watches resumed");
                        }
                        Some(_) => {}
                    }
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                let (outcome, reason) = match (health.failing(), &last) {
                    (Some((id, why)), _) => (
                        Outcome::CouldNotDecide,
                        Some(format!("the API stopped answering ({}: {why}) and the timeout came first", id.label())),
                    ),
                    (None, None) => (
                        Outcome::CouldNotDecide,
                        Some("the watches never completed their first list".into()),
                    ),
                    (None, Some(_)) => (Outcome::TimedOut, None),
                };
                break Ended { outcome, last, reason, relists: health.relists, disconnects };
            }
        }
        if let Some(gap) = health.chain_denied(namespace) {
            break Ended {
                outcome: Outcome::CouldNotDecide,
                last,
                reason: Some(format!(
                    "may not watch {} in {namespace}: {}",
                    gap.resource, gap.reason
                )),
                relists: health.relists,
                disconnects,
            };
        }
        // Judge only a whole, current view: no verdict on a half-listed or
        // stale store.
        if !dirty || !health.synced() || health.failing().is_some() {
            continue;
        }
        let snapshot = watches.snapshot(&origin, &health.gaps());
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
        let diagnosis = analysis::analyze(&snapshot, &chain, Timestamp::now());
        let mut view = gate::judge(&snapshot, &chain, &diagnosis, &request.policy);
        let release_failed = helm.is_some_and(|h| helm_check(h, &mut view));
        progress.update(started.elapsed(), &diagnosis, &view);
        let outcome = match view.judgement {
            _ if release_failed => Some(Outcome::Failed),
            Judgement::Converged => Some(Outcome::Converged),
            Judgement::Failed { .. } => Some(Outcome::Failed),
            Judgement::Waiting { .. } => None,
        };
        drop(chain);
        last = Some(Judged {
            snapshot,
            diagnosis,
            view,
        });
        if let Some(outcome) = outcome {
            let reason = release_failed.then(|| {
                "the Helm release failed: what it declared may not be in effect".to_string()
            });
            break Ended {
                outcome,
                last,
                reason,
                relists: health.relists,
                disconnects,
            };
        }
    };
    progress.finish();
    Ok(ended)
}

/// Adds the release's check. A pending release is awaited; returns whether
/// it failed, which fails the gate: what was asked may not be applied.
fn helm_check(helm: &HelmRelease, view: &mut GateView) -> bool {
    let Some(status) = helm.status.as_deref() else {
        return false;
    };
    let passed = status == "deployed" || status == "superseded";
    view.checks.insert(
        0,
        gate::Check {
            name: "helm-release-deployed",
            passed,
            detail: format!(
                "release {} revision {} is {status}",
                helm.name,
                helm.revision.map_or("?".into(), |r| r.to_string())
            ),
        },
    );
    if !passed
        && matches!(
            view.judgement,
            Judgement::Converged | Judgement::Waiting { .. }
        )
    {
        view.judgement = Judgement::Waiting {
            check: "helm-release-deployed",
            detail: view.checks[0].detail.clone(),
        };
    }
    status == "failed"
}

/// Reads the release's status and revision from the labels of Helm's
/// storage Secrets, as metadata only: the Secret's data (the release,
/// values included) is never requested.
async fn read_helm_release(conn: &Connection, name: &str, namespace: &str) -> HelmRelease {
    let mut release = HelmRelease {
        name: name.to_string(),
        namespace: namespace.to_string(),
        ..HelmRelease::default()
    };
    let api: Api<Secret> = Api::namespaced(conn.client.clone(), namespace);
    let params = ListParams::default().labels(&format!("owner=helm,name={name}"));
    match api.list_metadata(&params).await {
        Ok(list) => {
            release.read = true;
            let newest = list
                .items
                .iter()
                .filter_map(|s| {
                    let labels = s.metadata.labels.as_ref()?;
                    let version = labels.get("version")?.parse::<i64>().ok()?;
                    Some((version, labels.get("status").cloned()))
                })
                .max_by_key(|(v, _)| *v);
            match newest {
                Some((version, status)) => {
                    release.revision = Some(version);
                    release.status = status;
                }
                None => release.notes.push(format!(
                    "no Helm release {name:?} in {namespace} (no Secret labelled owner=helm,name={name})"
                )),
            }
        }
        Err(e) => {
            let why = match &e {
                kube::Error::Api(s) => s.message.clone(),
                other => other.to_string(),
            };
            release.notes.push(format!(
                "cannot read the Helm release's Secret metadata ({why}); judged without it"
            ));
        }
    }
    release
}

/// Compares the release with the target's Helm labels and annotations.
fn helm_matches(mut helm: HelmRelease, judged: &Judged, target: &TargetSpec) -> HelmRelease {
    let objects = &judged.snapshot.objects;
    let meta = match target.kind {
        TargetKind::ModelService => objects
            .model_services
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some(target.name.as_str()))
            .map(|m| &m.metadata),
        _ => objects
            .deployments
            .iter()
            .find(|d| d.metadata.name.as_deref() == Some(target.name.as_str()))
            .map(|d| &d.metadata),
    };
    let Some(meta) = meta else {
        return helm;
    };
    let label = |k: &str| meta.labels.as_ref().and_then(|l| l.get(k)).cloned();
    let annotation = |k: &str| meta.annotations.as_ref().and_then(|a| a.get(k)).cloned();
    helm.chart = label("helm.sh/chart");
    helm.app_version = label("app.kubernetes.io/version");
    let release = annotation("meta.helm.sh/release-name");
    let release_ns = annotation("meta.helm.sh/release-namespace");
    let matches = release.as_deref() == Some(helm.name.as_str())
        && release_ns.as_deref() == Some(helm.namespace.as_str());
    helm.manages_target = Some(matches);
    if !matches {
        helm.notes.push(match release {
            Some(r) => format!(
                "{} {} belongs to Helm release {r:?} in {}, not {:?}",
                target.kind.as_str(),
                target.name,
                release_ns.as_deref().unwrap_or("?"),
                helm.name
            ),
            None => format!(
                "{} {} carries no Helm release annotation: Helm does not manage it",
                target.kind.as_str(),
                target.name
            ),
        });
    }
    helm
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
        match write_evidence(conn, judged, namespace, &request.target, path).await {
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
    let view = judged.map(|j| &j.view);
    let diagnosis = judged.map(|j| &j.diagnosis);
    let decided_by = match (ended.outcome, view, diagnosis) {
        (Outcome::Failed, _, _) if ended.reason.is_some() => Some("helm-release-deployed".into()),
        (Outcome::Failed, Some(v), Some(d)) => match v.judgement {
            Judgement::Failed { finding } => d.findings.get(finding).map(|f| f.id.to_string()),
            _ => None,
        },
        (
            Outcome::TimedOut,
            Some(GateView {
                judgement: Judgement::Waiting { check, .. },
                ..
            }),
            _,
        ) => Some(check.to_string()),
        _ => None,
    };
    let details = GateDetails {
        timeout_seconds: request.timeout.as_secs_f64(),
        fail_on: request.policy.fail_on.iter().cloned().collect(),
        max_restarts: request.policy.max_restarts,
        decided_by,
        waiting_for: match ended.outcome {
            Outcome::Converged | Outcome::Failed => None,
            _ => view.and_then(waiting_text),
        },
        reason: ended.reason.clone(),
        checks: view
            .map(|v| v.checks.iter().map(ReportCheck::from).collect())
            .unwrap_or_default(),
        relists: ended.relists,
        disconnects: ended.disconnects,
        helm,
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
        let mut text = serde_json::to_string_pretty(&report).context("cannot encode the report")?;
        text.push('\n');
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
    let text = match request.output {
        OutputFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&report).context("cannot encode the report")?;
            s.push('\n');
            s
        }
        OutputFormat::Yaml => {
            serde_saphyr::to_string(&report).context("cannot encode the report")?
        }
        OutputFormat::Table => {
            let style = Style {
                lang: request.lang,
                color: request.color,
                now: clock.now,
            };
            let mut out = headline(ended.outcome, elapsed, diagnosis, &report.gate, &style);
            if let Some(v) = view {
                out.push_str(&checks_text(&v.checks, &style));
            }
            if let Some(h) = &report.gate.helm {
                out.push_str(&helm_text(h));
            }
            if let Some(j) = judged
                && ended.outcome != Outcome::Converged
                && let Ok(chain) = chain::walk(
                    &j.snapshot,
                    &request.target,
                    namespace,
                    request.source.controller.as_ref(),
                )
            {
                out.push('\n');
                out.push_str(&human::trace(&chain, &j.diagnosis, &run, &style));
            }
            out
        }
    };
    super::emit(&text)
}

fn helm_text(h: &HelmRelease) -> String {
    let mut out = format!(
        "  helm release {}: {}",
        h.name,
        match (&h.status, h.revision) {
            (Some(s), Some(r)) => format!("revision {r} {s}"),
            _ => "not read".into(),
        }
    );
    if let Some(chart) = &h.chart {
        out.push_str(&format!(", chart {chart}"));
    }
    if let Some(v) = &h.app_version {
        out.push_str(&format!(", app {v}"));
    }
    out.push('\n');
    for n in &h.notes {
        out.push_str(&format!("    note: {n}\n"));
    }
    out
}

/// The chain as the gate last saw it, with its Pods' logs, in the
/// snapshot format.
async fn write_evidence(
    conn: &Connection,
    judged: &mut Judged,
    namespace: &str,
    target: &TargetSpec,
    path: &Path,
) -> anyhow::Result<u64> {
    let mut snapshot = Snapshot {
        origin: judged.snapshot.origin.clone(),
        objects: judged.snapshot.objects.clone(),
        logs: Vec::new(),
        gaps: judged.snapshot.gaps.clone(),
        redactions: Vec::new(),
    };
    if let Ok(chain) = chain::walk(&judged.snapshot, target, namespace, None) {
        snapshot.objects = chain::chain_objects(&judged.snapshot, &chain);
    }
    let caps = LogCaps {
        bytes: 256 * 1024,
        lines: 2000,
        concurrency: 8,
    };
    super::snapshot::add_logs(conn, &mut snapshot, namespace, caps, false).await;
    // The capture time is the moment judged, so a replay reaches the same verdict.
    snapshot.origin.captured_at = Some(judged.diagnosis.now);
    snapshot.origin.namespace = Some(namespace.to_string());
    snapshot.origin.target = Some(TargetSpec {
        namespace: Some(namespace.to_string()),
        ..target.clone()
    });
    let file = to_file(&snapshot, &Redactor::new(&[])?);
    Ok(write_file(path, &file)?)
}
