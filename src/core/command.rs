//! A command mdiag tells a person (or an agent) to run: an argument vector,
//! never a string glued together from names. Names from a file were never
//! validated by an apiserver, so a Pod named `x$(touch /tmp/owned)` or one
//! holding a newline must still paste as exactly one command with exactly
//! these words (docs/security.md, "Commands").

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One command as its words. Shown shell-quoted ([`Command::shell`]), and
/// in `-o json` also as the array itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Command {
    argv: Vec<String>,
}

impl Command {
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Command {
            argv: argv.into_iter().map(Into::into).collect(),
        }
    }

    /// The words, as the program will receive them.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The words, to rewrite one in place (redaction).
    pub fn argv_mut(&mut self) -> &mut [String] {
        &mut self.argv
    }

    /// Adds words at the end.
    pub fn push<S: Into<String>>(&mut self, word: S) {
        self.argv.push(word.into());
    }

    /// The program, the first word.
    pub fn program(&self) -> Option<&str> {
        self.argv.first().map(String::as_str)
    }

    /// Whether any word is an unfilled `<placeholder>` (a name the target
    /// lacks), which the user has to fill in before running it.
    pub fn has_placeholder(&self) -> bool {
        self.argv.iter().any(|w| is_placeholder(w))
    }

    /// The command as one line a POSIX shell reads back into exactly
    /// [`Self::argv`]: see [`quote`].
    pub fn shell(&self) -> String {
        let mut out = String::new();
        for (i, word) in self.argv.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&quote(word));
        }
        out
    }

    /// Reads a shell line back into words (single and double quotes,
    /// backslashes, `$'...'`). `None` when the line does not parse.
    pub fn parse(line: &str) -> Option<Self> {
        split(line).map(|argv| Command { argv })
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shell())
    }
}

/// Serialized as the shell line (the schema's `next` and `check` strings);
/// the reports add the words beside it.
impl Serialize for Command {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.shell())
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let line = String::deserialize(d)?;
        Command::parse(&line)
            .ok_or_else(|| serde::de::Error::custom(format!("not a shell command line: {line:?}")))
    }
}

/// An unfilled placeholder as the catalogue leaves it: `<pod>`.
fn is_placeholder(word: &str) -> bool {
    word.len() > 2
        && word.starts_with('<')
        && word.ends_with('>')
        && word[1..word.len() - 1]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_')
}

/// Characters a word may hold and still be printed bare.
fn bare(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '-' | '+' | '.' | '/' | ':' | '@' | '=' | ',' | '%')
}

use crate::inert::invisible;

/// One word as a POSIX shell reads it back unchanged:
/// - bare when it is only letters, digits and `_-+./:@=,%` (and does not
///   start with `=`, which zsh expands);
/// - `'...'` otherwise, a `'` inside written `'\''`;
/// - `$'...'` (POSIX.1-2024, bash, zsh, ksh, busybox sh) when it holds a
///   character that does not show as itself, each such byte as `\xHH`, so
///   what is printed is both inert and exact.
pub fn quote(word: &str) -> String {
    if word.is_empty() {
        return "''".to_string();
    }
    // An unfilled placeholder is not a value anyone runs: quoting it would
    // pass `<pod>` to kubectl as a name; bare, a shell refuses the line.
    if (word.chars().all(bare) && !word.starts_with('=')) || is_placeholder(word) {
        return word.to_string();
    }
    if word.chars().any(invisible) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if invisible(c) => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    let mut out = String::from("'");
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Splits a shell line into words the way a POSIX shell would for a simple
/// command without expansions: blanks separate words; `'...'` is literal;
/// `"..."` keeps `\` only before `$`, `` ` ``, `"`, `\` and newline;
/// a bare `\` quotes the next character; `$'...'` takes `\xHH`, `\\`, `\'`,
/// `\n`, `\t`, `\r`, `\e`, `\a`, `\b`, `\f`, `\v` and `\0oo`-style octal.
/// `None` for an unterminated quote or a trailing backslash.
pub fn split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' => {
                if let Some(w) = word.take() {
                    words.push(String::from_utf8(w).ok()?);
                }
                i += 1;
            }
            b'\'' => {
                let w = word.get_or_insert_with(Vec::new);
                let end = bytes[i + 1..].iter().position(|&c| c == b'\'')? + i + 1;
                w.extend_from_slice(&bytes[i + 1..end]);
                i = end + 1;
            }
            b'"' => {
                let w = word.get_or_insert_with(Vec::new);
                i += 1;
                loop {
                    let c = *bytes.get(i)?;
                    match c {
                        b'"' => break,
                        b'\\' if matches!(bytes.get(i + 1), Some(b'$' | b'`' | b'"' | b'\\')) => {
                            w.push(bytes[i + 1]);
                            i += 2;
                        }
                        b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
                        c => {
                            w.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'$' if bytes.get(i + 1) == Some(&b'\'') => {
                let w = word.get_or_insert_with(Vec::new);
                i += 2;
                loop {
                    let c = *bytes.get(i)?;
                    match c {
                        b'\'' => break,
                        b'\\' => {
                            let e = *bytes.get(i + 1)?;
                            i += 2;
                            match e {
                                b'x' => {
                                    let hex: Vec<u8> = bytes[i..]
                                        .iter()
                                        .take(2)
                                        .take_while(|c| c.is_ascii_hexdigit())
                                        .copied()
                                        .collect();
                                    if hex.is_empty() {
                                        return None;
                                    }
                                    i += hex.len();
                                    w.push(
                                        u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16)
                                            .ok()?,
                                    );
                                }
                                b'0'..=b'7' => {
                                    let mut v: u32 = u32::from(e - b'0');
                                    let mut n = 1;
                                    while n < 3 && matches!(bytes.get(i), Some(b'0'..=b'7')) {
                                        v = v * 8 + u32::from(bytes[i] - b'0');
                                        i += 1;
                                        n += 1;
                                    }
                                    w.push(u8::try_from(v).ok()?);
                                }
                                b'n' => w.push(b'\n'),
                                b't' => w.push(b'\t'),
                                b'r' => w.push(b'\r'),
                                b'e' | b'E' => w.push(0x1b),
                                b'a' => w.push(0x07),
                                b'b' => w.push(0x08),
                                b'f' => w.push(0x0c),
                                b'v' => w.push(0x0b),
                                e => w.push(e),
                            }
                        }
                        c => {
                            w.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'\\' => {
                let c = *bytes.get(i + 1)?;
                if c != b'\n' {
                    word.get_or_insert_with(Vec::new).push(c);
                }
                i += 2;
            }
            c => {
                word.get_or_insert_with(Vec::new).push(c);
                i += 1;
            }
        }
    }
    if let Some(w) = word {
        words.push(String::from_utf8(w).ok()?);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(argv: &[&str]) {
        let c = Command::new(argv.iter().copied());
        let line = c.shell();
        assert_eq!(split(&line).as_deref(), Some(c.argv()), "{line}");
        assert!(
            !line.chars().any(invisible),
            "{line:?} holds a raw invisible"
        );
    }

    #[test]
    fn plain_words_stay_bare() {
        let c = Command::new(["kubectl", "-n", "lab", "logs", "web-1", "-c", "server"]);
        assert_eq!(c.shell(), "kubectl -n lab logs web-1 -c server");
        assert_eq!(
            Command::new([
                "--field-selector",
                "involvedObject.name=web-1,reason=Failed"
            ])
            .shell(),
            "--field-selector involvedObject.name=web-1,reason=Failed"
        );
    }

    #[test]
    fn hostile_names_paste_as_one_word() {
        round_trip(&["kubectl", "get", "pod", "x$(touch /tmp/owned)"]);
        round_trip(&["kubectl", "get", "pod", "x`id`;rm -rf ~"]);
        round_trip(&["kubectl", "get", "pod", "it's"]);
        round_trip(&["kubectl", "get", "pod", "a\nSERVING next: evil"]);
        round_trip(&["kubectl", "get", "pod", "\u{1b}]52;c;aGk=\u{7}"]);
        round_trip(&["kubectl", "get", "pod", "abc\u{202e}txt.exe"]);
        round_trip(&[
            "kubectl",
            "get",
            "pod",
            "zero\u{200b}width",
            "back\\slash'q",
        ]);
        round_trip(&["-o", "jsonpath={range .items[*]}{.name}{\"\\n\"}{end}"]);
        round_trip(&["", "=x", "~root", "*", "!!", "#c", "{a,b}"]);
        assert_eq!(quote("x$(id)"), "'x$(id)'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("a\u{1b}b"), "$'a\\x1bb'");
        assert_eq!(quote("\u{202e}"), "$'\\xe2\\x80\\xae'");
    }

    #[test]
    fn placeholders_are_seen() {
        assert!(Command::new(["kubectl", "logs", "<pod>"]).has_placeholder());
        assert!(!Command::new(["kubectl", "logs", "<a-b>"]).has_placeholder());
        assert!(!Command::new(["kubectl", "logs", "web"]).has_placeholder());
    }

    #[test]
    fn split_reads_what_shells_read() {
        assert_eq!(
            split(r#"a 'b c' "d \"e\" \$f \g" h\ i $'\x41\n\'' "#),
            Some(vec![
                "a".into(),
                "b c".into(),
                "d \"e\" $f \\g".into(),
                "h i".into(),
                "A\n'".into()
            ])
        );
        assert_eq!(split("'open"), None);
        assert_eq!(split("tail\\"), None);
        assert_eq!(split(""), Some(vec![]));
    }

    #[test]
    fn serde_is_the_shell_line() {
        let c = Command::new(["mdiag", "trace", "a b"]);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#""mdiag trace 'a b'""#);
        let back: Command = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
