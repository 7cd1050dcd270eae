//! `mdiag triage --alert FILE|-`: from an alert to the trace of what it is
//! about. Each alert's labels name a workload (or a Pod, ReplicaSet or
//! Service of one, or only a namespace); every workload named is traced
//! once, with the alerts about it and their start times beside its timeline.

use std::path::Path;
use std::rc::Rc;

use jiff::Timestamp;

use crate::cli::OutputFormat;
use crate::error::UsageError;
use crate::exit::Exit;
use crate::request::{SourceRequest, TriageRequest};
use mdiag_core::alert::{self, Alert, Subject};
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::chain;
use mdiag_core::model::{Clock, Origin, Snapshot, TargetSpec};
use mdiag_render::alert::{AlertTraced, alert_report, alerts_block, unmapped_block};
use mdiag_render::report::RunInfo;
use mdiag_render::{Style, human};
use mdiag_source::file::{Input, read_text};

/// The alert text, from a file, stdin (`-`), a FIFO or gzip, through the
/// reader snapshots use, under the alert's cap
/// ([`mdiag_source::file::MAX_ALERT_BYTES`]).
fn read_alert(path: &Path) -> anyhow::Result<String> {
    Ok(read_text(path, Input::Alert)?)
}

/// One workload to trace, and the alerts (by index) about it.
struct Traced {
    target: TargetSpec,
    namespace: String,
    alerts: Vec<usize>,
}

pub async fn run(request: &TriageRequest, path: &Path) -> anyhow::Result<Exit> {
    let mut alerts = alert::parse(&read_alert(path)?)?;
    let redactor = &request.source.redactor;
    let subjects: Vec<Subject> = alerts
        .iter()
        .map(|a| alert::subject(a, request.source.namespace.as_deref()))
        .collect();
    let at = request.at;
    // One wall clock for the whole command: the workload an alert picks and
    // the report are judged at the same time.
    let wall = Timestamp::now();

    // One read per namespace the alerts name (a file is read once).
    let mut namespaces: Vec<String> = subjects.iter().filter_map(alert::namespace_of).collect();
    namespaces.sort();
    namespaces.dedup();
    let source = &request.source;
    // A file is one snapshot shared by every namespace it holds.
    let mut snapshots: Vec<(String, Rc<Snapshot>, Option<u32>)> = Vec::new();
    if source.snapshot_file.is_some() {
        let (mut snapshot, _, _) = source.load_scope(true).await?;
        if let Some(at) = at {
            super::triage::refuse_before_the_specs(&snapshot, None, at)?;
            mdiag_core::model::as_of(&mut snapshot, at);
        }
        redactor.logs(&mut snapshot.logs);
        let snapshot = Rc::new(snapshot);
        for ns in &namespaces {
            snapshots.push((ns.clone(), Rc::clone(&snapshot), None));
        }
    } else {
        for ns in &namespaces {
            let scoped = SourceRequest {
                namespace: Some(ns.clone()),
                ..source.clone()
            };
            let mut loaded = scoped.load(None).await?;
            let requests = loaded.connection.as_ref().map(|c| c.requests());
            redactor.logs(&mut loaded.snapshot.logs);
            snapshots.push((ns.clone(), Rc::new(loaded.snapshot), requests));
        }
    }
    let snapshot_of = |ns: &str| snapshots.iter().find(|(n, _, _)| n == ns);

    let mut traced: Vec<Traced> = Vec::new();
    // How each alert was mapped, when its labels did not name the workload.
    let mut notes: Vec<Option<Message>> = vec![None; alerts.len()];
    let mut unmapped: Vec<(usize, Message)> = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        let resolved = match alert::namespace_of(subject).and_then(|ns| snapshot_of(&ns)) {
            Some((ns, snapshot, _)) => {
                alert::resolve(snapshot, ns, subject, source.controller.as_ref(), at, wall)
            }
            None => Err(match subject {
                Subject::Unknown(why) => why.clone(),
                _ => Message::new("alert.nothing_read"),
            }),
        };
        match resolved {
            Ok((target, note)) => {
                notes[i] = note;
                let ns = target.namespace.clone().unwrap_or_default();
                // Several alerts about one workload: one trace.
                match traced.iter_mut().find(|t| {
                    snapshot_of(&ns).is_some_and(|(ns, snapshot, _)| {
                        alert::same_workload(&t.target, &target, snapshot, ns)
                    })
                }) {
                    Some(t) => t.alerts.push(i),
                    None => traced.push(Traced {
                        target,
                        namespace: ns,
                        alerts: vec![i],
                    }),
                }
            }
            Err(why) => unmapped.push((i, why)),
        }
    }
    if traced.is_empty() {
        let reasons = unmapped.iter().map(|(i, why)| {
            Message::new("usage.alert_reason")
                .arg("alert", alerts[*i].name())
                .arg("why", why.clone())
        });
        return Err(UsageError(
            Message::new("usage.no_alert_maps").arg("reasons", Arg::list(reasons, "sep.semicolon")),
        )
        .into());
    }

    let (lang, color) = (request.lang, request.color);
    // Mapped: from here on the alerts and the traces are only shown, so
    // every outside string in them is redacted once.
    for a in &mut alerts {
        redactor.alert(a);
    }
    for m in notes.iter_mut().flatten() {
        redactor.message(m);
    }
    for (_, why) in &mut unmapped {
        redactor.message(why);
    }
    let mut diagnoses: Vec<(Diagnosis, &Traced, Origin, Option<u32>)> = Vec::new();
    for t in &traced {
        let Some((_, snapshot, requests)) = snapshot_of(&t.namespace) else {
            continue;
        };
        let chain = chain::walk(
            snapshot,
            &t.target,
            &t.namespace,
            source.controller.as_ref(),
        )
        .map_err(|nf| super::source::explain_not_found(snapshot, nf))?;
        let clock = Clock::choose(&snapshot.origin, at, wall);
        let mut diagnosis = analysis::analyze(snapshot, &chain, clock.now);
        redactor.diagnosis(&mut diagnosis);
        let mut origin = snapshot.origin.clone();
        redactor.origin(&mut origin);
        diagnoses.push((diagnosis, t, origin, *requests));
    }

    let text = match request.output {
        OutputFormat::Table => {
            // The alerts that name nothing first: the traces below are
            // not all the alerts said.
            let missing: Vec<(&Alert, &Message)> =
                unmapped.iter().map(|(i, why)| (&alerts[*i], why)).collect();
            let mut out = unmapped_block(&missing, lang, request.width);
            if !out.is_empty() {
                out.push('\n');
            }
            for (d, t, origin, requests) in &diagnoses {
                let clock = Clock::choose(origin, at, wall);
                let style = Style {
                    lang,
                    color,
                    now: clock.now,
                    width: request.width,
                    verbose: request.verbose,
                };
                let about: Vec<(&Alert, Option<&Message>)> = t
                    .alerts
                    .iter()
                    .map(|i| (&alerts[*i], notes[*i].as_ref()))
                    .collect();
                out.push_str(&alerts_block(&about, d, &style));
                let run = RunInfo {
                    origin,
                    clock,
                    requests: *requests,
                };
                out.push_str(&human::trace(d, &run, &style));
                out.push('\n');
            }
            out
        }
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::Html => {
            let items: Vec<AlertTraced> = diagnoses
                .iter()
                .map(|(d, t, origin, requests)| AlertTraced {
                    diagnosis: d,
                    alerts: t.alerts.clone(),
                    run: RunInfo {
                        origin,
                        clock: Clock::choose(origin, at, wall),
                        requests: *requests,
                    },
                })
                .collect();
            let report = alert_report(&alerts, &items, &notes, &unmapped, lang);
            match request.output.encoding() {
                Some(encoding) => mdiag_render::encode(&report, encoding)?,
                None => mdiag_render::html::alert(&report, lang),
            }
        }
    };
    super::emit(&text, request.output.paints(color))?;
    Ok(crate::exit::for_diagnoses(
        diagnoses.iter().map(|(d, ..)| d),
    ))
}
