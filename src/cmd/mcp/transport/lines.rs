//! The lines of the transport: one read line parsed or answered, one
//! message encoded (inert, within the cap), the writer task.

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::MAX_ANSWER_BYTES;

pub(super) enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// A notification this server does not take: never answered.
    Ignored,
    Reply(Vec<u8>),
}

pub(super) fn parse(text: &[u8]) -> Parsed {
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
pub(super) fn error_line(id: Option<Value>, code: ErrorCode, message: &str) -> Vec<u8> {
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
pub(super) fn encode(item: &TxJsonRpcMessage<RoleServer>) -> Result<Vec<u8>, std::io::Error> {
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

pub(super) fn closed(why: impl Into<Cow<'static, str>>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, why.into().into_owned())
}

/// Writes the queued lines in order, each flushed, until every sender is
/// gone or stdout fails.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if write.write_all(&line).await.is_err() || write.flush().await.is_err() {
            return;
        }
    }
}
