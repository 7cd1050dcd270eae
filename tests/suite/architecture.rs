//! The layers hold: the product crates depend on each other only along the
//! arrows docs/architecture.md draws, the core does no IO, the views name
//! no Kubernetes type, and inside each crate the modules import each other
//! without a cycle. Read from the manifests and the sources themselves, so
//! a new arrow fails here before anyone has to notice it in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The product crates: name and manifest directory.
const CRATES: [(&str, &str); 4] = [
    ("mdiag", "."),
    ("mdiag-core", "src/core"),
    ("mdiag-source", "src/source"),
    ("mdiag-render", "src/render"),
];

/// The only arrows between them.
const ALLOWED: [(&str, &str); 5] = [
    ("mdiag", "mdiag-core"),
    ("mdiag", "mdiag-source"),
    ("mdiag", "mdiag-render"),
    ("mdiag-source", "mdiag-core"),
    ("mdiag-render", "mdiag-core"),
];

/// Every dependency a manifest names, in any dependency table
/// (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`,
/// target-specific ones), by its package name.
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_matches(['[', ']']).ends_with("dependencies");
            continue;
        }
        if !in_deps || line.starts_with('#') || line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_end_matches(".workspace").trim();
        // `alias = { package = "real-name", ... }` depends on real-name.
        let name = value
            .split_once("package")
            .and_then(|(_, rest)| rest.split('"').nth(1))
            .unwrap_or(key);
        out.insert(name.to_string());
    }
    out
}

#[test]
fn the_product_crates_depend_only_along_the_arrows() {
    let product: BTreeSet<&str> = CRATES.iter().map(|(name, _)| *name).collect();
    let mut arrows = BTreeSet::new();
    for (name, dir) in CRATES {
        for dep in dependencies(&root().join(dir).join("Cargo.toml")) {
            if product.contains(dep.as_str()) {
                arrows.insert((name.to_string(), dep));
            }
        }
    }
    let allowed: BTreeSet<(String, String)> = ALLOWED
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let extra: Vec<_> = arrows.difference(&allowed).collect();
    assert!(
        extra.is_empty(),
        "arrows not in docs/architecture.md: {extra:?}"
    );
    // Each allowed arrow is there: the table says what the code does.
    let missing: Vec<_> = allowed.difference(&arrows).collect();
    assert!(
        missing.is_empty(),
        "arrows the manifests no longer have: {missing:?}"
    );
}

#[test]
fn the_core_reads_nothing_and_the_views_name_no_kubernetes_type() {
    let core = dependencies(&root().join("src/core/Cargo.toml"));
    for io in ["tokio", "kube", "futures", "hyper", "tower", "tempfile"] {
        assert!(!core.contains(io), "mdiag-core depends on {io}");
    }
    let render = dependencies(&root().join("src/render/Cargo.toml"));
    for k8s in ["k8s-openapi", "kube", "kube-core", "tokio"] {
        assert!(!render.contains(k8s), "mdiag-render depends on {k8s}");
    }
    // Not through the core's re-exports either.
    for (file, code) in sources(&root().join("src/render")) {
        for word in ["k8s_openapi", "kube_core", "DynamicObject"] {
            assert!(!code.contains(word), "{} names {word}", file.display());
        }
    }
    // The core is handed its clock, files and settings.
    for (file, code) in sources(&root().join("src/core")) {
        for io in [
            "std::fs",
            "std::env",
            "std::net",
            "std::process",
            "Timestamp::now",
            "SystemTime",
            "Instant::now",
            "tokio",
        ] {
            assert!(!code.contains(io), "{} uses {io}", file.display());
        }
    }
}

#[test]
fn the_modules_of_each_product_crate_import_each_other_without_a_cycle() {
    for (name, dir) in CRATES {
        let crate_root = root().join(dir);
        // The binary's own modules live in src/ beside the other crates.
        let src = if dir == "." {
            crate_root.join("src")
        } else {
            crate_root
        };
        let graph = module_graph(&src);
        assert!(
            graph.len() > 1,
            "{name}: no modules found under {}",
            src.display()
        );
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{name}: the modules import in a circle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

/// Every non-test source file of a crate whose root is `dir` (its other
/// crates' directories left out), without comments and test modules.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                // Another crate, or a directory of test modules.
                if !path.join("Cargo.toml").exists() && name != "tests" {
                    stack.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs") || name == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            out.push((path, code));
        }
    }
    out.sort();
    out
}

/// The crate's top-level modules and the ones each imports, from its
/// `crate::x` paths and the `super::x` paths that reach its root.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, code) in sources(src) {
        let rel = path.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        if parts.len() == 1 && (parts[0] == "lib.rs" || parts[0] == "main.rs") {
            continue;
        }
        let top = parts[0].trim_end_matches(".rs").to_string();
        // How many `super::` lead from this file to the crate root.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        let to_root = "super::".repeat(depth);
        let node = graph.entry(top.clone()).or_default();
        for prefix in ["crate::".to_string(), to_root] {
            for (i, _) in code.match_indices(&prefix) {
                let before = code[..i].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let rest = &code[i + prefix.len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    // `crate::{a, b::c}`
                    Some(group) => group
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or(""))
                        .collect(),
                    None => vec![
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or(""),
                    ],
                };
                for n in names {
                    if !n.is_empty()
                        && n != top
                        && n != "self"
                        && n.chars().next().is_some_and(|c| c.is_lowercase())
                    {
                        node.insert(n.to_string());
                    }
                }
            }
        }
    }
    // Items of the crate root (`crate::Style`) are not modules.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// A cycle in the graph, as the modules on it, when there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(
        find_cycle(&graph(&[("human", "report"), ("report", "words")])),
        None
    );
    assert_eq!(
        find_cycle(&graph(&[
            ("headline", "human"),
            ("human", "report"),
            ("report", "headline")
        ])),
        Some(vec![
            "headline".to_string(),
            "human".into(),
            "report".into(),
            "headline".into()
        ])
    );
}
