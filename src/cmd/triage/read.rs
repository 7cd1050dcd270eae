//! Reading and judging a triage's scope: a file or one namespace whole, a
//! live namespace in shards, `-A` a few namespaces at a time.

use super::*;
use crate::error::UsageError;
use mdiag_core::analysis::contents::Contents;
use mdiag_core::catalogue::Message;

pub(super) fn pods_per_shard() -> usize {
    std::env::var(PODS_PER_SHARD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or(live::PODS_PER_SHARD)
}

/// The most namespaces read and judged at once by a live `triage -A`
/// (their objects are dropped once judged); fewer while the memory held
/// is over a budget (memory.rs).
pub(super) const NAMESPACES_AT_ONCE: usize = 3;

/// Reads and analyzes. A live `-A` goes a namespace at a time when the
/// namespaces may be listed, keeping only each one's diagnoses and gaps, so
/// memory is bounded by what is kept, not by what was listed; otherwise
/// (a file, `-n`, or namespaces that cannot be listed) the scope is read
/// whole and judged.
pub(super) async fn read_and_analyze(request: &TriageRequest) -> anyhow::Result<Triaged> {
    let (source, filter, at) = (&request.source, request.filter.as_ref(), request.at);
    let selector = request.selector.as_deref();
    let t_load = Instant::now();
    let (snapshot, namespace, connection) =
        if request.all_namespaces && source.snapshot_file.is_none() {
            let conn = live::connect(&source.live).await?;
            let read = TraceRead {
                namespace: None,
                resource: source.resource.as_deref(),
                controller: source.controller.as_ref(),
            };
            match live::namespace_list(&conn).await {
                Ok(names) => return by_namespace(conn, &read, &names, selector, filter).await,
                Err(_) => {
                    let snapshot = live::read_scoped(&conn, &read, selector).await?;
                    (snapshot, None, Some(conn))
                }
            }
        } else if source.snapshot_file.is_none() {
            // One namespace, live: read and judged in parts like each of -A's.
            let conn = live::connect(&source.live).await?;
            let ns = source.live_namespace(&conn.default_namespace)?;
            let read = TraceRead {
                namespace: Some(&ns),
                resource: source.resource.as_deref(),
                controller: source.controller.as_ref(),
            };
            let names = [ns.clone()];
            let mut judged = by_namespace(conn, &read, &names, selector, filter).await?;
            judged.namespace = Some(ns);
            return Ok(judged);
        } else {
            source
                .load_scope_selected(request.all_namespaces, selector)
                .await?
        };
    let load_time = t_load.elapsed();
    if let Some(at) = at {
        refuse_before_the_specs(&snapshot, namespace.as_deref(), at)?;
    }
    let mut snapshot = snapshot;
    // Whole logs before the analysis quotes their last lines.
    source.redactor.logs(&mut snapshot.logs);
    let mut judged = analyze_read(snapshot, namespace, filter, source.controller.as_ref(), at);
    judged.connection = connection;
    judged.load_time = load_time;
    Ok(judged)
}

/// `--at` before the last write of a spec the triage judges is refused:
/// the file holds only the spec as then written (docs/contract.md).
pub fn refuse_before_the_specs(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    at: Timestamp,
) -> anyhow::Result<()> {
    match mdiag_core::analysis::snapshot_spec_floor(snapshot, namespace) {
        Some((written, what)) if at < written => Err(UsageError(
            Message::new("usage.at_before_spec")
                .arg("at", at.to_string())
                .arg("what", what)
                .arg("written", written.to_string())
                .arg(
                    "range",
                    Message::new("usage.at_from").arg("start", written.to_string()),
                ),
        )
        .into()),
        _ => Ok(()),
    }
}

/// Judges every workload of a snapshot already read (in `namespace`, or
/// all of them), at `at` or the snapshot's own clock.
pub(super) fn analyze_read(
    mut snapshot: Snapshot,
    namespace: Option<String>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    at: Option<Timestamp>,
) -> Triaged {
    if let Some(at) = at {
        mdiag_core::model::as_of(&mut snapshot, at);
    }
    let clock = Clock::choose(&snapshot.origin, at, Timestamp::now());
    let t_analysis = Instant::now();
    let items = triage::triage(
        &snapshot,
        namespace.as_deref(),
        filter,
        controller,
        clock.now,
    );
    Triaged {
        objects: snapshot.objects.len(),
        snapshot,
        namespace,
        connection: None,
        items,
        clock,
        load_time: Duration::ZERO,
        analysis_time: t_analysis.elapsed(),
        clusters: Vec::new(),
    }
}

/// The triage of a whole snapshot file already read, as `triage -A
/// --snapshot FILE [--at TIME]` judges it (for `mdiag mcp`'s summary of a
/// file, which reads it once). It may hold no workload.
///
/// It is redacted by the default rules: the summary tool has no request
/// to carry the server's `--redact` patterns.
pub fn of_snapshot(mut snapshot: Snapshot, at: Option<Timestamp>) -> Triaged {
    let redactor = Redactor::default();
    redactor.logs(&mut snapshot.logs);
    let mut judged = analyze_read(snapshot, None, None, None, at);
    judged.redact(&redactor);
    judged
}

/// What a summary of a snapshot file shows: what it holds (origin, counts,
/// logs, gaps, redactions) and its triage, both redacted by the default
/// rules, as [`of_snapshot`] redacts. `mdiag mcp`'s snapshot_summary tool
/// computes the contents itself from the file as read, so the gaps'
/// reasons it shows are not redacted until it calls this instead.
pub fn summary_of(snapshot: Snapshot, at: Option<Timestamp>) -> (Contents, Triaged) {
    let redactor = Redactor::default();
    let mut contents = mdiag_core::analysis::contents::contents(&snapshot);
    redactor.gaps(&mut contents.gaps);
    redactor.origin(&mut contents.origin);
    (contents, of_snapshot(snapshot, at))
}

/// One namespace's diagnoses, its own gaps, the objects read and the
/// time its analysis took.
pub(super) type OneNamespace = (Triage, Vec<Gap>, usize, Duration);

/// A live `triage -A`, a namespace at a time: the common objects once, then
/// up to [`NAMESPACES_AT_ONCE`] namespaces read (each one's lists at once),
/// judged and dropped; only one while the process holds more than its
/// memory budget (memory.rs). The gaps are the common ones, then each namespace's
/// own, in the namespaces' order; the diagnoses are ranked once at the end.
pub(super) async fn by_namespace(
    conn: Connection,
    read: &TraceRead<'_>,
    names: &[String],
    selector: Option<&str>,
    filter: Option<&LabelFilter>,
) -> anyhow::Result<Triaged> {
    use futures::FutureExt;
    use futures::stream::{FuturesUnordered, StreamExt};
    let t_load = Instant::now();
    let common = live::read_common(&conn, read).await?;
    let clock = Clock::choose(&common.origin, None, Timestamp::now());
    let judge = |ns| {
        let (conn, common) = (&conn, &common);
        async move {
            // In parts: a namespace of 10,000 Pods is judged a shard at a
            // time (source::live::parts), the whole when it fits one.
            let parts =
                live::read_namespace_in_parts(conn, common, ns, selector, pods_per_shard()).await?;
            let mut items = Triage::default();
            let mut covered = Covered::default();
            let mut own_gaps: Vec<Gap> = Vec::new();
            let mut took = Duration::ZERO;
            let objects = parts
                .judge_each(|part, snapshot, (shards, facts)| {
                    let t = Instant::now();
                    let mut judged = triage::triage_part(
                        snapshot,
                        ns,
                        filter,
                        read.controller,
                        clock.now,
                        (shards, facts, part),
                        &mut covered,
                    );
                    took += t.elapsed();
                    items.items.append(&mut judged.items);
                    items.outside.append(&mut judged.outside);
                    items.checked.add(judged.checked);
                    for gap in &snapshot.gaps[common.gaps.len()..] {
                        if !own_gaps.contains(gap) {
                            own_gaps.push(gap.clone());
                        }
                    }
                })
                .await?;
            // Held until the end: no room for more rows than it has.
            items.items.shrink_to_fit();
            Ok((items, own_gaps, objects, took))
        }
    };
    // Up to NAMESPACES_AT_ONCE, while the memory held leaves room
    // (memory.rs); the results in the namespaces' order.
    let budget = memory::budget_mib();
    let mut waiting = names.iter().enumerate();
    let mut reading = FuturesUnordered::new();
    let mut results: Vec<Option<Result<OneNamespace, LiveError>>> =
        names.iter().map(|_| None).collect();
    loop {
        while memory::room_for_another(reading.len(), memory::resident_mib(), budget) {
            let Some((i, ns)) = waiting.next() else { break };
            reading.push(judge(ns).map(move |result| (i, result)));
        }
        let Some((i, result)) = reading.next().await else {
            break;
        };
        results[i] = Some(result);
    }
    drop(reading);
    let mut snapshot = Snapshot {
        origin: common.origin.clone(),
        gaps: common.gaps.clone(),
        ..Snapshot::default()
    };
    let mut items = Triage::default();
    // A diagnosis is over a kilobyte: a list grown by doubling would hold
    // room for up to as many again, to the end of the run.
    let rows = results
        .iter()
        .flatten()
        .flatten()
        .map(|(t, ..)| t.items.len())
        .sum();
    items.items.reserve_exact(rows);
    let mut objects = common.object_count();
    let mut analysis_time = Duration::ZERO;
    for result in results.into_iter().flatten() {
        let (judged, gaps, read, took) = result?;
        items.append(judged);
        snapshot.gaps.extend(gaps);
        objects += read;
        analysis_time += took;
    }
    items.rank();
    Ok(Triaged {
        snapshot,
        namespace: None,
        connection: Some(conn),
        items,
        clock,
        objects,
        load_time: t_load.elapsed().saturating_sub(analysis_time),
        analysis_time,
        clusters: Vec::new(),
    })
}
