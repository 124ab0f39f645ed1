//! What every part of the worker's glue shares and which uses none of them: the one [`Core`]
//! (its clock set at each use), the log line, the content script's file and a timer. A leaf, so
//! the glue has no import cycles.

use std::cell::RefCell;

use wasm_bindgen_futures::JsFuture;

use super::chrome;
use crate::core::Core;

/// The loader, the one script registered for the pages that get the runtime as they load. It
/// fetches the runtime's companions (below) once it begins: after the page's load event, or as a
/// load Tabwire set off commits (`core/hurry.rs`).
pub(crate) const LOADER: &str = "extension/content.js";

/// What the worker injects on demand, in order: the runtime's companions (the code adapters'
/// handlers, the runtime's glue and its wasm's bytes: classic scripts that set globals, so the
/// loader fetches nothing), then the loader. The companions are not registered: 900 KB that a new
/// renderer process parses for each page a person opens in a new tab slowed those loads (+10–25 %
/// on the server-rendered page), and injected as a hurried load commits they arrived later than a
/// fetch (BENCHMARKS.md, issue 32).
pub(crate) const CONTENT_SCRIPTS: [&str; 4] = [
    "extension/dist/code-adapters.js",
    "extension/dist/injector/injector.js",
    "extension/dist/injector/injector_wasm.js",
    LOADER,
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
