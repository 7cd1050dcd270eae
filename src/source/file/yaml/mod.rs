//! The YAML reader: the parser's events fed straight into the streaming
//! decoder's serde visitors, with no layer between them that builds,
//! buffers or budgets a document (measured in docs/benchmarks.md: that
//! layer, not the tokenizer, was most of the time a YAML dump took).
//!
//! What it resolves, as kubectl's YAML reader does (YAML 1.1 through
//! sigs.k8s.io/yaml), is written down in
//! docs/snapshot-format.md#how-yaml-is-read: plain scalars become null,
//! booleans (`true`, `yes`, `on`, `y` and their negatives, any case),
//! integers (decimal, octal after a leading zero, `0x`, `0o`, `0b`),
//! floats, or text; quoted and block scalars are text; the core tags
//! (`!!str`, `!!int`...) are obeyed; mapping keys are always text. Aliases
//! replay their anchor's events, within a budget that grows with the
//! input, so a small file cannot expand into a large document; nesting
//! deeper than [`MAX_DEPTH`] is refused before it can overflow the stack.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::BufRead;

mod pieces;

use granit_parser::{
    BorrowedInput, ErrorKind, Event, InputIoError, Marker, Parser, ScalarStyle, ScanError, Tag,
};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess};

/// Collections nested deeper than this are refused (serde_json stops at
/// 128 too). Kubernetes objects nest about 20 deep.
pub(crate) const MAX_DEPTH: usize = 128;

/// Events an alias may replay, at least: past it (and past one per byte
/// of input) the read stops, as an alias bomb would.
const MIN_ALIAS_BUDGET: usize = 1 << 16;

/// Where an event starts, all the reader keeps of the parser's span (a
/// fifth of its size: events are moved and held by the million).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pos {
    line: u32,
    col: u32,
}

impl Pos {
    pub(crate) fn of(marker: &Marker) -> Pos {
        Pos {
            line: u32::try_from(marker.line()).unwrap_or(u32::MAX),
            col: u32::try_from(marker.col()).unwrap_or(u32::MAX),
        }
    }

    /// From 1.
    pub(crate) fn line(self) -> usize {
        self.line as usize
    }

    /// From 0.
    pub(crate) fn col(self) -> usize {
        self.col as usize
    }

    /// The same place in a text that starts `lines` lines later.
    pub(crate) fn down(self, lines: usize) -> Pos {
        Pos {
            line: self
                .line
                .saturating_add(u32::try_from(lines).unwrap_or(u32::MAX)),
            col: self.col,
        }
    }
}

/// Why a YAML read stopped, with where, when the parser knows.
#[derive(Debug)]
pub(crate) struct YamlError {
    message: String,
    at: Option<(usize, usize)>,
}

impl YamlError {
    pub(crate) fn at(message: impl Into<String>, marker: Pos) -> Self {
        YamlError {
            message: message.into(),
            at: Some((marker.line(), marker.col() + 1)),
        }
    }

    /// The parser's message, its first line (the rest names the input).
    pub(crate) fn scan(error: &ScanError) -> Self {
        let info = error.info();
        YamlError::at(
            info.lines().next().unwrap_or_default(),
            Pos::of(error.marker()),
        )
    }
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((line, column)) => write!(f, "line {line} column {column}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for YamlError {}

impl de::Error for YamlError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        YamlError {
            message: message.to_string(),
            at: None,
        }
    }
}

/// Reads every document of `text` as a `T`.
pub(crate) fn read_str<T: DeserializeOwned>(text: &str) -> Result<(), YamlError> {
    read_all::<_, T>(
        Parser::new_from_str_with_options(text, options()),
        text.len(),
    )
}

/// Texts this long are read on every core when they hold a List
/// (`pieces`); shorter ones are not worth the threads.
pub(crate) const PIECES_FROM_BYTES: usize = 4 << 20;

/// Each piece of a List read on every core is about this long.
const PIECE_BYTES: usize = 128 << 10;

/// Reads every document of `text` as a `T`, a List's items parsed on
/// every core. `false` means the text could not be read in pieces
/// (it does not hold such a List, or its pieces did not join, or it is not
/// valid): nothing it read counts, and the caller reads it with
/// [`read_str`], which finds the true error if there is one.
pub(crate) fn read_str_in_pieces<T: DeserializeOwned>(text: &str, piece_bytes: usize) -> bool {
    read_in_pieces::<_, T>(text.as_bytes(), piece_bytes, text.len())
}

/// [`read_str_in_pieces`] with pieces of the usual size, for a text long
/// enough to be worth it.
pub(crate) fn read_big_str<T: DeserializeOwned>(text: &str) -> bool {
    text.len() >= PIECES_FROM_BYTES && read_str_in_pieces::<T>(text, PIECE_BYTES)
}

/// Reads every document of a stream as a `T`, a List's items parsed on
/// every core as the text arrives, never held whole. `false` as for
/// [`read_str_in_pieces`]: the caller reads the input again from its
/// start. `input_limit` is what the stream is capped at.
pub(crate) fn read_stream_in_pieces<T: DeserializeOwned>(
    reader: impl BufRead + Send,
    input_limit: usize,
) -> bool {
    read_in_pieces::<_, T>(reader, PIECE_BYTES, input_limit)
}

fn read_in_pieces<R: BufRead + Send, T: DeserializeOwned>(
    reader: R,
    piece_bytes: usize,
    input_bytes: usize,
) -> bool {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let shared = pieces::Shared::new(reader, piece_bytes);
    std::thread::scope(|scope| {
        let started = (0..workers)
            .filter(|_| {
                std::thread::Builder::new()
                    .name("mdiag-yaml".into())
                    .spawn_scoped(scope, || shared.work())
                    .is_ok()
            })
            .count();
        // The workers stop when the decoder does, even if it panics (the
        // scope would otherwise wait for them for ever).
        let _stop = pieces::StopOnDrop(&shared);
        // No thread to be had (a process limit): one parser reads it all.
        started > 0 && read_all::<_, T>(pieces::Pieces::new(&shared), input_bytes).is_ok()
    })
}

/// Reads every document of a stream as a `T`, as its bytes arrive; bytes
/// that are not UTF-8 stop the read. `input_limit` is what the stream is
/// capped at, which the alias budget grows with.
pub(crate) fn read_stream<T: DeserializeOwned>(
    reader: &mut impl BufRead,
    input_limit: usize,
) -> Result<(), YamlError> {
    let chars = Utf8Chars::new(reader);
    read_all::<_, T>(
        Parser::new_from_fallible_iter_with_options(chars, options()),
        input_limit,
    )
}

pub(crate) fn options() -> granit_parser::Options {
    granit_parser::options! {
        // Comments are read past, not kept.
        emit_comments: false,
    }
}

/// Where the events come from: one parser, or the pieces of a List read
/// in parallel (`pieces`).
pub(crate) trait Source<'i> {
    fn next_event(&mut self) -> Option<Result<(Event<'i>, Pos), YamlError>>;
}

impl<'i, I: BorrowedInput<'i>> Source<'i> for Parser<'i, I> {
    fn next_event(&mut self) -> Option<Result<(Event<'i>, Pos), YamlError>> {
        Some(
            Parser::next_event(self)?
                .map(|(event, span)| (event, Pos::of(&span.start)))
                .map_err(|e| YamlError::scan(&e)),
        )
    }
}

pub(crate) fn read_all<'i, S: Source<'i>, T: DeserializeOwned>(
    source: S,
    input_bytes: usize,
) -> Result<(), YamlError> {
    let mut events = Events {
        source,
        peeked: None,
        replay: Vec::new(),
        anchors: HashMap::new(),
        recording: Vec::new(),
        alias_budget: input_bytes.max(MIN_ALIAS_BUDGET),
        last: Pos::default(),
    };
    loop {
        let (event, span) = events.next()?;
        match event {
            Event::StreamStart => {}
            Event::StreamEnd => return Ok(()),
            Event::DocumentStart(..) => {
                let located = |e: YamlError, events: &Events<'i, S>| match e.at {
                    Some(_) => e,
                    None => YamlError {
                        at: Some((events.last.line(), events.last.col() + 1)),
                        ..e
                    },
                };
                T::deserialize(Node {
                    events: &mut events,
                    depth: 0,
                })
                .map_err(|e| located(e, &events))?;
                match events.next()? {
                    (Event::DocumentEnd, _) => {}
                    (_, span) => {
                        return Err(YamlError::at("more than one node in a document", span));
                    }
                }
                // Anchors name nodes of their own document only.
                events.anchors.clear();
            }
            _ => return Err(YamlError::at("expected a document", span)),
        }
    }
}

/// The parser's events, with aliases replayed from what their anchors
/// recorded.
struct Events<'i, S: Source<'i>> {
    source: S,
    peeked: Option<(Event<'i>, Pos)>,
    /// Aliases being replayed, innermost last.
    replay: Vec<std::vec::IntoIter<(Event<'i>, Pos)>>,
    anchors: HashMap<usize, Vec<(Event<'i>, Pos)>>,
    /// Anchored collections still open: their id, how deep inside them the
    /// stream is, and their events so far.
    recording: Vec<Recording<'i>>,
    /// Events aliases may still replay.
    alias_budget: usize,
    /// Where the last event started, for errors a visitor raises.
    last: Pos,
}

struct Recording<'i> {
    anchor: usize,
    open: usize,
    events: Vec<(Event<'i>, Pos)>,
}

impl<'i, S: Source<'i>> Events<'i, S> {
    fn peek(&mut self) -> Result<&(Event<'i>, Pos), YamlError> {
        if self.peeked.is_none() {
            let next = self.pull()?;
            self.peeked = Some(next);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn next(&mut self) -> Result<(Event<'i>, Pos), YamlError> {
        let next = match self.peeked.take() {
            Some(next) => next,
            None => self.pull()?,
        };
        self.last = next.1;
        Ok(next)
    }

    /// The next node event: a replayed one, or the parser's (an alias
    /// becomes its anchor's events).
    fn pull(&mut self) -> Result<(Event<'i>, Pos), YamlError> {
        loop {
            if let Some(replaying) = self.replay.last_mut() {
                match replaying.next() {
                    Some(event) => {
                        self.record(&event, false);
                        return Ok(event);
                    }
                    None => {
                        self.replay.pop();
                        continue;
                    }
                }
            }
            let (event, span) = match self.source.next_event() {
                Some(event) => event?,
                None => return Err(YamlError::at("the input ended early", self.last)),
            };
            match event {
                Event::Alias(id) => {
                    let Some(events) = self.anchors.get(&id) else {
                        return Err(YamlError::at("an alias of an unknown anchor", span));
                    };
                    if events.len() > self.alias_budget {
                        return Err(YamlError::at(
                            "aliases expand past the limit (an alias bomb?)",
                            span,
                        ));
                    }
                    self.alias_budget -= events.len();
                    self.replay.push(events.clone().into_iter());
                }
                // Not asked for (`options`): anchors are read from the
                // node events, an unknown alias is the parser's error.
                Event::Anchor(..) | Event::UnresolvedAlias(_) => {}
                event => {
                    let event = (event, span);
                    self.record(&event, true);
                    return Ok(event);
                }
            }
        }
    }

    /// Adds an event to every anchored node still open, and opens a new
    /// one when the event is anchored (anchors are the parser's, never a
    /// replayed node's, so a replay does not redefine them).
    fn record(&mut self, event: &(Event<'i>, Pos), from_parser: bool) {
        if self.recording.is_empty() && !from_parser {
            return;
        }
        let (opens, closes) = match event.0 {
            Event::SequenceStart(..) | Event::MappingStart(..) => (1, 0),
            Event::SequenceEnd | Event::MappingEnd => (0, 1),
            _ => (0, 0),
        };
        for recording in &mut self.recording {
            recording.events.push(event.clone());
            recording.open = recording.open + opens - closes;
        }
        while self.recording.last().is_some_and(|r| r.open == 0) {
            let done = self.recording.pop().expect("just seen");
            self.anchors.insert(done.anchor, done.events);
        }
        let anchor = match event.0 {
            Event::Scalar(_, _, anchor, _)
            | Event::SequenceStart(_, anchor, _)
            | Event::MappingStart(_, anchor, _) => anchor,
            _ => 0,
        };
        if from_parser && anchor != 0 {
            if opens == 1 {
                self.recording.push(Recording {
                    anchor,
                    open: 1,
                    events: vec![event.clone()],
                });
            } else {
                self.anchors.insert(anchor, vec![event.clone()]);
            }
        }
    }

    /// Reads past one node.
    fn skip(&mut self) -> Result<(), YamlError> {
        let mut open = 0usize;
        loop {
            match self.next()?.0 {
                Event::SequenceStart(..) | Event::MappingStart(..) => open += 1,
                Event::SequenceEnd | Event::MappingEnd => open -= 1,
                _ => {}
            }
            if open == 0 {
                return Ok(());
            }
        }
    }
}

/// One node of the stream, as serde reads it.
struct Node<'e, 'i, S: Source<'i>> {
    events: &'e mut Events<'i, S>,
    depth: usize,
}

impl<'de, 'i, S: Source<'i>> Deserializer<'de> for Node<'_, 'i, S> {
    type Error = YamlError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        let (event, span) = self.events.next()?;
        match event {
            Event::Scalar(text, style, _, tag) => {
                match resolve(&text, style, tag.as_deref(), span)? {
                    Scalar::Null => visitor.visit_unit(),
                    Scalar::Bool(b) => visitor.visit_bool(b),
                    Scalar::Int(i) => visitor.visit_i64(i),
                    Scalar::Uint(u) => visitor.visit_u64(u),
                    Scalar::Float(f) => visitor.visit_f64(f),
                    Scalar::Text => visitor.visit_string(text.into_owned()),
                }
            }
            Event::SequenceStart(..) => {
                let depth = self.deeper(span)?;
                let value = visitor.visit_seq(Inside {
                    events: &mut *self.events,
                    depth,
                })?;
                self.finish()?;
                Ok(value)
            }
            Event::MappingStart(..) => {
                let depth = self.deeper(span)?;
                let value = visitor.visit_map(Inside {
                    events: &mut *self.events,
                    depth,
                })?;
                self.finish()?;
                Ok(value)
            }
            _ => Err(YamlError::at("expected a value", span)),
        }
    }

    fn deserialize_ignored_any<V: de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        self.events.skip()?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

impl<'i, S: Source<'i>> Node<'_, 'i, S> {
    fn deeper(&self, at: Pos) -> Result<usize, YamlError> {
        if self.depth >= MAX_DEPTH {
            return Err(YamlError::at(
                format!("nested deeper than {MAX_DEPTH} levels (the depth limit)"),
                at,
            ));
        }
        Ok(self.depth + 1)
    }

    /// Reads past what a visitor left of a collection, and its end.
    fn finish(self) -> Result<(), YamlError> {
        loop {
            match self.events.peek()?.0 {
                Event::SequenceEnd | Event::MappingEnd => {
                    self.events.next()?;
                    return Ok(());
                }
                _ => self.events.skip()?,
            }
        }
    }
}

/// What is inside a collection: the items of a sequence, the entries of a
/// mapping, one level deeper than the collection.
struct Inside<'e, 'i, S: Source<'i>> {
    events: &'e mut Events<'i, S>,
    depth: usize,
}

impl<'de, 'i, S: Source<'i>> SeqAccess<'de> for Inside<'_, 'i, S> {
    type Error = YamlError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, YamlError> {
        if matches!(self.events.peek()?.0, Event::SequenceEnd) {
            return Ok(None);
        }
        seed.deserialize(Node {
            events: &mut *self.events,
            depth: self.depth,
        })
        .map(Some)
    }
}

impl<'de, 'i, S: Source<'i>> MapAccess<'de> for Inside<'_, 'i, S> {
    type Error = YamlError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, YamlError> {
        let (event, span) = self.events.peek()?;
        match event {
            Event::MappingEnd => Ok(None),
            Event::Scalar(..) => {
                KEY_LINE.set(span.line() as u64);
                seed.deserialize(Key {
                    events: &mut *self.events,
                })
                .map(Some)
            }
            _ => Err(YamlError::at(
                "a mapping key that is not a scalar (mdiag reads text keys only)",
                *span,
            )),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, YamlError> {
        seed.deserialize(Node {
            events: &mut *self.events,
            depth: self.depth,
        })
    }
}

thread_local! {
    /// The line of the last mapping key read on this thread.
    static KEY_LINE: Cell<u64> = const { Cell::new(0) };
}

/// The line (from 1) of the mapping key the YAML reader gave last.
pub(crate) fn last_key_line() -> Option<u64> {
    Some(KEY_LINE.get()).filter(|&line| line > 0)
}

/// A mapping key: its text as written, whatever it would resolve to (as
/// kubectl's YAML-to-JSON step makes every key a string).
struct Key<'e, 'i, S: Source<'i>> {
    events: &'e mut Events<'i, S>,
}

impl<'de, 'i, S: Source<'i>> Deserializer<'de> for Key<'_, 'i, S> {
    type Error = YamlError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.events.next()? {
            (Event::Scalar(text, ..), _) => visitor.visit_string(text.into_owned()),
            (_, span) => Err(YamlError::at("expected a mapping key", span)),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// What a scalar is.
#[derive(Debug, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// The text as written.
    Text,
}

/// Resolves a scalar by its tag, or, plain and untagged, by its text.
fn resolve(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
    at: Pos,
) -> Result<Scalar, YamlError> {
    let core = tag.and_then(|t| t.is_yaml_core_schema().then(|| t.suffix()));
    let refuse = |what: &str| Err(YamlError::at(format!("{text:?} is not {what}"), at));
    match core {
        Some("str" | "binary" | "timestamp" | "map" | "seq") => return Ok(Scalar::Text),
        Some("null") => return Ok(Scalar::Null),
        Some("bool") => {
            return bool_of(text).map_or_else(|| refuse("a boolean"), |b| Ok(Scalar::Bool(b)));
        }
        Some("int") => return number_of(text, false).map_or_else(|| refuse("an integer"), Ok),
        Some("float") => {
            return number_of(text, true)
                .or_else(|| non_finite(text).map(Scalar::Float))
                .map_or_else(|| refuse("a number"), Ok);
        }
        _ => {}
    }
    // `!` (non-specific) keeps a plain scalar text; other local tags are
    // read past, the value resolved as if untagged.
    let non_specific = tag.is_some_and(|t| t.handle() == "!" && t.suffix().is_empty());
    if style != ScalarStyle::Plain || non_specific {
        return Ok(Scalar::Text);
    }
    Ok(plain(text))
}

/// A plain, untagged scalar.
fn plain(text: &str) -> Scalar {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Scalar::Null;
    }
    let Some(&first) = text.as_bytes().first() else {
        return Scalar::Null;
    };
    // Most scalars are names: only these can start anything else.
    if !(first.is_ascii_digit()
        || matches!(
            first,
            b'-' | b'+'
                | b'.'
                | b'y'
                | b'Y'
                | b'n'
                | b'N'
                | b'o'
                | b'O'
                | b't'
                | b'T'
                | b'f'
                | b'F'
        ))
    {
        return Scalar::Text;
    }
    if let Some(b) = bool_of(text) {
        return Scalar::Bool(b);
    }
    if let Some(number) = number_of(text, true) {
        return number;
    }
    // `.inf` and `.nan` are floats JSON cannot hold: null, as the decoder
    // makes of any non-finite number.
    if non_finite(text).is_some() {
        return Scalar::Null;
    }
    Scalar::Text
}

/// YAML 1.1's booleans, as kubectl reads them, in any case.
fn bool_of(text: &str) -> Option<bool> {
    const TRUE: [&str; 4] = ["true", "yes", "y", "on"];
    const FALSE: [&str; 4] = ["false", "no", "n", "off"];
    if text.len() > 5 {
        return None;
    }
    if TRUE.iter().any(|t| text.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|f| text.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// An integer (decimal, octal after a leading zero, or `0x`, `0o`, `0b`,
/// `_` between digits) or, when `floats`, a finite decimal float; an integer
/// too large for 64 bits is read as a float.
fn number_of(text: &str, floats: bool) -> Option<Scalar> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
        .iter()
        .find_map(|(prefix, radix)| unsigned.strip_prefix(prefix).map(|d| (d, *radix)));
    let integer = match radix {
        Some((digits, radix)) => digits_of(digits, radix),
        // YAML 1.1's octal, as kubectl reads `defaultMode: 0644` (420);
        // `089` is no octal, and is read as a float below, as kubectl does.
        None if unsigned.len() > 1 && unsigned.starts_with('0') => digits_of(&unsigned[1..], 8),
        None => digits_of(unsigned, 10),
    };
    if let Some(magnitude) = integer {
        if negative {
            if let Ok(value) = i64::try_from(-(magnitude as i128)) {
                return Some(Scalar::Int(value));
            }
        } else if let Ok(value) = u64::try_from(magnitude) {
            return Some(if let Ok(small) = i64::try_from(value) {
                Scalar::Int(small)
            } else {
                Scalar::Uint(value)
            });
        }
    }
    if !floats
        || !unsigned
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        return None;
    }
    // Rust's float syntax also takes `inf` and `nan`, which the check
    // above has ruled out; a numeral too large for f64 stays a number.
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    Some(Scalar::Float(value))
}

/// Digits in `radix`, `_` allowed between two of them; at most 128 bits.
fn digits_of(digits: &str, radix: u32) -> Option<u128> {
    let bytes = digits.as_bytes();
    let mut value: u128 = 0;
    let mut seen = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let between =
                i > 0 && bytes[i - 1] != b'_' && bytes.get(i + 1).is_some_and(|&n| n != b'_');
            if !between {
                return None;
            }
            continue;
        }
        let digit = (b as char).to_digit(radix)?;
        value = value
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        seen = true;
    }
    seen.then_some(value)
}

/// `.inf`, `-.inf`, `.nan` in YAML's three spellings each.
fn non_finite(text: &str) -> Option<f64> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        ".nan" | ".NaN" | ".NAN" if text == unsigned => Some(f64::NAN),
        _ => None,
    }
}

/// The characters of a byte stream, for the parser, decoded a buffer at a
/// time; bytes that are not UTF-8, or a read that fails, end it with an
/// error.
struct Utf8Chars<'r, R: BufRead> {
    reader: &'r mut R,
    /// The text decoded, and how far the parser has read it.
    text: String,
    at: usize,
    /// The start of a character the last buffer cut in two.
    carry: Vec<u8>,
    failed: bool,
}

impl<'r, R: BufRead> Utf8Chars<'r, R> {
    fn new(reader: &'r mut R) -> Self {
        Utf8Chars {
            reader,
            text: String::new(),
            at: 0,
            carry: Vec::new(),
            failed: false,
        }
    }

    /// Decodes the reader's next buffer; `false` at its end.
    fn refill(&mut self) -> Result<bool, ErrorKind> {
        let buf = self.reader.fill_buf().map_err(|e| ErrorKind::InputIo {
            error: InputIoError::from_io(e),
        })?;
        if buf.is_empty() {
            if self.carry.is_empty() {
                return Ok(false);
            }
            return Err(not_utf8());
        }
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(buf);
        let read = buf.len();
        self.reader.consume(read);
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            // A character cut at the end: kept for the next buffer.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => return Err(not_utf8()),
        };
        self.text.clear();
        self.text
            .push_str(std::str::from_utf8(&bytes[..valid]).map_err(|_| not_utf8())?);
        self.at = 0;
        bytes.drain(..valid);
        self.carry = bytes;
        Ok(true)
    }
}

fn not_utf8() -> ErrorKind {
    ErrorKind::InputDecoding {
        message: "the input is not UTF-8 text".into(),
    }
}

impl<R: BufRead> Iterator for Utf8Chars<'_, R> {
    type Item = Result<char, ErrorKind>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(c) = self.text[self.at..].chars().next() {
                self.at += c.len_utf8();
                return Some(Ok(c));
            }
            if self.failed {
                return None;
            }
            match self.refill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(kind) => {
                    self.failed = true;
                    return Some(Err(kind));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::{Value, json};
    use std::cell::RefCell;

    thread_local! {
        static READ: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
    }

    /// A document, kept as the decoder's values are (JSON values).
    struct Collect;

    impl<'de> Deserialize<'de> for Collect {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let value = Value::deserialize(d)?;
            READ.with(|r| r.borrow_mut().push(value));
            Ok(Collect)
        }
    }

    fn documents(text: &str) -> Result<Vec<Value>, YamlError> {
        READ.with(|r| r.borrow_mut().clear());
        read_str::<Collect>(text)?;
        Ok(READ.with(|r| r.take()))
    }

    fn one(text: &str) -> Value {
        let mut docs = documents(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(docs.len(), 1, "{text:?}");
        docs.remove(0)
    }

    /// The reader before this one (serde-saphyr into JSON values) and this
    /// one read every YAML file of the fixtures alike.
    #[test]
    fn every_yaml_fixture_reads_as_serde_saphyr_read_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 100, "{} YAML fixtures", files.len());
        let mut compared = 0;
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let Ok(before) = serde_saphyr::from_multiple::<Value>(&text) else {
                // Refused before; still refused or read, never a panic.
                let _ = documents(&text);
                continue;
            };
            let before: Vec<Value> = before.into_iter().filter(|d| !d.is_null()).collect();
            let now: Vec<Value> = documents(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
                .into_iter()
                .filter(|d| !d.is_null())
                .collect();
            assert!(before == now, "{} reads differently", file.display());
            compared += 1;
        }
        assert!(compared > 100, "{compared} compared");
    }

    #[test]
    fn plain_scalars_resolve_as_kubectl_reads_them() {
        let doc = one(concat!(
            "a: ~\nb:\nc: null\nd: true\ne: yes\nf: Off\ng: n\nh: 42\ni: -7\n",
            "j: 0x1F\nk: 0o17\nl: 0b101\nm: 1_000\nn: 3.5\no: 1e3\np: .inf\n",
            "q: 18446744073709551615\nr: 1e999\ns: web-1\nt: \"42\"\nu: '0x1F'\n",
            "v: !!str 42\nw: !!int \"7\"\nx: !!float 1\ny: 0644\nz: v1.2\n",
            "y2: 089\n",
            "1: key\ntrue: key\n",
        ));
        assert_eq!(
            doc,
            json!({
                "a": null, "b": null, "c": null, "d": true, "e": true, "f": false,
                "g": false, "h": 42, "i": -7, "j": 31, "k": 15, "l": 5, "m": 1000,
                "n": 3.5, "o": 1000.0, "p": null, "q": 18446744073709551615u64,
                "r": null, "s": "web-1", "t": "42", "u": "0x1F", "v": "42",
                "w": 7, "x": 1, "y": 420, "y2": 89.0, "z": "v1.2", "1": "key", "true": "key",
            })
        );
    }

    #[test]
    fn aliases_replay_their_anchor_and_bombs_are_stopped() {
        assert_eq!(
            one("a: &x {b: [1, &y two]}\nc: *x\nd: *y\n"),
            json!({"a": {"b": [1, "two"]}, "c": {"b": [1, "two"]}, "d": "two"})
        );
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let prev = (b'a' + level - 1) as char;
            let name = (b'a' + level) as char;
            bomb.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 10].join(", ")
            ));
        }
        let e = documents(&bomb).unwrap_err().to_string();
        assert!(e.contains("alias bomb"), "{e}");
    }

    #[test]
    fn documents_keys_and_errors() {
        assert_eq!(
            documents("---\na: 1\n---\n---\n- b\n").unwrap(),
            vec![json!({"a": 1}), Value::Null, json!(["b"])]
        );
        let e = documents("? [a, b]\n: c\n").unwrap_err().to_string();
        assert!(e.starts_with("line 1 column 3: a mapping key"), "{e}");
        let deep = format!("x: {}{}", "[".repeat(200), "]".repeat(200));
        let e = documents(&deep).unwrap_err().to_string();
        assert!(e.contains("depth limit"), "{e}");
    }

    #[test]
    fn a_stream_reads_as_the_same_text_does() {
        let text = "a: &x {b: [1, \"é\u{1F600}\"]}\nc: *x\n---\nd: 0x10\n";
        READ.with(|r| r.borrow_mut().clear());
        read_stream::<Collect>(
            &mut std::io::BufReader::with_capacity(3, text.as_bytes()),
            1 << 20,
        )
        .unwrap();
        let streamed = READ.with(|r| r.take());
        assert_eq!(streamed, documents(text).unwrap());
        let e = read_stream::<Collect>(&mut &b"a: \xff\xfe\n"[..], 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not UTF-8"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// A plain scalar means what it meant to the reader before this one
        /// (serde-saphyr), but where that one refused it (`.inf` and `.nan`,
        /// null here, as JSON has no such number) and for YAML 1.1's octal
        /// (`0644`, which kubectl reads as 420 and serde-saphyr as 644.0).
        #[test]
        fn plain_scalars_resolve_as_the_reader_before_resolved_them(
            scalar in "[-+0-9a-fA-FxXoObB._~eEyYnNtTrRuUlLsS]{0,10}"
        ) {
            let text = format!("k: {scalar}\n");
            let unsigned = scalar.trim_start_matches(['-', '+']);
            let octal = unsigned.len() > 1
                && unsigned.starts_with('0')
                && unsigned.bytes().all(|b| matches!(b, b'0'..=b'7' | b'_'));
            proptest::prop_assume!(!octal);
            if let Ok(before) = serde_saphyr::from_str::<Value>(&text) {
                let now = documents(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
                proptest::prop_assert_eq!(&now[0], &before, "{:?}", text);
            }
        }
    }
}
