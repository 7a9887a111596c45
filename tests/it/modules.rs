//! The crate's modules depend on each other one way only: no import cycles.
//!
//! Every `use crate::`/`super::` path and every inline `crate::...` path in `src/` (tests excluded)
//! is an edge from the file's module to the module it names. An edge between two modules where
//! one contains the other (a parent re-exporting its children, a child using its parent's error
//! type) is the usual facade and is not counted; any other edge is lifted to the two sibling
//! modules it crosses under their closest common parent. Each set of siblings must then form a
//! graph without cycles, at every level (files inside `results/`, and domains under the crate).

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every module of a crate (`root` is `lib.rs` or `main.rs` under `src`) with its source, minus
/// comments and test-only code.
fn modules(src: &Path, root: &str) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    walk(src, src, root, &mut out);
    let test_only: BTreeSet<Module> = out
        .iter()
        .flat_map(|(m, text)| {
            Regex::new(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+(\w+)\s*;")
                .unwrap()
                .captures_iter(text)
                .map(|c| {
                    let mut child = m.clone();
                    child.push(c[1].to_string());
                    child
                })
                .collect::<Vec<_>>()
        })
        .collect();
    out.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
    out
}

fn walk(src: &Path, dir: &Path, root: &str, out: &mut BTreeMap<Module, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(src, &path, root, out);
            continue;
        }
        let top = path.parent() == Some(src);
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.extension().is_none_or(|e| e != "rs") || top && (name == "lib" || name == "main") && name != root {
            continue;
        }
        let mut module: Module = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        if module.last().is_some_and(|l| l == "mod" || top && l == root) {
            module.pop();
        }
        out.insert(module, strip(&std::fs::read_to_string(&path).unwrap()));
    }
}

/// The source without comments and without inline `#[cfg(test)] mod ... { }` blocks.
fn strip(text: &str) -> String {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines.peek().is_some_and(|n| n.trim_start().contains("mod ") && n.contains('{'))
        {
            break; // test modules sit at the end of a file
        }
        if t.starts_with("//") {
            continue;
        }
        kept.push_str(line.split(" //").next().unwrap_or(line));
        kept.push('\n');
    }
    kept
}

/// Expands a use tree (`a::{b, c::{d, self}}`) into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.split(" as ").next().unwrap_or(tree).trim().to_string()] };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| if p == "self" { prefix.to_string() } else { format!("{prefix}::{p}") })
        .collect()
}

/// Resolves a path written in module `at` to the deepest known module it names.
fn resolve(at: &Module, path: &str, known: &BTreeSet<Module>) -> Option<Module> {
    let mut segs = path.split("::").map(str::trim).filter(|s| !s.is_empty());
    let mut base: Module = match segs.next()? {
        "crate" => Vec::new(),
        "super" => {
            // `super` in `foo.rs` or `foo/mod.rs` is the parent of `foo`.
            let mut b = at.clone();
            b.pop()?;
            b
        }
        "self" => at.clone(),
        _ => return None,
    };
    let rest: Vec<&str> = segs.collect();
    let mut i = 0;
    while i < rest.len() && rest[i] == "super" {
        base.pop()?;
        i += 1;
    }
    let mut best = base.clone();
    for s in &rest[i..] {
        base.push(s.to_string());
        if known.contains(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    Some(best)
}

/// Edges between sibling modules, grouped by their parent.
fn sibling_edges(src: &Path, root: &str) -> BTreeMap<Module, BTreeSet<(String, String)>> {
    let mods = modules(src, root);
    let known: BTreeSet<Module> = mods.keys().cloned().collect();
    let use_re = Regex::new(r"(?s)\buse\s+((?:crate|super|self)::[^;]*);").unwrap();
    let path_re = Regex::new(r"\b(?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+").unwrap();
    let mut edges: BTreeMap<Module, BTreeSet<(String, String)>> = BTreeMap::new();
    for (m, text) in &mods {
        let mut paths: Vec<String> = use_re.captures_iter(text).flat_map(|c| expand(&c[1])).collect();
        let rest = use_re.replace_all(text, "");
        paths.extend(path_re.find_iter(&rest).map(|p| p.as_str().to_string()));
        for p in paths {
            let Some(to) = resolve(m, &p, &known) else { continue };
            if to.starts_with(m) || m.starts_with(&to) {
                continue;
            }
            let common = m.iter().zip(&to).take_while(|(a, b)| a == b).count();
            edges.entry(m[..common].to_vec()).or_default().insert((m[common].clone(), to[common].clone()));
        }
    }
    edges
}

/// The cycles (strongly connected components of more than one module) of a graph.
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for (a, b) in edges {
                if *a == n && seen.insert(b.clone()) {
                    stack.push(b.clone());
                }
            }
        }
        seen
    };
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for n in &nodes {
        let from_n = reach(n);
        let scc: Vec<String> =
            nodes.iter().filter(|m| from_n.contains(**m) && reach(m).contains(*n)).map(|m| m.to_string()).collect();
        if scc.len() > 1 {
            out.insert(scc);
        }
    }
    out.into_iter().collect()
}

#[rstest::rstest]
#[case::refrain("src", "lib")]
#[case::refrain_bench("crates/refrain-bench/src", "main")]
fn modules_import_each_other_one_way_only(#[case] src: &str, #[case] root: &str) {
    let src = crate::support::repo().join(src);
    let mods = modules(&src, root);
    assert!(mods.len() > 10 && mods.contains_key(&Vec::new()), "{} modules found under {}", mods.len(), src.display());
    let mut found = Vec::new();
    for (parent, edges) in sibling_edges(&src, root) {
        for c in cycles(&edges) {
            let at = if parent.is_empty() { "crate".to_string() } else { parent.join("::") };
            let detail: Vec<String> = edges
                .iter()
                .filter(|(a, b)| c.contains(a) && c.contains(b))
                .map(|(a, b)| format!("{a} -> {b}"))
                .collect();
            found.push(format!("{at}: {{{}}} ({})", c.join(", "), detail.join(", ")));
        }
    }
    assert!(found.is_empty(), "import cycles between modules:\n{}", found.join("\n"));
}

#[test]
fn the_cycle_check_sees_a_cycle_and_resolves_paths() {
    let edges: BTreeSet<(String, String)> = [("put", "evict"), ("evict", "put"), ("get", "key")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(cycles(&edges), vec![vec!["evict".to_string(), "put".to_string()]]);
    assert_eq!(
        expand("crate::plan::{key::IntentKey, library::{self, Record}}"),
        vec!["crate::plan::key::IntentKey", "crate::plan::library", "crate::plan::library::Record"]
    );
    let known: BTreeSet<Module> =
        [vec![], vec!["results".into()], vec!["results".into(), "put".into()], vec!["results".into(), "evict".into()]]
            .into_iter()
            .collect();
    let at = vec!["results".to_string(), "put".to_string()];
    assert_eq!(resolve(&at, "super::evict::shrink_to", &known), Some(vec!["results".into(), "evict".into()]));
    assert_eq!(resolve(&at, "crate::results::Error", &known), Some(vec!["results".into()]));
}
