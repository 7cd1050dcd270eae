//! The ladder on its time axis, one rule for every view: the gap from
//! the step before, a step older than one before it (a write of an
//! earlier generation), and which step is marked slow or failing.

use jiff::Timestamp;
use serde::Serialize;

use super::{Diagnosis, State, Step};
use crate::catalogue::Severity;

/// What a view marks beside a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    /// It waited longest since the step before it.
    Slowest,
    /// The missing step of a rollout an error holds up: failing, not slow.
    Failing,
}

/// One step of [`Diagnosis::steps`] on the time axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    /// Milliseconds since the newest time of the steps before it; `None`
    /// without a time of its own or before it, or when it is older.
    pub gap_ms: Option<i64>,
    /// Its time is older than this earlier step's: it was written before
    /// it (the Deployment of an earlier generation), so it has no gap.
    pub older_than: Option<Step>,
    pub mark: Option<Mark>,
}

/// The timeline of `d`, one entry per step, in the steps' order. A step
/// whose data was not read has no gap and no mark.
pub fn timeline(d: &Diagnosis) -> Vec<Timed> {
    let mut out = Vec::with_capacity(d.steps.len());
    // The newest time so far, and its step.
    let mut newest: Option<(Timestamp, Step)> = None;
    // (index, wait in ms) of what may be marked slowest.
    let mut waits: Vec<(usize, i64)> = Vec::new();
    for (i, s) in d.steps.iter().enumerate() {
        let mut t = Timed {
            gap_ms: None,
            older_than: None,
            mark: None,
        };
        if s.unknown() {
            out.push(t);
            continue;
        }
        let before = newest;
        match (s.at, newest) {
            (Some(at), Some((n, step))) if at < n => t.older_than = Some(step),
            (Some(at), previous) => {
                t.gap_ms = previous.map(|(n, _)| ms(n, at));
                newest = Some((at, s.step));
                if s.reached
                    && let Some(g) = t.gap_ms
                {
                    waits.push((i, g));
                }
            }
            (None, _) => {}
        }
        // The missing step has waited from the newest step before it.
        if !s.reached
            && d.verdict.missing == Some(s.step)
            && let Some((n, _)) = before
        {
            waits.push((i, ms(n, d.now)));
        }
        out.push(t);
    }
    // The first of equal waits: the earlier step held the rest up.
    let slowest = waits
        .iter()
        .filter(|(_, w)| *w >= 1000)
        .fold(None, |best: Option<(usize, i64)>, &(i, w)| match best {
            Some((_, b)) if b >= w => best,
            _ => Some((i, w)),
        })
        .map(|(i, _)| i);
    let failing = failing_step(d);
    if let Some(i) = slowest {
        out[i].mark = Some(Mark::Slowest);
    }
    if let Some(i) = failing {
        out[i].mark = Some(Mark::Failing);
    }
    out
}

/// The missing step of a rollout that does not serve as declared
/// because of an error: it is failing, whatever its wait.
fn failing_step(d: &Diagnosis) -> Option<usize> {
    let missing = d.verdict.missing?;
    let failing_state = matches!(d.verdict.state, State::NotServing | State::Degraded);
    let error = d.findings.iter().any(|f| f.severity == Severity::Error);
    if !(failing_state && error) {
        return None;
    }
    d.steps
        .iter()
        .position(|s| s.step == missing && !s.reached && !s.unknown())
}

fn ms(from: Timestamp, to: Timestamp) -> i64 {
    to.as_millisecond() - from.as_millisecond()
}
