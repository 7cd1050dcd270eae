//! Every fixture replayed to JSON, byte for byte: the reports of
//! `trace -o json` and `triage -A -o json` are pinned as insta snapshots,
//! so a change to how files are read (streamed, trimmed as they arrive)
//! cannot change a single byte of what users get. Each fixture is also read
//! as JSON, gzip-compressed and from standard input, which must give the
//! same bytes as the YAML file (but for the path the report names).

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{expected_fixtures, mdiag};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture a replay can read: the demos and cases with their
/// expectations (and the target each names), the triage fixtures and the
/// redaction snapshot (triage only).
fn fixtures() -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = expected_fixtures()
        .into_iter()
        .map(|(file, target)| (file, Some(target)))
        .collect();
    for folder in ["fixtures/triage", "fixtures/redaction"] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .filter(|p| !p.ends_with("expected.yaml") && !p.ends_with("corpus.yaml"))
            .collect();
        names.sort();
        for p in names {
            let rel = p.strip_prefix(root()).unwrap().display().to_string();
            out.push((rel, None));
        }
    }
    let demo_snapshot = "fixtures/demo/snapshot-crash-loop.yaml".to_string();
    if !out.iter().any(|(f, _)| *f == demo_snapshot) {
        out.push((demo_snapshot, Some("chart-demo".into())));
    }
    out
}

/// stdout and the exit code of mdiag with `args`, reading `file` (`-`:
/// `stdin` on standard input).
fn run(args: &[&str], file: &str, stdin: Option<Vec<u8>>) -> (String, i32) {
    let mut cmd = mdiag();
    cmd.args(args).args(["--snapshot", file, "-o", "json"]);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code != 2 && code != 101,
        "{args:?} {file}: exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), code)
}

fn snapshot_name(file: &str, command: &str) -> String {
    let stem = file
        .trim_start_matches("fixtures/")
        .trim_end_matches(".yaml")
        .replace('/', "__");
    format!("{command}__{stem}")
}

/// The same objects as one JSON text per YAML document, concatenated, as
/// `kubectl get -o json` in a loop writes them.
fn as_json(yaml: &str) -> String {
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(yaml).unwrap();
    let mut out = String::new();
    for d in documents.iter().filter(|d| !d.is_null()) {
        out.push_str(&serde_json::to_string_pretty(d).unwrap());
        out.push('\n');
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn every_fixture_replays_to_the_same_json_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (file, target) in fixtures() {
        let mut commands: Vec<(String, Vec<String>)> =
            vec![("triage".into(), vec!["triage".into(), "-A".into()])];
        if let Some(t) = &target {
            commands.push(("trace".into(), vec!["trace".into(), t.clone()]));
        }
        let yaml = std::fs::read_to_string(root().join(&file)).unwrap();
        let stem = file.replace('/', "_");
        let json_path = dir.path().join(format!("{stem}.json"));
        std::fs::write(&json_path, as_json(&yaml)).unwrap();
        let gz_path = dir.path().join(format!("{stem}.gz"));
        std::fs::write(&gz_path, gzip(yaml.as_bytes())).unwrap();
        for (name, args) in commands {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (report, code) = run(&args, &file, None);
            insta::assert_snapshot!(snapshot_name(&file, &name), report);
            // Other shapes of the same objects: only the path differs.
            let quoted = |p: &str| serde_json::to_string(p).unwrap();
            for (variant, path, stdin) in [
                ("json", json_path.display().to_string(), None),
                ("gzip", gz_path.display().to_string(), None),
                ("stdin", "-".to_string(), Some(yaml.as_bytes().to_vec())),
                ("stdin-gzip", "-".to_string(), Some(gzip(yaml.as_bytes()))),
            ] {
                let (other, other_code) = run(&args, &path, stdin);
                let label = if path == "-" {
                    "standard input".to_string()
                } else {
                    path.clone()
                };
                // The commands printed read the same input again: the path
                // (or `-`) is in them too.
                let word = if path == "-" { "-" } else { path.as_str() };
                assert_eq!(
                    other
                        .replace(&quoted(&label), &quoted(&file))
                        .replace(&format!("--snapshot {word}"), &format!("--snapshot {file}"))
                        .replace(&quoted(word), &quoted(&file)),
                    report,
                    "{file} read as {variant} ({name})"
                );
                assert_eq!(other_code, code, "{file} read as {variant} ({name})");
            }
        }
    }
}
