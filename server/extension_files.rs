//! Which files make up the unpacked extension, decided once: the server's build script embeds
//! exactly these into `tabwire` (`tabwire extension install`), and the build driver (xtask) packs
//! exactly these into the extension's `.zip`. Both include this file with `#[path]`. Also the
//! one Firefox manifest, made from the Chrome one (`firefox_manifest`): the same files and wasm,
//! another manifest, written by the build's Firefox `.zip` and `tabwire extension install
//! --browser firefox`.

use std::io;
use std::path::Path;

/// Built files the extension cannot run without: when one is missing, the extension was not built.
pub const BUILT_FILES: &[&str] = &[
    "extension/dist/worker/worker.js",
    "extension/dist/worker/worker_bg.wasm",
    "extension/dist/injector/injector.js",
    "extension/dist/injector/injector_bg.wasm",
    "extension/dist/injector/injector_wasm.js",
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

/// The Firefox add-on's id (`browser_specific_settings.gecko.id`): fixed, so a profile keeps the
/// add-on's UUID across reloads, and tests can pin that UUID (`extensions.webextensions.uuids`).
pub const GECKO_ID: &str = "tabwire@tabwire.dev";

/// The first Firefox with what the extension uses (MV3 `scripting` in the MAIN world,
/// `storage.session`, `wasm-unsafe-eval`): ESR 128.
const GECKO_MIN_VERSION: &str = "128.0";

/// The Firefox manifest made from the Chrome one (`manifest.json`, the one source): Firefox runs
/// the worker as an event page (`background.scripts`: it refuses `service_worker`), needs the
/// add-on id, and has no `debugger` API (trusted input is Chrome's) nor Chrome's `key`,
/// `minimum_chrome_version` or `use_dynamic_url`. The explicit `extension_pages` CSP with
/// `'wasm-unsafe-eval'` is kept: without it Firefox blocks the wasm and rewrites `ws://` to `wss://`.
pub fn firefox_manifest(chrome: &serde_json::Value) -> serde_json::Value {
    let mut manifest = chrome.clone();
    let Some(fields) = manifest.as_object_mut() else {
        return manifest;
    };
    fields.remove("key");
    fields.remove("minimum_chrome_version");
    let worker = chrome["background"]["service_worker"].clone();
    fields.insert(
        "background".to_owned(),
        serde_json::json!({"scripts": [worker], "type": "module"}),
    );
    if let Some(permissions) = fields.get_mut("permissions").and_then(|p| p.as_array_mut()) {
        permissions.retain(|p| p != "debugger");
    }
    if let Some(resources) = fields
        .get_mut("web_accessible_resources")
        .and_then(|r| r.as_array_mut())
    {
        for resource in resources.iter_mut().filter_map(|r| r.as_object_mut()) {
            resource.remove("use_dynamic_url");
        }
    }
    fields.insert(
        "browser_specific_settings".to_owned(),
        serde_json::json!({"gecko": {"id": GECKO_ID, "strict_min_version": GECKO_MIN_VERSION}}),
    );
    manifest
}
