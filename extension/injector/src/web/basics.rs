//! The content script's basic calls into the browser, which every other part of the glue uses
//! and which use none of them: messages to the worker (`chrome.runtime.sendMessage`: unasked
//! news, trusted input, a child frame's snapshot), events to the page's world (CustomEvents),
//! timers, the console, the clock, and what the document's URL and title are. A leaf, so the
//! glue has no import cycles.

use bridge::page::FromPage;
use bridge::{ErrorCode, WireError};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    pub(super) fn runtime_send_message(message: &str) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime", "onMessage"], js_name = addListener)]
    pub(super) fn on_message_add_listener(listener: &Function);
    /// This extension's id, from the content scripts' own `chrome`, not through
    /// `js_sys::global()`: in a Firefox content script that may be `self`, the page's window,
    /// which has no `chrome` (every `tabs.sendMessage` then went unanswered).
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "runtime"], js_name = id)]
    pub(super) static RUNTIME_ID: JsValue;
    /// The content scripts' own global object, where `content.js` and the code adapters' bundle
    /// leave what the runtime reads. `js_sys::global()` may give `self` instead, which in Firefox
    /// is the page's window (seen through an Xray), not the content scripts' global.
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    pub(super) static CONTENT_GLOBAL: JsValue;
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout_js(callback: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    pub(crate) fn console_warn(message: &str);
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// The page's high-resolution clock, in ms (what [`crate::page::profile`] measures with).
pub(crate) fn now_ms() -> f64 {
    performance_now()
}

pub(crate) fn set_timeout(callback: &Function, ms: f64) {
    set_timeout_js(callback, ms);
}

/// This document's origin, as the browser says (`location.origin`).
pub(crate) fn document_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

pub(crate) fn location_and_title() -> (String, String) {
    let window = web_sys::window();
    let url = window
        .as_ref()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let title = window
        .and_then(|w| w.document())
        .map(|d| d.title())
        .unwrap_or_default();
    (url, title)
}

/// Sends `msg` to the worker unasked (not an answer to one of its requests).
pub(crate) fn send_to_worker(msg: &FromPage) {
    let _ = runtime_send_message(&encode(msg));
}

/// Has the worker perform call `call`'s trusted input (`commands`) through Chrome's debugger.
pub(crate) async fn trusted_input(
    call: String,
    commands: Vec<bridge::trusted_input::Command>,
) -> Result<(), WireError> {
    let ask = encode(&FromPage::TrustedInput { call, commands });
    let answer = JsFuture::from(runtime_send_message(&ask))
        .await
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("the extension's service worker did not take the trusted input: {e:?}"),
            )
        })?;
    let answer: bridge::page::TrustedInputAnswer = answer
        .as_string()
        .and_then(|text| serde_json::from_str(&text).ok())
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::Internal,
                "the extension's service worker gave no answer to the trusted input",
            )
        })?;
    answer.error.map_or(Ok(()), Err)
}

/// Asks the worker for the snapshot of child frame `frame`, the `nth` showing its URL (see
/// [`FromPage::FrameSnapshot`]): the message leaves now, the answer is awaited by the future.
pub(crate) fn ask_frame(
    frame: crate::page::ChildFrame,
    nth: u32,
    op: bridge::page_ops::WireOp,
    timeout_ms: u64,
) -> impl Future<Output = Option<serde_json::Value>> {
    let ask = FromPage::FrameSnapshot {
        src: frame.src,
        nth,
        index: frame.index,
        op,
        timeout_ms,
    };
    let sent = JsFuture::from(runtime_send_message(&encode(&ask)));
    async move { bridge::page::CallAnswer::result_of(&sent.await.ok()?.as_string()?) }
}

/// The message of a thrown JS error, or its debug form.
pub(crate) fn reason(error: JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => format!("{error:?}"),
    }
}

pub(crate) fn encode(msg: &FromPage) -> String {
    serde_json::to_string(msg).expect("page messages serialize")
}

/// Fires CustomEvent `kind` with string `detail` on `document` (how the page's world and this
/// one talk: `extension/webmcp.js`, `extension/dialogs.js`).
pub fn dispatch(document: &web_sys::Document, kind: &str, detail: &str) {
    let init = js_sys::Object::new();
    let _ = Reflect::set(&init, &"detail".into(), &detail.into());
    let event = Reflect::get(&js_sys::global(), &"CustomEvent".into())
        .and_then(|ctor| ctor.dyn_into::<Function>())
        .and_then(|ctor| Reflect::construct(&ctor, &js_sys::Array::of2(&kind.into(), &init)));
    if let Ok(event) = event {
        let _ = document.dispatch_event(event.unchecked_ref());
    }
}
