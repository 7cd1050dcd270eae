//! Ring 1: the snapshot reader (`source::file`) on hostile input, with the
//! stable toolchain (the cargo-fuzz target in fuzz/ goes further where a
//! nightly one is installed). Arbitrary bytes, valid files cut at any
//! offset, broken gzip and deep nesting must each end in a snapshot or an
//! error naming the file: never a panic, never a stack overflow. Runs in the
//! test's own thread (2 MiB of stack, less than the CLI's main thread).

use std::io::Write;
use std::path::{Path, PathBuf};

use mdiag_source::file::{SourceError, parse_snapshot_text, read_snapshot_file};
use proptest::prelude::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Small valid inputs of each format the reader takes.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for name in [
        "fixtures/redaction/secrets-snapshot.yaml",
        "fixtures/alerts/labels.yaml",
        "fixtures/alerts/webhook-firing.json",
    ] {
        out.push((name.to_string(), std::fs::read(root().join(name)).unwrap()));
    }
    out.push((
        "pod.json".into(),
        br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","creationTimestamp":"2026-11-28T10:00:00Z"},"status":{"phase":"Running"}}"#.to_vec(),
    ));
    out.push((
        "list.yaml".into(),
        b"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ns}\n---\napiVersion: v1\nkind: PodList\nitems: null\n".to_vec(),
    ));
    out
}

/// An error must name the file it is about (or say it is empty).
fn check(result: Result<mdiag_core::model::Snapshot, SourceError>, name: &str) {
    if let Err(e) = result {
        let text = e.to_string();
        assert!(text.contains(name), "{text:?} does not name {name}");
        assert!(!text.contains("panicked"), "{text}");
    }
}

fn read_bytes_as(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<mdiag_core::model::Snapshot, SourceError> {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    read_snapshot_file(&path)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_ends_in_a_snapshot_or_an_error(text in "\\PC{0,400}") {
        check(parse_snapshot_text(&text, Path::new("any.yaml")), "any.yaml");
    }

    #[test]
    fn arbitrary_bytes_end_in_a_snapshot_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().unwrap();
        check(read_bytes_as(dir.path(), "any.yaml", &bytes), "any.yaml");
        check(read_bytes_as(dir.path(), "any.yaml.gz", &bytes), "any.yaml.gz");
    }

    #[test]
    fn yaml_and_json_punctuation_soup_is_refused_cleanly(
        text in "[\\[\\]{}:,\\-\"'&*!|>%@` \\n\\ta-z0-9]{0,300}"
    ) {
        check(parse_snapshot_text(&text, Path::new("soup.yaml")), "soup.yaml");
    }

    #[test]
    fn a_valid_file_cut_anywhere_ends_in_a_snapshot_or_an_error(
        seed in 0usize..5,
        cut in any::<prop::sample::Index>(),
    ) {
        let seeds = seeds();
        let (name, bytes) = &seeds[seed % seeds.len()];
        let at = cut.index(bytes.len() + 1);
        let dir = tempfile::tempdir().unwrap();
        let file = format!("cut-{}", Path::new(name).file_name().unwrap().to_string_lossy());
        check(read_bytes_as(dir.path(), &file, &bytes[..at]), &file);
    }

    #[test]
    fn broken_gzip_is_an_error_naming_the_file(
        seed in 0usize..5,
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let seeds = seeds();
        let (_, bytes) = &seeds[seed % seeds.len()];
        let mut gz = gzip(bytes);
        let i = flip.index(gz.len());
        gz[i] ^= 1 << bit;
        let at = cut.index(gz.len() + 1);
        let dir = tempfile::tempdir().unwrap();
        check(read_bytes_as(dir.path(), "broken.yaml.gz", &gz[..at]), "broken.yaml.gz");
    }
}

/// Every offset of a small valid snapshot, not a sample: each prefix is read.
#[test]
fn the_secrets_fixture_cut_at_every_line_and_many_bytes_is_read_or_refused() {
    let bytes = std::fs::read(root().join("fixtures/redaction/secrets-snapshot.yaml")).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let mut cuts: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    cuts.extend((0..bytes.len()).step_by(7));
    for at in cuts {
        let Some(prefix) = text.get(..at) else {
            continue;
        };
        check(
            parse_snapshot_text(prefix, Path::new("cut.yaml")),
            "cut.yaml",
        );
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let depth = 10_000;
    let cases: Vec<(&str, String)> = vec![
        ("deep.json", "[".repeat(depth)),
        (
            "deep-closed.json",
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        ),
        ("deep-objects.json", "{\"a\":".repeat(depth)),
        ("deep-flow.yaml", format!("x: {}", "[".repeat(depth))),
        (
            "deep-flow-closed.yaml",
            format!("x: {}{}", "[".repeat(depth), "]".repeat(depth)),
        ),
        ("deep-maps.yaml", format!("x: {}", "{a: ".repeat(depth))),
        (
            "deep-block.yaml",
            (0..depth)
                .map(|i| format!("{}- \n", "  ".repeat(i)))
                .collect(),
        ),
        ("deep-dashes.yaml", "- ".repeat(depth)),
        (
            "deep-in-a-pod.yaml",
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {}{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        ),
        (
            "deep-in-a-snapshot.json",
            format!(
                "{{\"format\":\"mdiag.dev/snapshot\",\"version\":2,\"objects\":[{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"p\"}},\"spec\":{}{}}}]}}",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        ),
    ];
    for (name, text) in cases {
        let result = parse_snapshot_text(&text, Path::new(name));
        let err = result
            .err()
            .unwrap_or_else(|| panic!("{name} was accepted"));
        let message = err.to_string();
        assert!(message.contains(name), "{message}");
        // The parsers' own limits (serde_json's recursion limit of 128,
        // the YAML reader's depth limit of 128) are what refuses it, by name.
        assert!(
            message.contains("recursion limit") || message.contains("depth"),
            "{name}: the error should say the nesting is the problem: {message}"
        );
    }
}
