//! Keeps the wasm crates' browser glue apart from their logic (ARCHITECTURE.md): in
//! `extension/worker` and `extension/injector`, only files under `src/web/` name the browser's
//! bindings (`web_sys`, `js_sys`, `wasm_bindgen`, `wasm_bindgen_futures`), so every other module
//! builds and is tested on the host; and the modules of each `src/web/` import one another
//! without a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates whose browser glue lives in `src/web/`.
const WASM_CRATES: [&str; 2] = ["extension/worker", "extension/injector"];

/// The names that make a file browser glue.
const BROWSER_BINDINGS: [&str; 3] = ["web_sys", "js_sys", "wasm_bindgen"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bridge is in the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `source` without its line comments (doc comments may name what they explain).
fn code_of(source: &str) -> String {
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The bindings `source` names in code (not in comments).
fn bindings_named(source: &str) -> Vec<&'static str> {
    let code = code_of(source);
    BROWSER_BINDINGS
        .into_iter()
        .filter(|name| code.contains(name))
        .collect()
}

#[test]
fn only_the_web_folders_name_the_browser_bindings() {
    for krate in WASM_CRATES {
        let src = workspace().join(krate).join("src");
        let web = src.join("web");
        let glue = rust_files(&web);
        assert!(
            glue.iter()
                .any(|f| !bindings_named(&fs::read_to_string(f).unwrap()).is_empty()),
            "{krate}/src/web/ names no browser binding: is the glue somewhere else?"
        );
        for file in rust_files(&src) {
            if file.starts_with(&web) {
                continue;
            }
            let named = bindings_named(&fs::read_to_string(&file).unwrap());
            assert!(
                named.is_empty(),
                "{} names {named:?}: browser glue belongs in {krate}/src/web/, behind a trait \
                 the pure modules use",
                file.display()
            );
        }
    }
}

/// The module of `src/web/` that `file` belongs to (`glue/tab_calls.rs` is part of `glue`).
fn web_module(web: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(web).expect("a file under web/");
    let first = relative.components().next().expect("a file name");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

/// The sibling modules of `src/web/` that the code of `file` (in module `module`) names.
fn web_imports(code: &str, module: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    // A direct child of `web` names its siblings `super::x`; one level deeper (`glue/tab_calls`),
    // `super::x` is its own parent's import, and it names siblings `crate::web::x`.
    let mut named = BTreeSet::new();
    for prefix in ["super::", "crate::web::"] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if siblings.contains(&name) && name != module {
                named.insert(name);
            }
        }
    }
    named
}

/// A cycle in `graph`, if there is one (as the modules on it).
fn cycle_in(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_glue_has_no_import_cycles() {
    for krate in WASM_CRATES {
        let web = workspace().join(krate).join("src").join("web");
        let files = rust_files(&web);
        let siblings: BTreeSet<String> = files
            .iter()
            .map(|f| web_module(&web, f))
            .filter(|m| m != "mod")
            .collect();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let module = web_module(&web, file);
            if module == "mod" {
                continue;
            }
            let code = code_of(&fs::read_to_string(file).unwrap());
            let nested = file.parent() != Some(web.as_path());
            let imports = if nested {
                // `super::` of a nested file is its parent module: only `crate::web::` counts.
                web_imports(&code.replace("super::", ""), &module, &siblings)
            } else {
                web_imports(&code, &module, &siblings)
            };
            graph.entry(module).or_default().extend(imports);
        }
        assert!(
            graph.len() > 2,
            "{krate}/src/web/ has too few modules to check: {graph:?}"
        );
        if let Some(cycle) = cycle_in(&graph) {
            panic!(
                "{krate}/src/web/ has an import cycle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn a_cycle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        cycle_in(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
