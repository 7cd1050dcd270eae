//! Redacting what mdiag answers, not only what it writes: every string in a
//! [`Diagnosis`] (and in the triage, gate and alert types around it) that
//! came from a cluster or a file, replaced in place by the same rules a
//! snapshot file gets, once, where a command builds its answer and before
//! any view (terminal, `-o json|yaml`, HTML, JUnit, an MCP answer) sees it.
//!
//! The analysis has already run on the text as the cluster wrote it, so a
//! finding is the same with or without redaction; only what is quoted
//! changes. Every outside string is searched for the default shapes (it is
//! shown to someone; a name that happens to look like a key is replaced
//! too), and the user's `--redact` patterns reach every one, names and the
//! `next` command included.
//!
//! Each struct is taken apart field by field without `..`, so a field
//! added to one of them does not compile here until it is said whether it
//! holds outside text.

use mdiag_core::alert::Alert;
use mdiag_core::analysis::gate::{Check, Decision, GateView, HelmRelease, Judgement};
use mdiag_core::analysis::logs::LogTail;
use mdiag_core::analysis::outside::Outside;
use mdiag_core::analysis::summary::{
    ChainSummary, ControllerFacts, DeploymentFacts, GroupFacts, LeaseFacts, PlatformFacts,
    PodSetFacts, ReplicaSetFacts, ServiceFacts, SliceFacts,
};
use mdiag_core::analysis::triage::Triage;
use mdiag_core::analysis::{
    Diagnosis, Evidence, Finding, PodState, Serving, StepState, TargetInfo, Verdict,
};
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::model::{Gap, LogRecord, ObjectRef, Origin, TargetSpec, TemplateVars};

use super::redactor::Redactor;

/// Counts the values replaced while one answer is redacted.
struct Scrub<'r> {
    redactor: &'r Redactor,
    count: u32,
}

impl Scrub<'_> {
    fn s(&mut self, s: &mut String) {
        let mut n = 0;
        self.redactor.replace(s, true, &mut |_, c| n += c);
        self.count += n;
    }

    fn opt(&mut self, s: &mut Option<String>) {
        if let Some(s) = s {
            self.s(s);
        }
    }

    /// A command's words, each on its own: a redacted word stays one word.
    fn command(&mut self, c: &mut Option<mdiag_core::command::Command>) {
        if let Some(c) = c {
            c.argv_mut().iter_mut().for_each(|w| self.s(w));
        }
    }

    fn strings(&mut self, v: &mut [String]) {
        v.iter_mut().for_each(|s| self.s(s));
    }

    fn message(&mut self, m: &mut Message) {
        let Message { id: _, args } = m;
        args.values_mut().for_each(|a| self.arg(a));
    }

    fn arg(&mut self, a: &mut Arg) {
        match a {
            Arg::Text(t) | Arg::Styled(t) => self.s(t),
            Arg::Int(_) => {}
            Arg::Msg(m) => self.message(m),
            Arg::List { items, sep: _ } => items.iter_mut().for_each(|a| self.arg(a)),
        }
    }

    fn vars(&mut self, vars: &mut TemplateVars) {
        vars.values_mut().for_each(|v| self.s(v));
    }

    fn gaps(&mut self, gaps: &mut [Gap]) {
        for g in gaps {
            let Gap {
                resource,
                namespace,
                verb,
                name,
                reason,
                complete_with,
                read_in,
                contexts,
            } = g;
            contexts.iter_mut().for_each(|c| self.s(c));
            self.s(resource);
            self.opt(namespace);
            self.s(verb);
            self.opt(name);
            self.s(reason);
            self.command(complete_with);
            read_in.iter_mut().for_each(|n| self.s(n));
        }
    }

    fn object_ref(&mut self, r: &mut ObjectRef) {
        let ObjectRef { kind, name, uid } = r;
        self.s(kind);
        self.s(name);
        self.s(uid);
    }

    fn finding(&mut self, f: &mut Finding) {
        let Finding {
            id: _,
            severity: _,
            subject,
            step: _,
            detail,
            evidence,
            vars,
        } = f;
        self.object_ref(subject);
        self.message(detail);
        evidence.iter_mut().for_each(|e| self.evidence(e));
        self.vars(vars);
    }

    fn evidence(&mut self, e: &mut Evidence) {
        let Evidence {
            object,
            field,
            value,
            at: _,
            log,
            said,
            field_said,
        } = e;
        self.s(object);
        self.s(field);
        self.s(value);
        if let Some(log) = log {
            self.tail(log);
        }
        if let Some(m) = said {
            self.message(m);
        }
        if let Some(m) = field_said {
            self.message(m);
        }
    }

    fn tail(&mut self, t: &mut LogTail) {
        let LogTail {
            container,
            previous: _,
            total_lines: _,
            truncated: _,
            lines,
        } = t;
        self.s(container);
        self.strings(lines);
    }

    fn diagnosis(&mut self, d: &mut Diagnosis) {
        let Diagnosis {
            target,
            now: _,
            healthy: _,
            verdict,
            steps,
            replicas: _,
            revisions: _,
            chain,
            pods,
            findings,
            gaps,
            incomplete: _,
            // The user's own file name and clock, as given on the command line.
            replay: _,
        } = d;
        let TargetInfo {
            kind,
            namespace,
            name,
            uid,
            context,
        } = target;
        self.s(kind);
        self.s(namespace);
        self.s(name);
        self.s(uid);
        self.opt(context);
        self.verdict(verdict);
        for step in steps {
            // `unread` is a resource name of mdiag's own list.
            let StepState {
                step: _,
                reached: _,
                at: _,
                note,
                unread: _,
                restarted: _,
            } = step;
            self.message(note);
        }
        self.chain(chain);
        pods.iter_mut().for_each(|p| self.pod(p));
        findings.iter_mut().for_each(|f| self.finding(f));
        self.gaps(gaps);
    }

    fn verdict(&mut self, v: &mut Verdict) {
        let Verdict {
            last_step: _,
            missing: _,
            lead: _,
            state: _,
            serving,
            next,
        } = v;
        let Serving {
            // Counts, a stage and a kind name of mdiag's own: no outside text.
            basis: _,
            status: _,
            ready_endpoints: _,
            desired: _,
            worker: _,
            current_revision: _,
            observed: _,
            unread,
        } = serving;
        for (resource, reason) in unread {
            self.s(resource);
            self.s(reason);
        }
        self.command(next);
    }

    fn pod(&mut self, p: &mut PodState) {
        let PodState {
            name,
            uid,
            revision: _,
            current: _,
            held: _,
            terminating: _,
            node,
            phase,
            moments: _,
            serving: _,
            draining: _,
            last_step: _,
            restarts: _,
            state_reason,
        } = p;
        self.s(name);
        self.s(uid);
        self.opt(node);
        self.opt(phase);
        self.opt(state_reason);
    }

    fn platform(&mut self, facts: &mut PlatformFacts) {
        let PlatformFacts {
            kind,
            name,
            generation: _,
            observed: _,
            observes_generation: _,
            ready,
            ready_condition: _,
            is_workload: _,
            phase,
        } = facts;
        self.s(kind);
        self.s(name);
        if let Some((_, reason)) = ready {
            self.s(reason);
        }
        // Argo's message names ReplicaSets and quotes analyses.
        if let Some((phase, message)) = phase {
            self.s(phase);
            self.s(message);
        }
    }

    fn chain(&mut self, c: &mut ChainSummary) {
        let ChainSummary {
            platform,
            knative_service,
            deployment,
            replica_sets,
            pod_set,
            groups,
            services,
            wants_service: _,
            controller,
        } = c;
        for facts in [platform.as_mut(), knative_service.as_mut()]
            .into_iter()
            .flatten()
        {
            self.platform(facts);
        }
        if let Some(DeploymentFacts {
            name,
            desired: _,
            ready: _,
            updated: _,
            available: _,
            progressing,
        }) = deployment
        {
            self.s(name);
            if let Some((status, reason)) = progressing {
                self.s(status);
                self.s(reason);
            }
        }
        for rs in replica_sets {
            let ReplicaSetFacts {
                name,
                revision: _,
                current: _,
                ready: _,
                desired: _,
                replicas: _,
                pod_uids,
            } = rs;
            self.s(name);
            self.strings(pod_uids);
        }
        if let Some(PodSetFacts {
            kind,
            name,
            desired: _,
            ready: _,
            updated: _,
            available: _,
            update_revision,
            strategy,
        }) = pod_set
        {
            self.s(kind);
            self.s(name);
            if let Some((_, name)) = update_revision {
                self.s(name);
            }
            self.s(strategy);
        }
        for group in groups {
            let GroupFacts {
                name,
                ready: _,
                size: _,
                serving: _,
                pod_uids,
            } = group;
            self.s(name);
            self.strings(pod_uids);
        }
        for service in services {
            let ServiceFacts {
                name,
                ports,
                slices,
                desired: _,
            } = service;
            self.s(name);
            self.strings(ports);
            for slice in slices {
                let SliceFacts {
                    name,
                    ready: _,
                    endpoints: _,
                } = slice;
                self.s(name);
            }
        }
        if let Some(ControllerFacts {
            namespace,
            name,
            replicas: _,
            lease,
        }) = controller
        {
            self.s(namespace);
            self.s(name);
            if let Some(LeaseFacts {
                renewed: _,
                stale: _,
            }) = lease
            {}
        }
    }

    fn outside(&mut self, o: &mut Outside) {
        let Outside {
            kind: _,
            namespace,
            name,
            uid,
            state: _,
            findings,
            gaps,
            context,
            // Not shown: `-l` reads them, and the selector the user
            // typed must still match.
            labels: _,
        } = o;
        self.opt(context);
        self.s(namespace);
        self.s(name);
        self.s(uid);
        findings.iter_mut().for_each(|f| self.finding(f));
        self.gaps(gaps);
    }

    fn target_spec(&mut self, t: &mut TargetSpec) {
        let TargetSpec {
            kind: _,
            namespace,
            name,
        } = t;
        self.opt(namespace);
        self.s(name);
    }
}

impl Redactor {
    fn scrub(&self, work: impl FnOnce(&mut Scrub)) -> u32 {
        let mut scrub = Scrub {
            redactor: self,
            count: 0,
        };
        work(&mut scrub);
        scrub.count
    }

    /// Redacts every outside string of a diagnosis in place: names, the
    /// evidence (values, log tails, mdiag's words around the cluster's),
    /// the findings' details and command names, the notes of the ladder,
    /// the facts of the tree, the gaps and the `next` command. Returns
    /// how many values were replaced.
    pub fn diagnosis(&self, d: &mut Diagnosis) -> u32 {
        self.scrub(|s| s.diagnosis(d))
    }

    /// Every diagnosis of a triage and every row outside a workload.
    pub fn triage(&self, t: &mut Triage) -> u32 {
        self.scrub(|s| {
            // `checked` holds counts only.
            let Triage {
                items,
                outside,
                checked: _,
                contexts,
            } = t;
            contexts.iter_mut().for_each(|c| s.s(c));
            items.iter_mut().for_each(|d| s.diagnosis(d));
            outside.iter_mut().for_each(|o| s.outside(o));
        })
    }

    /// A finding on its own (an alert's or a gate's).
    pub fn finding(&self, f: &mut Finding) -> u32 {
        self.scrub(|s| s.finding(f))
    }

    /// The arguments of one of mdiag's messages (its words stay).
    pub fn message(&self, m: &mut Message) -> u32 {
        self.scrub(|s| s.message(m))
    }

    /// What could not be read, and why (an API's error text).
    pub fn gaps(&self, gaps: &mut [Gap]) -> u32 {
        self.scrub(|s| s.gaps(gaps))
    }

    /// The names a catalogue entry's commands are filled with.
    pub fn vars(&self, vars: &mut TemplateVars) -> u32 {
        self.scrub(|s| s.vars(vars))
    }

    /// One line of text mdiag shows (a note, an error's words).
    pub fn line(&self, text: &mut String) -> u32 {
        self.scrub(|s| s.s(text))
    }

    /// Where the objects came from: the file path or the server URL (a
    /// URL may carry a password), the context, the captured target.
    pub fn origin(&self, o: &mut Origin) -> u32 {
        self.scrub(|s| {
            let Origin {
                kind: _,
                location,
                captured_at: _,
                captured_by,
                context,
                named_context,
                server_version,
                target,
                namespace,
                newest_seen: _,
            } = o;
            s.s(location);
            s.opt(captured_by);
            s.opt(context);
            s.opt(named_context);
            s.opt(server_version);
            if let Some(t) = target {
                s.target_spec(t);
            }
            s.opt(namespace);
        })
    }

    /// The gate's decision at one moment: each check's words, why it
    /// failed or what it waits for (a crash's last log line among them).
    pub fn decision(&self, d: &mut Decision) -> u32 {
        self.scrub(|s| {
            let Decision {
                view,
                outcome: _,
                reason,
            } = d;
            let GateView { judgement, checks } = view;
            match judgement {
                Judgement::Converged => {}
                Judgement::Failed { finding: _, why } => {
                    if let Some(m) = why {
                        s.message(m);
                    }
                }
                Judgement::Waiting { check: _, detail } => s.message(detail),
            }
            for c in checks {
                let Check {
                    name: _,
                    passed: _,
                    detail,
                } = c;
                s.message(detail);
            }
            if let Some(m) = reason {
                s.message(m);
            }
        })
    }

    /// A Helm release as its storage Secret's labels told it.
    pub fn helm(&self, h: &mut HelmRelease) -> u32 {
        self.scrub(|s| {
            let HelmRelease {
                name,
                namespace,
                read: _,
                revision: _,
                status,
                chart,
                app_version,
                manages_target: _,
                notes,
                gap,
            } = h;
            s.s(name);
            s.s(namespace);
            s.opt(status);
            s.opt(chart);
            s.opt(app_version);
            notes.iter_mut().for_each(|m| s.message(m));
            if let Some(g) = gap {
                s.gaps(std::slice::from_mut(g));
            }
        })
    }

    /// An alert as shown beside its trace: its annotations (a description
    /// may quote anything) and label values. Call it once the alert has
    /// been mapped to its workload: the labels name it.
    pub fn alert(&self, a: &mut Alert) -> u32 {
        self.scrub(|s| {
            let Alert {
                labels,
                annotations,
                status,
                starts_at: _,
                ends_at: _,
            } = a;
            labels.values_mut().for_each(|v| s.s(v));
            annotations.values_mut().for_each(|v| s.s(v));
            s.opt(status);
        })
    }

    /// Logs, each as one text, before the analysis quotes their last
    /// lines: a shape that spans lines (a private key block) is only seen
    /// whole. Returns how many values were replaced.
    pub fn logs(&self, logs: &mut [LogRecord]) -> u32 {
        self.scrub(|s| logs.iter_mut().for_each(|l| s.s(&mut l.text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdiag_core::model::{Clock, TargetSpec};
    use serde_json::Value;

    fn hostile() -> (mdiag_core::model::Snapshot, Diagnosis) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/hostile/snapshot.yaml");
        let snapshot = crate::read_snapshot_file(&path).unwrap();
        let target = TargetSpec::parse("vault-chat", None).unwrap();
        let chain = mdiag_core::chain::walk(&snapshot, &target, "hostile-lab", None).unwrap();
        let now = Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH).now;
        let d = mdiag_core::analysis::analyze(&snapshot, &chain, now);
        drop(chain);
        (snapshot, d)
    }

    /// Every string left in `v` that is not a marker, with its key.
    fn unmarked(v: &Value, key: &str, out: &mut Vec<(String, String)>) {
        match v {
            // An empty string holds nothing to leak (`.+` cannot match it);
            // a command is its words, each replaced (shown shell-quoted).
            Value::String(s)
                if !s.is_empty()
                    && !s.starts_with("<redacted:")
                    && !mdiag_core::command::split(s)
                        .is_some_and(|words| words.iter().all(|w| w.starts_with("<redacted:"))) =>
            {
                out.push((key.to_string(), s.clone()))
            }
            Value::Array(items) => items.iter().for_each(|i| unmarked(i, key, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| unmarked(v, k, out)),
            _ => {}
        }
    }

    /// A pattern that matches any text reaches every string of the
    /// diagnosis: what is left is mdiag's own (ids, enums, times).
    #[test]
    fn every_outside_string_of_a_diagnosis_is_reached() {
        let (_, mut d) = hostile();
        let before = serde_json::to_value(&d).unwrap();
        let replaced = Redactor::new(&["(?s).+".into()], false)
            .unwrap()
            .diagnosis(&mut d);
        assert!(replaced > 50, "{replaced}");
        let mut left = Vec::new();
        unmarked(&serde_json::to_value(&d).unwrap(), "", &mut left);
        // mdiag's own: message ids, finding ids, severities, steps,
        // states, times and the condition type a platform row names.
        const OWN: &[&str] = &[
            "id",
            "ready_condition",
            "basis",
            "severity",
            "step",
            "last_step",
            "missing",
            "state",
            "now",
            "at",
            "renewed",
        ];
        let outside: Vec<_> = left
            .iter()
            .filter(|(k, _)| !OWN.contains(&k.as_str()))
            .collect();
        assert!(outside.is_empty(), "not reached: {outside:#?}");
        assert_ne!(before, serde_json::to_value(&d).unwrap());
    }

    #[test]
    fn a_diagnosis_keeps_the_cluster_words_around_what_it_replaces() {
        let (_, mut d) = hostile();
        let n = Redactor::default().diagnosis(&mut d);
        let text = serde_json::to_string(&d).unwrap();
        assert!(n >= 28 * 3, "{n}");
        for secret in [
            "Hostile-Fake-Pass-3",
            "b0a7c0ffee0000hostile1111fake2222",
            "HostileMysqlPw5",
            "HostileGapPw14",
        ] {
            assert!(!text.contains(secret), "{secret}");
        }
        for kept in [
            "login user=chat password=<redacted:credential>",
            "CrashLoopBackOff",
            "vault-chat-6f8b9c7d5-q7x2m",
            "7d0c1a2e-4444-4a1a-8a1a-00000000a004",
        ] {
            assert!(text.contains(kept), "{kept}");
        }
        // Redacting again finds nothing more.
        assert_eq!(Redactor::default().diagnosis(&mut d), 0);
    }

    #[test]
    fn logs_are_redacted_whole_so_a_key_block_across_lines_goes() {
        let (mut snapshot, _) = hostile();
        let tail_key = "MIIEhostileFAKEkeyTAILforMDIAGtests9876543210";
        assert!(snapshot.logs[0].text.contains(tail_key));
        let n = Redactor::default().logs(&mut snapshot.logs);
        assert!(n > 0);
        assert!(!snapshot.logs.iter().any(|l| l.text.contains(tail_key)));
        // Line by line, the body of the block is not a shape at all.
        let mut line = tail_key.to_string();
        assert_eq!(Redactor::default().line(&mut line), 0);
    }
}
