//! Opening and reading a snapshot file: standard input, gzip, the caps on
//! size, and handing the bytes or the stream to the decoder.

use std::io::BufRead;
use std::path::Path;

use super::decode::{Document, ReadingScope};
use super::error::{SourceError, json_error, yaml_error};
use super::input::{self, Compression, Input, MAX_SNAPSHOT_BYTES, Opened, Stream};
use super::yaml;
use crate::objects::Keep;
use mdiag_core::model::Snapshot;

/// Reads any supported file into a [`Snapshot`], each object trimmed to
/// what the analysis reads as it arrives ([`Keep::Analysed`]); `-` reads
/// standard input (gzip is recognised by its first bytes there, as there
/// is no name).
pub fn read_snapshot_file(path: &Path) -> Result<Snapshot, SourceError> {
    read_snapshot_file_kept(path, Keep::Analysed)
}

/// [`read_snapshot_file`], keeping what `keep` says.
///
/// A big YAML List in a regular file, gzip or not, is cut into pieces as
/// it is read and parsed on every core, never held whole (`yaml::pieces`).
/// Any other plain regular file is read into memory (parsing from memory
/// is several times faster than from a reader) and parsed one list item
/// at a time, so the whole document is never built as a tree. A
/// compressed file, standard input, a FIFO and a device are parsed as they
/// stream, and the bytes they give (inflated) are counted: past
/// [`MAX_SNAPSHOT_BYTES`] the read stops, having held no more than the
/// parser's buffer of them (`file::input`, which alerts are read with too).
pub fn read_snapshot_file_kept(path: &Path, keep: Keep) -> Result<Snapshot, SourceError> {
    read_limited(path, keep, MAX_SNAPSHOT_BYTES)
}

/// Reads a file the caller has already opened (and checked), from its
/// start; `path` names it in messages and the origin, and its `.gz`
/// suffix says it is compressed. The path is not opened again, so what was
/// checked is what is read (`mdiag mcp` confines the files it reads this
/// way: a path swapped after the check cannot redirect the read).
pub fn read_snapshot_opened(
    file: std::fs::File,
    path: &Path,
    keep: Keep,
) -> Result<Snapshot, SourceError> {
    read_file(file, path, keep, MAX_SNAPSHOT_BYTES)
}

/// [`read_snapshot_file_kept`] with another limit (tests use a small one).
pub(crate) fn read_limited(path: &Path, keep: Keep, limit: u64) -> Result<Snapshot, SourceError> {
    match input::open_named(path, Input::Snapshot)? {
        Some(file) => read_file(file, path, keep, limit),
        None => match input::open_stdin(Input::Snapshot, limit)? {
            Opened::Whole(bytes) => parse_snapshot_bytes(&bytes, path, keep),
            Opened::Stream(stream) => read_stream(stream, keep),
        },
    }
}

/// Reads an opened file from its start: in pieces when it is a big YAML
/// List, else whole or as a stream.
fn read_file(
    mut file: std::fs::File,
    path: &Path,
    keep: Keep,
    limit: u64,
) -> Result<Snapshot, SourceError> {
    use std::io::Seek;
    let rewind = |file: &mut std::fs::File| {
        file.rewind().map_err(|cause| SourceError::Io {
            path: path.to_path_buf(),
            input: Input::Snapshot,
            cause,
        })
    };
    // Only a regular file can be read again from its start (a FIFO or a
    // device streams once).
    if let Some(size) = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
    {
        rewind(&mut file)?;
        if let Some(read) = read_file_in_pieces(&file, size, path, keep, limit) {
            return read;
        }
        // Not a List in pieces: read again from the start by one parser.
        rewind(&mut file)?;
    }
    match input::open_file(file, path, Input::Snapshot, limit)? {
        Opened::Whole(bytes) => parse_bytes(&bytes, path, keep, Pieces::Tried),
        Opened::Stream(stream) => read_stream(stream, keep),
    }
}

/// A regular YAML file (of `size` bytes) of [`yaml::PIECES_FROM_BYTES`] or
/// more, or a gzip file, read in pieces as it streams; `None` when it is
/// not a List that can be (JSON, several documents, pieces that do not
/// join, not valid YAML...): nothing was kept, and the caller reads it
/// again. A read stopped by the cap or a failed gzip is that error: a
/// second read would stop the same way.
fn read_file_in_pieces(
    file: &std::fs::File,
    size: u64,
    path: &Path,
    keep: Keep,
    limit: u64,
) -> Option<Result<Snapshot, SourceError>> {
    let gzip = path.extension().is_some_and(|e| e == "gz");
    if !gzip && !(yaml::PIECES_FROM_BYTES as u64..=limit).contains(&size) {
        return None;
    }
    let raw = std::io::BufReader::with_capacity(input::BUFFER, file);
    let compression = if gzip {
        Compression::Gzip
    } else {
        Compression::None
    };
    let mut stream = Stream::new(Box::new(raw), compression, path, Input::Snapshot, limit).ok()?;
    let mut reader = stream.reader();
    let first = first_byte(&mut reader, path);
    let read = match first {
        Ok(b'{' | b'[') => return None,
        Ok(_) => {
            let scope = ReadingScope::start(path, keep, true);
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            yaml::read_stream_in_pieces::<Document>(&mut reader, limit).then_some(scope)
        }
        Err(_) => None,
    };
    drop(reader);
    match read {
        Some(scope) => Some(stream.finish(scope.finish(Ok(())))),
        None => stream.stopped().map(Err),
    }
}

/// Parses a stream as it arrives; the stream says whether it stopped at
/// its cap.
fn read_stream(mut stream: Stream<'_>, keep: Keep) -> Result<Snapshot, SourceError> {
    let path = stream.path().to_path_buf();
    let result = parse_stream(&mut stream.reader(), &path, keep);
    stream.finish(result)
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
    parse_bytes(bytes, path, keep, Pieces::Try)
}

/// Whether a big List is worth cutting into pieces.
#[derive(PartialEq)]
enum Pieces {
    Try,
    /// They were tried as the file streamed, and did not join.
    Tried,
}

fn parse_bytes(
    bytes: &[u8],
    path: &Path,
    keep: Keep,
    pieces: Pieces,
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
    let json = trimmed.starts_with('{') || trimmed.starts_with('[');
    if !json && pieces == Pieces::Try {
        // A big List on every core; what cannot be read so is read again
        // by one parser, from a fresh start.
        let scope = ReadingScope::start(path, keep, true);
        if yaml::read_big_str::<Document>(trimmed) {
            return scope.finish(Ok(()));
        }
    }
    let scope = ReadingScope::start(path, keep, !json);
    let parsed = if json {
        serde_json::Deserializer::from_str(trimmed)
            .into_iter::<Document>()
            .try_for_each(|d| d.map(drop).map_err(|e| json_error(&e, path)))
    } else {
        yaml::read_str::<Document>(trimmed).map_err(|e| yaml_error(&e, path))
    };
    scope.finish(parsed)
}

/// Parses a stream: the format is told from its first byte that is not a
/// byte-order mark or white space.
fn parse_stream(text: &mut impl BufRead, path: &Path, keep: Keep) -> Result<Snapshot, SourceError> {
    let first = first_byte(text, path)?;
    let json = first == b'{' || first == b'[';
    let scope = ReadingScope::start(path, keep, !json);
    let parsed = if json {
        serde_json::Deserializer::from_reader(text)
            .into_iter::<Document>()
            .try_for_each(|d| d.map(drop).map_err(|e| json_error(&e, path)))
    } else {
        yaml::read_stream::<Document>(text, MAX_SNAPSHOT_BYTES as usize)
            .map_err(|e| yaml_error(&e, path))
    };
    scope.finish(parsed)
}

/// The first byte of a stream that is not a byte-order mark or white
/// space (what a whole text is trimmed of), the stream left at it; a
/// binary head is refused as such rather than as bad syntax.
fn first_byte(text: &mut impl BufRead, path: &Path) -> Result<u8, SourceError> {
    loop {
        let buf = text.fill_buf().map_err(|cause| SourceError::Io {
            path: path.to_path_buf(),
            input: Input::Snapshot,
            cause,
        })?;
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
        return Ok(byte);
    }
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
    use super::super::input::BUFFER;
    use super::*;
    use std::io::Read;

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
        let stream = Stream::new(
            Box::new(reader),
            compression,
            Path::new("endless"),
            Input::Snapshot,
            SMALL_LIMIT,
        )
        .unwrap();
        read_stream(stream, Keep::Analysed).unwrap_err()
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
            "endless is larger than the snapshot limit of 1 MiB (1048576 bytes); capture a smaller target or namespace"
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
                "larger than the snapshot limit of 1 MiB (1048576 bytes) once decompressed (the read stopped there); capture a smaller target or namespace"
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

    /// A List big enough to be read in pieces gives the snapshot one
    /// parser gives, warnings (with their lines) and all.
    #[test]
    fn a_big_list_read_in_pieces_is_the_list_read_by_one_parser() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cases");
        let text = std::fs::read_to_string(root.join("argo-aborted-serves-nothing.yaml")).unwrap();
        let start = text.find("\nitems:\n").unwrap() + "\nitems:\n".len();
        let end = text.find("\nkind: List").unwrap() + 1;
        let (head, items, tail) = (&text[..start], &text[start..end], &text[end..]);
        // Each copy in a namespace of its own, one key named twice.
        let mut big = head.to_string();
        let mut copy = 0;
        while big.len() < yaml::PIECES_FROM_BYTES + (1 << 20) {
            big.push_str(&items.replace("namespace: serving", &format!("namespace: ns-{copy}")));
            copy += 1;
        }
        big.push_str("- apiVersion: v1\n  kind: Service\n  kind: Service\n  metadata: {name: twice, namespace: ns-0}\n");
        big.push_str(tail);
        let path = Path::new("big.yaml");
        let in_pieces = parse_snapshot_text(&big, path).unwrap();
        let scope = ReadingScope::start(path, Keep::Analysed, true);
        let one = scope
            .finish(yaml::read_str::<Document>(&big).map_err(|e| yaml_error(&e, path)))
            .unwrap();
        assert!(
            in_pieces.objects.pods.len() > 100,
            "{}",
            in_pieces.objects.pods.len()
        );
        let scope = ReadingScope::start(path, Keep::Analysed, true);
        assert!(yaml::read_big_str::<Document>(&big), "not read in pieces");
        drop(scope);
        assert_eq!(in_pieces.warnings.len(), 1);
        assert_eq!(format!("{in_pieces:?}"), format!("{one:?}"));

        // From a file, plain and gzip, cut as it streams: the same.
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("big.yaml");
        std::fs::write(&plain, &big).unwrap();
        let gzip = dir.path().join("big.yaml.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, big.as_bytes()).unwrap();
        std::fs::write(&gzip, e.finish().unwrap()).unwrap();
        for path in [&plain, &gzip] {
            let file = std::fs::File::open(path).unwrap();
            let size = file.metadata().unwrap().len();
            let streamed =
                read_file_in_pieces(&file, size, path, Keep::Analysed, MAX_SNAPSHOT_BYTES)
                    .expect("read in pieces")
                    .unwrap();
            let read = read_snapshot_file(path).unwrap();
            for snapshot in [&streamed, &read] {
                assert_eq!(
                    format!("{:?}", snapshot.objects),
                    format!("{:?}", one.objects)
                );
                assert_eq!(snapshot.warnings.len(), 1);
                assert_eq!(snapshot.origin.location, path.display().to_string());
            }
        }

        // Pieces that do not join (an alias to an item before) leave
        // nothing behind: the file is read again by one parser.
        let at = big.len() - tail.len();
        let aliased = format!("{}- *first\n{tail}", &big[..at]).replacen(
            "\n- apiVersion: v1\n",
            "\n- &first\n  apiVersion: v1\n",
            1,
        );
        let scope = ReadingScope::start(&plain, Keep::Analysed, true);
        assert!(!yaml::read_big_str::<Document>(&aliased));
        drop(scope);
        let path = dir.path().join("aliased.yaml");
        std::fs::write(&path, &aliased).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let size = aliased.len() as u64;
        assert!(
            read_file_in_pieces(&file, size, &path, Keep::Analysed, MAX_SNAPSHOT_BYTES).is_none()
        );
        let read = read_snapshot_file(&path).unwrap();
        assert_eq!(read.objects.len(), one.objects.len() + 1);
    }

    /// A gzip file cut off mid-stream is that error, not a second read.
    #[test]
    fn a_broken_gzip_read_in_pieces_says_so() {
        let items: String = (0..2000)
            .map(|i| format!("- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}}}\n"))
            .collect();
        let text = format!("apiVersion: v1\nkind: List\nitems:\n{items}");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, text.as_bytes()).unwrap();
        let gz = e.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.yaml.gz");
        std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let size = file.metadata().unwrap().len();
        let err = read_file_in_pieces(&file, size, &path, Keep::Analysed, MAX_SNAPSHOT_BYTES)
            .expect("stopped by the gzip")
            .unwrap_err();
        assert!(matches!(err, SourceError::Gzip { .. }), "{err}");
        let whole = read_snapshot_file(&path).unwrap_err();
        assert_eq!(err.to_string(), whole.to_string());
    }

    /// A gzip file that inflates past the cap stops there, as a List read
    /// in pieces and as a head of nothing but blank lines alike, once: the
    /// error is the cap's, with no second read after it.
    #[test]
    fn a_gzip_file_past_the_cap_stops_at_it_in_pieces_too() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let list = [
            &b"apiVersion: v1\nkind: List\nitems:\n"[..],
            &b"- ~\n".repeat(1 << 19),
        ]
        .concat();
        let blank = vec![b'\n'; 4 << 20];
        for (name, text) in [("list.yaml.gz", list), ("blank.yaml.gz", blank)] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&text).unwrap();
            let path = dir.path().join(name);
            std::fs::write(&path, e.finish().unwrap()).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let err = read_file_in_pieces(&file, 0, &path, Keep::Analysed, SMALL_LIMIT)
                .expect("stopped by the cap")
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    SourceError::TooLarge {
                        inflated: true,
                        limit: SMALL_LIMIT,
                        ..
                    }
                ),
                "{name}: {err}"
            );
            let read = read_limited(&path, Keep::Analysed, SMALL_LIMIT).unwrap_err();
            assert_eq!(read.to_string(), err.to_string(), "{name}");
        }
    }

    /// A merge key gives the keys a mapping does not give itself, as
    /// kubectl reads it.
    #[test]
    fn a_merge_key_fills_in_what_the_mapping_leaves_out() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- &pod {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ns}, spec: {nodeName: n1}}\n- <<: *pod\n  metadata: {name: b, namespace: ns}\n- <<: [{spec: {nodeName: n3}}, *pod]\n  metadata: {name: c, namespace: ns}\n";
        let snapshot = parse_snapshot_text(text, Path::new("merge.yaml")).unwrap();
        let pods: Vec<(String, String)> = snapshot
            .objects
            .pods
            .iter()
            .map(|p| {
                let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
                (p.metadata.name.clone().unwrap(), node.unwrap_or_default())
            })
            .collect();
        assert_eq!(
            pods,
            [("a", "n1"), ("b", "n1"), ("c", "n3")].map(|(n, s)| (n.to_string(), s.to_string()))
        );
        assert!(snapshot.warnings.is_empty(), "{:?}", snapshot.warnings);
    }

    /// A hand-written manifest's `defaultMode: 0644` is the octal kubectl
    /// reads (420), not a float the Pod cannot hold.
    #[test]
    fn a_leading_zero_is_octal_as_kubectl_reads_it() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: []\n  volumes:\n  - name: v\n    configMap: {name: c, defaultMode: 0644}\n";
        // Kept whole: a trimmed read drops the volumes no rule reads.
        let snapshot =
            parse_snapshot_bytes(text.as_bytes(), Path::new("mode-0644.yaml"), Keep::Whole)
                .unwrap();
        let pod = &snapshot.objects.pods[0];
        let volume = &pod.spec.as_ref().unwrap().volumes.as_ref().unwrap()[0];
        assert_eq!(volume.config_map.as_ref().unwrap().default_mode, Some(420));
    }
}
