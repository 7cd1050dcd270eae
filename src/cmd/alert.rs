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
use crate::request::{Clusters, SourceRequest, TriageRequest};
use mdiag_core::alert::{self, Alert, Subject};
use mdiag_core::analysis::{self, Diagnosis};
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::chain;
use mdiag_core::model::{Clock, Origin, Snapshot, TargetSpec};
use mdiag_render::alert::{AlertTraced, alert_report, alerts_block, unmapped_block};
use mdiag_render::report::RunInfo;
use mdiag_render::{Style, human};
use mdiag_source::file::{Input, read_text};
use mdiag_source::live::{self, LiveOptions};

/// The alert text, from a file, stdin (`-`), a FIFO or gzip, through the
/// reader snapshots use, under the alert's cap
/// ([`mdiag_source::file::MAX_ALERT_BYTES`]).
fn read_alert(path: &Path) -> anyhow::Result<String> {
    Ok(read_text(path, Input::Alert)?)
}

/// Where an alert's workload is read: the context its `cluster` label
/// picked (none: the one `--context` names, or the current one) and the
/// namespace.
type Place = (Option<String>, String);

/// The context an alert is read in (none: the one `--context` names, or
/// the current one), or why it cannot be told.
type AlertContext = Result<Option<String>, Message>;

/// One workload to trace, and the alerts (by index) about it.
struct Traced {
    target: TargetSpec,
    place: Place,
    alerts: Vec<usize>,
}

/// The context an alert is read in. One `--context NAME` (or a file) is
/// every alert's. With several (`--context a,b`, `--all-contexts`) the
/// alert's `cluster` label picks the context of that name (or the one
/// whose cluster entry is so named); an alert without the label, or with
/// one naming none of them, is not mapped, and says why. With no
/// `--context`, a label naming a context of the kubeconfig picks it; one
/// naming none is read in the current context, with a note saying so.
fn context_of(
    request: &TriageRequest,
    alert: &Alert,
) -> anyhow::Result<(AlertContext, Option<Message>)> {
    let source = &request.source;
    let label = alert::cluster_of(alert);
    let several = request.clusters != Clusters::One;
    if source.snapshot_file.is_some() || (!several && source.live.context.is_some()) {
        return Ok((Ok(None), None));
    }
    let Some(label) = label else {
        return Ok(match several {
            true => (Err(Message::new("alert.no_cluster_label")), None),
            false => (Ok(None), None),
        });
    };
    let known = match live::kubeconfig_contexts(&source.live) {
        Ok(known) => known,
        Err(e) if several => return Err(e.into()),
        // No kubeconfig (in a Pod): the one cluster there is.
        Err(_) => return Ok((Ok(None), None)),
    };
    let allowed = |name: &str| match &request.clusters {
        Clusters::Named(names) => names.iter().any(|n| n == name),
        Clusters::All | Clusters::One => true,
    };
    match known.for_cluster(label).filter(|c| allowed(c)) {
        Some(context) => Ok((Ok(Some(context.to_string())), None)),
        None if several => Ok((
            Err(Message::new("alert.cluster_not_named").arg("cluster", label)),
            None,
        )),
        None => Ok((
            Ok(None),
            Some(
                Message::new("alert.cluster_current")
                    .arg("cluster", label)
                    .arg("context", known.current.unwrap_or_default()),
            ),
        )),
    }
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

    // Which cluster each alert is about: its `cluster` label picks a
    // context when several are named; a file is one read of its own.
    let mut cluster_notes: Vec<Option<Message>> = vec![None; alerts.len()];
    let mut contexts: Vec<AlertContext> = Vec::with_capacity(alerts.len());
    for (i, a) in alerts.iter().enumerate() {
        let (context, note) = context_of(request, a)?;
        cluster_notes[i] = note;
        contexts.push(context);
    }

    // One read per cluster and namespace the alerts name (a file is read once).
    let mut places: Vec<Place> = subjects
        .iter()
        .zip(&contexts)
        .filter_map(|(s, c)| Some((c.clone().ok()?, alert::namespace_of(s)?)))
        .collect();
    places.sort();
    places.dedup();
    let source = &request.source;
    // A file is one snapshot shared by every namespace it holds.
    let mut snapshots: Vec<(Place, Rc<Snapshot>, Option<u32>)> = Vec::new();
    if source.snapshot_file.is_some() {
        let (mut snapshot, _, _) = source.load_scope(true).await?;
        if let Some(at) = at {
            super::triage::refuse_before_the_specs(&snapshot, None, at)?;
            mdiag_core::model::as_of(&mut snapshot, at);
        }
        redactor.logs(&mut snapshot.logs);
        let snapshot = Rc::new(snapshot);
        for place in &places {
            snapshots.push((place.clone(), Rc::clone(&snapshot), None));
        }
    } else {
        for (context, ns) in &places {
            let scoped = SourceRequest {
                namespace: Some(ns.clone()),
                live: LiveOptions {
                    context: context.clone().or_else(|| source.live.context.clone()),
                    ..source.live.clone()
                },
                ..source.clone()
            };
            let mut loaded = scoped.load(None).await?;
            let requests = loaded.connection.as_ref().map(|c| c.requests());
            redactor.logs(&mut loaded.snapshot.logs);
            snapshots.push((
                (context.clone(), ns.clone()),
                Rc::new(loaded.snapshot),
                requests,
            ));
        }
    }
    let snapshot_of = |place: &Place| snapshots.iter().find(|(p, _, _)| p == place);

    let mut traced: Vec<Traced> = Vec::new();
    // How each alert was mapped, when its labels did not name the workload.
    let mut notes: Vec<Option<Message>> = vec![None; alerts.len()];
    let mut unmapped: Vec<(usize, Message)> = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        let context = match &contexts[i] {
            Ok(context) => context.clone(),
            Err(why) => {
                unmapped.push((i, why.clone()));
                continue;
            }
        };
        let place_of = |ns: String| (context.clone(), ns);
        let resolved = match alert::namespace_of(subject).and_then(|ns| snapshot_of(&place_of(ns)))
        {
            Some(((_, ns), snapshot, _)) => {
                alert::resolve(snapshot, ns, subject, source.controller.as_ref(), at, wall)
            }
            None => Err(match subject {
                Subject::Unknown(why) => why.clone(),
                _ => Message::new("alert.nothing_read"),
            }),
        };
        match resolved {
            Ok((target, note)) => {
                notes[i] = match (note, cluster_notes[i].take()) {
                    (Some(a), Some(b)) => Some(
                        Message::new("alert.notes_two")
                            .arg("first", a)
                            .arg("second", b),
                    ),
                    (a, b) => a.or(b),
                };
                let place = place_of(target.namespace.clone().unwrap_or_default());
                // Several alerts about one workload: one trace.
                match traced.iter_mut().find(|t| {
                    t.place == place
                        && snapshot_of(&place).is_some_and(|((_, ns), snapshot, _)| {
                            alert::same_workload(&t.target, &target, snapshot, ns)
                        })
                }) {
                    Some(t) => t.alerts.push(i),
                    None => traced.push(Traced {
                        target,
                        place,
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
        let Some((_, snapshot, requests)) = snapshot_of(&t.place) else {
            continue;
        };
        let chain = chain::walk(snapshot, &t.target, &t.place.1, source.controller.as_ref())
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
