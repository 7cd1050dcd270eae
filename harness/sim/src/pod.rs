//! One Pod bound to a fake node: runs its containers' behaviours, writes the
//! Pod status and the kubelet's Events, and finishes a deletion.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Probe};
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

use super::behavior::{Behavior, PullError};
use super::logtext::AppInfo;
use super::messages::{self, INITIAL_BACKOFF, MAX_BACKOFF};
use super::node::NodeCtx;
use super::state::{PodSim, Waiting};
use mdiag_harness_util::events::ObjRef;
use mdiag_harness_util::{is_not_found, now, scaled, stable_hex};

/// A running Pod worker.
pub struct PodHandle {
    pub live: watch::Sender<Pod>,
    pub task: JoinHandle<()>,
    pub state: Arc<Mutex<PodSim>>,
}

impl Drop for PodHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts simulating `pod` on `node`.
pub fn spawn(node: Arc<NodeCtx>, pod: Pod) -> PodHandle {
    let mut sim = PodSim::new(&pod, &node.name, &node.host_ip, now());
    // Keep the address of a Pod picked up again (after a restart of the sim).
    let host_network = pod
        .spec
        .as_ref()
        .and_then(|s| s.host_network)
        .unwrap_or(false);
    if host_network {
        sim.pod_ip = Some(node.host_ip.clone());
    } else if let Some(ip) = pod.status.as_ref().and_then(|s| s.pod_ip.clone())
        && node.reserve_ip(&ip)
    {
        sim.pod_ip = Some(ip);
    }
    let state = Arc::new(Mutex::new(sim));
    let (live_tx, live_rx) = watch::channel(pod.clone());
    let apps = {
        let app_label = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app.kubernetes.io/name").cloned());
        let prober = format!("10.244.{}.1", node.index);
        let spec = pod.spec.clone().unwrap_or_default();
        spec.containers
            .iter()
            .map(|c| AppInfo::new(c, app_label.as_deref(), &prober))
            .collect()
    };
    let worker = Arc::new(Worker {
        node: node.clone(),
        state: state.clone(),
        live: live_rx,
        dirty: Arc::new(Notify::new()),
        pod_ref: ObjRef {
            api_version: "v1".to_owned(),
            kind: "Pod".to_owned(),
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            resource_version: pod.metadata.resource_version.clone().unwrap_or_default(),
            field_path: None,
        },
        apps,
        host_network,
    });
    let task = tokio::spawn(worker.run());
    PodHandle {
        live: live_tx,
        task,
        state,
    }
}

struct Worker {
    node: Arc<NodeCtx>,
    state: Arc<Mutex<PodSim>>,
    live: watch::Receiver<Pod>,
    dirty: Arc<Notify>,
    pod_ref: ObjRef,
    apps: Vec<AppInfo>,
    host_network: bool,
}

/// What the server in a container answers its readiness probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Ok,
    /// An HTTP status other than 2xx/3xx (503 while loading).
    Status(u16),
    /// Nothing listens: before the server opens its port, or after it exited.
    Refused,
}

/// Which container: regular (false) or init (true), and its index.
#[derive(Clone, Copy)]
struct Cid {
    init: bool,
    i: usize,
}

impl Worker {
    fn resync(&self) -> Duration {
        scaled(
            Duration::from_secs(10),
            self.node.opts.backoff_scale,
            Duration::from_secs(1),
        )
    }

    fn backoff_wait(&self, d: Duration) -> Duration {
        scaled(d, self.node.opts.backoff_scale, Duration::from_millis(200))
    }

    /// Changes the state and asks for a status write.
    fn update<R>(&self, f: impl FnOnce(&mut PodSim) -> R) -> R {
        let r = {
            let mut s = self.state.lock().expect("pod state");
            f(&mut s)
        };
        self.dirty.notify_one();
        r
    }

    fn cupdate<R>(&self, c: Cid, f: impl FnOnce(&mut super::state::ContainerSim) -> R) -> R {
        self.update(|s| {
            let cs = if c.init {
                &mut s.init_containers[c.i]
            } else {
                &mut s.containers[c.i]
            };
            f(cs)
        })
    }

    fn read<R>(&self, f: impl FnOnce(&PodSim) -> R) -> R {
        let s = self.state.lock().expect("pod state");
        f(&s)
    }

    fn cname(&self, c: Cid) -> String {
        self.read(|s| {
            if c.init {
                s.init_containers[c.i].name.clone()
            } else {
                s.containers[c.i].name.clone()
            }
        })
    }

    fn image(&self, c: Cid) -> String {
        self.read(|s| {
            if c.init {
                s.init_containers[c.i].image.clone()
            } else {
                s.containers[c.i].image.clone()
            }
        })
    }

    fn cref(&self, c: Cid) -> ObjRef {
        let name = self.cname(c);
        let mut r = if c.init {
            self.pod_ref.init_container(&name)
        } else {
            self.pod_ref.container(&name)
        };
        r.resource_version = self
            .live
            .borrow()
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        r
    }

    /// Appends log lines (no status change, so no status write).
    fn log(&self, c: Cid, lines: impl IntoIterator<Item = String>) {
        let mut s = self.state.lock().expect("pod state");
        let cs = if c.init {
            &mut s.init_containers[c.i]
        } else {
            &mut s.containers[c.i]
        };
        for l in lines {
            cs.log(now(), l);
        }
    }

    async fn event(&self, c: Option<Cid>, type_: &str, reason: &str, message: &str) {
        let r = match c {
            Some(c) => self.cref(c),
            None => self.pod_ref.clone(),
        };
        self.node.recorder.core(&r, type_, reason, message).await;
    }

    fn pod_desc(&self) -> String {
        messages::pod_desc(
            &self.pod_ref.name,
            &self.pod_ref.namespace,
            &self.pod_ref.uid,
        )
    }

    async fn run(self: Arc<Self>) {
        let writer = tokio::spawn(self.clone().writer());
        self.dirty.notify_one();
        let mut live = self.live.clone();
        let deleted = async move {
            let _ = live
                .wait_for(|p| p.metadata.deletion_timestamp.is_some())
                .await;
        };
        tokio::pin!(deleted);
        let already_deleting = self.live.borrow().metadata.deletion_timestamp.is_some();
        if !already_deleting {
            tokio::select! {
                _ = self.lifecycle() => { (&mut deleted).await; }
                _ = &mut deleted => {}
            }
        }
        self.terminate().await;
        writer.abort();
    }

    // ------------------------------------------------------------ status

    async fn writer(self: Arc<Self>) {
        let mut stopped = self.node.stopped.clone();
        let mut last: Option<serde_json::Value> = None;
        loop {
            tokio::select! {
                _ = self.dirty.notified() => {}
                r = stopped.changed() => {
                    if r.is_err() {
                        return;
                    }
                    if *stopped.borrow_and_update() {
                        continue;
                    }
                    // Back from a stop: whatever the control plane wrote
                    // meanwhile is the status to transition from.
                    let live = self.live.borrow().clone();
                    self.update(|s| s.reset_conditions_from(&live, now()));
                    last = None;
                }
            }
            if *stopped.borrow() {
                continue;
            }
            sleep(Duration::from_millis(30)).await;
            if let Err(e) = self.write_status(&mut last).await {
                if is_not_found(&e) {
                    return;
                }
                eprintln!(
                    "mdiag-sim: {}: writing status of {}/{}: {e}",
                    self.node.name, self.pod_ref.namespace, self.pod_ref.name
                );
                sleep(Duration::from_secs(1)).await;
                self.dirty.notify_one();
            }
        }
    }

    /// Writes the status unless it is what was last written.
    async fn write_status(&self, last: &mut Option<serde_json::Value>) -> Result<(), kube::Error> {
        let patch = {
            let live = self.live.borrow().clone();
            let mut s = self.state.lock().expect("pod state");
            s.status_json(Some(&live), now())
        };
        if last.as_ref() == Some(&patch) {
            return Ok(());
        }
        let api: Api<Pod> = Api::namespaced(self.node.client.clone(), &self.pod_ref.namespace);
        api.patch_status(
            &self.pod_ref.name,
            &PatchParams {
                field_manager: Some("kubelet".to_owned()),
                ..Default::default()
            },
            &Patch::Merge(&patch),
        )
        .await?;
        *last = Some(patch);
        Ok(())
    }

    // ------------------------------------------------------------ lifecycle

    async fn lifecycle(&self) {
        let (n_init, behaviors) = self.read(|s| {
            (
                s.init_containers.len(),
                s.containers
                    .iter()
                    .map(|c| c.behavior.clone())
                    .collect::<Vec<_>>(),
            )
        });
        if behaviors.contains(&Behavior::StuckCreating) {
            return self.stuck_creating().await;
        }
        self.backfill_logs();
        // The sandbox: network namespace and address.
        let had_sandbox = self.read(|s| s.sandbox_ready && s.pod_ip.is_some());
        if !had_sandbox {
            sleep(Duration::from_millis(200)).await;
        }
        // A kubelet writes the sandbox's address at the pod sync after the
        // one that made it; that sync pulls the images, so a pull that
        // hangs (pull-timeout) keeps the Pod without IP and
        // PodReadyToStartContainers False until the pull ends.
        let hangs = behaviors.contains(&Behavior::PullTimeout)
            && !self.read(|s| s.sandbox_ready && s.pod_ip.is_some());
        if !hangs {
            self.update(|s| self.sandbox_up(s));
        }
        for i in 0..n_init {
            if self.read(|s| s.init_containers[i].completed_ok()) {
                continue;
            }
            self.run_init(Cid { init: true, i }).await;
        }
        let all = (0..behaviors.len()).map(|i| self.run_container(Cid { init: false, i }));
        futures::future::join_all(all).await;
    }

    /// Marks the sandbox ready with its address (the one it had, or a new one).
    fn sandbox_up(&self, s: &mut PodSim) {
        if s.sandbox_ready && s.pod_ip.is_some() {
            return;
        }
        s.sandbox_ready = true;
        if self.host_network {
            s.pod_ip = Some(self.node.host_ip.clone());
        } else if s.pod_ip.is_none() {
            s.pod_ip = self.node.allocate_ip();
        }
    }

    /// Runs taken over from an earlier simulator have no log lines (a
    /// kubelet would still have its log files): write what they printed.
    fn backfill_logs(&self) {
        self.update(|s| {
            for (i, cs) in s.containers.iter_mut().enumerate() {
                let app = &self.apps[i];
                let ready = cs.ready;
                for r in cs.runs.iter_mut().filter(|r| r.lines.is_empty()) {
                    let mut lines = app.startup();
                    match &r.finished {
                        Some(f) if f.reason == "OOMKilled" => lines.extend(app.oom_loading()),
                        Some(f) if matches!(cs.behavior, Behavior::CrashLoop { .. }) => {
                            lines.extend(app.crash(f.exit_code))
                        }
                        Some(_) => {
                            lines.extend(app.ready());
                            lines.extend(app.shutdown());
                        }
                        None if ready => lines.extend(app.ready()),
                        None => {}
                    }
                    let end = r.finished.as_ref().map(|f| f.at).unwrap_or(r.started_at);
                    let n = lines.len();
                    for (k, text) in lines.into_iter().enumerate() {
                        let ts = if k + 1 == n {
                            end.max(r.started_at)
                        } else {
                            r.started_at
                        };
                        r.lines.push(super::state::LogLine { ts, text });
                    }
                }
            }
        });
    }

    /// The volume that cannot be mounted: the Pod's first configMap volume
    /// (what a missing ConfigMap does on a real node), else `model-cache`.
    fn unmountable_volume(&self) -> (String, String) {
        let live = self.live.borrow();
        live.spec
            .as_ref()
            .and_then(|s| s.volumes.as_ref())
            .and_then(|vs| {
                vs.iter().find_map(|v| {
                    let cm = v.config_map.as_ref()?;
                    Some((v.name.clone(), cm.name.clone()))
                })
            })
            .unwrap_or_else(|| ("model-cache".to_owned(), "model-cache".to_owned()))
    }

    /// FailedMount, retried as the kubelet's volume manager does: 500 ms
    /// doubling up to 2m2s (scaled like the back-offs).
    async fn stuck_creating(&self) {
        let (volume, config_map) = self.unmountable_volume();
        let msg = messages::configmap_mount_failed(&volume, &config_map);
        let mut wait = Duration::from_millis(500);
        loop {
            self.event(None, "Warning", "FailedMount", &msg).await;
            sleep(self.backoff_wait(wait)).await;
            wait = (wait * 2).min(Duration::from_secs(122));
        }
    }

    async fn run_init(&self, c: Cid) {
        self.ensure_image(c).await;
        self.start(c).await;
        self.log(c, ["init: done".to_owned()]);
        sleep(Duration::from_millis(300)).await;
        self.cupdate(c, |cs| cs.finish_run(now(), 0, "Completed"));
        // The regular containers stop waiting for the init containers.
        self.update(|s| {
            if s.initialized() {
                for cs in &mut s.containers {
                    if cs.attempts == 0 {
                        cs.waiting = Some(Waiting {
                            reason: "ContainerCreating".to_owned(),
                            message: None,
                        });
                    }
                }
            }
        });
    }

    async fn run_container(&self, c: Cid) {
        let (behavior, adopted) = self.read(|s| {
            let cs = &s.containers[c.i];
            (cs.behavior.clone(), cs.adopted && cs.running())
        });
        if adopted {
            // Still running from before a restart of the simulator.
            match behavior {
                Behavior::Ready { delay_secs } => {
                    let (ready, started) = self.read(|s| {
                        let cs = &s.containers[c.i];
                        (cs.ready, cs.current().map(|r| r.started_at))
                    });
                    if !ready {
                        let since = started
                            .and_then(|t| now().duration_since(t).try_into().ok())
                            .unwrap_or(Duration::ZERO);
                        sleep(Duration::from_secs(delay_secs).saturating_sub(since)).await;
                        self.log(c, self.apps[c.i].ready());
                        self.cupdate(c, |cs| cs.ready = true);
                    }
                    return self.probe_loop(c, 200).await;
                }
                Behavior::NeverReady => return self.probe_loop(c, 503).await,
                Behavior::CrashLoop { .. } | Behavior::Oom => {
                    return self.crash_loop(c, &behavior, true).await;
                }
                _ => {}
            }
        }
        if let Some(err) = behavior.pull_error() {
            return self.pull_fail_loop(c, err).await;
        }
        self.ensure_image(c).await;
        match behavior {
            Behavior::Ready { delay_secs } => {
                self.start(c).await;
                if delay_secs > 0 {
                    // Loading: the server answers its probes 503 (a real
                    // node's healthy rollout shows such an Unhealthy too).
                    let t0 = Instant::now();
                    let until = t0 + Duration::from_secs(delay_secs);
                    self.probe_until(c, Answer::Status(503), t0, Some(until))
                        .await;
                }
                self.log(c, self.apps[c.i].ready());
                self.cupdate(c, |cs| cs.ready = true);
                self.probe_loop(c, 200).await;
            }
            Behavior::NeverReady => {
                self.start(c).await;
                self.probe_loop(c, 503).await;
            }
            Behavior::CrashLoop { .. } | Behavior::Oom => {
                self.crash_loop(c, &behavior, false).await
            }
            Behavior::ConfigError => self.config_error_loop(c).await,
            _ => {}
        }
    }

    fn pull_policy(&self, c: Cid) -> String {
        self.read(|s| {
            let cs = if c.init {
                &s.init_containers[c.i]
            } else {
                &s.containers[c.i]
            };
            cs.spec.image_pull_policy.clone().unwrap_or_default()
        })
    }

    /// Pulls the image, or says it is already present.
    async fn ensure_image(&self, c: Cid) {
        let image = self.image(c);
        let present = self.node.pulled.lock().expect("pulled").contains(&image);
        if present && self.pull_policy(c) != "Always" {
            self.event(
                Some(c),
                "Normal",
                "Pulled",
                &messages::image_present(&image),
            )
            .await;
        } else {
            self.event(Some(c), "Normal", "Pulling", &messages::pulling(&image))
                .await;
            let ms = 600 + (u64::from_str_radix(&stable_hex(&image, 4), 16).unwrap_or(0) % 600);
            sleep(Duration::from_millis(ms)).await;
            let size = 100_000_000 + u64::from_str_radix(&stable_hex(&image, 7), 16).unwrap_or(0);
            self.event(
                Some(c),
                "Normal",
                "Pulled",
                &messages::pulled(&image, Duration::from_millis(ms), size),
            )
            .await;
            self.node.pulled.lock().expect("pulled").insert(image);
        }
        self.cupdate(c, |cs| cs.image_pulled = true);
    }

    /// Creates and starts the container.
    async fn start(&self, c: Cid) {
        self.event(Some(c), "Normal", "Created", "Container created")
            .await;
        let lines = if c.init {
            Vec::new()
        } else {
            self.apps[c.i].startup()
        };
        self.cupdate(c, |cs| {
            cs.start_run(now());
            for l in lines {
                cs.log(now(), l);
            }
        });
        self.event(Some(c), "Normal", "Started", "Container started")
            .await;
    }

    fn probe(&self, c: Cid) -> Option<Probe> {
        self.read(|s| s.containers[c.i].spec.readiness_probe.clone())
    }

    /// What a readiness probe of this container says when `answer` is
    /// what the server does, as the kubelet's prober words it; None when
    /// the probe passes.
    fn probe_failure(&self, c: Cid, probe: &Probe, answer: Answer) -> Option<String> {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        // A named port is the container's port of that name, as the prober
        // resolves it.
        let port = |p: &IntOrString| match p {
            IntOrString::Int(p) => p.to_string(),
            IntOrString::String(name) => self.read(|s| {
                s.containers[c.i]
                    .spec
                    .ports
                    .iter()
                    .flatten()
                    .find(|cp| cp.name.as_deref() == Some(name.as_str()))
                    .map(|cp| cp.container_port.to_string())
                    .unwrap_or_else(|| name.clone())
            }),
        };
        let ip = || self.read(|s| s.pod_ip.clone()).unwrap_or_default();
        if let Some(h) = &probe.http_get {
            return match answer {
                Answer::Ok => None,
                Answer::Status(code) => Some(messages::probe_status(code)),
                Answer::Refused => Some(messages::probe_refused(
                    h.scheme.as_deref().unwrap_or("HTTP"),
                    &h.host.clone().unwrap_or_else(ip),
                    &port(&h.port),
                    h.path.as_deref().unwrap_or("/"),
                )),
            };
        }
        if let Some(t) = &probe.tcp_socket {
            return match answer {
                Answer::Ok | Answer::Status(_) => None,
                Answer::Refused => Some(messages::tcp_probe_refused(&ip(), &port(&t.port))),
            };
        }
        match answer {
            Answer::Ok => None,
            _ => Some("Readiness probe failed: command exited with non-zero status 1".to_owned()),
        }
    }

    /// Probes as the kubelet's prober does from `started` (the container's
    /// start) until `until` (for ever when None): the first probe after
    /// `initialDelaySeconds`, then every `periodSeconds`. Logs the server's
    /// access lines for the requests it answers; records a Warning
    /// Unhealthy (core/v1, count bumped) for each failure.
    async fn probe_until(&self, c: Cid, answer: Answer, started: Instant, until: Option<Instant>) {
        let probe = self.probe(c);
        let Some(probe) = probe else {
            // No probe: nothing to report but the state.
            match until {
                Some(t) => return tokio::time::sleep_until(t).await,
                None => return std::future::pending().await,
            }
        };
        let period = Duration::from_secs(probe.period_seconds.unwrap_or(10).max(1) as u64);
        let delay = Duration::from_secs(probe.initial_delay_seconds.unwrap_or(0).max(0) as u64);
        let path = probe
            .http_get
            .as_ref()
            .and_then(|h| h.path.clone())
            .unwrap_or_else(|| "/".to_owned());
        let failure = self.probe_failure(c, &probe, answer);
        let mut next = started + delay;
        let mut n: u64 = 0;
        loop {
            if until.is_some_and(|t| next >= t) {
                return tokio::time::sleep_until(until.unwrap_or(next)).await;
            }
            tokio::time::sleep_until(next).await;
            n += 1;
            if probe.http_get.is_some()
                && let Answer::Ok | Answer::Status(_) = answer
            {
                let code = match answer {
                    Answer::Status(code) => code,
                    _ => 200,
                };
                let mut lines = Vec::new();
                if code != 200 {
                    lines.push(self.apps[c.i].still_loading(n));
                }
                lines.push(self.apps[c.i].probe(&path, code, n));
                self.log(c, lines);
            }
            if let Some(f) = &failure {
                self.event(Some(c), "Warning", "Unhealthy", f).await;
            }
            next += period;
        }
    }

    /// Probes for ever a container that answers `code`.
    async fn probe_loop(&self, c: Cid, code: u16) {
        let answer = if code == 200 {
            Answer::Ok
        } else {
            Answer::Status(code)
        };
        // Passing probes are logged from the first period on; failing ones
        // start after the initial delay.
        let started = if code == 200 {
            let delay = self
                .probe(c)
                .and_then(|p| p.initial_delay_seconds)
                .unwrap_or(0)
                .max(0) as u64;
            Instant::now()
                .checked_sub(Duration::from_secs(delay))
                .unwrap_or_else(Instant::now)
        } else {
            Instant::now()
        };
        self.probe_until(c, answer, started, None).await
    }

    async fn crash_loop(&self, c: Cid, behavior: &Behavior, adopted: bool) {
        let (exit_code, reason) = match behavior {
            Behavior::Oom => (137, "OOMKilled"),
            Behavior::CrashLoop { exit_code: 0 } => (0, "Completed"),
            Behavior::CrashLoop { exit_code } => (*exit_code, "Error"),
            _ => (1, "Error"),
        };
        let name = self.cname(c);
        let policy = self.read(|s| s.restart_policy.clone());
        let mut crashes: u32 = 0;
        let mut first = true;
        loop {
            if !first {
                self.ensure_image(c).await;
            }
            if !(first && adopted) {
                self.start(c).await;
            }
            first = false;
            let started = Instant::now();
            let run = async {
                if matches!(behavior, Behavior::Oom) {
                    for line in self.apps[c.i].oom_loading() {
                        sleep(Duration::from_millis(350)).await;
                        self.log(c, [line]);
                    }
                    sleep(Duration::from_millis(250)).await;
                } else {
                    sleep(Duration::from_millis(1500)).await;
                    self.log(c, self.apps[c.i].crash(exit_code));
                    sleep(Duration::from_millis(500)).await;
                }
            };
            // The server never opens its port: a probe due within the run
            // is refused, as on a real node.
            let probes = async {
                self.probe_until(c, Answer::Refused, started, None).await;
            };
            tokio::select! {
                _ = run => {}
                _ = probes => {}
            }
            self.cupdate(c, |cs| cs.finish_run(now(), exit_code, reason));
            crashes += 1;
            if policy == "Never" || (policy == "OnFailure" && exit_code == 0) {
                return std::future::pending().await;
            }
            // The pod sync the exit triggers: the status it writes shows
            // the container terminated.
            sleep(Duration::from_millis(500)).await;
            let Some(b) = messages::crash_backoff(crashes) else {
                // The first exit: restarted at once.
                continue;
            };
            // That sync finds the container in back-off: a BackOff event,
            // and the reason it keeps for the next status. The status still
            // says terminated (restartCount not yet bumped) until the next
            // sync, seconds or minutes later on a real node; then waiting
            // CrashLoopBackOff until the restart.
            let phases = messages::backoff_phases(b, self.node.opts.backoff_scale);
            let deadline = Instant::now() + phases.total;
            let note = messages::restart_backoff(&name, &self.pod_desc());
            self.event(Some(c), "Warning", "BackOff", &note).await;
            tokio::time::sleep_until(Instant::now() + phases.terminated).await;
            let msg = messages::crash_backoff_waiting(b, &name, &self.pod_desc());
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "CrashLoopBackOff".to_owned(),
                    message: Some(msg),
                })
            });
            self.wait_with(deadline, || {
                self.event(Some(c), "Warning", "BackOff", &note)
            })
            .await;
        }
    }

    /// Calls `f` now and every resync period until `deadline`.
    async fn wait_with<F, Fut>(&self, deadline: Instant, mut f: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        loop {
            f().await;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            sleep(left.min(self.resync())).await;
            if Instant::now() >= deadline {
                return;
            }
        }
    }

    async fn pull_fail_loop(&self, c: Cid, err: PullError) {
        let image = self.image(c);
        let mut backoff = INITIAL_BACKOFF;
        loop {
            self.event(Some(c), "Normal", "Pulling", &messages::pulling(&image))
                .await;
            sleep(err.pull_time(self.node.opts.backoff_scale)).await;
            let e = err.message(&image);
            self.event(
                Some(c),
                "Warning",
                "Failed",
                &messages::pull_failed(&image, &e),
            )
            .await;
            // The pod sync that pulled ends; the next status shows the
            // sandbox (a pull that hangs holds the first one back).
            self.update(|s| self.sandbox_up(s));
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "ErrImagePull".to_owned(),
                    message: Some(e.clone()),
                })
            });
            self.event(Some(c), "Warning", "Failed", "Error: ErrImagePull")
                .await;
            sleep(Duration::from_secs(1)).await;
            let note = messages::pull_backoff(&image);
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "ImagePullBackOff".to_owned(),
                    message: Some(messages::pull_backoff_waiting(&image, &e)),
                })
            });
            let deadline = Instant::now() + self.backoff_wait(backoff);
            self.wait_with(deadline, || async {
                self.event(Some(c), "Normal", "BackOff", &note).await;
                self.event(Some(c), "Warning", "Failed", "Error: ImagePullBackOff")
                    .await;
            })
            .await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn config_error_loop(&self, c: Cid) {
        let app = self
            .live
            .borrow()
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app.kubernetes.io/name").cloned())
            .unwrap_or_else(|| "chart-demo".to_owned());
        let msg = format!(
            "couldn't find key MODEL_PATH in ConfigMap {}/{app}-config",
            self.pod_ref.namespace
        );
        loop {
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "CreateContainerConfigError".to_owned(),
                    message: Some(msg.clone()),
                })
            });
            self.event(Some(c), "Warning", "Failed", &format!("Error: {msg}"))
                .await;
            sleep(self.resync()).await;
            self.ensure_image(c).await;
        }
    }

    // ------------------------------------------------------------ deletion

    /// Stops the containers, reports them terminated, then removes the Pod
    /// (grace period 0) as a kubelet does once its containers are gone.
    async fn terminate(&self) {
        let t0 = Instant::now();
        let grace = {
            let live = self.live.borrow();
            live.metadata
                .deletion_grace_period_seconds
                .or_else(|| {
                    live.spec
                        .as_ref()
                        .and_then(|s| s.termination_grace_period_seconds)
                })
                .unwrap_or(30)
        };
        let wait = Duration::from_secs(grace.max(0) as u64).min(Duration::from_secs(2));
        let running: Vec<Cid> = self.read(|s| {
            s.containers
                .iter()
                .enumerate()
                .filter(|(_, c)| c.running())
                .map(|(i, _)| Cid { init: false, i })
                .collect()
        });
        for c in &running {
            let name = self.cname(*c);
            self.event(
                Some(*c),
                "Normal",
                "Killing",
                &format!("Stopping container {name}"),
            )
            .await;
        }
        sleep(Duration::from_millis(300).min(wait)).await;
        for c in &running {
            self.log(*c, self.apps[c.i].shutdown());
        }
        self.update(|s| {
            let t = now();
            for cs in s.containers.iter_mut().chain(s.init_containers.iter_mut()) {
                if cs.running() {
                    cs.finish_run(t, 0, "Completed");
                }
                cs.ready = false;
            }
            let ok = s.containers.iter().all(|c| c.completed_ok());
            s.terminal = Some(if ok { "Succeeded" } else { "Failed" }.to_owned());
        });
        let _ = self.node.stopped.clone().wait_for(|s| !*s).await;
        if let Err(e) = self.write_status(&mut None).await
            && !is_not_found(&e)
        {
            eprintln!(
                "mdiag-sim: {}: final status of {}/{}: {e}",
                self.node.name, self.pod_ref.namespace, self.pod_ref.name
            );
        }
        let left = wait.saturating_sub(t0.elapsed());
        sleep(left).await;
        let _ = self.node.stopped.clone().wait_for(|s| !*s).await;
        let api: Api<Pod> = Api::namespaced(self.node.client.clone(), &self.pod_ref.namespace);
        let dp = DeleteParams {
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions {
                uid: Some(self.pod_ref.uid.clone()),
                resource_version: None,
            }),
            ..Default::default()
        };
        match api.delete(&self.pod_ref.name, &dp).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) || mdiag_harness_util::is_conflict(&e) => {}
            Err(e) => eprintln!(
                "mdiag-sim: {}: deleting {}/{}: {e}",
                self.node.name, self.pod_ref.namespace, self.pod_ref.name
            ),
        }
    }
}
