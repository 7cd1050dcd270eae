//! One fake node's tasks: starting it (registering the Node), its
//! heartbeat, its node and pod watches (a worker per bound Pod) and its log
//! server.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Client;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::SimOptions;
use super::node::{IpPool, NodeConds, NodeCtx, NodeSpec, STOPPED_ANNOTATION};
use super::pod::{self, PodHandle};
use mdiag_harness_util::events::Recorder;

/// Starts one node: registers it, and spawns its heartbeat, node watch, pod
/// watch and log server. Returns when the Node is registered.
pub async fn start(
    client: Client,
    spec: NodeSpec,
    index: u8,
    opts: Arc<SimOptions>,
    kubelet_version: String,
) -> anyhow::Result<(Arc<NodeCtx>, Vec<JoinHandle<()>>)> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();
    let (stopped_tx, stopped) = watch::channel(false);
    let recorder = Recorder::with_pause(
        client.clone(),
        "kubelet",
        &spec.name,
        Some(&spec.name),
        stopped.clone(),
    );
    let ctx = Arc::new(NodeCtx {
        client: client.clone(),
        name: spec.name.clone(),
        index,
        host_ip: "127.0.0.1".to_owned(),
        port,
        opts: opts.clone(),
        recorder,
        stopped,
        stopped_tx,
        pulled: Mutex::new(HashSet::new()),
        ips: Mutex::new(IpPool {
            used: BTreeSet::new(),
            next: 2,
        }),
        pods: Mutex::new(HashMap::new()),
        spec,
        conds: Mutex::new(NodeConds::default()),
        kubelet_version,
    });
    ctx.register().await?;
    let tls = super::server::tls_acceptor(&ctx.name)?;
    let tasks = vec![
        tokio::spawn(super::server::serve(ctx.clone(), listener, tls)),
        tokio::spawn(heartbeat_loop(ctx.clone())),
        tokio::spawn(node_watch(ctx.clone())),
        tokio::spawn(pod_watch(ctx.clone())),
    ];
    Ok((ctx, tasks))
}

async fn heartbeat_loop(ctx: Arc<NodeCtx>) {
    let mut tick = tokio::time::interval(ctx.opts.heartbeat);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if ctx.is_stopped() {
            continue;
        }
        ctx.heartbeat().await;
        ctx.renew_lease().await;
    }
}

async fn node_watch(ctx: Arc<NodeCtx>) {
    let api: Api<Node> = Api::all(ctx.client.clone());
    let cfg = watcher::Config::default().fields(&format!("metadata.name={}", ctx.name));
    let mut stream = watcher::watcher(api, cfg).default_backoff().boxed();
    while let Some(ev) = stream.next().await {
        let node = match ev {
            Ok(Event::Apply(n)) | Ok(Event::InitApply(n)) => n,
            Ok(_) => continue,
            Err(e) => {
                eprintln!("mdiag-sim: {}: watching the node: {e}", ctx.name);
                continue;
            }
        };
        let stopped = node
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(STOPPED_ANNOTATION))
            .is_some_and(|v| v == "true");
        ctx.set_stopped(stopped).await;
    }
}

async fn pod_watch(ctx: Arc<NodeCtx>) {
    let api: Api<Pod> = Api::all(ctx.client.clone());
    let cfg = watcher::Config::default().fields(&format!("spec.nodeName={}", ctx.name));
    let mut stream = watcher::watcher(api, cfg).default_backoff().boxed();
    let mut pods: HashMap<String, PodHandle> = HashMap::new();
    let mut listed: HashSet<String> = HashSet::new();
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                eprintln!("mdiag-sim: {}: watching pods: {e}", ctx.name);
                continue;
            }
        };
        match ev {
            Event::Init => listed.clear(),
            Event::InitApply(p) | Event::Apply(p) => {
                let uid = p.metadata.uid.clone().unwrap_or_default();
                listed.insert(uid.clone());
                if let Some(h) = pods.get(&uid) {
                    h.live.send_replace(p);
                    continue;
                }
                let phase = p.status.as_ref().and_then(|s| s.phase.clone());
                let terminal = matches!(phase.as_deref(), Some("Succeeded") | Some("Failed"));
                if terminal && p.metadata.deletion_timestamp.is_none() {
                    continue;
                }
                let key = (
                    p.metadata.namespace.clone().unwrap_or_default(),
                    p.metadata.name.clone().unwrap_or_default(),
                );
                let h = pod::spawn(ctx.clone(), p);
                ctx.pods.lock().expect("pods").insert(key, h.state.clone());
                pods.insert(uid, h);
            }
            Event::InitDone => {
                let gone: Vec<String> = pods
                    .keys()
                    .filter(|u| !listed.contains(*u))
                    .cloned()
                    .collect();
                for uid in gone {
                    forget(&ctx, &mut pods, &uid).await;
                }
            }
            Event::Delete(p) => {
                let uid = p.metadata.uid.clone().unwrap_or_default();
                forget(&ctx, &mut pods, &uid).await;
            }
        }
    }
}

async fn forget(ctx: &NodeCtx, pods: &mut HashMap<String, PodHandle>, uid: &str) {
    if let Some(h) = pods.remove(uid) {
        h.task.abort();
        let (key, ip) = {
            let s = h.state.lock().expect("pod state");
            ((s.namespace.clone(), s.name.clone()), s.pod_ip.clone())
        };
        {
            let mut reg = ctx.pods.lock().expect("pods");
            if reg.get(&key).is_some_and(|st| Arc::ptr_eq(st, &h.state)) {
                reg.remove(&key);
            }
        }
        if let Some(ip) = ip
            && ip != ctx.host_ip
        {
            ctx.release_ip(&ip);
        }
        ctx.recorder.forget(uid).await;
    }
}
