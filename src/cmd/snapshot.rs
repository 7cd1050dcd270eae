//! `mdiag snapshot [TARGET] --output-file FILE`: the evidence in one file, before Pods
//! are recreated and their logs are gone.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use jiff::Timestamp;

use super::source::explain_not_found;
use crate::exit::Exit;
use crate::request::SnapshotRequest;
use mdiag_core::catalogue::{Arg, Lang, Message};
use mdiag_core::chain::{self, chain_objects};
use mdiag_core::model::Snapshot;
use mdiag_source::live::{self, LogCaps};
use mdiag_source::write::{check_writable, to_file, write_file_as};

pub async fn run(request: &SnapshotRequest) -> anyhow::Result<Exit> {
    let started = Instant::now();
    let SnapshotRequest {
        target,
        source,
        file: path,
        format,
        logs,
        redactor,
    } = request;
    // A folder that is not there is found now, not after the capture.
    check_writable(path)?;
    let loaded = source.load(target.as_ref()).await?;
    let mut snapshot = loaded.snapshot;

    // Keep the target's chain (or the whole namespace), nothing else.
    if let Some(t) = &target {
        let kept = match chain::walk(&snapshot, t, &loaded.namespace, source.controller.as_ref()) {
            Ok(chain) => chain_objects(&snapshot, &chain),
            Err(not_found) => return Err(explain_not_found(&snapshot, not_found)),
        };
        snapshot.objects = kept;
    }

    if let Some(conn) = &loaded.connection {
        add_logs(conn, &mut snapshot, &loaded.namespace, *logs, true).await;
    } else if snapshot.origin.captured_at.is_none() {
        // Re-writing a dump: keep the clock the dump would be judged at.
        snapshot.origin.captured_at = snapshot.origin.newest_seen;
        snapshot.origin.captured_by = Some(format!(
            "mdiag {} from {}",
            env!("CARGO_PKG_VERSION"),
            snapshot.origin.location
        ));
    }
    snapshot.origin.namespace = Some(loaded.namespace.clone());
    snapshot.origin.target = target.clone().map(|mut t| {
        t.namespace = Some(loaded.namespace.clone());
        t
    });

    let file = to_file(&snapshot, redactor);
    let bytes = write_file_as(path, &file, *format)?;
    summary(
        &snapshot,
        &file,
        path,
        bytes,
        started,
        loaded.connection.as_ref().map(|c| c.requests()),
        request.source.lang,
    );
    Ok(Exit::Healthy)
}

/// Reads the logs of the namespace's Pods into a live snapshot and stamps
/// the capture time: the last step before writing it.
pub async fn add_logs(
    conn: &live::Connection,
    snapshot: &mut Snapshot,
    namespace: &str,
    caps: LogCaps,
    show_progress: bool,
) {
    let pods: Vec<_> = snapshot
        .objects
        .pods
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some(namespace))
        .cloned()
        .collect();
    snapshot.logs.clear();
    read_logs_of(conn, snapshot, &pods, caps, show_progress).await;
    let origin = &mut snapshot.origin;
    origin.captured_at = Some(Timestamp::now());
    origin.captured_by = Some(format!("mdiag {}", env!("CARGO_PKG_VERSION")));
}

/// Reads the logs of `pods` (current, and previous where a container
/// restarted; capped by `caps`) into the snapshot; a forbidden `pods/log`
/// becomes a gap. `snapshot`, `gate --evidence` and `trace --logs` read
/// logs through here.
pub async fn read_logs_of(
    conn: &live::Connection,
    snapshot: &mut Snapshot,
    pods: &[k8s_openapi::api::core::v1::Pod],
    caps: LogCaps,
    show_progress: bool,
) {
    let bar = if show_progress {
        progress(live::log_request_count(pods) as u64)
    } else {
        ProgressBar::hidden()
    };
    let (logs, gaps) =
        live::read_logs(conn, pods, caps, &|done| bar.set_position(done as u64)).await;
    bar.finish_and_clear();
    snapshot.logs.extend(logs);
    snapshot.gaps.extend(gaps);
}

fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() || total == 0 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} logs {pos}/{len} {wide_bar} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

fn summary(
    snapshot: &Snapshot,
    file: &mdiag_source::format::SnapshotFile,
    path: &std::path::Path,
    bytes: u64,
    started: Instant,
    requests: Option<u32>,
    lang: Lang,
) {
    let say = |m: Message| eprintln!("mdiag: {}", m.render(lang));
    let cut = snapshot.logs.iter().filter(|l| l.truncated).count();
    say(Message::new("stderr.snapshot_written")
        .arg("path", mdiag_source::write::display_path(path).to_string())
        .arg("bytes", bytes as i64)
        .arg("objects", file.objects.len() as i64)
        .arg("logs", file.logs.len() as i64)
        .arg("cut", cut as i64)
        .arg("gaps", file.gaps.len() as i64)
        .arg("redactions", file.redactions.len() as i64)
        .arg("seconds", format!("{:.1}", started.elapsed().as_secs_f64()))
        .arg(
            "requests",
            requests.map_or(Arg::Text(String::new()), |r| {
                Message::new("stderr.api_requests").arg("n", r).into()
            }),
        ));
    if !file.redactions.is_empty() {
        say(redaction_summary(&file.redactions));
    }
    for gap in &file.gaps {
        let place = match gap.namespace.as_deref() {
            Some(ns) => Message::new("stderr.in_namespace")
                .arg("namespace", ns)
                .into(),
            None => Arg::Text(String::new()),
        };
        say(Message::new("stderr.snapshot_gap")
            .arg("verb", gap.verb.as_str())
            .arg("resource", gap.resource.as_str())
            .arg("place", place)
            .arg("reason", gap.reason.as_str()));
    }
}

/// One line on what was redacted: values per rule, never the values.
pub fn redaction_summary(redactions: &[mdiag_core::model::Redaction]) -> Message {
    let mut per_rule: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
    for r in redactions {
        *per_rule.entry(r.rule.as_str()).or_default() += r.count;
    }
    let total: u32 = per_rule.values().sum();
    let places: std::collections::BTreeSet<&str> =
        redactions.iter().map(|r| r.path.as_str()).collect();
    let rules = per_rule.iter().map(|(rule, n)| format!("{rule} {n}"));
    Message::new("stderr.redacted")
        .arg("total", total)
        .arg("places", places.len() as i64)
        .arg("rules", Arg::list(rules, "sep.comma"))
}
