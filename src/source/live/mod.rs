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
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::{OnceCell, Semaphore};

use super::plan::{self, ManagedFields, Planned, Where, trim_meta};
use mdiag_core::catalogue::{Localized, Message};
use mdiag_core::chain::ControllerLocation;
use mdiag_core::model::{Gap, HelmRelease, LogRecord, Origin, OriginKind, Snapshot};

mod connect;
mod helm;
mod logs;
mod page;
mod parts;
mod read;
mod target;

pub use connect::{KubeconfigContexts, USER_AGENT, connect, kubeconfig_contexts};

pub use helm::read_helm_release;
pub use logs::{LogCaps, LogRequest, log_request_count, read_logs, read_requested};
pub use parts::{NamespaceParts, PODS_PER_SHARD, read_namespace_in_parts};
pub use read::{
    Common, TraceRead, namespace_list, read_common, read_for_trace, read_namespace, read_scoped,
};
pub(crate) use target::named_outside;
pub use target::{read_for_target, selector_query};

#[derive(Debug, thiserror::Error)]
#[error("{}", Localized::message(self).en())]
pub enum LiveError {
    Config(Message),
    /// The kubeconfig file itself is missing or not a kubeconfig.
    KubeconfigFile(Message),
    /// The credential plugin failed, is missing, or never answered.
    Credentials(Message),
    Unreachable {
        server: String,
        detail: Message,
    },
    Denied {
        server: String,
        detail: Message,
    },
    NoResource {
        wanted: String,
    },
}

impl Localized for LiveError {
    fn message(&self) -> Message {
        match self {
            LiveError::Config(m) => Message::new("error.live.config").arg("detail", m.clone()),
            LiveError::KubeconfigFile(m) => m.clone(),
            LiveError::Credentials(m) => {
                Message::new("error.live.credentials").arg("detail", m.clone())
            }
            LiveError::Unreachable { server, detail } => Message::new("error.live.unreachable")
                .arg("server", server.as_str())
                .arg("detail", detail.clone()),
            LiveError::Denied { server, detail } => Message::new("error.live.denied")
                .arg("server", server.as_str())
                .arg("detail", detail.clone()),
            // A serving platform's kind: its CRD is not installed.
            LiveError::NoResource { wanted }
                if wanted.contains('.') && is_platform_resource(wanted) =>
            {
                Message::new("error.live.no_platform").arg("wanted", format!("{wanted:?}"))
            }
            LiveError::NoResource { wanted } => {
                Message::new("error.live.no_resource").arg("wanted", format!("{wanted:?}"))
            }
        }
    }
}

/// The serving platforms' resources other than the ModelService (found by
/// the name the user gives), as `plural.group`: what a target of one of
/// them needs served.
pub(crate) fn platform_resource(kind: mdiag_core::model::Kind) -> String {
    format!("{}.{}", kind.resource(), kind.group())
}

fn is_platform_resource(wanted: &str) -> bool {
    mdiag_core::chain::PLATFORMS
        .iter()
        .filter(|p| p.kind != mdiag_core::model::Kind::ModelService)
        .any(|p| platform_resource(p.kind) == wanted)
}

/// The resources discovery found for the serving platforms other than the
/// ModelService (KServe's InferenceServices, Argo's Rollouts), each in its
/// preferred version: a platform that is not installed is simply absent,
/// never an error.
#[derive(Debug, Clone, Default)]
pub struct PlatformResources(Vec<(mdiag_core::model::Kind, ApiResource)>);

impl PlatformResources {
    pub fn get(&self, kind: mdiag_core::model::Kind) -> Option<&ApiResource> {
        self.0.iter().find(|(k, _)| *k == kind).map(|(_, r)| r)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(mdiag_core::model::Kind, ApiResource)> {
        self.0.iter()
    }

    /// Keeps the first version a group offers of a platform's resource.
    fn offer(&mut self, group: &str, plural: &str, resource: impl FnOnce() -> ApiResource) {
        let Some(p) = mdiag_core::chain::PLATFORMS.iter().find(|p| {
            p.kind != mdiag_core::model::Kind::ModelService
                && p.kind.group() == group
                && p.kind.resource() == plural
        }) else {
            return;
        };
        if self.get(p.kind).is_none() {
            self.0.push((p.kind, resource()));
        }
    }
}

/// A request that got no answer in time, carried through kube's error so
/// that it is said in the user's language when it stops the command.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.en())]
struct Silent(Message);

/// How to reach the cluster, as the user said it.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub request_timeout: Option<Duration>,
}

/// Cloned, it shares its request count and limiter.
#[derive(Clone)]
pub struct Connection {
    pub client: Client,
    /// The context's namespace (or `default`).
    pub default_namespace: String,
    pub context: Option<String>,
    /// The context as the user named it (`--context`), when named: what
    /// printed commands name (`Origin::named_context`).
    pub named_context: Option<String>,
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
    /// The kubeconfig's exec credential plugin, as written there.
    credential_plugin: Option<String>,
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

impl Connection {
    /// A connection over a client made elsewhere (a test's fake API, or a
    /// caller with its own configuration).
    pub fn from_client(client: Client, server: &str, policy: ReadPolicy) -> Connection {
        Connection {
            client,
            default_namespace: "default".into(),
            context: None,
            named_context: None,
            server: server.to_string(),
            requests: Arc::new(AtomicU32::new(0)),
            limiter: Arc::new(Semaphore::new(policy.concurrency.max(1))),
            namespaces: Arc::new(OnceCell::new()),
            request_timeout: None,
            credential_plugin: None,
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

    /// A request that got no answer in time, naming the credential plugin
    /// when there is one (it runs inside the request to refresh a token).
    fn silent(&self, limit: Duration) -> kube::Error {
        let said = match &self.credential_plugin {
            Some(_) => connect::plugin_silent(self.credential_plugin.as_deref(), limit),
            None => Message::new("error.live.no_answer").arg("seconds", limit.as_secs() as i64),
        };
        kube::Error::Service(Box::new(Silent(said)))
    }

    fn classify(&self, err: &kube::Error) -> Failure {
        match err {
            kube::Error::Api(status) if status.code == 401 => Failure::Fatal(LiveError::Denied {
                server: self.server.clone(),
                detail: Message::quote(status.message.as_str()),
            }),
            kube::Error::Api(status) if status.code == 404 => Failure::Absent,
            kube::Error::Api(status) => Failure::Gap(status.message.clone()),
            kube::Error::SerdeError(e) => Failure::Gap(format!("unreadable response: {e}")),
            kube::Error::Auth(auth) => Failure::Fatal(LiveError::Credentials(connect::auth_text(
                auth,
                self.credential_plugin.as_deref(),
            ))),
            kube::Error::Service(e) if e.is::<Silent>() => Failure::Fatal(LiveError::Unreachable {
                server: self.server.clone(),
                detail: e
                    .downcast_ref::<Silent>()
                    .map_or_else(|| Message::quote(e.to_string()), |s| s.0.clone()),
            }),
            other => Failure::Fatal(LiveError::Unreachable {
                server: self.server.clone(),
                detail: connect::tls_hint(error_chain(other)),
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
        let bytes = self.send(build).await?;
        serde_json::from_slice(&bytes).map_err(kube::Error::SerdeError)
    }

    /// Sends a request, retried as the policy says; the body of a success.
    async fn send(
        &self,
        build: &(dyn Fn() -> Result<http::Request<Vec<u8>>, kube::core::request::Error> + Sync),
    ) -> Result<bytes::Bytes, kube::Error> {
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
                let exchange = async {
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
                    Ok::<_, kube::Error>((status, retry_after, bytes))
                };
                // kube's read timeout bounds the server; this bounds a
                // credential plugin run to refresh the token as well.
                match self.request_timeout {
                    Some(limit) => tokio::time::timeout(limit, exchange)
                        .await
                        .map_err(|_| self.silent(limit))??,
                    None => exchange.await?,
                }
            };
            if (200..300).contains(&status) {
                return Ok(bytes);
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
        let take = |mut item: K| keep(&mut item).then_some(item);
        self.list_pages_into(url_path, params, &take).await
    }

    /// [`Connection::list_pages`], each kept object turned into what it
    /// lands as while its page is in hand (an Event boxed into its record),
    /// so no second copy of the list is ever held.
    async fn list_pages_into<K, T>(
        &self,
        url_path: &str,
        params: &ListParams,
        take: &(dyn Fn(K) -> Option<T> + Sync),
    ) -> Result<Vec<T>, kube::Error>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let mut relists = 0;
        'list: loop {
            let mut out = Vec::new();
            // The policy's page size, unless the caller chose one.
            let mut params = match params.limit {
                Some(_) => params.clone(),
                None => params.clone().limit(self.policy.page_size),
            };
            params.continue_token = None;
            loop {
                let request = kube::core::Request::new(url_path);
                match self.send(&|| request.list(&params)).await {
                    Ok(bytes) => {
                        let token = page::decode_page(&bytes, take, &mut out)
                            .map_err(kube::Error::SerdeError)?;
                        match token {
                            Some(token) => params = params.continue_token(&token),
                            None => return Ok(out),
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

    pub(crate) async fn get_opt<K>(&self, api: Api<K>, name: &str) -> Result<Option<K>, kube::Error>
    where
        K: kube::Resource + Clone + DeserializeOwned + Debug,
    {
        // Sent as the lists are (retried as the policy says) and typed as
        // their items are, so a far-future time does not lose the object.
        let url = api.resource_url().to_string();
        let build = || kube::core::Request::new(&url).get(name, &kube::api::GetParams::default());
        match self.send(&build).await {
            Ok(bytes) => serde_json::from_slice::<crate::times::Lenient<K>>(&bytes)
                .map(|item| Some(item.0))
                .map_err(kube::Error::SerdeError),
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
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
                    found.platforms.offer(&group_name, &plural, resource);
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
    platforms: PlatformResources,
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
                        contexts: Vec::new(),
                        resource: resource.to_string(),
                        namespace: namespace.map(str::to_string),
                        verb: verb.to_string(),
                        name: name.map(str::to_string),
                        reason,
                        complete_with: None,
                        read_in: Vec::new(),
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

/// The resources discovery found, for commands that watch instead of list.
pub struct Served {
    pub model_service: Option<ApiResource>,
    pub platforms: PlatformResources,
    pub http_routes: Option<ApiResource>,
}

/// One aggregated-discovery request: the ModelService resource (`wanted`, a
/// short name, plural or `plural.group`) and HTTPRoutes when served.
pub async fn discover_served(conn: &Connection, wanted: &str) -> Result<Served, LiveError> {
    match conn.discover(wanted).await {
        Ok(found) => Ok(Served {
            model_service: found.model_service,
            platforms: found.platforms,
            http_routes: found.http_routes,
        }),
        Err(e) => Err(match conn.classify(&e) {
            Failure::Fatal(f) => f,
            Failure::Absent | Failure::Gap(_) => LiveError::Denied {
                server: conn.server.clone(),
                detail: Message::new("error.live.discovery").arg("detail", error_chain(&e)),
            },
        }),
    }
}

/// The server's version (`v1.35.8`), when it answers.
pub async fn server_version(conn: &Connection) -> Option<String> {
    conn.server_version().await.ok()
}

#[cfg(test)]
mod tests;
