//! Checks the architecture's dependency invariants (ARCHITECTURE.md) on what Cargo itself says
//! the workspace's crates depend on (`cargo metadata`, every kind and table form of dependency):
//! `bridge` stays portable (serde only: no tokio, rmcp, web-sys), only `server` knows MCP, and the
//! extension crates pull in no async runtime.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Each workspace crate's direct dependencies (normal, dev and build), by crate name.
fn dependencies() -> BTreeMap<String, Vec<String>> {
    dependencies_in(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// The direct dependencies of each crate of the workspace at `dir`, as `cargo metadata` says.
fn dependencies_in(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(dir)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|package| {
            let deps = package["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .map(|dep| {
                    dep["name"]
                        .as_str()
                        .expect("a dependency's name")
                        .to_owned()
                })
                .collect();
            (package["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

fn of<'a>(all: &'a BTreeMap<String, Vec<String>>, krate: &str) -> &'a [String] {
    all.get(krate)
        .unwrap_or_else(|| panic!("no crate {krate} in the workspace"))
}

#[test]
fn bridge_depends_on_serde_only() {
    let all = dependencies();
    let deps = of(&all, "bridge");
    assert!(
        !deps.is_empty(),
        "cargo metadata lists no dependencies of bridge at all"
    );
    for dep in deps {
        assert!(
            // `url`: the server's WHATWG reading of an origin (feature `whatwg`, off in the wasm);
            // `schemars`: the JSON Schemas of argument types the server lists (feature `schema`,
            // off in the wasm). Both pure Rust.
            [
                "serde",
                "serde_json",
                "thiserror",
                "hmac",
                "sha2",
                "url",
                "schemars"
            ]
            .contains(&dep.as_str()),
            "bridge must stay portable (native + wasm32, no runtime or browser bindings), but depends on {dep}"
        );
    }
}

#[test]
fn only_the_server_knows_mcp() {
    let all = dependencies();
    for (krate, deps) in &all {
        if krate != "server" {
            assert!(!deps.iter().any(|d| d == "rmcp"), "{krate} depends on rmcp");
        }
    }
    assert!(
        of(&all, "server").iter().any(|d| d == "rmcp"),
        "the server no longer depends on rmcp: update ARCHITECTURE.md and this test"
    );
}

#[test]
fn extension_crates_pull_in_no_async_runtime() {
    let all = dependencies();
    for krate in ["bridge", "worker", "injector"] {
        for banned in ["tokio", "rmcp", "tokio-tungstenite"] {
            assert!(
                !of(&all, krate).iter().any(|d| d == banned),
                "{krate} depends on {banned}"
            );
        }
    }
}

/// What the old line-by-line reading of Cargo.toml missed: a `[dependencies.x]` table is a
/// dependency too. Checked on a throwaway manifest, as `cargo metadata` reads it.
#[test]
fn dependencies_in_table_form_are_seen() {
    let dir = std::env::temp_dir().join(format!("tabwire-invariants-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [workspace]\n\n[dependencies.serde]\nversion = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nthiserror = \"1\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    let found = dependencies_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(of(&found, "probe"), ["serde", "thiserror"]);
}

/// Inside the server, only the MCP face (`mcp`, its HTTP transport `http`, the permission gate, the
/// hand-off and the browser tools) uses rmcp: the hub, the peers, the grants, the audit log and the state cache
/// are MCP-free.
#[test]
fn only_the_mcp_modules_of_the_server_use_rmcp() {
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("server/src is readable") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut users: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines()
                .map(str::trim_start)
                .filter(|line| !line.starts_with("//"))
                .any(|line| line.contains("rmcp::") || line.starts_with("use rmcp"))
        })
        .map(|path| path.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    users.sort();
    assert!(files.len() > 10, "found only {files:?}");
    assert!(users.iter().any(|u| u.starts_with("mcp")), "{users:?}");
    // The MCP face: the handler and its transport, the permission gate and the hand-off (both
    // ask the person through MCP elicitation) and the browser tools (MCP image results).
    let face = ["mcp", "http", "permission", "handoff", "browser_tools"];
    let others: Vec<&String> = users
        .iter()
        .filter(|u| !face.iter().any(|m| u.starts_with(m)))
        .collect();
    assert!(others.is_empty(), "MCP-free modules use rmcp: {others:?}");
}

/// What `./build.sh` makes is not committed: the build output, the pairing file, cargo's target.
#[test]
fn generated_files_are_ignored_by_git() {
    let gitignore =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.gitignore"))
            .expect("the repository's .gitignore");
    // `/target`, not `/target/`: a fresh clone's target directory may be a link into the cache.
    for generated in ["/target", "/extension/dist/", "/extension/pairing.json"] {
        assert!(
            gitignore.lines().any(|line| line.trim() == generated),
            ".gitignore does not list {generated}"
        );
    }
}
