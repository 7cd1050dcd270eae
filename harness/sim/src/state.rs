//! The simulated state of one Pod on a fake node, and what a kubelet would
//! report from it: the Pod status and the container logs.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, ContainerStateTerminated, ContainerStatus, Pod, PodCondition,
};
use serde_json::{Value, json};

use super::behavior::Behavior;
use mdiag_harness_util::{fmt_time, now as now_ts, rand_hex, stable_hex, trunc_secs};

/// Log lines kept per container run.
const MAX_LINES: usize = 2000;

#[derive(Clone, Debug)]
pub struct LogLine {
    pub ts: Timestamp,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Finished {
    pub at: Timestamp,
    pub exit_code: i32,
    pub reason: String,
}

/// One start of a container (an "attempt" in kubelet terms).
#[derive(Clone, Debug)]
pub struct Run {
    pub id: String,
    pub started_at: Timestamp,
    pub finished: Option<Finished>,
    pub lines: Vec<LogLine>,
}

impl Run {
    fn container_id(&self) -> String {
        format!("containerd://{}", self.id)
    }

    fn terminated_json(&self) -> Value {
        let f = self.finished.as_ref().expect("finished run");
        json!({
            "containerID": self.container_id(),
            "exitCode": f.exit_code,
            "reason": f.reason,
            "startedAt": fmt_time(self.started_at),
            "finishedAt": fmt_time(f.at),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub reason: String,
    pub message: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ContainerSim {
    pub name: String,
    pub image: String,
    pub behavior: Behavior,
    pub init: bool,
    /// Set while the container waits (ContainerCreating, CrashLoopBackOff,
    /// ErrImagePull ...). When None the latest run tells the state.
    pub waiting: Option<Waiting>,
    /// The latest runs, oldest first (at most the last two are kept).
    pub runs: Vec<Run>,
    /// How many runs there have been.
    pub attempts: i32,
    pub ready: bool,
    pub image_pulled: bool,
    /// Picked up running from an earlier kubelet (sim) run: keep the run.
    pub adopted: bool,
    pub spec: Container,
}

impl ContainerSim {
    pub fn new(spec: &Container, behavior: Behavior, init: bool) -> Self {
        ContainerSim {
            name: spec.name.clone(),
            image: spec.image.clone().unwrap_or_default(),
            behavior,
            init,
            waiting: Some(Waiting {
                reason: "ContainerCreating".to_owned(),
                message: None,
            }),
            runs: Vec::new(),
            attempts: 0,
            ready: false,
            image_pulled: false,
            adopted: false,
            spec: spec.clone(),
        }
    }

    /// Takes over what an earlier run of the simulator reported for this
    /// container: its runs, restart count, waiting state and readiness, so
    /// that a restart of the simulator does not restart containers.
    pub fn adopt(&mut self, st: &ContainerStatus) {
        let strip = |id: &Option<String>| {
            id.as_deref()
                .map(|s| s.rsplit("://").next().unwrap_or(s).to_owned())
                .filter(|s| !s.is_empty())
        };
        let finished_run = |t: &ContainerStateTerminated| -> Option<Run> {
            Some(Run {
                id: strip(&t.container_id)?,
                started_at: t.started_at.as_ref().map(|t| t.0)?,
                finished: Some(Finished {
                    at: t.finished_at.as_ref().map(|t| t.0)?,
                    exit_code: t.exit_code,
                    reason: t.reason.clone().unwrap_or_else(|| "Error".to_owned()),
                }),
                lines: Vec::new(),
            })
        };
        let state = st.state.clone().unwrap_or_default();
        let last = st
            .last_state
            .as_ref()
            .and_then(|l| l.terminated.as_ref())
            .and_then(finished_run);
        let mut runs: Vec<Run> = Vec::new();
        if let Some(r) = &state.running {
            if let Some(l) = last {
                runs.push(l);
            }
            let Some(id) = strip(&st.container_id) else {
                return;
            };
            runs.push(Run {
                id,
                started_at: r.started_at.as_ref().map(|t| t.0).unwrap_or_else(now_ts),
                finished: None,
                lines: Vec::new(),
            });
            self.waiting = None;
            self.ready = st.ready;
            self.adopted = true;
        } else if let Some(t) = &state.terminated {
            if let Some(l) = last {
                runs.push(l);
            }
            let Some(r) = finished_run(t) else { return };
            runs.push(r);
            self.waiting = None;
        } else if let Some(l) = last {
            runs.push(l);
            self.waiting = state.waiting.as_ref().map(|w| Waiting {
                reason: w
                    .reason
                    .clone()
                    .unwrap_or_else(|| "ContainerCreating".to_owned()),
                message: w.message.clone(),
            });
        } else {
            return;
        }
        self.runs = runs;
        self.attempts = st.restart_count + 1;
        self.image_pulled = !st.image_id.is_empty();
    }

    pub fn current(&self) -> Option<&Run> {
        self.runs.last()
    }

    pub fn current_mut(&mut self) -> Option<&mut Run> {
        self.runs.last_mut()
    }

    pub fn running(&self) -> bool {
        self.waiting.is_none() && self.current().is_some_and(|r| r.finished.is_none())
    }

    /// Starts a new run (the container was created and started).
    pub fn start_run(&mut self, at: Timestamp) {
        self.waiting = None;
        self.ready = false;
        self.attempts += 1;
        self.runs.push(Run {
            id: rand_hex(64),
            started_at: at,
            finished: None,
            lines: Vec::new(),
        });
        if self.runs.len() > 2 {
            self.runs.remove(0);
        }
    }

    pub fn finish_run(&mut self, at: Timestamp, exit_code: i32, reason: &str) {
        self.ready = false;
        if let Some(r) = self.current_mut()
            && r.finished.is_none()
        {
            r.finished = Some(Finished {
                at,
                exit_code,
                reason: reason.to_owned(),
            });
        }
    }

    pub fn log(&mut self, at: Timestamp, text: impl Into<String>) {
        if let Some(r) = self.current_mut() {
            r.lines.push(LogLine {
                ts: at,
                text: text.into(),
            });
            if r.lines.len() > MAX_LINES {
                let cut = r.lines.len() - MAX_LINES;
                r.lines.drain(..cut);
            }
        }
    }

    /// The run shown as `lastState.terminated`.
    fn last_terminated(&self) -> Option<&Run> {
        let n = self.runs.len();
        let prev = if self.waiting.is_some() {
            self.runs.last()
        } else if n >= 2 {
            self.runs.get(n - 2)
        } else {
            None
        };
        prev.filter(|r| r.finished.is_some())
    }

    pub fn completed_ok(&self) -> bool {
        self.waiting.is_none()
            && self
                .current()
                .and_then(|r| r.finished.as_ref())
                .is_some_and(|f| f.exit_code == 0)
    }

    pub fn image_id(&self) -> String {
        let repo = match self.image.split('@').next() {
            Some(s) => {
                let last_slash = s.rfind('/').map(|i| i + 1).unwrap_or(0);
                match s[last_slash..].find(':') {
                    Some(c) => &s[..last_slash + c],
                    None => s,
                }
            }
            None => self.image.as_str(),
        };
        format!("{repo}@sha256:{}", stable_hex(&self.image, 64))
    }

    pub fn status_json(&self) -> Value {
        let state = if let Some(w) = &self.waiting {
            let mut v = json!({"reason": w.reason});
            if let Some(m) = &w.message {
                v["message"] = json!(m);
            }
            json!({ "waiting": v })
        } else {
            match self.current() {
                Some(r) if r.finished.is_none() => {
                    json!({"running": {"startedAt": fmt_time(r.started_at)}})
                }
                Some(r) => json!({"terminated": r.terminated_json()}),
                None => json!({"waiting": {"reason": "ContainerCreating"}}),
            }
        };
        let last_state = match self.last_terminated() {
            Some(r) => json!({"terminated": r.terminated_json()}),
            None => json!({}),
        };
        let mut v = json!({
            "name": self.name,
            "image": self.image,
            // The runtime's image of a container that exists: empty until
            // one was created (ErrImagePull, CreateContainerConfigError).
            "imageID": if self.runs.is_empty() { String::new() } else { self.image_id() },
            "ready": self.ready && self.running(),
            "restartCount": (self.attempts - 1).max(0),
            "started": self.running(),
            "state": state,
            "lastState": last_state,
        });
        if let Some(r) = self.current() {
            v["containerID"] = json!(r.container_id());
        }
        if let Some(res) = &self.spec.resources
            && (res.limits.as_ref().is_some_and(|l| !l.is_empty())
                || res.requests.as_ref().is_some_and(|l| !l.is_empty()))
        {
            v["resources"] = serde_json::to_value(res).unwrap_or(Value::Null);
        }
        if let Some(mounts) = &self.spec.volume_mounts
            && !mounts.is_empty()
        {
            let m: Vec<Value> = mounts
                .iter()
                .map(|m| {
                    let mut v = json!({"name": m.name, "mountPath": m.mount_path});
                    if m.read_only == Some(true) {
                        v["readOnly"] = json!(true);
                        v["recursiveReadOnly"] = json!("Disabled");
                    }
                    v
                })
                .collect();
            v["volumeMounts"] = json!(m);
        }
        v
    }

    /// The lines `GET /containerLogs` returns, or the kubelet's error text
    /// (validateContainerLogStatus).
    pub fn logs(&self, pod: &str, previous: bool) -> Result<&[LogLine], String> {
        let name = &self.name;
        if previous {
            return match self.last_terminated() {
                Some(r) => Ok(&r.lines),
                None => Err(format!(
                    "previous terminated container \"{name}\" in pod \"{pod}\" not found"
                )),
            };
        }
        if self.waiting.is_none()
            && let Some(r) = self.current()
        {
            return Ok(&r.lines);
        }
        if let Some(r) = self.last_terminated() {
            return Ok(&r.lines);
        }
        let reason = self
            .waiting
            .as_ref()
            .map(|w| w.reason.as_str())
            .unwrap_or("ContainerCreating");
        Err(match reason {
            "ErrImagePull" => {
                format!(
                    "container \"{name}\" in pod \"{pod}\" is waiting to start: image can't be pulled"
                )
            }
            "ImagePullBackOff" => format!(
                "container \"{name}\" in pod \"{pod}\" is waiting to start: trying and failing to pull image"
            ),
            r => format!("container \"{name}\" in pod \"{pod}\" is waiting to start: {r}"),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CondState {
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub last_transition: Timestamp,
}

/// The conditions the kubelet owns, in the order it writes them.
pub const KUBELET_CONDITIONS: [&str; 4] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
];

#[derive(Clone, Debug)]
pub struct PodSim {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub generation: i64,
    pub node: String,
    pub host_ip: String,
    pub pod_ip: Option<String>,
    pub start_time: Timestamp,
    pub qos: String,
    pub restart_policy: String,
    pub sandbox_ready: bool,
    pub init_containers: Vec<ContainerSim>,
    pub containers: Vec<ContainerSim>,
    /// Set once the Pod was killed for deletion: Succeeded or Failed.
    pub terminal: Option<String>,
    /// The conditions as last written (to keep lastTransitionTime).
    pub conds: BTreeMap<String, CondState>,
}

impl PodSim {
    pub fn new(pod: &Pod, node: &str, host_ip: &str, at: Timestamp) -> Self {
        let meta = &pod.metadata;
        let spec = pod.spec.clone().unwrap_or_default();
        let annotations = meta.annotations.clone().unwrap_or_default();
        let has_init = spec.init_containers.as_ref().is_some_and(|v| !v.is_empty());
        let containers = spec
            .containers
            .iter()
            .map(|c| {
                let mut cs =
                    ContainerSim::new(c, Behavior::for_container(&annotations, &c.name), false);
                if has_init {
                    cs.waiting = Some(Waiting {
                        reason: "PodInitializing".to_owned(),
                        message: None,
                    });
                }
                cs
            })
            .collect();
        let init_containers = spec
            .init_containers
            .iter()
            .flatten()
            .map(|c| ContainerSim::new(c, Behavior::default(), true))
            .collect();
        let status = pod.status.clone().unwrap_or_default();
        let start_time = status.start_time.map(|t| t.0).unwrap_or(trunc_secs(at));
        let mut conds = BTreeMap::new();
        for c in status.conditions.iter().flatten() {
            if KUBELET_CONDITIONS.contains(&c.type_.as_str()) {
                conds.insert(c.type_.clone(), cond_state(c, at));
            }
        }
        let mut containers: Vec<ContainerSim> = containers;
        let mut init_containers: Vec<ContainerSim> = init_containers;
        for (list, statuses) in [
            (&mut containers, status.container_statuses.as_ref()),
            (
                &mut init_containers,
                status.init_container_statuses.as_ref(),
            ),
        ] {
            for cs in list.iter_mut() {
                if let Some(st) = statuses.into_iter().flatten().find(|s| s.name == cs.name) {
                    cs.adopt(st);
                }
            }
        }
        let sandbox_ready = status.pod_ip.is_some()
            && status
                .conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "PodReadyToStartContainers" && c.status == "True");
        PodSim {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
            generation: meta.generation.unwrap_or(1),
            node: node.to_owned(),
            host_ip: host_ip.to_owned(),
            pod_ip: None,
            start_time,
            qos: status.qos_class.clone().unwrap_or_else(|| qos_class(pod)),
            restart_policy: spec.restart_policy.unwrap_or_else(|| "Always".to_owned()),
            sandbox_ready,
            init_containers,
            containers,
            terminal: None,
            conds,
        }
    }

    /// Forgets the conditions as written, taking them from `pod` instead
    /// (after someone else, e.g. the node lifecycle controller, changed them).
    pub fn reset_conditions_from(&mut self, pod: &Pod, at: Timestamp) {
        self.conds.clear();
        if let Some(st) = &pod.status {
            for c in st.conditions.iter().flatten() {
                if KUBELET_CONDITIONS.contains(&c.type_.as_str()) {
                    self.conds.insert(c.type_.clone(), cond_state(c, at));
                }
            }
        }
    }

    pub fn container(&self, name: &str) -> Option<&ContainerSim> {
        self.containers
            .iter()
            .chain(self.init_containers.iter())
            .find(|c| c.name == name)
    }

    pub fn initialized(&self) -> bool {
        self.init_containers.iter().all(|c| c.completed_ok())
    }

    pub fn phase(&self) -> String {
        if let Some(t) = &self.terminal {
            return t.clone();
        }
        if !self.initialized() {
            return "Pending".to_owned();
        }
        if self.containers.iter().any(|c| c.attempts == 0) {
            return "Pending".to_owned();
        }
        if self.restart_policy != "Always"
            && self
                .containers
                .iter()
                .all(|c| c.waiting.is_none() && c.current().is_some_and(|r| r.finished.is_some()))
        {
            return if self.containers.iter().all(|c| c.completed_ok()) {
                "Succeeded".to_owned()
            } else {
                "Failed".to_owned()
            };
        }
        "Running".to_owned()
    }

    fn set_cond(
        &mut self,
        type_: &str,
        ok: bool,
        reason: Option<&str>,
        message: Option<String>,
        at: Timestamp,
    ) {
        let status = if ok { "True" } else { "False" }.to_owned();
        let last_transition = match self.conds.get(type_) {
            Some(c) if c.status == status => c.last_transition,
            _ => trunc_secs(at),
        };
        self.conds.insert(
            type_.to_owned(),
            CondState {
                status,
                reason: if ok { None } else { reason.map(str::to_owned) },
                message: if ok { None } else { message },
                last_transition,
            },
        );
    }

    /// Recomputes the kubelet's conditions from the containers.
    pub fn update_conditions(&mut self, at: Timestamp) {
        let sandbox = self.sandbox_ready && self.terminal.is_none();
        self.set_cond("PodReadyToStartContainers", sandbox, None, None, at);
        let incomplete: Vec<String> = self
            .init_containers
            .iter()
            .filter(|c| !c.completed_ok())
            .map(|c| c.name.clone())
            .collect();
        self.set_cond(
            "Initialized",
            incomplete.is_empty(),
            Some("ContainersNotInitialized"),
            Some(format!(
                "containers with incomplete status: [{}]",
                incomplete.join(" ")
            )),
            at,
        );
        let unready: Vec<String> = self
            .containers
            .iter()
            .filter(|c| !(c.ready && c.running()))
            .map(|c| c.name.clone())
            .collect();
        let (reason, message) = if self.terminal.is_some() || self.phase() == "Succeeded" {
            ("PodCompleted", None)
        } else {
            (
                "ContainersNotReady",
                Some(format!(
                    "containers with unready status: [{}]",
                    unready.join(" ")
                )),
            )
        };
        let ready = unready.is_empty() && self.terminal.is_none();
        self.set_cond("ContainersReady", ready, Some(reason), message.clone(), at);
        self.set_cond("Ready", ready, Some(reason), message, at);
    }

    /// The `status` a kubelet would write now. Conditions the kubelet does
    /// not own (PodScheduled, DisruptionTarget ...) are kept from `live`.
    pub fn status_json(&mut self, live: Option<&Pod>, at: Timestamp) -> Value {
        self.update_conditions(at);
        let mut conditions: Vec<Value> = KUBELET_CONDITIONS
            .iter()
            .filter_map(|t| {
                let c = self.conds.get(*t)?;
                let mut v = json!({
                    "type": t,
                    "status": c.status,
                    "lastProbeTime": null,
                    "lastTransitionTime": fmt_time(c.last_transition),
                    "observedGeneration": self.generation,
                });
                if let Some(r) = &c.reason {
                    v["reason"] = json!(r);
                }
                if let Some(m) = &c.message {
                    v["message"] = json!(m);
                }
                Some(v)
            })
            .collect();
        if let Some(st) = live.and_then(|p| p.status.as_ref()) {
            for c in st.conditions.iter().flatten() {
                if !KUBELET_CONDITIONS.contains(&c.type_.as_str()) {
                    conditions.push(serde_json::to_value(c).unwrap_or(Value::Null));
                }
            }
        }
        let mut st = json!({
            "phase": self.phase(),
            "conditions": conditions,
            "hostIP": self.host_ip,
            "hostIPs": [{"ip": self.host_ip}],
            "startTime": fmt_time(self.start_time),
            "qosClass": self.qos,
            "observedGeneration": self.generation,
            "containerStatuses": self.containers.iter().map(ContainerSim::status_json).collect::<Vec<_>>(),
        });
        if !self.init_containers.is_empty() {
            st["initContainerStatuses"] = json!(
                self.init_containers
                    .iter()
                    .map(ContainerSim::status_json)
                    .collect::<Vec<_>>()
            );
        }
        match &self.pod_ip {
            Some(ip) => {
                st["podIP"] = json!(ip);
                st["podIPs"] = json!([{ "ip": ip }]);
            }
            None => {
                st["podIP"] = Value::Null;
                st["podIPs"] = Value::Null;
            }
        }
        json!({ "status": st })
    }
}

fn cond_state(c: &PodCondition, at: Timestamp) -> CondState {
    CondState {
        status: c.status.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
        last_transition: c
            .last_transition_time
            .as_ref()
            .map(|t| t.0)
            .unwrap_or(trunc_secs(at)),
    }
}

/// The Pod's QoS class, computed as Kubernetes does for cpu and memory.
pub fn qos_class(pod: &Pod) -> String {
    let Some(spec) = &pod.spec else {
        return "BestEffort".to_owned();
    };
    let all: Vec<&Container> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &all {
        let res = c.resources.clone().unwrap_or_default();
        let req = res.requests.unwrap_or_default();
        let lim = res.limits.unwrap_or_default();
        let names: BTreeSet<&str> = ["cpu", "memory"].into_iter().collect();
        for n in &names {
            let r = req.get(*n);
            let l = lim.get(*n);
            if r.is_some() || l.is_some() {
                any = true;
            }
            match (r, l) {
                (_, None) => guaranteed = false,
                (Some(r), Some(l)) if r != l => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort".to_owned()
    } else if guaranteed {
        "Guaranteed".to_owned()
    } else {
        "Burstable".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "generation": 1},
            "spec": {"containers": [{"name": "server", "image": "registry.example.com/a/b:v1",
                "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}
        }))
        .unwrap()
    }

    #[test]
    fn crash_loop_states() {
        let t0: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let mut p = PodSim::new(&pod(), "kind-worker", "127.0.0.1", t0);
        assert_eq!(p.qos, "Burstable");
        assert_eq!(p.phase(), "Pending");
        let c = &mut p.containers[0];
        assert_eq!(
            c.logs("p", false).unwrap_err(),
            "container \"server\" in pod \"p\" is waiting to start: ContainerCreating"
        );
        c.start_run(t0);
        c.log(t0, "first run");
        let t1: Timestamp = "2026-11-28T10:00:02Z".parse().unwrap();
        c.finish_run(t1, 1, "Error");
        assert_eq!(
            c.logs("p", true).unwrap_err(),
            "previous terminated container \"server\" in pod \"p\" not found"
        );
        c.waiting = Some(Waiting {
            reason: "CrashLoopBackOff".into(),
            message: Some("back-off 10s".into()),
        });
        // In back-off the current logs are the last run's; so are the previous ones.
        assert_eq!(c.logs("p", false).unwrap()[0].text, "first run");
        assert_eq!(c.logs("p", true).unwrap()[0].text, "first run");
        let s = c.status_json();
        assert_eq!(s["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(s["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(s["restartCount"], 0);
        c.start_run(t1);
        c.log(t1, "second run");
        let s = c.status_json();
        assert_eq!(s["restartCount"], 1);
        assert!(s["state"]["running"].is_object());
        assert_eq!(s["lastState"]["terminated"]["reason"], "Error");
        assert_eq!(c.logs("p", false).unwrap()[0].text, "second run");
        assert_eq!(c.logs("p", true).unwrap()[0].text, "first run");
        assert_eq!(p.phase(), "Running");
        let st = p.status_json(None, t1);
        assert_eq!(st["status"]["conditions"][2]["type"], "Ready");
        assert_eq!(st["status"]["conditions"][2]["status"], "False");
        assert_eq!(
            st["status"]["conditions"][2]["message"],
            "containers with unready status: [server]"
        );
    }

    /// The states a crash loop shows, in order, as a real kubelet 1.35
    /// wrote them (harness/SIM.md): running; terminated with the run
    /// before as lastState; waiting CrashLoopBackOff with the crashed run
    /// as lastState; running again.
    #[test]
    fn crash_loop_shows_terminated_before_back_off() {
        let t = |s: &str| -> Timestamp { format!("2026-12-01T14:0{s}Z").parse().unwrap() };
        let mut p = PodSim::new(&pod(), "kind-worker", "127.0.0.1", t("4:24"));
        let c = &mut p.containers[0];
        assert_eq!(c.status_json()["imageID"], "", "no container yet");
        for (start, end) in [("4:24", "4:26"), ("4:27", "4:29")] {
            c.start_run(t(start));
            c.log(t(start), format!("run at {start}"));
            c.finish_run(t(end), 1, "Error");
        }
        // The sync after the second exit: terminated, restartCount 1.
        let s = c.status_json();
        assert_eq!(s["state"]["terminated"]["reason"], "Error");
        assert_eq!(
            s["state"]["terminated"]["startedAt"],
            "2026-12-01T14:04:27Z"
        );
        assert_eq!(
            s["lastState"]["terminated"]["startedAt"],
            "2026-12-01T14:04:24Z"
        );
        assert_eq!(s["restartCount"], 1);
        assert_eq!(s["started"], false);
        assert_eq!(s["ready"], false);
        assert!(s["imageID"].as_str().unwrap().contains("@sha256:"));
        assert_eq!(s["containerID"], s["state"]["terminated"]["containerID"]);
        // Logs resolve as the kubelet's do: state, then lastState.
        assert_eq!(c.logs("p", false).unwrap()[0].text, "run at 4:27");
        assert_eq!(c.logs("p", true).unwrap()[0].text, "run at 4:24");
        // The next sync: waiting, the crashed run is lastState now.
        c.waiting = Some(Waiting {
            reason: "CrashLoopBackOff".into(),
            message: Some("back-off 10s restarting failed container=server pod=p_ns(u1)".into()),
        });
        let s = c.status_json();
        assert_eq!(s["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert!(s["state"].get("terminated").is_none());
        assert_eq!(
            s["lastState"]["terminated"]["startedAt"],
            "2026-12-01T14:04:27Z"
        );
        assert_eq!(s["restartCount"], 1);
        assert_eq!(c.logs("p", true).unwrap()[0].text, "run at 4:27");
        // Restarted: running, restartCount 2.
        c.start_run(t("4:40"));
        let s = c.status_json();
        assert!(s["state"]["running"].is_object());
        assert_eq!(
            s["lastState"]["terminated"]["startedAt"],
            "2026-12-01T14:04:27Z"
        );
        assert_eq!(s["restartCount"], 2);
        assert_eq!(p.phase(), "Running");
    }

    #[test]
    fn no_image_id_before_a_container_exists() {
        let t0: Timestamp = "2026-12-01T14:15:33Z".parse().unwrap();
        let mut p = PodSim::new(&pod(), "kind-worker", "127.0.0.1", t0);
        let c = &mut p.containers[0];
        // The image is on the node, the container cannot be made.
        c.image_pulled = true;
        c.waiting = Some(Waiting {
            reason: "CreateContainerConfigError".into(),
            message: Some("couldn't find key model-path in ConfigMap ns/model-config".into()),
        });
        let s = c.status_json();
        assert_eq!(s["imageID"], "");
        assert_eq!(s["lastState"], json!({}));
        assert_eq!(s["started"], false);
    }

    #[test]
    fn transition_times_kept() {
        let t0: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-11-28T10:00:05Z".parse().unwrap();
        let t2: Timestamp = "2026-11-28T10:00:09Z".parse().unwrap();
        let mut p = PodSim::new(&pod(), "kind-worker", "127.0.0.1", t0);
        p.update_conditions(t0);
        p.containers[0].start_run(t1);
        p.containers[0].ready = true;
        p.update_conditions(t1);
        p.update_conditions(t2);
        assert_eq!(p.conds["Ready"].status, "True");
        assert_eq!(p.conds["Ready"].last_transition, t1);
        assert_eq!(p.conds["Initialized"].last_transition, t0);
    }

    #[test]
    fn image_ids() {
        let c = ContainerSim::new(
            &serde_json::from_value(
                json!({"name": "a", "image": "registry.example.com:5000/m/x:v1"}),
            )
            .unwrap(),
            Behavior::default(),
            false,
        );
        assert!(
            c.image_id()
                .starts_with("registry.example.com:5000/m/x@sha256:")
        );
    }
}
