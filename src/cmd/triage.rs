//! `mdiag triage [-n NS | -A] [-l SELECTOR]`: every workload, worst first.

use std::time::Instant;

use anyhow::Context;
use jiff::Timestamp;

use super::source::SourceRequest;
use crate::analysis::{self, Analyzer, Diagnosis};
use crate::chain::{ControllerLocation, Index, TargetNotFound, workloads};
use crate::cli::{GlobalArgs, OutputFormat, TriageArgs};
use crate::exit::{Exit, UsageError};
use crate::model::Snapshot;
use crate::model::{Clock, LabelFilter, TargetKind};
use crate::render::report::RunInfo;
use crate::render::{Style, triage};

/// Set to print how long loading and analysis took (on stderr), for
/// benchmarks.
pub const TIMINGS_ENV: &str = "MDIAG_TIMINGS";

pub async fn run(global: &GlobalArgs, args: &TriageArgs) -> anyhow::Result<Exit> {
    if let Some(path) = &args.alert {
        return super::alert::run(global, args, path).await;
    }
    if global.all_namespaces && global.namespace.is_some() {
        return Err(UsageError("use -n NS or -A, not both".into()).into());
    }
    let filter = global
        .selector
        .as_deref()
        .map(LabelFilter::parse)
        .transpose()
        .map_err(|e| UsageError(e.to_string()))?;
    let at = super::parse_at(global)?;
    if at.is_some() && global.snapshot.is_none() {
        return Err(UsageError("--at judges a snapshot file; add --snapshot FILE".into()).into());
    }
    let source = SourceRequest::from_global(global)?;
    let t_load = Instant::now();
    let (snapshot, namespace, connection) = source
        .load_scope_selected(global.all_namespaces, global.selector.as_deref())
        .await?;
    let load_time = t_load.elapsed();
    let clock = Clock::choose(&snapshot.origin, at, Timestamp::now());

    let t_analysis = Instant::now();
    let items = diagnose_all(
        &snapshot,
        namespace.as_deref(),
        filter.as_ref(),
        source.controller.as_ref(),
        clock.now,
    );
    let analysis_time = t_analysis.elapsed();
    if items.is_empty() {
        return Err(TargetNotFound {
            kind: TargetKind::ModelService,
            namespace: namespace.unwrap_or_else(|| "(all)".into()),
            name: global
                .selector
                .clone()
                .unwrap_or_else(|| "any workload".into()),
            available: Vec::new(),
        }
        .into());
    }

    let run = RunInfo {
        origin: &snapshot.origin,
        clock,
        requests: connection.as_ref().map(|c| c.requests()),
    };
    let lang = super::lang(global);
    let text = match args.output {
        OutputFormat::Table => {
            let style = Style {
                lang,
                color: super::color(global),
                now: clock.now,
            };
            triage::table(&items, &snapshot.gaps, args.all, &style)
        }
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&triage::report(&items, &run, lang))
                .context("cannot encode the report")?;
            s.push('\n');
            s
        }
        OutputFormat::Yaml => serde_saphyr::to_string(&triage::report(&items, &run, lang))
            .context("cannot encode the report")?,
    };
    super::emit(&text)?;
    if std::env::var_os(TIMINGS_ENV).is_some() {
        eprintln!(
            "mdiag timings: load {:.1} ms ({} objects{}), analysis {:.1} ms ({} workloads)",
            load_time.as_secs_f64() * 1e3,
            snapshot.objects.len(),
            connection
                .as_ref()
                .map(|c| format!(", {} requests", c.requests()))
                .unwrap_or_default(),
            analysis_time.as_secs_f64() * 1e3,
            items.len(),
        );
    }
    // As trace decides each one: any problem is 1; else, any workload
    // whose chain could not be read is 4; all healthy is 0.
    let codes: Vec<Exit> = items.iter().map(super::trace::exit_for).collect();
    Ok(if codes.contains(&Exit::Problem) {
        Exit::Problem
    } else if codes.contains(&Exit::Unreachable) {
        Exit::Unreachable
    } else {
        Exit::Healthy
    })
}

/// Every workload of `namespace` (or of all) that `filter` keeps, analysed
/// at `now` and ranked worst first. The snapshot is indexed once (its
/// chains and its Events) and every workload is judged in it, so the work
/// grows with the objects, not with workloads times objects.
pub fn diagnose_all(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Vec<Diagnosis> {
    let mut items = diagnose_unranked(snapshot, namespace, filter, controller, now);
    analysis::rank(&mut items);
    items
}

/// [`diagnose_all`] before the ranking, for callers that gather the
/// diagnoses of several snapshots (a namespace at a time) and rank once.
pub fn diagnose_unranked(
    snapshot: &Snapshot,
    namespace: Option<&str>,
    filter: Option<&LabelFilter>,
    controller: Option<&ControllerLocation>,
    now: Timestamp,
) -> Vec<Diagnosis> {
    let index = Index::new(snapshot);
    let analyzer = Analyzer::new(snapshot);
    workloads(snapshot, namespace)
        .into_iter()
        .filter(|w| filter.is_none_or(|f| f.matches(&w.labels)))
        .filter_map(|w| {
            let ns = w.target.namespace.clone().unwrap_or_default();
            let chain = index.walk(&w.target, &ns, controller).ok()?;
            Some(analyzer.analyze(&chain, now))
        })
        .collect()
}
