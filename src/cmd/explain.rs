//! `mdiag explain [ID|SYMPTOM [TARGET]]`: the catalogue for people. With
//! no argument, every id with its title; with a target, the check commands
//! carry its real names (read live or from `--snapshot`).

use jiff::Timestamp;

use super::source::explain_not_found;
use crate::error::UsageError;
use crate::exit::Exit;
use crate::request::ExplainRequest;
use mdiag_core::analysis;
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::{Arg, Message};
use mdiag_core::catalogue::{Entry, catalogue, program};
use mdiag_core::chain;
use mdiag_core::model::{Clock, TargetKind, TargetSpec, TemplateVars};
use mdiag_render::{Style, explain};

pub async fn run(request: &ExplainRequest) -> anyhow::Result<Exit> {
    let style = Style {
        lang: request.lang,
        color: request.color,
        now: Timestamp::now(),
        width: request.width,
        verbose: true,
    };
    let explained = answer(request).await?;
    let text = match request.output.encoding() {
        Some(encoding) => mdiag_render::encode(&explained.report(style.lang), encoding)?,
        None if explained.query.is_none() => explain::list(catalogue(), &style),
        None => explain::entries(
            explained.query.as_deref().unwrap_or_default(),
            &explained.entries,
            &style,
        ),
    };
    super::emit(&text, request.output.paints(style.color))?;
    Ok(Exit::Healthy)
}

/// What `explain` found: the entries for the query (every entry without
/// one), each with the real names of the target when one was named.
pub struct Explained {
    pub query: Option<String>,
    pub target: Option<String>,
    pub entries: Vec<(&'static Entry, Option<TemplateVars>)>,
}

impl Explained {
    /// The `mdiag/v1` report `explain -o json` prints.
    pub fn report(&self, lang: Lang) -> explain::ExplainReport {
        explain::report(
            self.query.as_deref(),
            self.target.as_deref(),
            &self.entries,
            lang,
        )
    }
}

/// Looks the query up in the catalogue and, with a target, reads it (live
/// or from `--snapshot`) for its real names: everything of `explain` but
/// the printing (the CLI's and `mdiag mcp`'s).
pub async fn answer(request: &ExplainRequest) -> anyhow::Result<Explained> {
    let cat = catalogue();
    let Some(query) = request.query.as_deref() else {
        return Ok(Explained {
            query: None,
            target: None,
            entries: cat.entries.iter().map(|e| (e, None)).collect(),
        });
    };
    let entries = cat.lookup(query);
    if entries.is_empty() {
        return Err(UsageError(not_found_message(query)).into());
    }
    let names: Vec<Option<TemplateVars>> = match &request.target {
        None => entries.iter().map(|_| None).collect(),
        Some((_, target)) => target_names(request, target, &entries)
            .await?
            .into_iter()
            .map(|mut vars| {
                request.source.redactor.vars(&mut vars);
                Some(vars)
            })
            .collect(),
    };
    Ok(Explained {
        query: Some(query.to_string()),
        target: request.target.as_ref().map(|(text, _)| text.clone()),
        entries: entries.into_iter().zip(names).collect(),
    })
}

/// No entry for `query`: say so, with the closest words when there are some.
fn not_found_message(query: &str) -> Message {
    let suggestions = catalogue().suggest(query);
    let base = |id| {
        Message::new(id)
            .arg("query", format!("{query:?}"))
            .arg("program", program())
    };
    if suggestions.is_empty() {
        return base("usage.explain_no_match");
    }
    let named: Vec<Message> = suggestions
        .iter()
        .map(|(e, word)| {
            if *word == e.id {
                Message::quote(e.id.as_str())
            } else {
                Message::new("usage.explain_suggestion")
                    .arg("id", e.id.as_str())
                    .arg("word", *word)
            }
        })
        .collect();
    base("usage.explain_did_you_mean").arg("suggestions", or_list(named))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(mut items: Vec<Message>) -> Arg {
    match items.pop() {
        None => Arg::Text(String::new()),
        Some(last) if items.is_empty() => last.into(),
        Some(last) => Message::new("usage.or_last")
            .arg("init", Arg::list(items, "sep.comma"))
            .arg("last", last)
            .into(),
    }
}

/// The real names of `target` for each entry: those of the target's own
/// finding with that id when it has one (the Pod it is about, its node and
/// container), else the chain's, with the Pod's when the target is a Pod.
async fn target_names(
    request: &ExplainRequest,
    target: &TargetSpec,
    entries: &[&Entry],
) -> anyhow::Result<Vec<TemplateVars>> {
    let source = &request.source;
    let mut loaded = source.load(Some(target)).await?;
    if let Some(at) = request.at {
        mdiag_core::model::as_of(&mut loaded.snapshot, at);
    }
    let snapshot = &loaded.snapshot;
    let chain = chain::walk(
        snapshot,
        target,
        &loaded.namespace,
        source.controller.as_ref(),
    )
    .map_err(|not_found| explain_not_found(snapshot, not_found))?;
    let clock = Clock::choose(&snapshot.origin, request.at, Timestamp::now());
    let diagnosis = analysis::analyze(snapshot, &chain, clock.now);
    let mut base = analysis::chain_vars(&chain);
    if target.kind == TargetKind::Pod
        && let Some(p) = chain
            .pods
            .iter()
            .find(|p| p.pod.metadata.name.as_deref() == Some(target.name.as_str()))
    {
        base.extend(analysis::pod_vars(p.pod));
    }
    Ok(entries
        .iter()
        .map(|e| {
            let own = diagnosis.findings.iter().find(|f| {
                f.id.as_str() == e.id
                    && (target.kind != TargetKind::Pod || f.vars.get("pod") == Some(&target.name))
            });
            let mut vars = base.clone();
            if let Some(f) = own {
                vars.extend(f.vars.clone());
            }
            vars
        })
        .collect())
}
