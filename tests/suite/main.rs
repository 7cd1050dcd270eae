//! Rings 1 and 2 in one test binary: the pure analysis on fixtures, and the
//! `mdiag` binary on snapshot files. One module per subject; helpers they
//! share live in `common` (also used by the live ring, tests/live.rs).
//! One binary links once and runs its tests in one process, where 33
//! binaries each linked the whole product again.

#[path = "../common/mod.rs"]
mod common;

mod alerts;
mod architecture;
mod chain_pod_sets;
mod chain_replica_sets;
mod cli;
mod commands;
mod credentials;
mod degraded_dumps;
mod events_brief;
mod fixtures_expected;
mod gate_cli;
mod gate_crashes;
mod gate_policy;
mod gate_readiness;
mod gate_view;
mod help_flags;
mod hostile_bounds;
mod hostile_mcp;
mod hostile_redact;
mod hostile_text;
mod html_report;
mod init_containers;
mod interrupts;
mod jobs;
mod lone_status;
mod mcp;
mod neighbours;
mod next_views;
mod partial_dumps;
mod platforms_argo;
mod platforms_knative;
mod platforms_kserve;
mod platforms_kserve_knative;
mod platforms_lws;
mod pod_sets;
mod pods_not_created;
mod probe_kills;
mod reader_props;
mod readme;
mod recipes;
mod redaction;
mod replay_json;
mod resource_claims;
mod revisions;
mod targets;
mod timeline_views;
mod trace_view;
mod triage_contexts;
mod triage_index;
mod triage_lone;
mod triage_outside;
mod triage_shards;
mod versions;
mod view_widths;
mod views;
mod zh_words;
