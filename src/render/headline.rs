//! The headline (SPEC section 3): what users get now, then where the
//! rollout stands, with the lead finding's id. Trace, triage, the gate and
//! `triage --alert` all print it from here, so they say the same thing.

use super::Style;
use crate::analysis::{Diagnosis, Finding, State};
use crate::catalogue::{FindingId, Lang, Severity, catalogue};

/// The headline's first word(s), as printed: the state, in the words a
/// person on call would use.
pub fn word(d: &Diagnosis, lang: Lang) -> &'static str {
    let zh = lang == Lang::Zh;
    let worker = d.verdict.serving.worker;
    match d.verdict.state {
        State::Serving if worker => pick(zh, "READY", "已就绪"),
        State::Serving => pick(zh, "SERVING", "在服务"),
        State::Progressing => pick(zh, "PROGRESSING", "发布中"),
        State::Degraded if rollout_stuck(d) => pick(zh, "ROLLOUT STUCK", "发布受阻"),
        State::Degraded => pick(zh, "DEGRADED", "降级"),
        State::NotServing if worker => pick(zh, "NOT READY", "未就绪"),
        State::NotServing => pick(zh, "NOT SERVING", "未在服务"),
        State::Unknown => pick(zh, "UNKNOWN", "未知"),
    }
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
        State::Serving => style.good(w),
        State::NotServing => style.bad(w),
        _ => style.warn(w),
    }
}

/// `WORD  sentence`, plain: the JSON `verdict.summary`, the gate's lines.
pub fn text(d: &Diagnosis, lang: Lang) -> String {
    format!("{}  {}", word(d, lang), sentence(d, lang))
}

fn pick(zh: bool, en: &'static str, zh_text: &'static str) -> &'static str {
    if zh { zh_text } else { en }
}

/// A degraded rollout whose older revisions still carry the users, or
/// whose declaration its controllers have not taken up: the rollout is
/// stuck, not the service broken.
fn rollout_stuck(d: &Diagnosis) -> bool {
    let s = &d.verdict.serving;
    !s.observed || d.revisions.iter().any(|r| !r.current && s.count_of(r) > 0)
}

fn revision(r: Option<i64>, zh: bool) -> String {
    match (r, zh) {
        (Some(r), false) => format!("revision {r}"),
        (Some(r), true) => format!("修订版 {r}"),
        (None, false) => "the current revision".into(),
        (None, true) => "当前修订版".into(),
    }
}

/// The catalogue title, or the cluster's own word when the title ends in
/// one in parentheses (`... (OOMKilled)` -> `OOMKilled`).
fn short_title(f: &Finding, lang: Lang) -> String {
    let title = catalogue()
        .get(f.id)
        .map(|e| e.title.get(lang).to_string())
        .unwrap_or_else(|| f.id.to_string());
    for (open, close) in [('(', ')'), ('（', '）')] {
        if let Some(body) = title.strip_suffix(close)
            && let Some(at) = body.rfind(open)
        {
            let inner = &body[at + open.len_utf8()..];
            if !inner.is_empty() && !inner.contains(char::is_whitespace) {
                return inner.to_string();
            }
        }
    }
    title
}

/// `OOMKilled [oom-killed]`, or that the evidence holds no cause.
fn lead_text(d: &Diagnosis, zh: bool, lang: Lang) -> String {
    match d.lead() {
        Some(f) => format!("{} [{}]", short_title(f, lang), f.id),
        None if zh => "证据中没有找到原因".into(),
        None => "no cause is in the evidence".into(),
    }
}

/// Revisions that carry users beside the rollout: older ones, and while
/// the declaration is not in effect the current one too (it runs the
/// previous declaration).
fn still_serving(d: &Diagnosis, zh: bool) -> Vec<String> {
    let s = &d.verdict.serving;
    d.revisions
        .iter()
        .filter(|r| (!r.current || !s.observed) && s.count_of(r) > 0)
        .map(|r| {
            let rev = revision(r.revision, zh);
            let n = s.count_of(r);
            match (zh, s.worker) {
                (false, false) => format!("{rev} still serving {n}/{}", s.desired),
                (false, true) => format!("{rev} still has {n}/{} ready", s.desired),
                (true, false) => format!("{rev} 仍有 {n}/{} 在服务", s.desired),
                (true, true) => format!("{rev} 仍有 {n}/{} 就绪", s.desired),
            }
        })
        .collect()
}

fn current_count(d: &Diagnosis) -> i32 {
    if d.verdict.serving.worker {
        d.replicas.ready
    } else {
        d.replicas.serving
    }
}

/// A step as the headline names it: the id in English, the quoted
/// Chinese name in Chinese.
fn step(s: crate::analysis::Step, zh: bool) -> String {
    if zh {
        format!("“{}”", super::human::step_name(s, Lang::Zh))
    } else {
        s.as_str().to_string()
    }
}

fn stopped(d: &Diagnosis, zh: bool) -> String {
    let last = step(d.verdict.last_step, zh);
    if zh {
        format!("停在{last}")
    } else {
        format!("stopped at {last}")
    }
}

const WORKER_EN: &str = "no Service selects these Pods: a worker's ladder ends at ready";
const WORKER_ZH: &str = "没有 Service 选中这些 Pod：后台工作负载的进度止于“已就绪”";

/// The sentence after the word.
pub fn sentence(d: &Diagnosis, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let s = &d.verdict.serving;
    let sep = if zh { "；" } else { "; " };
    let rev = revision(s.current_revision, zh);
    let desired = s.desired;
    match d.verdict.state {
        State::Serving => {
            let n = current_count(d);
            // A partition or OnDelete keeps some Pods on an older revision
            // on purpose: say how many are where.
            let held = d.pods.iter().filter(|p| p.held && !p.terminating).count();
            let mut out = match (zh, s.worker) {
                _ if held > 0 => {
                    let updated = d
                        .pods
                        .iter()
                        .filter(|p| p.current && !p.held && !p.terminating)
                        .count();
                    let what = if s.worker {
                        if zh { "就绪" } else { "ready" }
                    } else if zh {
                        "在服务"
                    } else {
                        "serving"
                    };
                    if zh {
                        format!(
                            "{n}/{desired} {what}：{updated} 个在{rev}，{held} 个按更新策略保留在旧修订版，发布完成"
                        )
                    } else {
                        format!(
                            "{n}/{desired} {what}: {updated} on {rev}, {held} kept on an older revision by the update strategy, rollout complete"
                        )
                    }
                }
                (false, false) => format!("{n}/{desired} on {rev}, rollout complete"),
                (false, true) => {
                    format!("{n}/{desired} ready on {rev}, rollout complete ({WORKER_EN})")
                }
                (true, false) => format!("{rev} {n}/{desired} 在服务，发布完成"),
                (true, true) => format!("{rev} {n}/{desired} 就绪，发布完成（{WORKER_ZH}）"),
            };
            let old = d.replicas.old;
            if old > 0 {
                out.push_str(&if zh {
                    format!("，{old} 个旧修订版 Pod 仍在排空")
                } else {
                    format!(", {old} older Pod{} still draining", plural(old))
                });
            }
            let errors = count(d, Severity::Error);
            let warnings = count(d, Severity::Warning);
            match d.lead() {
                Some(_) if errors + warnings > 0 => {
                    let mut counts = Vec::new();
                    if errors > 0 {
                        counts.push(if zh {
                            format!("{errors} 个错误")
                        } else {
                            format!("{errors} error{}", plural(errors))
                        });
                    }
                    if warnings > 0 {
                        counts.push(if zh {
                            format!("{warnings} 个警告")
                        } else {
                            format!("{warnings} warning{}", plural(warnings))
                        });
                    }
                    let (comma, colon) = if zh { ("，", "：") } else { (", ", ": ") };
                    out.push_str(&format!(
                        "{comma}{}{colon}{}",
                        counts.join(comma),
                        lead_text(d, zh, lang)
                    ));
                }
                Some(f) if old > 0 && f.id == FindingId::ROLLOUT_IN_PROGRESS => {
                    out.push_str(&format!(" [{}]", f.id));
                }
                Some(_) => {
                    out.push_str(sep);
                    out.push_str(if zh { "提示：" } else { "note: " });
                    out.push_str(&lead_text(d, zh, lang));
                }
                None => {}
            }
            out
        }
        State::Progressing => {
            let mut parts = Vec::new();
            if !s.observed {
                parts.push(waiting_for(d, zh));
            } else if s.current_revision.is_some() {
                let ready = d.replicas.ready;
                parts.push(if zh {
                    format!("{rev}：{ready}/{desired} 就绪")
                } else {
                    format!("{rev}: {ready}/{desired} ready")
                });
            } else {
                parts.push(waiting_for(d, zh));
            }
            parts.extend(still_serving(d, zh));
            let mut out = parts.join(sep);
            if let Some(f) = d.lead() {
                out.push_str(&format!(" [{}]", f.id));
            }
            out
        }
        State::Degraded if rollout_stuck(d) => {
            let who = if s.observed && s.current_revision.is_some() {
                let n = current_count(d);
                if n > 0 {
                    if zh {
                        format!("{rev}（{n}/{desired} 在服务）")
                    } else {
                        format!("{rev} ({n}/{desired} serving)")
                    }
                } else {
                    rev
                }
            } else if let Some(m) = &d.chain.model_service {
                if zh {
                    format!("第 {} 代声明", m.generation)
                } else {
                    format!("generation {}", m.generation)
                }
            } else if zh {
                "新修订版".into()
            } else {
                "the new revision".into()
            };
            let colon = if zh { "：" } else { ": " };
            let mut parts = vec![format!(
                "{who} {}{colon}{}",
                stopped(d, zh),
                lead_text(d, zh, lang)
            )];
            parts.extend(still_serving(d, zh));
            parts.join(sep)
        }
        State::Degraded => {
            let n = current_count(d);
            let colon = if zh { "：" } else { ": " };
            if zh {
                format!(
                    "{rev} {n}/{desired} 在服务{sep}{}{colon}{}",
                    stopped(d, zh),
                    lead_text(d, zh, lang)
                )
            } else {
                format!(
                    "{n}/{desired} serving on {rev}{sep}{}{colon}{}",
                    stopped(d, zh),
                    lead_text(d, zh, lang)
                )
            }
        }
        State::NotServing => {
            let head = match (zh, s.worker) {
                (false, false) => format!("0/{desired} ready endpoints"),
                (false, true) => format!("0/{desired} ready ({WORKER_EN})"),
                (true, false) => format!("0/{desired} 个就绪端点"),
                (true, true) => format!("0/{desired} 就绪（{WORKER_ZH}）"),
            };
            let colon = if zh { "：" } else { ": " };
            let tail = match d.lead() {
                Some(_) => format!("{}{colon}{}", stopped(d, zh), lead_text(d, zh, lang)),
                None => format!("{}{sep}{}", waiting_for(d, zh), lead_text(d, zh, lang)),
            };
            format!("{head}{sep}{tail}")
        }
        State::Unknown => {
            let names: Vec<&str> = s.unread.iter().map(|(r, _)| display_kind(r, zh)).collect();
            let mut why: Vec<&str> = s.unread.iter().map(|(_, r)| reason_word(r, zh)).collect();
            why.dedup();
            let last = step(d.verdict.last_step, zh);
            let mut out = if zh {
                format!(
                    "无法读取 {}（{}）；最后已知的步骤：{last}",
                    names.join("、"),
                    why.join("、")
                )
            } else {
                format!(
                    "{} could not be read ({}); last known step: {last}",
                    names.join(", "),
                    why.join(", ")
                )
            };
            if let Some(f) = d.lead()
                && f.severity != Severity::Info
            {
                out.push_str(sep);
                out.push_str(&lead_text(d, zh, lang));
            }
            out
        }
    }
}

fn waiting_for(d: &Diagnosis, zh: bool) -> String {
    let last = step(d.verdict.last_step, zh);
    match (d.verdict.missing, zh) {
        (Some(m), false) => format!("stopped at {last}, waiting for {}", m.as_str()),
        (Some(m), true) => format!("停在{last}，等待{}", step(m, zh)),
        (None, false) => format!("at {last}"),
        (None, true) => format!("处于{last}"),
    }
}

fn count(d: &Diagnosis, severity: Severity) -> usize {
    d.findings.iter().filter(|f| f.severity == severity).count()
}

fn plural<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

/// The kind as people write it.
fn display_kind(resource: &str, zh: bool) -> &str {
    match resource {
        "apis" if zh => "API 发现",
        "endpointslices" => "EndpointSlices",
        "services" => "Services",
        "pods" => "Pods",
        "replicasets" => "ReplicaSets",
        "deployments" => "Deployments",
        "statefulsets" => "StatefulSets",
        "daemonsets" => "DaemonSets",
        "controllerrevisions" => "ControllerRevisions",
        "modelservices" => "ModelServices",
        "apis" => "API discovery",
        other => other,
    }
}

/// Why a read failed, in one word: the gap's reason says more.
fn reason_word(reason: &str, zh: bool) -> &'static str {
    if reason == crate::model::Gap::NOT_IN_DUMP {
        return if zh {
            "文件中没有"
        } else {
            "not in the file"
        };
    }
    let lower = reason.to_ascii_lowercase();
    match (
        lower.contains("forbidden") || lower.contains("cannot list"),
        zh,
    ) {
        (true, false) => "forbidden",
        (true, true) => "无权限",
        (false, false) => "failed",
        (false, true) => "读取失败",
    }
}
