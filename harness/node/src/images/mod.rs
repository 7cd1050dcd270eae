//! Images and registries for the real node, made on this machine: no image
//! is downloaded and no docker is needed.
//!
//! - [`oci`]: OCI images from Debian's busybox-static (`/bin/busybox`): a
//!   `pause` (sandbox) image and the model-server stand-in
//!   (`harness/images/model-server.sh`) at a few versions.
//! - [`registry`]: local registries from Debian's docker-registry (CNCF
//!   distribution 2.8): one open, one behind htpasswd basic auth, and a
//!   listener that accepts connections and never answers
//!   (`mdiag-blackhole`), each on its own port.
//!
//! The caller owns the processes:
//!
//! ```no_run
//! # fn demo(dir: &std::path::Path) -> anyhow::Result<()> {
//! use mdiag_harness_node::images;
//! let plan = images::plan(&dir.join("registry"))?;
//! for p in &plan.processes {
//!     // start p.exe with p.args, log to logs/<p.log>, record it to stop it later
//! }
//! let imgs = images::push_all(&plan)?;
//! // containerd: sandbox_image = imgs.pause, and imgs.containerd for plain HTTP
//! # Ok(()) }
//! ```

pub mod blackhole;
pub mod oci;
pub mod registry;

use std::collections::BTreeMap;
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use base64::Engine;
use serde_json::json;

pub use oci::{Busybox, Image};
pub use registry::{PlanOptions, Process, Registry, RegistryPlan, plan, plan_with};

/// The repository of the model-server stand-in (the chart's
/// `image.repository` path, on our registries).
pub const MODEL_SERVER_REPO: &str = "modeldock/chart-demo";
/// Its tags; each is an image of its own digest (the config differs).
pub const MODEL_SERVER_TAGS: &[&str] = &["v1.4.0", "v1.5.0", "v1.6.0"];
/// A tag that is never pushed.
pub const MISSING_TAG: &str = "v0.0.0-missing";
pub const PAUSE_REPO: &str = "mdiag/pause";
pub const PAUSE_TAG: &str = "3.10";
/// What `plan` writes in its folder.
pub const PLAN_FILE: &str = "plan.json";
/// What `mdiag-images push` writes there.
pub const IMAGES_FILE: &str = "images.json";

/// Where busybox is: `$MDIAG_BUSYBOX`, else `/bin/busybox`.
pub fn busybox_path() -> PathBuf {
    std::env::var_os("MDIAG_BUSYBOX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/bin/busybox"))
}

/// The images, built from one busybox.
pub struct Built {
    pub pause: Image,
    /// By tag.
    pub model_server: BTreeMap<String, Image>,
}

/// Builds the pause image and the model server at every tag.
pub fn build(busybox: &Path) -> anyhow::Result<Built> {
    let bb = Busybox::load(busybox)?;
    let base = bb.base_layer()?;
    let pause = oci::pause_image(&bb, &base)?;
    let model_server = MODEL_SERVER_TAGS
        .iter()
        .map(|t| Ok(((*t).to_owned(), oci::model_server_image(&bb, &base, t)?)))
        .collect::<anyhow::Result<_>>()?;
    Ok(Built {
        pause,
        model_server,
    })
}

/// Credentials of the auth-protected registry, for an imagePullSecret.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PullCredentials {
    /// `host:port`, as in the image references.
    pub server: String,
    pub username: String,
    pub password: String,
}

impl PullCredentials {
    /// The `.dockerconfigjson` of a `kubernetes.io/dockerconfigjson` Secret.
    pub fn dockerconfigjson(&self) -> String {
        let auth = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.username, self.password));
        json!({"auths": {self.server.clone(): {
            "username": self.username, "password": self.password, "auth": auth,
        }}})
        .to_string()
    }
}

/// What containerd needs to pull from the registries over plain HTTP.
///
/// Two ways, pick one (containerd refuses both at once): a `config_path`
/// folder of `hosts.toml` files ([`ContainerdRegistries::write_hosts_dir`]
/// plus [`ContainerdRegistries::config_path_toml`]), or the CRI plugin's
/// older `registry.mirrors` table ([`ContainerdRegistries::mirrors_toml`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ContainerdRegistries {
    /// `(host:port, hosts.toml text)` for each registry host.
    pub hosts: Vec<(String, String)>,
}

impl ContainerdRegistries {
    fn new(addrs: &[SocketAddr]) -> ContainerdRegistries {
        let hosts = addrs
            .iter()
            .map(|a| {
                (
                    a.to_string(),
                    format!(
                        "# Written by mdiag-harness: plain HTTP to a local registry.\n\
                         server = \"http://{a}\"\n\n\
                         [host.\"http://{a}\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
                    ),
                )
            })
            .collect();
        ContainerdRegistries { hosts }
    }

    /// Writes `<dir>/<host:port>/hosts.toml` for each host.
    pub fn write_hosts_dir(&self, dir: &Path) -> anyhow::Result<()> {
        for (host, text) in &self.hosts {
            let d = dir.join(host);
            fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
            fs::write(d.join("hosts.toml"), text)?;
        }
        Ok(())
    }

    /// The containerd 1.6 config lines that point the CRI plugin at such a
    /// folder.
    pub fn config_path_toml(dir: &Path) -> String {
        format!(
            "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"{}\"\n",
            dir.display()
        )
    }

    /// The alternative: CRI `registry.mirrors` entries (containerd 1.6;
    /// deprecated there, but without a folder).
    pub fn mirrors_toml(&self) -> String {
        self.hosts
            .iter()
            .map(|(h, _)| {
                format!(
                    "[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"{h}\"]\n  endpoint = [\"http://{h}\"]\n"
                )
            })
            .collect()
    }
}

/// Full image references for the trials, and what containerd needs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Images {
    /// The sandbox image (containerd's `sandbox_image`).
    pub pause: String,
    /// `host:port/modeldock/chart-demo` on the open registry (the chart's
    /// `image.repository`).
    pub model_server_repository: String,
    /// Reference by tag (every tag of [`MODEL_SERVER_TAGS`]).
    pub model_server: BTreeMap<String, String>,
    /// The model server on the auth registry: pulling it without
    /// credentials is denied (401).
    pub denied: String,
    /// A tag that does not exist on the open registry (404 MANIFEST_UNKNOWN).
    pub not_found: String,
    /// The model server on the listener that accepts and never answers
    /// (containerd 1.6 waits for ever: no pull-progress timeout before 1.7).
    pub timeout: String,
    /// The model server where connects time out (`dial tcp ...: i/o
    /// timeout` after containerd's 30 s dial timeout).
    pub unreachable: String,
    /// For an imagePullSecret that makes [`Images::denied`] pullable.
    pub credentials: PullCredentials,
    pub containerd: ContainerdRegistries,
}

impl Images {
    /// Reads `dir/images.json`, as `mdiag-images push` writes it.
    pub fn load(dir: &Path) -> anyhow::Result<Images> {
        let p = dir.join(IMAGES_FILE);
        let text = fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
    }

    /// Writes `dir/images.json`.
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let p = dir.join(IMAGES_FILE);
        fs::write(&p, serde_json::to_string_pretty(self)?)
            .with_context(|| format!("writing {}", p.display()))
    }

    /// The model server at `tag`; panics on a tag that was not pushed (a
    /// test's mistake).
    pub fn model_server(&self, tag: &str) -> &str {
        self.model_server.get(tag).unwrap_or_else(|| {
            panic!("no model-server image tagged {tag}; tags: {MODEL_SERVER_TAGS:?}")
        })
    }
}

/// Waits (up to 30 s) for both registries to answer, builds the images and
/// pushes them: pause and every model-server tag to the open registry, the
/// first model-server tag to the auth registry (with the credentials).
///
/// It talks to the registries' addresses from the calling process, so call it
/// in their network namespace; from outside one, run `mdiag-images push DIR`
/// in it instead (e.g. under `ip netns exec` or `nsenter --net=`), which reads
/// `DIR/plan.json` and writes `DIR/images.json` ([`Images::load`]).
///
/// It blocks (plain HTTP with a blocking client); from async code call it in
/// `spawn_blocking`.
pub fn push_all(plan: &RegistryPlan) -> anyhow::Result<Images> {
    let open = Registry::new(plan.open, None);
    let auth = Registry::new(plan.auth, Some((&plan.username, &plan.password)));
    let within = Duration::from_secs(30);
    open.wait_ready(within)
        .context("the open registry (see its log, registry.log)")?;
    auth.wait_ready(within)
        .context("the auth registry (see its log, registry-auth.log)")?;
    let built = build(&busybox_path())?;
    open.push(PAUSE_REPO, PAUSE_TAG, &built.pause)?;
    for (tag, img) in &built.model_server {
        open.push(MODEL_SERVER_REPO, tag, img)?;
    }
    let first = MODEL_SERVER_TAGS[0];
    auth.push(MODEL_SERVER_REPO, first, &built.model_server[first])?;
    let repo = format!("{}/{MODEL_SERVER_REPO}", plan.open);
    Ok(Images {
        pause: format!("{}/{PAUSE_REPO}:{PAUSE_TAG}", plan.open),
        model_server: MODEL_SERVER_TAGS
            .iter()
            .map(|t| ((*t).to_owned(), format!("{repo}:{t}")))
            .collect(),
        model_server_repository: repo.clone(),
        denied: format!("{}/{MODEL_SERVER_REPO}:{first}", plan.auth),
        not_found: format!("{repo}:{MISSING_TAG}"),
        timeout: format!("{}/{MODEL_SERVER_REPO}:{first}", plan.blackhole),
        unreachable: format!("{}/{MODEL_SERVER_REPO}:{first}", plan.unreachable),
        credentials: PullCredentials {
            server: plan.auth.to_string(),
            username: plan.username.clone(),
            password: plan.password.clone(),
        },
        containerd: ContainerdRegistries::new(&[
            plan.open,
            plan.auth,
            plan.blackhole,
            plan.unreachable,
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerd_config() {
        let c = ContainerdRegistries::new(&["127.0.0.1:5000".parse().unwrap()]);
        assert_eq!(c.hosts[0].0, "127.0.0.1:5000");
        assert!(c.hosts[0].1.contains("server = \"http://127.0.0.1:5000\""));
        assert!(c.hosts[0].1.contains("[host.\"http://127.0.0.1:5000\"]"));
        assert!(c.mirrors_toml().contains(
            "registry.mirrors.\"127.0.0.1:5000\"]\n  endpoint = [\"http://127.0.0.1:5000\"]"
        ));
        let creds = PullCredentials {
            server: "127.0.0.1:5001".into(),
            username: "u".into(),
            password: "p".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&creds.dockerconfigjson()).unwrap();
        assert_eq!(v["auths"]["127.0.0.1:5001"]["auth"], "dTpw");
    }
}
