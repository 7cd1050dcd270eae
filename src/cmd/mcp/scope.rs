//! One tool call's source, inside what the server was started to read
//! (`crate::request::McpRequest`): its arguments may narrow that scope (a
//! namespace inside it, one of the allowed files), and whatever would widen
//! it is refused, naming the `mdiag mcp` flag that would allow it. The
//! refusals never embed an argument in a command to paste: a call's
//! arguments are the client's text, quoted only as data.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::Timestamp;

use super::confine;
use super::params::{Language, Source};
use crate::cli::LangArg;
use crate::error::UsageError;
use crate::request::{self, McpRequest, NamespaceScope, SourceRequest};
use mdiag_core::catalogue::Lang;
use mdiag_core::catalogue::Message;

/// What a call reads, and how it is judged.
pub struct Call {
    pub source: SourceRequest,
    pub at: Option<Timestamp>,
    pub lang: Lang,
    /// Every namespace: the call's `all_namespaces`, or the server's `-A`
    /// when the call names no namespace.
    pub all_namespaces: bool,
}

impl Call {
    /// The file this call reads, opened and checked, with the path it was
    /// named by.
    pub fn file(&self) -> Option<(&Path, &Arc<std::fs::File>)> {
        Some((
            self.source.snapshot_file.as_deref()?,
            self.source.opened_file.as_ref()?,
        ))
    }
}

/// The longest string argument a call may send: room for any path, name,
/// selector or symptom, and none for a text whose matching (a symptom is
/// compared with every catalogue word) would keep the server busy.
pub const MAX_ARGUMENT_BYTES: usize = 4096;

/// Refuses a string argument over [`MAX_ARGUMENT_BYTES`], naming it.
pub fn short(arguments: &[(&str, Option<&str>)]) -> anyhow::Result<()> {
    for (name, value) in arguments {
        if let Some(v) = value
            && v.len() > MAX_ARGUMENT_BYTES
        {
            return Err(refused(
                Message::new("usage.mcp.long_argument")
                    .arg("name", *name)
                    .arg("bytes", v.len() as i64)
                    .arg("max", MAX_ARGUMENT_BYTES as i64),
            ));
        }
    }
    Ok(())
}

/// The server's flags with a call's arguments laid over them, checked.
pub fn call(pins: &McpRequest, s: &Source, all_namespaces: bool) -> anyhow::Result<Call> {
    short(&[
        ("namespace", s.namespace.as_deref()),
        ("context", s.context.as_deref()),
        ("kubeconfig", s.kubeconfig.as_deref()),
        ("snapshot", s.snapshot.as_deref()),
        ("at", s.at.as_deref()),
    ])?;
    let d = &pins.defaults;
    if let Some(k) = &s.kubeconfig
        && !same_kubeconfig(pins, k)
    {
        return Err(refused(match &d.kubeconfig {
            Some(p) => Message::new("usage.mcp.kubeconfig_pinned")
                .arg("pinned", p.display().to_string())
                .arg("given", format!("{k:?}")),
            None => Message::new("usage.mcp.kubeconfig_default").arg("given", format!("{k:?}")),
        }));
    }
    if let Some(c) = &s.context
        && d.context.as_ref() != Some(c)
    {
        return Err(refused(match &d.context {
            Some(p) => Message::new("usage.mcp.context_pinned")
                .arg("pinned", p.as_str())
                .arg("given", format!("{c:?}")),
            None => Message::new("usage.mcp.context_default").arg("given", format!("{c:?}")),
        }));
    }

    let file: Option<PathBuf> = s
        .snapshot
        .as_ref()
        .map(PathBuf::from)
        .or(pins.file.snapshot.clone());
    let opened = match &file {
        Some(f) => Some(Arc::new(confine::open(&pins.files, f)?)),
        None => None,
    };
    // The namespace scope bounds what is read from the cluster; an allowed
    // file is readable whole.
    let mut context_namespace_only = false;
    if file.is_none() {
        match &pins.namespaces {
            NamespaceScope::All => {}
            NamespaceScope::One(ns) => {
                if let Some(n) = &s.namespace
                    && n != ns
                {
                    return Err(refused(
                        Message::new("usage.mcp.namespace_outside")
                            .arg("given", format!("{n:?}"))
                            .arg("namespace", ns.as_str()),
                    ));
                }
                if all_namespaces {
                    return Err(refused(
                        Message::new("usage.mcp.all_outside").arg("namespace", ns.as_str()),
                    ));
                }
            }
            NamespaceScope::Context => {
                if all_namespaces {
                    return Err(refused(Message::new("usage.mcp.all_outside_context")));
                }
                // Which namespace the context has is known once connected.
                context_namespace_only = s.namespace.is_some();
            }
        }
    }

    let mut g = d.clone();
    if s.namespace.is_some() {
        g.namespace = s.namespace.clone();
    }
    g.lang = lang_arg(pins, s);
    let at = s.at.as_deref().or(pins.file.at.as_deref());
    let mut source = SourceRequest::from_cli(&g, file.as_deref())?;
    source.opened_file = opened;
    source.context_namespace_only = context_namespace_only;
    Ok(Call {
        source,
        at: request::parse_at(at)?,
        lang: request::lang(&g),
        all_namespaces: all_namespaces || (pins.scope.all_namespaces && s.namespace.is_none()),
    })
}

/// The call's `lang`, else the server's.
fn lang_arg(pins: &McpRequest, s: &Source) -> Option<LangArg> {
    match s.lang {
        Some(Language::En) => Some(LangArg::En),
        Some(Language::Zh) => Some(LangArg::Zh),
        None => pins.defaults.lang,
    }
}

/// The language a call is answered in, its errors included.
pub fn lang(pins: &McpRequest, s: &Source) -> Lang {
    let mut g = pins.defaults.clone();
    g.lang = lang_arg(pins, s);
    request::lang(&g)
}

/// A call naming the kubeconfig the server was started with changes
/// nothing; any other is a change.
fn same_kubeconfig(pins: &McpRequest, k: &str) -> bool {
    let Some(pinned) = &pins.defaults.kubeconfig else {
        return false;
    };
    if Path::new(k) == pinned {
        return true;
    }
    match (
        &pins.kubeconfig_real,
        std::fs::canonicalize(pins.files.cwd.join(k)),
    ) {
        (Some(a), Ok(b)) => *a == b,
        _ => false,
    }
}

fn refused(why: Message) -> anyhow::Error {
    UsageError(Message::new("usage.mcp.refused").arg("why", why)).into()
}
