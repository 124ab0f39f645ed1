//! Embeds into the `tabwire` binary what it ships:
//! - every `adapters/*.json` of the repository as the built-in adapters (`BUILTIN_ADAPTERS` in
//!   `$OUT_DIR/builtin_adapters.rs`), so adding a file needs no code change; they are validated at
//!   startup like user files, and by a unit test;
//! - the built extension (`EXTENSION_FILES` in `$OUT_DIR/extension_files.rs`: the files
//!   `extension_files.rs` names), which `tabwire extension install` and `tabwire setup` write out.
//!   The build fails, saying what to run, when the extension was not built.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "extension_files.rs"]
#[allow(
    dead_code,
    reason = "the Firefox manifest is the binary's and xtask's, not the build script's"
)]
mod extension_files;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("server/ is inside the repository");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    embed_adapters(root, &out_dir);
    embed_extension(root, &out_dir);
}

fn embed_adapters(root: &Path, out_dir: &Path) {
    let adapters_dir = root.join("adapters");
    println!("cargo:rerun-if-changed={}", adapters_dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&adapters_dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", adapters_dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();

    let entries: Vec<(String, PathBuf)> = files
        .iter()
        .map(|path| {
            let name = path.file_name().expect("a file").to_string_lossy();
            let canonical = path.canonicalize().expect("adapter file exists");
            (name.into_owned(), canonical)
        })
        .collect();
    write_table(
        &out_dir.join("builtin_adapters.rs"),
        "Built-in adapters: (file name, file text).",
        "BUILTIN_ADAPTERS: &[(&str, &str)]",
        "include_str",
        &entries,
    );
}

fn embed_extension(root: &Path, out_dir: &Path) {
    // What is embedded, and nothing else: `extension/` also holds the per-install pairing.json,
    // which every build writes, and watching the folder as a whole made the first rebuild after
    // each build compile the server again. `extension/dist` is scanned as a whole (a built file
    // added or removed reruns this); a script newly added at extension/'s top level is picked up
    // when manifest.json or dist changes next.
    for watched in ["manifest.json", "extension/dist"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let missing: Vec<&str> = extension_files::BUILT_FILES
        .iter()
        .copied()
        .filter(|f| !root.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        panic!(
            "\n\nThe extension is not built ({} missing), and the tabwire binary carries it.\n\
             Build everything with `cargo xtask build` (or ./build.sh on Debian), then this again.\n\n",
            missing.join(", ")
        );
    }
    let files = extension_files::extension_files(root)
        .unwrap_or_else(|e| panic!("listing the extension's files: {e}"));
    for file in files.iter().filter(|f| !f.starts_with("extension/dist/")) {
        println!("cargo:rerun-if-changed={}", root.join(file).display());
    }
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("manifest.json")).expect("manifest.json is readable"),
    )
    .expect("manifest.json is JSON");
    let version = std::env::var("CARGO_PKG_VERSION").expect("set by cargo");
    assert_eq!(
        manifest["version"].as_str(),
        Some(version.as_str()),
        "manifest.json's version must be the server's: they ship together"
    );
    let entries: Vec<(String, PathBuf)> = files
        .iter()
        .map(|file| {
            let path = root.join(file).canonicalize().expect("listed files exist");
            (file.clone(), path)
        })
        .collect();
    write_table(
        &out_dir.join("extension_files.rs"),
        "The built extension: (path relative to its root, contents).",
        "EXTENSION_FILES: &[(&str, &[u8])]",
        "include_bytes",
        &entries,
    );
}

/// Writes `file`: the static `decl`, documented by `doc`, a table of (name, the contents of a
/// file) whose every entry reads its file at compile time with the macro `include`.
fn write_table(file: &Path, doc: &str, decl: &str, include: &str, entries: &[(String, PathBuf)]) {
    let mut out = format!("/// {doc}\npub static {decl} = &[\n");
    for (name, path) in entries {
        let path = path.display().to_string();
        writeln!(out, "    ({name:?}, {include}!({path:?})),").expect("writing to a String");
    }
    out.push_str("];\n");
    write(file, &out);
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}
