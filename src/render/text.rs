//! The few interface words of the human view, in both languages. The
//! symptom texts themselves live in the catalogue.

use crate::catalogue::Lang;

pub struct Labels {
    pub chain: &'static str,
    pub timeline: &'static str,
    pub timeline_hint: &'static str,
    pub pods: &'static str,
    pub findings: &'static str,
    pub no_findings: &'static str,
    pub evidence: &'static str,
    pub cause: &'static str,
    pub judge: &'static str,
    pub check: &'static str,
    pub fix: &'static str,
    pub verify: &'static str,
    pub gaps: &'static str,
    pub healthy: &'static str,
    pub not_serving: &'static str,
    pub stopped_at: &'static str,
    pub missing: &'static str,
    pub no_cause: &'static str,
    pub not_reached: &'static str,
    pub waiting: &'static str,
    pub slowest: &'static str,
    pub judged_at: &'static str,
    pub serving_yes: &'static str,
    pub serving_no: &'static str,
    pub also_on: &'static str,
    pub old_pods: &'static str,
    pub symptoms: &'static str,
}

const EN: Labels = Labels {
    chain: "Chain",
    timeline: "Timeline",
    timeline_hint: "gap from the previous step; the longest bar is the slow step",
    pods: "Pods",
    findings: "Findings",
    no_findings: "No findings.",
    evidence: "evidence",
    cause: "cause",
    judge: "judge",
    check: "check",
    fix: "fix",
    verify: "verify",
    gaps: "Could not read (findings that needed these were not made)",
    healthy: "HEALTHY",
    not_serving: "NOT SERVING",
    stopped_at: "stopped at",
    missing: "missing",
    no_cause: "no cause is in the evidence; run the check commands below",
    not_reached: "not reached",
    waiting: "waiting",
    slowest: "slowest",
    judged_at: "judged at",
    serving_yes: "serving",
    serving_no: "not serving",
    also_on: "also on",
    old_pods: "older revisions",
    symptoms: "symptoms",
};

const ZH: Labels = Labels {
    chain: "对象链",
    timeline: "时间线",
    timeline_hint: "与上一步的间隔；最长的条就是慢的那一步",
    pods: "Pod",
    findings: "发现",
    no_findings: "没有发现问题。",
    evidence: "证据",
    cause: "原因",
    judge: "判断",
    check: "检查",
    fix: "修复",
    verify: "验证",
    gaps: "无法读取（依赖这些数据的判断未作出）",
    healthy: "健康",
    not_serving: "未在服务",
    stopped_at: "停在",
    missing: "缺少",
    no_cause: "证据中没有找到原因；请运行下面的检查命令",
    not_reached: "未到达",
    waiting: "已等待",
    slowest: "最慢",
    judged_at: "判断时刻",
    serving_yes: "在服务",
    serving_no: "未在服务",
    also_on: "另有",
    old_pods: "旧修订版",
    symptoms: "症状",
};

impl Labels {
    pub fn for_lang(lang: Lang) -> &'static Labels {
        match lang {
            Lang::En => &EN,
            Lang::Zh => &ZH,
        }
    }
}
