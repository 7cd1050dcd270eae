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
/// its ten texts in one allocation, about 350 bytes in all, against the
/// kilobytes of the API type (and the 900 bytes of ten `String`s, each an
/// allocation of its own). A snapshot or evidence file keeps the Event as
/// the API gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefEvent {
    /// The texts one after another, in [`Text`] order.
    text: Box<str>,
    /// Where each text ends in `text`.
    ends: [u32; Text::COUNT],
    pub count: u32,
    pub first_seen: Option<Timestamp>,
    pub last_seen: Option<Timestamp>,
}

/// The texts of a [`BriefEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    Kind,
    Namespace,
    Name,
    SubjectUid,
    FieldPath,
    Uid,
    Reason,
    Message,
    EventType,
    Reporter,
}

impl Text {
    const COUNT: usize = 10;
}

const ALL_TEXTS: [Text; Text::COUNT] = [
    Text::Kind,
    Text::Namespace,
    Text::Name,
    Text::SubjectUid,
    Text::FieldPath,
    Text::Uid,
    Text::Reason,
    Text::Message,
    Text::EventType,
    Text::Reporter,
];

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
        let subject = self.subject();
        let texts = [
            subject.kind.as_str(),
            &subject.namespace,
            &subject.name,
            &subject.uid,
            &subject.field_path,
            self.uid(),
            self.reason(),
            self.message(),
            self.event_type(),
            self.reporter(),
        ];
        let brief = BriefEvent::new(texts, self.count(), self.first_seen(), self.last_seen());
        EventRecord::Brief(Box::new(brief))
    }

    pub fn subject(&self) -> EventSubject {
        let r = match self {
            EventRecord::Core(e) => Some(&e.involved_object),
            EventRecord::New(e) => e.regarding.as_ref(),
            EventRecord::Brief(b) => return b.subject(),
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
            EventRecord::Brief(b) => Some(b.text(Text::SubjectUid)),
        }
        .filter(|uid| !uid.is_empty())
    }

    pub fn reason(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.reason.as_deref(),
            EventRecord::New(e) => e.reason.as_deref(),
            EventRecord::Brief(b) => Some(b.text(Text::Reason)),
        }
        .unwrap_or("")
    }

    pub fn message(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.message.as_deref(),
            EventRecord::New(e) => e.note.as_deref(),
            EventRecord::Brief(b) => Some(b.text(Text::Message)),
        }
        .unwrap_or("")
    }

    pub fn event_type(&self) -> &str {
        match self {
            EventRecord::Core(e) => e.type_.as_deref(),
            EventRecord::New(e) => e.type_.as_deref(),
            EventRecord::Brief(b) => Some(b.text(Text::EventType)),
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
            EventRecord::Brief(b) => Some(b.text(Text::Reporter)),
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
            EventRecord::Brief(b) => Some(b.text(Text::Uid)),
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
    /// The texts in [`Text`] order.
    pub fn new(
        texts: [&str; Text::COUNT],
        count: u32,
        first_seen: Option<Timestamp>,
        last_seen: Option<Timestamp>,
    ) -> BriefEvent {
        let mut text = String::with_capacity(texts.iter().map(|t| t.len()).sum());
        let mut ends = [0; Text::COUNT];
        for (end, t) in ends.iter_mut().zip(texts) {
            text.push_str(t);
            // Past 4 GiB (never: a read stops at 1 GiB) the later texts
            // read empty rather than wrong.
            *end = u32::try_from(text.len()).unwrap_or(u32::MAX);
        }
        BriefEvent {
            text: text.into_boxed_str(),
            ends,
            count,
            first_seen,
            last_seen,
        }
    }

    pub fn text(&self, which: Text) -> &str {
        let i = which as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let range = start as usize..self.ends[i] as usize;
        self.text.get(range).unwrap_or("")
    }

    /// Replaces one text (the others stay as they were).
    pub fn set(&mut self, which: Text, value: &str) {
        let mut texts = ALL_TEXTS.map(|t| self.text(t).to_string());
        texts[which as usize] = value.to_string();
        *self = BriefEvent::new(
            texts.each_ref().map(String::as_str),
            self.count,
            self.first_seen,
            self.last_seen,
        );
    }

    pub fn subject(&self) -> EventSubject {
        EventSubject {
            kind: self.text(Text::Kind).to_string(),
            namespace: self.text(Text::Namespace).to_string(),
            name: self.text(Text::Name).to_string(),
            uid: self.text(Text::SubjectUid).to_string(),
            field_path: self.text(Text::FieldPath).to_string(),
        }
    }

    /// A core/v1 Event holding what was kept (nothing writes a brief
    /// Event to a file; this keeps one readable where it is printed).
    fn to_value(&self) -> serde_json::Value {
        let s = &self.subject();
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": text(&s.namespace), "uid": text(self.text(Text::Uid))},
            "involvedObject": {
                "kind": text(&s.kind), "namespace": text(&s.namespace),
                "name": text(&s.name), "uid": text(&s.uid),
                "fieldPath": text(&s.field_path),
            },
            "reason": text(self.text(Text::Reason)),
            "message": text(self.text(Text::Message)),
            "type": text(self.text(Text::EventType)),
            "reportingComponent": text(self.text(Text::Reporter)),
            "count": self.count,
            "firstTimestamp": self.first_seen.map(|t| t.to_string()),
            "lastTimestamp": self.last_seen.map(|t| t.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brief_event_gives_back_each_text_as_given() {
        let texts = [
            "Pod",
            "",
            "p-1",
            "uid-p",
            "spec.containers{server}",
            "",
            "BackOff",
            "Back-off restarting — 容器 failed",
            "Warning",
            "kubelet",
        ];
        let seen = Some(Timestamp::UNIX_EPOCH);
        let b = BriefEvent::new(texts, 3, seen, None);
        let read: Vec<&str> = ALL_TEXTS.iter().map(|t| b.text(*t)).collect();
        assert_eq!(read, texts);
        let mut changed = b.clone();
        changed.set(Text::Reason, "Pulled");
        let read: Vec<&str> = ALL_TEXTS.iter().map(|t| changed.text(*t)).collect();
        let mut want = texts;
        want[6] = "Pulled";
        assert_eq!(read, want);
        let s = b.subject();
        assert_eq!(
            (s.kind.as_str(), s.name.as_str(), s.uid.as_str()),
            ("Pod", "p-1", "uid-p")
        );
        let record = EventRecord::Brief(Box::new(b));
        assert_eq!(record.message(), texts[7]);
        assert_eq!(record.subject_uid(), Some("uid-p"));
        assert_eq!(
            (record.count(), record.first_seen(), record.last_seen()),
            (3, seen, None)
        );
        // Cut brief again, it is the same.
        assert_eq!(record.clone().brief().message(), texts[7]);
    }
}
