//! What every part of the worker's glue shares and which uses none of them: the one [`Core`]
//! (its clock set at each use), the log line, the content script's file and a timer. A leaf, so
//! the glue has no import cycles.

use std::cell::RefCell;

use wasm_bindgen_futures::JsFuture;

use super::chrome;
use crate::core::Core;

/// The content scripts the worker registers and injects, in their order: the code adapters'
/// handlers, the runtime's glue and its wasm's bytes (classic scripts that set globals: Chrome hands
/// registered scripts to each page from memory, so no document fetches them), then `content.js`,
/// which starts the runtime.
pub(crate) const CONTENT_SCRIPTS: [&str; 4] = [
    "extension/dist/code-adapters.js",
    "extension/dist/injector/injector.js",
    "extension/dist/injector/injector_wasm.js",
    "extension/content.js",
];

thread_local! {
    static CORE: RefCell<Core> = RefCell::new(Core::new(
        chrome::global_path(&["chrome", "runtime", "id"]).as_string().unwrap_or_default(),
    ));
}

pub(crate) fn with_core<T>(f: impl FnOnce(&mut Core) -> T) -> T {
    CORE.with(|core| {
        let mut core = core.borrow_mut();
        core.set_clock(js_sys::Date::now());
        f(&mut core)
    })
}

pub(crate) fn log(message: &str) {
    chrome::console_warn(&format!("tabwire: {message}"));
}

pub(crate) async fn sleep(ms: f64) {
    let tick = js_sys::Promise::new(&mut |resolve, _| {
        chrome::set_timeout(&resolve, ms);
    });
    let _ = JsFuture::from(tick).await;
}
