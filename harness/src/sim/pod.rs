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
use super::node::NodeCtx;
use super::state::{PodSim, Waiting};
use crate::events::ObjRef;
use crate::util::{go_duration, is_not_found, now, scaled, stable_hex};

const MAX_BACKOFF: Duration = Duration::from_secs(300);
const INITIAL_BACKOFF: Duration = Duration::from_secs(10);

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

    async fn series(&self, c: Cid, type_: &str, reason: &str, action: &str, note: &str) {
        let r = self.cref(c);
        self.node
            .recorder
            .series(&r, type_, reason, action, note)
            .await;
    }

    fn pod_desc(&self) -> String {
        format!(
            "{}_{}({})",
            self.pod_ref.name, self.pod_ref.namespace, self.pod_ref.uid
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
        let ip = if self.host_network {
            Some(self.node.host_ip.clone())
        } else {
            self.read(|s| s.pod_ip.clone())
                .or_else(|| self.node.allocate_ip())
        };
        self.update(|s| {
            s.sandbox_ready = true;
            s.pod_ip = ip;
        });
        for i in 0..n_init {
            if self.read(|s| s.init_containers[i].completed_ok()) {
                continue;
            }
            self.run_init(Cid { init: true, i }).await;
        }
        let all = (0..behaviors.len()).map(|i| self.run_container(Cid { init: false, i }));
        futures::future::join_all(all).await;
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

    async fn stuck_creating(&self) {
        loop {
            self.event(
                None,
                "Warning",
                "FailedMount",
                "MountVolume.SetUp failed for volume \"model-cache\" : configmap \"model-cache\" not found",
            )
            .await;
            sleep(self.resync()).await;
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
                    sleep(Duration::from_secs(delay_secs)).await;
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
                &format!("Container image \"{image}\" already present on machine"),
            )
            .await;
        } else {
            self.event(
                Some(c),
                "Normal",
                "Pulling",
                &format!("Pulling image \"{image}\""),
            )
            .await;
            let ms = 600 + (u64::from_str_radix(&stable_hex(&image, 4), 16).unwrap_or(0) % 600);
            sleep(Duration::from_millis(ms)).await;
            let size = 100_000_000 + u64::from_str_radix(&stable_hex(&image, 7), 16).unwrap_or(0);
            let took = go_duration(Duration::from_millis(ms));
            self.event(
                Some(c),
                "Normal",
                "Pulled",
                &format!(
                    "Successfully pulled image \"{image}\" in {took} ({took} including waiting). Image size: {size} bytes."
                ),
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

    /// Probes every period: logs the request; on failure records Unhealthy.
    async fn probe_loop(&self, c: Cid, code: u16) {
        let probe = self.probe(c);
        let Some(probe) = probe else {
            if code == 200 {
                return std::future::pending().await;
            }
            // Never ready without a probe: nothing to report but the state.
            return std::future::pending().await;
        };
        let period = Duration::from_secs(probe.period_seconds.unwrap_or(10).max(1) as u64);
        let delay = Duration::from_secs(probe.initial_delay_seconds.unwrap_or(0).max(0) as u64);
        let path = probe
            .http_get
            .as_ref()
            .and_then(|h| h.path.clone())
            .unwrap_or_else(|| "/".to_owned());
        let failure = if probe.http_get.is_some() {
            format!("Readiness probe failed: HTTP probe failed with statuscode: {code}")
        } else if let Some(t) = &probe.tcp_socket {
            let ip = self.read(|s| s.pod_ip.clone()).unwrap_or_default();
            let port = match &t.port {
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(p) => p.to_string(),
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
            };
            format!("Readiness probe failed: dial tcp {ip}:{port}: connect: connection refused")
        } else {
            "Readiness probe failed: command exited with non-zero status 1".to_owned()
        };
        if code != 200 {
            sleep(delay).await;
        }
        let mut n: u64 = 0;
        loop {
            n += 1;
            if probe.http_get.is_some() {
                let mut lines = Vec::new();
                if code != 200 {
                    lines.push(self.apps[c.i].still_loading(n));
                }
                lines.push(self.apps[c.i].probe(&path, code, n));
                self.log(c, lines);
            }
            if code != 200 {
                self.series(c, "Warning", "Unhealthy", "Probe", &failure)
                    .await;
            }
            sleep(period).await;
        }
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
        let mut backoff: Option<Duration> = None;
        let mut first = true;
        loop {
            if !first {
                self.ensure_image(c).await;
            }
            if !(first && adopted) {
                self.start(c).await;
            }
            first = false;
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
            self.cupdate(c, |cs| cs.finish_run(now(), exit_code, reason));
            if policy == "Never" || (policy == "OnFailure" && exit_code == 0) {
                return std::future::pending().await;
            }
            // The next pod sync.
            sleep(Duration::from_millis(500)).await;
            match backoff {
                None => backoff = Some(INITIAL_BACKOFF),
                Some(b) => {
                    let msg = format!(
                        "back-off {} restarting failed container={name} pod={}",
                        go_duration(b),
                        self.pod_desc()
                    );
                    self.cupdate(c, |cs| {
                        cs.waiting = Some(Waiting {
                            reason: "CrashLoopBackOff".to_owned(),
                            message: Some(msg),
                        })
                    });
                    let note = format!(
                        "Back-off restarting failed container {name} in pod {}",
                        self.pod_desc()
                    );
                    let deadline = Instant::now() + self.backoff_wait(b);
                    self.wait_with(deadline, || {
                        self.series(c, "Warning", "BackOff", "StartContainer", &note)
                    })
                    .await;
                    backoff = Some((b * 2).min(MAX_BACKOFF));
                }
            }
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
            self.event(
                Some(c),
                "Normal",
                "Pulling",
                &format!("Pulling image \"{image}\""),
            )
            .await;
            sleep(err.pull_time()).await;
            let e = err.message(&image);
            self.event(
                Some(c),
                "Warning",
                "Failed",
                &format!("Failed to pull image \"{image}\": {e}"),
            )
            .await;
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "ErrImagePull".to_owned(),
                    message: Some(e.clone()),
                })
            });
            self.event(Some(c), "Warning", "Failed", "Error: ErrImagePull")
                .await;
            sleep(Duration::from_secs(1)).await;
            let note = format!("Back-off pulling image \"{image}\"");
            self.cupdate(c, |cs| {
                cs.waiting = Some(Waiting {
                    reason: "ImagePullBackOff".to_owned(),
                    message: Some(format!("{note}: ErrImagePull: {e}")),
                })
            });
            let deadline = Instant::now() + self.backoff_wait(backoff);
            self.wait_with(deadline, || async {
                self.series(c, "Normal", "BackOff", "Pulling", &note).await;
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
            Err(e) if is_not_found(&e) || crate::util::is_conflict(&e) => {}
            Err(e) => eprintln!(
                "mdiag-sim: {}: deleting {}/{}: {e}",
                self.node.name, self.pod_ref.namespace, self.pod_ref.name
            ),
        }
    }
}
