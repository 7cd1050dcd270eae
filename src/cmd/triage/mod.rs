//! `mdiag triage [-n NS | -A] [-l SELECTOR]`: every workload, worst first.

use std::time::{Duration, Instant};

use jiff::Timestamp;

mod fleet;
mod memory;
mod read;

pub use fleet::ClusterRun;

use read::read_and_analyze;
pub use read::{of_snapshot, refuse_before_the_specs, summary_of};

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
use mdiag_render::triage::{TracedItems, TriageReport};
use mdiag_source::live::{self, Connection, LiveError, TraceRead};
use mdiag_source::redact::Redactor;

/// Set to print how long loading and analysis took (on stderr), for
/// benchmarks.
pub const TIMINGS_ENV: &str = "MDIAG_TIMINGS";

/// Overrides how many Pods a shard of a namespace holds
/// ([`live::PODS_PER_SHARD`]): for the benchmark that compares a namespace
/// judged whole with one judged in parts, in the same binary.
pub const PODS_PER_SHARD_ENV: &str = "MDIAG_PODS_PER_SHARD";

pub async fn run(request: &TriageRequest) -> anyhow::Result<Exit> {
    if let Some(path) = &request.alert {
        return super::alert::run(request, path).await;
    }
    let judged = answer(request).await?;
    let lang = request.lang;
    if let Some(encoding) = request.output.encoding() {
        // Streamed: the text of a big triage is never held whole.
        judged
            .with_streamed_report(lang, |report| {
                mdiag_render::write_encoded_stdout(&report, encoding)
            })
            .map_err(|e| crate::error::Failed::new("error.stdout", e))?;
        judged.print_timings();
        let exit = judged.exit();
        exit_without_freeing(judged);
        return Ok(exit);
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
    super::emit(&text, request.output.paints(request.color))?;
    judged.print_timings();
    let exit = judged.exit();
    exit_without_freeing(judged);
    Ok(exit)
}

/// The command is done and the process about to end: freeing every
/// object of a big read one by one would be a tenth of its time (measured
/// on the 50 MB dump, docs/benchmarks.md), for memory the exit returns.
fn exit_without_freeing(judged: Triaged) {
    std::mem::forget(judged);
}

/// Reads the scope and judges every workload in it: everything of a
/// triage but the printing (the CLI's and `mdiag mcp`'s). Nothing to judge
/// is [`NoWorkloads`].
pub async fn answer(request: &TriageRequest) -> anyhow::Result<Triaged> {
    let contexts = fleet::contexts_to_read(request)?;
    let mut judged = if contexts.is_empty() {
        read_and_analyze(request).await?
    } else {
        fleet::read_clusters(request, contexts).await?
    };
    judged.redact(&request.source.redactor);
    // Several clusters: one that could not be read is an answer (a gap).
    if judged.items.is_empty() && !judged.clusters.iter().any(|c| c.unread.is_some()) {
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

impl Triaged {
    /// Redacts every outside string a view of this triage shows: the
    /// diagnoses, the rows outside workloads, the read's gaps and origin.
    pub fn redact(&mut self, redactor: &Redactor) {
        redactor.triage(&mut self.items);
        redactor.gaps(&mut self.snapshot.gaps);
        redactor.origin(&mut self.snapshot.origin);
        for cluster in &mut self.clusters {
            redactor.origin(&mut cluster.origin);
            redactor.line(&mut cluster.context);
            if let Some(reason) = &mut cluster.unread {
                redactor.line(reason);
            }
        }
    }

    pub fn run_info(&self) -> RunInfo<'_> {
        RunInfo {
            origin: &self.snapshot.origin,
            clock: self.clock,
            requests: self.connection.as_ref().map(|c| c.requests()),
        }
    }

    /// What the read could not get, with the gaps no item carries
    /// (several clusters: each one's, gathered when read).
    pub fn gaps(&self) -> Vec<Gap> {
        if !self.clusters.is_empty() {
            return self.snapshot.gaps.clone();
        }
        triage::read_gaps(&self.snapshot.gaps, &self.items)
    }

    /// The exit code: the worst row's, and never better than 4 when a
    /// cluster could not be read at all.
    pub fn exit(&self) -> Exit {
        let unread = self.clusters.iter().filter(|c| c.unread.is_some()).count();
        crate::exit::for_clusters(&self.items, unread)
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

    /// The `mdiag/v1` report `triage -o json` prints, every item made
    /// (for the views that read items back).
    pub fn report(&self, lang: Lang) -> TriageReport {
        self.with_streamed_report(lang, |report| report.built())
    }

    /// Calls `f` with the report whose items are made one at a time as it
    /// is written: what the JSON and YAML of a big triage are written from,
    /// so every item's report is never held at once. Several clusters:
    /// each row's source is its own cluster's.
    pub fn with_streamed_report<R>(
        &self,
        lang: Lang,
        f: impl FnOnce(TriageReport<TracedItems<'_>>) -> R,
    ) -> R {
        let run = self.run_info();
        let gaps = self.gaps();
        if self.clusters.is_empty() {
            return f(mdiag_render::triage::streamed_report(
                &self.items,
                &gaps,
                &run,
                lang,
            ));
        }
        let runs: Vec<mdiag_render::triage::ClusterInfo> = self
            .clusters
            .iter()
            .map(|c| mdiag_render::triage::ClusterInfo {
                context: &c.context,
                run: RunInfo {
                    origin: &c.origin,
                    clock: self.clock,
                    requests: c.requests,
                },
                unread: c.unread.as_deref(),
            })
            .collect();
        f(mdiag_render::triage::streamed_clusters_report(
            &self.items,
            &gaps,
            &run,
            &runs,
            lang,
        ))
    }
}

/// A triage's diagnoses, with what they were read from: the whole snapshot,
/// or (a live `-A` read a namespace at a time) its origin and gaps only.
pub struct Triaged {
    snapshot: Snapshot,
    namespace: Option<String>,
    connection: Option<Connection>,
    pub items: Triage,
    pub clock: Clock,
    /// Objects read (every namespace's, added up).
    objects: usize,
    load_time: Duration,
    analysis_time: Duration,
    /// Several clusters (`--context a,b`, `--all-contexts`): each one read,
    /// in the order named; empty for one.
    pub clusters: Vec<ClusterRun>,
}
