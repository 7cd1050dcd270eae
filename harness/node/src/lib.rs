//! One real node beside the control plane: Debian's containerd (1.6) and
//! runc, CNI `bridge` + `host-local` from Debian's containernetworking-plugins,
//! and the kubelet built by `harness/build.sh kubelet`.
//!
//! It runs inside the namespaces of [`ns`] (never in the host's): its address
//! [`ns::NODE_IP`] is on the bridge [`ns::BRIDGE`] of our own network
//! namespace, the kubelet serves its API there (so `kubectl logs` goes
//! apiserver -> kubelet), and pods get addresses on the same bridge.
//!
//! The node registers itself as [`NODE_NAME`] with the label
//! `mdiag.dev/node=real` and the taint `mdiag.dev/node=real:NoSchedule`, so
//! only Pods that ask for it land there (see [`pin_to_real_node`]); the
//! simulator's nodes and Pods never touch it, and it carries no
//! `sim.mdiag.dev` annotation.
//!
//! Files, under `<cluster dir>/node/`:
//!
//! ```text
//! containerd/config.toml   containerd's config (root/, state/, containerd.sock, certs.d/)
//! cni/net.d/10-mdiag.conflist, cni/ipam/   CNI config and host-local's data
//! kubelet/config.yaml      the KubeletConfiguration
//! kubelet/kubeconfig       system:node:<name> in group system:nodes (signed by the harness CA)
//! kubelet/root/            the kubelet's --root-dir (pods, volumes, plugins)
//! pod-logs/                the kubelet's podLogsDir
//! ```

pub mod images;
pub mod ns;

use std::fs;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

/// The real node's name.
pub const NODE_NAME: &str = "mdiag-real-node";
/// Its label and taint key; the value is [`NODE_ROLE`].
pub const NODE_KEY: &str = "mdiag.dev/node";
pub const NODE_ROLE: &str = "real";
/// The kubelet's port on [`ns::NODE_IP`].
pub const KUBELET_PORT: u16 = 10250;
/// The cluster DNS address the kubelet writes into Pods' resolv.conf (no
/// DNS server answers there: it only keeps the kubelet from warning
/// `MissingClusterDNS` on every Pod).
pub const CLUSTER_DNS: &str = "10.96.0.10";
/// The processes, in start order (stopped in reverse).
pub const CONTAINERD: &str = "containerd";
pub const KUBELET: &str = "kubelet";

/// What the node needs from the rest of the cluster.
pub struct NodeConfig {
    /// `<cluster dir>/node`.
    pub dir: PathBuf,
    /// The apiserver's URL.
    pub server: String,
    /// The harness CA (the kubelet's client CA) and the certificates the
    /// kubelet presents: its client certificate as system:node:<name> and
    /// its serving certificate for [`ns::NODE_IP`].
    pub ca_crt: PathBuf,
    pub client_crt: PathBuf,
    pub client_key: PathBuf,
    pub serving_crt: PathBuf,
    pub serving_key: PathBuf,
    /// The kubelet binary.
    pub kubelet: PathBuf,
    /// containerd's `sandbox_image`.
    pub sandbox_image: String,
    /// `(host:port, hosts.toml)` for each plain-HTTP registry.
    pub registries: Vec<(String, String)>,
    /// The kubelet's cgroup root (made beforehand in every hierarchy).
    pub cgroup_root: String,
}

/// A process to start: name, executable, arguments.
pub struct Launch {
    pub name: &'static str,
    pub exe: PathBuf,
    pub args: Vec<String>,
}

impl NodeConfig {
    pub fn containerd_dir(&self) -> PathBuf {
        self.dir.join("containerd")
    }
    pub fn containerd_socket(&self) -> PathBuf {
        self.containerd_dir().join("containerd.sock")
    }
    fn kubelet_dir(&self) -> PathBuf {
        self.dir.join("kubelet")
    }
}

/// The programs the node needs from Debian, with the package to install.
const DEBIAN: [(&str, &str); 3] = [
    ("/usr/bin/containerd", "containerd"),
    ("/usr/bin/containerd-shim-runc-v2", "containerd"),
    ("/usr/sbin/runc", "runc"),
];
/// The CNI plugins used, in /usr/lib/cni.
const CNI_BIN_DIR: &str = "/usr/lib/cni";
const CNI_PLUGINS: [&str; 3] = ["bridge", "host-local", "loopback"];

/// Checks that every piece of the node is installed, naming what is not.
pub fn preflight(kubelet: &Path) -> anyhow::Result<()> {
    ns::preflight()?;
    let mut missing = Vec::new();
    for (path, pkg) in DEBIAN {
        if !Path::new(path).is_file() {
            missing.push(format!("{path} (Debian package {pkg})"));
        }
    }
    for p in CNI_PLUGINS {
        let path = Path::new(CNI_BIN_DIR).join(p);
        if !path.is_file() {
            missing.push(format!(
                "{} (Debian package containernetworking-plugins)",
                path.display()
            ));
        }
    }
    if !kubelet.is_file() {
        missing.push(format!(
            "{} (built by `harness/build.sh kubelet`)",
            kubelet.display()
        ));
    }
    if !missing.is_empty() {
        bail!(
            "the real node cannot start, missing: {} (.ci/run installs the packages)",
            missing.join(", ")
        );
    }
    if !ns::inside() {
        bail!(
            "the real node runs only inside the cluster's own namespaces \
             (node::ns::reexec or `cargo xtask cluster up --real-node`)"
        );
    }
    Ok(())
}

/// Writes every config file and returns containerd's and the kubelet's
/// command lines, in start order.
pub fn prepare(cfg: &NodeConfig) -> anyhow::Result<[Launch; 2]> {
    let cd = cfg.containerd_dir();
    let certs_d = cd.join("certs.d");
    let cni = cfg.dir.join("cni");
    let kdir = cfg.kubelet_dir();
    for d in [
        &cd,
        &certs_d,
        &cni.join("net.d"),
        &cni.join("ipam"),
        &kdir.join("root"),
        &kdir.join("pki"),
        &cfg.dir.join("pod-logs"),
    ] {
        fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    for (host, text) in &cfg.registries {
        let d = certs_d.join(host);
        fs::create_dir_all(&d)?;
        fs::write(d.join("hosts.toml"), text)?;
    }
    let p = |p: &Path| p.display().to_string();

    let containerd_toml = format!(
        r#"# Written by mdiag-harness (node::prepare) for Debian's containerd 1.6.
version = 2
root = "{root}"
state = "{state}"
# Plugins that would write outside root/state (opt: /opt/containerd) or
# that the node does not use.
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "{sock}"

[ttrpc]
  address = "{sock}.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox}"
  # Without it every sandbox fails here with runc's "can't get final
  # child's PID from pipe: EOF": the pause process may not lower its
  # oom_score_adj below ours.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni_bin}"
    conf_dir = "{cni_conf}"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{certs_d}"
"#,
        root = p(&cd.join("root")),
        state = p(&cd.join("state")),
        sock = p(&cfg.containerd_socket()),
        sandbox = cfg.sandbox_image,
        cni_bin = CNI_BIN_DIR,
        cni_conf = p(&cni.join("net.d")),
        certs_d = p(&certs_d),
    );
    let containerd_config = cd.join("config.toml");
    fs::write(&containerd_config, containerd_toml)?;

    let conflist = serde_json::json!({
        "cniVersion": "0.4.0",
        "name": "mdiag-pods",
        "plugins": [{
            "type": "bridge",
            "bridge": ns::BRIDGE,
            "isGateway": true,
            "ipMasq": false,
            "hairpinMode": true,
            "ipam": {
                "type": "host-local",
                "dataDir": p(&cni.join("ipam")),
                "ranges": [[{
                    "subnet": ns::POD_SUBNET,
                    "rangeStart": ns::POD_RANGE_START,
                    "gateway": ns::NODE_IP,
                }]],
            },
        }],
    });
    fs::write(
        cni.join("net.d").join("10-mdiag.conflist"),
        serde_json::to_string_pretty(&conflist)?,
    )?;

    let kubeconfig = kdir.join("kubeconfig");
    write_kubeconfig(cfg, &kubeconfig)?;
    let sock = format!("unix://{}", p(&cfg.containerd_socket()));
    let kubelet_yaml = format!(
        r#"# Written by mdiag-harness (node::prepare).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# Its API on the node's own address: the apiserver reaches it there for
# logs, exec and port-forward.
address: {node_ip}
port: {port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: {serving_crt}
tlsPrivateKeyFile: {serving_key}
rotateCertificates: false
serverTLSBootstrap: false
# The apiserver authenticates with its kubelet client certificate (signed
# by the harness CA); the kubelet asks the apiserver whether it may.
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
    cacheTTL: 10s
  x509:
    clientCAFile: {ca}
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 10s
    cacheUnauthorizedTTL: 5s
containerRuntimeEndpoint: {sock}
imageServiceEndpoint: {sock}
# This machine: cgroup v1, no systemd.
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupRoot: {cgroup_root}
cgroupsPerQOS: true
failSwapOn: false
registerNode: true
# The Lease is renewed every quarter of this (5 s): with the harness's
# 20 s --node-monitor-grace-period, a stopped kubelet is NotReady in 20 s.
nodeLeaseDurationSeconds: 20
registerWithTaints:
- key: {key}
  value: {role}
  effect: NoSchedule
clusterDNS:
- {dns}
clusterDomain: cluster.local
podLogsDir: {pod_logs}
# The eviction manager cannot read the root filesystem's stats here; low
# thresholds keep it from acting on a shared disk.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
# Never garbage-collect the images (the pause image among them).
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
containerLogMaxSize: 10Mi
containerLogMaxFiles: 3
"#,
        node_ip = ns::NODE_IP,
        port = KUBELET_PORT,
        serving_crt = p(&cfg.serving_crt),
        serving_key = p(&cfg.serving_key),
        ca = p(&cfg.ca_crt),
        cgroup_root = cfg.cgroup_root,
        key = NODE_KEY,
        role = NODE_ROLE,
        dns = CLUSTER_DNS,
        pod_logs = p(&cfg.dir.join("pod-logs")),
    );
    let kubelet_config = kdir.join("config.yaml");
    fs::write(&kubelet_config, kubelet_yaml)?;

    Ok([
        Launch {
            name: CONTAINERD,
            exe: PathBuf::from("/usr/bin/containerd"),
            args: vec![format!("--config={}", p(&containerd_config))],
        },
        Launch {
            name: KUBELET,
            exe: cfg.kubelet.clone(),
            args: vec![
                format!("--config={}", p(&kubelet_config)),
                format!("--kubeconfig={}", p(&kubeconfig)),
                format!("--root-dir={}", p(&kdir.join("root"))),
                format!("--cert-dir={}", p(&kdir.join("pki"))),
                format!("--node-ip={}", ns::NODE_IP),
                format!("--hostname-override={NODE_NAME}"),
                format!("--node-labels={NODE_KEY}={NODE_ROLE}"),
            ],
        },
    ])
}

fn write_kubeconfig(cfg: &NodeConfig, path: &Path) -> anyhow::Result<()> {
    let text = format!(
        "# Written by mdiag-harness (node::prepare): the kubelet's identity.\n\
         apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: mdiag\n  \
           cluster:\n    \
             server: {server}\n    \
             certificate-authority: {ca}\n\
         users:\n\
         - name: system:node:{NODE_NAME}\n  \
           user:\n    \
             client-certificate: {crt}\n    \
             client-key: {key}\n\
         contexts:\n\
         - name: kubelet\n  \
           context:\n    \
             cluster: mdiag\n    \
             user: system:node:{NODE_NAME}\n\
         current-context: kubelet\n",
        server = cfg.server,
        ca = cfg.ca_crt.display(),
        crt = cfg.client_crt.display(),
        key = cfg.client_key.display(),
    );
    fs::write(path, text)?;
    Ok(())
}

/// Whether containerd answers on its socket.
pub fn containerd_listening(cfg: &NodeConfig) -> bool {
    UnixStream::connect(cfg.containerd_socket()).is_ok()
}

/// After the kubelet and containerd have stopped: ends what they leave
/// running and removes what they leave mounted, so the node can start
/// again from nothing. Only inside our namespaces (every shim and netns
/// there is ours).
///
/// - shims of this containerd (matched by its socket on their command
///   line), then every process left in the kubelet's cgroups (the pod
///   sandboxes and containers, which a killed shim leaves running);
/// - mounts under the node dir (overlay rootfs, shm, volumes) and the pod
///   network namespaces under /run/netns (their veths go with them);
/// - the cgroups under the kubelet's cgroup root, made again empty.
pub fn cleanup(cfg: &NodeConfig) -> anyhow::Result<()> {
    if !ns::inside() {
        bail!("node::cleanup runs only inside the cluster's namespaces");
    }
    let sock = cfg.containerd_socket().display().to_string();
    for pid in shims_of(&sock) {
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    ns::kill_cgroups(&cfg.cgroup_root)?;
    let t = std::time::Instant::now();
    while !shims_of(&sock).is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    ns::unmount_under(&cfg.dir)?;
    let netns = Path::new("/run/netns");
    ns::unmount_under(netns)?;
    for e in fs::read_dir(netns).into_iter().flatten().flatten() {
        let _ = fs::remove_file(e.path());
    }
    ns::remove_cgroups(&cfg.cgroup_root)?;
    ns::make_cgroups(&cfg.cgroup_root)?;
    Ok(())
}

/// Pids of containerd shims started by the containerd on `sock`.
pub fn shims_of(sock: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_shim = args
            .first()
            .is_some_and(|a| a.ends_with(b"containerd-shim-runc-v2"));
        if is_shim && args.contains(&sock.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// What is left of a stopped node inside the namespaces: processes (shims,
/// anything in its cgroups), mounts under its dir, pod network namespaces,
/// veth links. Empty when the node is fully gone.
pub fn leftovers(cfg: &NodeConfig) -> Vec<String> {
    let mut out = Vec::new();
    let sock = cfg.containerd_socket().display().to_string();
    for pid in shims_of(&sock) {
        out.push(format!("containerd shim pid {pid}"));
    }
    for pid in ns::cgroup_pids(&cfg.cgroup_root) {
        out.push(format!(
            "pid {pid} in the cgroups under {}",
            cfg.cgroup_root
        ));
    }
    for m in ns::mounts_under(&cfg.dir) {
        out.push(format!("mount {}", m.display()));
    }
    for m in ns::mounts_under(Path::new("/run/netns")) {
        out.push(format!("network namespace mount {}", m.display()));
    }
    for e in fs::read_dir("/run/netns").into_iter().flatten().flatten() {
        out.push(format!("network namespace {}", e.path().display()));
    }
    for l in ns::extra_links() {
        out.push(format!("link {l}"));
    }
    out
}

/// A ModelService / Pod template patch (JSON) that pins Pods to the real
/// node: the nodeSelector and the toleration of its taint.
pub fn pin_to_real_node() -> serde_json::Value {
    serde_json::json!({
        "nodeSelector": {NODE_KEY: NODE_ROLE},
        "tolerations": [{
            "key": NODE_KEY,
            "operator": "Equal",
            "value": NODE_ROLE,
            "effect": "NoSchedule",
        }],
    })
}
