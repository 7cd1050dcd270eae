//! The transport, fed bytes: what it passes on and what it answers.

use super::*;
use serde_json::Value;
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
    input.extend_from_slice(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#);
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
