//! `mdiag triage [-n NS | -A] [-l SELECTOR]`: every workload, worst first.

use std::time::{Duration, Instant};

use anyhow::Context;

use jiff::Timestamp;

use crate::cli::OutputFormat;
use crate::error::NoWorkloads;
use crate::exit::Exit;
use crate::request::TriageRequest;
use mdiag_core::analysis::outside::Covered;
use mdiag_core::analysis::triage::{self, Triage};
use mdiag_core::catalogue::Lang;
use mdiag_core::chain::ControllerLocation;
use mdiag_core::model::{Clock, LabelFilter};
use mdiag_core::model::{Gap, Snapshot};
use mdiag_render::Style;
use mdiag_render::report::RunInfo;
use mdiag_render::triage::TriageReport;
use mdiag_source::live::{self, Connection, LiveError, TraceRead};

/// Set to print how long loading and analysis took (on stderr), for
/// benchmarks.
pub const TIMINGS_ENV: &str = "MDIAG_TIMINGS";

/// Overrides how many Pods a shard of a namespace holds
/// ([`live::PODS_PER_SHARD`]): for the benchmark that compares a namespace
/// judged whole with one judged in parts, in the same binary.
pub const PODS_PER_SHARD_ENV: &str = "MDIAG_PODS_PER_SHARD";

fn pods_per_shard() -> usize {
    std::env::var(PODS_PER_SHARD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or(live::PODS_PER_SHARD)
}

pub async fn run(request: &TriageRequest) -> anyhow::Result<Exit> {
    if let Some(path) = &request.alert {
        return super::alert::run(request, path).await;
    }
    let judged = assess(request).await?;
    let lang = request.lang;
    if let Some(encoding) = request.output.encoding() {
        // Streamed: the text of a big triage is never held whole.
        mdiag_render::write_encoded_stdout(&judged.report(lang), encoding)
            .context("cannot write to stdout")?;
        judged.print_timings();
        return Ok(crate::exit::for_triage(&judged.items));
    }
    let text = if request.output == OutputFormat::Html {
        mdiag_render::html::triage(&judged.report(lang), lang)
    } else {
        let style = Style {
            lang,
            color: request.color,
            now: judged.clock.now,
            width: request.width,
            verbose: request.verbose,
        };
        mdiag_render::triage::table(&judged.items, &judged.gaps(), request.all, &style)
    };
    super::emit(&text)?;
    judged.print_timings();
    Ok(crate::exit::for_triage(&judged.items))
}

/// Reads the scope and judges every workload in it: everything of a
/// triage but the printing (the CLI's and `mdiag mcp`'s). Nothing to judge
/// is [`NoWorkloads`].
pub async fn assess(request: &TriageRequest) -> anyhow::Result<Judged> {
    let judged = judge(request).await?;
    if judged.items.is_empty() {
        return Err(NoWorkloads {
            namespace: judged.namespace,
            selector: request.selector.clone(),
            file: request
                .source
                .snapshot_file
                .as_ref()
                .map(|p| p.display().to_string()),
        }
        .into());
    }
    Ok(judged)
}

impl Judged {
    pub fn run_info(&self) -> RunInfo<'_> {
        RunInfo {
            origin: &self.snapshot.origin,
            clock: self.clock,
            requests: self.connection.as_ref().map(|c| c.requests()),
        }
    }

    /// What the read could not get, with the gaps no item carries.
    pub fn gaps(&self) -> Vec<Gap> {
        triage::read_gaps(&self.snapshot.gaps, &self.items)
    }

    /// How long loading and analysis took, on stderr, when
    /// [`TIMINGS_ENV`] is set.
    fn print_timings(&self) {
        if std::env::var_os(TIMINGS_ENV).is_none() {
            return;
        }
        eprintln!(
            "mdiag timings: load {:.1} ms ({} objects{}), analysis {:.1} ms ({} workloads)",
            self.load_time.as_secs_f64() * 1e3,
            self.objects,
            self.connection
                .as_ref()
                .map(|c| format!(", {} requests", c.requests()))
                .unwrap_or_default(),
            self.analysis_time.as_secs_f64() * 1e3,
            self.items.items.len(),
        );
    }

    /// The `mdiag/v1` report `triage -o json` prints.
    pub fn report(&self, lang: Lang) -> TriageReport {
        mdiag_render::triage::report_with_gaps(&self.items, &self.gaps(), &self.run_info(), lang)
    }
}

/// A triage's diagnoses, with what they were read from: the whole snapshot,
/// or (a live `-A` read a namespace at a time) its origin and gaps only.
pub struct Judged {
    snapshot: Snapshot,
    namespace: Option<String>,
    connection: Option<Connection>,
    pub items: Triage,
    pub clock: Clock,
    /// Objects read (every namespace's, added up).
    objects: usize,
    load_time: Duration,
    analysis_time: Duration,
}

/// Namespaces read and judged at once by a live `triage -A`: what bounds
/// its memory (their objects are dropped once judged).
const NAMESPACES_AT_ONCE: usize = 3;

/// Reads and judges. A live `-A` goes a namespace at a time when the
/// namespaces may be listed, keeping only each one's diagnoses and gaps, so
/// memory is bounded by what is kept, not by what was listed; otherwise
/// (a file, `-n`, or namespaces that cannot be listed) the scope is read
/// whole and judged.
async fn judge(request: &TriageRequest) -> anyhow::Result<Judged> {
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
            let ns = source
                .namespace
                .clone()
                .unwrap_or_else(|| conn.default_namespace.clone());
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
    let mut judged = judge_read(snapshot, namespace, filter, source.controller.as_ref(), at);
    judged.connection = connection;
    judged.load_time = load_time;
    Ok(judged)
}

/// Judges every workload of a snapshot already read (in `namespace`, or
/// all of them), at `at` or the snapshot's own clock.
fn judge_read(
    snapshot: Snapshot,
    namespace: Option<String>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    at: Option<Timestamp>,
) -> Judged {
    let clock = Clock::choose(&snapshot.origin, at, Timestamp::now());
    let t_analysis = Instant::now();
    let items = triage::triage(
        &snapshot,
        namespace.as_deref(),
        filter,
        controller,
        clock.now,
    );
    Judged {
        objects: snapshot.objects.len(),
        snapshot,
        namespace,
        connection: None,
        items,
        clock,
        load_time: Duration::ZERO,
        analysis_time: t_analysis.elapsed(),
    }
}

/// The triage of a whole snapshot file already read, as `triage -A
/// --snapshot FILE [--at TIME]` judges it (for `mdiag mcp`'s summary of a
/// file, which reads it once). It may hold no workload.
pub fn of_snapshot(snapshot: Snapshot, at: Option<Timestamp>) -> Judged {
    judge_read(snapshot, None, None, None, at)
}

/// One namespace's diagnoses, its own gaps, the objects read and the
/// time its analysis took.
type OneNamespace = (Triage, Vec<Gap>, usize, Duration);

/// A live `triage -A`, a namespace at a time: the common objects once, then
/// [`NAMESPACES_AT_ONCE`] namespaces read (each one's lists at once),
/// judged and dropped. The gaps are the common ones, then each namespace's
/// own, in the namespaces' order; the diagnoses are ranked once at the end.
async fn by_namespace(
    conn: Connection,
    read: &TraceRead<'_>,
    names: &[String],
    selector: Option<&str>,
    filter: Option<&LabelFilter>,
) -> anyhow::Result<Judged> {
    use futures::stream::{self, StreamExt};
    let t_load = Instant::now();
    let common = live::read_common(&conn, read).await?;
    let clock = Clock::choose(&common.origin, None, Timestamp::now());
    let results: Vec<Result<OneNamespace, LiveError>> = stream::iter(names)
        .map(|ns| {
            let (conn, common) = (&conn, &common);
            async move {
                // In parts: a namespace of 10,000 Pods is judged a shard at a
                // time (source::live::parts), the whole when it fits one.
                let parts =
                    live::read_namespace_in_parts(conn, common, ns, selector, pods_per_shard())
                        .await?;
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
                        for gap in &snapshot.gaps[common.gaps.len()..] {
                            if !own_gaps.contains(gap) {
                                own_gaps.push(gap.clone());
                            }
                        }
                    })
                    .await?;
                Ok((items, own_gaps, objects, took))
            }
        })
        .buffered(NAMESPACES_AT_ONCE)
        .collect()
        .await;
    let mut snapshot = Snapshot {
        origin: common.origin.clone(),
        gaps: common.gaps.clone(),
        ..Snapshot::default()
    };
    let mut items = Triage::default();
    let mut objects = common.object_count();
    let mut analysis_time = Duration::ZERO;
    for result in results {
        let (mut judged, gaps, read, took) = result?;
        items.items.append(&mut judged.items);
        items.outside.append(&mut judged.outside);
        snapshot.gaps.extend(gaps);
        objects += read;
        analysis_time += took;
    }
    items.rank();
    Ok(Judged {
        snapshot,
        namespace: None,
        connection: Some(conn),
        items,
        clock,
        objects,
        load_time: t_load.elapsed().saturating_sub(analysis_time),
        analysis_time,
    })
}
