//! Opening an input the user named (`--snapshot FILE`, `triage --alert
//! FILE`): a regular file, standard input (`-`), a FIFO or a device, gzip
//! or not, and one cap per kind of input, counted as the bytes arrive
//! (after decompression), so that `/dev/zero`, an endless pipe or a gzip
//! bomb stops at the cap having held no more than about the cap.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use super::error::SourceError;

/// The largest snapshot read, after decompression. Far above any real
/// namespace (a dump of 22,783 objects is 72 MB of JSON), low enough that
/// a hostile file cannot exhaust memory.
pub const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

/// The largest alert read, after decompression. An Alertmanager webhook
/// carries its group's alerts, each a few kilobytes of labels and
/// annotations: a thousand of them stay under a few megabytes.
pub const MAX_ALERT_BYTES: u64 = 16 << 20;

/// What an input is for: its cap and the words of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// `--snapshot FILE`: an mdiag snapshot or a kubectl dump.
    Snapshot,
    /// `triage --alert FILE`: an Alertmanager payload.
    Alert,
}

impl Input {
    /// The most bytes (after decompression) read of this input.
    pub const fn limit(self) -> u64 {
        match self {
            Input::Snapshot => MAX_SNAPSHOT_BYTES,
            Input::Alert => MAX_ALERT_BYTES,
        }
    }

    /// The flag that names it.
    pub fn flag(self) -> &'static str {
        match self {
            Input::Snapshot => "--snapshot",
            Input::Alert => "--alert",
        }
    }
}

/// The path that means standard input (`--snapshot -`, `--alert -`).
pub(crate) const STDIN_PATH: &str = "-";

/// What messages call standard input.
const STDIN_LABEL: &str = mdiag_core::model::STDIN_LOCATION;

/// How large a buffer the stream readers use.
pub(crate) const BUFFER: usize = 64 * 1024;

/// An opened input.
pub(crate) enum Opened {
    /// A regular file that is not compressed, read whole: its size was
    /// checked against the cap before reading.
    Whole(Vec<u8>),
    /// Standard input, a FIFO, a device or a gzip file: read as it arrives
    /// through [`Stream::reader`], which stops at the cap.
    Stream(Stream<'static>),
}

/// Whether a stream is compressed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    /// The name says gzip.
    Gzip,
    /// Gzip when the first bytes are its magic number (standard input, a
    /// FIFO or a device: there is no name to go by).
    Sniff,
    /// Not compressed (a regular file whose name does not say gzip).
    None,
}

/// Opens `path` as `input` with the cap `limit`.
pub(crate) fn open(path: &Path, input: Input, limit: u64) -> Result<Opened, SourceError> {
    match open_named(path, input)? {
        Some(file) => open_file(file, path, input, limit),
        None => open_stdin(input, limit),
    }
}

/// The file `path` names, opened; `None` for standard input (`-`).
pub(crate) fn open_named(path: &Path, input: Input) -> Result<Option<std::fs::File>, SourceError> {
    if path == Path::new(STDIN_PATH) {
        return Ok(None);
    }
    // Opening a FIFO waits for its writer, as `cat` does.
    std::fs::File::open(path)
        .map(Some)
        .map_err(|cause| SourceError::Io {
            path: path.to_path_buf(),
            input,
            cause,
        })
}

/// Standard input as `input` with the cap `limit`.
pub(crate) fn open_stdin(input: Input, limit: u64) -> Result<Opened, SourceError> {
    let stdin = std::io::BufReader::with_capacity(BUFFER, std::io::stdin());
    let label = Path::new(STDIN_LABEL);
    Stream::new(Box::new(stdin), Compression::Sniff, label, input, limit).map(Opened::Stream)
}

/// [`open`] for a file the caller has already opened (and checked): `path`
/// names it in messages, its `.gz` suffix says it is compressed; it is
/// never opened by its path again.
pub(crate) fn open_file(
    mut file: std::fs::File,
    path: &Path,
    input: Input,
    limit: u64,
) -> Result<Opened, SourceError> {
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        input,
        cause,
    };
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::ErrorKind::IsADirectory.into()));
    }
    let gzip = path.extension().is_some_and(|e| e == "gz");
    if gzip || !meta.is_file() {
        // A FIFO, a device (`/dev/zero`, `/dev/stdin` on a pipe) reports no
        // size: only counting the bytes as they come bounds it.
        let compression = if gzip {
            Compression::Gzip
        } else {
            Compression::Sniff
        };
        let file = std::io::BufReader::with_capacity(BUFFER, file);
        return Stream::new(Box::new(file), compression, path, input, limit).map(Opened::Stream);
    }
    let too_large = || SourceError::TooLarge {
        path: path.to_path_buf(),
        input,
        limit,
        inflated: false,
    };
    // The size the file system reports is checked before reading; the read
    // is capped too, as the file may grow while it is read.
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(Opened::Whole(bytes))
}

/// An input read as it arrives: inflated when it is gzip, counted, and
/// stopped at the cap.
pub(crate) struct Stream<'a> {
    capped: Capped<Box<dyn Read + Send + 'a>>,
    path: PathBuf,
    input: Input,
    limit: u64,
    gzip: bool,
}

impl<'a> Stream<'a> {
    pub(crate) fn new(
        mut raw: Box<dyn BufRead + Send + 'a>,
        compression: Compression,
        path: &Path,
        input: Input,
        limit: u64,
    ) -> Result<Stream<'a>, SourceError> {
        let gzip = match compression {
            Compression::Gzip => true,
            Compression::None => false,
            Compression::Sniff => {
                let head = raw.fill_buf().map_err(|cause| SourceError::Io {
                    path: path.to_path_buf(),
                    input,
                    cause,
                })?;
                head.starts_with(&[0x1f, 0x8b])
            }
        };
        let inner: Box<dyn Read + Send + 'a> = if gzip {
            Box::new(flate2::bufread::MultiGzDecoder::new(raw))
        } else {
            Box::new(raw)
        };
        Ok(Stream {
            capped: Capped {
                inner,
                left: limit,
                over: false,
                failure: None,
            },
            path: path.to_path_buf(),
            input,
            limit,
            gzip,
        })
    }

    /// The name messages give the input (`standard input` for `-`).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The text as it arrives: it fails once past the cap (or when the
    /// gzip or the read below fails); [`Stream::finish`] says which.
    pub(crate) fn reader(&mut self) -> impl BufRead + Send + '_ {
        std::io::BufReader::with_capacity(BUFFER, &mut self.capped)
    }

    /// Why the stream's reader stopped before the end, when it did: past
    /// the cap, or the gzip or the read below it failed. Reading the same
    /// input again would stop the same way.
    pub(crate) fn stopped(mut self) -> Option<SourceError> {
        self.stop_cause()
    }

    fn stop_cause(&mut self) -> Option<SourceError> {
        if self.capped.over {
            return Some(SourceError::TooLarge {
                path: self.path.clone(),
                input: self.input,
                limit: self.limit,
                inflated: self.gzip,
            });
        }
        let cause = self.capped.failure.take()?;
        Some(if self.gzip {
            SourceError::Gzip {
                path: self.path.clone(),
                cause,
            }
        } else {
            SourceError::Io {
                path: self.path.clone(),
                input: self.input,
                cause,
            }
        })
    }

    /// What the stream's reader stopped on decides the error: the cap,
    /// then the gzip or the read below it, and only then `result` (what
    /// the consumer made of the text).
    pub(crate) fn finish<T>(mut self, result: Result<T, SourceError>) -> Result<T, SourceError> {
        // A failure below the cap that the consumer read past (it had
        // what it needed) is not an error.
        if (self.capped.over || result.is_err())
            && let Some(stop) = self.stop_cause()
        {
            return Err(stop);
        }
        result
    }
}

/// Reads a whole input into memory as text, under its cap: how an alert is
/// read, from a file, standard input, a FIFO or gzip alike.
pub fn read_text(path: &Path, input: Input) -> Result<String, SourceError> {
    read_text_limited(path, input, input.limit())
}

/// [`read_text`] with another cap (tests use a small one).
pub(crate) fn read_text_limited(
    path: &Path,
    input: Input,
    limit: u64,
) -> Result<String, SourceError> {
    let (bytes, label) = match open(path, input, limit)? {
        Opened::Whole(bytes) => (bytes, path.to_path_buf()),
        Opened::Stream(mut stream) => {
            let mut bytes = Vec::new();
            let read = stream.reader().read_to_end(&mut bytes);
            let label = stream.path().to_path_buf();
            let read = read.map_err(|cause| SourceError::Io {
                path: label.clone(),
                input,
                cause,
            });
            stream.finish(read)?;
            (bytes, label)
        }
    };
    String::from_utf8(bytes).map_err(|_| SourceError::NotText { path: label })
}

/// A reader that gives at most `left` bytes, then fails, remembering why it
/// stopped: over the limit, or the first error of the reader below it.
pub(crate) struct Capped<R> {
    inner: R,
    left: u64,
    over: bool,
    failure: Option<std::io::Error>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.over {
            return Err(std::io::Error::other("over the size limit"));
        }
        // One byte past the cap tells an oversized input from one that fits.
        let want = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let n = match self.inner.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(e),
            Err(e) => {
                let copy = std::io::Error::new(e.kind(), e.to_string());
                self.failure.get_or_insert(e);
                return Err(copy);
            }
        };
        if n as u64 > self.left {
            self.over = true;
            return Err(std::io::Error::other("over the size limit"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// A size in the largest binary unit it is a whole number of (`1 GiB`,
/// `16 MiB`), else in bytes.
pub(crate) fn size_words(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_said_in_the_unit_they_are_whole_in() {
        assert_eq!(size_words(MAX_SNAPSHOT_BYTES), "1 GiB");
        assert_eq!(size_words(MAX_ALERT_BYTES), "16 MiB");
        assert_eq!(size_words(4096), "4 KiB");
        assert_eq!(size_words(1000), "1000 bytes");
    }

    #[test]
    fn a_device_is_read_as_a_stream_and_stopped_at_the_cap() {
        let err = read_text_limited(Path::new("/dev/zero"), Input::Alert, 1 << 20).unwrap_err();
        assert!(
            matches!(
                err,
                SourceError::TooLarge {
                    input: Input::Alert,
                    limit: 1048576,
                    inflated: false,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "/dev/zero is larger than the alert limit of 1 MiB (1048576 bytes); an alert payload is small: pass the Alertmanager webhook body, a list of alerts or one alert's labels, not a log or a dump"
        );
    }

    #[test]
    fn a_gzip_file_is_capped_once_decompressed() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("payload.json.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b' '; 2 << 20]).unwrap();
        std::fs::write(&path, e.finish().unwrap()).unwrap();
        let err = read_text_limited(&path, Input::Alert, 1 << 20).unwrap_err();
        assert!(
            matches!(err, SourceError::TooLarge { inflated: true, .. }),
            "{err}"
        );
        // Under the cap it is read, decompressed.
        let text = read_text_limited(&path, Input::Alert, 4 << 20).unwrap();
        assert_eq!(text.len(), 2 << 20);
    }

    #[test]
    fn a_regular_file_over_the_cap_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("payload.json");
        std::fs::write(&path, vec![b' '; 2048]).unwrap();
        let err = read_text_limited(&path, Input::Alert, 1024).unwrap_err();
        assert!(
            matches!(err, SourceError::TooLarge { limit: 1024, .. }),
            "{err}"
        );
        assert_eq!(
            read_text_limited(&path, Input::Alert, 2048).unwrap().len(),
            2048
        );
    }

    #[test]
    fn a_missing_alert_names_its_own_flag() {
        let err = read_text(Path::new("no/such/payload.json"), Input::Alert).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no/such/payload.json does not exist; check the path (`--alert -` reads standard input)"
        );
    }
}
