//! The harness's modules import each other without a cycle: the top-level
//! modules of the crate, and the modules inside `sim/`. Read from the
//! sources themselves, so a new arrow back up fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
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

/// The modules of `sim/` (its own files, not `sim/mod.rs`) and the ones
/// each imports, from `super::x` and `crate::sim::x` paths.
fn sim_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for (parts, code) in sources(&src.join("sim")) {
        if parts.len() != 1 || parts[0] == "mod.rs" {
            continue;
        }
        let deps = graph
            .entry(parts[0].trim_end_matches(".rs").to_string())
            .or_default();
        deps.extend(named_after(&code, "crate::sim::"));
        deps.extend(named_after(&code, "super::"));
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
            "{what}: the modules import in a circle: {}\n{graph:#?}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let graph = crate_graph(&src());
    for module in ["cluster", "controller", "helpers", "node", "sim", "util"] {
        assert!(graph.contains_key(module), "no module {module}: {graph:#?}");
    }
    assert!(
        graph["cluster"].contains("node"),
        "the graph misses cluster -> node: {graph:#?}"
    );
    assert_acyclic("harness", &graph);
}

#[test]
fn the_modules_of_sim_import_each_other_without_a_cycle() {
    let graph = sim_graph(&src());
    for module in ["node", "pod", "server", "state", "behavior"] {
        assert!(graph.contains_key(module), "no sim::{module}: {graph:#?}");
    }
    assert!(
        graph["pod"].contains("state"),
        "the graph misses pod -> state: {graph:#?}"
    );
    assert_acyclic("harness::sim", &graph);
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
