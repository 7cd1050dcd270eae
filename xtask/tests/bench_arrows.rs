//! The benchmarks in xtask/src/bench/ import only the measuring helpers,
//! the helpers import no benchmark, and gate dispatching to gate_real is
//! the one arrow between two benchmarks.

use std::collections::BTreeSet;
use std::path::PathBuf;

const HELPERS: [&str; 2] = ["gate_common", "measure"];

/// Each file's `super::NAME` arrows to the other files of bench/, its
/// comment lines and `#[cfg(test)]` module left out.
fn arrows() -> BTreeSet<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/bench");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".rs") && n != "mod.rs")
        .map(|n| n.trim_end_matches(".rs").to_string())
        .collect();
    let mut out = BTreeSet::new();
    for from in &files {
        let text = std::fs::read_to_string(dir.join(format!("{from}.rs"))).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for (i, _) in code.match_indices("super::") {
            let name: String = code[i + "super::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if files.contains(&name) && &name != from {
                out.insert((from.clone(), name));
            }
        }
    }
    out
}

#[test]
fn benchmarks_import_helpers_and_helpers_import_no_benchmark() {
    let arrows = arrows();
    assert!(
        arrows.contains(&("gate".into(), "gate_real".into())),
        "{arrows:?}"
    );
    for (from, to) in &arrows {
        let allowed = HELPERS.contains(&to.as_str()) && !HELPERS.contains(&from.as_str())
            || (from == "gate" && to == "gate_real");
        assert!(allowed, "bench/{from}.rs imports bench/{to}.rs: {arrows:?}");
    }
}
