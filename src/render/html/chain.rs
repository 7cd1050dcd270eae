//! The report's chain: the trace body, the object tree and its Pod lines.

use super::*;

/// One workload's report: headline, next command, facts, tree, waterfall,
/// moments, findings and gaps. `prefix` keeps the ids of several on one
/// page apart.
pub(super) fn trace_body(r: &TraceReport, lang: Lang, prefix: &str) -> Markup {
    let l = labels(lang);
    let now = r.clock.now;
    let clock_label = match r.clock.source {
        ClockSource::Live => l.clock_live,
        ClockSource::Capture => l.clock_capture,
        ClockSource::NewestTimestamp => l.clock_newest,
        ClockSource::At => "--at",
    };
    html! {
        (headline(&r.verdict.summary, &slug(&r.verdict.state)))
        @if let Some(next) = &r.verdict.next {
            div.next {
                span.label { (l.next) }
                (command(&next.shell(), lang))
            }
        }
        p.facts {
            span { (r.target.kind) " " strong { (r.target.namespace) "/" (r.target.name) } }
            " · "
            span { (l.judged_at) " " (time(now, now)) " (" (clock_label) ")" }
            " · "
            span.source { (r.source.kind) " " (r.source.location) }
            @if let Some(c) = &r.source.context { " · " span { (c) } }
        }
        (tree(r, lang))
        (waterfall(&r.steps, lang, now))
        (moments(&r.pods, lang, now))
        (findings(&r.findings, lang, prefix, now))
        (gaps(&r.gaps, lang))
    }
}

/// The object tree: the target, its revisions (newest first), each with
/// its Pods.
pub(super) fn tree(r: &TraceReport, lang: Lang) -> Markup {
    let l = labels(lang);
    let s = &r.verdict.serving;
    let revisions: Vec<Option<i64>> = {
        let mut v: Vec<Option<i64>> = s.revisions.iter().map(|x| x.revision).collect();
        for p in &r.pods {
            if !v.contains(&p.revision) {
                v.push(p.revision);
            }
        }
        v
    };
    // Revisions with desired replicas of their own are Knative's, whose
    // older Pods a traffic split holds (docs/json.md).
    let by_traffic = s.revisions.iter().any(|x| x.desired.is_some());
    let endpoints = match s.ready_endpoints {
        Some(n) => n.to_string(),
        None => "?".to_string(),
    };
    html! {
        section.tree {
            h2 { (l.chain) }
            ul {
                li {
                    span.kind { (r.target.kind) } " " strong { (r.target.name) }
                    " "
                    span.dim {
                        (say(lang, Message::new(if r.replicas.group_size.is_some() {
                                "html.replicas_groups"
                            } else {
                                "html.replicas"
                            })
                            .arg("size", r.replicas.group_size.unwrap_or(1))
                            .arg("desired", r.replicas.desired)
                            .arg("current", r.replicas.current)
                            .arg("ready", r.replicas.ready)
                            .arg("endpoints", endpoints.clone())
                            .arg("old", r.replicas.old)))
                    }
                    ul {
                        @for rev in &revisions {
                            @let counts = s.revisions.iter().find(|x| x.revision == *rev);
                            @let pods: Vec<&ReportPod> = r.pods.iter().filter(|p| p.revision == *rev).collect();
                            li {
                                span.kind { (say(lang, Message::new("html.revision").arg("revision", rev.map_or("?".to_string(), |n| n.to_string())))) }
                                @if counts.is_some_and(|c| c.current) || (counts.is_none() && pods.iter().any(|p| p.current)) {
                                    " " span.tag { (say(lang, Message::new("html.current"))) }
                                }
                                @if let Some(c) = counts {
                                    " "
                                    span.dim {
                                        (say(lang, Message::new(if r.replicas.group_size.is_some() {
                                                "html.revision_groups"
                                            } else {
                                                "html.revision_counts"
                                            })
                                            .arg("pods", c.pods)
                                            .arg("ready", c.ready)
                                            .arg("endpoints", c.ready_endpoints.map_or("?".to_string(), |n| n.to_string()))))
                                    }
                                }
                                @if !pods.is_empty() {
                                    ul {
                                        @for p in pods {
                                            li { (pod_line(p, s.endpoints_read, by_traffic, lang)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `endpoints_read`: whether the Pod serves was read (else it is unknown);
/// `by_traffic`: a held Pod is held by a traffic split (a Knative Service's),
/// not by an update strategy.
pub(super) fn pod_line(
    p: &ReportPod,
    endpoints_read: bool,
    by_traffic: bool,
    lang: Lang,
) -> Markup {
    let l = labels(lang);
    html! {
        span.kind { "Pod" } " " code.name { (p.name) }
        " "
        @if p.serving {
            span.tag.ok { (l.serving_yes) }
        } @else if !endpoints_read {
            span.tag { (l.serving_unknown) }
        } @else {
            span.tag.no { (l.serving_no) }
        }
        " "
        span.dim {
            (step_name(p.last_step, lang))
            @if let Some(phase) = &p.phase { " · " (phase) }
            @if let Some(reason) = &p.reason { " · " span.reason { (reason) } }
            @if p.restarts > 0 {
                " · " (say(lang, Message::new("pod.restarts").arg("count", i64::from(p.restarts)).arg("n", i64::from(p.restarts))))
            }
            @if let Some(node) = &p.node { " · " (node) }
            @if p.held {
                " · " (say(lang, Message::new(if by_traffic { "html.held_traffic" } else { "html.held" })))
            }
            @if p.terminating { " · " (say(lang, Message::new("html.terminating"))) }
        }
    }
}
