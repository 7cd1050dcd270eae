//! Each tool's `outputSchema`: the shape of the `mdiag/v1` report its
//! structured content carries (docs/json.md), so a client can check an
//! answer and a model can be told what it holds. The schemas name the
//! fields every report has and their types; fields added later within
//! `mdiag/v1` are allowed, as the contract allows them.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn object(schema: Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("every schema here is a JSON object"),
    }
}

fn nullable(kind: &str) -> Value {
    json!({"type": [kind, "null"]})
}

fn target() -> Value {
    json!({
        "type": "object",
        "required": ["kind", "namespace", "name", "uid"],
        "properties": {
            "kind": {"type": "string"},
            "namespace": {"type": "string"},
            "name": {"type": "string"},
            "uid": {"type": "string"}
        }
    })
}

fn finding() -> Value {
    json!({
        "type": "object",
        "required": ["id", "severity", "subject", "evidence", "check", "fix", "verify"],
        "properties": {
            "id": {"type": "string"},
            "severity": {"enum": ["error", "warning", "info"]},
            "subject": {"type": "object"},
            "evidence": {"type": "array"},
            "check": {"type": "array"},
            "fix": {"type": "string"},
            "verify": {"type": "string"}
        }
    })
}

/// The report of one workload, as `trace -o json` prints it; triage's
/// items are the same.
fn trace_report() -> Value {
    json!({
        "type": "object",
        "required": ["schema", "kind", "target", "healthy", "verdict", "steps", "pods", "findings", "gaps"],
        "properties": {
            "schema": {"const": "mdiag/v1"},
            "kind": {"const": "Trace"},
            "target": target(),
            "healthy": {"type": "boolean"},
            "verdict": {
                "type": "object",
                "required": ["state", "basis", "last_step", "missing", "next", "next_argv", "summary"],
                "properties": {
                    "state": {"enum": ["serving", "progressing", "degraded", "not-serving", "unknown"]},
                    "basis": {"enum": ["endpoints", "pods", "workload-status"]},
                    "last_step": nullable("string"),
                    "missing": nullable("string"),
                    "next": nullable("string"),
                    "next_argv": {"type": ["array", "null"], "items": {"type": "string"}},
                    "summary": {"type": "string"}
                }
            },
            "steps": {"type": "array", "items": {
                "type": "object",
                "required": ["step", "reached", "at"],
                "properties": {"step": {"type": "string"}, "reached": {"type": "boolean"}, "at": nullable("string")}
            }},
            "pods": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "uid", "moments", "serving", "last_step"],
                "properties": {"name": {"type": "string"}, "uid": {"type": "string"}, "moments": {"type": "object"}}
            }},
            "findings": {"type": "array", "items": finding()},
            "gaps": {"type": "array", "items": {
                "type": "object",
                "required": ["resource", "verb", "reason"],
                "properties": {"resource": {"type": "string"}, "verb": {"type": "string"}, "reason": {"type": "string"}}
            }}
        }
    })
}

fn triage_report() -> Value {
    let item = trace_report();
    json!({
        "type": "object",
        "required": ["schema", "kind", "total", "healthy", "items", "outside", "gaps"],
        "properties": {
            "schema": {"const": "mdiag/v1"},
            "kind": {"const": "Triage"},
            "total": {"type": "integer", "minimum": 0},
            "healthy": {"type": "integer", "minimum": 0},
            "items": {"type": "array", "items": item},
            "outside": {"type": "array"},
            "gaps": {"type": "array"}
        }
    })
}

pub(super) fn trace() -> Arc<JsonObject> {
    object(trace_report())
}

pub(super) fn triage() -> Arc<JsonObject> {
    object(triage_report())
}

pub(super) fn explain() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "required": ["schema", "kind", "query", "entries"],
        "properties": {
            "schema": {"const": "mdiag/v1"},
            "kind": {"const": "Explain"},
            "query": nullable("string"),
            "target": nullable("string"),
            "entries": {"type": "array", "items": {
                "type": "object",
                "required": ["id", "severity"],
                "properties": {"id": {"type": "string"}, "severity": {"enum": ["error", "warning", "info"]}}
            }}
        }
    }))
}

pub(super) fn snapshot_summary() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "required": ["schema", "kind", "source", "target", "namespace", "objects", "logs", "gaps", "redactions", "triage"],
        "properties": {
            "schema": {"const": "mdiag/v1"},
            "kind": {"const": "SnapshotSummary"},
            "source": {"type": "object", "required": ["kind", "location"]},
            "target": {"type": ["object", "null"]},
            "namespace": nullable("string"),
            "objects": {"type": "object"},
            "logs": {"type": "array"},
            "gaps": {"type": "array"},
            "redactions": {"type": "array"},
            "triage": triage_report()
        }
    }))
}
