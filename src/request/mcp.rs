//! `mdiag mcp [--allow-file DIR|FILE]...` as a plain request: what every
//! tool call of the server may read, pinned when it starts. The global
//! flags it was started with are the ceiling (the kubeconfig, the context,
//! `-n` or `-A`); `--allow-file` lists the files. A call may narrow that
//! scope; `crate::cmd::mcp` refuses what would widen it.

use std::path::{Path, PathBuf};

use crate::cli::{FileArgs, GlobalArgs, McpArgs, ScopeArgs};
use crate::error::UsageError;
use mdiag_core::catalogue::{Arg, Message};

pub struct McpRequest {
    /// The global flags: every call's defaults.
    pub defaults: GlobalArgs,
    /// `--snapshot` and `--at`: the file and time of a call that names none.
    pub file: FileArgs,
    /// `-A` and `-l`: the selector of a triage call that names none.
    pub scope: ScopeArgs,
    /// `--kubeconfig` resolved, when it names a file that exists (a call
    /// naming that same file is not a change).
    pub kubeconfig_real: Option<PathBuf>,
    /// The widest namespace scope of a live read.
    pub namespaces: NamespaceScope,
    /// The files a call may read.
    pub files: FileScope,
}

/// How far a live read may reach, from `-n` and `-A`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceScope {
    /// Neither: the namespace of the context, as kubectl reads it.
    Context,
    /// `-n NS`.
    One(String),
    /// `-A`: every namespace.
    All,
}

/// The directories and files `--allow-file` (and `--snapshot`) name,
/// resolved at start, and the directory relative paths are read from.
#[derive(Debug, Clone)]
pub struct FileScope {
    pub allowed: Vec<Allowed>,
    pub cwd: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Allowed {
    /// As the operator wrote it (what messages show).
    pub shown: PathBuf,
    /// Canonical: absolute, no `..`, no symlink.
    pub real: PathBuf,
    /// A directory allows everything below it; a file only itself.
    pub dir: bool,
}

impl McpRequest {
    pub fn from_cli(global: &GlobalArgs, args: &McpArgs) -> anyhow::Result<Self> {
        let (file, scope) = (&args.file, &args.scope);
        if scope.all_namespaces && global.namespace.is_some() {
            return Err(UsageError(Message::new("usage.namespace_and_all")).into());
        }
        let cwd = std::env::current_dir().map_err(|e| {
            UsageError(Message::new("usage.no_working_directory").arg("detail", e.to_string()))
        })?;
        let mut allowed = Vec::new();
        for path in &args.allow_file {
            allowed.push(Allowed::resolve(&cwd, path, "--allow-file")?);
        }
        if let Some(file) = &file.snapshot {
            if file == Path::new("-") {
                return Err(UsageError(Message::new("usage.mcp_snapshot_stdin")).into());
            }
            // The file the operator named is allowed, and only as a file.
            let pinned = Allowed::resolve(&cwd, file, "--snapshot")?;
            if pinned.dir {
                return Err(UsageError(
                    Message::new("usage.mcp_snapshot_directory")
                        .arg("path", file.display().to_string()),
                )
                .into());
            }
            allowed.push(pinned);
        }
        let kubeconfig_real = global
            .kubeconfig
            .as_ref()
            .and_then(|k| std::fs::canonicalize(cwd.join(k)).ok());
        let namespaces = match (&global.namespace, scope.all_namespaces) {
            (Some(ns), _) => NamespaceScope::One(ns.clone()),
            (None, true) => NamespaceScope::All,
            (None, false) => NamespaceScope::Context,
        };
        Ok(McpRequest {
            defaults: global.clone(),
            file: file.clone(),
            scope: scope.clone(),
            kubeconfig_real,
            namespaces,
            files: FileScope { allowed, cwd },
        })
    }
}

impl Allowed {
    fn resolve(cwd: &Path, path: &Path, flag: &str) -> anyhow::Result<Self> {
        let real = std::fs::canonicalize(cwd.join(path)).map_err(|e| {
            UsageError(
                Message::new("usage.mcp_path")
                    .arg("flag", flag)
                    .arg("path", path.display().to_string())
                    .arg("detail", e.to_string()),
            )
        })?;
        let dir = real.is_dir();
        Ok(Allowed {
            shown: path.to_path_buf(),
            real,
            dir,
        })
    }
}

impl FileScope {
    /// Whether `real` (canonical) is one of the allowed files or below one
    /// of the allowed directories (compared by whole components, so
    /// `/data/x` does not allow `/data/xy`).
    pub fn holds(&self, real: &Path) -> bool {
        self.allowed.iter().any(|a| {
            if a.dir {
                real.starts_with(&a.real)
            } else {
                real == a.real
            }
        })
    }

    /// What the server may read, for a refusal: the paths as the operator
    /// wrote them.
    pub fn describe(&self) -> Message {
        if self.allowed.is_empty() {
            return Message::new("usage.mcp.allowed_none");
        }
        let list = self.allowed.iter().map(|a| {
            let shown = a.shown.display().to_string();
            if a.dir {
                Message::new("usage.mcp.allowed_directory").arg("path", shown)
            } else {
                Message::quote(shown)
            }
        });
        Message::new("usage.mcp.allowed").arg("paths", Arg::list(list, "sep.comma"))
    }
}
