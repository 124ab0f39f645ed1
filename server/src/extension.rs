//! The extension the binary carries (embedded by build.rs from the built extension) and its
//! installs: writing a ready, paired unpacked extension into a folder (`tabwire extension install`,
//! `tabwire setup`), and the list of the folders this user's extensions were paired in, which
//! `tabwire doctor` checks.

use std::io;
use std::path::{Path, PathBuf};

use crate::pairing::{self, PairingError, Secret};
use crate::user_dirs::UserDirs;

include!(concat!(env!("OUT_DIR"), "/extension_files.rs"));

#[path = "../extension_files.rs"]
#[allow(
    dead_code,
    reason = "the listing is the build's; the binary uses the Firefox manifest"
)]
mod extension_files;
pub use extension_files::firefox_manifest;

/// The extension's version: the binary's (build.rs checks that manifest.json agrees).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Which browser an install is for: the same files, each browser's manifest (Firefox's is made
/// from Chrome's by `firefox_manifest`, in `extension_files.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Browser {
    /// Chrome and the browsers built on Chromium (Edge, Brave…).
    #[default]
    Chrome,
    Firefox,
}

/// Where an extension root keeps its pairing file.
pub const PAIRING_FILE: &str = "extension/pairing.json";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "{0} is not empty and holds no Tabwire extension: choose a new or empty folder \
         (nothing was written)"
    )]
    NotOurs(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Pairing(#[from] PairingError),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> InstallError + '_ {
    move |source| InstallError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The version of the extension in `root` (its manifest's), when there is one.
pub fn installed_version(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("manifest.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    (manifest["name"] == "Tabwire").then(|| manifest["version"].as_str().map(str::to_owned))?
}

/// Writes the embedded extension into `root` (created if needed; a previous Tabwire extension
/// there is replaced, anything else refused), with `browser`'s manifest, and pairs it with
/// `port` and `secret`.
pub fn install(
    dirs: &UserDirs,
    root: &Path,
    port: u16,
    secret: &Secret,
    browser: Browser,
) -> Result<(), InstallError> {
    let has_entries = std::fs::read_dir(root).is_ok_and(|mut entries| entries.next().is_some());
    if has_entries && installed_version(root).is_none() {
        return Err(InstallError::NotOurs(root.to_owned()));
    }
    // Built files of an older version must not linger next to the new ones.
    let dist = root.join("extension").join("dist");
    if dist.exists() {
        std::fs::remove_dir_all(&dist).map_err(io_error(&dist))?;
    }
    for (relative, bytes) in EXTENSION_FILES {
        let path = root.join(relative);
        if let Some(dir) = path.parent() {
            crate::user_dirs::create_private_dir(dir).map_err(io_error(dir))?;
        }
        let manifest;
        let bytes = match (*relative, browser) {
            ("manifest.json", Browser::Firefox) => {
                let chrome: serde_json::Value =
                    serde_json::from_slice(bytes).expect("build.rs checked manifest.json is JSON");
                manifest =
                    serde_json::to_vec_pretty(&firefox_manifest(&chrome)).expect("JSON serializes");
                &manifest[..]
            }
            _ => *bytes,
        };
        std::fs::write(&path, bytes).map_err(io_error(&path))?;
    }
    pair(dirs, &root.join(PAIRING_FILE), port, secret)
}

/// Writes the pairing file `config` of the extension around it (`<root>/extension/pairing.json`)
/// and remembers that root among this user's extensions.
pub fn pair(
    dirs: &UserDirs,
    config: &Path,
    port: u16,
    secret: &Secret,
) -> Result<(), InstallError> {
    pairing::write_extension_config(config, port, secret)?;
    let config = std::path::absolute(config).map_err(io_error(config))?;
    match config.parent().and_then(Path::parent) {
        Some(root) if root.join("manifest.json").is_file() => remember(dirs, root),
        _ => Ok(()), // a pairing file outside an extension: nothing to remember
    }
}

/// The extension roots this user paired, most recent last (missing or unreadable list: none).
pub fn remembered(dirs: &UserDirs) -> Vec<PathBuf> {
    std::fs::read_to_string(dirs.extensions_list())
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn remember(dirs: &UserDirs, root: &Path) -> Result<(), InstallError> {
    let mut roots = remembered(dirs);
    roots.retain(|r| r != root);
    roots.push(root.to_owned());
    let file = dirs.extensions_list();
    if let Some(dir) = file.parent() {
        crate::user_dirs::create_private_dir(dir).map_err(io_error(dir))?;
    }
    let text = serde_json::to_string_pretty(&roots).expect("paths serialize");
    std::fs::write(&file, text).map_err(io_error(&file))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_embedded_extension_is_complete() {
        let names: Vec<&str> = EXTENSION_FILES.iter().map(|(name, _)| *name).collect();
        for needed in [
            "manifest.json",
            "extension/worker.js",
            "extension/popup.html",
            "extension/dist/worker/worker_bg.wasm",
            "extension/dist/injector-js/injector_bg.wasm.js",
        ] {
            assert!(
                names.contains(&needed),
                "{needed} is not embedded: {names:?}"
            );
        }
        assert!(
            !names.contains(&PAIRING_FILE),
            "a developer's pairing must never ship"
        );
    }

    #[test]
    fn a_firefox_install_has_firefoxs_manifest_and_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let user = user_in(dir.path());
        let (chrome, firefox) = (dir.path().join("chrome"), dir.path().join("firefox"));
        let secret = Secret::parse(&"ab".repeat(32)).unwrap();
        install(&user, &chrome, 4242, &secret, Browser::Chrome).unwrap();
        install(&user, &firefox, 4242, &secret, Browser::Firefox).unwrap();
        let read = |root: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(root.join("manifest.json")).unwrap())
                .unwrap()
        };
        let manifest = read(&firefox);
        assert_eq!(
            manifest["background"],
            serde_json::json!({"scripts": ["extension/worker.js"], "type": "module"})
        );
        assert_eq!(
            manifest["browser_specific_settings"]["gecko"]["id"],
            extension_files::GECKO_ID
        );
        let csp = manifest["content_security_policy"]["extension_pages"]
            .as_str()
            .unwrap();
        assert!(csp.contains("'wasm-unsafe-eval'"), "{csp}");
        assert!(manifest.get("key").is_none());
        let permissions = manifest["permissions"].as_array().unwrap();
        assert!(!permissions.iter().any(|p| p == "debugger"));
        assert!(
            read(&chrome)["permissions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == "debugger")
        );
        assert_eq!(installed_version(&firefox).as_deref(), Some(VERSION));
        for (relative, bytes) in EXTENSION_FILES
            .iter()
            .filter(|(f, _)| *f != "manifest.json")
        {
            assert_eq!(&std::fs::read(firefox.join(relative)).unwrap()[..], *bytes);
        }
        assert!(firefox.join(PAIRING_FILE).is_file());
    }

    /// A user whose folders are all inside `dir`.
    pub(crate) fn user_in(dir: &Path) -> UserDirs {
        UserDirs {
            os: crate::user_dirs::Os::Linux,
            home: dir.join("home"),
            config: dir.join("config"),
            data: dir.join("data"),
        }
    }

    #[test]
    fn install_writes_a_paired_extension_and_replaces_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let user = user_in(dir.path());
        let root = dir.path().join("ext");
        let secret = Secret::parse(&"ab".repeat(32)).unwrap();
        install(&user, &root, 4242, &secret, Browser::Chrome).unwrap();
        assert_eq!(installed_version(&root).as_deref(), Some(VERSION));
        let pairing: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(PAIRING_FILE)).unwrap())
                .unwrap();
        assert_eq!(pairing["port"], 4242);
        std::fs::write(root.join("extension/dist/stale.js"), "old").unwrap();
        install(&user, &root, 4243, &secret, Browser::Chrome).unwrap();
        assert!(!root.join("extension/dist/stale.js").exists());
        assert_eq!(remembered(&user), [std::path::absolute(&root).unwrap()]);

        let other = dir.path().join("photos");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("cat.jpg"), "meow").unwrap();
        let refused = install(&user, &other, 4242, &secret, Browser::Chrome).unwrap_err();
        assert!(matches!(refused, InstallError::NotOurs(_)), "{refused}");
        assert_eq!(
            std::fs::read_dir(&other).unwrap().count(),
            1,
            "nothing written"
        );
    }
}
