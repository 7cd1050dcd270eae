//! Reading snapshots from files: mdiag's own format, `kubectl get -o
//! yaml|json` output (a `List` or a single object) and multi-document YAML,
//! gzip-compressed when the name ends in `.gz`.

use std::io::Read;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::Value;

use super::format::{FORMAT_ID, FORMAT_VERSION, SnapshotFile};
use super::objects::{ObjectError, sort_object};
use crate::model::{Gap, Origin, OriginKind, Snapshot};

/// The largest snapshot we read (after decompression). Far above any real
/// namespace, low enough that a hostile file cannot exhaust memory.
pub const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The cause is part of the one sentence, not a source below it, so
    /// that the printed chain does not say it twice.
    #[error("{}", io_message(.path, .cause))]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{} is not valid gzip data ({cause}); drop the .gz suffix if the file is not compressed",
        .path.display()
    )]
    Gzip {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path} is larger than {limit} bytes; capture a smaller target or namespace")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path} is not valid UTF-8 text; is it a binary file?")]
    NotText { path: PathBuf },
    #[error("{path} is empty")]
    Empty { path: PathBuf },
    #[error("{path} is not valid {syntax}: {detail}")]
    Syntax {
        path: PathBuf,
        syntax: &'static str,
        detail: String,
    },
    #[error(
        "{path}: document {document} is not a Kubernetes object or list (it has no apiVersion and kind)"
    )]
    NotKubernetes { path: PathBuf, document: usize },
    #[error(
        "{path}: document {document} holds an item that is {found}, not an object; each item of a list must be a Kubernetes object"
    )]
    NotAnObject {
        path: PathBuf,
        document: usize,
        found: &'static str,
    },
    #[error(
        "{path} is an mdiag snapshot of format version {found}; this mdiag reads up to version {supported}: upgrade mdiag"
    )]
    FutureVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path} is not a valid mdiag snapshot: {detail}")]
    BadSnapshot { path: PathBuf, detail: String },
    #[error("{}: {cause}", .path.display())]
    BadObject { path: PathBuf, cause: ObjectError },
}

/// The path that means standard input (`--snapshot -`).
pub const STDIN_PATH: &str = "-";

/// What messages call standard input.
const STDIN_LABEL: &str = "standard input";

/// One sentence for a file that cannot be read: what is wrong and what to do.
fn io_message(path: &Path, cause: &std::io::Error) -> String {
    let path = path.display();
    match cause.kind() {
        std::io::ErrorKind::NotFound => {
            format!("{path} does not exist; check the path (`--snapshot -` reads standard input)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("{path} may not be read (permission denied); check its permissions")
        }
        std::io::ErrorKind::IsADirectory => {
            format!("{path} is a directory; name a snapshot file in it")
        }
        _ => format!("cannot read {path}: {cause}"),
    }
}

/// Reads any supported file into a [`Snapshot`]; `-` reads standard input
/// (gzip is recognised by its first bytes there, as there is no name).
pub fn read_snapshot_file(path: &Path) -> Result<Snapshot, SourceError> {
    let (bytes, path) = if path == Path::new(STDIN_PATH) {
        let label = Path::new(STDIN_LABEL);
        (read_stdin(label)?, label)
    } else {
        (read_bytes(path)?, path)
    };
    let text = String::from_utf8(bytes).map_err(|_| SourceError::NotText {
        path: path.to_path_buf(),
    })?;
    parse_snapshot_text(&text, path)
}

/// Standard input, whole, inflated when it starts with gzip's magic bytes.
fn read_stdin(label: &Path) -> Result<Vec<u8>, SourceError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_SNAPSHOT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|cause| SourceError::Io {
            path: label.to_path_buf(),
            cause,
        })?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut inflated = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(MAX_SNAPSHOT_BYTES + 1)
            .read_to_end(&mut inflated)
            .map_err(|cause| SourceError::Gzip {
                path: label.to_path_buf(),
                cause,
            })?;
        bytes = inflated;
    }
    if bytes.len() as u64 > MAX_SNAPSHOT_BYTES {
        return Err(SourceError::TooLarge {
            path: label.to_path_buf(),
            limit: MAX_SNAPSHOT_BYTES,
        });
    }
    Ok(bytes)
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, SourceError> {
    let io = |cause| SourceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    let mut bytes = Vec::new();
    // Read one byte past the cap so an oversized file is detected, not cut.
    let limit = MAX_SNAPSHOT_BYTES + 1;
    if gz {
        flate2::read::MultiGzDecoder::new(file)
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|cause| SourceError::Gzip {
                path: path.to_path_buf(),
                cause,
            })?;
    } else {
        file.take(limit).read_to_end(&mut bytes).map_err(io)?;
    }
    if bytes.len() as u64 > MAX_SNAPSHOT_BYTES {
        return Err(SourceError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_SNAPSHOT_BYTES,
        });
    }
    Ok(bytes)
}

/// The YAML parser's limits, scaled to the input: a kubectl dump of a big
/// cluster has millions of nodes, which the parser's defaults (sized for
/// configuration files) refuse. Node, event and scalar budgets grow with the
/// file (every node takes at least a byte), so a small file still cannot
/// expand into a large document; the alias limits that stop alias bombs stay.
fn yaml_options(input_bytes: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_reader_input_bytes = Some(MAX_SNAPSHOT_BYTES as usize);
    budget.max_events = budget.max_events.max(input_bytes);
    budget.max_nodes = budget.max_nodes.max(input_bytes);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(input_bytes);
    budget.max_documents = budget.max_documents.max(input_bytes / 64);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Parses file contents; `path` is used for messages and the origin.
pub fn parse_snapshot_text(text: &str, path: &Path) -> Result<Snapshot, SourceError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let documents = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        parse_json_documents(trimmed, path)?
    } else {
        serde_saphyr::from_multiple_with_options::<Value>(trimmed, yaml_options(trimmed.len()))
            .map_err(|e| SourceError::Syntax {
                path: path.to_path_buf(),
                syntax: "YAML",
                detail: first_line(&e.to_string()),
            })?
    };

    let mut snapshot = Snapshot {
        origin: Origin {
            kind: OriginKind::KubectlDump,
            location: path.display().to_string(),
            ..Origin::default()
        },
        ..Snapshot::default()
    };
    let mut seen_document = false;
    let mut listed = Listed::default();
    for (index, document) in documents.into_iter().enumerate() {
        if document.is_null() {
            continue;
        }
        seen_document = true;
        add_document(&mut snapshot, &mut listed, document, index + 1, path)?;
    }
    if !seen_document {
        return Err(SourceError::Empty {
            path: path.to_path_buf(),
        });
    }
    super::objects::slices_from_endpoints(&mut snapshot.objects);
    if snapshot.origin.kind == OriginKind::KubectlDump {
        let gaps = unlisted_kinds(&snapshot, &listed);
        snapshot.gaps.extend(gaps);
    }
    Ok(snapshot)
}

/// The kinds of typed lists a dump holds (`PodList`, even with no item):
/// what the API was asked for, so an empty one is really empty.
#[derive(Default)]
struct Listed(std::collections::BTreeSet<String>);

/// The kinds whose absence changes a judgement, with the resource kubectl
/// names them by. A kubectl dump holds only what it was asked for, so a kind
/// with no object (and no typed list) in it is unknown, not empty (SPEC
/// section 4): rules that would need its absence stay silent.
const JUDGED_KINDS: &[(&str, &str)] = &[
    ("ModelService", "modelservices"),
    ("Deployment", "deployments"),
    ("ReplicaSet", "replicasets"),
    ("Pod", "pods"),
    ("Service", "services"),
    ("EndpointSlice", "endpointslices"),
    ("Event", "events"),
    ("Lease", "leases"),
];

/// What a dump with every judged kind in it is made with.
pub const COMPLETE_DUMP_RESOURCES: &str =
    "msvc,deployments,replicasets,pods,services,endpointslices,events,leases";

/// A gap for every judged kind the dump has no object and no typed list of,
/// each with the `kubectl get` that would add it.
fn unlisted_kinds(snapshot: &Snapshot, listed: &Listed) -> Vec<Gap> {
    let o = &snapshot.objects;
    let present = |kind: &str| match kind {
        "ModelService" => !o.model_services.is_empty(),
        "Deployment" => !o.deployments.is_empty(),
        "ReplicaSet" => !o.replica_sets.is_empty(),
        "Pod" => !o.pods.is_empty(),
        "Service" => !o.services.is_empty(),
        "EndpointSlice" => !o.endpoint_slices.is_empty() || listed.0.contains("Endpoints"),
        "Event" => !o.events.is_empty(),
        "Lease" => !o.leases.is_empty(),
        _ => true,
    };
    let scope = match dump_namespaces(o).as_slice() {
        [one] => format!("-n {one}"),
        _ => "-A".to_string(),
    };
    JUDGED_KINDS
        .iter()
        .filter(|(kind, _)| !present(kind) && !listed.0.contains(*kind))
        .map(|(_, resource)| Gap {
            resource: resource.to_string(),
            namespace: None,
            verb: "list".into(),
            name: None,
            reason: Gap::NOT_IN_DUMP.into(),
            complete_with: Some(format!("kubectl get {resource} {scope} -o yaml")),
        })
        .collect()
}

/// The namespaces a dump's namespaced objects are in, sorted.
fn dump_namespaces(o: &crate::model::Objects) -> Vec<String> {
    use k8s_openapi::Metadata;
    fn of<T: Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>>(
        items: &[T],
    ) -> impl Iterator<Item = &str> {
        items
            .iter()
            .filter_map(|i| i.metadata().namespace.as_deref())
    }
    let mut out: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    out.extend(
        o.model_services
            .iter()
            .filter_map(|m| m.metadata.namespace.as_deref()),
    );
    out.extend(of(&o.deployments));
    out.extend(of(&o.replica_sets));
    out.extend(of(&o.pods));
    out.extend(of(&o.services));
    out.extend(of(&o.endpoint_slices));
    out.into_iter().map(str::to_string).collect()
}

/// JSON: one value, or several concatenated (as `kubectl get -o json` in a
/// loop writes them).
fn parse_json_documents(text: &str, path: &Path) -> Result<Vec<Value>, SourceError> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SourceError::Syntax {
            path: path.to_path_buf(),
            syntax: "JSON",
            detail: e.to_string(),
        })
}

fn add_document(
    snapshot: &mut Snapshot,
    listed: &mut Listed,
    document: Value,
    index: usize,
    path: &Path,
) -> Result<(), SourceError> {
    if document.get("format").and_then(Value::as_str) == Some(FORMAT_ID) {
        return add_snapshot_file(snapshot, document, path, index);
    }
    if let Value::Array(items) = document {
        for item in items {
            add_document(snapshot, listed, item, index, path)?;
        }
        return Ok(());
    }
    let kind = document.get("kind").and_then(Value::as_str).unwrap_or("");
    let has_api_version = document.get("apiVersion").and_then(Value::as_str).is_some();
    if kind.is_empty() || !has_api_version {
        return Err(SourceError::NotKubernetes {
            path: path.to_path_buf(),
            document: index,
        });
    }
    if kind.ends_with("List") && document.get("items").is_some() {
        let list_kind = kind.to_string();
        // `kubectl get` prints a plain `List`; the API's own lists are typed.
        if let Some(item_kind) = kind.strip_suffix("List").filter(|k| !k.is_empty()) {
            listed.0.insert(item_kind.to_string());
        }
        let mut document = document;
        // `items: null` is how an empty list is sometimes printed.
        let Some(Value::Array(items)) = document.get_mut("items").map(Value::take) else {
            return Ok(());
        };
        for item in items {
            add_object(snapshot, item, path, Some(&list_kind), index)?;
        }
        return Ok(());
    }
    add_object(snapshot, document, path, None, index)
}

fn add_object(
    snapshot: &mut Snapshot,
    mut object: Value,
    path: &Path,
    list_kind: Option<&str>,
    index: usize,
) -> Result<(), SourceError> {
    // `items: [a]` or `objects: [1]`: indexing it below would panic.
    let found = match &object {
        Value::Object(_) => None,
        // Nothing, as a null document is.
        Value::Null => return Ok(()),
        Value::Bool(_) => Some("a boolean"),
        Value::Number(_) => Some("a number"),
        Value::String(_) => Some("a string"),
        Value::Array(_) => Some("a list"),
    };
    if let Some(found) = found {
        return Err(SourceError::NotAnObject {
            path: path.to_path_buf(),
            document: index,
            found,
        });
    }
    // Items of a typed list (`PodList`) may omit their own kind.
    if object.get("kind").is_none()
        && let Some(kind) = list_kind.and_then(|k| k.strip_suffix("List"))
    {
        object["kind"] = Value::String(kind.to_string());
    }
    track_newest(&mut snapshot.origin, &object);
    sort_object(&mut snapshot.objects, object).map_err(|cause| SourceError::BadObject {
        path: path.to_path_buf(),
        cause,
    })
}

fn add_snapshot_file(
    snapshot: &mut Snapshot,
    document: Value,
    path: &Path,
    index: usize,
) -> Result<(), SourceError> {
    let version = document.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version > u64::from(FORMAT_VERSION) {
        return Err(SourceError::FutureVersion {
            path: path.to_path_buf(),
            found: version.min(u64::from(u32::MAX)) as u32,
            supported: FORMAT_VERSION,
        });
    }
    let file: SnapshotFile =
        serde_json::from_value(document).map_err(|e| SourceError::BadSnapshot {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
    if file.version == 0 {
        return Err(SourceError::BadSnapshot {
            path: path.to_path_buf(),
            detail: "version must be 1 or more".into(),
        });
    }
    let origin = &mut snapshot.origin;
    origin.kind = OriginKind::SnapshotFile;
    origin.captured_at = file.captured_at.or(origin.captured_at);
    origin.captured_by = file.captured_by;
    origin.context = file.context;
    origin.server_version = file.server_version;
    origin.target = file.target;
    origin.namespace = file.namespace;
    for object in file.objects {
        add_object(snapshot, object, path, None, index)?;
    }
    snapshot.logs.extend(file.logs);
    snapshot.gaps.extend(file.gaps);
    snapshot.redactions.extend(file.redactions);
    Ok(())
}

/// A kubectl dump has no capture time: remember the newest timestamp seen
/// in any object, which becomes the replay clock.
fn track_newest(origin: &mut Origin, object: &Value) {
    if let Some(newest) = newest_timestamp(object)
        && origin.newest_seen.is_none_or(|seen| newest > seen)
    {
        origin.newest_seen = Some(newest);
    }
}

fn newest_timestamp(value: &Value) -> Option<Timestamp> {
    match value {
        Value::String(s) if looks_like_timestamp(s) => s.parse::<Timestamp>().ok(),
        Value::Array(items) => items.iter().filter_map(newest_timestamp).max(),
        Value::Object(map) => map
            .iter()
            // Field sets, free text and annotations are not observations; a
            // deletionTimestamp is a deadline in the future, not a time seen.
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "fieldsV1" | "data" | "annotations" | "deletionTimestamp"
                )
            })
            .filter_map(|(_, v)| newest_timestamp(v))
            .max(),
        _ => None,
    }
}

fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    (20..=40).contains(&b.len())
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().all(u8::is_ascii_digit)
}

fn first_line(s: &str) -> String {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_yaml_dump_is_read_beyond_the_parser_default_node_budget() {
        // 30,000 Pods of ~12 nodes each: about 360,000 nodes, more than the
        // YAML parser allows by default (250,000), as a kubectl dump of a
        // loaded cluster has.
        let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..30_000 {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p-{i}\n    namespace: ns\n    uid: u-{i}\n    labels: {{app: a}}\n  spec:\n    nodeName: n1\n"
            ));
        }
        let snapshot = parse_snapshot_text(&text, Path::new("big.yaml")).unwrap();
        assert_eq!(snapshot.objects.pods.len(), 30_000);
    }

    #[test]
    fn a_list_item_that_is_not_an_object_is_an_error_not_a_panic() {
        for (text, found) in [
            ("apiVersion: v1\nkind: PodList\nitems:\n- a\n", "a string"),
            ("apiVersion: v1\nkind: List\nitems: [1]\n", "a number"),
            (
                "{\"format\":\"mdiag.dev/snapshot\",\"version\":2,\"objects\":[[]]}",
                "a list",
            ),
        ] {
            let err = parse_snapshot_text(text, Path::new("l.yaml")).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("l.yaml: document 1 holds an item that is "),
                "{message}"
            );
            assert!(message.contains(found), "{message}");
        }
        // A null item is nothing, as a null document is.
        let s = parse_snapshot_text(
            "apiVersion: v1\nkind: PodList\nitems:\n-\n",
            Path::new("n.yaml"),
        )
        .unwrap();
        assert!(s.objects.pods.is_empty());
    }

    #[test]
    fn the_clock_of_a_dump_ignores_deadlines_and_annotations() {
        let text = r#"
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: lab
  creationTimestamp: "2026-11-28T10:00:00Z"
  deletionTimestamp: "2026-11-28T10:05:30Z"
  annotations:
    example.com/expires: "2027-01-01T00:00:00Z"
status:
  startTime: "2026-11-28T10:00:05Z"
"#;
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        assert_eq!(
            s.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:05Z".to_string())
        );
    }
}
