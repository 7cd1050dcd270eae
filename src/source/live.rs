//! Reading from a live cluster through kube. Only get and list: mdiag
//! never writes. Requests of one wave run concurrently; a trace needs two
//! waves (discovery with the namespace lists, then the ModelServices).
//! A forbidden or failed list becomes a [`Gap`], not an error.

use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde::de::DeserializeOwned;

use crate::chain::{CONTROLLER_NAME, CONTROLLER_NAMESPACE, ControllerLocation};
use crate::exit::Exit;
use crate::model::{EventRecord, Gap, LogRecord, Origin, OriginKind, Snapshot};

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("cannot load the kubeconfig: {0}")]
    Config(String),
    #[error("cannot reach the cluster at {server}: {detail}")]
    Unreachable { server: String, detail: String },
    #[error(
        "the cluster at {server} denied access: {detail}; check your credentials (kubectl auth whoami)"
    )]
    Denied { server: String, detail: String },
    #[error(
        "no resource named {wanted:?} is served by the cluster (is the ModelService CRD installed? use --resource, or trace deploy/NAME)"
    )]
    NoResource { wanted: String },
}

impl LiveError {
    pub fn exit(&self) -> Exit {
        match self {
            LiveError::NoResource { .. } => Exit::NotFound,
            _ => Exit::Unreachable,
        }
    }
}

/// How to reach the cluster, as the user said it.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub request_timeout: Option<Duration>,
}

pub struct Connection {
    pub client: Client,
    /// The context's namespace (or `default`).
    pub default_namespace: String,
    pub context: Option<String>,
    pub server: String,
    requests: Arc<AtomicU32>,
}

/// Resolves the kubeconfig, context and credentials as kubectl does
/// (exec and OIDC plugins included, through kube's config loader).
pub async fn connect(options: &LiveOptions) -> Result<Connection, LiveError> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..KubeConfigOptions::default()
    };
    let (mut config, context) = if let Some(path) = &options.kubeconfig {
        let kubeconfig = Kubeconfig::read_from(path)
            .map_err(|e| LiveError::Config(format!("{}: {e}", path.display())))?;
        let context = options
            .context
            .clone()
            .or(kubeconfig.current_context.clone());
        let config = Config::from_custom_kubeconfig(kubeconfig, &kube_options)
            .await
            .map_err(|e| LiveError::Config(e.to_string()))?;
        (config, context)
    } else if options.context.is_some() || kubeconfig_present() {
        let context = options.context.clone().or_else(|| {
            Kubeconfig::read()
                .ok()
                .and_then(|k| k.current_context.clone())
        });
        let config = Config::from_kubeconfig(&kube_options)
            .await
            .map_err(|e| LiveError::Config(e.to_string()))?;
        (config, context)
    } else {
        let config = Config::infer().await.map_err(|e| {
            LiveError::Config(format!(
                "{e}; no kubeconfig found (set KUBECONFIG or --kubeconfig, or use --snapshot FILE)"
            ))
        })?;
        (config, None)
    };
    if let Some(t) = options.request_timeout {
        config.read_timeout = Some(t);
        config.connect_timeout = Some(t.min(Duration::from_secs(10)));
    }
    let server = config.cluster_url.to_string();
    let default_namespace = config.default_namespace.clone();
    let client = Client::try_from(config).map_err(|e| LiveError::Config(e.to_string()))?;
    Ok(Connection {
        client,
        default_namespace,
        context,
        server,
        requests: Arc::new(AtomicU32::new(0)),
    })
}

fn kubeconfig_present() -> bool {
    if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    std::env::home_dir().is_some_and(|h| h.join(".kube").join("config").exists())
}

impl Connection {
    /// API requests issued so far (pages included).
    pub fn requests(&self) -> u32 {
        self.requests.load(Ordering::Relaxed)
    }

    fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn classify(&self, err: &kube::Error) -> Failure {
        match err {
            kube::Error::Api(status) if status.code == 401 => Failure::Fatal(LiveError::Denied {
                server: self.server.clone(),
                detail: status.message.clone(),
            }),
            kube::Error::Api(status) if status.code == 404 => Failure::Absent,
            kube::Error::Api(status) => Failure::Gap(status.message.clone()),
            kube::Error::SerdeError(e) => Failure::Gap(format!("unreadable response: {e}")),
            other => Failure::Fatal(LiveError::Unreachable {
                server: self.server.clone(),
                detail: error_chain(other),
            }),
        }
    }

    /// Lists every page of a resource.
    async fn list_all<K>(&self, api: Api<K>) -> Result<Vec<K>, kube::Error>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let mut params = ListParams::default().limit(500);
        let mut out = Vec::new();
        loop {
            self.count();
            let page = api.list(&params).await?;
            out.extend(page.items);
            match page.metadata.continue_ {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => return Ok(out),
            }
        }
    }

    async fn get_opt<K>(&self, api: Api<K>, name: &str) -> Result<Option<K>, kube::Error>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        self.count();
        api.get_opt(name).await
    }

    async fn server_version(&self) -> Result<String, kube::Error> {
        self.count();
        Ok(self.client.apiserver_version().await?.git_version)
    }

    /// Finds the resource serving `wanted` (a short name like `msvc`, a
    /// plural, or `plural.group`) and, when the Gateway API is installed,
    /// HTTPRoutes, through aggregated discovery: one request.
    async fn discover(&self, wanted: &str) -> Result<Discovered, kube::Error> {
        self.count();
        let groups = self.client.list_api_groups_aggregated().await?;
        let (want_name, want_group) = match wanted.split_once('.') {
            Some((name, group)) => (name, Some(group)),
            None => (wanted, None),
        };
        let mut found = Discovered::default();
        for group in groups.items {
            let group_name = group
                .metadata
                .as_ref()
                .and_then(|m| m.name.clone())
                .unwrap_or_default();
            // Versions come preferred first: keep the first match.
            for version in &group.versions {
                let version_name = version.version.clone().unwrap_or_default();
                for r in &version.resources {
                    let plural = r.resource.clone().unwrap_or_default();
                    let kind = r
                        .response_kind
                        .as_ref()
                        .and_then(|k| k.kind.clone())
                        .unwrap_or_default();
                    let resource = || {
                        let gvk = GroupVersionKind::gvk(&group_name, &version_name, &kind);
                        ApiResource::from_gvk_with_plural(&gvk, &plural)
                    };
                    let is_wanted = want_group.is_none_or(|g| g == group_name)
                        && (plural == want_name
                            || r.short_names.iter().any(|s| s == want_name)
                            || r.singular_resource.as_deref() == Some(want_name)
                            || kind.eq_ignore_ascii_case(want_name));
                    if is_wanted && found.model_service.is_none() {
                        found.model_service = Some(resource());
                    }
                    if group_name == "gateway.networking.k8s.io"
                        && plural == "httproutes"
                        && found.http_routes.is_none()
                    {
                        found.http_routes = Some(resource());
                    }
                }
            }
        }
        Ok(found)
    }
}

/// What discovery found.
#[derive(Default)]
struct Discovered {
    model_service: Option<ApiResource>,
    http_routes: Option<ApiResource>,
}

enum Failure {
    Absent,
    Gap(String),
    Fatal(LiveError),
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// Collects what lists and gets return, turning failures into gaps.
struct Collector<'c> {
    conn: &'c Connection,
    gaps: Vec<Gap>,
    fatal: Option<LiveError>,
}

impl Collector<'_> {
    fn take<T: Default>(
        &mut self,
        result: Result<T, kube::Error>,
        resource: &str,
        namespace: Option<&str>,
        verb: &str,
        name: Option<&str>,
    ) -> T {
        match result {
            Ok(v) => v,
            Err(e) => {
                match self.conn.classify(&e) {
                    Failure::Absent => {}
                    Failure::Gap(reason) => self.gaps.push(Gap {
                        resource: resource.to_string(),
                        namespace: namespace.map(str::to_string),
                        verb: verb.to_string(),
                        name: name.map(str::to_string),
                        reason,
                    }),
                    Failure::Fatal(f) => {
                        self.fatal.get_or_insert(f);
                    }
                }
                T::default()
            }
        }
    }
}

/// What a trace (one namespace) or a triage (one or all) reads.
pub struct TraceRead<'a> {
    /// `None`: every namespace.
    pub namespace: Option<&'a str>,
    /// The ModelService resource to find by discovery (default `msvc`).
    pub resource: Option<&'a str>,
    pub controller: Option<&'a ControllerLocation>,
}

/// A namespaced resource in one namespace, or in all of them.
fn scoped<K>(client: &Client, ns: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match ns {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Reads everything a trace of one namespace needs (or a triage of all of
/// them), in two waves.
pub async fn read_for_trace(
    conn: &Connection,
    read: &TraceRead<'_>,
) -> Result<Snapshot, LiveError> {
    let ns = read.namespace;
    let client = &conn.client;
    let wanted = read.resource.unwrap_or("msvc");
    let controller_spots: Vec<ControllerLocation> = match (read.controller, ns) {
        (Some(c), _) => vec![c.clone()],
        (None, Some(ns)) => vec![
            ControllerLocation {
                namespace: ns.to_string(),
                name: CONTROLLER_NAME.into(),
            },
            ControllerLocation {
                namespace: CONTROLLER_NAMESPACE.into(),
                name: CONTROLLER_NAME.into(),
            },
        ],
        (None, None) => vec![ControllerLocation {
            namespace: CONTROLLER_NAMESPACE.into(),
            name: CONTROLLER_NAME.into(),
        }],
    };

    // Wave 1: discovery and everything that does not depend on it.
    let (
        version,
        discovered,
        deployments,
        replica_sets,
        pods,
        services,
        slices,
        events,
        nodes,
        system_leases,
        hpas,
        pdbs,
        controllers,
    ) = tokio::join!(
        conn.server_version(),
        conn.discover(wanted),
        conn.list_all(scoped::<Deployment>(client, ns)),
        conn.list_all(scoped::<ReplicaSet>(client, ns)),
        conn.list_all(scoped::<Pod>(client, ns)),
        conn.list_all(scoped::<Service>(client, ns)),
        conn.list_all(scoped::<EndpointSlice>(client, ns)),
        conn.list_all(scoped::<CoreEvent>(client, ns)),
        conn.list_all(Api::<Node>::all(client.clone())),
        conn.list_all(Api::<Lease>::namespaced(client.clone(), "kube-system")),
        conn.list_all(scoped::<HorizontalPodAutoscaler>(client, ns)),
        conn.list_all(scoped::<PodDisruptionBudget>(client, ns)),
        join_all(controller_spots.iter().map(|spot| async move {
            let (deployment, lease) = tokio::join!(
                conn.get_opt(
                    Api::<Deployment>::namespaced(client.clone(), &spot.namespace),
                    &spot.name,
                ),
                conn.get_opt(
                    Api::<Lease>::namespaced(client.clone(), &spot.namespace),
                    &spot.name,
                ),
            );
            (spot, deployment, lease)
        })),
    );

    let mut c = Collector {
        conn,
        gaps: Vec::new(),
        fatal: None,
    };
    let mut snapshot = Snapshot::default();
    let o = &mut snapshot.objects;
    let discovered = c.take(discovered.map(Some), "apis", None, "discover", None);
    let (model_service_resource, route_resource) = match discovered {
        Some(d) => (d.model_service, d.http_routes),
        None => (None, None),
    };
    o.deployments = c.take(deployments, "deployments", ns, "list", None);
    o.replica_sets = c.take(replica_sets, "replicasets", ns, "list", None);
    o.pods = c.take(pods, "pods", ns, "list", None);
    o.services = c.take(services, "services", ns, "list", None);
    o.endpoint_slices = c.take(slices, "endpointslices", ns, "list", None);
    o.events = c
        .take(events, "events", ns, "list", None)
        .into_iter()
        .map(|e| EventRecord::Core(Box::new(e)))
        .collect();
    o.nodes = c.take(nodes, "nodes", None, "list", None);
    o.leases = c.take(system_leases, "leases", Some("kube-system"), "list", None);
    o.hpas = c.take(hpas, "horizontalpodautoscalers", ns, "list", None);
    o.pdbs = c.take(pdbs, "poddisruptionbudgets", ns, "list", None);
    for (spot, deployment, lease) in controllers {
        let ns = Some(spot.namespace.as_str());
        if let Some(d) = c.take(deployment, "deployments", ns, "get", Some(&spot.name)) {
            // The controller may live in the target namespace: no duplicates.
            if !o
                .deployments
                .iter()
                .any(|x| x.metadata.uid == d.metadata.uid)
            {
                o.deployments.push(d);
            }
        }
        if let Some(l) = c.take(lease, "leases", ns, "get", Some(&spot.name)) {
            o.leases.push(l);
        }
    }
    if let Some(fatal) = c.fatal.take() {
        return Err(fatal);
    }

    // Wave 2: the ModelServices (and HTTPRoutes), now that discovery named them.
    let list_dynamic = |resource: Option<ApiResource>| async move {
        match resource {
            Some(r) => {
                let api = match ns {
                    Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &r),
                    None => Api::<DynamicObject>::all_with(client.clone(), &r),
                };
                Some((r.clone(), conn.list_all(api).await))
            }
            None => None,
        }
    };
    let wanted_missing = model_service_resource.is_none();
    let (model_services, routes) = tokio::join!(
        list_dynamic(model_service_resource),
        list_dynamic(route_resource)
    );
    // List items come without apiVersion and kind: give them back, so the
    // objects read the same from a snapshot file.
    let typed = |r: &ApiResource, mut items: Vec<DynamicObject>| {
        for item in &mut items {
            item.types = Some(kube::api::TypeMeta {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
            });
        }
        items
    };
    if let Some((r, listed)) = model_services {
        let items = c.take(listed, &r.plural, ns, "list", None);
        snapshot.objects.model_services = typed(&r, items);
    }
    if let Some((r, listed)) = routes {
        let items = c.take(listed, &r.plural, ns, "list", None);
        snapshot.objects.http_routes = typed(&r, items);
    }
    if wanted_missing && read.resource.is_some() && !c.gaps.iter().any(|g| g.resource == "apis") {
        return Err(LiveError::NoResource {
            wanted: wanted.to_string(),
        });
    }
    // Without the ModelService CRD, plain Deployments can still be traced.
    if let Some(fatal) = c.fatal.take() {
        return Err(fatal);
    }
    snapshot.gaps = c.gaps;
    snapshot.origin = Origin {
        kind: OriginKind::Live,
        location: conn.server.clone(),
        context: conn.context.clone(),
        server_version: version.ok(),
        ..Origin::default()
    };
    Ok(snapshot)
}

/// How much of each container log to keep, and how many reads at once.
#[derive(Debug, Clone, Copy)]
pub struct LogCaps {
    pub bytes: i64,
    pub lines: i64,
    pub concurrency: usize,
}

/// One log to read.
struct LogRequest {
    namespace: String,
    pod: String,
    container: String,
    previous: bool,
}

/// The logs worth asking for: the current log of every container that has
/// run, and the previous one of every container that restarted.
fn log_requests(pods: &[Pod]) -> Vec<LogRequest> {
    let mut out = Vec::new();
    for pod in pods {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let statuses = status
            .and_then(|s| s.init_container_statuses.as_deref())
            .unwrap_or(&[])
            .iter()
            .chain(
                status
                    .and_then(|s| s.container_statuses.as_deref())
                    .unwrap_or(&[]),
            );
        for s in statuses {
            let state = s.state.as_ref();
            let has_run = state.is_some_and(|st| st.running.is_some() || st.terminated.is_some());
            let restarted = s.restart_count > 0
                || s.last_state
                    .as_ref()
                    .is_some_and(|l| l.terminated.is_some());
            for (wanted, previous) in [(has_run, false), (restarted, true)] {
                if wanted {
                    out.push(LogRequest {
                        namespace: namespace.clone(),
                        pod: name.clone(),
                        container: s.name.clone(),
                        previous,
                    });
                }
            }
        }
    }
    out
}

/// Reads container logs, `caps.concurrency` at a time. `tick` is called
/// after each read (for a progress bar). A forbidden pods/log is a gap.
pub async fn read_logs(
    conn: &Connection,
    pods: &[Pod],
    caps: LogCaps,
    tick: &(dyn Fn(usize) + Sync),
) -> (Vec<LogRecord>, Vec<Gap>) {
    use futures::stream::{self, StreamExt};
    let requests = log_requests(pods);
    let results: Vec<_> = stream::iter(requests)
        .map(|r| async move {
            let api: Api<Pod> = Api::namespaced(conn.client.clone(), &r.namespace);
            let params = kube::api::LogParams {
                container: Some(r.container.clone()),
                previous: r.previous,
                tail_lines: Some(caps.lines),
                limit_bytes: Some(caps.bytes),
                ..kube::api::LogParams::default()
            };
            conn.count();
            let result = api.logs(&r.pod, &params).await;
            (r, result)
        })
        .buffer_unordered(caps.concurrency.max(1))
        .enumerate()
        .map(|(i, item)| {
            tick(i + 1);
            item
        })
        .collect()
        .await;
    let mut logs = Vec::new();
    let mut gaps: Vec<Gap> = Vec::new();
    for (r, result) in results {
        match result {
            Ok(text) => {
                let truncated =
                    text.len() as i64 >= caps.bytes || text.lines().count() as i64 >= caps.lines;
                logs.push(LogRecord {
                    namespace: r.namespace,
                    pod: r.pod,
                    container: r.container,
                    previous: r.previous,
                    truncated,
                    text,
                });
            }
            // A container that has not run, or no previous run: nothing to keep.
            Err(kube::Error::Api(s)) if s.code == 400 || s.code == 404 => {}
            Err(e) => {
                let reason = match &e {
                    kube::Error::Api(s) => s.message.clone(),
                    other => error_chain(other),
                };
                let gap = Gap {
                    resource: "pods/log".into(),
                    namespace: Some(r.namespace.clone()),
                    verb: "get".into(),
                    name: None,
                    reason,
                };
                if !gaps
                    .iter()
                    .any(|g| g.namespace == gap.namespace && g.reason == gap.reason)
                {
                    gaps.push(gap);
                }
            }
        }
    }
    logs.sort_by(|a, b| {
        (&a.pod, &a.container, a.previous).cmp(&(&b.pod, &b.container, b.previous))
    });
    (logs, gaps)
}

/// How many log reads `read_logs` will make for these Pods.
pub fn log_request_count(pods: &[Pod]) -> usize {
    log_requests(pods).len()
}

/// The resources discovery found, for commands that watch instead of list.
pub struct Served {
    pub model_service: Option<ApiResource>,
    pub http_routes: Option<ApiResource>,
}

/// One aggregated-discovery request: the ModelService resource (`wanted`, a
/// short name, plural or `plural.group`) and HTTPRoutes when served.
pub async fn discover_served(conn: &Connection, wanted: &str) -> Result<Served, LiveError> {
    match conn.discover(wanted).await {
        Ok(found) => Ok(Served {
            model_service: found.model_service,
            http_routes: found.http_routes,
        }),
        Err(e) => Err(match conn.classify(&e) {
            Failure::Fatal(f) => f,
            Failure::Absent | Failure::Gap(_) => LiveError::Denied {
                server: conn.server.clone(),
                detail: format!("discovery failed: {}", error_chain(&e)),
            },
        }),
    }
}
