//! Checks the architecture's dependency invariants (ARCHITECTURE.md) by reading the manifests:
//! `bridge` stays portable (serde only: no tokio, rmcp, web-sys), and only `server` knows MCP.

use std::path::Path;

fn manifest(crate_dir: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("Cargo.toml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The dependency names of every `[dependencies]`-like table in a manifest.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut deps = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_matches(['[', ']']).ends_with("dependencies");
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                deps.push(name.split('.').next().unwrap_or(name).to_owned());
            }
        }
    }
    deps
}

#[test]
fn bridge_depends_on_serde_only() {
    let deps = dependencies(&manifest("bridge"));
    assert!(!deps.is_empty(), "the parser found no dependencies at all");
    for dep in &deps {
        assert!(
            ["serde", "serde_json", "thiserror", "hmac", "sha2"].contains(&dep.as_str()),
            "bridge must stay portable (native + wasm32, no runtime or browser bindings), but depends on {dep}"
        );
    }
}

#[test]
fn only_the_server_knows_mcp() {
    for krate in ["bridge", "extension/worker", "extension/injector"] {
        let deps = dependencies(&manifest(krate));
        assert!(!deps.iter().any(|d| d == "rmcp"), "{krate} depends on rmcp");
    }
    assert!(
        dependencies(&manifest("server"))
            .iter()
            .any(|d| d == "rmcp"),
        "the server no longer depends on rmcp: update ARCHITECTURE.md and this test"
    );
}

#[test]
fn extension_crates_pull_in_no_async_runtime() {
    for krate in ["bridge", "extension/worker", "extension/injector"] {
        let deps = dependencies(&manifest(krate));
        for banned in ["tokio", "rmcp", "tokio-tungstenite"] {
            assert!(
                !deps.iter().any(|d| d == banned),
                "{krate} depends on {banned}"
            );
        }
    }
}
