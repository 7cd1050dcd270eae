//! What `gate` shows and writes: the progress on stderr (a spinner for a
//! person at a terminal, one line per change for CI logs), the verdict
//! headline, the JSON report (the trace report plus the outcome) and JUnit XML.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::Style;
use super::report::{ReportTarget, TraceReport, report_finding, summary};
use mdiag_core::analysis::gate::{Check, GateView, HelmRelease, Judgement, Outcome};
use mdiag_core::analysis::{Diagnosis, format_duration};
use mdiag_core::catalogue::{Lang, Message};

/// The Helm release as the report shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReportHelm {
    pub name: String,
    pub namespace: String,
    /// Whether the release's metadata could be read.
    pub read: bool,
    pub revision: Option<i64>,
    /// deployed, failed, pending-upgrade...
    pub status: Option<String>,
    /// The target's `helm.sh/chart` label.
    pub chart: Option<String>,
    /// The target's `app.kubernetes.io/version` label.
    pub app_version: Option<String>,
    /// The target's Helm annotations name this release.
    pub manages_target: Option<bool>,
    /// What could not be read or does not match, in English words.
    pub notes: Vec<String>,
    /// The same, for the human report in its language.
    #[serde(skip)]
    pub said_notes: Vec<Message>,
}

impl From<&HelmRelease> for ReportHelm {
    fn from(h: &HelmRelease) -> Self {
        ReportHelm {
            name: h.name.clone(),
            namespace: h.namespace.clone(),
            read: h.read,
            revision: h.revision,
            status: h.status.clone(),
            chart: h.chart.clone(),
            app_version: h.app_version.clone(),
            manages_target: h.manages_target,
            notes: h.notes.iter().map(Message::en).collect(),
            said_notes: h.notes.clone(),
        }
    }
}

/// The `gate` section of the report: how it decided.
#[derive(Debug, Serialize)]
pub struct GateDetails {
    pub timeout_seconds: f64,
    pub fail_on: Vec<String>,
    pub max_restarts: i32,
    /// The finding id (failed) or the check (timed out) that decided it.
    pub decided_by: Option<String>,
    /// What it was still waiting for, when it did not converge.
    pub waiting_for: Option<String>,
    /// The same, for the human line in its language.
    #[serde(skip)]
    pub waiting: Option<Message>,
    /// Why no verdict could be reached, or why a failure is final: in
    /// English whatever `--lang` says.
    pub reason: Option<String>,
    /// The same, for the human line in its language.
    #[serde(skip)]
    pub said_reason: Option<Message>,
    pub checks: Vec<ReportCheck>,
    /// Watches that had to list again (410 Gone, or a lost watch).
    pub relists: u32,
    /// Times the API stopped answering during the wait.
    pub disconnects: u32,
    pub helm: Option<ReportHelm>,
    pub evidence_file: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ReportCheck {
    pub name: String,
    pub passed: bool,
    pub detail: String,
    /// The same, for the HTML page in its language.
    #[serde(skip)]
    pub said_detail: Option<Message>,
}

impl From<&Check> for ReportCheck {
    fn from(c: &Check) -> Self {
        ReportCheck {
            name: c.name.to_string(),
            passed: c.passed,
            detail: c.detail.en(),
            said_detail: Some(c.detail.clone()),
        }
    }
}

/// docs/json.md: the trace report plus `outcome` and `elapsed_seconds`.
/// Without a view of the rollout (the API never answered), only the target,
/// the outcome and the reason.
#[derive(Debug, Serialize)]
pub struct GateReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<ReportTarget>,
    #[serde(flatten)]
    pub trace: Option<TraceReport>,
    pub outcome: Outcome,
    pub elapsed_seconds: f64,
    pub gate: GateDetails,
}

impl GateReport {
    pub fn new(
        trace: Option<TraceReport>,
        target: ReportTarget,
        outcome: Outcome,
        elapsed: Duration,
        gate: GateDetails,
    ) -> Self {
        let (schema, kind, target, trace) = match trace {
            Some(mut t) => {
                t.kind = "Gate";
                (None, None, None, Some(t))
            }
            None => (
                Some(super::report::SCHEMA),
                Some("Gate"),
                Some(target),
                None,
            ),
        };
        GateReport {
            schema,
            kind,
            target,
            trace,
            outcome,
            elapsed_seconds: (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            gate,
        }
    }
}

/// `12.3s`, `4m5s`.
pub fn elapsed_text(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        format_duration(secs as i64)
    }
}

/// The one-line verdict of the gate.
pub fn headline(
    outcome: Outcome,
    elapsed: Duration,
    diagnosis: Option<&Diagnosis>,
    details: &GateDetails,
    style: &Style,
) -> String {
    let took = elapsed_text(elapsed);
    let why = diagnosis.map(|d| summary(d, style)).unwrap_or_default();
    let (mark, id) = match outcome {
        Outcome::Converged => (style.good("✔"), "gate.word_converged"),
        Outcome::Failed => (style.bad("✘"), "gate.word_failed"),
        Outcome::TimedOut => (style.warn("⧗"), "gate.word_timed_out"),
        Outcome::CouldNotDecide => (style.warn("?"), "gate.word_could_not_decide"),
        Outcome::Interrupted => (style.warn("■"), "gate.word_interrupted"),
    };
    let text = Message::new(id).render(style.lang);
    let word = match outcome {
        Outcome::Converged => style.good(&text),
        Outcome::Failed => style.bad(&text),
        _ => style.warn(&text),
    };
    let m = match outcome {
        Outcome::Converged => Message::new("gate.converged"),
        Outcome::Failed => match reason_in(details, style.lang) {
            Some(reason) => Message::new("gate.failed_reason").arg("reason", reason),
            None => Message::new("gate.failed"),
        },
        Outcome::TimedOut => Message::new("gate.timed_out").arg(
            "waiting",
            details
                .waiting
                .as_ref()
                .map(|w| w.render(style.lang))
                .or_else(|| details.waiting_for.clone())
                .unwrap_or_else(|| "?".into()),
        ),
        Outcome::CouldNotDecide | Outcome::Interrupted => Message::new("gate.could_not_decide")
            .arg("reason", reason_in(details, style.lang).unwrap_or_default()),
    };
    let mut line = m
        .arg("mark", mark)
        .arg("word", word)
        .arg("took", took)
        .arg("why", why)
        .render(style.lang);
    line.push('\n');
    line
}

/// Why it failed or could not decide, in `lang`.
fn reason_in(details: &GateDetails, lang: Lang) -> Option<String> {
    details
        .said_reason
        .as_ref()
        .map(|m| m.render(lang))
        .or_else(|| details.reason.clone())
}

/// The checks, one line each, for the human report.
pub fn checks_text(checks: &[Check], style: &Style) -> String {
    let mut out = String::new();
    for c in checks {
        let mark = if c.passed {
            style.good("✔")
        } else {
            style.dim("·")
        };
        out.push_str(&format!(
            "  {mark} {:<22} {}\n",
            c.name,
            c.detail.render(style.lang)
        ));
    }
    out
}

/// What the waiting is about, for progress and timeouts, in English
/// (the JSON `waiting_for`).
pub fn waiting_text(view: &GateView) -> Option<String> {
    waiting_message(view).map(|m| m.en())
}

/// What the waiting is about, to word in the view's language.
pub fn waiting_message(view: &GateView) -> Option<Message> {
    match &view.judgement {
        Judgement::Waiting { check, detail } => Some(
            Message::new("gate.waiting")
                .arg("check", *check)
                .arg("detail", detail.clone()),
        ),
        _ => None,
    }
}

/// What users get now and where the rollout stands, as the headline, and
/// what the gate is waiting for: the text of a progress line.
pub fn progress_state(d: &Diagnosis, view: &GateView, lang: Lang) -> String {
    format!(
        "{}{}",
        super::headline::text(d, lang),
        waiting_message(view)
            .map(|w| Message::new("gate.progress_waiting")
                .arg("waiting", w)
                .render(lang))
            .unwrap_or_default()
    )
}

/// One progress line of a CI log: `[  12.3s] text`, as it is printed
/// (outside text escaped).
pub fn progress_line(elapsed: Duration, text: &str) -> String {
    crate::inert::text(&format!("[{:>7}] {text}", elapsed_text(elapsed)), false)
}

/// The final report for people on stdout: the headline, the checks, the
/// Helm release, and unless it converged the trace view of the last
/// moment judged.
pub fn human_report(
    outcome: Outcome,
    elapsed: Duration,
    judged: Option<(&Diagnosis, &GateView)>,
    details: &GateDetails,
    run: &super::report::RunInfo,
    style: &Style,
) -> String {
    let diagnosis = judged.map(|(d, _)| d);
    let mut out = headline(outcome, elapsed, diagnosis, details, style);
    if let Some((_, v)) = judged {
        out.push_str(&checks_text(&v.checks, style));
    }
    if let Some(h) = &details.helm {
        out.push_str(&helm_text(h, style.lang));
    }
    if let Some(d) = diagnosis
        && outcome != Outcome::Converged
    {
        out.push('\n');
        out.push_str(&crate::human::trace(d, run, style));
    }
    out
}

/// Progress on stderr while waiting.
pub enum Progress {
    /// A person at a terminal: one spinner line, redrawn.
    Spinner(ProgressBar, Lang),
    /// CI logs: one line per change of step or of what is awaited.
    Lines { last: Option<String>, lang: Lang },
}

impl Progress {
    pub fn new(terminal: bool, lang: Lang) -> Progress {
        if terminal {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            Progress::Spinner(bar, lang)
        } else {
            Progress::Lines { last: None, lang }
        }
    }

    /// The rollout as it stands.
    pub fn update(&mut self, elapsed: Duration, d: &Diagnosis, view: &GateView) {
        let lang = match self {
            Progress::Spinner(_, lang) | Progress::Lines { lang, .. } => *lang,
        };
        let state = progress_state(d, view, lang);
        match self {
            Progress::Spinner(bar, _) => {
                bar.set_message(crate::inert::text(
                    &format!("{state}  {}", elapsed_text(elapsed)),
                    false,
                ));
            }
            Progress::Lines { last, .. } => {
                if last.as_deref() != Some(state.as_str()) {
                    eprintln!("{}", progress_line(elapsed, &state));
                    *last = Some(state);
                }
            }
        }
    }

    /// Something about the watches (lost the API, relisted...).
    pub fn note(&mut self, elapsed: Duration, note: &Message) {
        let lang = match self {
            Progress::Spinner(_, lang) | Progress::Lines { lang, .. } => *lang,
        };
        let text = &note.render(lang);
        match self {
            Progress::Spinner(bar, _) => bar.println(crate::inert::text(
                &format!("{text}  ({})", elapsed_text(elapsed)),
                false,
            )),
            Progress::Lines { .. } => eprintln!("{}", progress_line(elapsed, text)),
        }
    }

    pub fn finish(self) {
        if let Progress::Spinner(bar, _) = self {
            bar.finish_and_clear();
        }
    }
}

/// JUnit XML: one test suite for the gate, one test case per check, and
/// one for the finding that failed it.
pub fn junit(
    target_label: &str,
    outcome: Outcome,
    elapsed: Duration,
    view: Option<&GateView>,
    diagnosis: Option<&Diagnosis>,
    details: &GateDetails,
) -> anyhow::Result<String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

    let mut suite = TestSuite::new(format!("mdiag gate {target_label}"));
    suite.set_time(elapsed);
    let checks = view.map(|v| v.checks.as_slice()).unwrap_or(&[]);
    for c in checks {
        let status = if c.passed {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(outcome.as_str());
            s.set_message(c.detail.en());
            s
        };
        let mut case = TestCase::new(c.name, status);
        case.set_classname(target_label);
        case.set_system_out(c.detail.en());
        suite.add_test_case(case);
    }
    if let (Some(view), Some(d)) = (view, diagnosis)
        && let Judgement::Failed { finding, .. } = view.judgement
        && let Some(f) = d.findings.get(finding)
    {
        let report = report_finding(f, Lang::En);
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_type(f.id);
        status.set_message(format!("{}: {}", report.title, report.detail));
        let mut body = String::new();
        for e in &report.evidence {
            body.push_str(&format!("{} {}: {}\n", e.object, e.field, e.value));
        }
        for c in &report.check {
            body.push_str(&format!("check: {c}\n"));
        }
        body.push_str(&format!("fix: {}\nverify: {}\n", report.fix, report.verify));
        status.set_description(body);
        let mut case = TestCase::new(format!("no-{}", f.id), status);
        case.set_classname(target_label);
        suite.add_test_case(case);
    }
    if matches!(outcome, Outcome::CouldNotDecide | Outcome::Interrupted) {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type(outcome.as_str());
        status.set_message(details.reason.clone().unwrap_or_default());
        let name = match outcome {
            Outcome::Interrupted => "interrupted",
            _ => "api-access",
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(target_label);
        suite.add_test_case(case);
    }
    let mut report = Report::new("mdiag gate");
    report.add_test_suite(suite);
    Ok(report.to_string()?)
}

/// The release, for the human report.
pub fn helm_text(h: &ReportHelm, lang: Lang) -> String {
    let state = match (&h.status, h.revision) {
        (Some(s), Some(r)) => Message::new("helm.state")
            .arg("revision", r)
            .arg("status", s.as_str()),
        _ => Message::new("helm.not_read"),
    };
    let mut out = format!(
        "  {}",
        Message::new("helm.line")
            .arg("name", &h.name)
            .arg("state", state)
            .render(lang)
    );
    if let Some(chart) = &h.chart {
        out.push_str(&Message::new("helm.chart").arg("chart", chart).render(lang));
    }
    if let Some(v) = &h.app_version {
        out.push_str(&Message::new("helm.app").arg("version", v).render(lang));
    }
    out.push('\n');
    let said: Vec<String> = if h.said_notes.len() == h.notes.len() {
        h.said_notes.iter().map(|m| m.render(lang)).collect()
    } else {
        h.notes.clone()
    };
    for n in said {
        out.push_str(&format!(
            "    {}\n",
            Message::new("helm.note").arg("note", n).render(lang)
        ));
    }
    out
}
