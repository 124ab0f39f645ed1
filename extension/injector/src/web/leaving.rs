//! Whether the page set off the loading of another document, seen from the page: the Navigation
//! API's `navigate` event (a link followed, `location` set, a form's navigation starting) and
//! the `submit` event a navigation follows once the page's handlers let it. Listeners are added
//! on the first action that may navigate, so a page no call acts on pays nothing.

use std::cell::{Cell, RefCell};

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::dom::Leaving;

thread_local! {
    static INSTALLED: Cell<bool> = const { Cell::new(false) };
    /// Where a navigation since the last `watch` goes.
    static DESTINATION: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The last `submit` event since the last `watch` (read late: a later listener may cancel it).
    static SUBMIT: RefCell<Option<web_sys::Event>> = const { RefCell::new(None) };
    /// Resolves the promise `changed` handed out: the interpreter waits on it.
    static WAKE: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// Resolves the turn `turn_or_departure` handed out, when a navigation starts first.
    static DEPARTURE: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

/// Wakes a waiting interpreter at once: a fast page (a GET answered in milliseconds) replaces
/// this document soon after its navigation starts, and the call must answer before that.
fn wake() {
    if let Some(resolve) = WAKE.with(|w| w.borrow_mut().take()) {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    }
}

/// Resolves at the next zero-delay turn, or as soon as the page starts leaving for another
/// document, if that comes first: an action's settle turn may come after the next page committed
/// (a form's navigation starts in a task of its own, and an app on this machine answers at once),
/// and the call's answer must be out before the page is gone. A submit does not end it early: the
/// page's own `submit` handlers, which may cancel it, run after ours.
pub fn turn_or_departure() -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve: js_sys::Function, _reject| {
        super::basics::set_timeout(&resolve, 0.0);
        DEPARTURE.with(|d| *d.borrow_mut() = Some(resolve));
    })
}

/// Resolves when the page starts leaving (or submits a form), or after `max_ms`.
pub fn changed(max_ms: f64) -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve: js_sys::Function, _reject| {
        super::basics::set_timeout(&resolve, max_ms);
        WAKE.with(|w| *w.borrow_mut() = Some(resolve));
    })
}

fn get(target: &JsValue, name: &str) -> JsValue {
    Reflect::get(target, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

fn install() {
    if INSTALLED.with(|i| i.replace(true)) {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let navigation = get(&window, "navigation");
    if let Some(target) = navigation.dyn_ref::<web_sys::EventTarget>() {
        let on_navigate = Closure::<dyn FnMut(JsValue)>::new(|event: JsValue| {
            // A fragment change and `history.pushState` stay in the document; a download loads none.
            let destination = get(&event, "destination");
            let same_document = get(&event, "hashChange").as_bool() == Some(true)
                || get(&destination, "sameDocument").as_bool() == Some(true);
            let download = !get(&event, "downloadRequest").is_null()
                && !get(&event, "downloadRequest").is_undefined();
            if !same_document && !download {
                let url = get(&destination, "url").as_string().unwrap_or_default();
                DESTINATION.with(|d| *d.borrow_mut() = Some(url));
                wake();
                if let Some(resolve) = DEPARTURE.with(|d| d.borrow_mut().take()) {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
        });
        let _ = target.add_event_listener_with_callback(
            "navigate",
            on_navigate.into_js_value().unchecked_ref(),
        );
    }
    let on_submit = Closure::<dyn FnMut(web_sys::Event)>::new(|event: web_sys::Event| {
        SUBMIT.with(|s| *s.borrow_mut() = Some(event));
        wake();
    });
    let _ = window.add_event_listener_with_callback_and_bool(
        "submit",
        on_submit.into_js_value().unchecked_ref(),
        true,
    );
}

pub fn watch() {
    install();
    DESTINATION.with(|d| d.borrow_mut().take());
    SUBMIT.with(|s| s.borrow_mut().take());
}

pub fn leaving() -> Leaving {
    if let Some(url) = DESTINATION.with(|d| d.borrow().clone()) {
        return Leaving::To(url);
    }
    let submitting = SUBMIT.with(|s| s.borrow().as_ref().is_some_and(|e| !e.default_prevented()));
    if submitting {
        Leaving::Submitting
    } else {
        Leaving::Staying
    }
}
