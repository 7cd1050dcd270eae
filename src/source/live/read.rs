//! The reads of the plan: the shared first wave, then the scope's lists.

use super::*;

/// What a trace (one namespace) or a triage (one or all) reads.
pub struct TraceRead<'a> {
    /// `None`: every namespace.
    pub namespace: Option<&'a str>,
    /// The ModelService resource to find by discovery (default `msvc`).
    pub resource: Option<&'a str>,
    pub controller: Option<&'a ControllerLocation>,
}

/// The URL of a resource's list, in one namespace or in all.
pub(super) fn typed_path<K>(namespace: Option<&str>) -> String
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
    /// Which resources (by plural) to list.
    wanted: &'c (dyn Fn(&str) -> bool + Sync),
    waiting: Vec<futures::future::BoxFuture<'c, Landing>>,
}

type Landing = Box<dyn FnOnce(&mut Collector, &mut mdiag_core::model::Objects) + Send>;

impl plan::Visit for Lists<'_> {
    fn visit<K: Planned>(&mut self, at: Where) {
        if (at == Where::Scope) != self.in_scope || !(self.wanted)(K::RESOURCE) {
            return;
        }
        let (conn, scope) = (self.conn, self.scope);
        let keep = |o: &mut K| o.keep();
        self.waiting.push(Box::pin(async move {
            let all = ListParams::default();
            let landing: Landing = if at == Where::Scope {
                let listed = conn.list_scope(&typed_path::<K>, scope, &all, &keep).await;
                Box::new(
                    move |c: &mut Collector, o: &mut mdiag_core::model::Objects| {
                        K::land(c.take_listed(listed, K::RESOURCE), o)
                    },
                )
            } else {
                let ns = at.namespace(scope).map(str::to_string);
                let listed = conn
                    .list_pages(&typed_path::<K>(ns.as_deref()), &all, &keep)
                    .await;
                Box::new(
                    move |c: &mut Collector, o: &mut mdiag_core::model::Objects| {
                        K::land(c.take(listed, K::RESOURCE, ns.as_deref(), "list", None), o)
                    },
                )
            };
            landing
        }));
    }
}

impl<'c> Lists<'c> {
    fn of(conn: &'c Connection, scope: Option<&'c str>, in_scope: bool) -> Self {
        Self::of_wanted(conn, scope, in_scope, &|_| true)
    }

    fn of_wanted(
        conn: &'c Connection,
        scope: Option<&'c str>,
        in_scope: bool,
        wanted: &'c (dyn Fn(&str) -> bool + Sync),
    ) -> Self {
        let mut lists = Lists {
            conn,
            scope,
            in_scope,
            wanted,
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

fn land(landings: Vec<Landing>, c: &mut Collector, o: &mut mdiag_core::model::Objects) {
    for landing in landings {
        landing(c, o);
    }
}

/// What every namespace of a triage shares, read once: discovery, the
/// Nodes, the kube-system Leases and the controller's Deployment and Lease.
pub struct Common {
    pub(super) model_service: Option<ApiResource>,
    pub(super) platforms: super::PlatformResources,
    pub(super) http_routes: Option<ApiResource>,
    /// The Nodes, the Leases and the controller's Deployment.
    pub(super) objects: mdiag_core::model::Objects,
    /// What could not be read of it (first in every namespace's gaps).
    pub gaps: Vec<Gap>,
    pub origin: Origin,
}

impl Common {
    /// Puts what every namespace shares into one namespace's objects: the
    /// Nodes, the kube-system Leases and the controller's Deployment (which
    /// may live in this namespace: no duplicates).
    pub(super) fn land_shared(&self, o: &mut mdiag_core::model::Objects) {
        o.nodes = self.objects.nodes.clone();
        o.leases = self.objects.leases.clone();
        for d in &self.objects.deployments {
            if !o
                .deployments
                .iter()
                .any(|x| x.metadata.uid == d.metadata.uid)
            {
                o.deployments.push(d.clone());
            }
        }
    }

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
    let mut objects = mdiag_core::model::Objects::default();
    let discovered = c.take(discovered.map(Some), "apis", None, "discover", None);
    let (model_service, platforms, http_routes) = match discovered {
        Some(d) => (d.model_service, d.platforms, d.http_routes),
        None => (None, super::PlatformResources::default(), None),
    };
    land(shared, &mut c, &mut objects);
    for (spot, deployment, lease) in controllers {
        let ns = Some(spot.namespace.as_str());
        if let Some(mut d) = c.take(deployment, "deployments", ns, "get", Some(&spot.name)) {
            trim_meta(&mut d.metadata, Deployment::MANAGED_FIELDS);
            objects.deployments.push(d);
        }
        if let Some(mut l) = c.take(lease, "leases", ns, "get", Some(&spot.name)) {
            trim_meta(&mut l.metadata, ManagedFields::Drop);
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
        platforms,
        http_routes,
        objects,
        gaps: c.gaps,
        origin: Origin {
            kind: OriginKind::Live,
            location: conn.server.clone(),
            context: conn.context.clone(),
            named_context: conn.named_context.clone(),
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
pub(super) async fn read_lists(
    conn: &Connection,
    common: &Common,
    scope: Option<&str>,
    model_service_selector: Option<&str>,
) -> Result<Snapshot, LiveError> {
    read_lists_wanted(conn, common, scope, model_service_selector, &|_| true).await
}

/// [`read_lists`] of the plan's resources `wanted` keeps (by plural), with
/// the ModelServices and HTTPRoutes.
pub(super) async fn read_lists_wanted(
    conn: &Connection,
    common: &Common,
    scope: Option<&str>,
    model_service_selector: Option<&str>,
    wanted: &(dyn Fn(&str) -> bool + Sync),
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
                        trim_meta(&mut o.metadata, ManagedFields::Writes);
                        true
                    };
                    let listed = conn.list_scope(&path, scope, &params, &keep).await;
                    Some((r.clone(), listed))
                }
                None => None,
            }
        }
    };
    let (lists, model_services, platforms, routes) = tokio::join!(
        Lists::of_wanted(conn, scope, true, wanted).run(),
        list_dynamic(common.model_service.as_ref(), &selected),
        // Triage's `-l` selects the serving objects, as it does the
        // ModelServices.
        futures::future::join_all(common.platforms.iter().map(|(kind, r)| {
            let listed = list_dynamic(Some(r), &selected);
            async move { (*kind, listed.await) }
        })),
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
    common.land_shared(o);
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
    for (kind, listed) in platforms {
        let (Some(platform), Some((r, listed))) =
            (mdiag_core::chain::Platform::of_kind(kind), listed)
        else {
            continue;
        };
        let items = c.take_listed(listed, kind.qualified_resource());
        for item in typed(&r, items) {
            platform.file(o, item);
        }
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
pub(super) fn keep_events_about_read_objects(o: &mut mdiag_core::model::Objects) {
    use std::collections::HashSet;
    let metas = o
        .model_services
        .iter()
        .map(|m| ("ModelService", &m.metadata))
        .chain(
            o.inference_services
                .iter()
                .map(|m| ("InferenceService", &m.metadata)),
        )
        .chain(o.rollouts.iter().map(|r| ("Rollout", &r.object().metadata)))
        .chain(o.deployments.iter().map(|d| ("Deployment", &d.metadata)))
        .chain(o.replica_sets.iter().map(|r| ("ReplicaSet", &r.metadata)))
        .chain(o.stateful_sets.iter().map(|s| ("StatefulSet", &s.metadata)))
        .chain(o.daemon_sets.iter().map(|d| ("DaemonSet", &d.metadata)))
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
