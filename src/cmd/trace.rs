//! `mdiag trace TARGET`: one workload, from a live cluster or a file.

use std::time::Duration;

use anyhow::Context;
use jiff::Timestamp;

use crate::analysis::{self, Diagnosis};
use crate::chain::{self, TargetNotFound, namespaces_holding};
use crate::cli::{GlobalArgs, OutputFormat, TraceArgs};
use crate::exit::{Exit, UsageError};
use crate::model::{Clock, Snapshot, TargetSpec};
use crate::render::report::{RunInfo, trace_report};
use crate::render::{Style, human};
use crate::source::live::{self, LiveOptions, TraceRead};
use crate::source::read_snapshot_file;

/// Everything a trace needs, decided from the flags before any work.
pub struct TraceRequest {
    pub target: TargetSpec,
    pub namespace: Option<String>,
    pub snapshot_file: Option<std::path::PathBuf>,
    pub at: Option<Timestamp>,
    pub controller: Option<chain::ControllerLocation>,
    pub resource: Option<String>,
    pub live: LiveOptions,
    pub output: OutputFormat,
    pub style_lang: crate::catalogue::Lang,
    pub color: bool,
}

impl TraceRequest {
    pub fn from_args(global: &GlobalArgs, args: &TraceArgs) -> anyhow::Result<Self> {
        if global.all_namespaces {
            return Err(UsageError(
                "trace follows one workload in one namespace; use -n NS (triage covers -A)".into(),
            )
            .into());
        }
        if global.at.is_some() && global.snapshot.is_none() {
            return Err(
                UsageError("--at judges a snapshot file; add --snapshot FILE".into()).into(),
            );
        }
        Ok(TraceRequest {
            target: TargetSpec::parse(&args.target, global.namespace.as_deref())?,
            namespace: global.namespace.clone(),
            snapshot_file: global.snapshot.clone(),
            at: super::parse_at(global)?,
            controller: super::parse_controller(global)?,
            resource: global.resource.clone(),
            live: LiveOptions {
                kubeconfig: global.kubeconfig.clone(),
                context: global.context.clone(),
                request_timeout: Some(Duration::from_secs(global.request_timeout.max(1))),
            },
            output: global.output,
            style_lang: super::lang(global),
            color: super::color(global),
        })
    }
}

pub async fn run(global: &GlobalArgs, args: &TraceArgs) -> anyhow::Result<Exit> {
    let request = TraceRequest::from_args(global, args)?;
    let (snapshot, namespace, requests) = load(&request).await?;
    let clock = Clock::choose(&snapshot.origin, request.at, Timestamp::now());
    let chain = match chain::walk(
        &snapshot,
        &request.target,
        &namespace,
        request.controller.as_ref(),
    ) {
        Ok(chain) => chain,
        Err(not_found) => return Err(explain_not_found(&snapshot, not_found)),
    };
    let diagnosis = analysis::analyze(&snapshot, &chain, clock.now);
    let run = RunInfo {
        origin: &snapshot.origin,
        clock,
        requests,
    };
    let text = match request.output {
        OutputFormat::Table => {
            let style = Style {
                lang: request.style_lang,
                color: request.color,
                now: clock.now,
            };
            human::trace(&chain, &diagnosis, &run, &style)
        }
        OutputFormat::Json => {
            let report = trace_report(&diagnosis, &run, request.style_lang);
            let mut s =
                serde_json::to_string_pretty(&report).context("cannot encode the report")?;
            s.push('\n');
            s
        }
        OutputFormat::Yaml => {
            let report = trace_report(&diagnosis, &run, request.style_lang);
            serde_saphyr::to_string(&report).context("cannot encode the report")?
        }
    };
    super::emit(&text)?;
    Ok(exit_for(&diagnosis))
}

/// Healthy is 0; a problem is 1; when the chain could not be read and no
/// problem was found, health is unproven: access denied (4).
pub fn exit_for(d: &Diagnosis) -> Exit {
    if d.healthy {
        Exit::Healthy
    } else if d.chain_incomplete()
        && !d
            .findings
            .iter()
            .any(|f| f.severity != crate::catalogue::Severity::Info)
    {
        Exit::Unreachable
    } else {
        Exit::Problem
    }
}

async fn load(request: &TraceRequest) -> anyhow::Result<(Snapshot, String, Option<u32>)> {
    if let Some(path) = &request.snapshot_file {
        let snapshot = read_snapshot_file(path)?;
        let namespace = match &request.namespace {
            Some(ns) => ns.clone(),
            None => file_namespace(&snapshot, &request.target)?,
        };
        return Ok((snapshot, namespace, None));
    }
    let conn = live::connect(&request.live).await?;
    let namespace = request
        .namespace
        .clone()
        .unwrap_or_else(|| conn.default_namespace.clone());
    let snapshot = live::read_for_trace(
        &conn,
        &TraceRead {
            namespace: &namespace,
            resource: request.resource.as_deref(),
            controller: request.controller.as_ref(),
        },
    )
    .await?;
    Ok((snapshot, namespace, Some(conn.requests())))
}

/// The namespace of a target in a file when `-n` was not given: the
/// snapshot's own target, else the one namespace holding that name.
fn file_namespace(snapshot: &Snapshot, target: &TargetSpec) -> anyhow::Result<String> {
    if let Some(t) = &snapshot.origin.target
        && t.name == target.name
        && let Some(ns) = &t.namespace
    {
        return Ok(ns.clone());
    }
    let holding = namespaces_holding(snapshot, target);
    match holding.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(TargetNotFound {
            kind: target.kind,
            namespace: "(any)".into(),
            name: target.name.clone(),
            available: all_targets(snapshot),
        }
        .into()),
        many => Err(UsageError(format!(
            "{} {:?} is in several namespaces of the file ({}); pick one with -n",
            target.kind,
            target.name,
            many.join(", ")
        ))
        .into()),
    }
}

fn all_targets(snapshot: &Snapshot) -> Vec<String> {
    let mut namespaces: Vec<String> = snapshot
        .objects
        .model_services
        .iter()
        .filter_map(|m| m.metadata.namespace.clone())
        .chain(
            snapshot
                .objects
                .deployments
                .iter()
                .filter_map(|d| d.metadata.namespace.clone()),
        )
        .collect();
    namespaces.sort();
    namespaces.dedup();
    namespaces
        .iter()
        .flat_map(|ns| {
            chain::available_targets(snapshot, ns)
                .into_iter()
                .map(move |t| format!("{t} -n {ns}"))
        })
        .collect()
}

/// A target missing because its list was forbidden is an access problem,
/// not an absence.
fn explain_not_found(snapshot: &Snapshot, not_found: TargetNotFound) -> anyhow::Error {
    let resource = match not_found.kind {
        crate::model::TargetKind::ModelService => "modelservices",
        crate::model::TargetKind::Deployment => "deployments",
        crate::model::TargetKind::Pod => "pods",
    };
    let hidden = snapshot.gaps.iter().find(|g| {
        g.hides(resource, &not_found.namespace)
            || (resource == "modelservices" && g.resource == "apis")
    });
    match hidden {
        Some(gap) => {
            anyhow::Error::new(not_found).context(crate::source::live::LiveError::Denied {
                server: snapshot.origin.location.clone(),
                detail: format!("{} {}: {}", gap.verb, gap.resource, gap.reason),
            })
        }
        None => not_found.into(),
    }
}
