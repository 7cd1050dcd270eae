//! Opening and reading a snapshot file: standard input, gzip, the caps on
//! size, and handing the bytes or the stream to the decoder.

use std::io::{BufRead, Read};
use std::path::Path;

use super::decode::{Document, ReadingScope};
use super::error::{SourceError, json_error, yaml_error};
use crate::objects::Keep;
use mdiag_core::model::Snapshot;

/// The largest snapshot we read (after decompression). Far above any real
/// namespace, low enough that a hostile file cannot exhaust memory.
pub const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

/// The path that means standard input (`--snapshot -`).
pub(crate) const STDIN_PATH: &str = "-";

/// What messages call standard input.
const STDIN_LABEL: &str = mdiag_core::model::STDIN_LOCATION;

/// Reads any supported file into a [`Snapshot`], each object trimmed to
/// what the analysis reads as it arrives ([`Keep::Analysed`]); `-` reads
/// standard input (gzip is recognised by its first bytes there, as there
/// is no name).
pub fn read_snapshot_file(path: &Path) -> Result<Snapshot, SourceError> {
    read_snapshot_file_kept(path, Keep::Analysed)
}

/// [`read_snapshot_file`], keeping what `keep` says.
///
/// A plain file is read into memory (parsing from memory is several times
/// faster than from a reader) and parsed one list item at a time, so the
/// whole document is never built as a tree. A compressed file and standard
/// input are parsed as they stream, and the bytes they inflate to are
/// counted: past [`MAX_SNAPSHOT_BYTES`] the read stops, having held no more
/// than the parser's buffer of them.
pub fn read_snapshot_file_kept(path: &Path, keep: Keep) -> Result<Snapshot, SourceError> {
    read_limited(path, keep, MAX_SNAPSHOT_BYTES)
}

/// [`read_snapshot_file_kept`] with another limit (tests use a small one).
pub(crate) fn read_limited(path: &Path, keep: Keep, limit: u64) -> Result<Snapshot, SourceError> {
    if path == Path::new(STDIN_PATH) {
        let label = Path::new(STDIN_LABEL);
        let stdin = std::io::BufReader::with_capacity(BUFFER, std::io::stdin().lock());
        return read_stream(stdin, Compression::Sniff, label, keep, limit);
    }
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    read_open(file, path, keep, limit)
}

/// Reads a file the caller has already opened (and checked), from its
/// start; `path` names it in messages and the origin, and its `.gz`
/// suffix says it is compressed. The path is not opened again, so what was
/// checked is what is read (`mdiag mcp` confines the files it reads this
/// way: a path swapped after the check cannot redirect the read).
pub fn read_snapshot_opened(
    mut file: std::fs::File,
    path: &Path,
    keep: Keep,
) -> Result<Snapshot, SourceError> {
    use std::io::Seek;
    file.rewind().map_err(|cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    read_open(file, path, keep, MAX_SNAPSHOT_BYTES)
}

/// An open file (not standard input) as a [`Snapshot`], within `limit`.
fn read_open(
    mut file: std::fs::File,
    path: &Path,
    keep: Keep,
    limit: u64,
) -> Result<Snapshot, SourceError> {
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    if path.extension().is_some_and(|e| e == "gz") {
        let file = std::io::BufReader::with_capacity(BUFFER, file);
        return read_stream(file, Compression::Gzip, path, keep, limit);
    }
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::ErrorKind::IsADirectory.into()));
    }
    // A size the file system reports is checked before reading; a special
    // file (a pipe, /dev/stdin) reports none, so the read is capped too.
    if meta.len() > limit {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            limit,
            inflated: false,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            limit,
            inflated: false,
        });
    }
    parse_snapshot_bytes(&bytes, path, keep)
}

/// How large a buffer the stream readers use.
const BUFFER: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Compression {
    /// The name says gzip.
    Gzip,
    /// Gzip when the first bytes are its magic number (standard input).
    Sniff,
}

/// Parses a stream as it arrives: inflated when it is gzip, counted, and
/// stopped at `limit` bytes of text.
fn read_stream<R: BufRead>(
    mut raw: R,
    compression: Compression,
    path: &Path,
    keep: Keep,
    limit: u64,
) -> Result<Snapshot, SourceError> {
    let gzip = match compression {
        Compression::Gzip => true,
        Compression::Sniff => {
            let head = raw.fill_buf().map_err(|cause| SourceError::Io {
                path: path.to_path_buf(),
                cause,
            })?;
            head.starts_with(&[0x1f, 0x8b])
        }
    };
    let inner: Box<dyn Read + '_> = if gzip {
        Box::new(flate2::bufread::MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    let mut capped = Capped {
        inner,
        left: limit,
        over: false,
        failure: None,
    };
    let result = {
        let mut text = std::io::BufReader::with_capacity(BUFFER, &mut capped);
        parse_stream(&mut text, path, keep)
    };
    // What stopped the parser decides the message: the limit, the gzip or
    // the read below it, and only then the text.
    if capped.over {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            limit,
            inflated: gzip,
        });
    }
    if let Some(cause) = capped.failure.take()
        && result.is_err()
    {
        return Err(if gzip {
            SourceError::Gzip {
                path: path.to_path_buf(),
                cause,
            }
        } else {
            SourceError::Io {
                path: path.to_path_buf(),
                cause,
            }
        });
    }
    result
}

/// A reader that gives at most `left` bytes, then fails, remembering why it
/// stopped: over the limit, or the first error of the reader below it.
struct Capped<R> {
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

/// The YAML parser's limits, scaled to the input: a kubectl dump of a big
/// cluster has millions of nodes, which the parser's defaults (sized for
/// configuration files) refuse. Node, event and scalar budgets grow with the
/// input (every node takes at least a byte), so a small file still cannot
/// expand into a large document; the alias limits that stop alias bombs stay.
fn yaml_options(input_bytes: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    // The input is capped by the reader (`Capped`) or by its size.
    budget.max_reader_input_bytes = None;
    budget.max_events = budget.max_events.max(input_bytes);
    budget.max_nodes = budget.max_nodes.max(input_bytes);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(input_bytes);
    budget.max_documents = budget.max_documents.max(input_bytes / 64);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Parses file contents; `path` is used for messages and the origin.
pub fn parse_snapshot_text(text: &str, path: &Path) -> Result<Snapshot, SourceError> {
    parse_snapshot_bytes(text.as_bytes(), path, Keep::Analysed)
}

/// Parses a file read whole: JSON from the bytes, YAML from the text.
pub(crate) fn parse_snapshot_bytes(
    bytes: &[u8],
    path: &Path,
    keep: Keep,
) -> Result<Snapshot, SourceError> {
    let text = std::str::from_utf8(bytes).map_err(|_| SourceError::NotText {
        path: path.to_path_buf(),
    })?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let scope = ReadingScope::start(path, keep);
    let parsed = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::Deserializer::from_str(trimmed)
            .into_iter::<Document>()
            .try_for_each(|d| d.map(drop).map_err(|e| json_error(&e, path)))
    } else {
        serde_saphyr::from_multiple_with_options::<Document>(trimmed, yaml_options(trimmed.len()))
            .map(drop)
            .map_err(|e| yaml_error(&e, path))
    };
    scope.finish(parsed)
}

/// Parses a stream: the format is told from its first byte that is not a
/// byte-order mark or white space.
fn parse_stream(text: &mut impl BufRead, path: &Path, keep: Keep) -> Result<Snapshot, SourceError> {
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    // Skip what the old whole-text reader trimmed, and look at the head:
    // a binary file is refused as such rather than as bad syntax.
    let first = loop {
        let buf = text.fill_buf().map_err(io)?;
        let Some(&byte) = buf.first() else {
            return Err(SourceError::Empty {
                path: path.to_path_buf(),
            });
        };
        if buf.starts_with("\u{feff}".as_bytes()) {
            text.consume(3);
            continue;
        }
        let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if blank > 0 {
            text.consume(blank);
            continue;
        }
        if !looks_like_text(buf) {
            return Err(SourceError::NotText {
                path: path.to_path_buf(),
            });
        }
        break byte;
    };
    let scope = ReadingScope::start(path, keep);
    let parsed = if first == b'{' || first == b'[' {
        serde_json::Deserializer::from_reader(text)
            .into_iter::<Document>()
            .try_for_each(|d| d.map(drop).map_err(|e| json_error(&e, path)))
    } else {
        serde_saphyr::read_with_options::<_, Document>(
            text,
            yaml_options(MAX_SNAPSHOT_BYTES as usize),
        )
        .try_for_each(|d| d.map(drop).map_err(|e| yaml_error(&e, path)))
    };
    scope.finish(parsed)
}

/// Valid UTF-8 with no NUL, but for a character the buffer cut in two.
fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `head` once, then `repeat` for ever, counting what was given.
    struct Endless {
        head: Vec<u8>,
        repeat: Vec<u8>,
        at: usize,
        given: u64,
    }

    impl Endless {
        fn new(head: &[u8], repeat: &[u8]) -> Self {
            Endless {
                head: head.to_vec(),
                repeat: repeat.to_vec(),
                at: 0,
                given: 0,
            }
        }
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let mut n = 0;
            while n < buf.len() {
                let source = if self.at < self.head.len() {
                    &self.head[self.at..]
                } else {
                    let r = (self.at - self.head.len()) % self.repeat.len();
                    &self.repeat[r..]
                };
                let take = source.len().min(buf.len() - n);
                buf[n..n + take].copy_from_slice(&source[..take]);
                n += take;
                self.at += take;
            }
            self.given += n as u64;
            Ok(n)
        }
    }

    const SMALL_LIMIT: u64 = 1 << 20;

    fn read_endless(endless: &mut Endless, compression: Compression) -> SourceError {
        let reader = std::io::BufReader::new(endless);
        read_stream(
            reader,
            compression,
            Path::new("endless"),
            Keep::Analysed,
            SMALL_LIMIT,
        )
        .unwrap_err()
    }

    #[test]
    fn an_endless_yaml_stream_stops_at_the_limit() {
        let mut endless = Endless::new(b"apiVersion: v1\nkind: List\nitems:\n", b"- ~\n");
        let err = read_endless(&mut endless, Compression::Sniff);
        assert!(
            matches!(
                err,
                SourceError::TooLarge {
                    inflated: false,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "endless is larger than 1048576 bytes; capture a smaller target or namespace"
        );
        // Read no further than a buffer past the limit.
        assert!(
            endless.given <= SMALL_LIMIT + 2 * BUFFER as u64,
            "{}",
            endless.given
        );
    }

    #[test]
    fn an_endless_json_stream_stops_at_the_limit() {
        let mut endless = Endless::new(b"[", b" ");
        let err = read_endless(&mut endless, Compression::Sniff);
        assert!(matches!(err, SourceError::TooLarge { .. }), "{err}");
        assert!(
            endless.given <= SMALL_LIMIT + 2 * BUFFER as u64,
            "{}",
            endless.given
        );
    }

    #[test]
    fn a_gzip_bomb_is_stopped_at_the_limit_without_inflating_the_rest() {
        use std::io::Write;
        let member = |text: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(text).unwrap();
            e.finish().unwrap()
        };
        // 256 KiB of list items per gzip member, members for ever.
        let head = member(b"apiVersion: v1\nkind: List\nitems:\n");
        let repeat = member(&b"- ~\n".repeat(64 * 1024));
        let mut endless = Endless::new(&head, &repeat);
        let err = read_endless(&mut endless, Compression::Gzip);
        assert!(
            matches!(err, SourceError::TooLarge { inflated: true, .. }),
            "{err}"
        );
        assert!(
            err.to_string().ends_with(
                "larger than 1048576 bytes once decompressed (the read stopped there); capture a smaller target or namespace"
            ),
            "{err}"
        );
        // The compressed bytes read stay a small multiple of one member.
        assert!(endless.given < 64 * 1024, "{}", endless.given);
    }

    #[test]
    fn a_binary_stream_is_refused_as_binary_at_its_first_bytes() {
        let mut endless = Endless::new(b"", b"\0");
        let err = read_endless(&mut endless, Compression::Sniff);
        assert!(matches!(err, SourceError::NotText { .. }), "{err}");
        assert!(endless.given <= 2 * BUFFER as u64);
    }
}
