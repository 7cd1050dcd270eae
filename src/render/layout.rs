//! Fitting text into a width. Width is what a terminal shows: CJK takes two
//! columns and colour escapes none (`textwrap`'s display width, which uses
//! `unicode-width` and skips ANSI escapes). Prose is wrapped with
//! `textwrap`; commands are kept pasteable.

use mdiag_core::command::{Command, quote};
use textwrap::core::{Word, display_width};

/// Columns `text` takes on a terminal.
pub fn width(text: &str) -> usize {
    display_width(text)
}

/// `text` padded with spaces to `columns` (never cut): `{:<N}` counts
/// chars, so it misaligns CJK and counts colour escapes as columns.
pub fn pad(text: &str, columns: usize) -> String {
    let n = width(text);
    format!("{text}{}", " ".repeat(columns.saturating_sub(n)))
}

/// `text` right-aligned in `columns`.
pub fn pad_left(text: &str, columns: usize) -> String {
    let n = width(text);
    format!("{}{text}", " ".repeat(columns.saturating_sub(n)))
}

/// Prose wrapped to `columns`: the first line starts with `first`, the
/// others with `rest`. A word is never broken: a name, an image reference
/// or a URL wider than the line stands alone on its line and overflows it,
/// so it still copies whole with a double click (a CJK run is broken
/// between its characters, as Chinese is written).
pub fn wrap(text: &str, columns: usize, first: &str, rest: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return vec![first.trim_end().to_string()];
    }
    let options = textwrap::Options::new(columns.max(width(rest) + 8))
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
        // First fit never passes the width; optimal fit may overflow a
        // line by a column or two when that balances the paragraph.
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        // Never at a hyphen: ids (`crash-loop`) and names stay whole.
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        // At spaces, and between CJK characters: Chinese has no spaces, so
        // with spaces alone a line of it is one word, broken anywhere,
        // also inside the English object name it holds.
        .word_separator(textwrap::WordSeparator::Custom(spaces_and_cjk));
    textwrap::wrap(text, options)
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
}

/// Words for [`wrap`]: a run of spaces ends a word (as textwrap's
/// `AsciiSpace`), and so does every place between two characters where
/// one of them is CJK, except before closing punctuation (`，` `。` `）`)
/// and after opening punctuation (`（` `「`). A run of other characters
/// (`deployment/chart-demo`, `revision`, `2/2`) is never broken, unlike
/// with UAX #14, which also breaks after `/`.
/// A colour escape belongs to the character after it: the break goes
/// before the escape, so a line never ends in a colour switched on for
/// the next one (and keeps the space the break took off).
fn spaces_and_cjk(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    // Where the escapes since the last visible character began.
    let mut escapes_from: Option<usize> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' {
            escapes_from.get_or_insert(i);
            if chars.peek().is_some_and(|(_, n)| *n == '[') {
                chars.next();
                for (_, d) in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
            continue;
        }
        if let Some(p) = prev {
            let after_spaces = p == ' ' && c != ' ';
            // A no-break space glues what is on both sides of it.
            let glued = [p, c]
                .iter()
                .any(|x| matches!(x, '\u{a0}' | '\u{202f}' | '\u{2060}'));
            let between = p != ' ' && c != ' ' && !glued && (is_cjk(p) || is_cjk(c));
            let at = escapes_from.unwrap_or(i);
            if (after_spaces || (between && !closes(c) && !opens(p))) && at > start {
                words.push(Word::from(&line[start..at]));
                start = at;
            }
        }
        escapes_from = None;
        prev = Some(c);
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

/// Han, kana, Hangul, and the CJK and fullwidth punctuation written with them.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'       // Hangul Jamo
        | '\u{2E80}'..='\u{2FDF}'     // CJK radicals
        | '\u{3000}'..='\u{303F}'     // CJK symbols and punctuation
        | '\u{3040}'..='\u{30FF}'     // Hiragana, Katakana
        | '\u{3100}'..='\u{31FF}'     // Bopomofo, Katakana extensions
        | '\u{3200}'..='\u{4DBF}'     // enclosed CJK, compatibility, extension A
        | '\u{4E00}'..='\u{9FFF}'     // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}'     // Hangul syllables
        | '\u{F900}'..='\u{FAFF}'     // CJK compatibility ideographs
        | '\u{FE30}'..='\u{FE4F}'     // CJK compatibility forms
        | '\u{FF00}'..='\u{FFEF}'     // halfwidth and fullwidth forms
        | '\u{20000}'..='\u{3FFFF}'   // extensions B and on
    )
}

/// Punctuation a line must not start with.
fn closes(c: char) -> bool {
    "，。、：；！？）」』】〕〉》”’…—～．,.:;!?)]}%".contains(c)
}

/// Punctuation a line must not end with.
fn opens(c: char) -> bool {
    "（「『【〔〈《“‘([{".contains(c)
}

/// [`wrap`], at most `max` lines: the last one kept ends in `…` when text
/// was left out.
pub fn wrap_at_most(
    text: &str,
    columns: usize,
    first: &str,
    rest: &str,
    max: usize,
) -> Vec<String> {
    let mut lines = wrap(text, columns, first, rest);
    if lines.len() > max && max > 0 {
        lines.truncate(max);
        if let Some(last) = lines.last_mut() {
            // Whole words, then the mark: never `th…`, unless that would
            // leave out a long word at its end (then cut inside it).
            let full = width(last.trim_end());
            let mut kept = last.trim_end().to_string();
            while width(&kept) + 2 > columns {
                match kept.trim_end().rfind(' ') {
                    Some(space) if !kept[..space].trim().is_empty() => kept.truncate(space),
                    _ => break,
                }
            }
            *last = if width(&kept) + 2 <= columns && full.saturating_sub(width(&kept)) <= 12 {
                format!("{kept} …")
            } else {
                cut(&format!("{} …", last.trim_end()), columns)
            };
        }
    }
    lines
}

/// A message from the cluster in at most `max` lines, keeping what tells
/// it apart: Kubernetes and containerd put the cause last (`... i/o
/// timeout`, `... insufficient_scope`), so a message too long is first
/// rid of the references it repeats (an image named in every clause),
/// then kept as its first line, `…`, and as much of its end as fits.
pub fn wrap_keeping_tail(
    text: &str,
    columns: usize,
    first: &str,
    rest: &str,
    max: usize,
) -> Vec<String> {
    let lines = wrap(text, columns, first, rest);
    if lines.len() <= max || max == 0 {
        return lines;
    }
    let text = without_repeats(text);
    let lines = wrap(&text, columns, first, rest);
    if lines.len() <= max {
        return lines;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    // Keep the head's first line (what the message is about) when there
    // is room for a tail beside it; with one line, only the tail.
    let (head, skip) = if max > 1 {
        let head = lines[0].clone();
        // The words of the text on it (not those of its label).
        let on_it = lines[0].split_whitespace().count();
        (
            Some(head),
            on_it.saturating_sub(first.split_whitespace().count()),
        )
    } else {
        (None, 0)
    };
    let room = if head.is_some() { max - 1 } else { max };
    let lead = if head.is_some() { rest } else { first };
    for k in skip.max(1)..words.len() {
        let tail = format!("… {}", words[k..].join(" "));
        let tail_lines = wrap(&tail, columns, lead, rest);
        if tail_lines.len() <= room {
            return head.into_iter().chain(tail_lines).collect();
        }
    }
    // Not even its last word fits (a Pod's name with its UID): the head
    // then, which at least says what it is.
    wrap_at_most(&text, columns, first, rest, max)
}

/// `text` with each quoted reference it already named left out after its
/// first mention (`"registry.example.com/m:v1"` becomes `"…"`), as long
/// references repeat in the clauses a runtime error is built of; and
/// without the scheduler's closing `preemption: ...` clause, which counts
/// the nodes again and says no Pod could be evicted for this one, not why
/// it does not fit.
pub fn without_repeats(text: &str) -> String {
    let text = match text.find(" preemption: ") {
        Some(at) if text[..at].contains("nodes are available") => {
            // What follows the clause (`(and 1 more Pod)`) stays.
            let clause_end = text[at..].find(" (").map_or(text.len(), |end| at + end);
            format!("{}{}", &text[..at], &text[clause_end..])
        }
        _ => text.to_string(),
    };
    let text = text.as_str();
    const SHORTEST: usize = 12;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let Some(close) = rest[open + 1..].find('"').map(|c| open + 1 + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        let said = &text[..text.len() - rest.len() + open];
        out.push_str(&rest[..open]);
        if inner.chars().count() >= SHORTEST && said.contains(inner) {
            out.push_str("\"…\"");
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// `text` on one line of at most `columns`: when it must be shortened,
/// `…` and its last whole words, where a cluster's message says why.
pub fn cut_keeping_tail(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_string();
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    for k in 1..words.len() {
        let tail = format!("…{}", words[k..].join(" "));
        if width(&tail) <= columns {
            return tail;
        }
    }
    cut(text, columns)
}

/// `text` on one line of at most `columns`, ending in `…` when cut.
pub fn cut(text: &str, columns: usize) -> String {
    if width(text) <= columns {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > columns {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// A line from outside (a container log) made safe to print: escape
/// sequences and other control characters removed, tabs as spaces, so it
/// cannot move the cursor or recolour the terminal.
pub fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI (`ESC [ ... final`) or a two-character escape.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// A command under a label, as it pastes into a shell: its words, each
/// shell-quoted as [`Command::shell`] writes them. It stays on the
/// label's line when it fits; else it goes on its own line at `indent`;
/// if it is still too wide it is broken between words with ` \` (the
/// shell joins the lines back into the same command), never inside one.
/// A single word wider than the line, such as a long quoted jsonpath,
/// stays whole on a line of its own: a break inside quotes would change
/// the argument kubectl receives, so that line overflows instead. Every
/// view prints every command it shows through this, whole: it is never
/// cut, nor swapped for one that fits. Returns plain lines; `paint`
/// colours the command text.
pub fn command(
    label: &str,
    command: &Command,
    columns: usize,
    indent: usize,
    paint: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let words: Vec<String> = command.argv().iter().map(|w| quote(w)).collect();
    let text = words.join(" ");
    if width(label) + width(&text) <= columns {
        return vec![format!("{label}{}", paint(&text))];
    }
    let mut out = Vec::new();
    if !label.trim().is_empty() {
        out.push(label.trim_end().to_string());
    }
    let first = " ".repeat(indent);
    if indent + width(&text) <= columns {
        out.push(format!("{first}{}", paint(&text)));
        return out;
    }
    // Greedy by words; every line but the last ends in ` \`, and the lines
    // after the first are indented two more.
    let mut groups: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in &words {
        let room = columns.saturating_sub(indent + 2 * usize::from(!groups.is_empty()) + 2);
        if line.is_empty() {
            line.push_str(word);
        } else if width(&line) + 1 + width(word) <= room {
            line.push(' ');
            line.push_str(word);
        } else {
            groups.push(std::mem::take(&mut line));
            line.push_str(word);
        }
    }
    groups.push(line);
    let last = groups.len() - 1;
    for (i, g) in groups.iter().enumerate() {
        let lead = " ".repeat(indent + if i == 0 { 0 } else { 2 });
        let tail = if i == last { "" } else { " \\" };
        out.push(format!("{lead}{}{tail}", paint(g)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_takes_two_columns_and_colour_none() {
        assert_eq!(width("检查"), 4);
        assert_eq!(width("\u{1b}[31mfix\u{1b}[0m"), 3);
        assert_eq!(pad("检查", 7), "检查   ");
        assert_eq!(width(&pad("\u{1b}[2mcheck\u{1b}[0m", 7)), 7);
    }

    #[test]
    fn prose_wraps_inside_the_width() {
        let text = "Fix what the previous log shows, in the ModelService or the chart values: the arguments, the environment.";
        let lines = wrap(text, 40, "    fix  ", "         ");
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| width(l) <= 40), "{lines:?}");
        assert!(lines[0].starts_with("    fix  Fix"));
        let zh = wrap(&"容器启动后进程退出".repeat(10), 30, "  ", "  ");
        assert!(zh.iter().all(|l| width(l) <= 30), "{zh:?}");
    }

    #[test]
    fn chinese_breaks_between_characters_never_inside_an_english_name() {
        let line = "✘ 服务降级  修订版 2 停在 started：容器反复崩溃 [crash-loop]；deployment/chart-demo 的修订版 1 仍在服务 2/2，先看上一次的日志";
        let name = "deployment/chart-demo";
        for columns in 30..=70 {
            let lines = wrap(line, columns, "", "  ");
            assert!(lines.iter().all(|l| width(l) <= columns), "{lines:?}");
            // The name, the id and the counts are on one line each, whole.
            for word in [name, "[crash-loop]", "2/2", "started："] {
                assert_eq!(
                    lines.iter().filter(|l| l.contains(word)).count(),
                    1,
                    "{word} at {columns}: {lines:?}"
                );
            }
            // Nothing is lost or added but the breaks and the indent.
            let joined: String = lines.iter().map(|l| l.trim_start()).collect();
            assert_eq!(joined.replace(' ', ""), line.replace(' ', ""));
            // Chinese fills its lines: a line ends before a Chinese
            // character only when that character (after the space the
            // break took, if any) does not fit.
            for pair in lines.windows(2) {
                let next = pair[1].trim_start().chars().next().unwrap();
                if is_cjk(next) && !closes(next) {
                    let room = columns - width(&pair[0]);
                    assert!(room < 1 + width(&next.to_string()), "{columns}: {pair:?}");
                }
            }
        }
        // Colour: the same breaks, the escape with the text it colours.
        let painted = "等待中 \u{1b}[2m最慢的一步\u{1b}[0m";
        for columns in 8..=12 {
            let lines = wrap(painted, columns, "", "");
            let plain: Vec<String> = lines
                .iter()
                .map(|l| l.replace("\u{1b}[2m", "").replace("\u{1b}[0m", ""))
                .collect();
            assert_eq!(
                plain,
                wrap("等待中 最慢的一步", columns, "", ""),
                "{lines:?}"
            );
        }
        // A no-break space keeps a mark with its Chinese word.
        let lines = wrap("一二三四五六 ←\u{a0}最慢", 16, "", "");
        assert_eq!(lines, ["一二三四五六", "←\u{a0}最慢"]);
        // No line starts with closing punctuation.
        let lines = wrap("甲乙丙丁戊己庚辛，壬癸", 16, "", "");
        assert!(lines.iter().all(|l| !l.starts_with('，')), "{lines:?}");
    }

    #[test]
    fn english_wraps_at_spaces_only() {
        let text = "Revision 2 stopped at started: CrashLoopBackOff [crash-loop]; revision 1 of deployment/chart-demo still serves 2/2, see kubectl -n modeldock-lab logs";
        for columns in 30..=90 {
            let plain = textwrap::Options::new(columns)
                .initial_indent("")
                .subsequent_indent("  ")
                .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .word_separator(textwrap::WordSeparator::AsciiSpace);
            let want: Vec<String> = textwrap::wrap(text, plain)
                .into_iter()
                .map(|l| l.into_owned())
                .collect();
            assert_eq!(wrap(text, columns, "", "  "), want);
        }
    }

    #[test]
    fn a_cut_line_ends_in_an_ellipsis_and_fits() {
        assert_eq!(cut("short", 10), "short");
        // The cause at the end of a pull error survives shortening; the
        // image it names in every clause is said once.
        let pull = "image r.example.com/m:v1: Failed to pull image \"r.example.com/m:v1\": failed to pull and unpack image \"r.example.com/m:v1\": failed to resolve reference \"r.example.com/m:v1\": pull access denied, repository does not exist or may require authorization: insufficient_scope";
        let lines = wrap_keeping_tail(pull, 60, "    ", "    ", 3);
        assert!(lines.len() <= 3, "{lines:#?}");
        assert!(
            lines.last().unwrap().ends_with("insufficient_scope"),
            "{lines:#?}"
        );
        assert!(lines[0].contains("image r.example.com/m:v1:"), "{lines:#?}");
        let joined = lines.join(" ");
        assert_eq!(joined.matches("r.example.com/m:v1").count(), 1, "{joined}");
        // The scheduler's cause is its filter, not its preemption clause.
        let pending = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod. (x2)";
        assert_eq!(
            without_repeats(pending),
            "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. (x2)"
        );
        // What fits is left alone.
        assert_eq!(
            wrap_keeping_tail("a short one", 60, "", "", 1),
            ["a short one"]
        );
        // A name wider than the line is not broken.
        let name = "chart-demo-ndb2px55kr-w5z79-with-a-long-suffix";
        let lines = wrap(&format!("pod {name} is waiting"), 20, "", "");
        assert!(lines.iter().any(|l| l == name), "{lines:#?}");
        let c = cut("FATAL missing env MODEL_PATH", 12);
        assert_eq!(c, "FATAL missi…");
        assert_eq!(width(&cut(&"模型".repeat(20), 11)), 11);
    }

    #[test]
    fn log_lines_lose_their_escapes() {
        assert_eq!(clean("\u{1b}[31mERROR\u{1b}[0m\tboom\r"), "ERROR    boom");
    }

    #[test]
    fn a_long_command_breaks_only_between_shell_words() {
        let cmd = Command::new([
            "kubectl",
            "-n",
            "modeldock-lab",
            "get",
            "pod",
            "chart-demo-x",
            "-o",
            "jsonpath={range .items[*]}{.name} restarts={.restartCount}{\"\\n\"}{end}",
            "--context",
            "kind",
        ]);
        for columns in [40, 60, 80] {
            let lines = command("    check   ", &cmd, columns, 6, &|s| s.to_string());
            assert_eq!(lines[0], "    check");
            // Joined back as a shell joins `\`-newline, it is the same command.
            let joined: String = lines[1..]
                .iter()
                .map(|l| l.trim_start().trim_end_matches('\\').trim_end().to_string())
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(joined, cmd.shell());
            assert_eq!(
                mdiag_core::command::split(&joined).as_deref(),
                Some(cmd.argv())
            );
            // The quoted jsonpath is one word: it overflows whole, on a line
            // of its own, rather than split.
            let jsonpath = quote(&cmd.argv()[7]);
            assert!(
                lines
                    .iter()
                    .any(|l| l.trim_start().trim_end_matches(" \\") == jsonpath),
                "{lines:?}"
            );
            for l in &lines[1..lines.len() - 1] {
                assert!(l.ends_with(" \\"), "{l}");
            }
            // Every other line fits.
            for l in lines.iter().filter(|l| !l.contains(&jsonpath)) {
                assert!(width(l) <= columns, "{columns}: {l}");
            }
        }
    }

    #[test]
    fn a_command_that_fits_stays_beside_its_label() {
        let short = Command::new(["kubectl", "get", "pods"]);
        let lines = command("   next: ", &short, 80, 3, &|s| s.to_string());
        assert_eq!(lines, vec!["   next: kubectl get pods"]);
        let long = Command::new([
            "kubectl",
            "-n",
            "modeldock-lab",
            "logs",
            "chart-demo-ntmp458kfb-pvgk2",
            "-c",
            "server",
            "--previous",
        ]);
        let lines = command("  next: ", &long, 80, 2, &|s| s.to_string());
        assert_eq!(
            lines,
            vec!["  next:".to_string(), format!("  {}", long.shell())]
        );
    }
}
