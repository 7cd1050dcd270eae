//! The headline (docs/contract.md#states): what users get now, then where the
//! rollout stands, with the lead finding's id. Trace, triage, the gate and
//! `triage --alert` all print it from here, so they say the same thing.
//! Its words are the `headline.*` messages of `messages.yaml`.

use super::Style;
use mdiag_core::analysis::{Basis, Diagnosis, Finding, Stage, State, StatusReading, Step};
use mdiag_core::catalogue::{Arg, FindingId, Lang, Message, Severity, catalogue};

/// The message id of the headline's first word(s): the state, in the words
/// a person on call would use.
fn word_id(d: &Diagnosis) -> &'static str {
    // Ready Pods counted, not endpoints: READY, not SERVING.
    let worker = d.verdict.serving.counts_ready();
    // A run to completion (a Job's Pods, a bare Pod that runs once): its
    // ladder ends at completed, and its states read as a run's.
    if d.steps.last().is_some_and(|s| s.step == Step::Completed) {
        let suspended = d
            .verdict
            .serving
            .status
            .as_ref()
            .is_some_and(|st| st.stage == Stage::Suspended);
        match d.verdict.state {
            State::Progressing if suspended => return "headline.word_suspended",
            State::Serving => return "headline.word_complete",
            State::Progressing => return "headline.word_running",
            State::NotServing => return "headline.word_failed",
            State::Degraded | State::Unknown => {}
        }
    }
    match d.verdict.state {
        State::Serving if worker => "headline.word_ready",
        State::Serving => "headline.word_serving",
        State::Progressing => "headline.word_progressing",
        State::Degraded if rollout_stuck(d) => "headline.word_rollout_stuck",
        State::Degraded => "headline.word_degraded",
        State::NotServing if worker => "headline.word_not_ready",
        State::NotServing => "headline.word_not_serving",
        State::Unknown => "headline.word_unknown",
    }
}

/// The headline's first word(s), as printed.
pub fn word(d: &Diagnosis, lang: Lang) -> String {
    Message::new(word_id(d)).render(lang)
}

/// The mark before the word, coloured by how bad it is.
pub fn mark(d: &Diagnosis, style: &Style) -> String {
    match d.verdict.state {
        State::Serving => style.good("✔"),
        State::Progressing => style.warn("⧗"),
        State::Degraded => style.warn("!"),
        State::NotServing => style.bad("✘"),
        State::Unknown => style.warn("?"),
    }
}

/// The word, coloured as its mark.
pub fn painted_word(d: &Diagnosis, style: &Style) -> String {
    let w = word(d, style.lang);
    match d.verdict.state {
        State::Serving => style.good(&w),
        State::NotServing => style.bad(&w),
        _ => style.warn(&w),
    }
}

/// `WORD  sentence`, plain: the JSON `verdict.summary`, the gate's lines.
pub fn text(d: &Diagnosis, lang: Lang) -> String {
    format!("{}  {}", word(d, lang), sentence(d, lang))
}

/// A degraded rollout whose older revisions still carry the users, or
/// whose declaration its controllers have not taken up: the rollout is
/// stuck, not the service broken.
fn rollout_stuck(d: &Diagnosis) -> bool {
    let s = &d.verdict.serving;
    !s.observed || d.revisions.iter().any(|r| !r.current && s.count_of(r) > 0)
}

fn revision(r: Option<i64>) -> Message {
    match r {
        Some(r) => Message::new("headline.revision").arg("revision", r),
        None => Message::new("headline.current_revision"),
    }
}

/// The catalogue's reason for the finding: the cluster's own word where
/// it has one, a short phrase otherwise; every headline names its cause so.
fn reason(f: &Finding, lang: Lang) -> String {
    catalogue()
        .get(f.id)
        .map(|e| e.reason.get(lang).to_string())
        .unwrap_or_else(|| f.id.to_string())
}

/// `OOMKilled [oom-killed]`, or that the evidence holds no cause. The
/// title is the catalogue's, already in `lang`.
fn lead_text(d: &Diagnosis, lang: Lang) -> Message {
    match d.lead() {
        Some(f) => Message::new("headline.lead")
            .arg("title", reason(f, lang))
            .arg("id", f.id.as_str()),
        None => Message::new("headline.no_cause"),
    }
}

/// Revisions that carry users beside the rollout: older ones, and while
/// the declaration is not in effect the current one too (it runs the
/// previous declaration).
fn still_serving(d: &Diagnosis) -> Vec<Arg> {
    let s = &d.verdict.serving;
    d.revisions
        .iter()
        .filter(|r| (!r.current || !s.observed) && s.count_of(r) > 0)
        .map(|r| {
            let id = if s.counts_ready() {
                "headline.still_ready"
            } else {
                "headline.still_serving"
            };
            Message::new(id)
                .arg("revision", revision(r.revision))
                .arg("n", s.count_of(r))
                .arg("desired", r.desired.unwrap_or(s.desired))
                .into()
        })
        .collect()
}

fn current_count(d: &Diagnosis) -> i32 {
    if d.verdict.serving.counts_ready() {
        d.replicas.ready
    } else {
        d.replicas.serving
    }
}

/// A step as the headline names it: the id in English, the quoted
/// Chinese name in Chinese.
fn step(s: Step) -> Message {
    Message::new("headline.step").arg("step", Message::new(crate::words::step_id(s)))
}

fn stopped(d: &Diagnosis) -> Message {
    Message::new("headline.stopped").arg("step", step(d.verdict.last_step))
}

/// Parts of the sentence, joined by `; ` (`；`).
fn joined(parts: Vec<Arg>, lang: Lang) -> String {
    Arg::list(parts, "sep.semicolon").render(lang)
}

/// The sentence after the word, with what it rests on when that is not
/// the endpoints (docs/contract.md#basis).
pub fn sentence(d: &Diagnosis, lang: Lang) -> String {
    if let Some(run) = run_sentence(d, lang) {
        return run;
    }
    let s = &d.verdict.serving;
    if d.verdict.state == State::Unknown {
        return state_sentence(d, lang);
    }
    if let Some(status) = &s.status {
        return by_status(d, status, lang);
    }
    let mut out = state_sentence(d, lang);
    if s.basis == Basis::Pods && !s.worker {
        let (kinds, reasons) = unread_words(d, lang);
        out.push_str(
            &Message::new("headline.by_pods")
                .arg("kinds", kinds)
                .arg("reasons", reasons)
                .render(lang),
        );
    }
    out
}

/// The unread kinds and, once each, why: `Services, EndpointSlices` and
/// `not in the file`.
fn unread_words(d: &Diagnosis, lang: Lang) -> (Arg, Arg) {
    let unread = &d.verdict.serving.unread;
    let kinds: Vec<Arg> = unread.iter().map(|(r, _)| display_kind(r)).collect();
    let mut reasons: Vec<String> = unread
        .iter()
        .map(|(_, r)| Message::new(reason_id(r)).render(lang))
        .collect();
    reasons.sort();
    reasons.dedup();
    (Arg::list(kinds, "sep.enum"), Arg::list(reasons, "sep.enum"))
}

fn state_sentence(d: &Diagnosis, lang: Lang) -> String {
    let s = &d.verdict.serving;
    let rev = revision(s.current_revision);
    let desired = s.desired;
    let worker = || Message::new("headline.worker");
    match d.verdict.state {
        State::Serving => {
            let n = current_count(d);
            // A partition or OnDelete keeps some Pods on an older revision
            // on purpose: say how many are where.
            let held = d.pods.iter().filter(|p| p.held && !p.terminating).count();
            let head = if held > 0 {
                let updated = d
                    .pods
                    .iter()
                    .filter(|p| p.current && !p.held && !p.terminating)
                    .count();
                let what = if s.counts_ready() {
                    "headline.what_ready"
                } else {
                    "headline.what_serving"
                };
                // An Argo Rollout holds its stable Pods while it waits at a
                // step of its plan: the rollout is not complete.
                // A Knative Service's traffic split keeps them there.
                let id = match d.target.kind.as_str() {
                    "Rollout" => "headline.serving_held_step",
                    _ if d.chain.knative_service.is_some() => "headline.serving_split",
                    _ => "headline.serving_held",
                };
                Message::new(id)
                    .arg("what", Message::new(what))
                    .arg("updated", updated)
                    .arg("held", held)
            } else if s.worker {
                Message::new("headline.serving_worker").arg("worker", worker())
            } else {
                Message::new("headline.serving")
            };
            let mut out = head
                .arg("n", n)
                .arg("desired", desired)
                .arg("revision", rev)
                .render(lang);
            let old = d.replicas.old;
            if old > 0 {
                out.push_str(
                    &Message::new("headline.draining")
                        .arg("old", old)
                        .render(lang),
                );
            }
            let errors = count(d, Severity::Error);
            let warnings = count(d, Severity::Warning);
            match d.lead() {
                Some(_) if errors + warnings > 0 => {
                    let mut counts = Vec::new();
                    if errors > 0 {
                        counts.push(Message::new("headline.errors").arg("n", errors));
                    }
                    if warnings > 0 {
                        counts.push(Message::new("headline.warnings").arg("n", warnings));
                    }
                    out.push_str(
                        &Message::new("headline.counts")
                            .arg("counts", Arg::list(counts, "sep.comma"))
                            .arg("lead", lead_text(d, lang))
                            .render(lang),
                    );
                }
                Some(f) if old > 0 && f.id == FindingId::ROLLOUT_IN_PROGRESS => {
                    out.push_str(&format!(" [{}]", f.id));
                }
                Some(_) => out.push_str(
                    &Message::new("headline.note")
                        .arg("lead", lead_text(d, lang))
                        .render(lang),
                ),
                None => {}
            }
            out
        }
        State::Progressing => {
            let mut parts: Vec<Arg> = Vec::new();
            if s.observed && s.current_revision.is_some() {
                parts.push(
                    Message::new("headline.progress_ready")
                        .arg("revision", rev)
                        .arg("ready", d.replicas.ready)
                        .arg("desired", desired)
                        .into(),
                );
            } else {
                parts.push(waiting_for(d).into());
            }
            parts.extend(still_serving(d));
            let mut out = joined(parts, lang);
            if let Some(f) = d.lead() {
                out.push_str(&format!(" [{}]", f.id));
            }
            out
        }
        State::Degraded if rollout_stuck(d) => {
            let who = if s.observed && s.current_revision.is_some() {
                let n = current_count(d);
                if n > 0 {
                    Message::new("headline.stuck_serving")
                        .arg("revision", rev)
                        .arg("n", n)
                        .arg("desired", desired)
                } else {
                    rev
                }
            } else if let Some(m) = d.chain.platform.as_ref().filter(|p| p.observes_generation) {
                Message::new("headline.generation").arg("generation", m.generation)
            } else {
                Message::new("headline.new_revision")
            };
            let mut parts: Vec<Arg> = vec![
                Message::new("headline.stuck")
                    .arg("who", who)
                    .arg("stopped", stopped(d))
                    .arg("lead", lead_text(d, lang))
                    .into(),
            ];
            parts.extend(still_serving(d));
            joined(parts, lang)
        }
        State::Degraded => Message::new("headline.degraded")
            .arg("n", current_count(d))
            .arg("desired", desired)
            .arg("revision", rev)
            .arg("stopped", stopped(d))
            .arg("lead", lead_text(d, lang))
            .render(lang),
        State::NotServing => {
            let head = if s.worker {
                Message::new("headline.none_ready").arg("worker", worker())
            } else if s.counts_ready() {
                Message::new("headline.none_ready_pods")
            } else if d.replicas.group_size.is_some() {
                Message::new("headline.no_groups")
            } else {
                Message::new("headline.no_endpoints")
            }
            .arg("desired", desired);
            let m = match d.lead() {
                Some(_) => Message::new("headline.not_serving_stopped").arg("stopped", stopped(d)),
                None => Message::new("headline.not_serving_waiting").arg("waiting", waiting_for(d)),
            };
            m.arg("head", head)
                .arg("lead", lead_text(d, lang))
                .render(lang)
        }
        State::Unknown => {
            let kinds: Vec<Arg> = s.unread.iter().map(|(r, _)| display_kind(r)).collect();
            let mut reasons: Vec<String> = s
                .unread
                .iter()
                .map(|(_, r)| Message::new(reason_id(r)).render(lang))
                .collect();
            reasons.dedup();
            let mut out = Message::new("headline.unknown")
                .arg("kinds", Arg::list(kinds, "sep.enum"))
                .arg("reasons", Arg::list(reasons, "sep.enum"))
                .arg("step", step(d.verdict.last_step))
                .render(lang);
            if let Some(f) = d.lead()
                && f.severity != Severity::Info
            {
                out.push_str(&Message::new("sep.semicolon").render(lang));
                out.push_str(&lead_text(d, lang).render(lang));
            }
            out
        }
    }
}

/// The sentence of a verdict on the workload's own status: where its
/// status says the rollout is, in the words of `kubectl rollout status`,
/// the lead finding when there is a problem, and what it rests on.
fn by_status(d: &Diagnosis, st: &StatusReading, lang: Lang) -> String {
    let body = match st.stage {
        _ if st.kind == "Job" => job_status(st),
        // KServe said its spec gets no Deployment (no runtime serves it).
        _ if st.kind == "InferenceService" => Message::new("headline.status_no_deployment"),
        // Counted in Revisions, said in words.
        Stage::Complete if st.kind == "KnativeService" => {
            Message::new("headline.status_ksvc_ready")
        }
        Stage::Failed if st.kind == "KnativeService" && st.available > 0 => {
            Message::new("headline.status_ksvc_failed_old_serves")
        }
        Stage::Failed if st.kind == "KnativeService" => Message::new("headline.status_ksvc_failed"),
        Stage::Updating if st.kind == "KnativeService" => {
            Message::new("headline.status_ksvc_not_ready")
        }
        Stage::Complete => Message::new("headline.status_complete"),
        Stage::NotObserved => Message::new("headline.status_not_observed"),
        Stage::DeadlineExceeded => Message::new("headline.status_deadline"),
        Stage::Updating => Message::new("headline.status_updating"),
        Stage::OldPending => Message::new("headline.status_old_pending"),
        Stage::Unavailable if st.kind == "StatefulSet" => Message::new("headline.status_not_ready"),
        Stage::Unavailable => Message::new("headline.status_unavailable"),
        Stage::RevisionPending => Message::new("headline.status_revision_pending"),
        // Only a Job has these, and it is read above.
        Stage::Running | Stage::Suspended | Stage::Failed => job_status(st),
    }
    .arg("available", st.available)
    .arg("desired", st.desired)
    .arg("updated", st.updated)
    .arg("old", st.old);
    let mut parts: Vec<Arg> = vec![body.into()];
    if let Some(f) = d.lead()
        && f.severity != Severity::Info
    {
        parts.push(lead_text(d, lang).into());
    }
    let (kinds, reasons) = unread_words(d, lang);
    let mut out = joined(parts, lang);
    out.push_str(
        &Message::new("headline.by_status")
            .arg("kind", st.kind)
            .arg("kinds", kinds)
            .arg("reasons", reasons)
            .render(lang),
    );
    out
}

/// A Job by its own status: its succeeded Pods against its completions,
/// then where it stands (a failed one: how many Pods failed).
fn job_status(st: &StatusReading) -> Message {
    let head = Message::new("headline.run_completed")
        .arg("n", st.available)
        .arg("desired", st.desired);
    let id = match st.stage {
        Stage::Complete => return head,
        Stage::NotObserved => "headline.run_not_started",
        Stage::Suspended => "headline.run_suspended",
        Stage::Failed => "headline.run_failed",
        _ if st.old > 0 => "headline.run_retrying",
        _ => "headline.run_running",
    };
    Message::new(id).arg("head", head).arg("failed", st.old)
}

/// Where the ladder stands when no finding says why: the last step and,
/// if one is missing, the step it waits for.
fn waiting_for(d: &Diagnosis) -> Message {
    let last = step(d.verdict.last_step);
    match d.verdict.missing {
        Some(m) => Message::new("headline.waiting")
            .arg("step", last)
            .arg("missing", step(m)),
        None => Message::new("headline.at").arg("step", last),
    }
}

fn count(d: &Diagnosis, severity: Severity) -> usize {
    d.findings.iter().filter(|f| f.severity == severity).count()
}

/// The kind as people write it: Kubernetes' own kind names, which no
/// language translates, and API discovery in words.
fn display_kind(resource: &str) -> Arg {
    match resource {
        "apis" => Message::new("headline.kind_apis").into(),
        "endpointslices" => "EndpointSlices".into(),
        "services" => "Services".into(),
        "pods" => "Pods".into(),
        "replicasets" => "ReplicaSets".into(),
        "deployments" => "Deployments".into(),
        "statefulsets" => "StatefulSets".into(),
        "daemonsets" => "DaemonSets".into(),
        "controllerrevisions" => "ControllerRevisions".into(),
        "modelservices" => "ModelServices".into(),
        other => other.into(),
    }
}

/// Why a read failed, in one word: the gap's reason says more.
fn reason_id(reason: &str) -> &'static str {
    if reason == mdiag_core::model::Gap::NOT_IN_DUMP {
        return "headline.reason_not_in_file";
    }
    if reason == mdiag_core::model::Gap::KNATIVE_PREDICTOR_ABSENT {
        return "headline.reason_knative_predictor_absent";
    }
    let lower = reason.to_ascii_lowercase();
    if lower.contains("forbidden") || lower.contains("cannot list") {
        "headline.reason_forbidden"
    } else {
        "headline.reason_failed"
    }
}

/// The sentence of a run to completion (its ladder ends at completed):
/// how many of its Pods completed, and for a failed run where it stopped
/// and why.
/// How many of a run's Pods completed (a Job's, a bare Pod that runs
/// once); `None` for a workload that serves.
pub(crate) fn completed(d: &Diagnosis) -> Option<usize> {
    if d.steps.last().is_none_or(|s| s.step != Step::Completed) {
        return None;
    }
    Some(
        d.pods
            .iter()
            .filter(|p| p.current && !p.terminating && p.last_step == Step::Completed)
            .count(),
    )
}

fn run_sentence(d: &Diagnosis, lang: Lang) -> Option<String> {
    // A Job judged by its own status says so ([`by_status`]).
    if d.verdict.serving.status.is_some() {
        return None;
    }
    let n = completed(d)?;
    let head = Message::new("headline.run_completed")
        .arg("n", n)
        .arg("desired", d.verdict.serving.desired);
    let message = match d.verdict.state {
        State::Serving => head,
        State::Progressing => Message::new("headline.run_running").arg("head", head),
        State::NotServing => Message::new("headline.not_serving_stopped")
            .arg("head", head)
            .arg("stopped", stopped(d))
            .arg("lead", lead_text(d, lang)),
        State::Degraded | State::Unknown => return None,
    };
    Some(message.render(lang))
}
