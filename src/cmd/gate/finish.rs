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
        write_atomic(
            path,
            mdiag_render::inert::text(&xml, false).as_bytes(),
            false,
        )?;
    }
    if let Some(path) = &request.html {
        let page = mdiag_render::html::gate(&report, request.lang);
        write_atomic(
            path,
            mdiag_render::inert::text(&page, false).as_bytes(),
            false,
        )?;
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
    crate::cmd::emit(&text, request.output.paints(request.color))
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
