//! Jobs and CronJobs as targets (`job/NAME`, `cronjob/NAME`): a Job's
//! Pods are walked by owner UID, a CronJob's Jobs by owner UID too, and a
//! CronJob is judged by its last run. There is no ReplicaSet, no revision
//! and no Service step: the Pods run to completion.

use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{Chain, ChainPod, Index, name, ns_of, owner_uid_of_kind, uid};
use crate::model::TargetSpec;

/// The Job a chain judges, and the CronJob above it.
#[derive(Debug, Clone)]
pub struct JobRun<'a> {
    /// The Job judged: the target, or a CronJob's last run (`None` while
    /// a CronJob has run no Job).
    pub job: Option<&'a Job>,
    pub cron_job: Option<&'a CronJob>,
    /// A CronJob's Jobs in the snapshot, newest first (a Job target: itself).
    pub runs: Vec<&'a Job>,
}

fn in_place(meta: &ObjectMeta, namespace: &str, wanted: &str) -> bool {
    ns_of(meta) == namespace && name(meta) == wanted
}

impl<'a> Index<'a> {
    pub(super) fn job_named(&self, namespace: &str, wanted: &str) -> Option<&'a Job> {
        self.snapshot
            .objects
            .jobs
            .iter()
            .find(|j| in_place(&j.metadata, namespace, wanted))
    }

    pub(super) fn cron_job_named(&self, namespace: &str, wanted: &str) -> Option<&'a CronJob> {
        self.snapshot
            .objects
            .cron_jobs
            .iter()
            .find(|c| in_place(&c.metadata, namespace, wanted))
    }

    /// The Job of the snapshot that owns a Pod, by owner UID.
    pub(super) fn owning_job(&self, pod: &Pod) -> Option<&'a Job> {
        let owner = owner_uid_of_kind(&pod.metadata, "Job")?;
        self.snapshot
            .objects
            .jobs
            .iter()
            .find(|j| uid(&j.metadata) == owner)
    }

    fn owning_cron_job(&self, job: &Job) -> Option<&'a CronJob> {
        let owner = owner_uid_of_kind(&job.metadata, "CronJob")?;
        self.snapshot
            .objects
            .cron_jobs
            .iter()
            .find(|c| uid(&c.metadata) == owner)
    }

    /// A Job's chain: its Pods by owner UID. A Pod that failed is an
    /// earlier attempt once another Pod of the Job has not failed.
    pub(super) fn walk_job(&self, target: &TargetSpec, namespace: &str, job: &'a Job) -> Chain<'a> {
        let cron_job = self.owning_cron_job(job);
        let runs = match cron_job {
            Some(c) => self.runs_of(c),
            None => vec![job],
        };
        self.job_chain(
            target,
            namespace,
            JobRun {
                job: Some(job),
                cron_job,
                runs,
            },
        )
    }

    /// A CronJob's chain: its last run's.
    pub(super) fn walk_cron_job(
        &self,
        target: &TargetSpec,
        namespace: &str,
        cron_job: &'a CronJob,
    ) -> Chain<'a> {
        let runs = self.runs_of(cron_job);
        self.job_chain(
            target,
            namespace,
            JobRun {
                job: runs.first().copied(),
                cron_job: Some(cron_job),
                runs,
            },
        )
    }

    /// A CronJob's Jobs, by owner UID, newest first.
    fn runs_of(&self, cron_job: &CronJob) -> Vec<&'a Job> {
        let owner = uid(&cron_job.metadata);
        let mut runs: Vec<&Job> = self
            .snapshot
            .objects
            .jobs
            .iter()
            .filter(|j| {
                !owner.is_empty() && owner_uid_of_kind(&j.metadata, "CronJob") == Some(owner)
            })
            .collect();
        runs.sort_by(|a, b| {
            let created = |j: &Job| j.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(b)
                .cmp(&created(a))
                .then_with(|| name(&b.metadata).cmp(name(&a.metadata)))
        });
        runs
    }

    fn job_chain(&self, target: &TargetSpec, namespace: &str, run: JobRun<'a>) -> Chain<'a> {
        let pods: Vec<&Pod> = run
            .job
            .and_then(|j| self.pods_by_owner.get(uid(&j.metadata)))
            .into_iter()
            .flatten()
            .copied()
            .filter(|p| ns_of(&p.metadata) == namespace)
            .collect();
        let failed = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed");
        let retried = pods.iter().any(|p| !failed(p));
        let pods = pods
            .into_iter()
            .map(|pod| ChainPod {
                pod,
                revision: None,
                current: !(retried && failed(pod)),
                held: false,
            })
            .collect();
        Chain {
            namespace: namespace.to_string(),
            target: target.clone(),
            platform: None,
            knative_service: None,
            deployment: None,
            replica_sets: Vec::new(),
            pod_set: None,
            set_revisions: Vec::new(),
            pods,
            services: Vec::new(),
            endpoint_slices: Vec::new(),
            controller: None,
            job: Some(run),
            groups: Vec::new(),
        }
    }
}
