//! Every kind a snapshot holds typed, declared once. The rest is derived
//! from this table or checked against it by the compiler: [`Objects`]'s
//! counts and merge match on [`Kind`] or take the struct apart field by
//! field, so a kind added here or there does not build until every place
//! that lists kinds has it (the file reader, the writer, the read plan,
//! `mdiag snapshot`'s inventory).

use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Objects;

macro_rules! kinds {
    ($($kind:ident => $name:literal, $group:literal, $resource:literal;)*) => {
        /// A kind of object the analysis reads.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($kind,)*
        }

        impl Kind {
            /// Every kind, in the order files are written and counts shown.
            pub const ALL: &[Kind] = &[$(Kind::$kind,)*];

            /// The kind as the API names it (`Deployment`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$kind => $name,)*
                }
            }

            /// Its API group (`""` for the core group). The ModelService's
            /// is whatever discovery finds; `modeldock` names the usual one.
            pub fn group(self) -> &'static str {
                match self {
                    $(Kind::$kind => $group,)*
                }
            }

            /// Its plural resource, as gaps, `kubectl get` and watches name it.
            pub fn resource(self) -> &'static str {
                match self {
                    $(Kind::$kind => $resource,)*
                }
            }
        }
    };
}

kinds! {
    ModelService => "ModelService", "modeldock.io", "modelservices";
    InferenceService => "InferenceService", "serving.kserve.io", "inferenceservices";
    Rollout => "Rollout", "argoproj.io", "rollouts";
    LeaderWorkerSet => "LeaderWorkerSet", "leaderworkerset.x-k8s.io", "leaderworkersets";
    // Knative Serving's Service: its kind name is the core Service's, so
    // it is told apart by its group wherever a kind is looked up.
    KnativeService => "Service", "serving.knative.dev", "services";
    Deployment => "Deployment", "apps", "deployments";
    ReplicaSet => "ReplicaSet", "apps", "replicasets";
    StatefulSet => "StatefulSet", "apps", "statefulsets";
    DaemonSet => "DaemonSet", "apps", "daemonsets";
    ControllerRevision => "ControllerRevision", "apps", "controllerrevisions";
    Pod => "Pod", "", "pods";
    Service => "Service", "", "services";
    EndpointSlice => "EndpointSlice", "discovery.k8s.io", "endpointslices";
    Event => "Event", "", "events";
    Node => "Node", "", "nodes";
    Lease => "Lease", "coordination.k8s.io", "leases";
    HorizontalPodAutoscaler => "HorizontalPodAutoscaler", "autoscaling", "horizontalpodautoscalers";
    PodDisruptionBudget => "PodDisruptionBudget", "policy", "poddisruptionbudgets";
    HttpRoute => "HTTPRoute", "gateway.networking.k8s.io", "httproutes";
    Job => "Job", "batch", "jobs";
    CronJob => "CronJob", "batch", "cronjobs";
}

impl Kind {
    /// Its resource as gaps and `kubectl get` name it: the plural, with
    /// its group where a kind of another group has the same plural
    /// (`services.serving.knative.dev` beside the core `services`).
    pub fn qualified_resource(self) -> &'static str {
        match self {
            Kind::KnativeService => "services.serving.knative.dev",
            other => other.resource(),
        }
    }
}

impl Objects {
    /// How many objects of one kind the snapshot holds.
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::ModelService => self.model_services.len(),
            Kind::InferenceService => self.inference_services.len(),
            Kind::Rollout => self.rollouts.len(),
            Kind::LeaderWorkerSet => self.leader_worker_sets.len(),
            Kind::KnativeService => self.knative_services.len(),
            Kind::Deployment => self.deployments.len(),
            Kind::ReplicaSet => self.replica_sets.len(),
            Kind::StatefulSet => self.stateful_sets.len(),
            Kind::DaemonSet => self.daemon_sets.len(),
            Kind::ControllerRevision => self.controller_revisions.len(),
            Kind::Pod => self.pods.len(),
            Kind::Service => self.services.len(),
            Kind::EndpointSlice => self.endpoint_slices.len(),
            Kind::Event => self.events.len(),
            Kind::Node => self.nodes.len(),
            Kind::Lease => self.leases.len(),
            Kind::HorizontalPodAutoscaler => self.hpas.len(),
            Kind::PodDisruptionBudget => self.pdbs.len(),
            Kind::HttpRoute => self.http_routes.len(),
            Kind::Job => self.jobs.len(),
            Kind::CronJob => self.cron_jobs.len(),
        }
    }

    /// The metadata of every object of one kind, in the snapshot's order.
    /// An Event is a record cut to what is read of it, not an object: none.
    pub fn metas(&self, kind: Kind) -> Vec<&ObjectMeta> {
        fn of<T: Metadata<Ty = ObjectMeta>>(items: &[T]) -> Vec<&ObjectMeta> {
            items.iter().map(|i| i.metadata()).collect()
        }
        fn dynamic(items: &[kube_core::DynamicObject]) -> Vec<&ObjectMeta> {
            items.iter().map(|i| &i.metadata).collect()
        }
        match kind {
            Kind::ModelService => dynamic(&self.model_services),
            Kind::InferenceService => dynamic(&self.inference_services),
            Kind::Rollout => self.rollouts.iter().map(|r| &r.object().metadata).collect(),
            Kind::LeaderWorkerSet => dynamic(&self.leader_worker_sets),
            Kind::KnativeService => dynamic(&self.knative_services),
            Kind::Deployment => of(&self.deployments),
            Kind::ReplicaSet => of(&self.replica_sets),
            Kind::StatefulSet => of(&self.stateful_sets),
            Kind::DaemonSet => of(&self.daemon_sets),
            Kind::ControllerRevision => of(&self.controller_revisions),
            Kind::Pod => of(&self.pods),
            Kind::Service => of(&self.services),
            Kind::EndpointSlice => of(&self.endpoint_slices),
            Kind::Event => Vec::new(),
            Kind::Node => of(&self.nodes),
            Kind::Lease => of(&self.leases),
            Kind::HorizontalPodAutoscaler => of(&self.hpas),
            Kind::PodDisruptionBudget => of(&self.pdbs),
            Kind::HttpRoute => dynamic(&self.http_routes),
            Kind::Job => of(&self.jobs),
            Kind::CronJob => of(&self.cron_jobs),
        }
    }

    /// The namespaces that hold an object of one kind (none for a
    /// cluster-scoped kind), sorted.
    pub fn namespaces(&self, kind: Kind) -> std::collections::BTreeSet<String> {
        let found: Vec<String> = match kind {
            Kind::Event => self.events.iter().map(|e| e.subject().namespace).collect(),
            _ => self
                .metas(kind)
                .into_iter()
                .filter_map(|m| m.namespace.clone())
                .collect(),
        };
        found.into_iter().filter(|ns| !ns.is_empty()).collect()
    }

    /// Every object, typed or not.
    pub fn len(&self) -> usize {
        Kind::ALL.iter().map(|k| self.count(*k)).sum::<usize>() + self.other.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives back what each list grew by and does not use: a big read
    /// grows its lists by doubling, and a Pod or Deployment is kilobytes
    /// before its first string (a 50 MB dump left some 7 MB unused).
    pub fn shrink_to_fit(&mut self) {
        // Taken apart field by field, with no `..`: a new kind does not
        // build until it is shrunk here too.
        let Objects {
            model_services,
            inference_services,
            rollouts,
            leader_worker_sets,
            knative_services,
            deployments,
            replica_sets,
            stateful_sets,
            daemon_sets,
            controller_revisions,
            pods,
            services,
            endpoint_slices,
            events,
            nodes,
            leases,
            hpas,
            pdbs,
            http_routes,
            jobs,
            cron_jobs,
            other,
        } = self;
        model_services.shrink_to_fit();
        inference_services.shrink_to_fit();
        rollouts.shrink_to_fit();
        leader_worker_sets.shrink_to_fit();
        knative_services.shrink_to_fit();
        deployments.shrink_to_fit();
        replica_sets.shrink_to_fit();
        stateful_sets.shrink_to_fit();
        daemon_sets.shrink_to_fit();
        controller_revisions.shrink_to_fit();
        pods.shrink_to_fit();
        services.shrink_to_fit();
        endpoint_slices.shrink_to_fit();
        events.shrink_to_fit();
        nodes.shrink_to_fit();
        leases.shrink_to_fit();
        hpas.shrink_to_fit();
        pdbs.shrink_to_fit();
        http_routes.shrink_to_fit();
        jobs.shrink_to_fit();
        cron_jobs.shrink_to_fit();
        other.shrink_to_fit();
    }

    /// Moves every object of `more` in after this snapshot's own, kind by
    /// kind (two snapshots read apart, judged as one).
    pub fn append(&mut self, more: Objects) {
        // Taken apart field by field, with no `..`: a new kind does not
        // build until it is merged here too.
        let Objects {
            model_services,
            inference_services,
            rollouts,
            leader_worker_sets,
            knative_services,
            deployments,
            replica_sets,
            stateful_sets,
            daemon_sets,
            controller_revisions,
            pods,
            services,
            endpoint_slices,
            events,
            nodes,
            leases,
            hpas,
            pdbs,
            http_routes,
            jobs,
            cron_jobs,
            other,
        } = more;
        self.model_services.extend(model_services);
        self.inference_services.extend(inference_services);
        self.rollouts.extend(rollouts);
        self.leader_worker_sets.extend(leader_worker_sets);
        self.knative_services.extend(knative_services);
        self.deployments.extend(deployments);
        self.replica_sets.extend(replica_sets);
        self.stateful_sets.extend(stateful_sets);
        self.daemon_sets.extend(daemon_sets);
        self.controller_revisions.extend(controller_revisions);
        self.pods.extend(pods);
        self.services.extend(services);
        self.endpoint_slices.extend(endpoint_slices);
        self.events.extend(events);
        self.nodes.extend(nodes);
        self.leases.extend(leases);
        self.hpas.extend(hpas);
        self.pdbs.extend(pdbs);
        self.http_routes.extend(http_routes);
        self.jobs.extend(jobs);
        self.cron_jobs.extend(cron_jobs);
        self.other.extend(other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_name_and_one_resource_in_its_group() {
        // Knative's Service shares its name and plural with the core one:
        // a kind is its group and name, a resource its qualified plural.
        let mut names: Vec<(&str, &str)> =
            Kind::ALL.iter().map(|k| (k.group(), k.name())).collect();
        let mut resources: Vec<&str> = Kind::ALL.iter().map(|k| k.qualified_resource()).collect();
        names.sort();
        names.dedup();
        resources.sort();
        resources.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
        assert_eq!(resources.len(), Kind::ALL.len());
        for k in Kind::ALL {
            assert_eq!(k.resource(), format!("{}s", k.name().to_lowercase()));
            let (plural, group) = (k.resource(), k.group());
            let qualified = k.qualified_resource();
            assert!(qualified == plural || qualified == format!("{plural}.{group}"));
        }
    }

    #[test]
    fn a_merge_keeps_every_object_of_both() {
        let mut a = Objects::default();
        a.pods.push(Default::default());
        a.other.push(serde_json::json!({"kind": "ConfigMap"}));
        let mut b = Objects::default();
        b.stateful_sets.push(Default::default());
        b.daemon_sets.push(Default::default());
        b.pods.push(Default::default());
        a.append(b);
        assert_eq!(a.count(Kind::Pod), 2);
        assert_eq!(a.count(Kind::StatefulSet), 1);
        assert_eq!(a.count(Kind::DaemonSet), 1);
        assert_eq!(a.len(), 5);
    }
}
