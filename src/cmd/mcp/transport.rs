//! The stdio transport of `mdiag mcp`: newline-delimited JSON-RPC, bounded
//! both ways, answering what it cannot take.
//!
//! rmcp's own stdio transport drops an oversized line and ignores one that
//! is not JSON without a word, so a client waits for an answer that never
//! comes. Here every line is read with a cap ([`MAX_MESSAGE_BYTES`]; the
//! rest of a longer line is skipped as it arrives, never buffered) and
//! answered when it cannot be taken: too long or not a JSON-RPC message is
//! an Invalid Request (-32600), not JSON a Parse error (-32700), a request
//! whose params do not fit Invalid params (-32602), each with the request's
//! id when it could be read (else `null`), and the session goes on. A
//! notification is never answered (JSON-RPC). Every line sent is at most
//! [`MAX_ANSWER_BYTES`]: a longer answer is replaced by an error for its id.
//!
//! All writes go through one task in the order they are queued, so an
//! answer and an error reply never interleave on stdout.

use std::borrow::Cow;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line (one JSON-RPC message, not counting its newline) the
/// server reads: a tool call's arguments are a few hundred bytes, so this
/// is room for any real request and no room to exhaust memory.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// The longest line the server writes. A tool's answer is capped below it
/// (`super::MAX_REPORT_BYTES`, `super::MAX_TEXT_BYTES`); this bounds
/// everything else too.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// How long closing waits for the queued lines to be written (a client
/// that closed its stdin may have stopped reading ours).
const FLUSH_ON_CLOSE: Duration = Duration::from_secs(5);

/// Lines waiting for the writer: enough for bursts of concurrent answers,
/// few enough that a client that stops reading holds up the senders.
const QUEUE: usize = 64;

pub struct Bounded<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Skipping the tail of an oversized line, already answered.
    discarding: bool,
    /// A reply to a line that could not be taken, queued before reading on
    /// (kept here so that a `receive` cancelled while queueing loses nothing).
    reply: Option<Vec<u8>>,
    out: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
}

enum Read {
    Line,
    Oversized,
    Eof,
    Failed(std::io::Error),
}

impl<R: AsyncRead + Unpin + Send> Bounded<R> {
    /// Must be called inside the runtime: it starts the writer task.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        Bounded {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            reply: None,
            out: Some(tx),
            writer: Some(tokio::spawn(write_lines(write, rx))),
        }
    }

    /// One line into `self.line`, never past [`MAX_MESSAGE_BYTES`].
    /// Cancel-safe: the bytes taken from the buffer are copied (or skipped)
    /// with no await in between, so a cancelled read resumes where it was.
    async fn read_line(&mut self) -> Read {
        loop {
            let (used, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(a) => a,
                    Err(e) => return Read::Failed(e),
                };
                if available.is_empty() {
                    return Read::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                // The newline (and a \r before it) is not counted.
                let content = newline.map_or(take, |i| i);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + content > MAX_MESSAGE_BYTES + 1 {
                    // One byte of slack for a \r before the newline; the
                    // exact length is checked once the line is whole.
                    self.line.clear();
                    self.discarding = newline.is_none();
                    (take, Some(Read::Oversized))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| Read::Line))
                }
            };
            self.read.consume(used);
            if let Some(done) = done {
                return done;
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for Bounded<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let line = encode(&item);
        async move {
            let out = out.ok_or_else(|| closed("the transport is closed"))?;
            out.send(line?)
                .await
                .map_err(|_| closed("stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.reply.is_some() {
                let permit = self.out.as_ref()?.reserve().await.ok()?;
                permit.send(self.reply.take().unwrap_or_default());
            }
            match self.read_line().await {
                Read::Line => {}
                Read::Oversized => {
                    self.reply = Some(error_line(
                        None,
                        ErrorCode::INVALID_REQUEST,
                        &format!(
                            "the message is longer than {MAX_MESSAGE_BYTES} bytes (1 MiB), the most `mdiag mcp` reads in one line; it was skipped"
                        ),
                    ));
                    continue;
                }
                Read::Eof => return None,
                Read::Failed(e) => {
                    eprintln!("mdiag mcp: cannot read standard input: {e}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
            text = text.strip_suffix(b"\r").unwrap_or(text);
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if text.len() > MAX_MESSAGE_BYTES {
                self.reply = Some(error_line(
                    None,
                    ErrorCode::INVALID_REQUEST,
                    &format!(
                        "the message is longer than {MAX_MESSAGE_BYTES} bytes (1 MiB), the most `mdiag mcp` reads in one line; it was skipped"
                    ),
                ));
                continue;
            }
            match parse(text) {
                Parsed::Message(m) => return Some(*m),
                Parsed::Ignored => {}
                Parsed::Reply(r) => self.reply = Some(r),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.out.take());
        if let Some(writer) = self.writer.take() {
            let _ = tokio::time::timeout(FLUSH_ON_CLOSE, writer).await;
        }
        Ok(())
    }
}

enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// A notification this server does not take: never answered.
    Ignored,
    Reply(Vec<u8>),
}

fn parse(text: &[u8]) -> Parsed {
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(m) => return Parsed::Message(Box::new(m)),
        Err(e) => e,
    };
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        return Parsed::Reply(error_line(
            None,
            ErrorCode::PARSE_ERROR,
            &format!("Parse error: the line is not JSON ({error})"),
        ));
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    let method = value.get("method").and_then(Value::as_str);
    match (method, id) {
        // A notification (no id) is never answered, even when it is wrong.
        (Some(_), None) if value.get("id").is_none() => Parsed::Ignored,
        (Some(method), Some(id)) => Parsed::Reply(error_line(
            Some(id),
            ErrorCode::INVALID_PARAMS,
            &format!("Invalid params for {method}: {error}"),
        )),
        (_, id) => Parsed::Reply(error_line(
            id,
            ErrorCode::INVALID_REQUEST,
            &format!("Invalid Request: not a JSON-RPC 2.0 message ({error})"),
        )),
    }
}

/// A JSON-RPC error response as one line. `id: null` when the request's
/// could not be read, as JSON-RPC 2.0 says.
fn error_line(id: Option<Value>, code: ErrorCode, message: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code.0, "message": message},
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// A message as its line; one over [`MAX_ANSWER_BYTES`] becomes an error
/// for its id (an answer), or is not sent.
fn encode(item: &TxJsonRpcMessage<RoleServer>) -> Result<Vec<u8>, std::io::Error> {
    let line = serde_json::to_vec(item).map_err(std::io::Error::other)?;
    // Inert as every JSON mdiag writes: what serde_json leaves raw (C1,
    // bidi, zero-width characters) as `\uXXXX` escapes, the same data.
    let mut line = match String::from_utf8(line) {
        Ok(text) => mdiag_render::inert::json(&text).into_bytes(),
        Err(e) => e.into_bytes(),
    };
    if line.len() > MAX_ANSWER_BYTES {
        let id = match item {
            JsonRpcMessage::Response(r) => serde_json::to_value(&r.id).ok(),
            JsonRpcMessage::Error(e) => e.id.as_ref().and_then(|id| serde_json::to_value(id).ok()),
            _ => None,
        };
        let Some(id) = id else {
            return Err(std::io::Error::other(format!(
                "a message of {} bytes is over the {MAX_ANSWER_BYTES} `mdiag mcp` sends",
                line.len()
            )));
        };
        return Ok(error_line(
            Some(id),
            ErrorCode::INTERNAL_ERROR,
            &format!(
                "the answer is {} bytes, over the {MAX_ANSWER_BYTES} (16 MiB) `mdiag mcp` sends in one message; narrow the call",
                line.len()
            ),
        ));
    }
    line.push(b'\n');
    Ok(line)
}

fn closed(why: impl Into<Cow<'static, str>>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, why.into().into_owned())
}

/// Writes the queued lines in order, each flushed, until every sender is
/// gone or stdout fails.
async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if write.write_all(&line).await.is_err() || write.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Feeds `input` to a transport and returns the messages it passed on
    /// and what it wrote back.
    async fn run(input: Vec<u8>) -> (Vec<RxJsonRpcMessage<RoleServer>>, String) {
        let (out_w, mut out_r) = tokio::io::duplex(1 << 16);
        let mut t = Bounded::new(std::io::Cursor::new(input), out_w);
        let mut got = Vec::new();
        while let Some(m) = t.receive().await {
            got.push(m);
        }
        t.close().await.unwrap();
        drop(t);
        let mut written = String::new();
        out_r.read_to_string(&mut written).await.unwrap();
        (got, written)
    }

    fn lines(written: &str) -> Vec<Value> {
        written
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

    #[tokio::test]
    async fn every_line_it_cannot_take_is_answered_and_the_next_is_read() {
        let mut input = Vec::new();
        input.extend_from_slice(b"this is not json\n");
        input.extend_from_slice(&vec![b'x'; MAX_MESSAGE_BYTES + 10]);
        input.extend_from_slice(b"\n");
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":5}"#);
        input.extend_from_slice(b"\n[1,2]\n");
        input.extend_from_slice(
            br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#,
        );
        input.extend_from_slice(b"\n\n");
        input.extend_from_slice(PING.as_bytes());
        input.extend_from_slice(b"\r\n");
        let (got, written) = run(input).await;
        assert_eq!(got.len(), 1, "{written}");
        let replies = lines(&written);
        let codes: Vec<i64> = replies
            .iter()
            .map(|r| r["error"]["code"].as_i64().unwrap())
            .collect();
        assert_eq!(codes, [-32700, -32600, -32602, -32600], "{written}");
        assert_eq!(replies[0]["id"], Value::Null);
        assert_eq!(replies[2]["id"], "a");
        assert!(
            replies[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than 1048576 bytes"),
            "{written}"
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_cap_is_read() {
        let pad = MAX_MESSAGE_BYTES - PING.len();
        let mut line = PING.trim_end_matches('}').to_string();
        line.push_str(&format!(",\"x\":\"{}\"}}", "y".repeat(pad - 7)));
        assert_eq!(line.len(), MAX_MESSAGE_BYTES);
        let (got, written) = run(format!("{line}\n{line}x\n").into_bytes()).await;
        assert_eq!(got.len(), 1, "{written}");
        assert_eq!(lines(&written).len(), 1, "{written}");
    }

    #[test]
    fn an_answer_over_the_cap_becomes_an_error_for_its_id() {
        let big = serde_json::json!({
            "jsonrpc": "2.0", "id": 3,
            "result": {"content": [{"type": "text", "text": "x".repeat(MAX_ANSWER_BYTES)}]}
        });
        let item: TxJsonRpcMessage<RoleServer> = serde_json::from_value(big).unwrap();
        let line = encode(&item).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32603);
        assert!(line.len() < 1024);
    }
}
