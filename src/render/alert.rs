//! Alerts beside the trace: which alerts are about the workload, when each
//! started, and where the rollout stood on its ladder at that moment.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::Style;
use super::layout;
use super::report::{RunInfo, SCHEMA, TraceReport, trace_report};
use crate::words::step_id;
use mdiag_core::alert::Alert;
use mdiag_core::analysis::{Diagnosis, Step, format_duration};
use mdiag_core::catalogue::{Arg, Args, Lang, Message};
use mdiag_core::inert::inert;

/// One traced workload and the alerts (indexes) about it.
pub struct AlertTraced<'a> {
    pub diagnosis: &'a Diagnosis,
    pub alerts: Vec<usize>,
    pub run: RunInfo<'a>,
}

#[derive(Debug, Serialize)]
pub struct AlertReport {
    pub schema: &'static str,
    pub kind: &'static str,
    pub alerts: Vec<ReportAlert>,
    /// One trace report per workload the alerts name, each with `alerts`:
    /// the indexes of the alerts about it.
    pub items: Vec<AlertItem>,
}

#[derive(Debug, Serialize)]
pub struct ReportAlert {
    pub alertname: String,
    pub status: Option<String>,
    pub starts_at: Option<Timestamp>,
    pub ends_at: Option<Timestamp>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// The index in `items` of the trace it maps to, if any.
    pub item: Option<usize>,
    /// Why it maps to nothing, or how it was mapped: in English whatever
    /// `--lang` says.
    pub note: Option<String>,
    /// The message `note` is made from and its arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_id: Option<&'static str>,
    #[serde(skip_serializing_if = "Args::is_empty")]
    pub note_args: Args,
}

#[derive(Debug, Serialize)]
pub struct AlertItem {
    pub alerts: Vec<usize>,
    #[serde(flatten)]
    pub trace: TraceReport,
}

pub fn alert_report(
    alerts: &[Alert],
    items: &[AlertTraced],
    notes: &[Option<Message>],
    unmapped: &[(usize, Message)],
    lang: Lang,
) -> AlertReport {
    AlertReport {
        schema: SCHEMA,
        kind: "AlertTrace",
        alerts: alerts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let item = items.iter().position(|t| t.alerts.contains(&i));
                let note = match item {
                    Some(_) => notes.get(i).cloned().flatten(),
                    None => unmapped
                        .iter()
                        .find(|(j, _)| *j == i)
                        .map(|(_, why)| why.clone()),
                };
                ReportAlert {
                    note_id: note.as_ref().map(|m| m.id),
                    note_args: note.as_ref().map(|m| m.args.clone()).unwrap_or_default(),
                    note: note.as_ref().map(Message::en),
                    status: a.status.clone(),
                    starts_at: a.starts_at,
                    ends_at: a.ends_at,
                    labels: a.labels.clone(),
                    annotations: a.annotations.clone(),
                    alertname: a.name().to_string(),
                    item,
                }
            })
            .collect(),
        items: items
            .iter()
            .map(|t| AlertItem {
                alerts: t.alerts.clone(),
                trace: trace_report(t.diagnosis, &t.run, lang),
            })
            .collect(),
    }
}

/// Where the rollout stood when the alert started: the last step reached
/// at or before that time, and the next one.
pub fn position(d: &Diagnosis, at: Timestamp) -> Message {
    let before = d
        .steps
        .iter()
        .filter(|s| s.reached && s.at.is_some_and(|t| t <= at))
        .max_by_key(|s| s.at);
    let step = |s: Step| Message::new(step_id(s));
    match before {
        Some(s) => {
            let since = at.as_second() - s.at.map_or(0, |t| t.as_second());
            let next: Arg = d
                .steps
                .iter()
                .skip_while(|x| x.step != s.step)
                .nth(1)
                .map(|n| {
                    let m = match (n.reached, n.at) {
                        (false, _) => Message::new("alert.still_missing"),
                        (true, Some(t)) if t >= at => Message::new("alert.came_later")
                            .arg("after", format_duration(t.as_second() - at.as_second())),
                        (true, Some(_)) => Message::new("alert.came_before"),
                        (true, None) => Message::new("alert.came_unrecorded"),
                    };
                    m.arg("step", step(n.step)).into()
                })
                .unwrap_or_else(|| "".into());
            Message::new("alert.position")
                .arg("since", format_duration(since))
                .arg("step", step(s.step))
                .arg(
                    "time",
                    s.at.map(|t| t.strftime("%H:%M:%S").to_string())
                        .unwrap_or_default(),
                )
                .arg("next", next)
        }
        None => Message::new("alert.before_first"),
    }
}

/// The alerts about one workload, printed above its trace.
pub fn alerts_block(alerts: &[(&Alert, Option<&Message>)], d: &Diagnosis, style: &Style) -> String {
    let lang = style.lang;
    let tr = |id: &'static str| Message::new(id).render(lang);
    // The labels of the lines under an alert, padded to the widest (but
    // `description`, which is let stand out rather than widen them all).
    let keys = [
        "alert.key_labels",
        "alert.key_summary",
        "alert.key_started",
        "alert.key_now",
        "alert.key_resolved",
    ];
    let key_width = keys
        .iter()
        .map(|k| layout::width(&tr(k)))
        .max()
        .unwrap_or(0);
    let key = |id: &'static str| layout::pad(&tr(id), key_width);
    let mut out = String::new();
    for (a, note) in alerts {
        let status = match a.status.as_deref() {
            Some(s) => s.to_string(),
            None => tr("alert.no_status"),
        };
        let started = |t: Timestamp| {
            Message::new("alert.started_at")
                .arg("time", t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
                .arg(
                    "ago",
                    format_duration(style.now.as_second() - t.as_second()),
                )
        };
        let head = match (a.starts_at, a.resolved()) {
            (Some(t), false) => Message::new("alert.head_since").arg("started", started(t)),
            (Some(t), true) => Message::new("alert.head_started").arg("started", started(t)),
            (None, _) => Message::new("alert.head"),
        };
        let head = head
            .arg("alert", Arg::styled(style.bold(&tr("alert.word"))))
            .arg("name", Arg::styled(style.bold(&inert(a.name()))))
            .arg("status", status);
        for line in layout::wrap(&head.render(lang), style.width, "", "  ") {
            out.push_str(&line);
            out.push('\n');
        }
        // Each line under its label, wrapped to the width under its value.
        let hang = " ".repeat(2 + key_width + 1);
        let line = |out: &mut String, label: String, value: &str| {
            for l in layout::wrap(value, style.width, &format!("  {label} "), &hang) {
                out.push_str(&l);
                out.push('\n');
            }
        };
        let labels: Vec<String> = a
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != "alertname")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !labels.is_empty() {
            line(&mut out, key("alert.key_labels"), &labels.join(" "));
        }
        for (name, id) in [
            ("summary", "alert.key_summary"),
            ("description", "alert.key_description"),
        ] {
            if let Some(v) = a.annotations.get(name) {
                line(&mut out, key(id), v);
            }
        }
        // When it fired, placed on the rollout's ladder.
        if let Some(t) = a.starts_at {
            line(
                &mut out,
                key("alert.key_started"),
                &position(d, t).render(lang),
            );
        }
        // Beside where it stood then: what users get now.
        let now = format!(
            "{} {}  {}",
            super::headline::mark(d, style),
            super::headline::painted_word(d, style),
            super::headline::sentence(d, lang)
        );
        line(&mut out, key("alert.key_now"), &now);
        if let (true, Some(t)) = (a.resolved(), a.ends_at) {
            line(
                &mut out,
                key("alert.key_resolved"),
                &Message::new("alert.resolved")
                    .arg("time", t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
                    .render(lang),
            );
        }
        if let Some(n) = note {
            for l in layout::wrap(&n.render(lang), style.width, "  ", "  ") {
                out.push_str(&format!("{}\n", style.dim(&l)));
            }
        }
    }
    out.push('\n');
    out
}

/// Alerts that name nothing mdiag could find.
pub fn unmapped_block(unmapped: &[(&Alert, &Message)], lang: Lang, width: usize) -> String {
    if unmapped.is_empty() {
        return String::new();
    }
    let mut out = format!("{}\n", Message::new("alert.unmapped").render(lang));
    for (a, why) in unmapped {
        let labels: Vec<String> = a.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let line = Message::new("alert.unmapped_line")
            .arg("name", a.name())
            .arg("why", (*why).clone())
            .arg("labels", labels.join(" "));
        for l in layout::wrap(&line.render(lang), width, "  ", "    ") {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
