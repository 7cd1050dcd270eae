//! A Service as a target (`svc/NAME`): "why does this Service answer
//! 503?" is answered by the workload whose Pods it selects.

use super::owners::{name, ns_of, selector_matches};
use super::{Chain, ControllerLocation, Index, NotFoundHints, TargetNotFound};
use crate::model::{TargetKind, TargetSpec};

impl<'a> Index<'a> {
    /// Walks the one workload whose Pods the Service selects. A Service
    /// that selects no Pod, or the Pods of several workloads, is an error
    /// that says so (with the workloads to choose from).
    pub(super) fn walk_service(
        &self,
        target: &TargetSpec,
        namespace: &str,
        controller: Option<&ControllerLocation>,
        not_found: impl Fn() -> TargetNotFound,
    ) -> Result<Chain<'a>, TargetNotFound> {
        let service = self
            .snapshot
            .objects
            .services
            .iter()
            .find(|s| ns_of(&s.metadata) == namespace && name(&s.metadata) == target.name)
            .ok_or_else(&not_found)?;
        let mut workloads: Vec<TargetSpec> = Vec::new();
        let selected = self.snapshot.objects.pods.iter().filter(|p| {
            ns_of(&p.metadata) == namespace && selector_matches(service, p.metadata.labels.as_ref())
        });
        for pod in selected {
            let as_pod = TargetSpec {
                kind: TargetKind::Pod,
                namespace: Some(namespace.to_string()),
                name: name(&pod.metadata).to_string(),
            };
            if let Ok(chain) = self.walk(&as_pod, namespace, controller) {
                let workload = workload_of(&chain, namespace);
                if !workloads.contains(&workload) {
                    workloads.push(workload);
                }
            }
        }
        if let [one] = workloads.as_slice() {
            return self.walk(one, namespace, controller);
        }
        let selector = service
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .map(|s| {
                s.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "none".into());
        Err(TargetNotFound {
            available: workloads
                .iter()
                .map(|w| format!("{}/{}", w.kind.short(), w.name))
                .collect(),
            hints: Box::new(NotFoundHints {
                service_selector: Some(selector),
                ..Default::default()
            }),
            ..not_found()
        })
    }
}

/// The workload a chain walked from one of its Pods is about, named as a
/// target: the ModelService above it, else its Deployment, pod set,
/// CronJob or Job, lone ReplicaSet, or the Pod itself.
fn workload_of(chain: &Chain, namespace: &str) -> TargetSpec {
    let (kind, object) = if let Some(p) = chain.platform {
        (p.platform.target, name(&p.object.metadata))
    } else if let Some(d) = chain.deployment {
        (TargetKind::Deployment, name(&d.metadata))
    } else if let Some(set) = chain.pod_set {
        (set.kind(), set.name())
    } else if let Some(c) = chain.job.as_ref().and_then(|j| j.cron_job) {
        (TargetKind::CronJob, name(&c.metadata))
    } else if let Some(j) = chain.job.as_ref().and_then(|j| j.job) {
        (TargetKind::Job, name(&j.metadata))
    } else if let Some(rs) = chain.lone_replica_set() {
        (TargetKind::ReplicaSet, name(&rs.metadata))
    } else {
        (TargetKind::Pod, chain.target.name.as_str())
    };
    TargetSpec {
        kind,
        namespace: Some(namespace.to_string()),
        name: object.to_string(),
    }
}
