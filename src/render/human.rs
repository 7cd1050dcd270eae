//! The human view of a trace: verdict, chain tree, step waterfall, Pod
//! waterfalls, findings with their commands, and gaps.

use std::fmt::Write;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::report::{RunInfo, detail_with_others};
use super::{Style, headline};
use crate::analysis::{Diagnosis, Finding, PodState, Step, format_duration};
use crate::catalogue::catalogue;
use crate::model::{ClockSource, OriginKind};

/// Width of the waterfall bars, in characters.
const BAR_WIDTH: usize = 32;
/// Pods drawn as a waterfall; the rest are listed in one line each.
const WATERFALL_PODS: usize = 4;

pub fn trace(d: &Diagnosis, run: &RunInfo, style: &Style) -> String {
    let mut out = String::new();
    header(&mut out, d, run, style);
    verdict(&mut out, d, style);
    tree(&mut out, d, style);
    timeline(&mut out, d, style);
    pods(&mut out, d, style);
    findings(&mut out, d, style);
    gaps(&mut out, d, style);
    out
}

fn clock_time(t: Timestamp, now: Timestamp) -> String {
    let z = t.to_zoned(TimeZone::UTC);
    let n = now.to_zoned(TimeZone::UTC);
    if z.date() == n.date() {
        z.strftime("%H:%M:%S").to_string()
    } else {
        z.strftime("%Y-%m-%d %H:%M:%S").to_string()
    }
}

fn secs(from: Timestamp, to: Timestamp) -> i64 {
    (to.as_millisecond() - from.as_millisecond()) / 1000
}

fn header(out: &mut String, d: &Diagnosis, run: &RunInfo, style: &Style) {
    let l = style.labels();
    let t = &d.target;
    let source = match run.origin.kind {
        OriginKind::Live => format!(
            "live{}",
            run.origin
                .context
                .as_deref()
                .map(|c| format!(", context {c}"))
                .unwrap_or_default()
        ),
        _ => run.origin.location.clone(),
    };
    let why = match run.clock.source {
        ClockSource::Live => l.clock_live,
        ClockSource::Capture => l.clock_capture,
        ClockSource::NewestTimestamp => l.clock_newest,
        ClockSource::At => "--at",
    };
    let _ = writeln!(
        out,
        "{} {}/{}   {}",
        t.kind,
        t.namespace,
        style.bold(&t.name),
        style.dim(&format!(
            "{} {} UTC ({why}) · {source}",
            l.judged_at,
            run.clock
                .now
                .to_zoned(TimeZone::UTC)
                .strftime("%Y-%m-%d %H:%M:%S")
        ))
    );
    out.push('\n');
}

fn verdict(out: &mut String, d: &Diagnosis, style: &Style) {
    let _ = writeln!(
        out,
        "{} {}  {}",
        headline::mark(d, style),
        headline::painted_word(d, style),
        headline::sentence(d, style.lang)
    );
    if let Some(next) = &d.verdict.next {
        let _ = writeln!(out, "   {} {}", style.dim("next:"), style.bold(next));
    }
    out.push('\n');
}

fn tree(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    let c = &d.chain;
    let _ = writeln!(out, "{}", style.bold(l.chain));
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut depth = 0;
    if let Some(m) = &c.model_service {
        let generation = m.generation;
        let state = match m.observed {
            Some(o) if o >= generation => style.good(&format!("generation {generation}, observed")),
            Some(o) => style.bad(&format!("generation {generation}, observed {o}")),
            None => style.warn(&format!("generation {generation}, not observed")),
        };
        lines.push((depth, format!("ModelService {}  {state}", m.name)));
        depth += 1;
    }
    if let Some(dep) = &c.deployment {
        let progressing = dep
            .progressing
            .as_ref()
            .map(|(status, reason)| format!(" · Progressing={status} {reason}"))
            .unwrap_or_default();
        lines.push((
            depth,
            format!(
                "Deployment {}  {}/{} ready, {} updated, {} available{progressing}",
                dep.name, dep.ready, dep.desired, dep.updated, dep.available,
            ),
        ));
        depth += 1;
    }
    if let Some(set) = &c.pod_set {
        let revision = set
            .update_revision
            .as_ref()
            .map(|(n, name)| format!(" · update revision {n} ({name})"))
            .unwrap_or_default();
        lines.push((
            depth,
            format!(
                "{} {}  {}/{} ready, {} updated, {} available{revision} · {}",
                set.kind,
                set.name,
                set.ready,
                set.desired,
                set.updated,
                set.available,
                set.strategy,
            ),
        ));
        depth += 1;
    }
    for rs in &c.replica_sets {
        let rev = rs.revision.map_or("?".into(), |v| v.to_string());
        let pods: Vec<&PodState> = d
            .pods
            .iter()
            .filter(|p| rs.pod_uids.contains(&p.uid))
            .collect();
        if !rs.current && pods.is_empty() && rs.replicas == 0 {
            continue;
        }
        let tag = if rs.current {
            style.bold(" (current)")
        } else {
            String::new()
        };
        lines.push((
            depth,
            format!(
                "ReplicaSet {}  revision {rev}{tag} · {}/{} ready",
                rs.name, rs.ready, rs.desired,
            ),
        ));
        for p in pods {
            lines.push((depth + 1, pod_line(p, style)));
        }
    }
    if c.replica_sets.is_empty() {
        for p in &d.pods {
            lines.push((depth, pod_line(p, style)));
        }
    }
    // Ready endpoints of every revision: an old revision still serving counts.
    let endpoints = d
        .verdict
        .serving
        .ready_endpoints
        .map_or("?".to_string(), |n| n.to_string());
    for svc in &c.services {
        lines.push((
            depth,
            format!(
                "Service {}  {} · {endpoints}/{} ready endpoints",
                svc.name,
                svc.ports.join(","),
                d.replicas.desired
            ),
        ));
        for slice in &svc.slices {
            lines.push((
                depth + 1,
                format!(
                    "EndpointSlice {}  {} ready of {} endpoints",
                    slice.name, slice.ready, slice.endpoints
                ),
            ));
        }
    }
    if c.wants_service && c.services.is_empty() {
        lines.push((depth, style.bad("Service: none")));
    }
    draw_tree(out, &lines);
    if let Some(ctl) = &c.controller {
        let mut facts = Vec::new();
        if let Some((ready, desired)) = ctl.replicas {
            facts.push(format!("{ready}/{desired} ready"));
        }
        if let Some(lease) = &ctl.lease {
            let text = match lease.renewed {
                Some(t) => format!("lease renewed {} ago", format_duration(secs(t, d.now))),
                None => "lease never renewed".into(),
            };
            facts.push(if lease.stale {
                style.bad(&format!("{text} (stale)"))
            } else {
                text
            });
        }
        if facts.is_empty() {
            facts.push(style.dim("not in the snapshot"));
        }
        let _ = writeln!(
            out,
            "  {} {}/{}: {}",
            style.dim("controller"),
            ctl.namespace,
            ctl.name,
            facts.join(", ")
        );
    }
    out.push('\n');
}

fn pod_line(p: &PodState, style: &Style) -> String {
    let l = style.labels();
    let mut parts = vec![p.node.clone().unwrap_or_else(|| "no node".into())];
    if p.last_step != Step::Serving {
        parts.push(p.last_step.as_str().to_string());
    }
    if let Some(r) = &p.state_reason {
        parts.push(style.bad(r));
    }
    if p.restarts > 0 {
        let plural = if p.restarts == 1 { "" } else { "s" };
        parts.push(format!("{} restart{plural}", p.restarts));
    }
    if p.held {
        let revision = p.revision.map_or(String::new(), |r| format!(" {r}"));
        parts.push(style.dim(&format!(
            "kept on revision{revision} by the update strategy"
        )));
    }
    if p.terminating {
        parts.push(style.dim("terminating"));
    }
    parts.push(if p.serving {
        style.good(l.serving_yes)
    } else if p.draining {
        style.dim("draining")
    } else {
        style.dim(l.serving_no)
    });
    format!("Pod {}  {}", p.name, parts.join(" · "))
}

fn draw_tree(out: &mut String, lines: &[(usize, String)]) {
    // For each line, whether later lines continue at each depth.
    for (i, (depth, text)) in lines.iter().enumerate() {
        let mut prefix = String::from("  ");
        for level in 1..=*depth {
            let continues_after = lines[i + 1..]
                .iter()
                .take_while(|(d, _)| *d >= level)
                .any(|(d, _)| *d == level);
            if level == *depth {
                prefix.push_str(if continues_after {
                    "├─ "
                } else {
                    "└─ "
                });
            } else {
                let open = lines[i + 1..]
                    .iter()
                    .take_while(|(d, _)| *d >= level)
                    .any(|(d, _)| *d == level);
                prefix.push_str(if open { "│  " } else { "   " });
            }
        }
        let _ = writeln!(out, "{prefix}{text}");
    }
}

/// Bars on one time axis from `start` to `end`.
struct Axis {
    start: Timestamp,
    span: f64,
}

impl Axis {
    fn new(start: Timestamp, end: Timestamp) -> Self {
        Axis {
            start,
            span: ((end.as_millisecond() - start.as_millisecond()) as f64).max(1.0),
        }
    }

    fn col(&self, t: Timestamp) -> usize {
        let x = (t.as_millisecond() - self.start.as_millisecond()) as f64 / self.span;
        ((x.clamp(0.0, 1.0)) * BAR_WIDTH as f64).round() as usize
    }

    /// A bar from `from` to `to`, at least one character wide.
    fn bar(&self, from: Timestamp, to: Timestamp, fill: char) -> String {
        let a = self.col(from).min(BAR_WIDTH - 1);
        let b = self.col(to).max(a + 1).min(BAR_WIDTH);
        let mut s = " ".repeat(a);
        s.extend(std::iter::repeat_n(fill, b - a));
        s.push_str(&" ".repeat(BAR_WIDTH - b));
        s
    }
}

fn timeline(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    let times: Vec<Timestamp> = d.steps.iter().filter_map(|s| s.at).collect();
    let _ = writeln!(
        out,
        "{}  {}",
        style.bold(l.timeline),
        style.dim(&format!("({})", l.timeline_hint))
    );
    let Some(start) = times.iter().min().copied() else {
        let _ = writeln!(out, "  {}\n", style.dim("no step has a recorded time"));
        return;
    };
    let waiting_since = times.iter().max().copied().unwrap_or(start);
    let end = if d.verdict.missing.is_some() {
        d.now
    } else {
        waiting_since
    };
    let axis = Axis::new(start, end.max(waiting_since));
    // The slowest recorded gap is the step to look at.
    let mut previous: Option<Timestamp> = None;
    let mut gaps: Vec<(Step, i64)> = Vec::new();
    for s in &d.steps {
        if let (Some(p), Some(t)) = (previous, s.at) {
            gaps.push((s.step, secs(p, t)));
        }
        if s.at.is_some() {
            previous = s.at;
        }
    }
    let slowest = gaps
        .iter()
        .filter(|(_, g)| *g > 0)
        .max_by_key(|(_, g)| *g)
        .map(|(s, _)| *s);
    let mut previous: Option<Timestamp> = None;
    // `statefulset` is one letter longer than the other step names.
    let width = d
        .steps
        .iter()
        .map(|s| s.step.as_str().len())
        .max()
        .unwrap_or(10)
        .max(10);
    for s in &d.steps {
        let name = format!("{:<width$}", s.step.as_str());
        match (s.reached, s.at) {
            (true, Some(t)) => {
                let gap = previous
                    .map(|p| format!("+{}", format_duration(secs(p, t))))
                    .unwrap_or_default();
                let bar = axis.bar(previous.unwrap_or(t), t, '█');
                let bar = if Some(s.step) == slowest {
                    style.warn(&bar)
                } else {
                    style.good(&bar)
                };
                let mark = if Some(s.step) == slowest {
                    format!("  ← {}", l.slowest)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "  {name} {:>8} {:>8} │{bar}│ {}{mark}",
                    clock_time(t, d.now),
                    gap,
                    style.dim(&s.note)
                );
                previous = Some(t);
            }
            (true, None) => {
                let _ = writeln!(
                    out,
                    "  {name} {:>8} {:>8} │{}│ {}",
                    "",
                    "",
                    " ".repeat(BAR_WIDTH),
                    style.dim(&s.note)
                );
            }
            (false, _) => {
                let is_missing = d.verdict.missing == Some(s.step);
                if is_missing {
                    let from = previous.unwrap_or(start);
                    let bar = axis.bar(from, d.now, '░');
                    let _ = writeln!(
                        out,
                        "  {} {:>8} {:>8} │{}│ {}",
                        style.bad(&name),
                        "—",
                        format!("+{}", format_duration(secs(from, d.now))),
                        style.bad(&bar),
                        style.bad(&format!(
                            "{} ({} {}) · {}",
                            l.not_reached,
                            l.waiting,
                            format_duration(secs(from, d.now)),
                            s.note
                        ))
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "  {} {:>8} {:>8} │{}│ {}",
                        style.dim(&name),
                        "—",
                        "",
                        " ".repeat(BAR_WIDTH),
                        style.dim(&s.note)
                    );
                }
            }
        }
    }
    out.push('\n');
}

fn pods(out: &mut String, d: &Diagnosis, style: &Style) {
    if d.pods.is_empty() {
        return;
    }
    let l = style.labels();
    let _ = writeln!(
        out,
        "{}  {}",
        style.bold(l.pods),
        style.dim(&format!(
            "(current revision: {} of {} desired, {} ready, {} serving; {} in {})",
            d.replicas.current,
            d.replicas.desired,
            d.replicas.ready,
            d.replicas.serving,
            d.replicas.old,
            l.old_pods
        ))
    );
    let current: Vec<&PodState> = d
        .pods
        .iter()
        .filter(|p| p.current && !p.terminating)
        .collect();
    let start = current.iter().filter_map(|p| p.moments.stored.at).min();
    let latest = current
        .iter()
        .flat_map(|p| {
            [
                p.moments.stored.at,
                p.moments.bound.at,
                p.moments.started.at,
                p.moments.ready.at,
            ]
        })
        .flatten()
        .max();
    if let (Some(start), Some(latest)) = (start, latest) {
        let any_missing = current.iter().any(|p| !p.moments.ready.reached);
        let axis = Axis::new(
            start,
            if any_missing {
                d.now.max(latest)
            } else {
                latest
            },
        );
        for p in current.iter().take(WATERFALL_PODS) {
            pod_waterfall(out, p, &axis, d.now, style);
        }
    }
    for p in current.iter().skip(WATERFALL_PODS) {
        let _ = writeln!(out, "  {}", pod_line(p, style));
    }
    for p in d.pods.iter().filter(|p| !p.current || p.terminating) {
        let _ = writeln!(
            out,
            "  {} {}",
            style.dim(&format!(
                "revision {}",
                p.revision.map_or("?".into(), |r| r.to_string())
            )),
            pod_line(p, style)
        );
    }
    out.push('\n');
}

fn pod_waterfall(out: &mut String, p: &PodState, axis: &Axis, now: Timestamp, style: &Style) {
    let l = style.labels();
    let _ = writeln!(
        out,
        "  {}  {}",
        style.bold(&p.name),
        style.dim(&format!(
            "{} · revision {}",
            p.node.as_deref().unwrap_or("no node"),
            p.revision.map_or("?".into(), |r| r.to_string())
        ))
    );
    let moments = [
        ("stored", p.moments.stored),
        ("bound", p.moments.bound),
        ("started", p.moments.started),
        ("ready", p.moments.ready),
    ];
    let mut previous: Option<Timestamp> = None;
    let mut waiting_shown = false;
    for (label, m) in moments {
        let name = format!("{label:<8}");
        match (m.reached, m.at) {
            (true, Some(t)) => {
                let gap = previous
                    .map(|pr| format!("+{}", format_duration(secs(pr, t))))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "    {name} {:>8} {:>8} │{}│",
                    clock_time(t, now),
                    gap,
                    style.good(&axis.bar(previous.unwrap_or(t), t, '█'))
                );
                previous = Some(t);
            }
            (true, None) => {
                let _ = writeln!(
                    out,
                    "    {name} {:>8} {:>8} │{}│",
                    "?",
                    "",
                    " ".repeat(BAR_WIDTH)
                );
            }
            (false, _) if !waiting_shown => {
                waiting_shown = true;
                let from = previous.unwrap_or(now);
                let _ = writeln!(
                    out,
                    "    {} {:>8} {:>8} │{}│ {}",
                    style.bad(&name),
                    "—",
                    format!("+{}", format_duration(secs(from, now))),
                    style.bad(&axis.bar(from, now, '░')),
                    style.bad(&format!(
                        "{}{}",
                        l.not_reached,
                        p.state_reason
                            .as_deref()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    ))
                );
            }
            (false, _) => {
                let _ = writeln!(out, "    {} {:>8}", style.dim(&name), "—");
            }
        }
    }
    let serving = if p.serving {
        style.good(&format!(
            "{} (endpoint ready; slices keep no time)",
            l.serving_yes
        ))
    } else if p.draining {
        style.dim("draining (terminating endpoint)")
    } else {
        style.dim(l.serving_no)
    };
    let _ = writeln!(out, "    {:<8} {serving}", "serving");
}

fn findings(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    if d.findings.is_empty() {
        let _ = writeln!(out, "{}  {}\n", style.bold(l.findings), l.no_findings);
        return;
    }
    let _ = writeln!(out, "{} ({})", style.bold(l.findings), d.findings.len());
    for f in &d.findings {
        finding(out, f, style);
    }
}

fn finding(out: &mut String, f: &Finding, style: &Style) {
    let l = style.labels();
    let entry = catalogue().get(f.id);
    let mark = match f.severity {
        crate::catalogue::Severity::Error => "✘",
        crate::catalogue::Severity::Warning => "!",
        crate::catalogue::Severity::Info => "i",
    };
    let _ = writeln!(
        out,
        "\n  {} {}  {}",
        style.severity(f.severity, &format!("{mark} {:<7}", f.severity.as_str())),
        style.bold(f.id.as_str()),
        f.subject
    );
    if let Some(e) = entry {
        let _ = writeln!(out, "    {}", style.bold(e.title.get(style.lang)));
    }
    let _ = writeln!(out, "    {}", detail_with_others(f, style.lang));
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "    {}", style.dim(l.evidence));
        for e in &f.evidence {
            let at =
                e.at.map(|t| {
                    format!(
                        " ({}, {} ago)",
                        clock_time(t, style.now),
                        format_duration(secs(t, style.now))
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "      {} {} = {}{}",
                e.object,
                style.dim(&e.field),
                e.value,
                style.dim(&at)
            );
        }
    }
    if let Some(e) = entry {
        labelled(out, l.cause, e.cause.get(style.lang), style);
        let checks = e.checks_for(&f.vars);
        for (i, c) in checks.iter().enumerate() {
            let label = if i == 0 { l.check } else { "" };
            let _ = writeln!(out, "    {:<7} {}", style.dim(label), style.bold(c));
        }
        labelled(out, l.fix, e.fix.get(style.lang), style);
        labelled(out, l.verify, e.verify.get(style.lang), style);
    }
}

fn labelled(out: &mut String, label: &str, text: &str, style: &Style) {
    let mut first = true;
    for line in text.lines() {
        let label = if first { label } else { "" };
        let _ = writeln!(out, "    {:<7} {}", style.dim(label), line);
        first = false;
    }
}

fn gaps(out: &mut String, d: &Diagnosis, style: &Style) {
    if !d.gaps.is_empty() {
        out.push('\n');
        out.push_str(&gap_lines(&d.gaps, style));
    }
}

/// What could not be read, one line each under a heading.
pub(super) fn gap_lines(gaps: &[crate::model::Gap], style: &Style) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let _ = writeln!(out, "{}", style.warn(style.labels().gaps));
    for g in gaps {
        let _ = writeln!(
            out,
            "  {} {}{}: {}",
            g.verb,
            g.resource,
            g.namespace
                .as_deref()
                .map(|n| format!(" in {n}"))
                .unwrap_or_else(|| " (cluster)".into()),
            g.reason
        );
    }
    out
}
