//! The files a tool call may read: only those inside the directories and
//! files `mdiag mcp --allow-file` named (and its `--snapshot`). A path is
//! resolved before it is opened (relative to the server's working
//! directory, `..` and every symlink followed), refused unless it ends up
//! inside, opened by that resolved path, and checked again through the
//! handle: what is read is the file that was checked, even if a directory
//! of the path is swapped for a symlink in between. A refused file is
//! never opened, so no message can quote it, and a refusal reads the same
//! whether the file exists or not.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::error::UsageError;
use crate::request::FileScope;
use mdiag_core::catalogue::Message;
use mdiag_source::SourceError;
use mdiag_source::file::Input;

/// `given` opened for reading, or why not.
pub fn open(files: &FileScope, given: &Path) -> anyhow::Result<File> {
    if given == Path::new("-") {
        return Err(UsageError(Message::new("usage.mcp.stdin")).into());
    }
    if given.as_os_str().is_empty() {
        return Err(UsageError(Message::new("usage.mcp.empty_path")).into());
    }
    let path = files.cwd.join(given);
    let shown = || given.to_path_buf();
    let real = match std::fs::canonicalize(&path) {
        Ok(real) => real,
        Err(cause) => {
            // Missing (or a directory of it unreadable): said as the CLI
            // says it only when it would have been inside.
            return Err(match lexical(&path) {
                Some(p) if files.holds(&p) => SourceError::Io {
                    path: shown(),
                    input: Input::Snapshot,
                    cause,
                }
                .into(),
                _ => outside(files, given),
            });
        }
    };
    if !files.holds(&real) {
        return Err(outside(files, given));
    }
    let regular = std::fs::metadata(&real).is_ok_and(|m| m.is_file());
    if !regular {
        return Err(not_regular(given));
    }
    let file = File::open(&real).map_err(|cause| SourceError::Io {
        path: shown(),
        input: Input::Snapshot,
        cause,
    })?;
    if !opened_inside(files, &file, &real) {
        return Err(outside(files, given));
    }
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(not_regular(given));
    }
    Ok(file)
}

fn outside(files: &FileScope, given: &Path) -> anyhow::Error {
    UsageError(
        Message::new("usage.mcp.outside_files")
            .arg("path", format!("{given:?}"))
            .arg("allowed", files.describe()),
    )
    .into()
}

fn not_regular(given: &Path) -> anyhow::Error {
    UsageError(Message::new("usage.mcp.not_regular").arg("path", format!("{given:?}"))).into()
}

/// A path that does not exist, resolved as far as it does: its deepest
/// existing ancestor canonical, then the rest taken by their names (`..`
/// removing one). Only decides which message a missing file gets; nothing
/// is opened by it.
fn lexical(path: &Path) -> Option<PathBuf> {
    let (base, rest) = path
        .ancestors()
        .find_map(|a| Some((std::fs::canonicalize(a).ok()?, path.strip_prefix(a).ok()?)))?;
    let mut out = base;
    for c in rest.components() {
        match c {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// Whether the file behind the handle is inside: on Linux the kernel's own
/// path of the open file (`/proc/self/fd/N`); elsewhere, or without /proc,
/// the checked path resolved again and naming the same file.
fn opened_inside(files: &FileScope, file: &File, real: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return p.is_absolute() && files.holds(&p);
        }
    }
    let again = std::fs::canonicalize(real);
    again.is_ok_and(|again| files.holds(&again) && same_file(file, &again))
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, _: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Allowed;

    fn scope(dir: &Path, allow: &[&str]) -> FileScope {
        FileScope {
            allowed: allow
                .iter()
                .map(|a| {
                    let real = std::fs::canonicalize(dir.join(a)).unwrap();
                    Allowed {
                        shown: PathBuf::from(a),
                        dir: real.is_dir(),
                        real,
                    }
                })
                .collect(),
            cwd: dir.to_path_buf(),
        }
    }

    fn err(files: &FileScope, given: &str) -> String {
        format!("{:#}", open(files, Path::new(given)).unwrap_err())
    }

    fn ok(files: &FileScope, given: &str) -> bool {
        open(files, Path::new(given)).is_ok()
    }

    #[test]
    fn inside_is_opened_and_outside_refused_whether_or_not_it_exists() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir_all(dir.join("allowed/sub")).unwrap();
        std::fs::create_dir_all(dir.join("allowedness")).unwrap();
        std::fs::write(dir.join("allowed/sub/a.yaml"), "kind: List\n").unwrap();
        std::fs::write(dir.join("allowedness/b.yaml"), "secret: 1\n").unwrap();
        std::fs::write(dir.join("secret.yaml"), "secret: 1\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("secret.yaml"), dir.join("allowed/link.yaml")).unwrap();
        let files = scope(dir, &["allowed"]);
        assert!(ok(&files, "allowed/sub/a.yaml"));
        assert!(ok(&files, "allowed/sub/../sub/./a.yaml"));
        assert!(open(&files, &dir.join("allowed/sub/a.yaml")).is_ok());
        for bad in [
            "secret.yaml",
            "allowed/../secret.yaml",
            "allowed/sub/../../secret.yaml",
            "allowedness/b.yaml",
            "allowed/nothing/../../secret.yaml",
            "/proc/self/environ",
            "missing-outside.yaml",
            "allowed/../missing.yaml",
            #[cfg(unix)]
            "allowed/link.yaml",
        ] {
            let e = err(&files, bad);
            assert!(
                e.starts_with(&format!("refused: {bad:?} is outside")),
                "{bad}: {e}"
            );
            assert!(e.contains("allowed (a directory)"), "{e}");
        }
        // Missing inside: the CLI's message.
        let e = err(&files, "allowed/missing.yaml");
        assert!(e.contains("does not exist"), "{e}");
        assert!(err(&files, "allowed/sub").contains("not a regular file"));
        assert!(err(&files, "-").starts_with("refused: \"-\" (standard input)"));
        // No --allow-file: nothing.
        let none = scope(dir, &[]);
        assert!(
            err(&none, "allowed/sub/a.yaml").contains("none: it was started without --allow-file")
        );
        // One file allowed: that file, not its neighbours.
        let one = scope(dir, &["allowed/sub/a.yaml"]);
        assert!(ok(&one, "allowed/sub/a.yaml"));
        assert!(err(&one, "allowed/link.yaml").contains("is outside"));
    }
}
