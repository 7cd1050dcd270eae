//! `triage --context a,b,c` and `--all-contexts`: one triage per cluster,
//! read at once (a few at a time), ranked as one. A cluster that cannot be
//! read is a gap naming its context, never a cluster with nothing wrong.

use futures::stream::{self, StreamExt};

use super::*;
use crate::error::UsageError;
use crate::request::Clusters;
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::model::Origin;
use mdiag_source::live::{KubeconfigContexts, LiveOptions};

/// Clusters read at once. Each is read a few namespaces at a time
/// ([`super::read::NAMESPACES_AT_ONCE`]), so memory is bounded by this
/// many single-cluster reads; their wall times overlap, so the whole takes
/// about as long as the slowest cluster alone.
pub(super) const CLUSTERS_AT_ONCE: usize = 4;

/// One cluster of a triage over several: its context, where it was read
/// from, and whether it could be read.
pub struct ClusterRun {
    pub context: String,
    pub origin: Origin,
    pub requests: Option<u32>,
    /// Why nothing could be read from it, when nothing could.
    pub unread: Option<String>,
}

/// The contexts a request names, checked against the kubeconfig: every
/// one for `--all-contexts`; the names of `--context a,b` when all exist
/// (a misspelt name is a usage error, before any cluster is read).
pub(super) fn contexts_to_read(request: &TriageRequest) -> anyhow::Result<Vec<String>> {
    if request.clusters == Clusters::One {
        return Ok(Vec::new());
    }
    let known = live::kubeconfig_contexts(&request.source.live)?;
    match &request.clusters {
        Clusters::One => Ok(Vec::new()),
        Clusters::All => {
            let names: Vec<String> = known.names().map(str::to_string).collect();
            if names.is_empty() {
                return Err(
                    UsageError(Message::new("usage.no_contexts").arg("file", known.file)).into(),
                );
            }
            Ok(names)
        }
        Clusters::Named(names) => {
            check_names(&known, names)?;
            Ok(names.clone())
        }
    }
}

fn check_names(known: &KubeconfigContexts, names: &[String]) -> anyhow::Result<()> {
    let missing: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !known.names().any(|k| k == *n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list =
        |names: Vec<&str>| Arg::list(names.into_iter().map(|n| format!("{n:?}")), "sep.comma");
    Err(UsageError(
        Message::new("usage.unknown_contexts")
            .arg("file", known.file.clone())
            .arg("names", list(missing))
            .arg("contexts", list(known.names().collect())),
    )
    .into())
}

/// Reads and judges each of `contexts` as `triage --context NAME` would,
/// [`CLUSTERS_AT_ONCE`] at a time, and gathers them into one triage: every
/// row names its context, the gaps of each cluster are tagged with it (the
/// same gap in several clusters once, naming them all), and a cluster of
/// which nothing could be read is one gap of its own.
pub(super) async fn read_clusters(
    request: &TriageRequest,
    contexts: Vec<String>,
) -> anyhow::Result<Triaged> {
    let t_load = Instant::now();
    let started = Timestamp::now();
    let reads: Vec<(String, anyhow::Result<Triaged>)> = stream::iter(contexts)
        .map(|context| async move {
            let one = TriageRequest {
                source: crate::request::SourceRequest {
                    live: LiveOptions {
                        context: Some(context.clone()),
                        ..request.source.live.clone()
                    },
                    ..request.source.clone()
                },
                clusters: Clusters::One,
                ..request.clone()
            };
            let read = read_and_analyze(&one).await;
            (context, read)
        })
        .buffered(CLUSTERS_AT_ONCE)
        .collect()
        .await;
    let mut fleet = Triaged {
        snapshot: Snapshot::default(),
        namespace: request.source.namespace.clone(),
        connection: None,
        items: Triage::default(),
        clock: Clock {
            now: started,
            source: mdiag_core::model::ClockSource::Live,
        },
        objects: 0,
        load_time: Duration::ZERO,
        analysis_time: Duration::ZERO,
        clusters: Vec::new(),
    };
    let mut gaps: Vec<Gap> = Vec::new();
    for (context, read) in reads {
        fleet.items.contexts.push(context.clone());
        let judged = match read {
            Ok(judged) => judged,
            Err(err) => {
                let reason = crate::error::said(&err, request.lang);
                add_gap(&mut gaps, Gap::cluster_unread(&context, reason.clone()));
                fleet.clusters.push(ClusterRun {
                    context,
                    origin: Origin::default(),
                    requests: None,
                    unread: Some(reason),
                });
                continue;
            }
        };
        for gap in judged.gaps() {
            add_gap(
                &mut gaps,
                Gap {
                    contexts: vec![context.clone()],
                    ..gap
                },
            );
        }
        fleet.objects += judged.objects;
        fleet.analysis_time += judged.analysis_time;
        fleet.clusters.push(ClusterRun {
            context,
            origin: judged.snapshot.origin.clone(),
            requests: judged.connection.as_ref().map(|c| c.requests()),
            unread: None,
        });
        fleet.items.append(judged.items);
    }
    fleet.items.rank();
    fleet.snapshot.gaps = gaps;
    fleet.load_time = t_load.elapsed().saturating_sub(fleet.analysis_time);
    Ok(fleet)
}

/// Adds a gap, or names one more context on the same gap already there.
fn add_gap(gaps: &mut Vec<Gap>, gap: Gap) {
    match gaps.iter_mut().find(|g| g.same_but_context(&gap)) {
        Some(same) => {
            for c in gap.contexts {
                if !same.contexts.contains(&c) {
                    same.contexts.push(c);
                }
            }
        }
        None => gaps.push(gap),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(resource: &str, context: &str) -> Gap {
        Gap {
            resource: resource.into(),
            ..Gap::cluster_unread(context, "forbidden".into())
        }
    }

    #[test]
    fn the_same_gap_in_several_clusters_is_one_naming_each() {
        let mut gaps = Vec::new();
        add_gap(&mut gaps, forbidden("nodes", "prod-eu"));
        add_gap(&mut gaps, forbidden("leases", "prod-eu"));
        add_gap(&mut gaps, forbidden("nodes", "prod-us"));
        add_gap(&mut gaps, forbidden("nodes", "prod-us"));
        let seen: Vec<(&str, Vec<&str>)> = gaps
            .iter()
            .map(|g| {
                (
                    g.resource.as_str(),
                    g.contexts.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("nodes", vec!["prod-eu", "prod-us"]),
                ("leases", vec!["prod-eu"])
            ]
        );
        // Clusters not read for the same reason: one line naming both.
        add_gap(&mut gaps, Gap::cluster_unread("a", "refused".into()));
        add_gap(&mut gaps, Gap::cluster_unread("b", "refused".into()));
        add_gap(&mut gaps, Gap::cluster_unread("c", "timed out".into()));
        assert_eq!(gaps.len(), 4, "{gaps:?}");
        assert_eq!(gaps[2].contexts, ["a", "b"]);
        assert!(gaps[2].is_cluster_unread() && gaps[3].is_cluster_unread());
    }
}
