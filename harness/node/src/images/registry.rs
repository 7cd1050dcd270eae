//! The local registries: their config files, the processes to start, and a
//! small client of the registry HTTP API v2 that pushes the images.

use std::fs;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use base64::Engine;

use super::oci::{Blob, Image};

/// Debian's docker-registry (CNCF distribution 2.8).
pub const DOCKER_REGISTRY: &str = "/usr/bin/docker-registry";
/// The user of the auth-protected registry.
pub const AUTH_USER: &str = "mdiag-puller";

/// One process the caller starts (and stops with the cluster).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Process {
    /// A short name for the pids file, e.g. `registry`.
    pub name: String,
    pub exe: PathBuf,
    pub args: Vec<String>,
    /// The file name of its log (the caller picks the folder).
    pub log: String,
}

/// The registries `plan` has prepared.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RegistryPlan {
    pub dir: PathBuf,
    /// The open registry (anonymous pull and push).
    pub open: SocketAddr,
    /// The registry behind htpasswd basic auth.
    pub auth: SocketAddr,
    /// The listener that accepts connections and never answers.
    pub blackhole: SocketAddr,
    /// Where connects time out (served by the blackhole process too).
    pub unreachable: SocketAddr,
    pub username: String,
    pub password: String,
    /// What to start, in this order; stop in the reverse order.
    pub processes: Vec<Process>,
}

/// Where the blackhole binary is: `$MDIAG_BLACKHOLE`, else `mdiag-blackhole`
/// beside the running executable (or one folder up, for test binaries in
/// `target/<profile>/deps/`).
pub fn blackhole_exe() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("MDIAG_BLACKHOLE") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!("MDIAG_BLACKHOLE={} is not a file", p.display());
    }
    let exe = std::env::current_exe().context("finding the running executable")?;
    let mut tried = Vec::new();
    let mut dir = exe.parent();
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let candidate = d.join("mdiag-blackhole");
        if candidate.is_file() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
        dir = d.parent();
    }
    bail!(
        "mdiag-blackhole not found (looked at {}); build it with \
         `cargo build -p mdiag-harness --bin mdiag-blackhole` or set MDIAG_BLACKHOLE",
        tried.join(", ")
    )
}

fn registry_config(
    storage: &Path,
    addr: SocketAddr,
    service: &str,
    htpasswd: Option<&Path>,
) -> String {
    let secret = mdiag_harness_util::uuid4();
    let mut s = format!(
        "# Written by mdiag-harness (images::plan) for Debian's docker-registry.\n\
         version: 0.1\n\
         log:\n  level: info\n  formatter: text\n  fields:\n    service: {service}\n\
         storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n\
         \x20 maintenance:\n    uploadpurging:\n      enabled: false\n\
         http:\n  addr: {addr}\n  secret: {secret}\n\
         \x20 headers:\n    X-Content-Type-Options: [nosniff]\n",
        storage = storage.display(),
    );
    if let Some(h) = htpasswd {
        s.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: mdiag-registry\n    path: {}\n",
            h.display()
        ));
    }
    s
}

/// Choices of [`plan_with`]; the default is what [`plan`] does.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// The address to listen on (default 127.0.0.1); an address of this
    /// network namespace.
    pub ip: Option<IpAddr>,
    /// Fixed ports (open, auth, blackhole, unreachable) instead of free ones.
    pub ports: Option<[u16; 4]>,
    /// The `mdiag-blackhole` binary (default: [`blackhole_exe`]).
    pub blackhole_exe: Option<PathBuf>,
}

/// Writes the registries' configs under `dir`, on 127.0.0.1 with ports that
/// are free now, and says what to start.
pub fn plan(dir: &Path) -> anyhow::Result<RegistryPlan> {
    plan_with(dir, &PlanOptions::default())
}

/// [`plan`] with choices.
pub fn plan_with(dir: &Path, opts: &PlanOptions) -> anyhow::Result<RegistryPlan> {
    let ip = opts.ip.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let ports = opts.ports;
    if !Path::new(DOCKER_REGISTRY).is_file() {
        bail!(
            "{DOCKER_REGISTRY} is missing: the local registries are Debian's docker-registry \
             (apt-get install docker-registry)"
        );
    }
    let [p_open, p_auth, p_hole, p_unreach] = match ports {
        Some(p) => p,
        None => {
            // Hold all four while picking, so they differ.
            let ls: Vec<TcpListener> = (0..4)
                .map(|_| TcpListener::bind((ip, 0)))
                .collect::<Result<_, _>>()
                .with_context(|| format!("binding {ip}:0"))?;
            let p: Vec<u16> = ls
                .iter()
                .map(|l| l.local_addr().map(|a| a.port()))
                .collect::<Result<_, _>>()?;
            [p[0], p[1], p[2], p[3]]
        }
    };
    let open = SocketAddr::new(ip, p_open);
    let auth = SocketAddr::new(ip, p_auth);
    let blackhole = SocketAddr::new(ip, p_hole);
    let unreachable = SocketAddr::new(ip, p_unreach);
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir.canonicalize()?;
    let password = mdiag_harness_util::uuid4();
    let htpasswd = dir.join("auth").join("htpasswd");
    fs::create_dir_all(dir.join("open").join("storage"))?;
    fs::create_dir_all(dir.join("auth").join("storage"))?;
    // bcrypt is the only hash distribution's htpasswd accepts. Cost 5 keeps
    // each pull's check cheap; this guards nothing of value.
    let hash = bcrypt::hash(&password, 5).context("hashing the registry password")?;
    fs::write(&htpasswd, format!("{AUTH_USER}:{hash}\n"))?;
    let open_cfg = dir.join("open").join("config.yml");
    fs::write(
        &open_cfg,
        registry_config(
            &dir.join("open").join("storage"),
            open,
            "registry-open",
            None,
        ),
    )?;
    let auth_cfg = dir.join("auth").join("config.yml");
    fs::write(
        &auth_cfg,
        registry_config(
            &dir.join("auth").join("storage"),
            auth,
            "registry-auth",
            Some(&htpasswd),
        ),
    )?;
    let processes = vec![
        Process {
            name: "registry".into(),
            exe: DOCKER_REGISTRY.into(),
            args: vec!["serve".into(), open_cfg.display().to_string()],
            log: "registry.log".into(),
        },
        Process {
            name: "registry-auth".into(),
            exe: DOCKER_REGISTRY.into(),
            args: vec!["serve".into(), auth_cfg.display().to_string()],
            log: "registry-auth.log".into(),
        },
        Process {
            name: "registry-blackhole".into(),
            exe: match &opts.blackhole_exe {
                Some(p) => p.clone(),
                None => blackhole_exe()?,
            },
            args: vec![
                "--listen".into(),
                blackhole.to_string(),
                "--unreachable".into(),
                unreachable.to_string(),
            ],
            log: "registry-blackhole.log".into(),
        },
    ];
    let plan = RegistryPlan {
        dir,
        open,
        auth,
        blackhole,
        unreachable,
        username: AUTH_USER.into(),
        password,
        processes,
    };
    let p = plan.dir.join(super::PLAN_FILE);
    fs::write(&p, serde_json::to_string_pretty(&plan)?)
        .with_context(|| format!("writing {}", p.display()))?;
    Ok(plan)
}

impl RegistryPlan {
    /// Reads the `plan.json` that [`plan`] wrote in `dir`.
    pub fn load(dir: &Path) -> anyhow::Result<RegistryPlan> {
        let p = dir.join(super::PLAN_FILE);
        let text = fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
    }
}

/// A client of one registry (plain HTTP), optionally with basic auth.
pub struct Registry {
    pub addr: SocketAddr,
    auth: Option<String>,
    agent: ureq::Agent,
}

/// A response: status, one header, body.
pub struct Reply {
    pub status: u16,
    pub location: Option<String>,
    pub content_type: Option<String>,
    pub docker_digest: Option<String>,
    pub www_authenticate: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Registry {
    pub fn new(addr: SocketAddr, credentials: Option<(&str, &str)>) -> Registry {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .max_redirects(0)
            .build()
            .into();
        Registry {
            addr,
            auth: credentials.map(|(u, p)| {
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
                )
            }),
            agent,
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http://") {
            path.to_owned()
        } else {
            format!("http://{}{path}", self.addr)
        }
    }

    /// One request. `body` None sends no body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        accept: Option<&str>,
        body: Option<&[u8]>,
    ) -> anyhow::Result<Reply> {
        let url = self.url(path);
        let mut b = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(a) = &self.auth {
            b = b.header("Authorization", a);
        }
        if let Some(c) = content_type {
            b = b.header("Content-Type", c);
        }
        if let Some(a) = accept {
            b = b.header("Accept", a);
        }
        let resp = match body {
            Some(bytes) => self.agent.run(b.body(bytes)?),
            None => self.agent.run(b.body(())?),
        }
        .with_context(|| format!("{method} {url}"))?;
        let h = |n: &str| {
            resp.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (status, location, content_type, docker_digest, www_authenticate) = (
            resp.status().as_u16(),
            h("location"),
            h("content-type"),
            h("docker-content-digest"),
            h("www-authenticate"),
        );
        let body = if method == "HEAD" {
            Vec::new()
        } else {
            resp.into_body()
                .with_config()
                .limit(64 << 20)
                .read_to_vec()
                .with_context(|| format!("reading the answer to {method} {url}"))?
        };
        Ok(Reply {
            status,
            location,
            content_type,
            docker_digest,
            www_authenticate,
            body,
        })
    }

    /// Waits until `GET /v2/` answers (200, or 401 on the auth registry).
    pub fn wait_ready(&self, within: Duration) -> anyhow::Result<()> {
        let t = Instant::now();
        let mut last = String::new();
        while t.elapsed() < within {
            match self.request("GET", "/v2/", None, None, None) {
                Ok(r) if r.status == 200 || r.status == 401 => return Ok(()),
                Ok(r) => last = format!("status {}", r.status),
                Err(e) => last = format!("{e:#}"),
            }
            sleep(Duration::from_millis(100));
        }
        bail!(
            "the registry on {} did not answer GET /v2/ within {} s (last: {last})",
            self.addr,
            within.as_secs()
        )
    }

    fn push_blob(&self, repo: &str, blob: &Blob) -> anyhow::Result<()> {
        let head = self.request(
            "HEAD",
            &format!("/v2/{repo}/blobs/{}", blob.digest),
            None,
            None,
            None,
        )?;
        if head.status == 200 {
            return Ok(());
        }
        let start = self.request(
            "POST",
            &format!("/v2/{repo}/blobs/uploads/"),
            None,
            None,
            Some(&[]),
        )?;
        if start.status != 202 {
            bail!(
                "starting an upload to {}/{repo}: status {}: {}",
                self.addr,
                start.status,
                start.text()
            );
        }
        let loc = start
            .location
            .context("the registry gave no Location for the upload")?;
        let sep = if loc.contains('?') { '&' } else { '?' };
        let put = self.request(
            "PUT",
            &format!("{loc}{sep}digest={}", blob.digest),
            Some("application/octet-stream"),
            None,
            Some(&blob.bytes),
        )?;
        if put.status != 201 {
            bail!(
                "uploading {} to {}/{repo}: status {}: {}",
                blob.digest,
                self.addr,
                put.status,
                put.text()
            );
        }
        Ok(())
    }

    /// Pushes an image's blobs and its manifest under `tag`.
    pub fn push(&self, repo: &str, tag: &str, image: &Image) -> anyhow::Result<()> {
        for l in &image.layers {
            self.push_blob(repo, &l.blob)?;
        }
        self.push_blob(repo, &image.config)?;
        let r = self.request(
            "PUT",
            &format!("/v2/{repo}/manifests/{tag}"),
            Some(image.manifest.media_type),
            None,
            Some(&image.manifest.bytes),
        )?;
        if r.status != 201 {
            bail!(
                "putting the manifest {repo}:{tag} to {}: status {}: {}",
                self.addr,
                r.status,
                r.text()
            );
        }
        if r.docker_digest.as_deref() != Some(image.manifest.digest.as_str()) {
            bail!(
                "the registry on {} stored {repo}:{tag} as {:?}, not {}",
                self.addr,
                r.docker_digest,
                image.manifest.digest
            );
        }
        Ok(())
    }

    /// GET of a manifest, accepting the OCI manifest type.
    pub fn get_manifest(&self, repo: &str, reference: &str) -> anyhow::Result<Reply> {
        self.request(
            "GET",
            &format!("/v2/{repo}/manifests/{reference}"),
            None,
            Some(super::oci::MEDIA_MANIFEST),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_text() {
        let c = registry_config(
            Path::new("/x/storage"),
            "127.0.0.1:5000".parse().unwrap(),
            "registry-auth",
            Some(Path::new("/x/htpasswd")),
        );
        let v: serde_json::Value = serde_saphyr::from_str(&c).unwrap();
        assert_eq!(v["http"]["addr"], "127.0.0.1:5000");
        assert_eq!(v["storage"]["filesystem"]["rootdirectory"], "/x/storage");
        assert_eq!(v["auth"]["htpasswd"]["path"], "/x/htpasswd");
        assert_eq!(v["log"]["fields"]["service"], "registry-auth");
        let open = registry_config(
            Path::new("/x/storage"),
            "127.0.0.1:5000".parse().unwrap(),
            "registry-open",
            None,
        );
        let v: serde_json::Value = serde_saphyr::from_str(&open).unwrap();
        assert!(v.get("auth").is_none());
    }
}
