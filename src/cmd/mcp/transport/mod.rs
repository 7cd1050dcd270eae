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

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ErrorCode;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

mod lines;
#[cfg(test)]
mod tests;

use lines::{Parsed, closed, encode, error_line, parse, write_lines};

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
