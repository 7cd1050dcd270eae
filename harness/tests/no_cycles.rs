//! The harness is crates of its own (harness/README.md), and neither they
//! nor the modules inside each of them depend on each other in a circle:
//! the crates' arrows are read from their Cargo.toml files, the modules'
//! from the sources themselves, so a new arrow back up fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// `harness/`: the facade crate, with the other harness crates in its
/// subdirectories.
fn harness_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every harness crate, as its package name and its directory: `harness/`
/// and each `harness/*/` with a Cargo.toml.
fn harness_crates() -> BTreeMap<String, PathBuf> {
    let mut dirs = vec![harness_dir()];
    for entry in std::fs::read_dir(harness_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.join("Cargo.toml").is_file() {
            dirs.push(path);
        }
    }
    dirs.into_iter()
        .map(|dir| {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            (manifest_of(&manifest).0, dir)
        })
        .collect()
}

/// A Cargo.toml's package name and the names of all its dependencies
/// (normal, dev and build, for any target), read line by line.
fn manifest_of(text: &str) -> (String, BTreeSet<String>) {
    let (mut name, mut deps) = (String::new(), BTreeSet::new());
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            section = header.trim_end_matches(']').trim().to_string();
            // `[dependencies.foo]`: the dependency is in the header.
            if let Some((table, dep)) = section.rsplit_once('.')
                && table.ends_with("dependencies")
            {
                deps.insert(dep.trim().to_string());
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "package" && key == "name" {
            name = value.trim().trim_matches('"').to_string();
        } else if section.ends_with("dependencies") {
            // `foo.workspace = true` or `foo = { ... }`.
            deps.insert(key.split('.').next().unwrap_or("").trim().to_string());
        }
    }
    (name, deps)
}

/// The harness crates and the harness crates each depends on.
fn crates_graph() -> Graph {
    let crates = harness_crates();
    let mut graph = Graph::new();
    for (name, dir) in &crates {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let deps = manifest_of(&text).1;
        graph.insert(
            name.clone(),
            deps.into_iter()
                .filter(|d| crates.contains_key(d))
                .collect(),
        );
    }
    graph
}

/// Every non-test source file under `dir` (`tests.rs` files left out), as
/// its path split into components and its code without comment lines and
/// `#[cfg(test)]` items.
fn sources(dir: &Path) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if !name.ends_with(".rs") || name == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let parts = path
                .strip_prefix(dir)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            out.push((parts, non_test_code(&text)));
        }
    }
    out.sort();
    out
}

/// The text without comment lines and without the item after each
/// `#[cfg(test)]` (up to its `;`, or its braces closing again).
fn non_test_code(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        let mut depth = 0i64;
        let mut opened = false;
        i += 1;
        while i < lines.len() {
            let (open, close, semi) = braces(lines[i]);
            depth += open - close;
            opened |= open > 0;
            i += 1;
            if (opened && depth <= 0) || (!opened && semi) {
                break;
            }
        }
    }
    out.join("\n")
}

/// The `{` and `}` of a line outside string and char literals, and whether
/// it has a `;` there.
fn braces(line: &str) -> (i64, i64, bool) {
    let (mut open, mut close, mut semi) = (0, 0, false);
    let mut in_str = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_str => {
                chars.next();
            }
            '"' => in_str = !in_str,
            '\'' if !in_str => {
                // A char literal such as '{' or '\''; a lifetime is left alone.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.nth(2);
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.nth(1);
                }
            }
            '{' if !in_str => open += 1,
            '}' if !in_str => close += 1,
            ';' if !in_str => semi = true,
            _ => {}
        }
    }
    (open, close, semi)
}

/// The module names that follow each `prefix` in `code`: `prefix::a::x`
/// gives `a`, `prefix::{a, b::c}` gives `a` and `b`.
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|s| s.trim().split("::").next().unwrap_or("").trim())
                .collect(),
            None => vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ],
        };
        for n in names {
            if n != "self" && n.chars().next().is_some_and(|c| c.is_lowercase()) {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// Keeps only the arrows to modules of the graph (items such as
/// `crate::Sim` or `super::SimOptions` are not modules) and drops loops.
fn modules_only(mut graph: Graph) -> Graph {
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for (node, deps) in graph.iter_mut() {
        deps.retain(|d| modules.contains(d) && d != node);
    }
    graph
}

/// The crate's top-level modules and the ones each imports, from its
/// `crate::x` paths and the `super::x` paths that reach its root.
fn crate_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for (parts, code) in sources(src) {
        if parts[0] == "bin" || (parts.len() == 1 && parts[0] == "lib.rs") {
            continue;
        }
        let top = parts[0].trim_end_matches(".rs").to_string();
        // How many `super::` lead from this file to the crate root: one
        // from `a.rs` or `a/mod.rs`, two from `a/b.rs`.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        let deps = graph.entry(top).or_default();
        deps.extend(named_after(&code, "crate::"));
        deps.extend(named_after(&code, &"super::".repeat(depth)));
    }
    modules_only(graph)
}

/// A cycle in the graph, as the modules on it, when there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
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

fn assert_acyclic(what: &str, graph: &Graph) {
    if let Some(cycle) = find_cycle(graph) {
        panic!(
            "{what}: the arrows go in a circle: {}\n{graph:#?}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_harness_crates_depend_on_each_other_without_a_cycle() {
    let graph = crates_graph();
    let arrows = [
        ("mdiag-harness", "mdiag-harness-cluster"),
        ("mdiag-harness", "mdiag-harness-sim"),
        ("mdiag-harness-cluster", "mdiag-harness-node"),
        ("mdiag-harness-node", "mdiag-harness-util"),
        ("mdiag-harness-sim", "mdiag-harness-controller"),
        ("mdiag-harness-controller", "mdiag-harness-util"),
    ];
    for (from, to) in arrows {
        assert!(
            graph.get(from).is_some_and(|deps| deps.contains(to)),
            "the graph misses {from} -> {to}: {graph:#?}"
        );
    }
    assert_acyclic("the harness crates", &graph);
}

/// A harness crate, modules it must have and an arrow its graph must show.
type Expected = (
    &'static str,
    &'static [&'static str],
    Option<(&'static str, &'static str)>,
);

#[test]
fn the_modules_of_each_harness_crate_import_each_other_without_a_cycle() {
    // Modules each crate must have, and one arrow each graph must show, so
    // a parser that finds nothing fails too.
    let expected: [Expected; 6] = [
        (
            "mdiag-harness",
            &["helm", "helpers", "load", "scenarios"],
            Some(("helm", "helpers")),
        ),
        (
            "mdiag-harness-cluster",
            &["audit", "kubeconfig", "pki", "procs"],
            Some(("kubeconfig", "pki")),
        ),
        ("mdiag-harness-node", &["images", "ns"], None),
        (
            "mdiag-harness-sim",
            &["behavior", "node", "pod", "server", "state"],
            Some(("pod", "state")),
        ),
        ("mdiag-harness-controller", &[], None),
        ("mdiag-harness-util", &["events", "names"], None),
    ];
    let crates = harness_crates();
    let names: BTreeSet<&str> = expected.iter().map(|(name, ..)| *name).collect();
    assert_eq!(
        crates.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        names,
        "a harness crate came or went: update this test"
    );
    for (name, modules, arrow) in expected {
        let graph = crate_graph(&crates[name].join("src"));
        for module in modules {
            assert!(
                graph.contains_key(*module),
                "{name}: no module {module}: {graph:#?}"
            );
        }
        if let Some((from, to)) = arrow {
            assert!(
                graph[from].contains(to),
                "{name}: the graph misses {from} -> {to}: {graph:#?}"
            );
        }
        assert_acyclic(name, &graph);
    }
}

#[test]
fn the_parser_reads_paths_groups_and_test_items() {
    assert_eq!(
        named_after(
            "use crate::{a, b::c, self, Item};\nlet x = crate::d::f(); xcrate::e;",
            "crate::"
        ),
        ["a", "b", "d"]
    );
    assert_eq!(
        named_after("super::super::x; super::y", "super::super::"),
        ["x"]
    );
    let code = non_test_code(
        "use crate::a;\n// crate::b\n#[cfg(test)]\nuse crate::c;\n#[cfg(test)]\nmod tests {\n    let s = \"}\"; let c = '}';\n    crate::d::f();\n}\nfn g() { crate::e::h() }\n",
    );
    assert_eq!(named_after(&code, "crate::"), ["a", "e"]);
}

#[test]
fn the_manifest_parser_reads_names_and_every_kind_of_dependency() {
    let (name, deps) = manifest_of(
        "[package]\nname = \"a\"\nversion.workspace = true\n\n[lints]\nworkspace = true\n\n\
         [dependencies]\n# c = \"1\"\nb.workspace = true\nd = { workspace = true }\n\n\
         [dev-dependencies]\ne = \"1\"\n\n[target.'cfg(unix)'.build-dependencies]\nf = \"1\"\n\n\
         [dependencies.g]\nworkspace = true\n",
    );
    assert_eq!(name, "a");
    assert_eq!(deps, ["b", "d", "e", "f", "g"].map(String::from).into());
}

#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(find_cycle(&graph(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        find_cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
