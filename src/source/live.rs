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
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::{OnceCell, Semaphore};

use super::plan::{self, Planned, Where, trim_meta};
use crate::analysis::gate::HelmRelease;
use crate::chain::ControllerLocation;
use crate::model::{Gap, LogRecord, Origin, OriginKind, Snapshot};

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
    policy: ReadPolicy,
    /// Bounds the requests in flight (pages, gets and retries alike).
    limiter: Arc<Semaphore>,
    /// The namespaces, listed once, when an all-namespaces list was
    /// forbidden and each namespace is tried on its own.
    namespaces: Arc<OnceCell<NamespaceNames>>,
    /// `--request-timeout`, when given.
    request_timeout: Option<Duration>,
}

/// The namespaces' names, or the code and message of the failed list.
type NamespaceNames = Result<Vec<String>, (u16, String)>;

/// How lists are paged, retried and bounded.
#[derive(Debug, Clone)]
pub struct ReadPolicy {
    /// Objects per page (`limit`).
    pub page_size: u32,
    /// Tries of one request when the server answers 429 or 5xx.
    pub max_attempts: u32,
    /// The first wait between tries, doubled each time up to `max_backoff`,
    /// unless the server says how long (`Retry-After`).
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured as given.
    pub max_retry_after: Duration,
    /// Lists restarted from the first page after an expired continue token.
    pub max_relists: u32,
    /// Requests in flight at once. 16 holds a trace's first wave whole.
    pub concurrency: usize,
}

impl Default for ReadPolicy {
    fn default() -> Self {
        ReadPolicy {
            page_size: 500,
            max_attempts: 6,
            first_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
            max_relists: 3,
            concurrency: 16,
        }
    }
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
    let mut conn = Connection::from_client(client, &server, ReadPolicy::default());
    conn.default_namespace = default_namespace;
    conn.context = context;
    conn.request_timeout = options.request_timeout;
    Ok(conn)
}

fn kubeconfig_present() -> bool {
    if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    std::env::home_dir().is_some_and(|h| h.join(".kube").join("config").exists())
}

impl Connection {
    /// A connection over a client made elsewhere (a test's fake API, or a
    /// caller with its own configuration).
    pub fn from_client(client: Client, server: &str, policy: ReadPolicy) -> Connection {
        Connection {
            client,
            default_namespace: "default".into(),
            context: None,
            server: server.to_string(),
            requests: Arc::new(AtomicU32::new(0)),
            limiter: Arc::new(Semaphore::new(policy.concurrency.max(1))),
            namespaces: Arc::new(OnceCell::new()),
            request_timeout: None,
            policy,
        }
    }

    /// The timeout of one request, when the user set one.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }

    /// API requests issued so far (pages and retries included).
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

    /// Sends one request, retrying with back-off when the server is
    /// overloaded (429, honouring `Retry-After`) or failing (5xx), and
    /// decodes the JSON answer. At most `policy.concurrency` requests are in
    /// flight across the connection.
    async fn send_json<T: DeserializeOwned>(
        &self,
        build: &(dyn Fn() -> Result<http::Request<Vec<u8>>, kube::core::request::Error> + Sync),
    ) -> Result<T, kube::Error> {
        let mut attempt = 1;
        loop {
            let request = build().map_err(kube::Error::BuildRequest)?;
            let (status, retry_after, bytes) = {
                let _permit = self
                    .limiter
                    .acquire()
                    .await
                    .expect("the limiter is never closed");
                self.count();
                let response = self
                    .client
                    .send(request.map(kube::client::Body::from))
                    .await?;
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                let bytes = response.into_body().collect_bytes().await?;
                (status, retry_after, bytes)
            };
            if (200..300).contains(&status) {
                return serde_json::from_slice(&bytes).map_err(kube::Error::SerdeError);
            }
            let error = api_status(status, &bytes);
            let retriable = status == 429 || matches!(status, 500 | 502 | 503 | 504);
            if !retriable || attempt >= self.policy.max_attempts {
                return Err(kube::Error::Api(Box::new(error)));
            }
            let told = retry_after.or_else(|| {
                error
                    .details
                    .as_ref()
                    .map(|d| u64::from(d.retry_after_seconds))
                    .filter(|s| *s > 0)
            });
            let wait = match told {
                Some(seconds) => Duration::from_secs(seconds).min(self.policy.max_retry_after),
                None => self
                    .policy
                    .first_backoff
                    .saturating_mul(1 << (attempt - 1).min(16))
                    .min(self.policy.max_backoff),
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Lists every page of the resource at `url_path`, keeping of each page
    /// only what `keep` keeps (it may also trim an object). An expired
    /// continue token (410) restarts the list from its first page.
    async fn list_pages<K>(
        &self,
        url_path: &str,
        params: &ListParams,
        keep: &(dyn Fn(&mut K) -> bool + Sync),
    ) -> Result<Vec<K>, kube::Error>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let mut relists = 0;
        'list: loop {
            let mut out = Vec::new();
            let mut params = params.clone().limit(self.policy.page_size);
            params.continue_token = None;
            loop {
                let request = kube::core::Request::new(url_path);
                let page: Result<kube::core::ObjectList<K>, kube::Error> =
                    self.send_json(&|| request.list(&params)).await;
                match page {
                    Ok(page) => {
                        out.extend(
                            page.items
                                .into_iter()
                                .filter_map(|mut item| keep(&mut item).then_some(item)),
                        );
                        match page.metadata.continue_ {
                            Some(token) if !token.is_empty() => {
                                params = params.continue_token(&token)
                            }
                            _ => return Ok(out),
                        }
                    }
                    Err(kube::Error::Api(status))
                        if status.code == 410
                            && params.continue_token.is_some()
                            && relists < self.policy.max_relists =>
                    {
                        relists += 1;
                        continue 'list;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// Lists a namespaced resource in one namespace, or in all of them.
    /// When the all-namespaces list is forbidden, each namespace is listed
    /// on its own (when the namespaces may be listed), so one forbidden
    /// namespace costs its own objects only. Returns the objects and, per
    /// namespace (`None`: the whole list), what failed.
    async fn list_scope<K>(
        &self,
        path: &(dyn Fn(Option<&str>) -> String + Sync),
        namespace: Option<&str>,
        params: &ListParams,
        keep: &(dyn Fn(&mut K) -> bool + Sync),
    ) -> Listed<K>
    where
        K: Clone + DeserializeOwned + Debug + Send,
    {
        let first = self.list_pages(&path(namespace), params, keep).await;
        let forbidden_everywhere =
            matches!(&first, Err(kube::Error::Api(s)) if s.code == 403) && namespace.is_none();
        if !forbidden_everywhere {
            return match first {
                Ok(items) => Listed {
                    items,
                    failures: Vec::new(),
                },
                Err(e) => Listed {
                    items: Vec::new(),
                    failures: vec![(namespace.map(str::to_string), e)],
                },
            };
        }
        let namespaces = match self.namespace_names().await {
            Ok(names) => names,
            // Neither the list nor the namespaces: the whole list is a gap.
            Err(_) => {
                return Listed {
                    items: Vec::new(),
                    failures: vec![(None, first.expect_err("forbidden"))],
                };
            }
        };
        use futures::stream::{self, StreamExt};
        let results: Vec<(String, Result<Vec<K>, kube::Error>)> = stream::iter(namespaces)
            .map(|ns| async move {
                let listed = self.list_pages(&path(Some(&ns)), params, keep).await;
                (ns, listed)
            })
            .buffered(self.policy.concurrency.max(1))
            .collect()
            .await;
        let mut listed = Listed {
            items: Vec::new(),
            failures: Vec::new(),
        };
        for (ns, result) in results {
            match result {
                Ok(items) => listed.items.extend(items),
                Err(e) => listed.failures.push((Some(ns), e)),
            }
        }
        listed
    }

    /// The names of every namespace (listed once per connection).
    async fn namespace_names(&self) -> Result<Vec<String>, (u16, String)> {
        self.namespaces
            .get_or_init(|| async {
                let keep = |_: &mut Namespace| true;
                let path = Namespace::url_path(&(), None);
                match self.list_pages(&path, &ListParams::default(), &keep).await {
                    Ok(list) => {
                        let mut names: Vec<String> =
                            list.into_iter().filter_map(|n| n.metadata.name).collect();
                        names.sort();
                        Ok(names)
                    }
                    Err(kube::Error::Api(s)) => Err((s.code, s.message)),
                    Err(e) => Err((0, e.to_string())),
                }
            })
            .await
            .clone()
    }

    async fn get_opt<K>(&self, api: Api<K>, name: &str) -> Result<Option<K>, kube::Error>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let _permit = self
            .limiter
            .acquire()
            .await
            .expect("the limiter is never closed");
        self.count();
        api.get_opt(name).await
    }

    async fn server_version(&self) -> Result<String, kube::Error> {
        let _permit = self
            .limiter
            .acquire()
            .await
            .expect("the limiter is never closed");
        self.count();
        Ok(self.client.apiserver_version().await?.git_version)
    }

    /// Finds the resource serving `wanted` (a short name like `msvc`, a
    /// plural, or `plural.group`) and, when the Gateway API is installed,
    /// HTTPRoutes, through aggregated discovery: one request.
    async fn discover(&self, wanted: &str) -> Result<Discovered, kube::Error> {
        let groups = {
            let _permit = self
                .limiter
                .acquire()
                .await
                .expect("the limiter is never closed");
            self.count();
            self.client.list_api_groups_aggregated().await?
        };
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

/// What a list returned, and what failed of it (per namespace when the
/// namespaces were listed one by one).
struct Listed<K> {
    items: Vec<K>,
    failures: Vec<(Option<String>, kube::Error)>,
}

/// The Status of a failed answer: the server's own, else one made of the
/// HTTP code and the body's text (a proxy's page, say).
fn api_status(code: u16, body: &[u8]) -> kube::core::Status {
    match serde_json::from_slice::<kube::core::Status>(body) {
        Ok(mut s) if s.code != 0 || !s.message.is_empty() => {
            if s.code == 0 {
                s.code = code;
            }
            s
        }
        _ => {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            let mut s =
                kube::core::Status::failure(if text.is_empty() { "no message" } else { text }, "");
            s.code = code;
            s
        }
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

pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
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
    fn take_listed<K>(&mut self, listed: Listed<K>, resource: &str) -> Vec<K> {
        for (namespace, error) in listed.failures {
            let _: Option<()> = self.take(Err(error), resource, namespace.as_deref(), "list", None);
        }
        listed.items
    }

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

/// The URL of a resource's list, in one namespace or in all.
fn typed_path<K>(namespace: Option<&str>) -> String
where
    K: kube::Resource<DynamicType = ()>,
{
    K::url_path(&(), namespace)
}

/// Reads everything a trace of one namespace needs (or a triage of all of
/// them), in two waves.
pub async fn read_for_trace(
    conn: &Connection,
    read: &TraceRead<'_>,
) -> Result<Snapshot, LiveError> {
    read_scoped(conn, read, None).await
}

/// [`read_for_trace`], with the ModelServices filtered on the server by a
/// label selector (triage's `-l`). Only the ModelServices: the Deployments,
/// Pods and Events of a selected ModelService need not carry its labels,
/// and a Deployment that no ModelService owns is selected by triage itself.
///
/// Lists are paged, retried when the server is overloaded, and trimmed
/// page by page (see [`trim_meta`]); Events about kinds nothing reads are
/// dropped as they arrive, and once everything is read, Events about
/// objects that were not read are dropped too (unless some list failed,
/// when nothing can tell which are needed).
pub async fn read_scoped(
    conn: &Connection,
    read: &TraceRead<'_>,
    model_service_selector: Option<&str>,
) -> Result<Snapshot, LiveError> {
    let common = read_common(conn, read).await?;
    read_lists(conn, &common, read.namespace, model_service_selector).await
}

/// The lists of the read plan for one scope, as futures that land their
/// results in a snapshot once every list of the wave is back.
struct Lists<'c> {
    conn: &'c Connection,
    scope: Option<&'c str>,
    /// The lists in the scope, or the shared ones (cluster-wide, kube-system).
    in_scope: bool,
    waiting: Vec<futures::future::BoxFuture<'c, Landing>>,
}

type Landing = Box<dyn FnOnce(&mut Collector, &mut crate::model::Objects) + Send>;

impl plan::Visit for Lists<'_> {
    fn visit<K: Planned>(&mut self, at: Where) {
        if (at == Where::Scope) != self.in_scope {
            return;
        }
        let (conn, scope) = (self.conn, self.scope);
        let keep = |o: &mut K| o.keep();
        self.waiting.push(Box::pin(async move {
            let all = ListParams::default();
            let landing: Landing = if at == Where::Scope {
                let listed = conn.list_scope(&typed_path::<K>, scope, &all, &keep).await;
                Box::new(move |c: &mut Collector, o: &mut crate::model::Objects| {
                    K::land(c.take_listed(listed, K::RESOURCE), o)
                })
            } else {
                let ns = at.namespace(scope).map(str::to_string);
                let listed = conn
                    .list_pages(&typed_path::<K>(ns.as_deref()), &all, &keep)
                    .await;
                Box::new(move |c: &mut Collector, o: &mut crate::model::Objects| {
                    K::land(c.take(listed, K::RESOURCE, ns.as_deref(), "list", None), o)
                })
            };
            landing
        }));
    }
}

impl<'c> Lists<'c> {
    fn of(conn: &'c Connection, scope: Option<&'c str>, in_scope: bool) -> Self {
        let mut lists = Lists {
            conn,
            scope,
            in_scope,
            waiting: Vec::new(),
        };
        plan::each_list(&mut lists);
        lists
    }

    /// Runs every list at once; the landings are applied in the plan's order.
    async fn run(self) -> Vec<Landing> {
        join_all(self.waiting).await
    }
}

fn land(landings: Vec<Landing>, c: &mut Collector, o: &mut crate::model::Objects) {
    for landing in landings {
        landing(c, o);
    }
}

/// What every namespace of a triage shares, read once: discovery, the
/// Nodes, the kube-system Leases and the controller's Deployment and Lease.
pub struct Common {
    model_service: Option<ApiResource>,
    http_routes: Option<ApiResource>,
    /// The Nodes, the Leases and the controller's Deployment.
    objects: crate::model::Objects,
    /// What could not be read of it (first in every namespace's gaps).
    pub gaps: Vec<Gap>,
    pub origin: Origin,
}

impl Common {
    /// How many objects were read.
    pub fn object_count(&self) -> usize {
        self.objects.len()
    }
}

/// The names of every namespace (one request, made once per connection),
/// or the code and message of the failed list.
pub async fn namespace_list(conn: &Connection) -> Result<Vec<String>, (u16, String)> {
    conn.namespace_names().await
}

/// The first wave of every read: discovery, the server version, the lists
/// the plan shares between namespaces (Nodes, kube-system Leases) and the
/// controller's Deployment and Lease where `read.controller` says, else in
/// the read's namespace and then in its own.
pub async fn read_common(conn: &Connection, read: &TraceRead<'_>) -> Result<Common, LiveError> {
    let client = &conn.client;
    let wanted = read.resource.unwrap_or("msvc");
    let spots = ControllerLocation::spots(read.controller, read.namespace);
    let (version, discovered, shared, controllers) = tokio::join!(
        conn.server_version(),
        conn.discover(wanted),
        Lists::of(conn, read.namespace, false).run(),
        join_all(spots.iter().map(|spot| async move {
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
    let mut objects = crate::model::Objects::default();
    let discovered = c.take(discovered.map(Some), "apis", None, "discover", None);
    let (model_service, http_routes) = match discovered {
        Some(d) => (d.model_service, d.http_routes),
        None => (None, None),
    };
    land(shared, &mut c, &mut objects);
    for (spot, deployment, lease) in controllers {
        let ns = Some(spot.namespace.as_str());
        if let Some(mut d) = c.take(deployment, "deployments", ns, "get", Some(&spot.name)) {
            trim_meta(&mut d.metadata, true);
            objects.deployments.push(d);
        }
        if let Some(mut l) = c.take(lease, "leases", ns, "get", Some(&spot.name)) {
            trim_meta(&mut l.metadata, false);
            objects.leases.push(l);
        }
    }
    if let Some(fatal) = c.fatal.take() {
        return Err(fatal);
    }
    if model_service.is_none()
        && read.resource.is_some()
        && !c.gaps.iter().any(|g| g.resource == "apis")
    {
        return Err(LiveError::NoResource {
            wanted: wanted.to_string(),
        });
    }
    Ok(Common {
        model_service,
        http_routes,
        objects,
        gaps: c.gaps,
        origin: Origin {
            kind: OriginKind::Live,
            location: conn.server.clone(),
            context: conn.context.clone(),
            server_version: version.ok(),
            ..Origin::default()
        },
    })
}

/// One namespace's objects with a copy of the common ones: the snapshot a
/// trace of that namespace reads. Its gaps are the common gaps, then the
/// namespace's own. A forbidden namespace is a snapshot of gaps.
pub async fn read_namespace(
    conn: &Connection,
    common: &Common,
    namespace: &str,
    model_service_selector: Option<&str>,
) -> Result<Snapshot, LiveError> {
    read_lists(conn, common, Some(namespace), model_service_selector).await
}

/// The second wave: the plan's lists in the scope (one namespace, or all
/// when `None`), paged and trimmed as they arrive, and the ModelServices
/// and HTTPRoutes discovery named, filtered on the server by
/// `model_service_selector` (triage's `-l`; only the ModelServices: the
/// objects of a selected ModelService need not carry its labels). Once
/// everything is read, Events about objects that were not read are dropped
/// (unless some read failed, when nothing can tell which are needed).
async fn read_lists(
    conn: &Connection,
    common: &Common,
    scope: Option<&str>,
    model_service_selector: Option<&str>,
) -> Result<Snapshot, LiveError> {
    let all = ListParams::default();
    let selected = match model_service_selector {
        Some(s) => ListParams::default().labels(s),
        None => ListParams::default(),
    };
    let list_dynamic = |resource: Option<&ApiResource>, params: &ListParams| {
        let resource = resource.cloned();
        let params = params.clone();
        async move {
            match resource {
                Some(r) => {
                    let path = |namespace: Option<&str>| DynamicObject::url_path(&r, namespace);
                    let keep = |o: &mut DynamicObject| {
                        trim_meta(&mut o.metadata, true);
                        true
                    };
                    let listed = conn.list_scope(&path, scope, &params, &keep).await;
                    Some((r.clone(), listed))
                }
                None => None,
            }
        }
    };
    let (lists, model_services, routes) = tokio::join!(
        Lists::of(conn, scope, true).run(),
        list_dynamic(common.model_service.as_ref(), &selected),
        list_dynamic(common.http_routes.as_ref(), &all),
    );
    let mut c = Collector {
        conn,
        gaps: common.gaps.clone(),
        fatal: None,
    };
    let mut snapshot = Snapshot::default();
    let o = &mut snapshot.objects;
    land(lists, &mut c, o);
    o.nodes = common.objects.nodes.clone();
    o.leases = common.objects.leases.clone();
    for d in &common.objects.deployments {
        // The controller may live in this namespace: no duplicates.
        if !o
            .deployments
            .iter()
            .any(|x| x.metadata.uid == d.metadata.uid)
        {
            o.deployments.push(d.clone());
        }
    }
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
        let items = c.take_listed(listed, &r.plural);
        o.model_services = typed(&r, items);
    }
    if let Some((r, listed)) = routes {
        let items = c.take_listed(listed, &r.plural);
        o.http_routes = typed(&r, items);
    }
    if let Some(fatal) = c.fatal.take() {
        return Err(fatal);
    }
    if c.gaps.is_empty() {
        keep_events_about_read_objects(o);
    }
    snapshot.gaps = c.gaps;
    snapshot.origin = common.origin.clone();
    Ok(snapshot)
}

/// Drops the Events whose object was not read (an Event that names no UID
/// is kept when an object of its kind and name was).
fn keep_events_about_read_objects(o: &mut crate::model::Objects) {
    use std::collections::HashSet;
    let metas = o
        .model_services
        .iter()
        .map(|m| ("ModelService", &m.metadata))
        .chain(o.deployments.iter().map(|d| ("Deployment", &d.metadata)))
        .chain(o.replica_sets.iter().map(|r| ("ReplicaSet", &r.metadata)))
        .chain(o.pods.iter().map(|p| ("Pod", &p.metadata)))
        .chain(o.services.iter().map(|s| ("Service", &s.metadata)))
        .chain(
            o.endpoint_slices
                .iter()
                .map(|s| ("EndpointSlice", &s.metadata)),
        )
        .chain(o.nodes.iter().map(|n| ("Node", &n.metadata)))
        .chain(
            o.hpas
                .iter()
                .map(|h| ("HorizontalPodAutoscaler", &h.metadata)),
        )
        .chain(o.pdbs.iter().map(|p| ("PodDisruptionBudget", &p.metadata)))
        .chain(o.http_routes.iter().map(|r| ("HTTPRoute", &r.metadata)));
    let mut uids: HashSet<String> = HashSet::new();
    let mut names: HashSet<(String, String, String)> = HashSet::new();
    for (kind, meta) in metas {
        if let Some(uid) = &meta.uid {
            uids.insert(uid.clone());
        }
        names.insert((
            kind.to_string(),
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        ));
    }
    o.events.retain(|e| {
        let s = e.subject();
        if s.uid.is_empty() {
            names.contains(&(s.kind, s.namespace, s.name))
        } else {
            uids.contains(&s.uid)
        }
    });
}

/// How much of each container log to keep, and how many reads at once.
#[derive(Debug, Clone, Copy)]
pub struct LogCaps {
    pub bytes: i64,
    pub lines: i64,
    pub concurrency: usize,
}

impl LogCaps {
    /// What `snapshot` keeps unless told otherwise, and what `gate --evidence` keeps.
    pub const DEFAULT: LogCaps = LogCaps {
        bytes: 256 * 1024,
        lines: 2000,
        concurrency: 8,
    };
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

/// The server's version (`v1.35.8`), when it answers.
pub async fn server_version(conn: &Connection) -> Option<String> {
    conn.server_version().await.ok()
}

/// A Helm release's status and revision, read from the labels of Helm's
/// storage Secrets as metadata only: the Secret's data (the release, values
/// included) is never requested. A refused read is a gap, not an error.
pub async fn read_helm_release(
    conn: &Connection,
    name: &str,
    namespace: &str,
) -> Result<HelmRelease, LiveError> {
    let mut release = HelmRelease {
        name: name.to_string(),
        namespace: namespace.to_string(),
        ..HelmRelease::default()
    };
    let params = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let path = Secret::url_path(&(), Some(namespace));
    let listed: Result<kube::core::ObjectList<kube::core::PartialObjectMeta<Secret>>, _> = conn
        .send_json(&|| {
            kube::core::Request::new(&path)
                .list_metadata(&params.clone().limit(conn.policy.page_size))
        })
        .await;
    match listed {
        Ok(list) => {
            release.read = true;
            let newest = list
                .items
                .iter()
                .filter_map(|s| {
                    let labels = s.metadata.labels.as_ref()?;
                    let version = labels.get("version")?.parse::<i64>().ok()?;
                    Some((version, labels.get("status").cloned()))
                })
                .max_by_key(|(v, _)| *v);
            match newest {
                Some((version, status)) => {
                    release.revision = Some(version);
                    release.status = status;
                }
                None => release.notes.push(format!(
                    "no Helm release {name:?} in {namespace} (no Secret labelled owner=helm,name={name})"
                )),
            }
        }
        Err(e) => match conn.classify(&e) {
            Failure::Fatal(f) => return Err(f),
            Failure::Absent | Failure::Gap(_) => {
                let why = match &e {
                    kube::Error::Api(s) => s.message.clone(),
                    other => other.to_string(),
                };
                release.gap = Some(Gap {
                    resource: "secrets".into(),
                    namespace: Some(namespace.to_string()),
                    verb: "list".into(),
                    name: None,
                    reason: why.clone(),
                });
                release.notes.push(format!(
                    "cannot read the Helm release's Secret metadata ({why}); judged without it"
                ));
            }
        },
    }
    Ok(release)
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
