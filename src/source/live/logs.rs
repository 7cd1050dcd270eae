//! Container logs, current and previous, size-capped.

use super::*;

/// How much of each container log to keep, and how many reads at once.
#[derive(Debug, Clone, Copy)]
pub struct LogCaps {
    pub bytes: i64,
    pub lines: i64,
    pub concurrency: usize,
}

impl LogCaps {
    /// What the gate reads of a crashed run: its last lines, to compare
    /// one crash with the next.
    pub const CRASH_TAIL: LogCaps = LogCaps {
        bytes: 16 * 1024,
        lines: 20,
        concurrency: 4,
    };

    /// What `snapshot` keeps unless told otherwise, and what `gate --evidence` keeps.
    pub const DEFAULT: LogCaps = LogCaps {
        bytes: 256 * 1024,
        lines: 2000,
        concurrency: 8,
    };
}

/// One log to read.
#[derive(Debug, Clone)]
pub struct LogRequest {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub previous: bool,
}

/// The logs worth asking for: the current log of every container that has
/// run, and the previous one of every container that restarted.
fn log_requests(pods: &[Pod]) -> Vec<LogRequest> {
    let mut out = Vec::new();
    for pod in pods {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let statuses = status
            .and_then(|s| s.init_container_statuses.as_deref())
            .unwrap_or(&[])
            .iter()
            .chain(
                status
                    .and_then(|s| s.container_statuses.as_deref())
                    .unwrap_or(&[]),
            );
        for s in statuses {
            let state = s.state.as_ref();
            let has_run = state.is_some_and(|st| st.running.is_some() || st.terminated.is_some());
            let restarted = s.restart_count > 0
                || s.last_state
                    .as_ref()
                    .is_some_and(|l| l.terminated.is_some());
            for (wanted, previous) in [(has_run, false), (restarted, true)] {
                if wanted {
                    out.push(LogRequest {
                        namespace: namespace.clone(),
                        pod: name.clone(),
                        container: s.name.clone(),
                        previous,
                    });
                }
            }
        }
    }
    out
}

/// Reads container logs, `caps.concurrency` at a time. `tick` is called
/// after each read (for a progress bar). A forbidden pods/log is a gap.
pub async fn read_logs(
    conn: &Connection,
    pods: &[Pod],
    caps: LogCaps,
    tick: &(dyn Fn(usize) + Sync),
) -> (Vec<LogRecord>, Vec<Gap>) {
    read_requested(conn, log_requests(pods), caps, tick).await
}

/// Reads the logs asked for, as [`read_logs`] does.
pub async fn read_requested(
    conn: &Connection,
    requests: Vec<LogRequest>,
    caps: LogCaps,
    tick: &(dyn Fn(usize) + Sync),
) -> (Vec<LogRecord>, Vec<Gap>) {
    use futures::stream::{self, StreamExt};
    let results: Vec<_> = stream::iter(requests)
        .map(|r| async move {
            let api: Api<Pod> = Api::namespaced(conn.client.clone(), &r.namespace);
            let params = kube::api::LogParams {
                container: Some(r.container.clone()),
                previous: r.previous,
                tail_lines: Some(caps.lines),
                limit_bytes: Some(caps.bytes),
                ..kube::api::LogParams::default()
            };
            conn.count();
            let result = api.logs(&r.pod, &params).await;
            (r, result)
        })
        .buffer_unordered(caps.concurrency.max(1))
        .enumerate()
        .map(|(i, item)| {
            tick(i + 1);
            item
        })
        .collect()
        .await;
    let mut logs = Vec::new();
    let mut gaps: Vec<Gap> = Vec::new();
    for (r, result) in results {
        match result {
            // The kubelet answers 200 with this one line when the run's
            // container is gone (it keeps one dead container per name): not
            // a log, and the run it names is not in any other read either.
            Ok(text) if kubelet_lost_the_log(&text) => {}
            Ok(text) => {
                let truncated =
                    text.len() as i64 >= caps.bytes || text.lines().count() as i64 >= caps.lines;
                logs.push(LogRecord {
                    namespace: r.namespace,
                    pod: r.pod,
                    container: r.container,
                    previous: r.previous,
                    truncated,
                    text,
                });
            }
            // A container that has not run, or no previous run: nothing to keep.
            Err(kube::Error::Api(s)) if s.code == 400 || s.code == 404 => {}
            Err(e) => {
                let reason = match &e {
                    kube::Error::Api(s) => s.message.clone(),
                    other => error_chain(other),
                };
                let gap = Gap {
                    contexts: Vec::new(),
                    resource: "pods/log".into(),
                    namespace: Some(r.namespace.clone()),
                    verb: "get".into(),
                    name: None,
                    reason,
                    complete_with: None,
                    read_in: Vec::new(),
                };
                if !gaps
                    .iter()
                    .any(|g| g.namespace == gap.namespace && g.reason == gap.reason)
                {
                    gaps.push(gap);
                }
            }
        }
    }
    logs.sort_by(|a, b| {
        (&a.pod, &a.container, a.previous).cmp(&(&b.pod, &b.container, b.previous))
    });
    (logs, gaps)
}

/// `unable to retrieve container logs for containerd://<id>` (kubelet
/// 1.35, `GetContainerLogs` when the runtime no longer knows the container).
fn kubelet_lost_the_log(text: &str) -> bool {
    let line = text.trim_end();
    !line.contains('\n')
        && line
            .strip_prefix("unable to retrieve container logs for ")
            .is_some_and(|id| id.contains("://") && !id.contains(' '))
}

/// How many log reads `read_logs` will make for these Pods.
pub fn log_request_count(pods: &[Pod]) -> usize {
    log_requests(pods).len()
}

#[cfg(test)]
mod lost_log_tests {
    use super::kubelet_lost_the_log;

    #[test]
    fn the_kubelets_lost_container_answer_is_not_a_log() {
        assert!(kubelet_lost_the_log(
            "unable to retrieve container logs for containerd://86ce2d48b971a9a07c780505f35ad4edbb922c98026bb77b5379da2406432fdc"
        ));
        assert!(kubelet_lost_the_log(
            "unable to retrieve container logs for containerd://86ce\n"
        ));
    }

    #[test]
    fn a_log_that_mentions_it_among_other_lines_is_kept() {
        assert!(!kubelet_lost_the_log(
            "2026-12-01T14:51:45Z FATAL missing env MODEL_PATH\nunable to retrieve container logs for containerd://86ce"
        ));
        assert!(!kubelet_lost_the_log(
            "unable to retrieve container logs for the model store"
        ));
        assert!(!kubelet_lost_the_log(""));
    }
}
