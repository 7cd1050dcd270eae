//! Extracting a snapshot of one chain: the objects, Events and Nodes a
//! replay of it needs, and no other workload's.

use k8s_openapi::api::apps::v1::Deployment;

use super::{Chain, PodSet, name, uid};
use crate::model::Snapshot;

/// The objects a snapshot of this chain keeps: the chain itself (of a Job
/// or CronJob: the CronJob, each of its runs, the judged Job's Pods), the
/// Pods its slices point at, the Events about any of them, the Nodes its
/// Pods run on, the controller, and every Lease, HPA and PDB that was read
/// (the rules pick theirs). What replay needs, and no other workload's objects.
pub fn chain_objects(snapshot: &Snapshot, chain: &Chain) -> crate::model::Objects {
    use std::collections::HashSet;
    let o = &snapshot.objects;
    let mut uids: HashSet<&str> = HashSet::new();
    let mut out = crate::model::Objects::default();
    if let Some(p) = chain.platform {
        uids.insert(uid(&p.object.metadata));
        p.platform.file(&mut out, p.object.clone());
    }
    // The predictor's Knative Service of an InferenceService in Knative mode.
    if let Some(k) = chain
        .knative_service
        .filter(|k| uids.insert(uid(&k.object.metadata)))
    {
        k.platform.file(&mut out, k.object.clone());
    }
    // A Rollout's Deployment is the Rollout itself, filed above.
    let mut deployments: Vec<&Deployment> = chain
        .deployment
        .filter(|_| chain.platform.is_none_or(|p| p.workload.is_none()))
        .into_iter()
        .collect();
    if let Some(d) = chain.controller.as_ref().and_then(|c| c.deployment) {
        deployments.push(d);
    }
    // A Knative Service's other Revisions each run in a Deployment of
    // their own: the walk finds their ReplicaSets through them.
    if chain.revisions_own_deployments() {
        let owners: HashSet<&str> = chain
            .replica_sets
            .iter()
            .flat_map(|r| r.replica_set.metadata.owner_references.iter().flatten())
            .map(|o| o.uid.as_str())
            .collect();
        deployments.extend(o.deployments.iter().filter(|d| {
            owners.contains(uid(&d.metadata))
                && !chain.deployment.is_some_and(|c| std::ptr::eq(c, *d))
        }));
    }
    for d in deployments {
        uids.insert(uid(&d.metadata));
        out.deployments.push(d.clone());
    }
    for rs in &chain.replica_sets {
        uids.insert(uid(&rs.replica_set.metadata));
        out.replica_sets.push(rs.replica_set.clone());
    }
    match chain.pod_set {
        Some(PodSet::StatefulSet(s)) => {
            uids.insert(uid(&s.metadata));
            out.stateful_sets.push(s.clone());
        }
        Some(PodSet::DaemonSet(d)) => {
            uids.insert(uid(&d.metadata));
            out.daemon_sets.push(d.clone());
        }
        None => {}
    }
    for r in &chain.set_revisions {
        out.controller_revisions.push(r.object.clone());
    }
    // A LeaderWorkerSet's worker sets, each with its revisions: the walk
    // finds a group's workers through them.
    for set in chain.groups.iter().filter_map(|g| g.workers) {
        let set_uid = uid(&set.metadata);
        uids.insert(set_uid);
        out.stateful_sets.push(set.clone());
        out.controller_revisions.extend(
            o.controller_revisions
                .iter()
                .filter(|r| {
                    r.metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|x| x.uid == set_uid)
                })
                .cloned(),
        );
    }
    // A Job target is judged by its own status, a CronJob by its last
    // run, with the count of its runs beside it: all of them are kept.
    if let Some(run) = &chain.job {
        if let Some(c) = run.cron_job {
            uids.insert(uid(&c.metadata));
            out.cron_jobs.push(c.clone());
        }
        // The judged Job is one of the runs, unless it has no CronJob.
        let mut jobs = run.runs.clone();
        if let Some(j) = run.job
            && !jobs.iter().any(|r| std::ptr::eq(*r, j))
        {
            jobs.push(j);
        }
        for j in jobs {
            uids.insert(uid(&j.metadata));
            out.jobs.push(j.clone());
        }
    }
    let referenced: HashSet<&str> = chain
        .endpoint_slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .filter_map(|e| e.target_ref.as_ref()?.uid.as_deref())
        .collect();
    for pod in &o.pods {
        let id = uid(&pod.metadata);
        if chain.pods.iter().any(|p| uid(&p.pod.metadata) == id) || referenced.contains(id) {
            uids.insert(id);
            out.pods.push(pod.clone());
        }
    }
    for s in &chain.services {
        uids.insert(uid(&s.metadata));
        out.services.push((*s).clone());
    }
    for s in &chain.endpoint_slices {
        uids.insert(uid(&s.metadata));
        out.endpoint_slices.push((*s).clone());
    }
    let names: HashSet<(String, String)> = out
        .pods
        .iter()
        .map(|p| ("Pod".to_string(), name(&p.metadata).to_string()))
        .chain(
            out.deployments
                .iter()
                .map(|d| ("Deployment".into(), name(&d.metadata).to_string())),
        )
        .chain(
            out.replica_sets
                .iter()
                .map(|r| ("ReplicaSet".into(), name(&r.metadata).to_string())),
        )
        .chain(
            out.stateful_sets
                .iter()
                .map(|s| ("StatefulSet".into(), name(&s.metadata).to_string())),
        )
        .chain(
            out.daemon_sets
                .iter()
                .map(|d| ("DaemonSet".into(), name(&d.metadata).to_string())),
        )
        .chain(
            out.services
                .iter()
                .map(|s| ("Service".into(), name(&s.metadata).to_string())),
        )
        .chain(
            out.model_services
                .iter()
                .map(|m| ("ModelService".into(), name(&m.metadata).to_string())),
        )
        .chain(
            out.inference_services
                .iter()
                .map(|m| ("InferenceService".into(), name(&m.metadata).to_string())),
        )
        .chain(
            out.leader_worker_sets
                .iter()
                .map(|m| ("LeaderWorkerSet".into(), name(&m.metadata).to_string())),
        )
        // Knative's Service: its events name the kind `Service`.
        .chain(
            out.knative_services
                .iter()
                .map(|m| ("Service".into(), name(&m.metadata).to_string())),
        )
        .chain(
            out.jobs
                .iter()
                .map(|j| ("Job".into(), name(&j.metadata).to_string())),
        )
        .chain(
            out.cron_jobs
                .iter()
                .map(|c| ("CronJob".into(), name(&c.metadata).to_string())),
        )
        .collect();
    out.events = o
        .events
        .iter()
        .filter(|e| {
            let s = e.subject();
            uids.contains(s.uid.as_str())
                || (s.uid.is_empty() && names.contains(&(s.kind.clone(), s.name.clone())))
        })
        .cloned()
        .collect();
    let nodes: HashSet<&str> = out
        .pods
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.as_deref())
        .collect();
    out.nodes = o
        .nodes
        .iter()
        .filter(|n| nodes.contains(name(&n.metadata)))
        .cloned()
        .collect();
    out.leases = o.leases.clone();
    out.hpas = o.hpas.clone();
    out.pdbs = o.pdbs.clone();
    out.http_routes = o.http_routes.clone();
    out
}
