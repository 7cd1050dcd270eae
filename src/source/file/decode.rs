//! The streaming decoder: serde visitors that file each document's objects
//! one at a time into the read in progress, never building the whole tree.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::bookkeeping::{Listed, object_times, unlisted_kinds};
use super::error::SourceError;
use super::tree::{Key, KeySeed, Tree};
use super::versions::{self, Version};
use crate::format::{FORMAT_ID, FORMAT_VERSION, SnapshotFile};
use crate::objects::{Keep, keep_other, sort_object_kept};
use mdiag_core::catalogue::Message;
use mdiag_core::model::{Gap, Kind, Origin, OriginKind, Snapshot};

/// The read in progress on this thread: the parsers hand each document to
/// [`Document`]'s `Deserialize`, which files its objects here one at a time.
struct Reading {
    snapshot: Snapshot,
    listed: Listed,
    path: PathBuf,
    keep: Keep,
    /// The top-level document being read, from 1.
    document: usize,
    seen_document: bool,
    /// Why the read stopped, when it was not the syntax: the parser only
    /// carries a message back.
    error: Option<SourceError>,
    /// YAML: keys are read with their lines.
    yaml: bool,
    /// What was read but is worth saying (a key named twice).
    warnings: Vec<Message>,
    /// Warnings past [`MAX_WARNINGS`], counted.
    more_warnings: usize,
}

/// The warnings a read keeps; past them, a count.
const MAX_WARNINGS: usize = 20;

thread_local! {
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

fn with_reading<T>(f: impl FnOnce(&mut Reading) -> T) -> T {
    READING.with(|cell| {
        let mut reading = cell.borrow_mut();
        // `Document` is private and only parsed inside a `ReadingScope`.
        f(reading.as_mut().expect("a snapshot read is in progress"))
    })
}

/// Sets up the read in progress, and takes it down however the parse ends.
pub(crate) struct ReadingScope;

impl ReadingScope {
    pub(crate) fn start(path: &Path, keep: Keep, yaml: bool) -> Self {
        let reading = Reading {
            snapshot: Snapshot {
                origin: Origin {
                    kind: OriginKind::KubectlDump,
                    location: path.display().to_string(),
                    ..Origin::default()
                },
                ..Snapshot::default()
            },
            listed: Listed::default(),
            path: path.to_path_buf(),
            keep,
            document: 0,
            seen_document: false,
            error: None,
            yaml,
            warnings: Vec::new(),
            more_warnings: 0,
        };
        READING.with(|cell| *cell.borrow_mut() = Some(reading));
        ReadingScope
    }

    /// The snapshot, or why there is none: the error a document stopped
    /// the read with outranks the parser's message about it.
    pub(crate) fn finish(self, parsed: Result<(), SourceError>) -> Result<Snapshot, SourceError> {
        let reading = READING.with(|cell| cell.borrow_mut().take());
        let Some(mut reading) = reading else {
            return parsed.map(|()| Snapshot::default());
        };
        if let Some(error) = reading.error.take() {
            return Err(error);
        }
        parsed?;
        if !reading.seen_document {
            return Err(SourceError::Empty { path: reading.path });
        }
        let mut snapshot = reading.snapshot;
        snapshot.warnings = reading.warnings;
        if reading.more_warnings > 0 {
            snapshot.warnings.push(
                Message::new("stderr.more_duplicate_keys")
                    .arg("path", reading.path.display().to_string())
                    .arg("n", reading.more_warnings as i64),
            );
        }
        crate::objects::slices_from_endpoints(&mut snapshot.objects);
        snapshot.objects.shrink_to_fit();
        if snapshot.origin.kind == OriginKind::KubectlDump {
            let gaps = unlisted_kinds(&snapshot, &reading.listed);
            snapshot.gaps.extend(gaps);
        }
        Ok(snapshot)
    }
}

impl Drop for ReadingScope {
    fn drop(&mut self) {
        READING.with(|cell| cell.borrow_mut().take());
    }
}

/// Stops the parse with `error`, kept for [`ReadingScope::finish`].
fn fail<E: de::Error>(error: SourceError) -> E {
    let message = error.to_string();
    with_reading(|r| {
        r.error.get_or_insert(error);
    });
    E::custom(message)
}

/// A mapping named a key twice: the last value was kept; say where.
fn duplicate_key(key: Key) {
    with_reading(|r| {
        if r.warnings.len() >= MAX_WARNINGS {
            r.more_warnings += 1;
            return;
        }
        let mut name: String = key.name.chars().take(80).collect();
        if name.len() < key.name.len() {
            name.push_str("...");
        }
        let place = match key.line {
            Some(line) => Message::new("stderr.at_line").arg("line", line as i64),
            None => Message::new("stderr.at_document").arg("document", r.document as i64),
        };
        r.warnings.push(
            Message::new("stderr.duplicate_key")
                .arg("path", r.path.display().to_string())
                .arg("place", place)
                .arg("key", format!("{name:?}")),
        );
    });
}

/// A value of the document, keys named twice told to [`duplicate_key`].
fn tree() -> Tree {
    Tree {
        spanned: with_reading(|r| r.yaml),
        duplicate: duplicate_key,
    }
}

/// Files one object (an item of a list, an object of a snapshot file, a
/// document) in the read in progress.
fn add_object<E: de::Error>(object: Value, list_kind: Option<&str>) -> Result<(), E> {
    let result = with_reading(|r| {
        add_object_to(
            &mut r.snapshot,
            object,
            &r.path,
            list_kind,
            r.document,
            r.keep,
        )
    });
    result.map_err(fail)
}

/// One top-level document; what it holds went into the read in progress.
pub(crate) struct Document;

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        with_reading(|r| r.document += 1);
        deserializer.deserialize_any(DocumentVisitor { top: true })
    }
}

/// A document, or an element of a top-level sequence (read as documents,
/// as the items of a `[...]` of objects are).
struct DocumentVisitor {
    top: bool,
}

impl DocumentVisitor {
    fn not_kubernetes<E: de::Error>(&self) -> Result<Document, E> {
        let (path, document) = with_reading(|r| {
            r.seen_document = true;
            (r.path.clone(), r.document)
        });
        Err(fail(SourceError::NotKubernetes { path, document }))
    }
}

impl<'de> DeserializeSeed<'de> for DocumentVisitor {
    type Value = Document;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Document, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes object, a list of them, or an mdiag snapshot")
    }

    /// A null document is nothing; a null inside a sequence of them is not
    /// an object.
    fn visit_unit<E: de::Error>(self) -> Result<Document, E> {
        if self.top {
            Ok(Document)
        } else {
            self.not_kubernetes()
        }
    }
    fn visit_none<E: de::Error>(self) -> Result<Document, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Document, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Document, E> {
        self.not_kubernetes()
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Document, E> {
        self.not_kubernetes()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Document, A::Error> {
        with_reading(|r| r.seen_document = true);
        while seq
            .next_element_seed(DocumentVisitor { top: false })?
            .is_some()
        {}
        Ok(Document)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
        with_reading(|r| r.seen_document = true);
        read_map(map)
    }
}

/// A document that is a mapping: a Kubernetes object, a list of them, or an
/// mdiag snapshot file. The items of a list and the objects of a snapshot
/// are filed one at a time as the parser reaches them; every other field
/// is kept until the mapping ends and says what it was.
fn read_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Document, A::Error> {
    let mut head = serde_json::Map::new();
    let mut items = ListItems::default();
    let tree = tree();
    while let Some(key) = map.next_key_seed(KeySeed {
        spanned: tree.spanned,
    })? {
        let (name, place) = (key.name, key.line);
        let is_snapshot = head.get("format").and_then(Value::as_str) == Some(FORMAT_ID);
        let head_kind = head.get("kind").and_then(Value::as_str);
        let list_kind = head_kind.filter(|k| k.ends_with("List"));
        match name.as_str() {
            // `kubectl get -o json|yaml` sorts its keys, so `items` comes
            // before `kind`: an item that names its own kind is filed at
            // once, one that does not (a typed list's) waits for the kind.
            "items" if !is_snapshot && (head_kind.is_none() || list_kind.is_some()) => {
                items.seen = true;
                let list_kind = list_kind.map(str::to_string);
                map.next_value_seed(ItemsSeed {
                    list_kind: list_kind.as_deref(),
                    waiting: &mut items.waiting,
                })?;
            }
            // mdiag writes `format` and `version` first.
            "objects" if is_snapshot && head.contains_key("version") => {
                check_version(&head)?;
                map.next_value_seed(ObjectsSeed)?;
            }
            _ => {
                let value = map.next_value_seed(tree)?;
                if head.insert(name.clone(), value).is_some() {
                    duplicate_key(Key { name, line: place });
                }
            }
        }
    }
    if head.get("format").and_then(Value::as_str) == Some(FORMAT_ID) {
        check_version(&head)?;
        return add_snapshot_head(head);
    }
    let kind = head
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if items.seen && kind.ends_with("List") {
        let list_kind = kind;
        // `kubectl get` prints a plain `List`; the API's own lists are typed.
        if let Some(item_kind) = list_kind.strip_suffix("List").filter(|k| !k.is_empty()) {
            with_reading(|r| r.listed.0.insert(item_kind.to_string()));
        }
        for item in items.waiting {
            add_object(item, Some(&list_kind))?;
        }
        return Ok(Document);
    }
    if items.seen {
        // Not a list after all: the items that named a kind were filed
        // already; the others stay part of the object, as they were.
        head.insert("items".into(), Value::Array(items.waiting));
    }
    let has_api_version = head.get("apiVersion").and_then(Value::as_str).is_some();
    if kind.is_empty() || !has_api_version {
        return DocumentVisitor { top: false }.not_kubernetes();
    }
    add_object(Value::Object(head), None)?;
    Ok(Document)
}

#[derive(Default)]
struct ListItems {
    seen: bool,
    /// Items that name no kind, waiting for the list's.
    waiting: Vec<Value>,
}

/// The `items` of a list, filed one at a time.
struct ItemsSeed<'w> {
    list_kind: Option<&'w str>,
    waiting: &'w mut Vec<Value>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element_seed(tree())? {
            let names_kind = item.get("kind").is_some();
            match (self.list_kind, &item) {
                (Some(kind), _) => add_object(item, Some(kind))?,
                (None, Value::Object(_)) if !names_kind => self.waiting.push(item),
                (None, _) => add_object(item, None)?,
            }
        }
        Ok(())
    }

    // `items: null` is how an empty list is sometimes printed; anything
    // else that is not a sequence holds no object either.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }
}

/// The `objects` of an mdiag snapshot file, filed one at a time.
struct ObjectsSeed;

impl<'de> DeserializeSeed<'de> for ObjectsSeed {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ObjectsSeed {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(object) = seq.next_element_seed(tree())? {
            add_object(object, None)?;
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A snapshot file newer than this mdiag is refused before its objects.
fn check_version<E: de::Error>(head: &serde_json::Map<String, Value>) -> Result<(), E> {
    let version = head.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version > u64::from(FORMAT_VERSION) {
        let path = with_reading(|r| r.path.clone());
        return Err(fail(SourceError::FutureVersion {
            path,
            found: version.min(u64::from(u32::MAX)) as u32,
            supported: FORMAT_VERSION,
        }));
    }
    Ok(())
}

/// The rest of an mdiag snapshot file: its capture metadata, logs, gaps and
/// redactions (and its objects, when they came before its version).
fn add_snapshot_head<E: de::Error>(head: serde_json::Map<String, Value>) -> Result<Document, E> {
    let path = with_reading(|r| r.path.clone());
    let file: SnapshotFile = serde_json::from_value(Value::Object(head)).map_err(|e| {
        fail::<E>(SourceError::BadSnapshot {
            path: path.clone(),
            detail: e.to_string(),
        })
    })?;
    if file.version == 0 {
        return Err(fail(SourceError::BadSnapshot {
            path,
            detail: "version must be 1 or more".into(),
        }));
    }
    with_reading(|r| {
        let origin = &mut r.snapshot.origin;
        origin.kind = OriginKind::SnapshotFile;
        origin.captured_at = file.captured_at.or(origin.captured_at);
        origin.captured_by = file.captured_by;
        origin.context = file.context;
        origin.server_version = file.server_version;
        origin.target = file.target;
        origin.namespace = file.namespace;
    });
    for object in file.objects {
        add_object(object, None)?;
    }
    with_reading(|r| {
        r.snapshot.logs.extend(file.logs);
        r.snapshot.gaps.extend(file.gaps);
        r.snapshot.redactions.extend(file.redactions);
    });
    Ok(Document)
}

fn add_object_to(
    snapshot: &mut Snapshot,
    mut object: Value,
    path: &Path,
    list_kind: Option<&str>,
    index: usize,
    keep: Keep,
) -> Result<(), SourceError> {
    // `items: [a]` or `objects: [1]`: indexing it below would panic.
    let found = match &object {
        Value::Object(_) => None,
        // Nothing, as a null document is.
        Value::Null => return Ok(()),
        Value::Bool(_) => Some("error.file.found_boolean"),
        Value::Number(_) => Some("error.file.found_number"),
        Value::String(_) => Some("error.file.found_string"),
        Value::Array(_) => Some("error.file.found_list"),
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
    // An older version is brought to the one typed, before its times are
    // walked (an autoscaling/v1 HPA's conditions are in an annotation).
    let version = versions::convert(&mut object);
    // Before any trimming: the clock of a dump is what the file holds; and
    // before typing: a time past jiff's range is brought within it.
    object_times(&mut snapshot.origin, &mut object);
    if let Version::NotRead { kind, reason } = version {
        not_read(snapshot, kind, reason, object, keep);
        return Ok(());
    }
    sort_object_kept(&mut snapshot.objects, object, keep).map_err(|cause| SourceError::BadObject {
        path: path.to_path_buf(),
        cause,
    })
}

/// An object of a judged kind in a version mdiag does not read: kept
/// untyped (a snapshot written from the file still holds it), and a gap
/// for its kind in its namespace, once per version, so that the rules that
/// would need it stay silent rather than judge without it.
fn not_read(snapshot: &mut Snapshot, kind: Kind, reason: String, object: Value, keep: Keep) {
    let namespace = object["metadata"]["namespace"].as_str().map(str::to_string);
    let gap = Gap {
        contexts: Vec::new(),
        resource: kind.resource().to_string(),
        namespace,
        verb: "read".into(),
        name: None,
        reason,
        complete_with: None,
        read_in: Vec::new(),
    };
    if !snapshot.gaps.contains(&gap) {
        snapshot.gaps.push(gap);
    }
    keep_other(&mut snapshot.objects, object, keep);
}

#[cfg(test)]
mod tests {
    use super::super::read::{parse_snapshot_bytes, parse_snapshot_text};
    use super::*;

    #[test]
    fn trimming_keeps_what_rules_read_and_drops_the_rest() {
        let text = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: lab
    managedFields: [{manager: kubelet, operation: Update, time: "2026-11-28T10:00:09Z"}]
    annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: r
    namespace: lab
    managedFields: [{manager: kube-controller-manager, operation: Update, time: "2026-11-28T10:00:01Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}]
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: d
    namespace: lab
    managedFields:
    - {manager: kubectl-edit, operation: Update, time: "2026-11-28T10:00:02Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}
    - {manager: kube-controller-manager, operation: Update, subresource: status, time: "2026-11-28T10:00:03Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}}
- apiVersion: v1
  kind: Event
  metadata: {name: e, namespace: lab}
  involvedObject: {kind: ConfigMap, name: c, namespace: lab}
  reason: Whatever
"#;
        let path = Path::new("t.yaml");
        let analysed = parse_snapshot_bytes(text.as_bytes(), path, Keep::Analysed).unwrap();
        let pod = &analysed.objects.pods[0].metadata;
        assert!(pod.managed_fields.is_none() && pod.annotations.is_none());
        // A ReplicaSet's writers and times (its rung), not the fields.
        let rs = analysed.objects.replica_sets[0]
            .metadata
            .managed_fields
            .as_ref();
        let rs = &rs.expect("kept")[0];
        assert!(rs.time.is_some() && rs.fields_v1.is_none());
        // A Deployment's spec fields (field owners), not its status's.
        let d = analysed.objects.deployments[0]
            .metadata
            .managed_fields
            .as_ref();
        let d = d.expect("kept");
        assert!(d[0].fields_v1.is_some(), "spec fields kept");
        assert!(d[1].time.is_some() && d[1].fields_v1.is_none());
        assert!(
            analysed.objects.events.is_empty(),
            "an Event about a ConfigMap"
        );
        // The clock still sees the time the trimmed field held.
        assert_eq!(
            analysed.origin.newest_seen.map(|t| t.to_string()),
            Some("2026-11-28T10:00:09Z".to_string())
        );
        let whole = parse_snapshot_bytes(text.as_bytes(), path, Keep::Whole).unwrap();
        let pod = &whole.objects.pods[0].metadata;
        assert!(pod.managed_fields.is_some() && pod.annotations.is_some());
        let rs = whole.objects.replica_sets[0]
            .metadata
            .managed_fields
            .as_ref();
        assert!(rs.expect("kept")[0].fields_v1.is_some());
        assert_eq!(whole.objects.events.len(), 1);
    }

    #[test]
    fn a_key_named_twice_keeps_its_last_value_and_warns_with_its_line() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: first\n    namespace: lab\n    name: last\n";
        let s = parse_snapshot_text(text, Path::new("d.yaml")).unwrap();
        assert_eq!(s.objects.pods[0].metadata.name.as_deref(), Some("last"));
        let said: Vec<String> = s.warnings.iter().map(|w| w.en()).collect();
        assert_eq!(
            said,
            [
                "d.yaml: line 9: the key \"name\" is given twice in one mapping; the last value is used, as kubectl does"
            ]
        );
        // JSON names the document.
        let text = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"n"},"kind":"Pod"}"#;
        let s = parse_snapshot_text(text, Path::new("d.json")).unwrap();
        assert_eq!(s.objects.pods.len(), 1);
        assert!(
            s.warnings[0]
                .en()
                .starts_with("d.json: document 1: the key \"kind\""),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn a_judged_kind_in_a_version_not_read_is_a_gap_not_the_loss_of_the_file() {
        let text = "apiVersion: policy/v1alpha1\nkind: PodDisruptionBudget\nmetadata: {name: a, namespace: lab}\n---\napiVersion: policy/v1alpha1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: lab}\n---\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: c, namespace: lab}\n";
        let s = parse_snapshot_text(text, Path::new("p.yaml")).unwrap();
        assert_eq!(s.objects.pdbs.len(), 1);
        assert_eq!(s.objects.other.len(), 2, "kept untyped");
        let gaps: Vec<_> = s.gaps.iter().filter(|g| g.verb == "read").collect();
        assert_eq!(gaps.len(), 1, "one per version and namespace: {gaps:?}");
        assert_eq!(gaps[0].resource, "poddisruptionbudgets");
        assert_eq!(gaps[0].namespace.as_deref(), Some("lab"));
        assert_eq!(
            gaps[0].reason,
            "apiVersion policy/v1alpha1 of PodDisruptionBudget is not read"
        );
    }

    #[test]
    fn a_typed_list_whose_kind_comes_after_its_items_types_them() {
        // The API's own lists name their kind once, and kubectl sorts keys.
        let text = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"p","namespace":"n"}}],"kind":"PodList","metadata":{}}"#;
        let s = parse_snapshot_text(text, Path::new("l.json")).unwrap();
        assert_eq!(s.objects.pods.len(), 1);
        // A PodList says Pods were listed: an empty one is really empty.
        assert!(!s.gaps.iter().any(|g| g.resource == "pods"));
    }

    #[test]
    fn an_object_with_items_that_is_not_a_list_stays_one_object() {
        let text = "apiVersion: example.com/v1\nkind: Basket\nmetadata: {name: b}\nitems: [{name: apple}]\n";
        let s = parse_snapshot_text(text, Path::new("b.yaml")).unwrap();
        assert_eq!(s.objects.other.len(), 1);
        assert_eq!(s.objects.other[0]["items"][0]["name"], "apple");
    }

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
}
