//! Text from outside made inert: every name, message, image and log line
//! mdiag shows came from objects other people wrote, and in a file from
//! nobody an apiserver checked. A character that does not show as itself
//! (a control character, an escape sequence's ESC, a bidi override, a
//! zero-width character) is shown as a visible escape instead, so nothing
//! read can move the cursor, write the clipboard, retitle the terminal or
//! reorder what a person reads (docs/security.md, "Inert output").

use std::borrow::Cow;

/// Characters that do not show as themselves: C0 and C1 controls, DEL, and
/// the invisible format characters (soft hyphen, bidi marks, overrides and
/// isolates, zero-width characters, line and paragraph separators, word
/// joiners, BOM, interlinear annotation marks, tag characters).
pub fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// The visible escape of one invisible character: `\n`, `\r`, `\t`, `\xHH`
/// for the other ASCII controls, `\u{HHHH}` for the rest.
pub fn escape(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
    }
}

/// One piece of outside text, shown on one line: every invisible character
/// (newlines included) as its visible escape. Borrowed when nothing needed
/// escaping, which is nearly always.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text.chars().any(invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if invisible(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_shown_escaped() {
        assert_eq!(inert("plain 中文 text"), "plain 中文 text");
        assert!(matches!(inert("plain"), Cow::Borrowed(_)));
        assert_eq!(
            inert("\u{1b}]52;c;aGk=\u{7}\u{1b}[2J"),
            "\\x1b]52;c;aGk=\\x07\\x1b[2J"
        );
        assert_eq!(inert("ok\rFAKE\u{8}"), "ok\\rFAKE\\x08");
        assert_eq!(inert("a\nSERVING next: x"), "a\\nSERVING next: x");
        assert_eq!(inert("\u{9b}31m"), "\\u{009b}31m");
        assert_eq!(inert("gpt\u{202e}txt.exe"), "gpt\\u{202e}txt.exe");
        assert_eq!(
            inert("zero\u{200b}width\u{feff}"),
            "zero\\u{200b}width\\u{feff}"
        );
        for c in [
            '\u{0}',
            '\u{1b}',
            '\u{7f}',
            '\u{85}',
            '\u{2066}',
            '\u{e0041}',
        ] {
            assert!(invisible(c), "{c:?}");
            assert!(!inert(&c.to_string()).chars().any(invisible));
        }
    }
}
