//! Firefox: the worker runs as an event page (`background.scripts`), which Firefox suspends
//! about 30 s after the last extension API call or event; messages on a WebSocket do not count.

use bridge::{ErrorCode, WireError};

use super::super::chrome;

pub(crate) struct Firefox;

impl super::Engine for Firefox {
    fn keep_alive(&self) {
        // The cheapest call answered in Firefox's parent process, where an API call resets the
        // background's idle timer: no storage, no permission, a constant answer.
        let _ = chrome::runtime_get_platform_info();
    }

    fn trusted_input(&self) -> Result<(), WireError> {
        Err(WireError::new(
            ErrorCode::DebuggerUnavailable,
            "trusted input is not available in Firefox: it gives extensions no debugger API \
             (Mozilla plans none), so Tabwire acts through the page's own input events there; \
             use Chrome for a site that needs trusted input",
        ))
    }
}
