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
            return Err(refused(format!(
                "the argument `{name}` is {} bytes, over the {MAX_ARGUMENT_BYTES} a call may send in one argument",
                v.len()
            )));
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
            Some(p) => format!(
                "the kubeconfig is pinned when `mdiag mcp` starts (--kubeconfig {}), and a call cannot name another ({k:?}); to read another cluster, start a server of its own with `mdiag mcp --kubeconfig FILE`",
                p.display()
            ),
            None => format!(
                "the kubeconfig is pinned when `mdiag mcp` starts ($KUBECONFIG, else ~/.kube/config: it was started without --kubeconfig), and a call cannot name another ({k:?}); to read another cluster, start a server of its own with `mdiag mcp --kubeconfig FILE`"
            ),
        }));
    }
    if let Some(c) = &s.context
        && d.context.as_ref() != Some(c)
    {
        return Err(refused(match &d.context {
            Some(p) => format!(
                "the context is pinned when `mdiag mcp` starts (--context {p}), and a call cannot name another ({c:?}); to read another context, start a server of its own with `mdiag mcp --context NAME`"
            ),
            None => format!(
                "the context is pinned when `mdiag mcp` starts (the kubeconfig's current context: it was started without --context), and a call cannot name one ({c:?}); to read another context, start a server of its own with `mdiag mcp --context NAME`"
            ),
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
                    return Err(refused(format!(
                        "namespace {n:?} is outside this server's scope: `mdiag mcp` was started with -n {ns}, and a call may narrow that scope, never widen it; to read another namespace, start it with `mdiag mcp -n NS` (or `mdiag mcp -A` for every namespace)"
                    )));
                }
                if all_namespaces {
                    return Err(refused(format!(
                        "all_namespaces is wider than this server's scope: `mdiag mcp` was started with -n {ns}; to let calls read every namespace, start it with `mdiag mcp -A`"
                    )));
                }
            }
            NamespaceScope::Context => {
                if all_namespaces {
                    return Err(refused(
                        "all_namespaces is wider than this server's scope: `mdiag mcp` was started without -n or -A, so it reads only its context's namespace; to let calls read every namespace, start it with `mdiag mcp -A`".into(),
                    ));
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
    if let Some(l) = s.lang {
        g.lang = Some(match l {
            Language::En => LangArg::En,
            Language::Zh => LangArg::Zh,
        });
    }
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

fn refused(why: String) -> anyhow::Error {
    UsageError(format!("refused: {why}")).into()
}
