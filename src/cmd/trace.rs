//! `mdiag trace TARGET`: one workload, from a live cluster or a file.

use jiff::Timestamp;

use super::source::explain_not_found;
use crate::cli::OutputFormat;
use crate::error::UsageError;
use crate::exit::Exit;
use crate::request::TraceRequest;
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;
use mdiag_core::chain::{self, Chain};
use mdiag_core::model::{Clock, Origin, Snapshot, as_of};
use mdiag_render::report::{RunInfo, TraceReport, trace_report};
use mdiag_render::{Style, human};
use mdiag_source::live::LogCaps;

pub async fn run(request: &TraceRequest) -> anyhow::Result<Exit> {
    let traced = answer(request).await?;
    let diagnosis = &traced.diagnosis;
    let run = traced.run_info();
    let text = match request.output.encoding() {
        None if request.output == OutputFormat::Html => {
            mdiag_render::html::trace(&traced.report(request.lang), request.lang)
        }
        None => {
            let style = Style {
                lang: request.lang,
                color: request.color,
                now: traced.clock.now,
                width: request.width,
                verbose: request.verbose,
            };
            human::trace(diagnosis, &run, &style)
        }
        Some(encoding) => mdiag_render::encode(&traced.report(request.lang), encoding)?,
    };
    super::emit(&text, request.output.paints(request.color))?;
    Ok(crate::exit::for_diagnosis(diagnosis))
}

/// A trace's diagnosis with what it was read from: what the views (the
/// CLI's and `mdiag mcp`'s) are made of.
pub struct Traced {
    pub diagnosis: Diagnosis,
    pub origin: Origin,
    pub clock: Clock,
    /// API requests a live read made.
    pub requests: Option<u32>,
}

impl Traced {
    pub fn run_info(&self) -> RunInfo<'_> {
        RunInfo {
            origin: &self.origin,
            clock: self.clock,
            requests: self.requests,
        }
    }

    /// The `mdiag/v1` report `trace -o json` prints.
    pub fn report(&self, lang: Lang) -> TraceReport {
        trace_report(&self.diagnosis, &self.run_info(), lang)
    }
}

/// Reads the target (live or from the file), walks its chain and analyzes
/// it: everything of a trace but the printing.
pub async fn answer(request: &TraceRequest) -> anyhow::Result<Traced> {
    let mut loaded = request.source.load(Some(&request.target)).await?;
    if let Some(at) = request.at {
        // A time before the chain existed is refused, not judged empty.
        if let Ok(chain) = chain::walk(
            &loaded.snapshot,
            &request.target,
            &loaded.namespace,
            request.source.controller.as_ref(),
        ) {
            refuse_before_the_data(&chain, at, &loaded.snapshot)?;
        }
        as_of(&mut loaded.snapshot, at);
    }
    let clock = Clock::choose(&loaded.snapshot.origin, request.at, Timestamp::now());
    if request.logs
        && let Some(conn) = &loaded.connection
    {
        let pods = pods_to_log(&loaded.snapshot, request, &loaded.namespace, clock.now);
        super::snapshot::read_logs_of(conn, &mut loaded.snapshot, &pods, LogCaps::DEFAULT, false)
            .await;
    }
    let redactor = &request.source.redactor;
    // Whole logs before the analysis quotes their last lines: a shape
    // that spans lines (a private key block) is only seen whole.
    redactor.logs(&mut loaded.snapshot.logs);
    let snapshot = &loaded.snapshot;
    let chain = match chain::walk(
        snapshot,
        &request.target,
        &loaded.namespace,
        request.source.controller.as_ref(),
    ) {
        Ok(chain) => chain,
        Err(not_found) => return Err(explain_not_found(snapshot, not_found)),
    };
    let mut diagnosis = analysis::analyze(snapshot, &chain, clock.now);
    // Once, before any view (the CLI's or `mdiag mcp`'s) sees it.
    redactor.diagnosis(&mut diagnosis);
    let mut origin = snapshot.origin.clone();
    redactor.origin(&mut origin);
    Ok(Traced {
        diagnosis,
        origin,
        clock,
        requests: loaded.connection.as_ref().map(|c| c.requests()),
    })
}

/// The Pods whose logs `--logs` reads: those of the findings whose cause
/// is usually in the log (one Pod per finding: the rules fold alike Pods
/// into one finding), so a crash loop of 500 Pods costs a few reads.
fn pods_to_log(
    snapshot: &Snapshot,
    request: &TraceRequest,
    namespace: &str,
    now: Timestamp,
) -> Vec<k8s_openapi::api::core::v1::Pod> {
    let Ok(chain) = chain::walk(
        snapshot,
        &request.target,
        namespace,
        request.source.controller.as_ref(),
    ) else {
        return Vec::new();
    };
    let d = analysis::analyze(snapshot, &chain, now);
    let wanted: Vec<&str> = d
        .findings
        .iter()
        .filter(|f| analysis::logs::wants_log(f))
        .map(|f| f.subject.name.as_str())
        .collect();
    chain
        .pods
        .iter()
        .filter(|p| wanted.contains(&p.pod.metadata.name.as_deref().unwrap_or("")))
        .map(|p| p.pod.clone())
        .collect()
}

/// `--at` the file cannot answer for is refused rather than judged, since
/// no output at that time would be true: a time before the last write of
/// the spec that declares the rollout (the file holds only the spec as
/// then written), or before the oldest object of the chain was created.
fn refuse_before_the_data(chain: &Chain, at: Timestamp, snapshot: &Snapshot) -> anyhow::Result<()> {
    let until = snapshot.origin.captured_at.or(snapshot.origin.newest_seen);
    let range = |start: Timestamp| match until {
        Some(end) => Message::new("usage.at_from_to")
            .arg("start", start.to_string())
            .arg("end", end.to_string()),
        None => Message::new("usage.at_from").arg("start", start.to_string()),
    };
    if let Some((written, what)) = analysis::chain_spec_floor(chain)
        && at < written
    {
        return Err(UsageError(
            Message::new("usage.at_before_spec")
                .arg("at", at.to_string())
                .arg("what", what)
                .arg("written", written.to_string())
                .arg("range", range(written)),
        )
        .into());
    }
    let mut created: Vec<(Timestamp, String)> = Vec::new();
    let mut add =
        |kind: &str, meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            if let Some(t) = &meta.creation_timestamp {
                created.push((
                    t.0,
                    format!("{kind}/{}", meta.name.as_deref().unwrap_or("?")),
                ));
            }
        };
    if let Some(p) = chain.platform {
        add(
            &mdiag_core::model::kubectl_kind(p.kind()),
            &p.object.metadata,
        );
    }
    if let Some(d) = chain.deployment {
        add("deployment", &d.metadata);
    }
    for r in &chain.replica_sets {
        add("replicaset", &r.replica_set.metadata);
    }
    for p in &chain.pods {
        add("pod", &p.pod.metadata);
    }
    for s in &chain.services {
        add("service", &s.metadata);
    }
    for s in &chain.endpoint_slices {
        add("endpointslice", &s.metadata);
    }
    let Some((oldest, what)) = created.into_iter().min() else {
        return Ok(());
    };
    if at >= oldest {
        return Ok(());
    }
    Err(UsageError(
        Message::new("usage.at_before_created")
            .arg("at", at.to_string())
            .arg("what", what)
            .arg("oldest", oldest.to_string())
            .arg("range", range(oldest)),
    )
    .into())
}
