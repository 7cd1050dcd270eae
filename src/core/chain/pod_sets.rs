//! The walk of a StatefulSet or DaemonSet: its Pods by owner UID, its
//! ControllerRevisions, the revision each Pod is (or is held) on, and its
//! Services.

use k8s_openapi::api::core::v1::Service;

use super::{
    CONTROLLER_REVISION_HASH, Chain, ChainPod, DAEMONSET_TEMPLATE_GENERATION, Index,
    POD_TEMPLATE_GENERATION, PodSet, SetRevision, SetStrategy, name, ns_of, ordinal,
    pod_revision_hash, selector_matches, uid,
};
use crate::model::TargetSpec;

impl<'a> Index<'a> {
    /// A StatefulSet's or DaemonSet's chain: its Pods by owner UID, its
    /// ControllerRevisions, and the update revision each Pod is (or is
    /// meant to stay) on.
    pub(super) fn walk_pod_set(
        &self,
        target: &TargetSpec,
        namespace: &str,
        set: PodSet<'a>,
    ) -> Chain<'a> {
        let set_uid = uid(set.meta());
        let set_name = set.name();
        let mut set_revisions: Vec<SetRevision> = self
            .revisions_by_owner
            .get(set_uid)
            .into_iter()
            .flatten()
            .filter(|r| ns_of(&r.metadata) == namespace)
            .map(|r| SetRevision {
                object: r,
                revision: r.revision,
                current: false,
            })
            .collect();
        set_revisions.sort_by(|a, b| {
            b.revision
                .cmp(&a.revision)
                .then_with(|| a.name().cmp(b.name()))
        });
        // The update revision: the StatefulSet controller records it; a
        // DaemonSet's is its newest ControllerRevision.
        let update_hash: Option<String> = match set {
            PodSet::StatefulSet(s) => s
                .status
                .as_ref()
                .and_then(|st| st.update_revision.clone())
                .filter(|r| !r.is_empty()),
            PodSet::DaemonSet(_) => set_revisions.first().map(|r| {
                r.object
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
                    .cloned()
                    .or_else(|| {
                        r.name()
                            .strip_prefix(set_name)
                            .and_then(|h| h.strip_prefix('-'))
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| r.name().to_string())
            }),
        };
        if let Some(hash) = &update_hash
            && let Some(r) = set_revisions.iter_mut().find(|r| r.matches(set_name, hash))
        {
            r.current = true;
        }
        // Without a ControllerRevision (a dump that left them out), a
        // DaemonSet Pod of the current template carries its generation.
        let template_generation = match set {
            PodSet::DaemonSet(d) if set_revisions.is_empty() => d
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DAEMONSET_TEMPLATE_GENERATION))
                .cloned(),
            _ => None,
        };
        let strategy = set.strategy();
        let mut pods: Vec<ChainPod> = self
            .pods_by_owner
            .get(set_uid)
            .into_iter()
            .flatten()
            .copied()
            .filter(|pod| ns_of(&pod.metadata) == namespace)
            .map(|pod| {
                let hash = pod_revision_hash(pod).unwrap_or("");
                let at_update = match (&update_hash, &template_generation) {
                    (Some(h), _) => !hash.is_empty() && hash == h,
                    (None, Some(generation)) => {
                        pod.metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(POD_TEMPLATE_GENERATION))
                            == Some(generation)
                    }
                    (None, None) => false,
                };
                let known = update_hash.is_some() || template_generation.is_some();
                let held = !at_update
                    && known
                    && match strategy {
                        SetStrategy::OnDelete => true,
                        SetStrategy::RollingUpdate { partition } => {
                            matches!(set, PodSet::StatefulSet(_))
                                && ordinal(pod).is_some_and(|o| o < partition)
                        }
                    };
                ChainPod {
                    pod,
                    revision: set_revisions
                        .iter()
                        .find(|r| r.matches(set_name, hash))
                        .map(|r| r.revision),
                    current: at_update || held,
                    held,
                }
            })
            .collect();
        pods.sort_by(|a, b| {
            b.current
                .cmp(&a.current)
                .then_with(|| b.revision.cmp(&a.revision))
                .then_with(|| {
                    ordinal(a.pod)
                        .cmp(&ordinal(b.pod))
                        .then_with(|| name(&a.pod.metadata).cmp(name(&b.pod.metadata)))
                })
        });
        let services = set_services(self.services_in(namespace), set);
        let endpoint_slices = self.slices_of(namespace, &services);
        Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            platform: None,
            knative_service: None,
            deployment: None,
            replica_sets: Vec::new(),
            pod_set: Some(set),
            set_revisions,
            pods,
            services,
            endpoint_slices,
            controller: None,
            job: None,
            groups: Vec::new(),
        }
    }
}

/// The Services of a pod set: a StatefulSet's governing Service
/// (`spec.serviceName`, headless as a rule) first, then every Service whose
/// selector matches the template's labels, else one of the set's name.
fn set_services<'a>(in_namespace: &[&'a Service], set: PodSet) -> Vec<&'a Service> {
    let governing = match set {
        PodSet::StatefulSet(s) => s
            .spec
            .as_ref()
            .and_then(|s| s.service_name.as_deref())
            .filter(|n| !n.is_empty()),
        PodSet::DaemonSet(_) => None,
    };
    let mut out: Vec<&Service> = in_namespace
        .iter()
        .copied()
        .filter(|s| governing == Some(name(&s.metadata)))
        .collect();
    let labels = set.template_labels();
    for s in in_namespace.iter().copied() {
        if selector_matches(s, labels) && !out.iter().any(|o| std::ptr::eq(*o, s)) {
            out.push(s);
        }
    }
    if out.is_empty() {
        out.extend(
            in_namespace
                .iter()
                .copied()
                .filter(|s| name(&s.metadata) == set.name()),
        );
    }
    out
}
