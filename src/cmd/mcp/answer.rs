//! A tool's answer: the work run off the session's tasks, its report and
//! text within the caps, or a tool error with the CLI's message.

use mdiag_core::catalogue::Lang;
use rmcp::model::{CallToolResult, ContentBlock};

use super::{MAX_REPORT_BYTES, MAX_TEXT_BYTES};

/// The tool's result: the report and the text answer, or a tool error
/// with the one-line message the CLI prints (`mdiag: MESSAGE`), each
/// within the caps ([`bounded`]).
///
/// The work runs on a blocking thread of its own, driven by the runtime's
/// handle as `main` drives a command: a live triage's read holds borrows
/// across its awaits that make its future not `Send`, and the analysis is
/// CPU work that should not hold up the session's own tasks.
pub(super) async fn answer<M, F>(tool: &str, lang: Lang, work: M) -> CallToolResult
where
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = anyhow::Result<(serde_json::Value, String)>>,
{
    let handle = tokio::runtime::Handle::current();
    let done = tokio::task::spawn_blocking(move || handle.block_on(work())).await;
    bounded(match done {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => Err(format!("{tool}: {}", crate::error::said(&err, lang))),
        Err(panic) => Err(format!("{tool}: the tool stopped unexpectedly: {panic}")),
    })
}

/// An answer within the caps: a text over [`MAX_TEXT_BYTES`] is cut, with
/// a line saying so; a report over [`MAX_REPORT_BYTES`] is not sent, and
/// the answer is a tool error saying how large it was and how to narrow
/// the call, with the text.
fn bounded(answer: Result<(serde_json::Value, String), String>) -> CallToolResult {
    match answer {
        Ok((report, text)) => {
            let size = serde_json::to_vec(&report).map_or(usize::MAX, |v| v.len());
            if size > MAX_REPORT_BYTES {
                let why = format!(
                    "the report is {size} bytes, over the {MAX_REPORT_BYTES} (8 MiB) `mdiag mcp` sends in one answer; narrow the call (a namespace, a selector, one target), or run the command with -o json"
                );
                return CallToolResult::error(vec![ContentBlock::text(cut(format!(
                    "{why}\n{text}"
                )))]);
            }
            // The report as text too, for a client that passes a model
            // only the content blocks; written inert as every JSON mdiag
            // writes.
            let json = mdiag_render::encode(&report, mdiag_render::Encoding::Json)
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            let mut result = CallToolResult::success(vec![
                ContentBlock::text(cut(text)),
                ContentBlock::text(json),
            ]);
            result.structured_content = Some(report);
            result
        }
        Err(message) => CallToolResult::error(vec![ContentBlock::text(cut(message))]),
    }
}

/// `text` within [`MAX_TEXT_BYTES`], cut at a character boundary and
/// ended with a line that says it was cut and from how much.
fn cut(text: String) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    let marker = format!(
        "\n[cut by mdiag mcp: the text is {} bytes; an answer carries at most {MAX_TEXT_BYTES}]",
        text.len()
    );
    let mut end = MAX_TEXT_BYTES - marker.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = text;
    out.truncate(end);
    out.push_str(&marker);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &CallToolResult) -> &str {
        &r.content[0].as_text().unwrap().text
    }

    #[test]
    fn a_long_text_is_cut_at_a_character_and_says_so() {
        let long = "é".repeat(MAX_TEXT_BYTES);
        let r = bounded(Err(long));
        let t = text(&r);
        assert!(t.len() <= MAX_TEXT_BYTES, "{}", t.len());
        assert!(t.ends_with(&format!(
            "[cut by mdiag mcp: the text is {} bytes; an answer carries at most {MAX_TEXT_BYTES}]",
            2 * MAX_TEXT_BYTES
        )));
        assert_eq!(r.is_error, Some(true));
        let short = bounded(Ok((serde_json::json!({"a": 1}), "headline".into())));
        assert_eq!(text(&short), "headline");
        assert_eq!(short.is_error, Some(false));
        let json: serde_json::Value =
            serde_json::from_str(&short.content[1].as_text().unwrap().text).unwrap();
        assert_eq!(json, serde_json::json!({"a": 1}));
    }

    #[test]
    fn a_report_over_the_cap_is_not_sent_and_the_answer_says_why() {
        let big = serde_json::json!({"items": "x".repeat(MAX_REPORT_BYTES)});
        let r = bounded(Ok((big, "3 workloads".into())));
        assert_eq!(r.is_error, Some(true));
        assert!(r.structured_content.is_none());
        let t = text(&r);
        assert!(
            t.starts_with("the report is 8388620 bytes, over the 8388608"),
            "{t}"
        );
        assert!(t.ends_with("\n3 workloads"), "{t}");
    }
}
