//! Writing a snapshot file: YAML or JSON by the name, gzip for `.gz`,
//! atomically (a temporary file in the same folder, then a rename), so a
//! failed or interrupted capture never leaves half a file behind; and every
//! file mdiag writes (snapshots, the gate's reports) as users expect of a
//! file named on the command line: `-` is standard output, a symlink is
//! written through, a new file's mode comes from the umask
//! ([`write_atomic`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::{FORMAT_ID, FORMAT_VERSION, SnapshotFile};
use super::objects::all_values;
use super::redact::Redactor;
use mdiag_core::model::Snapshot;

#[derive(Debug, thiserror::Error)]
#[error("{}", mdiag_core::catalogue::Localized::message(self).en())]
pub enum WriteError {
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    Encode(String),
}

impl mdiag_core::catalogue::Localized for WriteError {
    fn message(&self) -> mdiag_core::catalogue::Message {
        use mdiag_core::catalogue::Message;
        match self {
            WriteError::Io { path, cause } => Message::new("error.write")
                .arg("path", path.display().to_string())
                .arg("detail", cause.to_string()),
            WriteError::Encode(detail) => {
                Message::new("error.encode_snapshot").arg("detail", detail.as_str())
            }
        }
    }
}

/// Builds the file contents from a snapshot, redacting as it goes.
pub fn to_file(snapshot: &Snapshot, redactor: &Redactor) -> SnapshotFile {
    let mut objects = all_values(&snapshot.objects);
    let mut logs = snapshot.logs.clone();
    let mut redactions = snapshot.redactions.clone();
    redactions.extend(redactor.redact(&mut objects, &mut logs));
    let mut gaps = snapshot.gaps.clone();
    redactions.extend(redactor.redact_gaps(&mut gaps));
    let origin = &snapshot.origin;
    SnapshotFile {
        format: FORMAT_ID.to_string(),
        version: FORMAT_VERSION,
        captured_at: origin.captured_at,
        captured_by: origin.captured_by.clone(),
        context: origin.context.clone(),
        server_version: origin.server_version.clone(),
        namespace: origin.namespace.clone(),
        target: origin.target.clone(),
        objects,
        logs,
        gaps,
        redactions,
    }
}

/// How a snapshot file is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Yaml,
    Json,
}

impl FileFormat {
    /// What a file's name asks for: `.json` or `.json.gz` JSON, `.yaml`
    /// or `.yml` (gzipped too) YAML, any other name nothing.
    pub fn of_name(path: &Path) -> Option<FileFormat> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let name = name.strip_suffix(".gz").unwrap_or(name);
        if name.ends_with(".json") {
            Some(FileFormat::Json)
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            Some(FileFormat::Yaml)
        } else {
            None
        }
    }
}

impl std::fmt::Display for FileFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileFormat::Yaml => "yaml",
            FileFormat::Json => "json",
        })
    }
}

fn encode(file: &SnapshotFile, format: FileFormat) -> Result<Vec<u8>, WriteError> {
    match format {
        FileFormat::Json => {
            serde_json::to_vec_pretty(file).map_err(|e| WriteError::Encode(e.to_string()))
        }
        FileFormat::Yaml => serde_saphyr::to_string(file)
            .map(String::into_bytes)
            .map_err(|e| WriteError::Encode(e.to_string())),
    }
}

/// Writes `file` to `path` atomically, in the format its name asks for
/// (YAML when it asks for none). Returns the bytes written.
pub fn write_file(path: &Path, file: &SnapshotFile) -> Result<u64, WriteError> {
    write_file_as(
        path,
        file,
        FileFormat::of_name(path).unwrap_or(FileFormat::Yaml),
    )
}

/// Writes `file` to `path` atomically in `format`, gzip-compressed when
/// the name ends in `.gz`. Returns the bytes written.
pub fn write_file_as(
    path: &Path,
    file: &SnapshotFile,
    format: FileFormat,
) -> Result<u64, WriteError> {
    let bytes = encode(file, format)?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    write_atomic(path, &bytes, gz)
}

/// Checks, before the work that fills it, that [`write_atomic`] could
/// write `path`: its folder exists, is a folder and takes a new file (a
/// temporary one is made and removed). Standard output and what is
/// written through (a FIFO, a device) are not opened here.
pub fn check_writable(path: &Path) -> Result<(), WriteError> {
    let io = |cause| WriteError::Io {
        path: PathBuf::from(display_path(path)),
        cause,
    };
    let target = match destination(path) {
        Ok(Destination::Stdout | Destination::Through(_)) => return Ok(()),
        Ok(Destination::Replace(target)) => target,
        // A file where a folder of the path should be: said of the folder.
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => path.to_path_buf(),
        Err(e) => return Err(io(e)),
    };
    let dir = folder_of(&target);
    match std::fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a folder", dir.display()),
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(io(std::io::Error::new(
                e.kind(),
                format!("there is no folder {}", dir.display()),
            )));
        }
        Err(e) => return Err(io(in_folder(e, &dir))),
    }
    temp_in(&dir).map(drop).map_err(io)
}

/// What `-` (and `/dev/stdout`) means: standard output.
pub const STDOUT_PATH: &str = "-";

/// How messages name a path written to (`standard output` for `-`).
pub fn display_path(path: &Path) -> String {
    if path == Path::new(STDOUT_PATH) {
        "standard output".to_string()
    } else {
        path.display().to_string()
    }
}

/// Writes `bytes` (gzip-compressed when `gzip`) to `path` as users expect
/// of a file named on the command line, and returns the bytes written:
///
/// - `-` and `/dev/stdout` write to standard output; another file that is
///   not a regular file (a FIFO, a device, `/dev/stderr`, `/dev/fd/N`) is
///   written through, as a shell's `>` would;
/// - a regular file (or none yet) is written atomically: a temporary file
///   in the same folder, then a rename, so the file is whole or as it was,
///   never cut;
/// - a symlink is followed: its target is written (atomically, in the
///   target's folder) and the symlink kept;
/// - a new file gets the mode the umask leaves of 0666 (0644 under the
///   usual 022), as `>` would give it; a file replaced keeps its mode.
pub fn write_atomic(path: &Path, bytes: &[u8], gzip: bool) -> Result<u64, WriteError> {
    let io = |cause| WriteError::Io {
        path: PathBuf::from(display_path(path)),
        cause,
    };
    match destination(path).map_err(io)? {
        Destination::Stdout => {
            let mut out = std::io::stdout().lock();
            match write_to(&mut out, bytes, gzip).and_then(|n| out.flush().map(|()| n)) {
                // A reader that closed the pipe (`| head`) wanted no more.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
                written => written.map_err(io),
            }
        }
        Destination::Through(target) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&target)
                .map_err(io)?;
            write_to(&mut file, bytes, gzip).map_err(io)
        }
        Destination::Replace(target) => replace(&target, bytes, gzip).map_err(io),
    }
}

/// Where the bytes for a path go.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    Stdout,
    /// Not a regular file: opened and written in place.
    Through(PathBuf),
    /// A regular file, or none yet: replaced atomically.
    Replace(PathBuf),
}

fn destination(path: &Path) -> std::io::Result<Destination> {
    if path == Path::new(STDOUT_PATH) || path == Path::new("/dev/stdout") {
        return Ok(Destination::Stdout);
    }
    // A file descriptor's name stands for what the descriptor is open on
    // (a file `2>` opened, a pipe): never replaced, always written through.
    if path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd")
        || path == Path::new("/dev/stderr")
    {
        return Ok(Destination::Through(path.to_path_buf()));
    }
    let target = follow_links(path)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Err(std::io::ErrorKind::IsADirectory.into()),
        Ok(meta) if !meta.is_file() => Ok(Destination::Through(target)),
        Ok(_) => Ok(Destination::Replace(target)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Destination::Replace(target)),
        Err(e) => Err(e),
    }
}

/// The path a chain of symlinks ends at (which need not exist yet, as a
/// dangling link's target is created); `path` itself when it is no link.
fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    // The kernel's own limit on links followed in one lookup.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            Ok(_) => return Ok(at),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(at),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Writes a temporary file beside `target`, then renames it over `target`.
fn replace(target: &Path, bytes: &[u8], gzip: bool) -> std::io::Result<u64> {
    let dir = folder_of(target);
    let existing = std::fs::metadata(target).ok().map(|m| m.permissions());
    let mut temp = temp_in(&dir)?;
    if let Some(permissions) = existing {
        temp.as_file().set_permissions(permissions)?;
    }
    let written = write_to(temp.as_file_mut(), bytes, gzip)?;
    temp.as_file().sync_all()?;
    temp.persist(target).map_err(|e| e.error)?;
    Ok(written)
}

/// The folder a file is written in (`.` for a bare name).
fn folder_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A new temporary file in `dir`, with the mode `>` would give it. Its
/// error names the folder, not the temporary name nobody asked for.
fn temp_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".mdiag-");
    // tempfile's own default is 0600; a new file gets what `>` gives it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir).map_err(|e| in_folder(e, dir))
}

/// `e`, said of the folder `dir`.
fn in_folder(e: std::io::Error, dir: &Path) -> std::io::Error {
    std::io::Error::new(
        e.kind(),
        format!("cannot create a file in {}: {}", dir.display(), e.kind()),
    )
}

/// Writes `bytes`, gzip-compressed when `gzip`; returns the bytes written.
fn write_to(out: &mut impl Write, bytes: &[u8], gzip: bool) -> std::io::Result<u64> {
    if !gzip {
        out.write_all(bytes)?;
        return Ok(bytes.len() as u64);
    }
    let mut counted = Counted { inner: out, n: 0 };
    let mut encoder = flate2::write::GzEncoder::new(&mut counted, flate2::Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()?;
    Ok(counted.n)
}

/// A writer that counts what it passes on.
struct Counted<'a, W> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::read_snapshot_file;

    #[test]
    fn a_written_snapshot_reads_back_with_its_objects_logs_and_gaps() {
        let original = read_snapshot_file(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join("fixtures/demo/snapshot-crash-loop.yaml"),
        )
        .unwrap();
        let file = to_file(&original, &Redactor::new(&[], true).unwrap());
        let dir = tempfile::tempdir().unwrap();
        for name in ["s.yaml", "s.json", "s.yaml.gz", "s.json.gz"] {
            let path = dir.path().join(name);
            write_file(&path, &file).unwrap();
            let back = read_snapshot_file(&path).unwrap();
            assert_eq!(back.objects.len(), original.objects.len(), "{name}");
            assert_eq!(back.logs, original.logs, "{name}");
            assert_eq!(back.gaps, original.gaps, "{name}");
            assert_eq!(
                back.origin.captured_at, original.origin.captured_at,
                "{name}"
            );
        }
        // Nothing but the four files: no temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn a_failed_write_leaves_no_file() {
        let file = to_file(&Snapshot::default(), &Redactor::new(&[], true).unwrap());
        let err = write_file(Path::new("/nonexistent-dir/x.yaml"), &file).unwrap_err();
        assert!(err.to_string().contains("/nonexistent-dir/x.yaml"));
    }

    /// The umask of this process, read without changing it (setting it
    /// would race with the other tests' threads).
    #[cfg(target_os = "linux")]
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_new_file_gets_the_mode_the_umask_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        write_atomic(&path, b"{}", false).unwrap();
        assert_eq!(mode(&path), 0o666 & !umask(), "{:o}", mode(&path));
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"new", false).unwrap();
        assert_eq!(mode(&path), 0o640);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_kept_and_its_target_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.yaml");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink("real.yaml", &link).unwrap();
        // A link to a link, relative, as `ln -s` makes them.
        let outer = dir.path().join("outer.yaml");
        std::os::unix::fs::symlink("link.yaml", &outer).unwrap();
        write_atomic(&outer, b"new", false).unwrap();
        assert!(
            std::fs::symlink_metadata(&outer)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        // A dangling link's target is created, the link kept.
        let dangling = dir.path().join("dangling.yaml");
        std::os::unix::fs::symlink("made.yaml", &dangling).unwrap();
        write_atomic(&dangling, b"made", false).unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.yaml")).unwrap(),
            "made"
        );
        // No temporary file is left in the folder.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".mdiag-"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        let written = write_atomic(&fifo, b"through", true).unwrap();
        let got = reader.join().unwrap();
        assert_eq!(got.len() as u64, written);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&got[..]), &mut text)
            .unwrap();
        assert_eq!(text, "through");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
    }

    #[test]
    fn a_name_says_its_format_or_nothing() {
        let of = |n: &str| FileFormat::of_name(Path::new(n));
        assert_eq!(of("e.json"), Some(FileFormat::Json));
        assert_eq!(of("dir.yaml/e.json.gz"), Some(FileFormat::Json));
        assert_eq!(of("e.yaml.gz"), Some(FileFormat::Yaml));
        assert_eq!(of("e.yml"), Some(FileFormat::Yaml));
        assert_eq!(of("json"), None);
        assert_eq!(of("-"), None);
        assert_eq!(of("e.gz"), None);
    }

    #[test]
    fn a_missing_folder_is_found_before_writing_and_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_writable(&dir.path().join("new.yaml")).is_ok());
        assert!(check_writable(Path::new(STDOUT_PATH)).is_ok());
        let missing = dir.path().join("nope").join("e.yaml");
        let err = check_writable(&missing).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "cannot write {}: there is no folder {}",
                missing.display(),
                dir.path().join("nope").display()
            )
        );
        // A file where the folder should be.
        std::fs::write(dir.path().join("plain"), "x").unwrap();
        let err = check_writable(&dir.path().join("plain").join("e.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("plain is not a folder"), "{err}");
        // Nothing was left behind by the check.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn where_each_path_goes() {
        assert_eq!(destination(Path::new("-")).unwrap(), Destination::Stdout);
        assert_eq!(
            destination(Path::new("/dev/stdout")).unwrap(),
            Destination::Stdout
        );
        assert_eq!(
            destination(Path::new("/dev/fd/2")).unwrap(),
            Destination::Through(PathBuf::from("/dev/fd/2"))
        );
        assert_eq!(
            destination(Path::new("/dev/null")).unwrap(),
            Destination::Through(PathBuf::from("/dev/null"))
        );
        assert_eq!(
            destination(Path::new("new.yaml")).unwrap(),
            Destination::Replace(PathBuf::from("new.yaml"))
        );
        assert!(destination(Path::new("/")).is_err());
    }
}
