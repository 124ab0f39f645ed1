//! The isolated-world end of the page's dialog handling (`extension/dialogs.js`, in the page's
//! world): each running call begins and ends a watch, a `dialog` step or `page_act`'s `dialog`
//! sends the plan for the next dialog, and every dialog the page's shim reports is given to the
//! calls running now, as is a dialog a cross-origin child frame answered itself (the worker
//! passes its report on: [`seen_in_frame`]). A dialog dismissed by default stops them at once
//! (through their cancel flag): what follows it would run against a page that refused the action.
//! Any script of the page can send a report: what it says of its origin is never read; a report
//! on this document is this document's origin's (a same-origin frame's is the same origin), a
//! child frame's is the origin the worker had from Chrome's sender.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use bridge::dialog::{Answered, DialogAnswer, DialogSeen};
use wasm_bindgen::prelude::*;

const CALL_EVENT: &str = "tabwire:dialog-call";
const REPORT_EVENT: &str = "tabwire:dialog";

struct Watch {
    seen: Vec<DialogSeen>,
    stop: Rc<Cell<bool>>,
}

thread_local! {
    static WATCHES: RefCell<HashMap<String, Watch>> = RefCell::new(HashMap::new());
    static LISTENING: Cell<bool> = const { Cell::new(false) };
}

fn tell_shim(message: serde_json::Value) {
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        super::basics::dispatch(&document, CALL_EVENT, &message.to_string());
    }
}

fn listen() {
    if LISTENING.with(|l| l.replace(true)) {
        return;
    }
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let on_report = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
        if let Some(seen) = js_sys::Reflect::get(&event, &"detail".into())
            .ok()
            .and_then(|detail| detail.as_string())
            .and_then(|text| DialogSeen::from_report(&text, super::basics::document_origin()))
        {
            tell_calls(seen);
        }
    })
    .into_js_value();
    let _ = document.add_event_listener_with_callback(REPORT_EVENT, on_report.unchecked_ref());
}

/// Gives the calls running now a dialog the page answered.
fn tell_calls(seen: DialogSeen) {
    WATCHES.with(|w| {
        for watch in w.borrow_mut().values_mut() {
            if seen.answered == Answered::DismissedByDefault {
                watch.stop.set(true);
            }
            watch.seen.push(seen.clone());
        }
    });
}

/// A dialog cross-origin child frame `origin` answered itself (its shim's `report`): for the
/// calls running in this frame, like one of its own.
pub fn seen_in_frame(report: &str, origin: String) {
    if let Some(seen) = DialogSeen::from_report(report, origin) {
        tell_calls(seen);
    }
}

/// Call `id` starts: the page's dialogs are answered (dismissed unless a plan says otherwise)
/// and reported to it; `stop` is set when one is dismissed by default.
pub fn begin(id: &str, stop: Rc<Cell<bool>>) {
    listen();
    WATCHES.with(|w| {
        w.borrow_mut().insert(
            id.to_owned(),
            Watch {
                seen: Vec::new(),
                stop,
            },
        )
    });
    tell_shim(serde_json::json!({"op": "begin"}));
}

/// The warm-up's pass through a call's watch (`page::warm`), which must leave the page's dialogs
/// as they are: the listener for reports set, and a message the shim reads and ignores, so a
/// page's first call does not pay for the shim's handler compiling nor its first dispatch.
pub fn warm() {
    listen();
    tell_shim(serde_json::json!({"op": "warm"}));
}

/// How to answer the page's next dialog.
pub fn plan(answer: &DialogAnswer) {
    let mut message = answer.to_plan();
    message["op"] = "plan".into();
    tell_shim(message);
}

/// Call `id` ended: the dialogs it met. The page stays answered by Tabwire until a person's
/// input (see `dialogs.js`).
pub fn end(id: &str) -> Vec<DialogSeen> {
    let (seen, idle) = WATCHES.with(|w| {
        let mut w = w.borrow_mut();
        let seen = w.remove(id).map(|watch| watch.seen).unwrap_or_default();
        (seen, w.is_empty())
    });
    if idle {
        tell_shim(serde_json::json!({"op": "end"}));
    }
    seen
}
