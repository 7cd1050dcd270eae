//! A Job's own rung and state, read from its status as the Job controller
//! writes it: `serving` = complete, `progressing` = running inside its
//! deadline and back-off budget, `degraded` = some Pods failed but it can
//! still complete, `not-serving` = failed. A CronJob is judged by its
//! last Job, with its schedule and suspension beside it.

use k8s_openapi::api::batch::v1::{Job, JobCondition};

use super::state::State;
use super::{Step, StepState, facts};
use crate::catalogue::{Arg, Message};
use crate::chain::{Chain, JobRun};

/// A condition of the Job whose status is True.
pub fn condition<'a>(job: &'a Job, kind: &str) -> Option<&'a JobCondition> {
    job.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind && c.status == "True")
}

/// The condition that says the Job failed: Failed, or FailureTarget (the
/// controller decided to fail it and is still ending its Pods).
pub fn failure(job: &Job) -> Option<&JobCondition> {
    condition(job, "Failed").or_else(|| condition(job, "FailureTarget"))
}

pub fn complete(job: &Job) -> bool {
    condition(job, "Complete").is_some()
}

fn failed_pods(job: &Job) -> i32 {
    job.status.as_ref().and_then(|s| s.failed).unwrap_or(0)
}

/// The state of a Job or CronJob target, from the Job's own status;
/// `None` for any other target.
pub fn state(chain: &Chain) -> Option<State> {
    let run = chain.job.as_ref()?;
    let Some(job) = run.job else {
        // A CronJob that has run nothing yet: nothing failed, nothing done.
        return Some(State::Progressing);
    };
    Some(if failure(job).is_some() {
        State::NotServing
    } else if complete(job) {
        State::Serving
    } else if failed_pods(job) > 0 {
        State::Degraded
    } else {
        State::Progressing
    })
}

/// The names a Job's findings fill their commands with: the Job, and the
/// CronJob above it (the target then).
pub fn job_vars(run: &JobRun, vars: &mut crate::model::TemplateVars) {
    if let Some(j) = run.job {
        let name = facts::name(&j.metadata).to_string();
        vars.insert("target".into(), format!("job/{name}"));
        vars.insert("workload".into(), format!("job/{name}"));
        vars.insert("job".into(), name);
    }
    if let Some(c) = run.cron_job {
        let name = facts::name(&c.metadata).to_string();
        vars.insert("target".into(), format!("cronjob/{name}"));
        vars.insert("cronjob".into(), name);
    }
}

/// The Job's rung: it exists and its controller started it; beside it its
/// budget, and for a CronJob the schedule and whether it is suspended.
pub fn job_step(run: &JobRun) -> StepState {
    let cron: Arg = match run.cron_job {
        Some(c) => {
            let spec = c.spec.as_ref();
            let suspended = spec.and_then(|s| s.suspend).unwrap_or(false);
            Message::new("note.cron_job")
                .arg("name", facts::name(&c.metadata))
                .arg("schedule", spec.map_or("", |s| s.schedule.as_str()))
                .arg(
                    "suspended",
                    if suspended {
                        Arg::from(Message::new("note.cron_suspended"))
                    } else {
                        Arg::from("")
                    },
                )
                .arg("runs", run.runs.len())
                .into()
        }
        None => Arg::from(""),
    };
    let Some(job) = run.job else {
        return StepState {
            step: Step::Job,
            reached: false,
            at: None,
            note: Message::new("note.no_job").arg("cron", cron),
            unread: None,
            restarted: 0,
        };
    };
    let spec = job.spec.as_ref();
    let status = job.status.as_ref();
    let started = status.and_then(|s| s.start_time.as_ref()).map(|t| t.0);
    StepState {
        step: Step::Job,
        reached: started.is_some() || complete(job) || failure(job).is_some(),
        at: started.or(facts::created(&job.metadata)),
        note: Message::new("note.job")
            .arg("name", facts::name(&job.metadata))
            .arg("succeeded", status.and_then(|s| s.succeeded).unwrap_or(0))
            .arg("completions", spec.and_then(|s| s.completions).unwrap_or(1))
            .arg("failed", failed_pods(job))
            .arg("backoff", spec.and_then(|s| s.backoff_limit).unwrap_or(6))
            .arg("cron", cron),
        unread: None,
        restarted: 0,
    }
}
