//! A real Helm CLI against a harness cluster, for the `mdiag gate` live
//! tests (`helm upgrade`, then `mdiag gate`, as a user's CI runs them) and
//! for xtask.
//!
//! Helm v3 is built from the Go module helm.sh/helm/v3 by
//! `harness/build.sh helm` (cached like the control-plane binaries, see
//! harness/README.md), or taken from `$MDIAG_HELM` when that is set; Helm
//! v4 ([`Helm::v4_for_layout`], for the real-node gate benchmark) from
//! helm.sh/helm/v4 by `harness/build.sh helm4`, or `$MDIAG_HELM4`. Every
//! run uses the cluster's admin kubeconfig and keeps Helm's cache, config
//! and data (and client-go's discovery cache) under `<cluster dir>/helm/`
//! (`helm4/` for v4), never in the user's home; `HELM_*` variables of the
//! caller are not passed on.
//!
//! ```no_run
//! use std::time::Duration;
//! use mdiag_harness::cluster::Layout;
//! use mdiag_harness::helm::{self, Helm};
//! # fn demo() -> anyhow::Result<()> {
//! let layout = Layout::from_env()?;
//! let helm = Helm::for_layout(&layout)?;
//! helm.upgrade_install("demo", "gate-1", &helm::chart_demo(), &[], None)?;
//! let run = helm.try_upgrade_install(
//!     "demo",
//!     "gate-1",
//!     &helm::chart_demo(),
//!     &[("behavior", "crash-loop")],
//!     Some(Duration::from_secs(60)),
//! )?;
//! println!("helm upgrade --wait took {:?}, ok={}", run.elapsed, run.success());
//! assert_eq!(helm.status("demo", "gate-1")?.version, 2);
//! # Ok(()) }
//! ```

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;

use crate::cluster::Layout;
use crate::helpers::ModelServiceSpec;

/// How long a helm command without `--wait` may run before it is killed.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(120);
/// Slack given to helm past its own `--timeout` before it is killed.
const WAIT_SLACK: Duration = Duration::from_secs(60);

fn repo_root() -> anyhow::Result<PathBuf> {
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the harness crate has no parent directory")?
        .to_path_buf())
}

/// `fixtures/chart/chart-demo`: the chart of one ModelService (values:
/// `name`, `image.repository`, `image.tag`, `replicas`, `behavior`,
/// `modelName`, `port`, `readinessPath`, `args`, `resources`, `gpu`,
/// `spec` (more spec fields, set as they are), `annotations`, `labels`).
pub fn chart_demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join("chart")
        .join("chart-demo")
}

/// The helm binary: `$MDIAG_HELM` when set, else the one `harness/build.sh
/// helm` builds or has cached (its last stdout line is the bin dir). A cold
/// build takes minutes; a cached one returns at once.
pub fn binary() -> anyhow::Result<PathBuf> {
    find_or_build("MDIAG_HELM", "helm")
}

/// Helm v4's binary: `$MDIAG_HELM4` when set, else `harness/build.sh helm4`
/// (a cold build takes minutes, see harness/README.md).
pub fn binary_v4() -> anyhow::Result<PathBuf> {
    find_or_build("MDIAG_HELM4", "helm4")
}

/// `$VAR` when set, else what `build.sh TARGET` prints as its bin dir, `helm` in it.
fn find_or_build(var: &str, target: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("{var}={} is not a file", p.display());
        }
        return Ok(p);
    }
    let script = repo_root()?.join("harness").join("build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(target)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {target}", script.display()))?;
    if !out.status.success() {
        bail!("{} {target} failed ({})", script.display(), out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .with_context(|| format!("build.sh {target} printed no bin dir"))?;
    let helm = Path::new(dir.trim()).join("helm");
    if !helm.is_file() {
        bail!(
            "build.sh {target} printed {} but it has no helm",
            dir.trim()
        );
    }
    Ok(helm)
}

/// Helm values for `fixtures/chart/chart-demo` that render the ModelService
/// spec of `spec` ([`ModelServiceSpec::to_object`]): the image split into
/// `image.repository` and `image.tag`, `replicas`, `port`, `readinessPath`,
/// `args`, `annotations`, `labels`, and the extra spec fields under `spec`.
///
/// What the chart would add and the spec does not have is taken away: no
/// `behavior` annotation unless the spec has one, no `modelName`, and
/// `resources: null` (Helm's way to drop the chart's default requests and
/// limits). The spec's own resources go under `spec.resources`, which
/// replaces the chart's field whole: as `resources` they would be merged
/// into the defaults (`{"requests": {"cpu": "64"}}` would keep the default
/// limit of 1 CPU, below the request). A field the spec leaves out that the
/// chart always writes gets the stand-in controller's default (1 replica,
/// port 8080, `/healthz`). An image without a tag goes whole under
/// `spec.image`, as the chart would add its default tag to it.
pub fn chart_values(spec: &ModelServiceSpec) -> Value {
    let (repository, tag) = split_image(&spec.image);
    let mut extra = serde_json::Map::new();
    for (k, v) in &spec.spec_fields {
        extra.insert(k.clone(), v.clone());
    }
    if let Some(r) = &spec.resources {
        extra.insert("resources".into(), r.clone());
    }
    if tag.is_empty() {
        extra.insert("image".into(), Value::String(spec.image.clone()));
    }
    serde_json::json!({
        "image": {"repository": repository, "tag": tag},
        "replicas": spec.replicas.unwrap_or(1),
        "behavior": spec.behavior.clone().unwrap_or_default(),
        "modelName": spec.model_name.clone().unwrap_or_default(),
        "port": spec.port.unwrap_or(8080),
        "readinessPath": spec.readiness_path.clone().unwrap_or_else(|| "/healthz".into()),
        "args": spec.args,
        "resources": Value::Null,
        "annotations": spec.annotations,
        "labels": spec.labels,
        "spec": extra,
    })
}

/// `host:port/path:tag` as (`host:port/path`, `tag`); the tag is empty when
/// the reference has none (the colon of a port is not a tag's). A digest
/// (`path@sha256:...`) splits at its colon, which the chart joins again.
fn split_image(image: &str) -> (&str, &str) {
    let last = image.rfind('/').map_or(0, |i| i + 1);
    match image[last..].rfind(':') {
        Some(i) => (&image[..last + i], &image[last + i + 1..]),
        None => (image, ""),
    }
}

/// A helm CLI bound to one cluster.
#[derive(Clone, Debug)]
pub struct Helm {
    bin: PathBuf,
    kubeconfig: PathBuf,
    home: PathBuf,
    /// How `--wait` is asked for: `--wait` (v3) or `--wait=watcher` (v4).
    wait_flag: &'static str,
}

/// One finished helm command.
#[derive(Clone, Debug)]
pub struct HelmRun {
    /// The arguments after `helm`.
    pub args: Vec<String>,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Wall time from start to exit.
    pub elapsed: Duration,
}

impl HelmRun {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The run itself when helm exited 0, else an error with its stderr.
    pub fn check(self) -> anyhow::Result<Self> {
        if self.success() {
            Ok(self)
        } else {
            bail!(
                "helm {} failed ({}, after {:.1} s): {}",
                self.args.join(" "),
                self.status,
                self.elapsed.as_secs_f64(),
                self.stderr.trim()
            )
        }
    }
}

/// What `helm status -o json` says of a release.
#[derive(Clone, Debug)]
pub struct ReleaseStatus {
    pub name: String,
    pub namespace: String,
    /// The revision (`version` in Helm's JSON).
    pub version: u64,
    /// `deployed`, `failed`, `pending-upgrade`, `superseded`, ...
    pub status: String,
    pub description: String,
    /// The whole JSON (info, config, manifest, ...).
    pub raw: Value,
}

/// One row of `helm history -o json`.
#[derive(Clone, Debug, Deserialize)]
pub struct HistoryEntry {
    pub revision: u64,
    #[serde(default)]
    pub updated: String,
    pub status: String,
    #[serde(default)]
    pub chart: String,
    #[serde(default)]
    pub app_version: String,
    #[serde(default)]
    pub description: String,
}

impl Helm {
    /// Helm for the cluster of `layout` (its admin kubeconfig; state under
    /// `<layout dir>/helm/`), finding or building the binary with [`binary`].
    pub fn for_layout(layout: &Layout) -> anyhow::Result<Self> {
        let kubeconfig = layout.admin_kubeconfig();
        if !kubeconfig.is_file() {
            bail!(
                "no cluster at {} (no {}); run `cargo xtask cluster up` first",
                layout.dir().display(),
                kubeconfig.display()
            );
        }
        Ok(Self::new(binary()?, kubeconfig, layout.dir().join("helm")))
    }

    /// Helm v4 for the cluster of `layout` ([`binary_v4`]; state under
    /// `<layout dir>/helm4/`). Its waits are `--wait=watcher`: Helm v4
    /// watches every object of the release with kstatus, so a ModelService
    /// counts as ready once its `Ready` condition is True for the latest
    /// generation (`status.observedGeneration`); Helm v3's `--wait` only
    /// knows core kinds.
    pub fn v4_for_layout(layout: &Layout) -> anyhow::Result<Self> {
        let kubeconfig = layout.admin_kubeconfig();
        if !kubeconfig.is_file() {
            bail!(
                "no cluster at {} (no {}); run `cargo xtask cluster up` first",
                layout.dir().display(),
                kubeconfig.display()
            );
        }
        Ok(
            Self::new(binary_v4()?, kubeconfig, layout.dir().join("helm4"))
                .wait_flag("--wait=watcher"),
        )
    }

    /// Helm from `bin` against `kubeconfig`, its state kept under `home`.
    pub fn new(bin: PathBuf, kubeconfig: PathBuf, home: PathBuf) -> Self {
        Helm {
            bin,
            kubeconfig,
            home,
            wait_flag: "--wait",
        }
    }

    /// The flag that asks for a wait (`--wait`, or Helm v4's
    /// `--wait=watcher`, `--wait=legacy`).
    pub fn wait_flag(mut self, flag: &'static str) -> Self {
        self.wait_flag = flag;
        self
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A `helm` command with the kubeconfig and the environment set,
    /// for whatever this API does not cover.
    pub fn command(&self) -> anyhow::Result<Command> {
        let dirs = [
            ("HELM_CACHE_HOME", "cache"),
            ("HELM_CONFIG_HOME", "config"),
            ("HELM_DATA_HOME", "data"),
            ("KUBECACHEDIR", "kube-cache"),
        ];
        let mut cmd = Command::new(&self.bin);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("HELM_") {
                cmd.env_remove(&key);
            }
        }
        // KUBECONFIG rather than --kubeconfig, so that the arguments are
        // only the caller's.
        cmd.env("KUBECONFIG", &self.kubeconfig);
        for (var, sub) in dirs {
            let dir = self.home.join(sub);
            fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            cmd.env(var, dir);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Ok(cmd)
    }

    /// Runs `helm ARGS`, whatever its exit status; an error only when it
    /// cannot be started or is still running after `deadline` (then it is
    /// killed).
    pub fn run(&self, args: &[&str], deadline: Duration) -> anyhow::Result<HelmRun> {
        let mut cmd = self.command()?;
        cmd.args(args);
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("running {}", self.bin.display()))?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let status = wait_until(&mut child, start + deadline)?;
        let elapsed = start.elapsed();
        let stdout = join(stdout);
        let stderr = join(stderr);
        match status {
            Some(status) => Ok(HelmRun {
                args,
                status,
                stdout,
                stderr,
                elapsed,
            }),
            None => bail!(
                "helm {} still running after {:.0} s; killed. stderr: {}",
                args.join(" "),
                deadline.as_secs_f64(),
                stderr.trim()
            ),
        }
    }

    /// Runs `helm ARGS` and fails, with helm's stderr, unless it exits 0.
    pub fn run_ok(&self, args: &[&str]) -> anyhow::Result<HelmRun> {
        self.run(args, DEFAULT_DEADLINE)?.check()
    }

    /// `helm upgrade --install RELEASE CHART -n NAMESPACE --create-namespace
    /// --set K=V ...`, with `--wait --timeout T` when `wait` is given (Helm
    /// v4: `--wait=watcher`), and whatever its exit status: a timed-out
    /// `--wait` is an outcome a test measures. [`HelmRun::check`] turns a
    /// failure into an error.
    pub fn try_upgrade_install(
        &self,
        release: &str,
        namespace: &str,
        chart_dir: &Path,
        set: &[(&str, &str)],
        wait: Option<Duration>,
    ) -> anyhow::Result<HelmRun> {
        let mut extra = Vec::new();
        for (k, v) in set {
            // --set: Helm types the value (2 is a number, true a bool).
            extra.push("--set".to_owned());
            extra.push(format!("{k}={v}"));
        }
        self.upgrade_with(release, namespace, chart_dir, extra, wait)
    }

    /// [`Helm::try_upgrade_install`] with `values` (e.g. [`chart_values`])
    /// as a values file (`-f`, written under the Helm home) instead of
    /// `--set` pairs.
    pub fn try_upgrade_install_values(
        &self,
        release: &str,
        namespace: &str,
        chart_dir: &Path,
        values: &Value,
        wait: Option<Duration>,
    ) -> anyhow::Result<HelmRun> {
        let dir = self.home.join("values");
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let file = dir.join(format!("{namespace}.{release}.json"));
        // JSON is YAML: helm reads it as a values file.
        fs::write(&file, serde_json::to_vec_pretty(values)?)
            .with_context(|| format!("writing {}", file.display()))?;
        let extra = vec!["--values".to_owned(), file.display().to_string()];
        self.upgrade_with(release, namespace, chart_dir, extra, wait)
    }

    fn upgrade_with(
        &self,
        release: &str,
        namespace: &str,
        chart_dir: &Path,
        extra: Vec<String>,
        wait: Option<Duration>,
    ) -> anyhow::Result<HelmRun> {
        let chart = chart_dir.display().to_string();
        let mut args: Vec<String> = [
            "upgrade",
            "--install",
            release,
            &chart,
            "--namespace",
            namespace,
            "--create-namespace",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.extend(extra);
        let deadline = match wait {
            Some(t) => {
                args.push(self.wait_flag.to_owned());
                args.push(format!("--timeout={}s", t.as_secs().max(1)));
                t + WAIT_SLACK
            }
            None => DEFAULT_DEADLINE,
        };
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(&refs, deadline)
    }

    /// [`Helm::try_upgrade_install`] that fails, with helm's stderr,
    /// unless helm exits 0.
    pub fn upgrade_install(
        &self,
        release: &str,
        namespace: &str,
        chart_dir: &Path,
        set: &[(&str, &str)],
        wait: Option<Duration>,
    ) -> anyhow::Result<HelmRun> {
        self.try_upgrade_install(release, namespace, chart_dir, set, wait)?
            .check()
    }

    /// `helm status RELEASE -n NAMESPACE -o json`.
    pub fn status(&self, release: &str, namespace: &str) -> anyhow::Result<ReleaseStatus> {
        let run = self.run_ok(&["status", release, "--namespace", namespace, "-o", "json"])?;
        let raw: Value = serde_json::from_str(&run.stdout)
            .with_context(|| format!("parsing helm status: {}", run.stdout.trim()))?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        Ok(ReleaseStatus {
            name: text(&raw["name"]),
            namespace: text(&raw["namespace"]),
            version: raw["version"]
                .as_u64()
                .context("helm status has no version")?,
            status: text(&raw["info"]["status"]),
            description: text(&raw["info"]["description"]),
            raw,
        })
    }

    /// `helm history RELEASE -n NAMESPACE -o json`, oldest first.
    pub fn history(&self, release: &str, namespace: &str) -> anyhow::Result<Vec<HistoryEntry>> {
        let run = self.run_ok(&["history", release, "--namespace", namespace, "-o", "json"])?;
        serde_json::from_str(&run.stdout)
            .with_context(|| format!("parsing helm history: {}", run.stdout.trim()))
    }

    /// `helm uninstall RELEASE -n NAMESPACE` (no error if it is not there).
    pub fn uninstall(&self, release: &str, namespace: &str) -> anyhow::Result<HelmRun> {
        self.run_ok(&[
            "uninstall",
            release,
            "--namespace",
            namespace,
            "--ignore-not-found",
        ])
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<JoinHandle<String>> {
    pipe.map(|mut p| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    })
}

fn join(h: Option<JoinHandle<String>>) -> String {
    h.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// Waits for the child until `deadline`; past it, kills it and returns None.
fn wait_until(child: &mut Child, deadline: Instant) -> anyhow::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_demo_is_there() {
        let chart = chart_demo();
        let text = fs::read_to_string(chart.join("Chart.yaml")).unwrap();
        assert!(text.contains("name: chart-demo"));
        assert!(text.contains("version: 0.1.0"));
        assert!(chart.join("templates").join("modelservice.yaml").is_file());
    }

    #[test]
    fn image_references_split_into_repository_and_tag() {
        assert_eq!(
            split_image("127.0.0.1:5000/modeldock/chart-demo:v1.5.0"),
            ("127.0.0.1:5000/modeldock/chart-demo", "v1.5.0")
        );
        // The port's colon is not a tag.
        assert_eq!(
            split_image("127.0.0.1:5000/modeldock/chart-demo"),
            ("127.0.0.1:5000/modeldock/chart-demo", "")
        );
        assert_eq!(split_image("busybox"), ("busybox", ""));
        assert_eq!(
            split_image("r.example/m@sha256:abcd"),
            ("r.example/m@sha256", "abcd")
        );
    }

    #[test]
    fn chart_values_render_the_spec_not_the_chart_defaults() {
        let spec = ModelServiceSpec::new("127.0.0.1:5000/modeldock/chart-demo:v1.5.0")
            .replicas(2)
            .on_real_node()
            .arg("--crash=1")
            .resources(serde_json::json!({"requests": {"cpu": "64"}}))
            .spec_field(
                "readinessProbe",
                serde_json::json!({"initialDelaySeconds": 0, "periodSeconds": 1}),
            );
        let v = chart_values(&spec);
        assert_eq!(
            v["image"]["repository"],
            "127.0.0.1:5000/modeldock/chart-demo"
        );
        assert_eq!(v["image"]["tag"], "v1.5.0");
        assert_eq!(v["replicas"], 2);
        assert_eq!(v["args"], serde_json::json!(["--crash=1"]));
        // No behavior annotation, no model name, no default resources.
        assert_eq!(v["behavior"], "");
        assert_eq!(v["modelName"], "");
        assert!(v["resources"].is_null());
        // The spec's resources replace the chart's whole, beside the
        // extra fields, as the spec has them.
        assert_eq!(
            v["spec"]["resources"],
            serde_json::json!({"requests": {"cpu": "64"}})
        );
        assert_eq!(
            v["spec"]["nodeSelector"],
            serde_json::json!({"mdiag.dev/node": "real"})
        );
        assert_eq!(v["spec"]["tolerations"][0]["effect"], "NoSchedule");
        assert_eq!(v["spec"]["readinessProbe"]["periodSeconds"], 1);
        assert!(v["spec"].get("image").is_none());
        let object = spec.to_object("ns", "chart-demo");
        for (k, want) in object["spec"].as_object().unwrap() {
            let got = match k.as_str() {
                "image" => Value::String(format!(
                    "{}:{}",
                    v["image"]["repository"].as_str().unwrap(),
                    v["image"]["tag"].as_str().unwrap()
                )),
                "replicas" | "args" => v[k].clone(),
                _ => v["spec"][k].clone(),
            };
            assert_eq!(&got, want, "spec.{k}");
        }

        // A sim behaviour is kept; an image without a tag goes whole
        // under spec.image; what the spec leaves out gets the controller's
        // defaults.
        let v = chart_values(&ModelServiceSpec::new("busybox").behavior("crash-loop"));
        assert_eq!(v["behavior"], "crash-loop");
        assert_eq!(v["spec"]["image"], "busybox");
        assert_eq!(v["replicas"], 1);
        assert_eq!(v["port"], 8080);
        assert_eq!(v["readinessPath"], "/healthz");
        assert!(v["spec"].get("resources").is_none());
    }

    #[test]
    fn failed_run_errors_with_stderr() {
        // sh stands in for helm: a message on stderr, exit 3.
        let h = Helm::new(
            PathBuf::from("/bin/sh"),
            PathBuf::from("/nonexistent"),
            std::env::temp_dir().join(format!("mdiag-helm-test-{}", std::process::id())),
        );
        let run = h
            .run(&["-c", "echo oops >&2; exit 3"], Duration::from_secs(10))
            .unwrap();
        assert!(!run.success());
        let err = format!("{:#}", run.check().unwrap_err());
        assert!(err.contains("oops"), "{err}");
        let _ = fs::remove_dir_all(&h.home);
    }
}
