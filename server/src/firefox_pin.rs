//! The one Firefox add-on origin the WebSocket accepts. Firefox names an add-on's pages
//! `moz-extension://<uuid>`, with a UUID drawn per profile, so no origin can be fixed in advance as
//! Chrome's `key` fixes `chrome-extension://<id>`. The first extension that proves it knows the
//! pairing secret from such an origin pins it (trust on first pairing): from then on only that
//! exact origin may even start a handshake, never any other `moz-extension://` origin.
//! `tabwire extension install --browser firefox` forgets the pin (a new profile, a new UUID),
//! so the next proved origin pins again.
//!
//! The pin lives in a file beside the secret (`<secret>.firefox-origin`), read at each handshake:
//! every tabwire of that secret (hub, peers taking over, `doctor`) agrees, and an install's
//! reset acts at once.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const SCHEME: &str = "moz-extension://";

/// The pin file for the secret at `secret_path`.
pub fn pin_file(secret_path: &Path) -> PathBuf {
    let mut name = secret_path.file_name().unwrap_or_default().to_owned();
    name.push(".firefox-origin");
    secret_path.with_file_name(name)
}

/// Whether `origin` is exactly `moz-extension://` and a lower-case UUID (how Firefox writes it),
/// with nothing before or after.
pub fn is_firefox_extension_origin(origin: &str) -> bool {
    let Some(uuid) = origin.strip_prefix(SCHEME) else {
        return false;
    };
    let groups: Vec<&str> = uuid.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, len)| {
            g.len() == len
                && g.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PinError {
    #[error("another Firefox add-on origin ({0}) is paired with this tabwire")]
    PinnedElsewhere(String),
    #[error("{0}")]
    Io(String),
}

/// Where the pinned origin is kept: its file, or (no secret file: tests, and an HTTP-only run)
/// this process's memory.
#[derive(Debug)]
pub struct FirefoxPin {
    file: Option<PathBuf>,
    memory: Mutex<Option<String>>,
}

impl FirefoxPin {
    pub fn in_file(file: PathBuf) -> Self {
        FirefoxPin {
            file: Some(file),
            memory: Mutex::new(None),
        }
    }

    pub fn in_memory() -> Self {
        FirefoxPin {
            file: None,
            memory: Mutex::new(None),
        }
    }

    /// The pinned origin, if any. An unreadable pin file (other than missing) pins nothing
    /// usable: it reads as a pin no origin equals, so nothing new pins over it.
    pub fn pinned(&self) -> Option<String> {
        match &self.file {
            None => self.memory.lock().expect("not poisoned").clone(),
            Some(file) => match std::fs::read_to_string(file) {
                Ok(text) => Some(text.trim().to_owned()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(_) => Some(String::new()),
            },
        }
    }

    /// Whether a handshake from `origin` may go on to the proof of the secret: a Firefox
    /// add-on origin, and the pinned one when one is.
    pub fn admits(&self, origin: &str) -> bool {
        is_firefox_extension_origin(origin) && self.pinned().is_none_or(|p| p == origin)
    }

    /// After `origin` proved the secret: pins it if nothing is pinned yet (the file is created
    /// only if absent, so of two racing first pairings one wins), or confirms it is the pinned one.
    pub fn pin(&self, origin: &str) -> Result<(), PinError> {
        let Some(file) = &self.file else {
            let mut memory = self.memory.lock().expect("not poisoned");
            return match memory.as_deref() {
                Some(pinned) if pinned != origin => Err(PinError::PinnedElsewhere(pinned.into())),
                _ => {
                    *memory = Some(origin.to_owned());
                    Ok(())
                }
            };
        };
        let created = crate::user_dirs::private_file()
            .create_new(true)
            .open(file)
            .and_then(|mut f| writeln!(f, "{origin}"));
        match created {
            Ok(()) => {
                tracing::info!(origin, file = %file.display(), "paired with a Firefox add-on: its origin is pinned");
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match self.pinned() {
                Some(pinned) if pinned == origin => Ok(()),
                Some(pinned) => Err(PinError::PinnedElsewhere(pinned)),
                None => self.pin(origin),
            },
            Err(e) => Err(PinError::Io(format!("{}: {e}", file.display()))),
        }
    }

    /// Forgets the pin (a new Firefox install pins its own origin on its first pairing).
    pub fn forget(&self) -> io::Result<()> {
        match &self.file {
            None => {
                *self.memory.lock().expect("not poisoned") = None;
                Ok(())
            }
            Some(file) => match std::fs::remove_file(file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: &str = "moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc";
    const OTHER: &str = "moz-extension://99999999-1b2c-4d5e-8f90-123456789abc";

    #[test]
    fn only_a_well_formed_firefox_add_on_origin_is_one() {
        assert!(is_firefox_extension_origin(FIRST));
        for bad in [
            "moz-extension://0F4E3C2A-1B2C-4D5E-8F90-123456789ABC",
            "moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc/",
            "moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc.evil",
            "moz-extension://0f4e3c2a1b2c4d5e8f90123456789abc",
            "moz-extension://",
            "chrome-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc",
            "http://0f4e3c2a-1b2c-4d5e-8f90-123456789abc",
            "null",
        ] {
            assert!(!is_firefox_extension_origin(bad), "{bad}");
        }
    }

    #[test]
    fn the_first_proved_origin_pins_and_every_other_is_refused_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let file = pin_file(&dir.path().join("secret"));
        assert_eq!(file, dir.path().join("secret.firefox-origin"));
        for pin in [FirefoxPin::in_file(file.clone()), FirefoxPin::in_memory()] {
            // Before a pairing, any Firefox add-on origin may try to prove the secret.
            assert!(pin.admits(FIRST) && pin.admits(OTHER));
            pin.pin(FIRST).unwrap();
            assert_eq!(pin.pinned().as_deref(), Some(FIRST));
            assert!(pin.admits(FIRST));
            assert!(!pin.admits(OTHER), "another add-on's origin is refused");
            assert_eq!(pin.pin(OTHER), Err(PinError::PinnedElsewhere(FIRST.into())));
            pin.pin(FIRST).unwrap();
            pin.forget().unwrap();
            assert!(pin.admits(OTHER));
            pin.pin(OTHER).unwrap();
            assert!(!pin.admits(FIRST));
            pin.forget().unwrap();
        }
        // The file is what every tabwire of the secret reads.
        FirefoxPin::in_file(file.clone()).pin(FIRST).unwrap();
        assert!(!FirefoxPin::in_file(file).admits(OTHER));
    }
}
