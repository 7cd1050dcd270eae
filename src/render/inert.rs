//! The last step before bytes leave mdiag: whatever a view put together,
//! no character that does not show as itself reaches the reader raw
//! (docs/security.md, "Inert output"). The views already show text from
//! outside escaped ([`mdiag_core::inert`]); this is what holds when one of
//! them forgets, so a view cannot be the way in.

use std::io::{self, Write};

use mdiag_core::inert::{escape, invisible};

/// Text for a terminal or a file a person reads (the human views, HTML,
/// JUnit): newlines kept; with `color`, mdiag's own colour sequences kept
/// (`ESC [ digits;... m`, SGR only, which can change a colour and nothing
/// else); every other invisible character, an ESC that starts anything
/// but SGR included, as its visible escape.
pub fn text(rendered: &str, color: bool) -> String {
    if !rendered.chars().any(|c| invisible(c) && c != '\n') {
        return rendered.to_string();
    }
    let mut out = String::with_capacity(rendered.len() + 32);
    let mut rest = rendered;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}'
            && color
            && let Some(len) = sgr_len(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if c != '\n' && invisible(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The length of a Select Graphic Rendition sequence at the start of
/// `text` (`ESC [`, parameters of digits and `;`, `m`), if one is there.
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\u{1b}[")?;
    let n = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (params.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1)
}

/// JSON text with every invisible character serde_json leaves raw (C1
/// controls, DEL, bidi and zero-width characters: it escapes only C0) as
/// a `\uXXXX` escape: the same data, nothing a terminal acts on. They can
/// only stand inside strings, where that escape is valid JSON.
pub fn json(encoded: &str) -> String {
    if !encoded.chars().any(invisible_in_json) {
        return encoded.to_string();
    }
    let mut out = String::with_capacity(encoded.len() + 32);
    for c in encoded.chars() {
        if invisible_in_json(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Invisible characters other than the newline and the spaces pretty JSON
/// itself writes (serde_json escapes every control inside strings).
fn invisible_in_json(c: char) -> bool {
    invisible(c) && c != '\n'
}

/// A writer that passes JSON through [`json`] as it streams, so a report
/// too big to hold is made inert without being held. Characters are
/// never split: a UTF-8 sequence cut by a write waits for its end.
pub struct InertJson<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> InertJson<W> {
    pub fn new(inner: W) -> Self {
        InertJson {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for InertJson<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        };
        let text = std::str::from_utf8(&self.pending[..valid]).expect("checked above");
        self.inner.write_all(json(text).as_bytes())?;
        self.pending.drain(..valid);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// YAML text with nothing raw a terminal acts on. serde-saphyr escapes
/// controls inside double quotes, but writes bidi and zero-width
/// characters as they are, and may do so in a plain scalar, where no
/// escape exists. Such a document is given as its JSON instead, which YAML
/// 1.2 reads as the same data.
pub fn yaml(
    encoded: String,
    as_json: impl FnOnce() -> anyhow::Result<String>,
) -> anyhow::Result<String> {
    if encoded.chars().any(|c| invisible(c) && c != '\n') {
        return Ok(json(&as_json()?));
    }
    Ok(encoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_colour_survives_and_only_when_asked() {
        let hostile = "pod \u{1b}]52;c;aGk=\u{7} \u{1b}[2J \u{9b}1m \u{202e}x\r\n";
        let plain = text(hostile, false);
        assert_eq!(
            plain,
            "pod \\x1b]52;c;aGk=\\x07 \\x1b[2J \\u{009b}1m \\u{202e}x\\r\n"
        );
        let ours = "\u{1b}[1mbold\u{1b}[0m \u{1b}[31;1mred\u{1b}[39m";
        assert_eq!(text(ours, true), ours);
        assert_eq!(text(ours, false), ours.replace('\u{1b}', "\\x1b"));
        // An ESC [ that is not SGR is escaped even with colour.
        assert_eq!(text("\u{1b}[2J\u{1b}[H", true), "\\x1b[2J\\x1b[H");
    }

    #[test]
    fn json_stays_the_same_data() {
        let v = serde_json::json!({"name": "a\u{202e}b\u{85}c\u{1b}\u{e0041}"});
        let raw = serde_json::to_string(&v).unwrap();
        let safe = json(&raw);
        assert!(!safe.chars().any(|c| invisible(c) && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
        let mut streamed = InertJson::new(Vec::new());
        for chunk in raw.as_bytes().chunks(3) {
            streamed.write_all(chunk).unwrap();
        }
        assert_eq!(String::from_utf8(streamed.inner).unwrap(), safe);
    }

    #[test]
    fn yaml_with_a_raw_bidi_is_given_as_json() {
        let v = serde_json::json!({"name": "a\u{202e}b"});
        let y = serde_saphyr::to_string(&v).unwrap();
        let out = yaml(y, || Ok(serde_json::to_string_pretty(&v)?)).unwrap();
        assert!(!out.chars().any(|c| invisible(c) && c != '\n'), "{out}");
        let back: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(back, v);
        let calm = serde_json::json!({"name": "ab"});
        let y = serde_saphyr::to_string(&calm).unwrap();
        assert_eq!(yaml(y.clone(), || unreachable!()).unwrap(), y);
    }
}
