//! Events in either API shape, or cut brief, read through one interface.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event as NewEvent;

/// An Event in either of its two API shapes, or cut to what the analysis
/// reads of it.
#[derive(Debug, Clone)]
pub enum EventRecord {
    Core(Box<CoreEvent>),
    New(Box<NewEvent>),
    Brief(Box<BriefEvent>),
}

/// An Event cut to what the analysis reads of it, for a read that holds
/// tens of thousands and writes none back (a namespace triaged in parts):
/// a few hundred bytes, against the kilobytes of the API type. A snapshot
/// or evidence file keeps the Event as the API gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefEvent {
    pub subject: EventSubject,
    pub uid: String,
    pub reason: String,
    pub message: String,
    pub event_type: String,
    pub reporter: String,
    pub count: u32,
    pub first_seen: Option<Timestamp>,
    pub last_seen: Option<Timestamp>,
}

/// The object an event is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventSubject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub field_path: String,
}

impl EventRecord {
    /// The same Event as a [`BriefEvent`]: every accessor below answers
    /// as before.
    pub fn brief(self) -> EventRecord {
        if let EventRecord::Brief(_) = self {
            return self;
        }
        let brief = BriefEvent {
            subject: self.subject(),
            uid: self.uid().to_string(),
            reason: self.reason().to_string(),
            message: self.message().to_string(),
            event_type: self.event_type().to_string(),
            reporter: self.reporter().to_string(),
            count: self.count(),
            first_seen: self.first_seen(),
            last_seen: self.last_seen(),
        };
        EventRecord::Brief(Box::new(brief))
    }

    pub fn subject(&self) -> EventSubject {
        let r = match self {
            EventRecord::Core(e) => Some(&e.involved_object),
            EventRecord::New(e) => e.regarding.as_ref(),
            EventRecord::Brief(b) => return b.subject.clone(),
        };
        let Some(r) = r else {
            return EventSubject::default();
        };
        EventSubject {
            kind: r.kind.clone().unwrap_or_default(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
            uid: r.uid.clone().unwrap_or_default(),
            field_path: r.field_path.clone().unwrap_or_default(),
        }
    }

    /// The UID of the object it is about, when the Event gives one.
    pub fn subject_uid(&self) -> Option<&str> {
        match self {
            EventRecord::Core(c) => c.involved_object.uid.as_deref(),
            EventRecord::New(n) => n.regarding.as_ref().and_then(|r| r.uid.as_deref()),
            EventRecord::Brief(b) => Some(b.subject.uid.as_str()),
        }
        .filter(|uid| !uid.is_empty())
    }

    pub fn reason(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.reason.as_deref(),
            EventRecord::New(e) => e.reason.as_deref(),
            EventRecord::Brief(b) => Some(b.reason.as_str()),
        }
        .unwrap_or("")
    }

    pub fn message(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.message.as_deref(),
            EventRecord::New(e) => e.note.as_deref(),
            EventRecord::Brief(b) => Some(b.message.as_str()),
        }
        .unwrap_or("")
    }

    pub fn event_type(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.type_.as_deref(),
            EventRecord::New(e) => e.type_.as_deref(),
            EventRecord::Brief(b) => Some(b.event_type.as_str()),
        }
        .unwrap_or("")
    }

    /// The component that reported it (kubelet, default-scheduler, ...).
    pub fn reporter(&self) -> &str {
        match self {
            EventRecord::Core(e) => e
                .reporting_component
                .as_deref()
                .filter(|s| !s.is_empty())
                .or(e.source.as_ref().and_then(|s| s.component.as_deref())),
            EventRecord::New(e) => e.reporting_controller.as_deref(),
            EventRecord::Brief(b) => Some(b.reporter.as_str()),
        }
        .unwrap_or("")
    }

    /// How many times it was seen (series count, or count).
    pub fn count(&self) -> u32 {
        let n = match self {
            EventRecord::Core(e) => e
                .series
                .as_ref()
                .and_then(|s| s.count)
                .or(e.count)
                .unwrap_or(1),
            EventRecord::New(e) => e
                .series
                .as_ref()
                .map(|s| s.count)
                .or(e.deprecated_count)
                .unwrap_or(1),
            EventRecord::Brief(b) => return b.count,
        };
        n.max(1) as u32
    }

    /// When it was first seen: the oldest of the times either shape carries.
    pub fn first_seen(&self) -> Option<Timestamp> {
        match self {
            EventRecord::Core(e) => e
                .first_timestamp
                .as_ref()
                .map(|t| t.0)
                .or(e.event_time.as_ref().map(|t| t.0))
                .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0)),
            EventRecord::New(e) => e
                .deprecated_first_timestamp
                .as_ref()
                .map(|t| t.0)
                .or(e.event_time.as_ref().map(|t| t.0)),
            EventRecord::Brief(b) => b.first_seen,
        }
    }

    /// When it was last seen: series last observation, last timestamp, or event time.
    pub fn last_seen(&self) -> Option<Timestamp> {
        let candidates: Vec<Option<Timestamp>> = match self {
            EventRecord::Core(e) => vec![
                e.series
                    .as_ref()
                    .and_then(|s| s.last_observed_time.as_ref())
                    .map(|t| t.0),
                e.last_timestamp.as_ref().map(|t| t.0),
                e.event_time.as_ref().map(|t| t.0),
                e.first_timestamp.as_ref().map(|t| t.0),
                e.metadata.creation_timestamp.as_ref().map(|t| t.0),
            ],
            EventRecord::New(e) => vec![
                e.series.as_ref().map(|s| s.last_observed_time.0),
                e.deprecated_last_timestamp.as_ref().map(|t| t.0),
                e.event_time.as_ref().map(|t| t.0),
            ],
            EventRecord::Brief(b) => return b.last_seen,
        };
        candidates.into_iter().flatten().max()
    }

    pub fn uid(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.metadata.uid.as_deref(),
            EventRecord::New(e) => e.metadata.uid.as_deref(),
            EventRecord::Brief(b) => Some(b.uid.as_str()),
        }
        .unwrap_or("")
    }

    pub fn to_value(&self) -> serde_json::Value {
        let v = match self {
            EventRecord::Core(e) => serde_json::to_value(e),
            EventRecord::New(e) => serde_json::to_value(e),
            EventRecord::Brief(b) => Ok(b.to_value()),
        };
        v.unwrap_or(serde_json::Value::Null)
    }
}

impl BriefEvent {
    /// A core/v1 Event holding what was kept (nothing writes a brief
    /// Event to a file; this keeps one readable where it is printed).
    fn to_value(&self) -> serde_json::Value {
        let s = &self.subject;
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": text(&s.namespace), "uid": text(&self.uid)},
            "involvedObject": {
                "kind": text(&s.kind), "namespace": text(&s.namespace),
                "name": text(&s.name), "uid": text(&s.uid),
                "fieldPath": text(&s.field_path),
            },
            "reason": text(&self.reason),
            "message": text(&self.message),
            "type": text(&self.event_type),
            "reportingComponent": text(&self.reporter),
            "count": self.count,
            "firstTimestamp": self.first_seen.map(|t| t.to_string()),
            "lastTimestamp": self.last_seen.map(|t| t.to_string()),
        })
    }
}
