//! The snapshot reader on arbitrary bytes: every input must end in a
//! snapshot or a typed error, never a panic or an unbounded allocation;
//! and whatever it accepts, the analysis must take without panicking.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mdiag_core::model::{Clock, TargetSpec};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(snapshot) = mdiag_source::file::parse_snapshot_text(text, Path::new("fuzz.yaml"))
    else {
        return;
    };
    for model_service in &snapshot.objects.model_services {
        let (Some(name), Some(ns)) = (
            &model_service.metadata.name,
            &model_service.metadata.namespace,
        ) else {
            continue;
        };
        let Ok(target) = TargetSpec::parse(name, Some(ns)) else {
            continue;
        };
        if let Ok(chain) = mdiag_core::chain::walk(&snapshot, &target, ns, None) {
            let clock = Clock::choose(&snapshot.origin, None, jiff::Timestamp::UNIX_EPOCH);
            let _ = mdiag_core::analysis::analyze(&snapshot, &chain, clock.now);
        }
    }
});
