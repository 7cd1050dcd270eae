//! Fitting text into a width. Width is what a terminal shows: CJK takes two
//! columns and colour escapes none (`textwrap`'s display width, which uses
//! `unicode-width` and skips ANSI escapes). Prose is wrapped with
//! `textwrap`; commands are kept pasteable.

use textwrap::core::display_width;

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
/// others with `rest`. A word wider than a line is broken (a URL or a CJK
/// run has nowhere else to go).
pub fn wrap(text: &str, columns: usize, first: &str, rest: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return vec![first.trim_end().to_string()];
    }
    let options = textwrap::Options::new(columns.max(width(rest) + 8))
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(true)
        // First fit never passes the width; optimal fit may overflow a
        // line by a column or two when that balances the paragraph.
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        // Never at a hyphen: ids (`crash-loop`) and names stay whole.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options)
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
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
            *last = cut(&format!("{last} …"), columns);
        }
    }
    lines
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

/// Shell words of a command, split on spaces outside quotes, each kept as
/// written (quotes and backslashes included).
fn shell_words(command: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in command.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (Some('"'), '"') => quote = None,
            (_, '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ') => {
                if let Some(s) = start.take() {
                    words.push(&command[s..i]);
                }
                continue;
            }
            (None, _) => {}
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&command[s..]);
    }
    words
}

/// A command under a label, as it pastes into a shell. It stays on the
/// label's line when it fits; else it goes on its own line at `indent`;
/// if it is still too wide it is broken between shell words with ` \`
/// (the shell joins the lines back into the same command). A single word
/// wider than the line, such as a long quoted jsonpath, is never split:
/// a break inside quotes would change the argument kubectl receives, so
/// that line overflows instead. Returns plain lines; `paint` colours the
/// command text.
pub fn command(
    label: &str,
    text: &str,
    columns: usize,
    indent: usize,
    paint: &dyn Fn(&str) -> String,
) -> Vec<String> {
    if width(label) + width(text) <= columns {
        return vec![format!("{label}{}", paint(text))];
    }
    let mut out = Vec::new();
    if !label.trim().is_empty() {
        out.push(label.trim_end().to_string());
    }
    let first = " ".repeat(indent);
    if indent + width(text) <= columns {
        out.push(format!("{first}{}", paint(text)));
        return out;
    }
    // Greedy by shell words; every line but the last ends in ` \`, and the
    // lines after the first are indented two more.
    let mut groups: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in shell_words(text) {
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
    fn a_cut_line_ends_in_an_ellipsis_and_fits() {
        assert_eq!(cut("short", 10), "short");
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
        let cmd = "kubectl -n modeldock-lab get pod chart-demo-x -o jsonpath='{range .items[*]}{.name} restarts={.restartCount}{\"\\n\"}{end}' --context kind";
        let lines = command("    check   ", cmd, 60, 6, &|s| s.to_string());
        assert_eq!(lines[0], "    check");
        // Joined back as a shell joins `\`-newline, it is the same command.
        let joined: String = lines[1..]
            .iter()
            .map(|l| l.trim_start().trim_end_matches('\\').trim_end().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined, cmd);
        // The quoted jsonpath is one word: it overflows whole rather than split.
        assert!(
            lines
                .iter()
                .any(|l| l.contains("jsonpath='{range .items[*]}{.name} restarts="))
        );
        for l in &lines[1..lines.len() - 1] {
            assert!(l.ends_with(" \\"), "{l}");
        }
    }

    #[test]
    fn a_command_that_fits_stays_beside_its_label() {
        let lines = command("   next: ", "kubectl get pods", 80, 3, &|s| s.to_string());
        assert_eq!(lines, vec!["   next: kubectl get pods"]);
        let long = "kubectl -n modeldock-lab logs chart-demo-ntmp458kfb-pvgk2 -c server --previous";
        let lines = command("  next: ", long, 80, 2, &|s| s.to_string());
        assert_eq!(lines, vec!["  next:".to_string(), format!("  {long}")]);
    }
}
