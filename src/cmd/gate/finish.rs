//! The end of a wait: the last view judged, the reports, JUnit, HTML and
//! evidence written, the human report printed.

use super::*;

/// Evidence, reports and the verdict on stdout.
pub(super) async fn finish(
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
                let said = mdiag_core::catalogue::Message::new("stderr.evidence_written")
                    .arg("path", path.display().to_string())
                    .arg("bytes", bytes as i64);
                eprintln!("mdiag: {}", said.render(request.lang));
                evidence_file = Some(path.display().to_string());
            }
            Err(e) => {
                let said = mdiag_core::catalogue::Message::new("stderr.evidence_failed")
                    .arg("detail", crate::error::said(&e, request.lang));
                eprintln!("mdiag: {}", said.render(request.lang));
            }
        }
    }
    let views = render(
        request,
        namespace,
        &mut ended,
        helm,
        started.elapsed(),
        evidence_file,
    )?;
    if let (Some(path), Some(text)) = (&request.report, &views.report) {
        write_atomic(path, text.as_bytes(), false)?;
    }
    if let (Some(path), Some(xml)) = (&request.junit, &views.junit) {
        write_atomic(path, xml.as_bytes(), false)?;
    }
    if let (Some(path), Some(page)) = (&request.html, &views.html) {
        write_atomic(path, page.as_bytes(), false)?;
    }
    crate::cmd::emit(&views.stdout, request.output.paints(request.color))
}

/// What the gate writes and prints when it ends: the report (`--report`),
/// JUnit (`--junit`), the HTML page (`--html`), each only when asked for,
/// and stdout in the chosen format; each as its bytes are written, outside
/// text escaped (docs/security.md#inert-output).
pub struct Views {
    pub report: Option<String>,
    pub junit: Option<String>,
    pub html: Option<String>,
    pub stdout: String,
    /// The progress line the wait printed on stderr (not at a terminal)
    /// for the last moment judged.
    pub progress: Option<String>,
}

/// Renders the end of a wait. The moments were redacted as they were
/// judged; what the wait ended with (an API's error text, Helm's words)
/// is redacted here, so no view quotes the cluster unredacted.
pub(super) fn render(
    request: &GateRequest,
    namespace: &str,
    ended: &mut Ended,
    helm: Option<HelmRelease>,
    elapsed: std::time::Duration,
    evidence_file: Option<String>,
) -> anyhow::Result<Views> {
    if let Some(m) = &mut ended.reason {
        request.redactor.message(m);
    }
    let mut helm = helm;
    if let Some(h) = &mut helm {
        request.redactor.helm(h);
    }
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
        context: request.source.live.context.clone(),
    };
    let clock = Clock {
        now: diagnosis.map_or_else(Timestamp::now, |d| d.now),
        source: ClockSource::Live,
    };
    let default_origin = Origin::default();
    let mut origin = judged.map_or(default_origin, |j| j.snapshot.origin.clone());
    request.redactor.origin(&mut origin);
    let run = RunInfo {
        origin: &origin,
        clock,
        requests: None,
    };
    let trace = diagnosis.map(|d| trace_report(d, &run, request.lang));
    let report = GateReport::new(trace, target, ended.outcome, elapsed, details);
    let json = || mdiag_render::encode(&report, Encoding::Json);
    let junit_xml = match &request.junit {
        Some(_) => {
            let label = format!("{namespace}/{}", request.target.name);
            Some(junit(
                &label,
                ended.outcome,
                elapsed,
                view,
                diagnosis,
                &report.gate,
            )?)
        }
        None => None,
    };
    let stdout = match request.output {
        OutputFormat::Json => json()?,
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
    let inert = |text: &str| mdiag_render::inert::text(text, false);
    Ok(Views {
        report: request.report.as_ref().map(|_| json()).transpose()?,
        junit: junit_xml.as_deref().map(inert),
        html: request
            .html
            .as_ref()
            .map(|_| inert(&mdiag_render::html::gate(&report, request.lang))),
        stdout: mdiag_render::inert::text(&stdout, request.output.paints(request.color)),
        progress: judged.map(|j| {
            mdiag_render::gate::progress_line(
                elapsed,
                &mdiag_render::gate::progress_state(&j.diagnosis, &j.decision.view, request.lang),
            )
        }),
    })
}

/// The chain as the gate last saw it, with its Pods' logs, in the
/// snapshot format.
pub(super) async fn write_evidence(
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
        warnings: Vec::new(),
    };
    if let Ok(chain) = chain::walk(
        &judged.snapshot,
        target,
        namespace,
        request.source.controller.as_ref(),
    ) {
        snapshot.objects = chain::chain_objects(&judged.snapshot, &chain);
    }
    crate::cmd::snapshot::add_logs(conn, &mut snapshot, namespace, LogCaps::DEFAULT, false).await;
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
