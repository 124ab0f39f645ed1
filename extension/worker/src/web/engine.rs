//! What differs between the browsers the worker runs in, one implementation per browser
//! (`engine/chromium.rs`, `engine/firefox.rs`) behind [`Engine`]: the rest of the glue asks
//! [`engine()`] and never which browser it is in. Which one runs is decided once, by an API
//! only Firefox has (`browser.runtime.getBrowserInfo`), not by the user-agent string a user can
//! change.

mod chromium;
mod firefox;

use bridge::WireError;

use super::chrome;

/// A browser's ways, where they differ.
pub(crate) trait Engine {
    /// Called at every keep-alive tick (20 s) while the link is up, besides the ping on the
    /// socket: whatever else this browser needs to keep the background running.
    fn keep_alive(&self);

    /// Whether trusted input can be performed here: its typed error when not.
    fn trusted_input(&self) -> Result<(), WireError>;
}

thread_local! {
    static ENGINE: &'static dyn Engine = if chrome::global_path(&["browser", "runtime", "getBrowserInfo"]).is_function() {
        &firefox::Firefox
    } else {
        &chromium::Chromium
    };
}

/// The browser the worker runs in.
pub(crate) fn engine() -> &'static dyn Engine {
    ENGINE.with(|e| *e)
}
