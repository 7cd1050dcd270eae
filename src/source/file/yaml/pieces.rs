//! A big `kubectl get -o yaml` List read on every core, as its text
//! arrives: its `items` are cut into pieces at the lines where an item
//! begins (`- ` in column 0 after a top-level `items:`), each piece is
//! tokenized on a worker thread on its own, and the pieces' events are
//! handed to the decoder in order, stitched back into the one document
//! they came from, lines and all. The text is never held whole: a piece
//! is cut from the reader when a worker is free to parse it, no more than
//! [`AHEAD`] pieces before the decoder, and dropped once its events are
//! made (they own their text).
//!
//! A cut can only fall between two items of that sequence: a line in
//! column 0 cannot continue a block scalar or a plain scalar there, and a
//! quoted scalar or a flow collection cut in two leaves a piece that does
//! not parse. Whenever a piece does not parse, or does not end as the cut
//! says it must, or the text is not such a List, the read is refused here
//! and the caller reads the whole input again with one parser, which also
//! gives a syntax error its true place. An alias to an anchor in another
//! piece is such a failure too.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::sync::{Condvar, Mutex};

use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};

use super::{Pos, Source, YamlError};

/// Pieces parsed ahead of the decoder, at most: each holds its events
/// (a hundred bytes or so each, a few per line) until the decoder reaches
/// it.
const AHEAD: usize = 3;

/// The most text before the items, and after them, a cut allows.
const MAX_EDGE_BYTES: usize = 1 << 20;

/// What a piece is to the document it was cut from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// Up to and with the key `items:`.
    Head,
    /// Whole items of the sequence.
    Items,
    /// What follows the items: the next keys of their mapping, or, after
    /// a document marker (`---`, `...`), the documents after it.
    Tail { is_document: bool },
}

/// A piece of the text, owned, with the line (from 1) it starts on.
#[derive(Debug)]
struct Piece {
    role: Role,
    first_line: usize,
    text: String,
}

/// Where the cutting is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Head,
    Items,
    Tail { is_document: bool },
    Done,
}

/// Cuts a text into [`Piece`]s as it is read, line by line.
struct Splitter<R> {
    reader: R,
    phase: Phase,
    /// Lines read so far.
    lines: usize,
    /// The line that starts the next piece, read already, and its number.
    carried: (usize, Vec<u8>),
    piece_bytes: usize,
    /// The index the next piece gets (0 is the head).
    next_index: usize,
}

/// The lines are looked at as bytes: every mark the cut looks for is
/// ASCII, and a piece is checked as UTF-8 once, whole ([`into_string`]).
fn starts_item(line: &[u8]) -> bool {
    line == b"-" || line.starts_with(b"- ")
}

/// The text cannot be read in pieces; the caller reads it with one parser.
fn not_cut(why: &str) -> YamlError {
    YamlError::at(format!("not read in pieces: {why}"), Pos::default())
}

impl<R: BufRead> Splitter<R> {
    fn new(reader: R, piece_bytes: usize) -> Self {
        Splitter {
            reader,
            phase: Phase::Head,
            lines: 0,
            carried: (1, Vec::new()),
            piece_bytes: piece_bytes.max(1),
            next_index: 0,
        }
    }

    /// Appends the next line to `text`; its start in `text`, or `None` at
    /// the end. A read that fails refuses the cut (one parser then says
    /// why).
    fn read_line(&mut self, text: &mut Vec<u8>) -> Result<Option<usize>, YamlError> {
        let start = text.len();
        match self.reader.read_until(b'\n', text) {
            Ok(0) => Ok(None),
            Ok(_) => {
                self.lines += 1;
                Ok(Some(start))
            }
            Err(_) => Err(not_cut("the read failed")),
        }
    }

    /// The next piece; after the tail (or a refusal) there is none.
    fn next_piece(&mut self) -> Result<Option<Piece>, YamlError> {
        let piece = match self.phase {
            Phase::Head => self.head(),
            Phase::Items => self.items(),
            Phase::Tail { is_document } => self.tail(is_document),
            Phase::Done => return Ok(None),
        };
        if !matches!(
            piece,
            Ok(Piece {
                role: Role::Head | Role::Items,
                ..
            })
        ) {
            self.phase = Phase::Done;
        }
        piece.map(Some)
    }

    /// Everything before the first item: `items:` alone in column 0, then
    /// its first item (past blank lines and comments).
    fn head(&mut self) -> Result<Piece, YamlError> {
        let mut text = Vec::new();
        let mut after_items = false;
        loop {
            let Some(start) = self.read_line(&mut text)? else {
                return Err(not_cut("no `items:` in column 0"));
            };
            let content = text[start..].trim_ascii_end();
            if after_items {
                let trimmed = content.trim_ascii_start();
                if !(trimmed.is_empty() || trimmed.starts_with(b"#")) {
                    if !starts_item(content) {
                        return Err(not_cut("`items:` is not followed by items in column 0"));
                    }
                    self.carried = (self.lines, text.split_off(start));
                    self.phase = Phase::Items;
                    return Ok(Piece {
                        role: Role::Head,
                        first_line: 1,
                        text: into_string(text)?,
                    });
                }
            } else {
                after_items = content == b"items:";
            }
            if text.len() > MAX_EDGE_BYTES {
                return Err(not_cut("too much before the items"));
            }
        }
    }

    /// Whole items, from the carried line that starts one, until a piece
    /// is long enough and the next item begins, or the items end.
    fn items(&mut self) -> Result<Piece, YamlError> {
        let (first_line, mut text) = std::mem::take(&mut self.carried);
        let piece = |text| {
            Ok(Piece {
                role: Role::Items,
                first_line,
                text: into_string(text)?,
            })
        };
        loop {
            let Some(start) = self.read_line(&mut text)? else {
                self.carried = (self.lines + 1, Vec::new());
                self.phase = Phase::Tail { is_document: false };
                return piece(text);
            };
            let line = &text[start..];
            let content = line.trim_ascii_end();
            let item = starts_item(content);
            let in_column_0 = !matches!(line.first(), Some(b' ' | b'\t' | b'\r' | b'\n' | b'#'));
            if in_column_0 && !item {
                let is_document =
                    content == b"---" || content.starts_with(b"--- ") || content == b"...";
                self.carried = (self.lines, text.split_off(start));
                self.phase = Phase::Tail { is_document };
                return piece(text);
            }
            if item && start >= self.piece_bytes {
                self.carried = (self.lines, text.split_off(start));
                return piece(text);
            }
        }
    }

    /// The rest of the text, as one piece: its events are held whole, so a
    /// big document after the List (a second List) is left to one parser.
    fn tail(&mut self, is_document: bool) -> Result<Piece, YamlError> {
        let (first_line, mut text) = std::mem::take(&mut self.carried);
        while self.read_line(&mut text)?.is_some() {
            if text.len() > MAX_EDGE_BYTES {
                return Err(not_cut("too much after the items"));
            }
        }
        Ok(Piece {
            role: Role::Tail { is_document },
            first_line,
            text: into_string(text)?,
        })
    }
}

/// A piece as text: one that is not UTF-8 refuses the cut (one parser
/// then says where).
fn into_string(text: Vec<u8>) -> Result<String, YamlError> {
    String::from_utf8(text).map_err(|_| not_cut("not UTF-8"))
}

type Located = VecDeque<(Event<'static>, Pos)>;
type Parsed = Result<(Role, Located), YamlError>;

/// The pieces' events in order, parsed by the workers while the decoder
/// reads.
pub(crate) struct Pieces<'s, R> {
    shared: &'s Shared<R>,
    /// The events of the piece being read.
    current: Located,
    /// The next piece to read (0 is the head).
    next: usize,
    /// The tail was read, or a piece failed.
    ended: bool,
}

/// What the workers and the decoder share.
pub(crate) struct Shared<R> {
    /// Taken by the worker that cuts the next piece.
    splitter: Mutex<Splitter<R>>,
    state: Mutex<State>,
    changed: Condvar,
    /// Event buffers the decoder is done with, for the next pieces: a
    /// piece's buffer is megabytes, and a fresh one each time costs page
    /// faults and leaves the allocator's arenas fragmented.
    spare: Mutex<Vec<Located>>,
}

#[derive(Default)]
struct State {
    /// Parsed pieces not yet read, by index.
    done: HashMap<usize, Parsed>,
    /// The piece the decoder reads now (those before it are done with).
    read: usize,
    /// The decoder stopped: workers stop too.
    stopped: bool,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A worker that panicked cannot leave the state half-changed: each
    // change is one assignment.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<R: BufRead> Shared<R> {
    /// Pieces of about `piece_bytes` cut from `reader`.
    pub(crate) fn new(reader: R, piece_bytes: usize) -> Self {
        Shared {
            splitter: Mutex::new(Splitter::new(reader, piece_bytes)),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        }
    }

    /// A worker: cuts the next piece and parses it, never more than
    /// [`AHEAD`] pieces past what the decoder reads.
    pub(crate) fn work(&self) {
        loop {
            let (index, piece) = {
                let mut splitter = locked(&self.splitter);
                if splitter.phase == Phase::Done {
                    return;
                }
                let index = splitter.next_index;
                {
                    let mut state = locked(&self.state);
                    while !state.stopped && index >= state.read + AHEAD {
                        state = self
                            .changed
                            .wait(state)
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                    if state.stopped {
                        return;
                    }
                }
                splitter.next_index += 1;
                (index, splitter.next_piece())
            };
            let parsed = match piece {
                Ok(Some(piece)) => self.parse(index, piece),
                Ok(None) => return,
                Err(e) => Err(e),
            };
            let mut state = locked(&self.state);
            state.done.insert(index, parsed);
            self.changed.notify_all();
        }
    }

    /// Tells the workers to stop (the decoder is done or failed).
    pub(crate) fn stop(&self) {
        let mut state = locked(&self.state);
        state.stopped = true;
        self.changed.notify_all();
    }

    /// One piece's events, with their lines as in the whole text, cut to
    /// what they stand for in the whole document.
    fn parse(&self, index: usize, piece: Piece) -> Parsed {
        let mut parser = Parser::new_from_str_with_options(&piece.text, super::options());
        // An alias into another piece is this parser's "unknown anchor",
        // and the whole text is read again. Each piece numbers its anchors
        // from its own offset (128 KiB cannot hold a million anchors).
        parser.set_anchor_offset(index.saturating_mul(1 << 20));
        let mut events = locked(&self.spare).pop().unwrap_or_default();
        // About one event in twelve bytes of a kubectl List.
        events.reserve(piece.text.len() / 10);
        for event in parser {
            let (event, span) = event.map_err(|e| YamlError::scan(&e))?;
            let event = owned(event).ok_or_else(mismatch)?;
            events.push_back((event, Pos::of(&span.start).down(piece.first_line - 1)));
        }
        let events = match piece.role {
            Role::Head => head(events),
            Role::Items => items(events),
            Role::Tail { is_document } => tail(events, is_document),
        }?;
        Ok((piece.role, events))
    }
}

/// Stops the workers when dropped.
pub(crate) struct StopOnDrop<'s, R: BufRead>(pub(crate) &'s Shared<R>);

impl<R: BufRead> Drop for StopOnDrop<'_, R> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// An event that owns its text, so its piece's text can go (the decoder
/// takes a scalar's text as it is, so what is copied here is not copied
/// there). `None` for an event this reader does not know (comments are
/// not asked for): the piece is then left to one parser.
fn owned(event: Event<'_>) -> Option<Event<'static>> {
    let tag = |tag: Option<Cow<'_, granit_parser::Tag>>| tag.map(|t| Cow::Owned(t.into_owned()));
    Some(match event {
        Event::StreamStart => Event::StreamStart,
        Event::StreamEnd => Event::StreamEnd,
        Event::DocumentStart(explicit, version) => Event::DocumentStart(explicit, version),
        Event::DocumentEnd => Event::DocumentEnd,
        Event::Alias(id) => Event::Alias(id),
        Event::Anchor(id, name) => Event::Anchor(id, Cow::Owned(name.into_owned())),
        Event::UnresolvedAlias(name) => Event::UnresolvedAlias(Cow::Owned(name.into_owned())),
        Event::Scalar(text, style, anchor, t) => {
            Event::Scalar(Cow::Owned(text.into_owned()), style, anchor, tag(t))
        }
        Event::SequenceStart(style, anchor, t) => Event::SequenceStart(style, anchor, tag(t)),
        Event::SequenceEnd => Event::SequenceEnd,
        Event::MappingStart(style, anchor, t) => Event::MappingStart(style, anchor, tag(t)),
        Event::MappingEnd => Event::MappingEnd,
        _ => return None,
    })
}

impl<'s, R: BufRead> Pieces<'s, R> {
    pub(crate) fn new(shared: &'s Shared<R>) -> Self {
        Pieces {
            shared,
            current: VecDeque::new(),
            next: 0,
            ended: false,
        }
    }

    /// The events of piece `index`, waiting for a worker to parse it.
    fn take(&mut self, index: usize) -> Parsed {
        let mut state = locked(&self.shared.state);
        loop {
            if let Some(parsed) = state.done.remove(&index) {
                state.read = index;
                self.shared.changed.notify_all();
                return parsed;
            }
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// The stitching does not hold: the caller reads the whole text again.
fn mismatch() -> YamlError {
    YamlError::at("the pieces of the list do not join", Pos::default())
}

/// The head ends with the key `items` and (alone) no value: keep all but
/// the value and what closes the document, and open the items' sequence.
fn head(mut events: Located) -> Result<Located, YamlError> {
    let closing = [
        events.pop_back(),
        events.pop_back(),
        events.pop_back(),
        events.pop_back(),
    ];
    let shape_holds = matches!(
        &closing,
        [
            Some((Event::StreamEnd, _)),
            Some((Event::DocumentEnd, _)),
            Some((Event::MappingEnd, _)),
            Some((Event::Scalar(value, ScalarStyle::Plain, 0, None), _)),
        ] if value.is_empty() || value == "~"
    ) && matches!(
        events.back(),
        Some((Event::Scalar(key, ScalarStyle::Plain, 0, None), _)) if key == "items"
    );
    if !shape_holds {
        return Err(mismatch());
    }
    let span = closing[3].as_ref().map(|(_, at)| *at).unwrap_or_default();
    events.push_back((Event::SequenceStart(StructureStyle::Block, 0, None), span));
    Ok(events)
}

/// A piece of items parses as a sequence of them: keep what is inside.
fn items(mut events: Located) -> Result<Located, YamlError> {
    let opened = matches!(
        (events.pop_front(), events.pop_front(), events.pop_front()),
        (
            Some((Event::StreamStart, _)),
            Some((Event::DocumentStart(false, None), _)),
            Some((Event::SequenceStart(StructureStyle::Block, 0, None), _)),
        )
    );
    let closed = matches!(
        (events.pop_back(), events.pop_back(), events.pop_back()),
        (
            Some((Event::StreamEnd, _)),
            Some((Event::DocumentEnd, _)),
            Some((Event::SequenceEnd, _)),
        )
    );
    if !(opened && closed) {
        return Err(mismatch());
    }
    Ok(events)
}

/// The tail closes the items, then goes on with their mapping (its next
/// keys), or, after a document marker, closes it and reads on.
fn tail(mut events: Located, is_document: bool) -> Result<Located, YamlError> {
    let at = events.front().map(|(_, span)| *span).unwrap_or_default();
    if !matches!(events.pop_front(), Some((Event::StreamStart, _))) {
        return Err(mismatch());
    }
    let only_comments = matches!(events.front(), Some((Event::StreamEnd, _)));
    if is_document || only_comments {
        events.push_front((Event::DocumentEnd, at));
        events.push_front((Event::MappingEnd, at));
    } else {
        let continues = matches!(
            (events.pop_front(), events.pop_front()),
            (
                Some((Event::DocumentStart(false, None), _)),
                Some((Event::MappingStart(StructureStyle::Block, 0, None), _)),
            )
        );
        if !continues {
            return Err(mismatch());
        }
    }
    events.push_front((Event::SequenceEnd, at));
    // The tail's own StreamEnd ends the whole stream.
    Ok(events)
}

impl<R: BufRead> Source<'static> for Pieces<'_, R> {
    fn next_event(&mut self) -> Option<Result<(Event<'static>, Pos), YamlError>> {
        loop {
            if let Some(event) = self.current.pop_front() {
                // The head's and every later piece's stream start are one.
                return Some(Ok(event));
            }
            if self.ended {
                return None;
            }
            match self.take(self.next) {
                Ok((role, events)) => {
                    let done = std::mem::replace(&mut self.current, events);
                    locked(&self.shared.spare).push(done);
                    self.next += 1;
                    self.ended = matches!(role, Role::Tail { .. });
                }
                Err(e) => {
                    self.ended = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::read_all;
    use super::*;

    /// An event, with its place when it is a scalar's (the only places
    /// the decoder reads: a key's line, where a value was wrong).
    fn shown(event: &Event<'_>, at: Pos) -> String {
        match event {
            Event::Scalar(..) => format!("{event:?} {}:{}", at.line(), at.col()),
            _ => format!("{event:?}"),
        }
    }

    /// The events shown, anchors numbered in the order they come (pieces
    /// number theirs apart, one parser from 1).
    fn shown_all(events: Vec<(Event<'_>, Pos)>) -> Vec<String> {
        let mut ids = std::collections::HashMap::new();
        let mut renumber = |id: usize| {
            if id == 0 {
                return 0;
            }
            let next = ids.len() + 1;
            *ids.entry(id).or_insert(next)
        };
        events
            .into_iter()
            .map(|(event, at)| {
                let event = match event {
                    Event::Scalar(v, style, a, t) => Event::Scalar(v, style, renumber(a), t),
                    Event::SequenceStart(style, a, t) => {
                        Event::SequenceStart(style, renumber(a), t)
                    }
                    Event::MappingStart(style, a, t) => Event::MappingStart(style, renumber(a), t),
                    Event::Alias(a) => Event::Alias(renumber(a)),
                    other => other,
                };
                shown(&event, at)
            })
            .collect()
    }

    /// Every event as one parser gives them.
    fn one_parser(text: &str) -> Vec<String> {
        shown_all(
            Parser::new_from_str_with_options(text, super::super::options())
                .map(|e| {
                    let (event, span) = e.unwrap();
                    (event, Pos::of(&span.start))
                })
                .collect(),
        )
    }

    fn first_difference(a: &[String], b: &[String]) -> String {
        let at = a
            .iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        format!(
            "event {at}: {:?} vs {:?} ({} vs {} events)",
            a.get(at),
            b.get(at),
            a.len(),
            b.len()
        )
    }

    /// The same, from the pieces; `None` when they do not join.
    fn in_pieces(text: &str, piece_bytes: usize) -> Option<Vec<String>> {
        let shared = Shared::new(text.as_bytes(), piece_bytes);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| shared.work());
            }
            let mut pieces = Pieces::new(&shared);
            let mut out = Vec::new();
            let joined = loop {
                match pieces.next_event() {
                    Some(Ok((event, span))) => {
                        let end = matches!(event, Event::StreamEnd);
                        out.push((event, span));
                        if end {
                            break true;
                        }
                    }
                    Some(Err(_)) | None => break false,
                }
            };
            shared.stop();
            joined.then(|| shown_all(out))
        })
    }

    /// The pieces a text is cut into, with their roles and first lines.
    fn cut(text: &str, piece_bytes: usize) -> Result<Vec<(Role, usize, String)>, YamlError> {
        let mut splitter = Splitter::new(text.as_bytes(), piece_bytes);
        let mut out = Vec::new();
        while let Some(piece) = splitter.next_piece()? {
            out.push((piece.role, piece.first_line, piece.text));
        }
        Ok(out)
    }

    fn fixtures() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cases");
        let mut out: Vec<(String, String)> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Cut between every item (the smallest pieces), every kubectl List
    /// among the fixtures gives the same events at the same places.
    #[test]
    fn every_list_fixture_in_pieces_gives_the_events_one_parser_gives() {
        let mut joined = 0;
        for (name, text) in fixtures() {
            let Ok(cut) = cut(&text, 1) else { continue };
            assert!(cut.len() >= 3, "{name}");
            // The pieces are the text, cut between lines.
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            for (_, first_line, piece) in &cut {
                let from = first_line - 1;
                let count = piece.split_inclusive('\n').count();
                assert_eq!(lines[from..from + count].concat(), *piece, "{name}");
            }
            assert_eq!(
                cut.iter().map(|(_, _, p)| p.as_str()).collect::<String>(),
                text,
                "{name}"
            );
            let whole = one_parser(&text);
            let Some(pieces) = in_pieces(&text, 1) else {
                // Only an alias to an item before may keep them apart.
                assert!(
                    whole.iter().any(|e| e.starts_with("Alias(")),
                    "{name}: did not join"
                );
                continue;
            };
            assert!(
                pieces == whole,
                "{name}: {}",
                first_difference(&pieces, &whole)
            );
            joined += 1;
        }
        assert!(joined >= 50, "{joined} lists read in pieces");
    }

    #[test]
    fn hard_lists_join_or_are_left_to_one_parser() {
        let item = |i: usize| {
            format!(
                "- apiVersion: v1\n  kind: ConfigMap\n  data:\n    script: |\n      - not an item\n      items:\n    quoted: \"two\n      lines\"\n  # a comment\n  metadata: {{name: c{i}}}\n"
            )
        };
        let items: String = (0..6).map(item).collect();
        let joins = [
            format!(
                "apiVersion: v1\nitems:\n{items}kind: List\nmetadata:\n  resourceVersion: \"\"\n"
            ),
            format!("# head\napiVersion: v1\nitems:\n\n# first\n{items}"),
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\n---\nitems:\n{items}---\nkind: Other\n...\n"
            ),
            format!("items:\n{items}...\n---\na: 1\n"),
            format!("items:\n-\n  a: 1\n{items}kind: List\n"),
        ];
        for text in &joins {
            let pieces = in_pieces(text, 1).unwrap_or_else(|| panic!("did not join:\n{text}"));
            let whole = one_parser(text);
            assert!(
                pieces == whole,
                "{text}: {}",
                first_difference(&pieces, &whole)
            );
        }
        let left = [
            // An alias into another piece.
            format!("items:\n- &a {{x: 1}}\n{items}- *a\n"),
            // A quoted scalar whose next line starts in column 0.
            format!("items:\n- a: \"x\n- y\"\n{items}"),
            // A flow sequence open over lines.
            format!("items:\n- [a,\n- b]\n{items}"),
            // `items:` as the text of a root block scalar.
            format!("--- |\nitems:\n{items}"),
        ];
        for text in &left {
            assert!(in_pieces(text, 1).is_none(), "joined:\n{text}");
        }
    }

    #[test]
    fn what_is_not_a_list_of_items_in_column_0_is_not_cut() {
        for text in [
            "items: []\n",
            "items:\n  - a\n  - b\n",
            "kind: List\nitems:\nkind: x\n",
            "a:\n  items:\n  - a\n  - b\n",
            "",
        ] {
            assert!(cut(text, 1).is_err(), "{text}");
            assert!(in_pieces(text, 1).is_none(), "{text}");
        }
        // A second List after the first is more than a tail.
        let second: String = (0..200_000).map(|i| format!("- {i}\n")).collect();
        let two = format!("items:\n- a\n- b\n---\nitems:\n{second}");
        assert!(two.len() > MAX_EDGE_BYTES);
        assert!(cut(&two, 1).is_err());
        assert!(cut(&two[..two.len() - second.len() + 10], 1).is_ok());
        // Bytes that are not UTF-8 are left to one parser to name.
        let mut splitter = Splitter::new(&b"items:\n- a\n- \xff\n"[..], 1);
        let head = splitter.next_piece().unwrap().unwrap();
        assert_eq!(head.role, Role::Head);
        assert_eq!(splitter.next_piece().unwrap().unwrap().text, "- a\n");
        assert!(splitter.next_piece().is_err(), "the piece holding the line");
        assert!(splitter.next_piece().is_ok_and(|p| p.is_none()));
        // So is a head that never reaches its items.
        let long_head = format!("a: {}\nitems:\n- a\n", "x".repeat(MAX_EDGE_BYTES));
        assert!(cut(&long_head, 1).is_err());
        // One item is one piece between the head and an empty tail.
        assert_eq!(
            cut("k: v\nitems:\n# c\n- a\n", 1).unwrap(),
            [
                (Role::Head, 1, "k: v\nitems:\n# c\n".to_string()),
                (Role::Items, 4, "- a\n".to_string()),
                (Role::Tail { is_document: false }, 5, String::new()),
            ]
        );
        assert_eq!(
            in_pieces("items:\n- a\n", 1),
            Some(one_parser("items:\n- a\n"))
        );
    }

    /// A read stopped early (here by the decoder) stops the workers, however
    /// many pieces are left.
    #[test]
    fn a_failed_read_stops_the_workers() {
        let items: String = (0..200).map(|i| format!("- a: {i}\n")).collect();
        let text = format!("items:\n{items}");
        let shared = Shared::new(text.as_bytes(), 1);
        let read = std::thread::scope(|scope| {
            scope.spawn(|| shared.work());
            let read = read_all::<_, bool>(Pieces::new(&shared), text.len());
            shared.stop();
            read
        });
        assert!(read.is_err());
    }

    /// Parts of a List item, each of which keeps the item's lines indented
    /// (as any YAML writer does): block scalars holding item-like lines,
    /// quoted scalars over lines, flow collections, comments, anchors used
    /// within the item.
    const PARTS: [&str; 10] = [
        "  kind: Pod\n",
        "  script: |\n    - not an item\n    items:\n\n    ---\n",
        "  quoted: \"one\n    two\"\n",
        "  flow: {a: [1, 2],\n    b: c}\n",
        "  # a comment\n",
        "\n",
        "  list:\n  - x\n  - y: 1\n",
        "  folded: >-\n    a\n    b\n",
        "  anchored: &own {p: 1}\n  again: *own\n",
        "  empty:\n",
    ];

    fn list(items: &[Vec<usize>], tail: usize) -> String {
        let mut text = String::from("apiVersion: v1\nitems:\n");
        for (i, parts) in items.iter().enumerate() {
            text.push_str(&format!("- name: item-{i}\n"));
            for &p in parts {
                text.push_str(PARTS[p]);
            }
        }
        text.push_str(
            [
                "kind: List\nmetadata:\n  resourceVersion: \"\"\n",
                "",
                "---\nkind: Other\n",
                "# only a comment\n",
            ][tail],
        );
        text
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// However a valid List is cut, its pieces give the events of one
        /// parser (an alias inside one item never keeps them apart).
        #[test]
        fn any_list_read_in_pieces_is_the_list_read_whole(
            items in proptest::collection::vec(
                proptest::collection::vec(0..PARTS.len(), 0..6),
                2..12,
            ),
            tail in 0usize..4,
            piece_bytes in 1usize..200,
        ) {
            let text = list(&items, tail);
            let whole = one_parser(&text);
            let pieces = in_pieces(&text, piece_bytes);
            proptest::prop_assert!(pieces.is_some(), "did not join:\n{}", text);
            let pieces = pieces.unwrap();
            proptest::prop_assert!(pieces == whole, "{}\n{}", first_difference(&pieces, &whole), text);
        }
    }
}
