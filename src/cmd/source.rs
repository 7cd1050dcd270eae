//! Where a command's objects come from, decided from the global flags: a
//! file (`--snapshot`) or the live cluster. Shared by every command.

use std::path::Path;

use crate::error::UsageError;
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::chain::{self, TargetNotFound, namespaces_holding};
use mdiag_core::model::{Snapshot, TargetSpec};
use mdiag_source::file::{read_snapshot_file_kept, read_snapshot_opened};
use mdiag_source::live::{self, Connection, TraceRead};

pub use crate::request::SourceRequest;

/// What was loaded, and the connection when it was live.
pub struct Loaded {
    pub snapshot: Snapshot,
    pub namespace: String,
    pub connection: Option<Connection>,
}

impl SourceRequest {
    /// Reads the namespace of `target` (or the `-n` namespace when there is
    /// no target) from the file or the cluster.
    pub async fn load(&self, target: Option<&TargetSpec>) -> anyhow::Result<Loaded> {
        if let Some(path) = &self.snapshot_file {
            let snapshot = self.read_file(path)?;
            let namespace = match (&self.namespace, target) {
                (Some(ns), _) => ns.clone(),
                (None, Some(t)) => file_namespace(&snapshot, t)?,
                (None, None) => snapshot
                    .origin
                    .namespace
                    .clone()
                    .ok_or_else(|| UsageError(Message::new("usage.target_or_namespace")))?,
            };
            return Ok(Loaded {
                snapshot,
                namespace,
                connection: None,
            });
        }
        let conn = live::connect(&self.live).await?;
        let namespace = self.live_namespace(&conn.default_namespace)?;
        let read = TraceRead {
            namespace: Some(&namespace),
            resource: self.resource.as_deref(),
            controller: self.controller.as_ref(),
        };
        // A target's chain is read by its selectors; without one (a
        // snapshot of a namespace, an alert's scope) the namespace is read.
        let snapshot = match target {
            Some(t) => live::read_for_target(&conn, &read, t).await?,
            None => live::read_for_trace(&conn, &read).await?,
        };
        Ok(Loaded {
            snapshot,
            namespace,
            connection: Some(conn),
        })
    }
}

impl SourceRequest {
    /// For triage: one namespace (`-n`, else the context's), or every one.
    /// A file is read whole; the namespace, when given, filters later.
    pub async fn load_scope(
        &self,
        all: bool,
    ) -> anyhow::Result<(Snapshot, Option<String>, Option<Connection>)> {
        self.load_scope_selected(all, None).await
    }

    /// [`Self::load_scope`], with the ModelServices filtered on the server
    /// by `selector` when read live (see [`live::read_scoped`]); a file is
    /// filtered by the caller.
    pub async fn load_scope_selected(
        &self,
        all: bool,
        selector: Option<&str>,
    ) -> anyhow::Result<(Snapshot, Option<String>, Option<Connection>)> {
        if let Some(path) = &self.snapshot_file {
            let snapshot = self.read_file(path)?;
            let namespace = if all { None } else { self.namespace.clone() };
            return Ok((snapshot, namespace, None));
        }
        let conn = live::connect(&self.live).await?;
        let namespace = if all {
            None
        } else {
            Some(self.live_namespace(&conn.default_namespace)?)
        };
        let snapshot = live::read_scoped(
            &conn,
            &TraceRead {
                namespace: namespace.as_deref(),
                resource: self.resource.as_deref(),
                controller: self.controller.as_ref(),
            },
            selector,
        )
        .await?;
        Ok((snapshot, namespace, Some(conn)))
    }
}

impl SourceRequest {
    /// The snapshot file: from the handle `mdiag mcp` opened and checked,
    /// else by its path.
    fn read_file(&self, path: &Path) -> anyhow::Result<Snapshot> {
        let snapshot = match &self.opened_file {
            Some(file) => read_snapshot_opened(file.try_clone()?, path, self.keep)?,
            None => read_snapshot_file_kept(path, self.keep)?,
        };
        // What the file says is shown inert, as everything from a file is.
        for warning in &snapshot.warnings {
            let said = Message::new("stderr.warning").arg("text", warning.clone());
            eprintln!("{}", said.render(self.lang));
        }
        Ok(snapshot)
    }
}

/// The namespace of a target in a file when `-n` was not given: the
/// snapshot's own target, else the one namespace holding that name.
fn file_namespace(snapshot: &Snapshot, target: &TargetSpec) -> anyhow::Result<String> {
    if let Some(t) = &snapshot.origin.target
        && t.name == target.name
        && let Some(ns) = &t.namespace
    {
        return Ok(ns.clone());
    }
    let holding = namespaces_holding(snapshot, target);
    match holding.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(TargetNotFound {
            kind: target.kind,
            namespace: None,
            name: target.name.clone(),
            available: all_targets(snapshot),
            hints: Box::new(chain::NotFoundHints {
                other_kinds: chain::same_name_as_other_kinds(snapshot, target, None),
                ..Default::default()
            }),
        }
        .into()),
        many => Err(UsageError(
            Message::new("usage.several_namespaces")
                .arg("kind", target.kind.as_str())
                .arg("name", format!("{:?}", target.name))
                .arg(
                    "namespaces",
                    Arg::list(many.iter().map(String::as_str), "sep.comma"),
                ),
        )
        .into()),
    }
}

fn all_targets(snapshot: &Snapshot) -> Vec<String> {
    let mut namespaces: Vec<String> = snapshot
        .objects
        .model_services
        .iter()
        .chain(&snapshot.objects.inference_services)
        .chain(snapshot.objects.rollouts.iter().map(|r| r.object()))
        .chain(&snapshot.objects.leader_worker_sets)
        .chain(&snapshot.objects.knative_services)
        .filter_map(|m| m.metadata.namespace.clone())
        .chain(
            snapshot
                .objects
                .deployments
                .iter()
                .filter_map(|d| d.metadata.namespace.clone()),
        )
        .chain(
            snapshot
                .objects
                .stateful_sets
                .iter()
                .filter_map(|s| s.metadata.namespace.clone()),
        )
        .chain(
            snapshot
                .objects
                .daemon_sets
                .iter()
                .filter_map(|d| d.metadata.namespace.clone()),
        )
        .collect();
    namespaces.sort();
    namespaces.dedup();
    namespaces
        .iter()
        .flat_map(|ns| {
            chain::available_targets(snapshot, ns)
                .into_iter()
                .map(move |t| format!("{t} -n {ns}"))
        })
        .collect()
}

/// A target missing because its list was forbidden is an access problem,
/// not an absence; one of a kind a dump was not asked for there is a gap
/// of the file. A name the file holds elsewhere (another namespace, another
/// kind) is simply not here, and the error says where it is.
pub fn explain_not_found(snapshot: &Snapshot, not_found: TargetNotFound) -> anyhow::Error {
    if !not_found.hints.elsewhere.is_empty() || !not_found.hints.other_kinds.is_empty() {
        return not_found.into();
    }
    let resource = mdiag_core::chain::OwnerKind::of_target(not_found.kind)
        .kind
        .qualified_resource();
    let hidden = snapshot.gaps.iter().find(|g| {
        not_found
            .namespace
            .as_deref()
            .map_or(g.resource == resource, |ns| g.hides(resource, ns))
            || (matches!(
                resource,
                "modelservices" | "inferenceservices" | "rollouts" | "leaderworkersets"
            ) && g.resource == "apis")
    });
    match hidden {
        Some(gap) if gap.reason == mdiag_core::model::Gap::NOT_IN_DUMP => {
            let place = not_found.namespace.as_deref().unwrap_or_default();
            let gap = gap.in_namespace(place);
            anyhow::Error::new(crate::error::NotInFile {
                resource: gap.resource.clone(),
                place: match &gap.namespace {
                    Some(ns) => {
                        Message::new("error.place.namespace").arg("namespace", format!("{ns:?}"))
                    }
                    None => Message::new("error.place.any"),
                },
                complete: gap.complete_with.as_ref().map(|c| c.to_string()),
                not_found,
            })
        }
        Some(gap) => anyhow::Error::new(crate::error::DeniedTarget {
            denied: live::LiveError::Denied {
                server: snapshot.origin.location.clone(),
                detail: Message::new("error.denied_gap")
                    .arg("verb", gap.verb.as_str())
                    .arg("resource", gap.resource.as_str())
                    .arg("reason", gap.reason.as_str()),
            },
            not_found,
        }),
        None => not_found.into(),
    }
}
