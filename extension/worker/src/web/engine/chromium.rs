//! Chrome and the browsers built on Chromium.

use bridge::{ErrorCode, WireError};

use super::super::chrome;

pub(crate) struct Chromium;

impl super::Engine for Chromium {
    fn keep_alive(&self) {
        // Chrome (116+) counts WebSocket traffic as activity: the ping alone keeps the worker.
    }

    fn trusted_input(&self) -> Result<(), WireError> {
        if chrome::global_path(&["chrome", "debugger"]).is_undefined() {
            return Err(WireError::new(
                ErrorCode::DebuggerUnavailable,
                "this browser gives the extension no chrome.debugger API, which trusted input needs",
            ));
        }
        Ok(())
    }
}
