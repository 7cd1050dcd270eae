//! Alerts beside the trace: which alerts are about the workload, when each
//! started, and where the rollout stood on its ladder at that moment.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::Style;
use super::report::{RunInfo, SCHEMA, TraceReport, trace_report};
use crate::alert::Alert;
use crate::analysis::{Diagnosis, format_duration};
use crate::catalogue::Lang;

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
    /// Why it maps to nothing, or how it was mapped.
    pub note: Option<String>,
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
    notes: &[Option<String>],
    unmapped: &[(usize, String)],
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
                    alertname: a.name().to_string(),
                    status: a.status.clone(),
                    starts_at: a.starts_at,
                    ends_at: a.ends_at,
                    labels: a.labels.clone(),
                    annotations: a.annotations.clone(),
                    item,
                    note,
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
pub fn position(d: &Diagnosis, at: Timestamp) -> String {
    let before = d
        .steps
        .iter()
        .filter(|s| s.reached && s.at.is_some_and(|t| t <= at))
        .max_by_key(|s| s.at);
    match before {
        Some(s) => {
            let since = at.as_second() - s.at.map_or(0, |t| t.as_second());
            let next = d
                .steps
                .iter()
                .skip_while(|x| x.step != s.step)
                .nth(1)
                .map(|n| {
                    if n.reached {
                        format!("; {} came {}", n.step.as_str(), when(n.at, at))
                    } else {
                        format!("; {} is still missing", n.step.as_str())
                    }
                })
                .unwrap_or_default();
            format!(
                "{} after {} ({}){next}",
                format_duration(since),
                s.step.as_str(),
                s.at.map(|t| t.strftime("%H:%M:%S").to_string())
                    .unwrap_or_default()
            )
        }
        None => "before the rollout's first recorded step".into(),
    }
}

fn when(t: Option<Timestamp>, alert: Timestamp) -> String {
    match t {
        Some(t) if t >= alert => format!(
            "{} later",
            format_duration(t.as_second() - alert.as_second())
        ),
        Some(_) => "before it".into(),
        None => "at an unrecorded time".into(),
    }
}

/// The alerts about one workload, printed above its trace.
pub fn alerts_block(alerts: &[(&Alert, Option<&str>)], d: &Diagnosis, style: &Style) -> String {
    let mut out = String::new();
    for (a, note) in alerts {
        let status = a.status.as_deref().unwrap_or("(no status)");
        let started = |t: Timestamp| {
            format!(
                "{} ({} ago)",
                t.strftime("%Y-%m-%d %H:%M:%S UTC"),
                format_duration(style.now.as_second() - t.as_second())
            )
        };
        let since = match (a.starts_at, a.resolved()) {
            (Some(t), false) => format!(" since {}", started(t)),
            (Some(t), true) => format!("; it started {}", started(t)),
            (None, _) => String::new(),
        };
        out.push_str(&format!(
            "{} {} {status}{since}\n",
            style.bold("Alert"),
            style.bold(a.name())
        ));
        let labels: Vec<String> = a
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != "alertname")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !labels.is_empty() {
            out.push_str(&format!("  labels   {}\n", labels.join(" ")));
        }
        for key in ["summary", "description"] {
            if let Some(v) = a.annotations.get(key) {
                out.push_str(&format!("  {key:<8} {v}\n"));
            }
        }
        if let Some(t) = a.starts_at {
            out.push_str(&format!("  started  {}\n", position(d, t)));
        }
        // Beside where it stood then: what users get now.
        out.push_str(&format!(
            "  now      {} {}  {}\n",
            super::headline::mark(d, style),
            super::headline::painted_word(d, style),
            super::headline::sentence(d, style.lang)
        ));
        if let (true, Some(t)) = (a.resolved(), a.ends_at) {
            out.push_str(&format!(
                "  resolved {} (the trace shows the rollout now)\n",
                t.strftime("%Y-%m-%d %H:%M:%S UTC")
            ));
        }
        if let Some(n) = note {
            out.push_str(&format!("  {}\n", style.dim(n)));
        }
    }
    out.push('\n');
    out
}

/// Alerts that name nothing mdiag could find.
pub fn unmapped_block(unmapped: &[(&Alert, &str)]) -> String {
    if unmapped.is_empty() {
        return String::new();
    }
    let mut out = String::from("Alerts not mapped to a workload\n");
    for (a, why) in unmapped {
        let labels: Vec<String> = a.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("  {}: {why} ({})\n", a.name(), labels.join(" ")));
    }
    out
}
