//! The glue of cross-origin frames (decisions in `core`:
//! [`crate::core::Core::frame_request`]): running the runtime in a child frame and giving its
//! snapshot to the runtime that asked, within a deadline. A call with a frame's ref (`f3e12`)
//! goes to that frame's runtime with the other calls to tabs (`glue/tab_calls.rs`).

use js_sys::Promise;
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::chrome::{self, from_json, get};
use super::state::{CONTENT_SCRIPTS, log, sleep};
use crate::core::{FrameInfo, FrameRequest};

/// How soon a frame whose runtime is still starting is asked again.
const RETRY_MS: f64 = 20.0;

/// The answer to `request` of the runtime of the frame it asks for (the text of its
/// `call_tool_result` or `call_tool_error`), that runtime injected first; `undefined` when there
/// is no such frame or it gave no answer in time.
pub async fn snapshot_of(request: FrameRequest) -> JsValue {
    let deadline = js_sys::Date::now() + request.timeout_ms as f64;
    let details = from_json(&json!({ "tabId": request.tab }).to_string());
    let Some(Ok(listed)) = within(chrome::get_all_frames(&details), deadline).await else {
        return JsValue::UNDEFINED;
    };
    let frames: Vec<FrameInfo> = js_sys::Array::from(&listed)
        .iter()
        .filter_map(|f| frame_info(&f))
        .collect();
    let Some(frame) = request.pick(&frames) else {
        log(&format!(
            "no child frame of frame {} of tab {} shows {} (the page's frame snapshot)",
            request.parent, request.tab, request.src
        ));
        return JsValue::UNDEFINED;
    };
    // Nothing happens where the runtime runs already (content.js starts it once).
    let injection = json!({"target": {"tabId": request.tab, "frameIds": [frame]},
                           "files": CONTENT_SCRIPTS});
    let injected = within(
        chrome::execute_script(&from_json(&injection.to_string())),
        deadline,
    )
    .await;
    let failed = match injected {
        Some(Ok(_)) => None,
        Some(Err(e)) => Some(chrome::error_text(&e)),
        None => Some("out of time".to_owned()),
    };
    if let Some(why) = failed {
        log(&format!(
            "the runtime could not be run in frame {frame} of tab {}: {why}",
            request.tab
        ));
        return JsValue::UNDEFINED;
    }
    let (message, options) = (request.message(frame), frame_options(frame));
    loop {
        let sent = chrome::tabs_send_message(request.tab as f64, &message, &options);
        match within(sent, deadline).await {
            Some(Ok(answer)) if answer.is_string() => return answer,
            // Its runtime is still loading: nothing listens there yet (Chrome rejects), or
            // nothing answered (Firefox resolves with no answer where Chrome rejects).
            Some(Err(_) | Ok(_)) if js_sys::Date::now() + RETRY_MS < deadline => {
                sleep(RETRY_MS).await
            }
            outcome => {
                log(&format!(
                    "frame {frame} of tab {} gave no snapshot in time: {}",
                    request.tab,
                    match outcome {
                        Some(Err(why)) => chrome::error_text(&why),
                        Some(Ok(other)) => format!("answered {other:?}"),
                        None => "no answer".to_owned(),
                    }
                ));
                return JsValue::UNDEFINED;
            }
        }
    }
}

/// A frame as `webNavigation.getAllFrames` lists it.
pub fn frame_info(listed: &JsValue) -> Option<FrameInfo> {
    Some(FrameInfo {
        frame: get(listed, "frameId").as_f64()? as i64,
        parent: get(listed, "parentFrameId").as_f64()? as i64,
        url: get(listed, "url").as_string()?,
    })
}

/// Where `tabs.sendMessage` sends to frame `frame` of a tab.
pub(crate) fn frame_options(frame: bridge::page_ops::FrameId) -> JsValue {
    from_json(&json!({ "frameId": frame }).to_string())
}

/// `promise`'s outcome, or `None` once `deadline` (a `Date.now()` time) passed first.
async fn within(promise: Promise, deadline: f64) -> Option<Result<JsValue, JsValue>> {
    let left = deadline - js_sys::Date::now();
    if left <= 0.0 {
        return None;
    }
    // Rejects with `undefined`, which Chrome's own rejections (Error objects) never are.
    let timer = Promise::new(&mut |_, reject| {
        chrome::set_timeout(&reject, left);
    });
    match JsFuture::from(Promise::race(&js_sys::Array::of2(&promise, &timer))).await {
        Err(e) if e.is_undefined() => None,
        outcome => Some(outcome),
    }
}
