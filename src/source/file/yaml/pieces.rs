//! A big `kubectl get -o yaml` List read on every core: its `items` are
//! cut into pieces at the lines where an item begins (`- ` in column 0
//! after a top-level `items:`), each piece is tokenized on a worker thread
//! on its own, and the pieces' events are handed to the decoder in order,
//! stitched back into the one document they came from, lines and all.
//!
//! A cut can only fall between two items of that sequence: a line in
//! column 0 cannot continue a block scalar or a plain scalar there, and a
//! quoted scalar or a flow collection cut in two leaves a piece that does
//! not parse. Whenever a piece does not parse, or does not end as the cut
//! says it must, the read is refused here and the caller reads the whole
//! text again with one parser ([`super::read_str`]), which also gives a
//! syntax error its true place. An alias to an anchor in another piece is
//! such a failure too.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};

use super::{Pos, Source, YamlError};

/// Pieces parsed ahead of the decoder, at most: each holds its events
/// (120 bytes each, a few per line) until the decoder reaches it.
const AHEAD: usize = 3;

/// The most text before the items, and after them, a cut allows.
const MAX_EDGE_BYTES: usize = 1 << 20;

/// How a text is cut: the part before the items, the items in pieces,
/// and the part after them.
#[derive(Debug)]
pub(crate) struct Cut<'t> {
    head: &'t str,
    /// Each piece with the line (from 1) it starts on.
    items: Vec<(usize, &'t str)>,
    tail: (usize, &'t str),
    /// The items end at a document marker (`---`, `...`), not at the next
    /// key of their mapping.
    tail_is_document: bool,
}

/// Where `text` can be cut into pieces of about `piece_bytes`, if it holds
/// a top-level `items:` with more than one piece of items in column 0.
pub(crate) fn cut(text: &str, piece_bytes: usize) -> Option<Cut<'_>> {
    let starts_item = |line: &str| line == "-" || line.starts_with("- ");
    // `items:` alone in column 0, then its first item (past blank lines
    // and comments).
    let mut at = 0;
    let mut after_items = false;
    let mut first_item = None;
    for l in text.split_inclusive('\n') {
        let content = l.trim_end();
        if after_items {
            let trimmed = content.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                at += l.len();
                continue;
            }
            if starts_item(content) {
                first_item = Some(at);
            }
            break;
        }
        after_items = content == "items:";
        at += l.len();
    }
    let first_item = first_item?;
    let head = &text[..first_item];
    let mut line = head.matches('\n').count() + 1;
    let mut items = Vec::new();
    let (mut piece_line, mut piece_at) = (line, first_item);
    let mut at = first_item;
    let mut end = None;
    for l in text[first_item..].split_inclusive('\n') {
        let content = l.trim_end();
        let item = starts_item(content);
        let in_column_0 = !l.starts_with([' ', '\t', '\r', '\n', '#']);
        if in_column_0 && !item {
            let document = content == "---" || content.starts_with("--- ") || content == "...";
            end = Some((line, at, document));
            break;
        }
        if item && at - piece_at >= piece_bytes {
            items.push((piece_line, &text[piece_at..at]));
            (piece_line, piece_at) = (line, at);
        }
        at += l.len();
        line += 1;
    }
    let (tail_line, tail_at, tail_is_document) = end.unwrap_or((line, text.len(), false));
    items.push((piece_line, &text[piece_at..tail_at]));
    // The head and the tail are each one piece, their events held whole:
    // a big document before or after the List (a second List) is left to
    // the one parser, which holds no events.
    let edges_small = head.len() <= MAX_EDGE_BYTES && text.len() - tail_at <= MAX_EDGE_BYTES;
    if items.len() < 2 || !edges_small {
        return None;
    }
    Some(Cut {
        head,
        items,
        tail: (tail_line, &text[tail_at..]),
        tail_is_document,
    })
}

type Located<'t> = VecDeque<(Event<'t>, Pos)>;
type Parsed<'t> = Result<Located<'t>, YamlError>;

/// The pieces' events in order, parsed by `workers` threads while the
/// decoder reads.
pub(crate) struct Pieces<'t, 's> {
    shared: &'s Shared<'t>,
    /// The events of the piece being read.
    current: VecDeque<(Event<'t>, Pos)>,
    /// The next piece to read (0 is the head, then the items, then the tail).
    next: usize,
    count: usize,
    failed: bool,
}

/// What the workers and the decoder share.
pub(crate) struct Shared<'t> {
    cut: Cut<'t>,
    claimed: AtomicUsize,
    state: Mutex<State<'t>>,
    changed: Condvar,
    /// Event buffers the decoder is done with, for the next pieces: a
    /// piece's buffer is megabytes, and a fresh one each time costs page
    /// faults and leaves the allocator's arenas fragmented.
    spare: Mutex<Vec<Located<'t>>>,
}

struct State<'t> {
    /// Parsed pieces not yet read, by index.
    done: Vec<Option<Parsed<'t>>>,
    /// The pieces the decoder has finished with.
    read: usize,
    /// The decoder stopped: workers stop too.
    stopped: bool,
}

impl<'t> Shared<'t> {
    pub(crate) fn new(cut: Cut<'t>) -> Self {
        let count = cut.items.len() + 2;
        Shared {
            cut,
            claimed: AtomicUsize::new(0),
            state: Mutex::new(State {
                done: (0..count).map(|_| None).collect(),
                read: 0,
                stopped: false,
            }),
            changed: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        }
    }

    fn count(&self) -> usize {
        self.cut.items.len() + 2
    }

    /// A worker: parses pieces as they are claimed, never more than
    /// [`AHEAD`] past what the decoder has read.
    pub(crate) fn work(&self) {
        loop {
            let index = self.claimed.fetch_add(1, Ordering::Relaxed);
            if index >= self.count() {
                return;
            }
            {
                let mut state = self.state.lock().expect("no worker panics holding it");
                while !state.stopped && index >= state.read + AHEAD {
                    state = self
                        .changed
                        .wait(state)
                        .expect("no worker panics holding it");
                }
                if state.stopped {
                    return;
                }
            }
            let parsed = self.parse(index);
            let mut state = self.state.lock().expect("no worker panics holding it");
            state.done[index] = Some(parsed);
            self.changed.notify_all();
        }
    }

    /// Tells the workers to stop (the decoder is done or failed).
    pub(crate) fn stop(&self) {
        let mut state = self.state.lock().expect("no worker panics holding it");
        state.stopped = true;
        self.changed.notify_all();
    }

    /// One piece's events, with their lines as in the whole text.
    fn parse(&self, index: usize) -> Parsed<'t> {
        let (first_line, text) = match index {
            0 => (1, self.cut.head),
            i if i <= self.cut.items.len() => self.cut.items[i - 1],
            _ => self.cut.tail,
        };
        let mut parser = Parser::new_from_str_with_options(text, super::options());
        // An alias into another piece is this parser's "unknown anchor",
        // and the whole text is read again. Each piece numbers its anchors
        // from its own offset (128 KiB cannot hold a million anchors).
        parser.set_anchor_offset(index.saturating_mul(1 << 20));
        let mut events = self
            .spare
            .lock()
            .expect("no thread panics holding it")
            .pop()
            .unwrap_or_default();
        // About one event in twelve bytes of a kubectl List.
        events.reserve(text.len() / 10);
        for event in parser {
            let (event, span) = event.map_err(|e| YamlError::scan(&e))?;
            events.push_back((event, Pos::of(&span.start).down(first_line - 1)));
        }
        Ok(events)
    }
}

impl<'t, 's> Pieces<'t, 's> {
    pub(crate) fn new(shared: &'s Shared<'t>) -> Self {
        Pieces {
            shared,
            current: VecDeque::new(),
            next: 0,
            count: shared.count(),
            failed: false,
        }
    }

    /// The events of piece `index`, waiting for a worker to parse it, cut
    /// to what they stand for in the whole document.
    fn take(&mut self, index: usize) -> Parsed<'t> {
        let parsed = {
            let mut state = self
                .shared
                .state
                .lock()
                .expect("no worker panics holding it");
            loop {
                if let Some(parsed) = state.done[index].take() {
                    state.read = index;
                    self.shared.changed.notify_all();
                    break parsed;
                }
                state = self
                    .shared
                    .changed
                    .wait(state)
                    .expect("no worker panics holding it");
            }
        };
        let events = parsed?;
        let last = self.count - 1;
        match index {
            0 => head(events),
            i if i == last => tail(events, self.shared.cut.tail_is_document),
            _ => items(events),
        }
    }
}

/// The stitching does not hold: the caller reads the whole text again.
fn mismatch() -> YamlError {
    YamlError::at("the pieces of the list do not join", Pos::default())
}

/// The head ends with the key `items` and (alone) no value: keep all but
/// the value and what closes the document, and open the items' sequence.
fn head(mut events: Located<'_>) -> Parsed<'_> {
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
fn items(mut events: Located<'_>) -> Parsed<'_> {
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
fn tail(mut events: Located<'_>, is_document: bool) -> Parsed<'_> {
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

impl<'t> Source<'t> for Pieces<'t, '_> {
    fn next_event(&mut self) -> Option<Result<(Event<'t>, Pos), YamlError>> {
        loop {
            if let Some(event) = self.current.pop_front() {
                // The head's and every later piece's stream start are one.
                return Some(Ok(event));
            }
            if self.failed || self.next == self.count {
                return None;
            }
            match self.take(self.next) {
                Ok(events) => {
                    let done = std::mem::replace(&mut self.current, events);
                    self.shared
                        .spare
                        .lock()
                        .expect("no thread panics holding it")
                        .push(done);
                    self.next += 1;
                }
                Err(e) => {
                    self.failed = true;
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
        let shared = Shared::new(cut(text, piece_bytes)?);
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
            let Some(cut) = cut(&text, 1) else { continue };
            assert!(cut.items.len() >= 2, "{name}");
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
            "items:\n- a\n",
            "a:\n  items:\n  - a\n  - b\n",
        ] {
            assert!(cut(text, 1).is_none(), "{text}");
        }
        // A second List after the first is more than a tail.
        let second: String = (0..200_000).map(|i| format!("- {i}\n")).collect();
        let two = format!("items:\n- a\n- b\n---\nitems:\n{second}");
        assert!(two.len() > MAX_EDGE_BYTES);
        assert!(cut(&two, 1).is_none());
        assert!(cut(&two[..two.len() - second.len() + 10], 1).is_some());
    }

    /// A read stopped early (here by the decoder) stops the workers, however
    /// many pieces are left.
    #[test]
    fn a_failed_read_stops_the_workers() {
        let items: String = (0..200).map(|i| format!("- a: {i}\n")).collect();
        let text = format!("items:\n{items}");
        let shared = Shared::new(cut(&text, 1).unwrap());
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
            // Items longer than the pieces asked for: one piece, no cut.
            proptest::prop_assume!(cut(&text, piece_bytes).is_some());
            let whole = one_parser(&text);
            let pieces = in_pieces(&text, piece_bytes);
            proptest::prop_assert!(pieces.is_some(), "did not join:\n{}", text);
            let pieces = pieces.unwrap();
            proptest::prop_assert!(pieces == whole, "{}\n{}", first_difference(&pieces, &whole), text);
        }
    }
}
