//! Reading snapshots from files: mdiag's own format, `kubectl get -o
//! yaml|json` output (a `List` or a single object) and multi-document YAML,
//! gzip-compressed when the name ends in `.gz`.

use std::cell::RefCell;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::format::{FORMAT_ID, FORMAT_VERSION, SnapshotFile};
pub use super::objects::Keep;
use super::objects::{ObjectError, sort_object_kept};
use mdiag_core::model::{Gap, Origin, OriginKind, Snapshot};

/// The largest snapshot we read (after decompression). Far above any real
/// namespace, low enough that a hostile file cannot exhaust memory.
pub const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The cause is part of the one sentence, not a source below it, so
    /// that the printed chain does not say it twice.
    #[error("{}", io_message(.path, .cause))]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{} is not valid gzip data ({cause}); drop the .gz suffix if the file is not compressed",
        .path.display()
    )]
    Gzip {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{} is larger than {limit} bytes{}; capture a smaller target or namespace",
        .path.display(),
        if *.inflated { " once decompressed (the read stopped there)" } else { "" }
    )]
    TooLarge {
        path: PathBuf,
        limit: u64,
        /// Counted after decompression: the stream was stopped at the limit.
        inflated: bool,
    },
    #[error("{path} is not valid UTF-8 text; is it a binary file?")]
    NotText { path: PathBuf },
    #[error("{path} is empty")]
    Empty { path: PathBuf },
    #[error("{path} is not valid {syntax}: {detail}")]
    Syntax {
        path: PathBuf,
        syntax: &'static str,
        detail: String,
    },
    #[error(
        "{path}: document {document} is not a Kubernetes object or list (it has no apiVersion and kind)"
    )]
    NotKubernetes { path: PathBuf, document: usize },
    #[error(
        "{path}: document {document} holds an item that is {found}, not an object; each item of a list must be a Kubernetes object"
    )]
    NotAnObject {
        path: PathBuf,
        document: usize,
        found: &'static str,
    },
    #[error(
        "{path} is an mdiag snapshot of format version {found}; this mdiag reads up to version {supported}: upgrade mdiag"
    )]
    FutureVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path} is not a valid mdiag snapshot: {detail}")]
    BadSnapshot { path: PathBuf, detail: String },
    #[error("{}: {cause}", .path.display())]
    BadObject { path: PathBuf, cause: ObjectError },
}

/// The path that means standard input (`--snapshot -`).
pub const STDIN_PATH: &str = "-";

/// What messages call standard input.
const STDIN_LABEL: &str = "standard input";

/// One sentence for a file that cannot be read: what is wrong and what to do.
fn io_message(path: &Path, cause: &std::io::Error) -> String {
    let path = path.display();
    match cause.kind() {
        std::io::ErrorKind::NotFound => {
            format!("{path} does not exist; check the path (`--snapshot -` reads standard input)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("{path} may not be read (permission denied); check its permissions")
        }
        std::io::ErrorKind::IsADirectory => {
            format!("{path} is a directory; name a snapshot file in it")
        }
        _ => format!("cannot read {path}: {cause}"),
    }
}

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
pub fn read_limited(path: &Path, keep: Keep, limit: u64) -> Result<Snapshot, SourceError> {
    if path == Path::new(STDIN_PATH) {
        let label = Path::new(STDIN_LABEL);
        let stdin = std::io::BufReader::with_capacity(BUFFER, std::io::stdin().lock());
        return read_stream(stdin, Compression::Sniff, label, keep, limit);
    }
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
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
fn parse_snapshot_bytes(bytes: &[u8], path: &Path, keep: Keep) -> Result<Snapshot, SourceError> {
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

fn json_error(e: &serde_json::Error, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "JSON",
        detail: e.to_string(),
    }
}

fn yaml_error(e: &serde_saphyr::Error, path: &Path) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        syntax: "YAML",
        detail: first_line(&e.to_string()),
    }
}

/// The read in progress on this thread: the parsers hand each document to
/// [`Document`]'s `Deserialize`, which files its objects here one at a time.
struct Reading {
    snapshot: Snapshot,
    listed: Listed,
    path: PathBuf,
    keep: Keep,
    /// The top-level document being read, from 1.
    document: usize,
    seen_document: bool,
    /// Why the read stopped, when it was not the syntax: the parser only
    /// carries a message back.
    error: Option<SourceError>,
}

thread_local! {
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

fn with_reading<T>(f: impl FnOnce(&mut Reading) -> T) -> T {
    READING.with(|cell| {
        let mut reading = cell.borrow_mut();
        // `Document` is private and only parsed inside a `ReadingScope`.
        f(reading.as_mut().expect("a snapshot read is in progress"))
    })
}

/// Sets up the read in progress, and takes it down however the parse ends.
struct ReadingScope;

impl ReadingScope {
    fn start(path: &Path, keep: Keep) -> Self {
        let reading = Reading {
            snapshot: Snapshot {
                origin: Origin {
                    kind: OriginKind::KubectlDump,
                    location: path.display().to_string(),
                    ..Origin::default()
                },
                ..Snapshot::default()
            },
            listed: Listed::default(),
            path: path.to_path_buf(),
            keep,
            document: 0,
            seen_document: false,
            error: None,
        };
        READING.with(|cell| *cell.borrow_mut() = Some(reading));
        ReadingScope
    }

    /// The snapshot, or why there is none: the error a document stopped
    /// the read with outranks the parser's message about it.
    fn finish(self, parsed: Result<(), SourceError>) -> Result<Snapshot, SourceError> {
        let reading = READING.with(|cell| cell.borrow_mut().take());
        let Some(mut reading) = reading else {
            return parsed.map(|()| Snapshot::default());
        };
        if let Some(error) = reading.error.take() {
            return Err(error);
        }
        parsed?;
        if !reading.seen_document {
            return Err(SourceError::Empty { path: reading.path });
        }
        let mut snapshot = reading.snapshot;
        super::objects::slices_from_endpoints(&mut snapshot.objects);
        if snapshot.origin.kind == OriginKind::KubectlDump {
            let gaps = unlisted_kinds(&snapshot, &reading.listed);
            snapshot.gaps.extend(gaps);
        }
        Ok(snapshot)
    }
}

impl Drop for ReadingScope {
    fn drop(&mut self) {
        READING.with(|cell| cell.borrow_mut().take());
    }
}

/// Stops the parse with `error`, kept for [`ReadingScope::finish`].
fn fail<E: de::Error>(error: SourceError) -> E {
    let message = error.to_string();
    with_reading(|r| {
        r.error.get_or_insert(error);
    });
    E::custom(message)
}

/// Files one object (an item of a list, an object of a snapshot file, a
/// document) in the read in progress.
fn add_object<E: de::Error>(object: Value, list_kind: Option<&str>) -> Result<(), E> {
    let result = with_reading(|r| {
        add_object_to(
            &mut r.snapshot,
            object,
            &r.path,
            list_kind,
            r.document,
            r.keep,
        )
    });
    result.map_err(fail)
}

/// One top-level document; what it holds went into the read in progress.
struct Document;

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        with_reading(|r| r.document += 1);
        deserializer.deserialize_any(DocumentVisitor { top: true })
    }
}

/// A document, or an element of a top-level sequence (read as documents,
/// as the items of a `[...]` of objects are).
struct DocumentVisitor {
    top: bool,
}

impl DocumentVisitor {
    fn not_kubernetes<E: de::Error>(&self) -> Result<Document, E> {
        let (path, document) = with_reading(|r| {
            r.seen_document = true;
            (r.path.clone(), r.document)
        });
        Err(fail(SourceError::NotKubernetes { path, document }))
    }
}

impl<'de> DeserializeSeed<'de> for DocumentVisitor {
    type Value = Document;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Document, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes object, a list of them, or an mdiag snapshot")
    }

    /// A null document is nothing; a null inside a sequence of them is not
    /// an object.
    fn visit_unit<E: de::Error>(self) -> Result<Document, E> {
        if self.top {
            Ok(Document)
        } else {
            self.not_kubernetes()
        }
    }
    fn visit_none<E: de::Error>(self) -> Result<Document, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Document, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Document, E> {
        self.not_kubernetes()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Document, A::Error> {
        with_reading(|r| r.seen_document = true);
        while seq
            .next_element_seed(DocumentVisitor { top: false })?
            .is_some()
        {}
        Ok(Document)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
        with_reading(|r| r.seen_document = true);
        read_map(map)
    }
}

/// A document that is a mapping: a Kubernetes object, a list of them, or an
/// mdiag snapshot file. The items of a list and the objects of a snapshot
/// are filed one at a time as the parser reaches them; every other field
/// is kept until the mapping ends and says what it was.
fn read_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Document, A::Error> {
    let mut head = serde_json::Map::new();
    let mut items = ListItems::default();
    while let Some(key) = map.next_key::<String>()? {
        let is_snapshot = head.get("format").and_then(Value::as_str) == Some(FORMAT_ID);
        let head_kind = head.get("kind").and_then(Value::as_str);
        let list_kind = head_kind.filter(|k| k.ends_with("List"));
        match key.as_str() {
            // `kubectl get -o json|yaml` sorts its keys, so `items` comes
            // before `kind`: an item that names its own kind is filed at
            // once, one that does not (a typed list's) waits for the kind.
            "items" if !is_snapshot && (head_kind.is_none() || list_kind.is_some()) => {
                items.seen = true;
                let list_kind = list_kind.map(str::to_string);
                map.next_value_seed(ItemsSeed {
                    list_kind: list_kind.as_deref(),
                    waiting: &mut items.waiting,
                })?;
            }
            // mdiag writes `format` and `version` first.
            "objects" if is_snapshot && head.contains_key("version") => {
                check_version(&head)?;
                map.next_value_seed(ObjectsSeed)?;
            }
            _ => {
                let value: Value = map.next_value()?;
                head.insert(key, value);
            }
        }
    }
    if head.get("format").and_then(Value::as_str) == Some(FORMAT_ID) {
        check_version(&head)?;
        return add_snapshot_head(head);
    }
    let kind = head
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if items.seen && kind.ends_with("List") {
        let list_kind = kind;
        // `kubectl get` prints a plain `List`; the API's own lists are typed.
        if let Some(item_kind) = list_kind.strip_suffix("List").filter(|k| !k.is_empty()) {
            with_reading(|r| r.listed.0.insert(item_kind.to_string()));
        }
        for item in items.waiting {
            add_object(item, Some(&list_kind))?;
        }
        return Ok(Document);
    }
    if items.seen {
        // Not a list after all: the items that named a kind were filed
        // already; the others stay part of the object, as they were.
        head.insert("items".into(), Value::Array(items.waiting));
    }
    let has_api_version = head.get("apiVersion").and_then(Value::as_str).is_some();
    if kind.is_empty() || !has_api_version {
        return DocumentVisitor { top: false }.not_kubernetes();
    }
    add_object(Value::Object(head), None)?;
    Ok(Document)
}

#[derive(Default)]
struct ListItems {
    seen: bool,
    /// Items that name no kind, waiting for the list's.
    waiting: Vec<Value>,
}

/// The `items` of a list, filed one at a time.
struct ItemsSeed<'w> {
    list_kind: Option<&'w str>,
    waiting: &'w mut Vec<Value>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<Value>()? {
            let names_kind = item.get("kind").is_some();
            match (self.list_kind, &item) {
                (Some(kind), _) => add_object(item, Some(kind))?,
                (None, Value::Object(_)) if !names_kind => self.waiting.push(item),
                (None, _) => add_object(item, None)?,
            }
        }
        Ok(())
    }

    // `items: null` is how an empty list is sometimes printed; anything
    // else that is not a sequence holds no object either.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }
}

/// The `objects` of an mdiag snapshot file, filed one at a time.
struct ObjectsSeed;

impl<'de> DeserializeSeed<'de> for ObjectsSeed {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ObjectsSeed {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(object) = seq.next_element::<Value>()? {
            add_object(object, None)?;
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A snapshot file newer than this mdiag is refused before its objects.
fn check_version<E: de::Error>(head: &serde_json::Map<String, Value>) -> Result<(), E> {
    let version = head.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version > u64::from(FORMAT_VERSION) {
        let path = with_reading(|r| r.path.clone());
        return Err(fail(SourceError::FutureVersion {
            path,
            found: version.min(u64::from(u32::MAX)) as u32,
            supported: FORMAT_VERSION,
        }));
    }
    Ok(())
}

/// The rest of an mdiag snapshot file: its capture metadata, logs, gaps and
/// redactions (and its objects, when they came before its version).
fn add_snapshot_head<E: de::Error>(head: serde_json::Map<String, Value>) -> Result<Document, E> {
    let path = with_reading(|r| r.path.clone());
    let file: SnapshotFile = serde_json::from_value(Value::Object(head)).map_err(|e| {
        fail::<E>(SourceError::BadSnapshot {
            path: path.clone(),
            detail: e.to_string(),
        })
    })?;
    if file.version == 0 {
        return Err(fail(SourceError::BadSnapshot {
            path,
            detail: "version must be 1 or more".into(),
        }));
    }
    with_reading(|r| {
        let origin = &mut r.snapshot.origin;
        origin.kind = OriginKind::SnapshotFile;
        origin.captured_at = file.captured_at.or(origin.captured_at);
        origin.captured_by = file.captured_by;
        origin.context = file.context;
        origin.server_version = file.server_version;
        origin.target = file.target;
        origin.namespace = file.namespace;
    });
    for object in file.objects {
        add_object(object, None)?;
    }
    with_reading(|r| {
        r.snapshot.logs.extend(file.logs);
        r.snapshot.gaps.extend(file.gaps);
        r.snapshot.redactions.extend(file.redactions);
    });
    Ok(Document)
}

/// The kinds of typed lists a dump holds (`PodList`, even with no item):
/// what the API was asked for, so an empty one is really empty.
#[derive(Default)]
struct Listed(std::collections::BTreeSet<String>);

/// The kinds whose absence changes a judgement, with the resource kubectl
/// names them by. A kubectl dump holds only what it was asked for, so a kind
/// with no object (and no typed list) in it is unknown, not empty (SPEC
/// section 4): rules that would need its absence stay silent.
const JUDGED_KINDS: &[(&str, &str)] = &[
    ("ModelService", "modelservices"),
    ("Deployment", "deployments"),
    ("ReplicaSet", "replicasets"),
    ("Pod", "pods"),
    ("Service", "services"),
    ("EndpointSlice", "endpointslices"),
    ("Event", "events"),
    ("Lease", "leases"),
];

/// What a dump with every judged kind in it is made with.
pub const COMPLETE_DUMP_RESOURCES: &str =
    "msvc,deployments,replicasets,pods,services,endpointslices,events,leases";

/// A gap for every judged kind the dump has no object and no typed list of,
/// each with the `kubectl get` that would add it.
fn unlisted_kinds(snapshot: &Snapshot, listed: &Listed) -> Vec<Gap> {
    let o = &snapshot.objects;
    let present = |kind: &str| match kind {
        "ModelService" => !o.model_services.is_empty(),
        "Deployment" => !o.deployments.is_empty(),
        "ReplicaSet" => !o.replica_sets.is_empty(),
        "Pod" => !o.pods.is_empty(),
        "Service" => !o.services.is_empty(),
        "EndpointSlice" => !o.endpoint_slices.is_empty() || listed.0.contains("Endpoints"),
        "Event" => !o.events.is_empty(),
        "Lease" => !o.leases.is_empty(),
        _ => true,
    };
    let scope = match dump_namespaces(o).as_slice() {
        [one] => format!("-n {one}"),
        _ => "-A".to_string(),
    };
    JUDGED_KINDS
        .iter()
        .filter(|(kind, _)| !present(kind) && !listed.0.contains(*kind))
        .map(|(_, resource)| Gap {
            resource: resource.to_string(),
            namespace: None,
            verb: "list".into(),
            name: None,
            reason: Gap::NOT_IN_DUMP.into(),
            complete_with: Some(format!("kubectl get {resource} {scope} -o yaml")),
        })
        .collect()
}

/// The namespaces a dump's namespaced objects are in, sorted.
fn dump_namespaces(o: &mdiag_core::model::Objects) -> Vec<String> {
    use k8s_openapi::Metadata;
    fn of<T: Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>>(
        items: &[T],
    ) -> impl Iterator<Item = &str> {
        items
            .iter()
            .filter_map(|i| i.metadata().namespace.as_deref())
    }
    let mut out: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    out.extend(
        o.model_services
            .iter()
            .filter_map(|m| m.metadata.namespace.as_deref()),
    );
    out.extend(of(&o.deployments));
    out.extend(of(&o.replica_sets));
    out.extend(of(&o.pods));
    out.extend(of(&o.services));
    out.extend(of(&o.endpoint_slices));
    out.into_iter().map(str::to_string).collect()
}

fn add_object_to(
    snapshot: &mut Snapshot,
    mut object: Value,
    path: &Path,
    list_kind: Option<&str>,
    index: usize,
    keep: Keep,
) -> Result<(), SourceError> {
    // `items: [a]` or `objects: [1]`: indexing it below would panic.
    let found = match &object {
        Value::Object(_) => None,
        // Nothing, as a null document is.
        Value::Null => return Ok(()),
        Value::Bool(_) => Some("a boolean"),
        Value::Number(_) => Some("a number"),
        Value::String(_) => Some("a string"),
        Value::Array(_) => Some("a list"),
    };
    if let Some(found) = found {
        return Err(SourceError::NotAnObject {
            path: path.to_path_buf(),
            document: index,
            found,
        });
    }
    // Items of a typed list (`PodList`) may omit their own kind.
    if object.get("kind").is_none()
        && let Some(kind) = list_kind.and_then(|k| k.strip_suffix("List"))
    {
        object["kind"] = Value::String(kind.to_string());
    }
    // Before any trimming: the clock of a dump is what the file holds.
    track_newest(&mut snapshot.origin, &object);
    sort_object_kept(&mut snapshot.objects, object, keep).map_err(|cause| SourceError::BadObject {
        path: path.to_path_buf(),
        cause,
    })
}

/// A kubectl dump has no capture time: remember the newest timestamp seen
/// in any object, which becomes the replay clock.
fn track_newest(origin: &mut Origin, object: &Value) {
    if let Some(newest) = newest_timestamp(object)
        && origin.newest_seen.is_none_or(|seen| newest > seen)
    {
        origin.newest_seen = Some(newest);
    }
}

fn newest_timestamp(value: &Value) -> Option<Timestamp> {
    match value {
        Value::String(s) if looks_like_timestamp(s) => s.parse::<Timestamp>().ok(),
        Value::Array(items) => items.iter().filter_map(newest_timestamp).max(),
        Value::Object(map) => map
            .iter()
            // Field sets, free text and annotations are not observations; a
            // deletionTimestamp is a deadline in the future, not a time seen.
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "fieldsV1" | "data" | "annotations" | "deletionTimestamp"
                )
            })
            .filter_map(|(_, v)| newest_timestamp(v))
            .max(),
        _ => None,
    }
}

fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    (20..=40).contains(&b.len())
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().all(u8::is_ascii_digit)
}

fn first_line(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join(" | ")
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

    #[test]
    fn trimming_keeps_what_rules_read_and_drops_the_rest() {
        let text = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: lab
    managedFields: [{manager: kubelet, operation: Update, time: "2026-11-28T10:00:09Z"}]
    annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: r
    namespace: lab
    managedFields: [{manager: kube-controller-manager, operation: Update, time: "2026-11-28T10:00:01Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}]
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: d
    namespace: lab
    managedFields:
    - {manager: kubectl-edit, operation: Update, time: "2026-11-28T10:00:02Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}
    - {manager: kube-controller-manager, operation: Update, subresource: status, time: "2026-11-28T10:00:03Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}}
- apiVersion: v1
  kind: Event
  metadata: {name: e, namespace: lab}
  involvedObject: {kind: ConfigMap, name: c, namespace: lab}
  reason: Whatever
"#;
        let path = Path::new("t.yaml");
        let analysed = parse_snapshot_bytes(text.as_bytes(), path, Keep::Analysed).unwrap();
        let pod = &analysed.objects.pods[0].metadata;
        assert!(pod.managed_fields.is_none() && pod.annotations.is_none());
        // A ReplicaSet's writers and times (its rung), not the fields.
        let rs = analysed.objects.replica_sets[0]
            .metadata
            .managed_fields
            .as_ref();
        let rs = &rs.expect("kept")[0];
        assert!(rs.time.is_some() && rs.fields_v1.is_none());
        // A Deployment's spec fields (field owners), not its status's.
        let d = analysed.objects.deployments[0]
            .metadata
            .managed_fields
            .as_ref();
        let d = d.expect("kept");
        assert!(d[0].fields_v1.is_some(), "spec fields kept");
        assert!(d[1].time.is_some() && d[1].fields_v1.is_none());
        assert!(
            analysed.objects.events.is_empty(),
            "an Event about a ConfigMap"
        );
        // The clock still sees the time the trimmed field held.
        assert_eq!(
            analysed.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:09Z".to_string())
        );
        let whole = parse_snapshot_bytes(text.as_bytes(), path, Keep::Whole).unwrap();
        let pod = &whole.objects.pods[0].metadata;
        assert!(pod.managed_fields.is_some() && pod.annotations.is_some());
        let rs = whole.objects.replica_sets[0]
            .metadata
            .managed_fields
            .as_ref();
        assert!(rs.expect("kept")[0].fields_v1.is_some());
        assert_eq!(whole.objects.events.len(), 1);
    }

    #[test]
    fn a_typed_list_whose_kind_comes_after_its_items_types_them() {
        // The API's own lists name their kind once, and kubectl sorts keys.
        let text = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"p","namespace":"n"}}],"kind":"PodList","metadata":{}}"#;
        let s = parse_snapshot_text(text, Path::new("l.json")).unwrap();
        assert_eq!(s.objects.pods.len(), 1);
        // A PodList says Pods were listed: an empty one is really empty.
        assert!(!s.gaps.iter().any(|g| g.resource == "pods"));
    }

    #[test]
    fn an_object_with_items_that_is_not_a_list_stays_one_object() {
        let text = "apiVersion: example.com/v1\nkind: Basket\nmetadata: {name: b}\nitems: [{name: apple}]\n";
        let s = parse_snapshot_text(text, Path::new("b.yaml")).unwrap();
        assert_eq!(s.objects.other.len(), 1);
        assert_eq!(s.objects.other[0]["items"][0]["name"], "apple");
    }

    #[test]
    fn a_big_yaml_dump_is_read_beyond_the_parser_default_node_budget() {
        // 30,000 Pods of ~12 nodes each: about 360,000 nodes, more than the
        // YAML parser allows by default (250,000), as a kubectl dump of a
        // loaded cluster has.
        let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..30_000 {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p-{i}\n    namespace: ns\n    uid: u-{i}\n    labels: {{app: a}}\n  spec:\n    nodeName: n1\n"
            ));
        }
        let snapshot = parse_snapshot_text(&text, Path::new("big.yaml")).unwrap();
        assert_eq!(snapshot.objects.pods.len(), 30_000);
    }

    #[test]
    fn a_list_item_that_is_not_an_object_is_an_error_not_a_panic() {
        for (text, found) in [
            ("apiVersion: v1\nkind: PodList\nitems:\n- a\n", "a string"),
            ("apiVersion: v1\nkind: List\nitems: [1]\n", "a number"),
            (
                "{\"format\":\"mdiag.dev/snapshot\",\"version\":2,\"objects\":[[]]}",
                "a list",
            ),
        ] {
            let err = parse_snapshot_text(text, Path::new("l.yaml")).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("l.yaml: document 1 holds an item that is "),
                "{message}"
            );
            assert!(message.contains(found), "{message}");
        }
        // A null item is nothing, as a null document is.
        let s = parse_snapshot_text(
            "apiVersion: v1\nkind: PodList\nitems:\n-\n",
            Path::new("n.yaml"),
        )
        .unwrap();
        assert!(s.objects.pods.is_empty());
    }

    #[test]
    fn the_clock_of_a_dump_ignores_deadlines_and_annotations() {
        let text = r#"
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: lab
  creationTimestamp: "2026-11-28T10:00:00Z"
  deletionTimestamp: "2026-11-28T10:05:30Z"
  annotations:
    example.com/expires: "2027-01-01T00:00:00Z"
status:
  startTime: "2026-11-28T10:00:05Z"
"#;
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        assert_eq!(
            s.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:05Z".to_string())
        );
    }
}
