//! Pairing between tabwire and the extension: the secret file (64 hex characters from the OS
//! CSPRNG, readable by this user only), the extension's pairing file, the "a browser connected
//! before" marker, and the extension id the WebSocket `Origin` must carry.
//!
//! On Unix the secret's file is created mode 0600 in a 0700 directory. On Windows it lives in the
//! user's roaming AppData, which only that user (and administrators) can read.

use std::fmt;
use std::fs;

use crate::user_dirs::{create_private_dir, private_file};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The id Chrome gives the unpacked extension, fixed by the `key` in the repository's
/// manifest.json (a unit test re-derives it from the manifest so the two cannot drift).
pub const DEFAULT_EXTENSION_ID: &str = "nfoddanklbblmbkneanahdhgiikgphao";

const SECRET_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("no secret file given and this user has no configuration directory (is HOME set?)")]
    NoConfigDir,
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: expected 64 hexadecimal characters (delete the file to make a new secret)")]
    Malformed { path: PathBuf },
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PairingError + '_ {
    move |source| PairingError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The pairing secret. Never printed: its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Accepts exactly 64 hex characters.
    pub fn parse(text: &str) -> Option<Secret> {
        (text.len() == SECRET_BYTES * 2 && text.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Secret(text.to_owned()))
    }

    fn generate() -> Result<Secret, PairingError> {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| PairingError::Random(e.to_string()))?;
        Ok(Secret(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// `secret` in Tabwire's configuration folder: `$XDG_CONFIG_HOME/tabwire` (else
/// `~/.config/tabwire`) on Linux, `~/Library/Application Support/tabwire` on macOS,
/// `%APPDATA%\tabwire` on Windows.
pub fn default_secret_path() -> Result<PathBuf, PairingError> {
    crate::user_dirs::UserDirs::from_env()
        .map(|dirs| dirs.secret())
        .ok_or(PairingError::NoConfigDir)
}

/// Reads the secret at `path`, creating it (and its directory, mode 0700) when missing.
pub fn load_or_create_secret(path: &Path) -> Result<Secret, PairingError> {
    match fs::read_to_string(path) {
        Ok(text) => {
            warn_if_readable_by_others(path);
            Secret::parse(text.trim()).ok_or_else(|| PairingError::Malformed {
                path: path.to_owned(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => create_secret(path),
        Err(e) => Err(io_error(path)(e)),
    }
}

fn create_secret(path: &Path) -> Result<Secret, PairingError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(io_error(dir))?;
    }
    let secret = Secret::generate()?;
    let file = private_file().create_new(true).open(path);
    match file {
        Ok(mut file) => {
            writeln!(file, "{}", secret.expose()).map_err(io_error(path))?;
            drop(file);
            owner_only::restrict(path, owner_only::Target::File).map_err(io_error(path))?;
            tracing::info!(path = %path.display(), "created a new pairing secret");
            Ok(secret)
        }
        // Another tabwire created it between our read and our create: use theirs.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => load_or_create_secret(path),
        Err(e) => Err(io_error(path)(e)),
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            path = %path.display(),
            mode = format_args!("{:o}", meta.permissions().mode() & 0o777),
            "the pairing secret is readable by other users; run `chmod 600` on it"
        );
    }
}

/// Writes the extension's pairing file, `{"port":P,"secret":"...","path":"<this file>"}` (the
/// path lets the popup print the exact command that re-pairs it), readable by this user only
/// (it holds the secret). A file that already says the same is left alone (the server's build
/// embeds the extension's directory and would rebuild for a new timestamp).
pub fn write_extension_config(path: &Path, port: u16, secret: &Secret) -> Result<(), PairingError> {
    let absolute = std::path::absolute(path).map_err(io_error(path))?;
    let body = serde_json::json!({
        "port": port,
        "secret": secret.expose(),
        "path": absolute.display().to_string(),
    })
    .to_string();
    if fs::read_to_string(path).is_ok_and(|old| old == body) {
        return tighten(path);
    }
    let mut file = private_file()
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io_error(path))?;
    file.write_all(body.as_bytes()).map_err(io_error(path))?;
    tighten(path)
}

/// The creation mode applies only when a file is created; tighten an existing one too (on
/// Windows: its owner-only DACL).
fn tighten(path: &Path) -> Result<(), PairingError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(io_error(path))?;
    }
    #[cfg(not(unix))]
    owner_only::restrict(path, owner_only::Target::File).map_err(io_error(path))?;
    Ok(())
}

/// The marker saying a browser connected to tabwire before, kept next to the secret: when it
/// exists, the first `tools/list` waits briefly for the browser's tools.
pub fn browser_seen_marker(secret_path: &Path) -> PathBuf {
    secret_path.with_file_name("browser-seen")
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use sha2::{Digest, Sha256};
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    /// Chrome's id for an unpacked extension with a `key`: sha256 of the DER public key, first
    /// 16 bytes, each nibble `n` written as the letter `'a' + n`.
    fn extension_id_from_key(key_base64: &str) -> String {
        let der = base64::engine::general_purpose::STANDARD
            .decode(key_base64)
            .expect("manifest key is base64");
        Sha256::digest(&der)[..16]
            .iter()
            .flat_map(|b| [b >> 4, b & 0x0f])
            .map(|n| char::from(b'a' + n))
            .collect()
    }

    #[test]
    fn default_extension_id_matches_the_manifest_key() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../manifest.json")).unwrap();
        let key = manifest["key"].as_str().expect("manifest.json has a key");
        assert_eq!(extension_id_from_key(key), DEFAULT_EXTENSION_ID);
    }

    #[test]
    fn secret_is_created_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("secret");
        let created = load_or_create_secret(&path).unwrap();
        assert!(Secret::parse(created.expose()).is_some());
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(load_or_create_secret(&path).unwrap(), created);
        let other = load_or_create_secret(&dir.path().join("other")).unwrap();
        assert_ne!(other, created, "secrets come from a random generator");
        assert!(!format!("{created:?}").contains(created.expose()));
    }

    #[test]
    fn malformed_secret_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        fs::write(&path, "short\n").unwrap();
        assert!(matches!(
            load_or_create_secret(&path),
            Err(PairingError::Malformed { .. })
        ));
    }

    #[test]
    fn extension_config_holds_port_and_secret() {
        let dir = tempfile::tempdir().unwrap();
        let secret = Secret::parse(&"ab".repeat(32)).unwrap();
        let path = dir.path().join("pairing.json");
        write_extension_config(&path, 4242, &secret).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"port": 4242, "secret": "ab".repeat(32), "path": path.display().to_string()})
        );
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
