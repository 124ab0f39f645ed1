//! The recorder's browser glue: while the worker says this tab records ([`set`]), listens on the
//! window in the capture phase (before the page's own listeners can stop the event) to the
//! person's trusted `click`, `input`, `change` and `keydown`, has [`crate::record`] decide the
//! step, and sends it to the worker, which keeps the recording (it outlives this page).

use std::cell::RefCell;

use bridge::page::FromPage;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Event, KeyboardEvent, MouseEvent};

use super::dom::WebDom;
use crate::input::Modifiers;
use crate::record::{Secrets, UserEvent, step_for};

const EVENTS: [&str; 4] = ["click", "input", "change", "keydown"];

thread_local! {
    /// The listener while recording (`None`: not recording).
    static LISTENER: RefCell<Option<JsValue>> = const { RefCell::new(None) };
    /// The fields that were secret at some moment of this recording.
    static SECRETS: RefCell<Secrets<Element>> = RefCell::new(Secrets::default());
}

/// Starts (`true`) or stops recording this page; starting twice listens once.
pub fn set(recording: bool) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let options = web_sys::AddEventListenerOptions::new();
    options.set_capture(true);
    LISTENER.with(|slot| {
        let mut slot = slot.borrow_mut();
        match (recording, slot.as_ref()) {
            (true, None) => {
                let secrets = WebDom::new().map(|dom| {
                    let mut secrets = Secrets::default();
                    secrets.look(&dom, None);
                    secrets
                });
                SECRETS.with(|s| *s.borrow_mut() = secrets.unwrap_or_default());
                let listener = Closure::<dyn FnMut(Event)>::new(on_event).into_js_value();
                for name in EVENTS {
                    let _ = window.add_event_listener_with_callback_and_add_event_listener_options(
                        name,
                        listener.unchecked_ref(),
                        &options,
                    );
                }
                *slot = Some(listener);
            }
            (false, Some(listener)) => {
                for name in EVENTS {
                    let _ = window.remove_event_listener_with_callback_and_bool(
                        name,
                        listener.unchecked_ref(),
                        true,
                    );
                }
                *slot = None;
            }
            _ => {}
        }
    });
    // Where a probe (the end-to-end tests, DevTools) can see that this page records: the
    // content scripts' isolated world, which the page's own scripts cannot read.
    let _ = js_sys::Reflect::set(
        &super::basics::CONTENT_GLOBAL.with(JsValue::clone),
        &"__tabwireRecording".into(),
        &recording.into(),
    );
}

fn on_event(event: Event) {
    // Only a person's input: never the page's own dispatches, nor Tabwire's untrusted ones.
    if !event.is_trusted() {
        return;
    }
    // The element itself, inside an open shadow root too (`target` is retargeted to its host).
    let Some(target) = event.composed_path().get(0).dyn_into::<Element>().ok() else {
        return;
    };
    let user_event = match event.type_().as_str() {
        "click" => match event.dyn_ref::<MouseEvent>() {
            // `detail` 0: no pointer clicked (a key activated it, or a label forwarded it).
            Some(mouse) if mouse.detail() >= 1 => UserEvent::Click(target),
            _ => return,
        },
        "input" => UserEvent::Input(target),
        "change" => UserEvent::Change(target),
        "keydown" => {
            let Some(key) = event.dyn_ref::<KeyboardEvent>() else {
                return;
            };
            if key.repeat() || key.is_composing() {
                return;
            }
            UserEvent::Key {
                target,
                key: key.key(),
                mods: Modifiers {
                    control: key.ctrl_key(),
                    alt: key.alt_key(),
                    meta: key.meta_key(),
                    shift: key.shift_key(),
                },
            }
        }
        _ => return,
    };
    let Some(dom) = WebDom::new() else {
        return;
    };
    let target = match &user_event {
        UserEvent::Click(node) | UserEvent::Input(node) | UserEvent::Change(node) => node,
        UserEvent::Key { target, .. } => target,
    };
    let step = SECRETS.with(|secrets| {
        let mut secrets = secrets.borrow_mut();
        secrets.look(&dom, Some(target));
        step_for(&dom, &user_event, &secrets)
    });
    if let Some(step) = step {
        super::basics::send_to_worker(&FromPage::Recorded { step });
    }
}
