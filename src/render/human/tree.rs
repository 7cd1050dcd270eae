//! The chain tree: the workload, its revisions and Services, and its Pods
//! (alike Pods folded into one line).

use super::*;

/// Pods that read the same in the tree: one line stands for all.
pub(super) struct PodGroup<'a> {
    /// The Pod named: the one the lead finding is about, if it is here.
    pub(super) shown: &'a PodState,
    pub(super) count: usize,
    pub(super) nodes: usize,
    pub(super) restarts: (i32, i32),
}

/// Folds Pods of the same revision, state, last step and reason (the lead
/// finding's Pod names its group), keeping the order they came in.
pub(super) fn fold<'a>(pods: &[&'a PodState], lead_pod: Option<&str>) -> Vec<PodGroup<'a>> {
    type Key<'k> = (Option<i64>, bool, bool, Step, Option<&'k str>, bool, bool);
    let key = |p: &'a PodState| -> Key<'a> {
        (
            p.revision,
            p.current,
            p.terminating,
            p.last_step,
            p.state_reason.as_deref(),
            p.serving,
            p.draining,
        )
    };
    let mut keys: Vec<Key> = Vec::new();
    let mut members: Vec<Vec<&PodState>> = Vec::new();
    for p in pods {
        let k = key(p);
        match keys.iter().position(|x| *x == k) {
            Some(i) => members[i].push(p),
            None => {
                keys.push(k);
                members.push(vec![p]);
            }
        }
    }
    members
        .into_iter()
        .map(|m| {
            let shown = m
                .iter()
                .find(|p| Some(p.name.as_str()) == lead_pod)
                .copied()
                .unwrap_or(m[0]);
            let mut nodes: Vec<Option<&str>> = m.iter().map(|p| p.node.as_deref()).collect();
            nodes.sort();
            nodes.dedup();
            let restarts = m.iter().map(|p| p.restarts);
            PodGroup {
                shown,
                count: m.len(),
                nodes: nodes.len(),
                restarts: (
                    restarts.clone().min().unwrap_or(0),
                    restarts.max().unwrap_or(0),
                ),
            }
        })
        .collect()
}

pub(super) fn lead_pod(d: &Diagnosis) -> Option<&str> {
    d.lead()
        .filter(|f| f.subject.kind == "Pod")
        .map(|f| f.subject.name.as_str())
}

/// A Deployment's (or a Rollout's) Progressing condition, as a suffix.
fn progressing(dep: &mdiag_core::analysis::summary::DeploymentFacts) -> String {
    dep.progressing
        .as_ref()
        .map(|(status, reason)| format!(" · Progressing={status} {reason}"))
        .unwrap_or_default()
}

pub(super) fn tree(out: &mut String, d: &Diagnosis, style: &Style) {
    let l = style.labels();
    let c = &d.chain;
    let _ = writeln!(out, "{}", style.bold(l.chain));
    let lead = lead_pod(d);
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut depth = 0;
    // A platform that is itself the workload (an Argo Rollout) is one line:
    // its counts and the phase its controller writes.
    let workload_platform = c.platform.as_ref().filter(|p| p.is_workload);
    if let (Some(m), Some(dep)) = (workload_platform, &c.deployment) {
        let phase = m
            .phase
            .as_ref()
            .map(|(phase, message)| {
                let said = if message.is_empty() {
                    format!(" · phase {phase}")
                } else {
                    format!(" · phase {phase} ({message})")
                };
                match phase.as_str() {
                    "Healthy" => style.good(&said),
                    "Degraded" => style.bad(&said),
                    _ => style.warn(&said),
                }
            })
            .unwrap_or_default();
        let progressing = progressing(dep);
        lines.push((
            depth,
            format!(
                "{} {}  {}{phase}{progressing}",
                m.kind,
                m.name,
                workload_counts(style, dep.ready, dep.desired, dep.updated, dep.available),
            ),
        ));
        depth += 1;
    } else if let Some(m) = &c.platform {
        lines.push((depth, platform_line(m, d, style)));
        depth += 1;
        // KServe's Knative mode: the predictor's Knative Service between
        // the InferenceService and its Revisions' Deployments.
        if let Some(k) = c.knative_service.as_ref().filter(|k| k.kind != m.kind) {
            lines.push((depth, platform_line(k, d, style)));
            depth += 1;
        }
    }
    if let Some(dep) = c
        .deployment
        .as_ref()
        .filter(|_| workload_platform.is_none())
    {
        let progressing = progressing(dep);
        lines.push((
            depth,
            format!(
                "Deployment {}  {}{progressing}",
                dep.name,
                workload_counts(style, dep.ready, dep.desired, dep.updated, dep.available),
            ),
        ));
        depth += 1;
    }
    if let Some(set) = &c.pod_set {
        let revision = set
            .update_revision
            .as_ref()
            .map(|(n, name)| {
                tr(
                    style,
                    Message::new("tree.update_revision")
                        .arg("revision", *n)
                        .arg("name", name),
                )
            })
            .unwrap_or_default();
        lines.push((
            depth,
            format!(
                "{} {}  {}{revision} · {}",
                set.kind,
                set.name,
                workload_counts(style, set.ready, set.desired, set.updated, set.available),
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
            style.bold(&tr(style, Message::new("tree.current")))
        } else {
            String::new()
        };
        lines.push((
            depth,
            format!(
                "ReplicaSet {}  {}",
                rs.name,
                tr(
                    style,
                    Message::new("tree.replicaset")
                        .arg("revision", rev)
                        .arg("current", Arg::styled(tag))
                        .arg("ready", rs.ready)
                        .arg("desired", rs.desired),
                ),
            ),
        ));
        for g in fold(&pods, lead) {
            lines.push((depth + 1, pod_line(&g, d, style)));
        }
    }
    // A LeaderWorkerSet's Pods, group by group: the group is what serves.
    for group in &c.groups {
        let pods: Vec<&PodState> = d
            .pods
            .iter()
            .filter(|p| group.pod_uids.contains(&p.uid))
            .collect();
        let serving = if group.serving {
            style.good(&tr(style, Message::new("tree.group_serving")))
        } else {
            style.bad(&tr(style, Message::new("tree.group_not_serving")))
        };
        lines.push((
            depth,
            format!(
                "{} · {serving}",
                tr(
                    style,
                    Message::new("tree.group")
                        .arg("name", group.name.as_str())
                        .arg("ready", group.ready)
                        .arg("size", group.size)
                ),
            ),
        ));
        for g in fold(&pods, lead) {
            lines.push((depth + 1, pod_line(&g, d, style)));
        }
    }
    if c.replica_sets.is_empty() {
        // Pods of no group: all of them, but for a LeaderWorkerSet's
        // grouped ones shown above.
        let pods: Vec<&PodState> = d
            .pods
            .iter()
            .filter(|p| !c.groups.iter().any(|g| g.pod_uids.contains(&p.uid)))
            .collect();
        for g in fold(&pods, lead) {
            lines.push((depth, pod_line(&g, d, style)));
        }
    }
    // Ready endpoints of every revision: an old revision still serving counts.
    let endpoints = d
        .verdict
        .serving
        .ready_endpoints
        .map_or("?".to_string(), |n| n.to_string());
    let several = c.services.len() > 1;
    for svc in &c.services {
        // Beside another Service (a Rollout's stable and canary), each
        // counts its own slices.
        let endpoints = if several && d.verdict.serving.ready_endpoints.is_some() {
            svc.slices
                .iter()
                .map(|s| s.ready)
                .sum::<usize>()
                .to_string()
        } else {
            endpoints.clone()
        };
        lines.push((
            depth,
            format!(
                "Service {}  {}",
                svc.name,
                tr(
                    style,
                    if d.replicas.group_size.is_some() {
                        // Groups serve, not endpoints: a headless Service
                        // lists every Pod with an IP as ready.
                        Message::new("tree.service_groups")
                            .arg("ports", svc.ports.join(","))
                            .arg("serving", d.replicas.serving)
                            .arg(
                                "endpoints",
                                svc.slices.iter().map(|s| s.ready).sum::<usize>(),
                            )
                            .arg("desired", d.replicas.desired)
                    } else {
                        Message::new("tree.service")
                            .arg("ports", svc.ports.join(","))
                            .arg("endpoints", endpoints.as_str())
                            .arg("desired", svc.desired.unwrap_or(d.replicas.desired))
                    },
                ),
            ),
        ));
        for slice in &svc.slices {
            lines.push((
                depth + 1,
                format!(
                    "EndpointSlice {}  {}",
                    slice.name,
                    tr(
                        style,
                        Message::new("tree.slice")
                            .arg("ready", slice.ready)
                            .arg("endpoints", slice.endpoints),
                    ),
                ),
            ));
        }
    }
    let services_unread = d
        .verdict
        .serving
        .unread
        .iter()
        .any(|(r, _)| r == "services");
    if c.wants_service && c.services.is_empty() {
        // Unread is not absent: a gap below says why.
        if services_unread {
            lines.push((
                depth,
                style.warn(&tr(style, Message::new("tree.service_unread"))),
            ));
        } else {
            lines.push((
                depth,
                style.bad(&tr(style, Message::new("tree.service_none"))),
            ));
        }
    }
    draw_tree(out, &lines, style.width);
    // By default the controller is shown only when something is wrong
    // with it: a stale or missing lease, or fewer ready than desired.
    let controller = c.controller.as_ref().filter(|ctl| {
        style.verbose
            || ctl.replicas.is_none_or(|(ready, desired)| ready < desired)
            || ctl
                .lease
                .as_ref()
                .is_none_or(|l| l.stale || l.renewed.is_none())
    });
    if let Some(ctl) = controller {
        let mut facts = Vec::new();
        if let Some((ready, desired)) = ctl.replicas {
            facts.push(tr(
                style,
                Message::new("tree.controller_ready")
                    .arg("ready", ready)
                    .arg("desired", desired),
            ));
        }
        if let Some(lease) = &ctl.lease {
            let text = match lease.renewed {
                Some(at) => tr(
                    style,
                    Message::new("tree.lease_renewed").arg("ago", format_duration(secs(at, d.now))),
                ),
                None => tr(style, Message::new("tree.lease_never")),
            };
            facts.push(if lease.stale {
                style.bad(&tr(style, Message::new("tree.stale").arg("text", text)))
            } else {
                text
            });
        }
        if facts.is_empty() {
            facts.push(style.dim(&tr(style, Message::new("tree.not_in_snapshot"))));
        }
        let line = format!(
            "{} {}/{}: {}",
            style.dim(&tr(style, Message::new("tree.controller"))),
            ctl.namespace,
            ctl.name,
            facts.join(", ")
        );
        push_lines(out, wrap(&line, style.width, "  ", "    "));
    }
    out.push('\n');
}

/// `serving_unread`: the Services or EndpointSlices were not read, so
/// whether the Pod serves is unknown.
pub(super) fn pod_line(g: &PodGroup, d: &Diagnosis, style: &Style) -> String {
    let serving_unread = d.serving_unread();
    let l = style.labels();
    let p = g.shown;
    let mut name = format!("Pod {}", p.name);
    if g.count > 1 {
        name.push(' ');
        name.push_str(&tr(style, Message::new("pod.alike").arg("n", g.count - 1)));
    }
    let mut parts = vec![if g.nodes > 1 {
        tr(style, Message::new("pod.nodes").arg("n", g.nodes))
    } else {
        p.node
            .clone()
            .unwrap_or_else(|| tr(style, Message::new("pod.no_node")))
    }];
    if p.last_step != Step::Serving {
        parts.push(step_name(p.last_step, style.lang));
    }
    if let Some(r) = &p.state_reason {
        parts.push(style.bad(r));
    }
    let (low, high) = g.restarts;
    if high > 0 {
        let count = if low == high {
            high.to_string()
        } else {
            format!("{low}-{high}")
        };
        // One restart is singular only when every Pod of the group has one.
        let n = if low == high { high } else { 2 };
        parts.push(tr(
            style,
            Message::new("pod.restarts").arg("count", count).arg("n", n),
        ));
    }
    if p.held {
        let revision = p.revision.map_or(String::new(), |r| format!(" {r}"));
        // A Knative Revision is held by the traffic split, not by an
        // update strategy.
        let id = if d.chain.knative_service.is_some() {
            "pod.held_traffic"
        } else {
            "pod.held"
        };
        parts.push(style.dim(&tr(style, Message::new(id).arg("revision", revision))));
    }
    // A Pod that ended is not terminating: its phase says how it ended,
    // and whether it serves is no question for it.
    match p.phase.as_deref() {
        Some("Failed") => {
            parts.push(style.bad(&tr(style, Message::new("pod.phase_failed"))));
            return format!("{name}  {}", parts.join(" · "));
        }
        Some("Succeeded") => {
            parts.push(style.dim(&tr(style, Message::new("pod.phase_succeeded"))));
            return format!("{name}  {}", parts.join(" · "));
        }
        _ if p.terminating => parts.push(style.dim(&tr(style, Message::new("pod.terminating")))),
        _ => {}
    }
    parts.push(if p.serving {
        style.good(l.serving_yes)
    } else if serving_unread {
        style.dim(l.serving_unknown)
    } else if p.draining {
        style.dim(&tr(style, Message::new("pod.draining")))
    } else {
        style.dim(l.serving_no)
    });
    format!("{name}  {}", parts.join(" · "))
}

pub(super) fn draw_tree(out: &mut String, lines: &[(usize, String)], columns: usize) {
    // For each line, whether later lines continue at each depth.
    for (i, (depth, text)) in lines.iter().enumerate() {
        let mut prefix = String::from("  ");
        let mut cont = String::from("  ");
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
                prefix.push_str(if continues_after { "│  " } else { "   " });
            }
            cont.push_str(if continues_after { "│  " } else { "   " });
        }
        cont.push_str("   ");
        push_lines(out, wrap(text, columns, &prefix, &cont));
    }
}

/// A serving platform's object: its kind and name, and its generation as
/// observed, or its Ready condition as written when its status does not
/// observe its own generation.
fn platform_line(
    m: &mdiag_core::analysis::summary::PlatformFacts,
    d: &Diagnosis,
    style: &Style,
) -> String {
    let generation = m.generation;
    let state = match m.observed {
        // A platform whose status does not observe its own generation
        // (KServe) is shown by its Ready condition as written.
        _ if !m.observes_generation => {
            let (status, reason) = m.ready.clone().unwrap_or_default();
            let said = tr(
                style,
                Message::new("tree.platform_ready")
                    .arg("generation", generation)
                    .arg("condition", m.ready_condition.as_str())
                    .arg("status", if status.is_empty() { "?" } else { &status })
                    .arg(
                        "reason",
                        if reason.is_empty() {
                            String::new()
                        } else {
                            format!(" {reason}")
                        },
                    ),
            );
            // Counts over a summary condition (docs/contract.md#findings):
            // when the Pods and endpoints say otherwise, say so.
            let state = d.verdict.state;
            let serving = state == mdiag_core::analysis::State::Serving;
            let known = state != mdiag_core::analysis::State::Unknown;
            let disagrees =
                known && ((status == "True" && !serving) || (status == "False" && serving));
            let said = match status.as_str() {
                "True" if !disagrees => style.good(&said),
                "False" => style.bad(&said),
                _ => style.warn(&said),
            };
            if disagrees {
                format!(
                    "{said}{}",
                    style.warn(&tr(style, Message::new("tree.platform_disagrees")))
                )
            } else {
                said
            }
        }
        Some(o) if o >= generation => style.good(&tr(
            style,
            Message::new("tree.generation_observed").arg("generation", generation),
        )),
        Some(o) => style.bad(&tr(
            style,
            Message::new("tree.generation_behind")
                .arg("generation", generation)
                .arg("observed", o),
        )),
        None => style.warn(&tr(
            style,
            Message::new("tree.generation_unobserved").arg("generation", generation),
        )),
    };
    format!("{} {}  {state}", m.kind, m.name)
}

#[cfg(test)]
mod tests {
    use super::fold;
    use mdiag_core::analysis::{Moment, Moments, PodState, Step};

    fn pod(name: &str, node: &str, reason: Option<&str>, restarts: i32) -> PodState {
        let m = Moment {
            reached: true,
            at: None,
        };
        PodState {
            name: name.into(),
            uid: name.into(),
            revision: Some(3),
            current: true,
            held: false,
            terminating: false,
            node: Some(node.into()),
            phase: Some("Running".into()),
            moments: Moments {
                stored: m,
                bound: m,
                started: Moment {
                    reached: false,
                    at: None,
                },
                ready: Moment {
                    reached: false,
                    at: None,
                },
                completed: Moment::default(),
            },
            serving: false,
            draining: false,
            last_step: Step::Bound,
            restarts,
            state_reason: reason.map(str::to_string),
        }
    }

    #[test]
    fn alike_pods_fold_into_one_line_named_after_the_lead() {
        let mut pods: Vec<PodState> = (0..5529)
            .map(|i| {
                pod(
                    &format!("web-{i}"),
                    &format!("node-{}", i % 7),
                    Some("CrashLoopBackOff"),
                    3 + i % 2,
                )
            })
            .collect();
        pods.push(pod("web-odd", "node-0", Some("ImagePullBackOff"), 0));
        let refs: Vec<&PodState> = pods.iter().collect();
        let groups = fold(&refs, Some("web-17"));
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].count, 5529);
        assert_eq!(groups[0].shown.name, "web-17");
        assert_eq!(groups[0].nodes, 7);
        assert_eq!(groups[0].restarts, (3, 4));
        assert_eq!(groups[1].count, 1);
        assert_eq!(groups[1].shown.name, "web-odd");
        // Without a lead Pod in the group, the first one names it.
        assert_eq!(fold(&refs, None)[0].shown.name, "web-0");
    }
}
