//! Which files make up the unpacked extension, decided once: the server's build script embeds
//! exactly these into `tabwire` (`tabwire extension install`), and the build driver (xtask) packs
//! exactly these into the extension's `.zip`. Both include this file with `#[path]`.

use std::io;
use std::path::Path;

/// Built files the extension cannot run without: when one is missing, the extension was not built.
pub const BUILT_FILES: &[&str] = &[
    "extension/dist/worker/worker.js",
    "extension/dist/worker/worker_bg.wasm",
    "extension/dist/injector/injector.js",
    "extension/dist/injector/injector_bg.wasm",
    "extension/dist/injector-js/injector.js",
    "extension/dist/injector-js/injector_bg.wasm.js",
    "extension/dist/code-adapters.js",
];

/// The extension's files under the repository root `root`, relative to it with `/` separators and
/// sorted: `manifest.json`, the hand-written scripts and pages in `extension/` (not the Rust crates
/// beside them, nor the per-install `pairing.json`), and everything built into `extension/dist/`.
pub fn extension_files(root: &Path) -> io::Result<Vec<String>> {
    let mut files = vec!["manifest.json".to_owned()];
    for entry in std::fs::read_dir(root.join("extension"))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let shipped = name.ends_with(".js") || name.ends_with(".html") || name.ends_with(".css");
        if entry.file_type()?.is_file() && shipped {
            files.push(format!("extension/{name}"));
        }
    }
    walk(root, "extension/dist", &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(root: &Path, dir: &str, files: &mut Vec<String>) -> io::Result<()> {
    for entry in std::fs::read_dir(root.join(dir))? {
        let entry = entry?;
        let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
        if entry.file_type()?.is_dir() {
            walk(root, &path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}
