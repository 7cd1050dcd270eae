//! A real Kubernetes control plane (etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler) on 127.0.0.1 for the live tests,
//! behind `cargo xtask cluster up|down|env|status` and the live test
//! binary. The simulator (`mdiag_harness_sim`) adds fake nodes; with
//! [`UpOptions::real_node`] the cluster also gets the local registries and
//! one real node ([`mdiag_harness_node`]), and then runs inside namespaces of its
//! own ([`mdiag_harness_node::ns`]).
//!
//! The binaries come from `harness/build.sh` (see harness/README.md). All
//! state lives in `$MDIAG_CLUSTER_DIR` (default `<repo>/target/cluster`):
//!
//! ```text
//! admin.kubeconfig     identity mdiag-admin, group system:masters
//! viewer.kubeconfig    identity mdiag-viewer, bound to the ClusterRole view
//! cluster.env          KEY=value facts: ports, server URL, bin dir
//! pids                 "<name> <pid> <start time> <exe>" per started process
//! pki/                 ca.{crt,key}, apiserver.{crt,key}, sa.{key,pub}, client certs
//! logs/<name>.log      output of each component
//! logs/audit.log       the apiserver's audit log: every request at Metadata level
//! etcd/                etcd's data
//! registry/            the local registries (real node only, see mdiag_harness_node::images)
//! node/                the real node's containerd, CNI and kubelet files
//! ```

pub mod audit;
mod kubeconfig;
mod pki;
mod procs;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use mdiag_harness_node::{self as node, NodeConfig, ns};
use pki::Pki;
use procs::{Record, Started};

/// The service range; the `kubernetes` Service gets its first address.
const SERVICE_CIDR: &str = "10.96.0.0/16";
const SERVICE_IP: &str = "10.96.0.1";
/// How long each wait of `up` may take.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Where things are: the repository and the cluster's state dir.
pub struct Layout {
    repo: PathBuf,
    dir: PathBuf,
}

fn repo_root() -> anyhow::Result<PathBuf> {
    // This crate is harness/cluster/: the repository is two levels up.
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .context("the harness cluster crate is not two levels below the repository")?
        .to_path_buf())
}

impl Layout {
    /// A cluster whose state lives in `dir`.
    pub fn at(dir: PathBuf) -> anyhow::Result<Self> {
        Ok(Layout {
            repo: repo_root()?,
            dir,
        })
    }

    /// `$MDIAG_CLUSTER_DIR`, else `<repo>/target/cluster`.
    pub fn from_env() -> anyhow::Result<Self> {
        let repo = repo_root()?;
        let dir = match std::env::var_os("MDIAG_CLUSTER_DIR") {
            Some(d) if !d.is_empty() => {
                let d = PathBuf::from(d);
                if d.is_absolute() {
                    d
                } else {
                    std::env::current_dir()?.join(d)
                }
            }
            _ => repo.join("target").join("cluster"),
        };
        Ok(Layout { repo, dir })
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    fn pids(&self) -> PathBuf {
        self.path("pids")
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn admin_kubeconfig(&self) -> PathBuf {
        self.path("admin.kubeconfig")
    }
    /// The apiserver's audit log (JSON lines; crate::audit reads it).
    pub fn audit_log(&self) -> PathBuf {
        self.path("logs").join("audit.log")
    }
    pub fn viewer_kubeconfig(&self) -> PathBuf {
        self.path("viewer.kubeconfig")
    }
    /// Where the control-plane binaries (kubectl too) of the running cluster are.
    pub fn bin_dir(&self) -> Option<PathBuf> {
        self.read_env().get("BIN_DIR").map(PathBuf::from)
    }
    fn log(&self, name: &str) -> PathBuf {
        self.path("logs").join(format!("{name}.log"))
    }
    /// Serialises `up` and `down` on one state dir. The lock file sits
    /// beside the state dir, which `down` removes.
    pub fn lock(&self) -> anyhow::Result<fs::File> {
        let name = self.dir.file_name().context("state dir has no name")?;
        let path = self
            .dir
            .with_file_name(format!("{}.lock", name.to_string_lossy()));
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if file.try_lock().is_err() {
            eprintln!(
                "waiting for another `cargo xtask cluster` on {}",
                self.dir.display()
            );
            file.lock()
                .with_context(|| format!("locking {}", path.display()))?;
        }
        Ok(file)
    }
    fn cluster_env(&self) -> PathBuf {
        self.path("cluster.env")
    }
    fn read_env(&self) -> BTreeMap<String, String> {
        fs::read_to_string(self.cluster_env())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }
}

/// Writes one kubeconfig at `path` with a context per cluster, named as
/// given, each with the identity `viewer` picks (the view-only one, or
/// the admin): what a triage over several clusters is given. The first is
/// the current context.
pub fn write_contexts(
    path: &Path,
    clusters: &[(&str, &Layout)],
    viewer: bool,
) -> anyhow::Result<()> {
    let id = if viewer { &pki::VIEWER } else { &pki::ADMIN };
    let mut found = Vec::new();
    for (name, layout) in clusters {
        let server = layout
            .read_env()
            .get("SERVER")
            .cloned()
            .with_context(|| format!("no SERVER in {}'s cluster.env", layout.dir.display()))?;
        found.push((*name, server, Pki::new(layout.path("pki"))));
    }
    let contexts: Vec<kubeconfig::ContextOf> = found
        .iter()
        .map(|(name, server, pki)| kubeconfig::ContextOf {
            name,
            server,
            pki,
            id,
        })
        .collect();
    kubeconfig::write_contexts(path, &contexts)
}

/// The start time of a pid (field 22 of /proc/<pid>/stat), while it is
/// alive and not a zombie.
pub fn proc_start_time(pid: i32) -> Option<u64> {
    procs::start_time_if_alive(pid)
}

// ---------------------------------------------------------------- up

/// What `up` starts besides the control plane.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpOptions {
    /// The local registries (with the images pushed) and a real node
    /// (containerd + kubelet). Only inside the cluster's own namespaces:
    /// see [`mdiag_harness_node::ns`].
    pub real_node: bool,
}

/// Starts the cluster (or finds it running), building the binaries first
/// when they are not cached.
pub fn up(layout: &Layout) -> anyhow::Result<()> {
    up_with(layout, UpOptions::default()).map(|_| ())
}

/// What a started cluster offers beyond the control plane.
#[derive(Debug, Default)]
pub struct Up {
    /// The images on the local registries (with a real node, when `up`
    /// started it; also written to `images.json` in the state dir).
    pub images: Option<mdiag_harness_node::images::Images>,
}

/// [`up`], with options.
pub fn up_with(layout: &Layout, opts: UpOptions) -> anyhow::Result<Up> {
    let t0 = Instant::now();
    let records = procs::read_records(&layout.pids())?;
    if !records.is_empty() {
        let alive = records.iter().filter(|r| r.is_alive()).count();
        let want_node = [node::CONTAINERD, node::KUBELET];
        if alive == records.len()
            && COMPONENTS
                .iter()
                .all(|c| records.iter().any(|r| r.name == *c))
            && (!opts.real_node
                || want_node
                    .iter()
                    .all(|c| records.iter().any(|r| r.name == *c)))
        {
            let images = if opts.real_node {
                Some(mdiag_harness_node::images::Images::load(&layout.dir)?)
            } else {
                None
            };
            let bin = PathBuf::from(
                layout
                    .read_env()
                    .get("BIN_DIR")
                    .cloned()
                    .unwrap_or_default(),
            );
            if readyz(&bin, &layout.admin_kubeconfig()) {
                eprintln!("cluster is already up (state in {})", layout.dir.display());
                print_env(layout);
                return Ok(Up { images });
            }
            eprintln!("cluster processes are running but /readyz does not answer ok; restarting");
        } else if alive > 0 {
            eprintln!(
                "only {alive} of {} cluster processes are running; restarting",
                records.len()
            );
        }
        procs::stop(&stop_order(&records), Duration::from_secs(5))?;
        cleanup_node(layout)?;
    }
    if layout.dir.exists() {
        fs::remove_dir_all(&layout.dir)
            .with_context(|| format!("removing old state {}", layout.dir.display()))?;
    }

    let bin = binaries(layout)?;
    let kubelet = if opts.real_node {
        let k = kubelet_binary(layout)?;
        node::preflight(&k)?;
        Some(k)
    } else {
        None
    };
    let t_build = t0.elapsed();
    let t1 = Instant::now();

    fs::create_dir_all(layout.path("logs"))?;
    let ports = Ports::pick()?;
    let server = format!("https://127.0.0.1:{}", ports.apiserver);

    let pki = Pki::new(layout.path("pki"));
    pki.generate(SERVICE_IP, (node::NODE_NAME, ns::NODE_IP))
        .context("making certificates")?;
    kubeconfig::write(&layout.admin_kubeconfig(), &server, &pki, &pki::ADMIN)?;
    kubeconfig::write(&layout.viewer_kubeconfig(), &server, &pki, &pki::VIEWER)?;
    let kcm_kubeconfig = layout.path(KCM_KUBECONFIG);
    let sched_kubeconfig = layout.path(SCHEDULER_KUBECONFIG);
    kubeconfig::write(&kcm_kubeconfig, &server, &pki, &pki::CONTROLLER_MANAGER)?;
    kubeconfig::write(&sched_kubeconfig, &server, &pki, &pki::SCHEDULER)?;
    write_cluster_env(layout, &bin, &ports, &server)?;

    let mut started: Vec<Started> = Vec::new();
    let mut images = None;
    let mut t_node = None;
    let result =
        start_all(layout, &bin, &ports, &pki, opts, &mut started).and_then(|()| match &kubelet {
            Some(k) => {
                let t = Instant::now();
                images = Some(start_node(layout, &bin, k, &pki, &server, &mut started)?);
                t_node = Some(t.elapsed());
                Ok(())
            }
            None => Ok(()),
        });
    if let Err(e) = result {
        eprintln!("\ncluster up failed: {e:#}\n");
        for s in &started {
            eprintln!("===== last lines of {} =====", s.log.display());
            eprintln!("{}\n", procs::tail(&s.log, 40));
        }
        procs::stop_started(&mut started);
        if kubelet.is_some()
            && let Err(c) = cleanup_node(layout)
        {
            eprintln!("cleaning up the node: {c:#}");
        }
        let _ = fs::remove_file(layout.pids());
        eprintln!(
            "stopped what was started; logs are kept in {}",
            layout.path("logs").display()
        );
        return Err(e);
    }
    let node_note = t_node
        .map(|t| format!(", the real node's part {:.1} s", t.as_secs_f64()))
        .unwrap_or_default();
    eprintln!(
        "cluster is up in {:.1} s{node_note} (plus {:.1} s finding the binaries): {server}",
        t1.elapsed().as_secs_f64(),
        t_build.as_secs_f64()
    );
    print_env(layout);
    Ok(Up { images })
}

const KCM_KUBECONFIG: &str = "controller-manager.kubeconfig";
const SCHEDULER_KUBECONFIG: &str = "scheduler.kubeconfig";

/// The node lifecycle controller's grace period in a cluster with a real
/// node (see [`UpOptions::real_node`]).
pub const NODE_MONITOR_GRACE: Duration = Duration::from_secs(20);

/// How long the node may take to report Ready.
const NODE_READY_TIMEOUT: Duration = Duration::from_secs(120);

/// The registries (with the images pushed), containerd and the kubelet;
/// waits for the Node to be Ready.
fn start_node(
    layout: &Layout,
    bin: &Path,
    kubelet: &Path,
    pki: &Pki,
    server: &str,
    started: &mut Vec<Started>,
) -> anyhow::Result<mdiag_harness_node::images::Images> {
    let plan = mdiag_harness_node::images::plan(&layout.path("registry"))
        .context("planning the registries")?;
    for p in &plan.processes {
        spawn_exe(layout, &p.name, &p.exe, &p.args, &p.log, started)?;
    }
    let images = mdiag_harness_node::images::push_all(&plan).context("pushing the images")?;
    images.save(&layout.dir)?;

    let cfg = node_config(layout, kubelet.to_owned(), pki, server, &images)?;
    ns::make_cgroups(&cfg.cgroup_root)?;
    let [containerd, kubelet_launch] = node::prepare(&cfg)?;
    spawn_exe(
        layout,
        containerd.name,
        &containerd.exe,
        &containerd.args,
        &format!("{}.log", containerd.name),
        started,
    )?;
    wait_for(started, "containerd's socket", || {
        node::containerd_listening(&cfg)
    })?;
    spawn_exe(
        layout,
        kubelet_launch.name,
        &kubelet_launch.exe,
        &kubelet_launch.args,
        &format!("{}.log", kubelet_launch.name),
        started,
    )?;
    let admin = layout.admin_kubeconfig();
    wait_for_within(
        started,
        &format!("node {} to be Ready", node::NODE_NAME),
        NODE_READY_TIMEOUT,
        || {
            kubectl(
                bin,
                &admin,
                &[
                    "get",
                    "node",
                    node::NODE_NAME,
                    "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
                ],
                None,
                Duration::from_secs(5),
            )
            .is_ok_and(|s| s.trim() == "True")
        },
    )?;
    Ok(images)
}

/// The real node's config as `up` made it (the cgroup root is recorded in
/// cluster.env).
fn node_config(
    layout: &Layout,
    kubelet: PathBuf,
    pki: &Pki,
    server: &str,
    images: &mdiag_harness_node::images::Images,
) -> anyhow::Result<NodeConfig> {
    Ok(NodeConfig {
        dir: layout.path("node"),
        server: server.to_owned(),
        ca_crt: pki.ca_crt(),
        client_crt: pki.client_crt(&pki::NODE),
        client_key: pki.client_key(&pki::NODE),
        serving_crt: pki.kubelet_serving_crt(),
        serving_key: pki.kubelet_serving_key(),
        kubelet,
        sandbox_image: images.pause.clone(),
        registries: images.containerd.hosts.clone(),
        cgroup_root: node_cgroup_root()?,
    })
}

/// The kubelet's cgroup root, named by the namespace set's tag.
fn node_cgroup_root() -> anyhow::Result<String> {
    let tag = ns::tag().context(
        "the real node runs only inside the cluster's namespaces (MDIAG_NS_TAG is not set)",
    )?;
    Ok(ns::cgroup_root(&tag))
}

/// After the node's processes are stopped: what they left (shims, pod
/// processes, mounts, pod netns, cgroups). Nothing to do without a node.
fn cleanup_node(layout: &Layout) -> anyhow::Result<()> {
    let dir = layout.path("node");
    if !dir.exists() {
        return Ok(());
    }
    let server = layout.read_env().get("SERVER").cloned().unwrap_or_default();
    let pki = Pki::new(layout.path("pki"));
    let cfg = NodeConfig {
        dir,
        server,
        ca_crt: pki.ca_crt(),
        client_crt: pki.client_crt(&pki::NODE),
        client_key: pki.client_key(&pki::NODE),
        serving_crt: pki.kubelet_serving_crt(),
        serving_key: pki.kubelet_serving_key(),
        kubelet: PathBuf::new(),
        sandbox_image: String::new(),
        registries: Vec::new(),
        cgroup_root: node_cgroup_root()?,
    };
    node::cleanup(&cfg)
}

/// What a stopped real node left inside the namespaces (see
/// [`node::leftovers`]); empty when it is fully gone.
pub fn node_leftovers(layout: &Layout) -> anyhow::Result<Vec<String>> {
    let pki = Pki::new(layout.path("pki"));
    let cfg = NodeConfig {
        dir: layout.path("node"),
        server: String::new(),
        ca_crt: pki.ca_crt(),
        client_crt: PathBuf::new(),
        client_key: PathBuf::new(),
        serving_crt: PathBuf::new(),
        serving_key: PathBuf::new(),
        kubelet: PathBuf::new(),
        sandbox_image: String::new(),
        registries: Vec::new(),
        cgroup_root: node_cgroup_root()?,
    };
    let mut left = node::leftovers(&cfg);
    for name in [node::KUBELET, node::CONTAINERD] {
        if running(layout, name) {
            left.push(format!("{name} is running"));
        }
    }
    Ok(left)
}

/// Stops the real node (kubelet, then containerd) and removes everything
/// it left, so that [`start_node_again`] starts it from nothing. The Node
/// object stays (it goes NotReady, then Unknown, as a lost node does).
pub fn stop_node(layout: &Layout) -> anyhow::Result<()> {
    let records = procs::read_records(&layout.pids())?;
    let (stopped, kept): (Vec<Record>, Vec<Record>) = records
        .into_iter()
        .partition(|r| r.name == node::KUBELET || r.name == node::CONTAINERD);
    if stopped.is_empty() {
        bail!("no real node recorded in {}", layout.pids().display());
    }
    procs::stop(&stop_order(&stopped), Duration::from_secs(10))?;
    procs::write_records(&layout.pids(), &kept)?;
    cleanup_node(layout)?;
    // The next start finds no state of the old containerd and kubelet.
    for d in [
        "containerd/root",
        "containerd/state",
        "kubelet/root",
        "cni/ipam",
        "pod-logs",
    ] {
        let p = layout.path("node").join(d);
        if p.exists() {
            fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
        }
        fs::create_dir_all(&p)?;
    }
    Ok(())
}

/// Starts the real node again after [`stop_node`] and waits for Ready.
pub fn start_node_again(layout: &Layout) -> anyhow::Result<()> {
    let cfg_dir = layout.path("node");
    if !cfg_dir.exists() {
        bail!("this cluster has no real node");
    }
    let t = Instant::now();
    let bin = layout.bin_dir().context("no BIN_DIR in cluster.env")?;
    let admin = layout.admin_kubeconfig();
    let old_beat = node_ready_heartbeat(&bin, &admin).map(|(_, beat)| beat);
    start_component(layout, node::CONTAINERD)?;
    let sock = cfg_dir.join("containerd").join("containerd.sock");
    let mut none: Vec<Started> = Vec::new();
    wait_for(&mut none, "containerd's socket", || {
        std::os::unix::net::UnixStream::connect(&sock).is_ok()
    })?;
    start_kubelet_after(layout, &bin, old_beat)?;
    eprintln!(
        "  the real node is Ready again after {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Stops only the real node's kubelet: its containers go on running under
/// containerd, as when a kubelet dies on a live machine. The node lifecycle
/// controller marks the Node NotReady after [`NODE_MONITOR_GRACE`].
pub fn stop_kubelet(layout: &Layout) -> anyhow::Result<()> {
    stop_component(layout, node::KUBELET)
}

/// Starts the kubelet again after [`stop_kubelet`] and waits for the Node
/// to be Ready.
pub fn start_kubelet_again(layout: &Layout) -> anyhow::Result<()> {
    let bin = layout.bin_dir().context("no BIN_DIR in cluster.env")?;
    let old_beat = node_ready_heartbeat(&bin, &layout.admin_kubeconfig()).map(|(_, beat)| beat);
    start_kubelet_after(layout, &bin, old_beat)
}

fn start_kubelet_after(
    layout: &Layout,
    bin: &Path,
    old_beat: Option<String>,
) -> anyhow::Result<()> {
    let admin = layout.admin_kubeconfig();
    let mut none: Vec<Started> = Vec::new();
    start_component(layout, node::KUBELET)?;
    // Ready counts once the new kubelet has written it: with a heartbeat
    // other than the one the stopped kubelet left.
    wait_for_within(
        &mut none,
        &format!("node {} to be Ready", node::NODE_NAME),
        NODE_READY_TIMEOUT,
        || {
            node_ready_heartbeat(bin, &admin)
                .is_some_and(|(status, beat)| status == "True" && Some(&beat) != old_beat.as_ref())
        },
    )
}

/// The Node's Ready status and its last heartbeat, as kubectl prints them.
fn node_ready_heartbeat(bin: &Path, kubeconfig: &Path) -> Option<(String, String)> {
    let out = kubectl(
        bin,
        kubeconfig,
        &[
            "get",
            "node",
            node::NODE_NAME,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status} {.status.conditions[?(@.type==\"Ready\")].lastHeartbeatTime}",
        ],
        None,
        Duration::from_secs(5),
    )
    .ok()?;
    let mut it = out.split_whitespace();
    Some((it.next()?.to_owned(), it.next()?.to_owned()))
}

const COMPONENTS: [&str; 4] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// Stop dependants before what they depend on.
fn stop_order(records: &[Record]) -> Vec<Record> {
    let mut v = records.to_vec();
    v.reverse();
    v
}

fn start_all(
    layout: &Layout,
    bin: &Path,
    ports: &Ports,
    pki: &Pki,
    opts: UpOptions,
    started: &mut Vec<Started>,
) -> anyhow::Result<()> {
    let p = |path: PathBuf| path.display().to_string();
    let kcm_kubeconfig = &layout.path(KCM_KUBECONFIG);
    let sched_kubeconfig = &layout.path(SCHEDULER_KUBECONFIG);

    // etcd, without TLS: it listens on the loopback only.
    let etcd_client = format!("http://127.0.0.1:{}", ports.etcd_client);
    let etcd_peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
    let args = vec![
        "--name=mdiag".to_owned(),
        format!("--data-dir={}", p(layout.path("etcd"))),
        format!("--listen-client-urls={etcd_client}"),
        format!("--advertise-client-urls={etcd_client}"),
        format!("--listen-peer-urls={etcd_peer}"),
        format!("--initial-advertise-peer-urls={etcd_peer}"),
        format!("--initial-cluster=mdiag={etcd_peer}"),
        "--initial-cluster-state=new".to_owned(),
        // A throwaway test store: no fsync makes it much faster.
        "--unsafe-no-fsync=true".to_owned(),
        "--log-level=warn".to_owned(),
    ];
    spawn(layout, bin, "etcd", &args, started)?;
    wait_for(started, "etcd to accept connections", || {
        TcpStream::connect_timeout(
            &([127, 0, 0, 1], ports.etcd_client).into(),
            Duration::from_millis(200),
        )
        .is_ok()
    })?;

    let audit_policy = layout.path("audit-policy.yaml");
    fs::write(&audit_policy, crate::audit::POLICY).context("writing the audit policy")?;
    let args = vec![
        "--bind-address=127.0.0.1".to_owned(),
        "--advertise-address=127.0.0.1".to_owned(),
        format!("--secure-port={}", ports.apiserver),
        format!("--etcd-servers={etcd_client}"),
        format!("--client-ca-file={}", p(pki.ca_crt())),
        format!("--tls-cert-file={}", p(pki.serving_crt())),
        format!("--tls-private-key-file={}", p(pki.serving_key())),
        format!("--service-account-key-file={}", p(pki.sa_pub())),
        format!("--service-account-signing-key-file={}", p(pki.sa_key())),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
        format!("--service-cluster-ip-range={SERVICE_CIDR}"),
        "--authorization-mode=Node,RBAC".to_owned(),
        // The fake nodes' Hostname address is the node name, which does not
        // resolve here; their InternalIP is 127.0.0.1 (as kind and kubeadm order it).
        "--kubelet-preferred-address-types=InternalIP,Hostname".to_owned(),
        // The aggregation layer's requestheader setup; delegated
        // authentication in the controller manager and scheduler reads it.
        format!(
            "--requestheader-client-ca-file={}",
            p(pki.front_proxy_ca_crt())
        ),
        "--requestheader-allowed-names=front-proxy-client".to_owned(),
        "--requestheader-username-headers=X-Remote-User".to_owned(),
        "--requestheader-group-headers=X-Remote-Group".to_owned(),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_owned(),
        format!(
            "--proxy-client-cert-file={}",
            p(pki.front_proxy_client_crt())
        ),
        format!(
            "--proxy-client-key-file={}",
            p(pki.front_proxy_client_key())
        ),
        // The `kubernetes` Service keeps no endpoints: the only address it
        // could advertise is 127.0.0.1, which Endpoints may not hold.
        "--endpoint-reconciler-type=none".to_owned(),
        "--enable-admission-plugins=NodeRestriction".to_owned(),
        // How it authenticates to a kubelet (the real node checks the
        // client certificate; the simulator's log servers ignore it). The
        // kubelet's serving certificate is not verified: the simulator's
        // nodes serve self-signed ones.
        format!(
            "--kubelet-client-certificate={}",
            p(pki.client_crt(&pki::APISERVER_KUBELET_CLIENT))
        ),
        format!(
            "--kubelet-client-key={}",
            p(pki.client_key(&pki::APISERVER_KUBELET_CLIENT))
        ),
        "--allow-privileged=true".to_owned(),
        "--profiling=false".to_owned(),
        format!("--cert-dir={}", p(layout.path("kube-apiserver"))),
        // What every user asked for, so the live suite can show that mdiag
        // only reads (crate::audit).
        format!("--audit-policy-file={}", p(audit_policy)),
        format!("--audit-log-path={}", p(layout.audit_log())),
        "--audit-log-maxbackup=0".to_owned(),
    ];
    spawn(layout, bin, "kube-apiserver", &args, started)?;
    let admin = layout.admin_kubeconfig();
    wait_for(started, "kube-apiserver /readyz", || readyz(bin, &admin))?;

    // RBAC: the viewer gets the built-in `view` ClusterRole. The controller
    // manager runs every controller with its own identity
    // (--use-service-account-credentials=false), and the built-in
    // system:kube-controller-manager ClusterRole only covers what it needs to
    // hand out per-controller credentials, so it also gets cluster-admin.
    kubectl(
        bin,
        &admin,
        &["apply", "-f", "-"],
        Some(RBAC),
        Duration::from_secs(30),
    )
    .context("applying RBAC")?;

    let kcm_dir = layout.path("kube-controller-manager");
    let args = vec![
        format!("--kubeconfig={}", p(kcm_kubeconfig.to_owned())),
        format!(
            "--authentication-kubeconfig={}",
            p(kcm_kubeconfig.to_owned())
        ),
        format!(
            "--authorization-kubeconfig={}",
            p(kcm_kubeconfig.to_owned())
        ),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--secure-port={}", ports.controller_manager),
        format!("--cert-dir={}", p(kcm_dir)),
        "--leader-elect=true".to_owned(),
        // It exits when it cannot renew its Lease in time: long enough to
        // outlive the apiserver restarts the gate tests make.
        "--leader-elect-lease-duration=45s".to_owned(),
        "--leader-elect-renew-deadline=35s".to_owned(),
        "--use-service-account-credentials=false".to_owned(),
        "--controllers=*".to_owned(),
        format!("--service-account-private-key-file={}", p(pki.sa_key())),
        format!("--root-ca-file={}", p(pki.ca_crt())),
        format!("--cluster-signing-cert-file={}", p(pki.ca_crt())),
        format!("--cluster-signing-key-file={}", p(pki.ca_key())),
        format!("--service-cluster-ip-range={SERVICE_CIDR}"),
        "--cluster-name=mdiag".to_owned(),
        "--profiling=false".to_owned(),
    ];
    let mut args = args;
    if opts.real_node {
        // A lost real node is marked NotReady 20 s after its last Lease
        // renewal (default 50 s); its kubelet renews every 5 s
        // (nodeLeaseDurationSeconds 20) and the simulator's nodes heartbeat
        // every 5 s in that cluster, so neither flaps on a busy machine.
        args.push(format!(
            "--node-monitor-grace-period={}s",
            NODE_MONITOR_GRACE.as_secs()
        ));
    }
    spawn(layout, bin, "kube-controller-manager", &args, started)?;

    let args = vec![
        format!("--kubeconfig={}", p(sched_kubeconfig.to_owned())),
        format!(
            "--authentication-kubeconfig={}",
            p(sched_kubeconfig.to_owned())
        ),
        format!(
            "--authorization-kubeconfig={}",
            p(sched_kubeconfig.to_owned())
        ),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--secure-port={}", ports.scheduler),
        format!("--cert-dir={}", p(layout.path("kube-scheduler"))),
        "--leader-elect=true".to_owned(),
        // As the controller-manager; a stopped scheduler still releases its
        // Lease at once, so scheduler-silent is seen as quickly.
        "--leader-elect-lease-duration=45s".to_owned(),
        "--leader-elect-renew-deadline=35s".to_owned(),
        "--profiling=false".to_owned(),
    ];
    spawn(layout, bin, "kube-scheduler", &args, started)?;

    // Both hold their leader-election Lease once they are working.
    wait_for(
        started,
        "the Leases kube-system/kube-controller-manager and kube-scheduler",
        || {
            kubectl(
                bin,
                &admin,
                &[
                    "get",
                    "lease",
                    "-n",
                    "kube-system",
                    "kube-controller-manager",
                    "kube-scheduler",
                    "-o",
                    "jsonpath={range .items[*]}{.spec.holderIdentity}{\"\\n\"}{end}",
                ],
                None,
                Duration::from_secs(5),
            )
            .is_ok_and(|out| out.lines().filter(|l| !l.trim().is_empty()).count() == 2)
        },
    )?;
    Ok(())
}

const RBAC: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: mdiag-viewer
  labels: {app.kubernetes.io/managed-by: mdiag-xtask}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: mdiag-viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: mdiag:kube-controller-manager
  labels: {app.kubernetes.io/managed-by: mdiag-xtask}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: system:kube-controller-manager}
";

fn spawn(
    layout: &Layout,
    bin: &Path,
    name: &str,
    args: &[String],
    started: &mut Vec<Started>,
) -> anyhow::Result<()> {
    eprintln!("starting {name}");
    // Kept so that one component can be stopped and started again.
    fs::write(layout.path(&format!("{name}.args")), args.join("\n"))?;
    let s = procs::spawn(
        name,
        &bin.join(name),
        args,
        &layout.dir,
        &layout.log(name),
        &layout.pids(),
    )?;
    started.push(s);
    Ok(())
}

/// Starts a process that is not in BIN_DIR (registries, containerd, the
/// kubelet), recording its exe so `start_component` can start it again.
fn spawn_exe(
    layout: &Layout,
    name: &str,
    exe: &Path,
    args: &[String],
    log: &str,
    started: &mut Vec<Started>,
) -> anyhow::Result<()> {
    eprintln!("starting {name}");
    fs::write(layout.path(&format!("{name}.args")), args.join("\n"))?;
    fs::write(
        layout.path(&format!("{name}.exe")),
        exe.display().to_string(),
    )?;
    fs::write(layout.path(&format!("{name}.logname")), log)?;
    let s = procs::spawn(
        name,
        exe,
        args,
        &layout.dir,
        &layout.path("logs").join(log),
        &layout.pids(),
    )?;
    started.push(s);
    Ok(())
}

/// Polls `ready` until it holds, failing early when a started process exits
/// and after READY_TIMEOUT.
fn wait_for(
    started: &mut [Started],
    what: &str,
    ready: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    wait_for_within(started, what, READY_TIMEOUT, ready)
}

fn wait_for_within(
    started: &mut [Started],
    what: &str,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let t = Instant::now();
    loop {
        for s in started.iter_mut() {
            if let Some(status) = s.exited() {
                bail!(
                    "{} exited ({status}) while waiting for {what}",
                    s.record.name
                );
            }
        }
        if ready() {
            eprintln!("  {what}: ready after {:.1} s", t.elapsed().as_secs_f64());
            return Ok(());
        }
        if t.elapsed() > timeout {
            bail!("timed out after {} s waiting for {what}", timeout.as_secs());
        }
        sleep(Duration::from_millis(250));
    }
}

fn readyz(bin: &Path, kubeconfig: &Path) -> bool {
    kubectl(
        bin,
        kubeconfig,
        &["get", "--raw", "/readyz"],
        None,
        Duration::from_secs(3),
    )
    .is_ok_and(|o| o.trim() == "ok")
}

/// Runs the built kubectl; returns its stdout, or an error with its stderr.
fn kubectl(
    bin: &Path,
    kubeconfig: &Path,
    args: &[&str],
    stdin: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<String> {
    let mut cmd = Command::new(bin.join("kubectl"));
    cmd.arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg(format!("--request-timeout={}s", timeout.as_secs()))
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("running {}", bin.join("kubectl").display()))?;
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .context("kubectl stdin")?
            .write_all(input.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "kubectl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs harness/build.sh (with `what`, or none) and returns the bin dir it
/// prints last.
fn build_sh(layout: &Layout, what: Option<&str>) -> anyhow::Result<PathBuf> {
    let script = layout.repo.join("harness").join("build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(what)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .context("build.sh printed no bin dir")?;
    Ok(PathBuf::from(last.trim()))
}

/// Builds (or finds cached) every binary `up` needs, the kubelet too: for
/// a caller that is about to enter namespaces with no network.
pub fn build_all(layout: &Layout) -> anyhow::Result<()> {
    binaries(layout)?;
    kubelet_binary(layout)?;
    Ok(())
}

/// The kubelet: `$MDIAG_KUBELET` when set, else `harness/build.sh kubelet`.
pub fn kubelet_binary(layout: &Layout) -> anyhow::Result<PathBuf> {
    let exe = match std::env::var_os("MDIAG_KUBELET") {
        Some(k) if !k.is_empty() => PathBuf::from(k),
        _ => build_sh(layout, Some("kubelet"))?.join("kubelet"),
    };
    if !exe.is_file() {
        bail!(
            "the kubelet is missing: {} (build it with `harness/build.sh kubelet`)",
            exe.display()
        );
    }
    Ok(exe)
}

/// Finds the binaries: `$MDIAG_HARNESS_BIN` when set, else whatever
/// harness/build.sh builds or has cached (its last stdout line).
fn binaries(layout: &Layout) -> anyhow::Result<PathBuf> {
    let bin = match std::env::var_os("MDIAG_HARNESS_BIN") {
        Some(b) if !b.is_empty() => PathBuf::from(b),
        _ => build_sh(layout, None)?,
    };
    for name in COMPONENTS.iter().chain(&["kubectl"]) {
        if !bin.join(name).is_file() {
            bail!("{} is missing from {}", name, bin.display());
        }
    }
    Ok(bin)
}

/// Loopback ports for everything that listens.
struct Ports {
    etcd_client: u16,
    etcd_peer: u16,
    apiserver: u16,
    controller_manager: u16,
    scheduler: u16,
}

impl Ports {
    /// Asks the kernel for five distinct free ports (all held open until
    /// every one is picked).
    fn pick() -> anyhow::Result<Self> {
        let listeners: Vec<TcpListener> = (0..5)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<_>>()?;
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<std::io::Result<_>>()?;
        Ok(Ports {
            etcd_client: ports[0],
            etcd_peer: ports[1],
            apiserver: ports[2],
            controller_manager: ports[3],
            scheduler: ports[4],
        })
    }
}

fn write_cluster_env(
    layout: &Layout,
    bin: &Path,
    ports: &Ports,
    server: &str,
) -> anyhow::Result<()> {
    let text = format!(
        "SERVER={server}\n\
         BIN_DIR={}\n\
         ETCD_CLIENT_URL=http://127.0.0.1:{}\n\
         ETCD_PEER_PORT={}\n\
         APISERVER_PORT={}\n\
         CONTROLLER_MANAGER_PORT={}\n\
         SCHEDULER_PORT={}\n\
         SERVICE_CIDR={SERVICE_CIDR}\n\
         ADMIN_KUBECONFIG={}\n\
         VIEWER_KUBECONFIG={}\n",
        bin.display(),
        ports.etcd_client,
        ports.etcd_peer,
        ports.apiserver,
        ports.controller_manager,
        ports.scheduler,
        layout.admin_kubeconfig().display(),
        layout.viewer_kubeconfig().display(),
    );
    fs::write(layout.cluster_env(), text)?;
    Ok(())
}

// ---------------------------------------------------------------- down

/// Stops exactly the processes `up` started, by pid, and removes the state.
pub fn down(layout: &Layout) -> anyhow::Result<()> {
    if !layout.dir.exists() {
        eprintln!(
            "no cluster state at {}; nothing to stop",
            layout.dir.display()
        );
        return Ok(());
    }
    let records = procs::read_records(&layout.pids())?;
    procs::stop(&stop_order(&records), Duration::from_secs(5))?;
    cleanup_node(layout)?;
    if ns::inside() {
        // Anything else mounted in the state dir (in our own mount namespace).
        ns::unmount_under(&layout.dir)?;
    }
    fs::remove_dir_all(&layout.dir)
        .with_context(|| format!("removing {}", layout.dir.display()))?;
    eprintln!("cluster stopped; removed {}", layout.dir.display());
    Ok(())
}

// ---------------------------------------------------------------- one component

/// Stops one component (e.g. `kube-scheduler`) of a running cluster.
pub fn stop_component(layout: &Layout, name: &str) -> anyhow::Result<()> {
    let records = procs::read_records(&layout.pids())?;
    let (stopped, kept): (Vec<Record>, Vec<Record>) =
        records.into_iter().partition(|r| r.name == name);
    if stopped.is_empty() {
        bail!("no {name} recorded in {}", layout.pids().display());
    }
    procs::stop(&stopped, Duration::from_secs(5))?;
    procs::write_records(&layout.pids(), &kept)
}

/// Starts another long-running process beside the control plane (the
/// simulator), recorded like the others so that `down` stops it.
pub fn start_extra(layout: &Layout, name: &str, exe: &Path, args: &[String]) -> anyhow::Result<()> {
    fs::write(layout.path(&format!("{name}.args")), args.join("\n"))?;
    fs::write(
        layout.path(&format!("{name}.exe")),
        exe.display().to_string(),
    )?;
    procs::spawn(
        name,
        exe,
        args,
        &layout.dir,
        &layout.log(name),
        &layout.pids(),
    )?;
    Ok(())
}

/// Whether a recorded process of that name is alive.
pub fn running(layout: &Layout, name: &str) -> bool {
    procs::read_records(&layout.pids())
        .unwrap_or_default()
        .iter()
        .any(|r| r.name == name && r.is_alive())
}

/// Compacts etcd's history up to its current revision, so a watch that
/// resumes from an older resourceVersion gets 410 Gone. Returns the revision.
pub fn compact_etcd(layout: &Layout) -> anyhow::Result<i64> {
    let bin = layout.bin_dir().context("no BIN_DIR in cluster.env")?;
    let endpoint = layout
        .read_env()
        .get("ETCD_CLIENT_URL")
        .cloned()
        .context("no ETCD_CLIENT_URL in cluster.env")?;
    let etcdctl = |args: &[&str]| -> anyhow::Result<String> {
        let out = Command::new(bin.join("etcdctl"))
            .arg(format!("--endpoints={endpoint}"))
            .args(args)
            .output()?;
        if !out.status.success() {
            bail!(
                "etcdctl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let status: serde_json::Value =
        serde_json::from_str(&etcdctl(&["endpoint", "status", "-w", "json"])?)?;
    let revision = status[0]["Status"]["header"]["revision"]
        .as_i64()
        .context("etcdctl endpoint status gave no revision")?;
    etcdctl(&["compact", &revision.to_string()])?;
    Ok(revision)
}

/// Runs the cluster's kubectl with the admin kubeconfig.
pub fn admin_kubectl(layout: &Layout, args: &[&str]) -> anyhow::Result<String> {
    let bin = layout.bin_dir().context("no BIN_DIR in cluster.env")?;
    let out = Command::new(bin.join("kubectl"))
        .arg("--kubeconfig")
        .arg(layout.admin_kubeconfig())
        .args(args)
        .current_dir(&layout.repo)
        .output()?;
    if !out.status.success() {
        bail!(
            "kubectl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Starts a stopped component again with the arguments `up` gave it.
pub fn start_component(layout: &Layout, name: &str) -> anyhow::Result<()> {
    let args: Vec<String> = fs::read_to_string(layout.path(&format!("{name}.args")))
        .with_context(|| format!("{name} was never started here"))?
        .lines()
        .map(str::to_owned)
        .collect();
    let exe = match fs::read_to_string(layout.path(&format!("{name}.exe"))) {
        Ok(path) => PathBuf::from(path),
        Err(_) => layout
            .bin_dir()
            .context("no BIN_DIR in cluster.env")?
            .join(name),
    };
    let log = match fs::read_to_string(layout.path(&format!("{name}.logname"))) {
        Ok(l) => layout.path("logs").join(l.trim()),
        Err(_) => layout.log(name),
    };
    procs::spawn(name, &exe, &args, &layout.dir, &log, &layout.pids())?;
    eprintln!("started {name}");
    Ok(())
}

// ---------------------------------------------------------------- env, status

pub fn env(layout: &Layout) -> anyhow::Result<()> {
    if !layout.admin_kubeconfig().is_file() {
        bail!(
            "no cluster at {}; run `cargo xtask cluster up` first",
            layout.dir.display()
        );
    }
    print_env(layout);
    Ok(())
}

fn print_env(layout: &Layout) {
    println!("export KUBECONFIG={}", layout.admin_kubeconfig().display());
    println!(
        "# read-only (mdiag-viewer): export KUBECONFIG={}",
        layout.viewer_kubeconfig().display()
    );
}

pub fn status(layout: &Layout) -> anyhow::Result<()> {
    let records = procs::read_records(&layout.pids())?;
    if records.is_empty() {
        println!("down (no processes recorded in {})", layout.dir.display());
        return Ok(());
    }
    let env = layout.read_env();
    for r in &records {
        println!(
            "{:<24} pid {:<8} {}",
            r.name,
            r.pid,
            if r.is_alive() { "running" } else { "gone" }
        );
    }
    if let Some(server) = env.get("SERVER") {
        println!("server {server}");
    }
    let bin = PathBuf::from(env.get("BIN_DIR").cloned().unwrap_or_default());
    let ready = readyz(&bin, &layout.admin_kubeconfig());
    println!("readyz {}", if ready { "ok" } else { "not ok" });
    if !ready || records.iter().any(|r| !r.is_alive()) {
        bail!("the cluster is not healthy");
    }
    Ok(())
}
