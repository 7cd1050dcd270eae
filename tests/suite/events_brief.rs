//! Brief Events answer as the Events they were, over every fixture.

use mdiag_core::model::EventRecord;

/// Every Event of every fixture, both API shapes, answers the same
/// once brief.
#[test]
fn a_brief_event_answers_as_the_event_it_was() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    for dir in ["demo", "cases", "triage", "alerts"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    let (mut core, mut new) = (0, 0);
    for path in files {
        // Kept whole: a trimmed read makes its Events brief already.
        let Ok(snapshot) =
            mdiag_source::file::read_snapshot_file_kept(&path, mdiag_source::file::Keep::Whole)
        else {
            continue;
        };
        for event in snapshot.objects.events {
            match &event {
                EventRecord::Core(_) => core += 1,
                EventRecord::New(_) => new += 1,
                EventRecord::Brief(_) => unreachable!("files keep the API's shape"),
            }
            let brief = event.clone().brief();
            let answers = |e: &EventRecord| {
                format!(
                    "{:?} {:?} {} {} {} {} {} {} {:?} {:?}",
                    e.subject(),
                    e.subject_uid(),
                    e.uid(),
                    e.reason(),
                    e.message(),
                    e.event_type(),
                    e.reporter(),
                    e.count(),
                    e.first_seen(),
                    e.last_seen(),
                )
            };
            assert_eq!(answers(&brief), answers(&event), "{}", path.display());
            assert!(matches!(brief, EventRecord::Brief(_)));
        }
    }
    assert!(
        core > 100 && new > 0,
        "{core} core and {new} events.k8s.io Events"
    );
}
