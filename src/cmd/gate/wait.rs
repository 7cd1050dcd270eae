//! The wait: the watch feed judged on every change, until a decision, the
//! timeout or a signal.

use super::*;

/// Watches and judges until a verdict or the timeout.
pub(super) async fn wait(
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
            FeedEvent::Note(mut text) => {
                request.redactor.message(&mut text);
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
        // A watched view holds no logs today; were it to, they would be
        // redacted whole before the analysis quotes their last lines.
        request.redactor.logs(&mut snapshot.logs);
        let chain = match chain::walk(
            &snapshot,
            &request.target,
            namespace,
            request.source.controller.as_ref(),
        ) {
            Ok(c) => c,
            Err(not_found) => {
                progress.finish();
                return Err(crate::cmd::source::explain_not_found(&snapshot, not_found));
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
        let (diagnosis, decision) =
            judge(request, &snapshot, &chain, &crashes, helm, Timestamp::now());
        // A verdict stands only on a view whose workloads a fresh read
        // confirms (see `Feed::confirms`); else the watch that lags brings
        // a newer view.
        let verdict = matches!(decision.outcome, Some(Outcome::Converged | Outcome::Failed));
        if verdict && !feed.confirms(&chain.workloads()).await {
            continue;
        }
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
