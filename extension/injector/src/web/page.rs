//! [`PageDom`] over the real page, and the page's refs: the flat tree (open shadow roots, slots,
//! same-origin frames), `checkVisibility` for what shows, a `WeakMap` keeping each element's ref
//! on the element, and a count of the document's changes.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Object, Reflect, WeakMap};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue, intern};
use web_sys::{Element, Node};

use super::dom::WebDom;
use crate::dom::Dom;
use crate::page::{ChildFrame, Kid, PageDom, Refs, Shown};

#[wasm_bindgen]
extern "C" {
    /// An element, for the method web-sys does not bind.
    type Visible;
    #[wasm_bindgen(method, js_name = checkVisibility)]
    fn check_visibility(this: &Visible, options: &JsValue) -> bool;
}

thread_local! {
    static MARKS: WeakMap = WeakMap::new();
    static CHANGES: Cell<u64> = const { Cell::new(0) };
    static OBSERVER: RefCell<Option<web_sys::MutationObserver>> = const { RefCell::new(None) };
    static VISIBILITY_TOO: JsValue = {
        let options = Object::new();
        let _ = Reflect::set(&options, &"visibilityProperty".into(), &JsValue::TRUE);
        options.into()
    };
    /// This document's refs, its id made at random when the runtime started.
    pub static REFS: Rc<RefCell<Refs<Element>>> = Rc::new(RefCell::new(Refs::new(document_id())));
}

/// The element of ref `name` (`e12`, `f3e12`) of document `doc`, for a screenshot of it
/// (`worker.js`'s `elementBox`, run in this world, calls it through `content.js`): the element,
/// or a string saying why there is none (a ref of an earlier page, or gone from this one).
#[wasm_bindgen]
pub fn ref_element(name: &str, doc: Option<String>) -> JsValue {
    let Some(r) = bridge::page_ops::parse_ref(name) else {
        return JsValue::from_str(&format!("{name:?} is not a ref"));
    };
    let Some(dom) = WebDom::new() else {
        return JsValue::from_str("this page has no document");
    };
    let found = REFS.with(|refs| crate::page::ref_element(&dom, &refs.borrow(), r, doc.as_deref()));
    match found {
        Ok(element) => element.into(),
        Err(error) => JsValue::from_str(&error.message),
    }
}

fn document_id() -> String {
    let n = (js_sys::Math::random() * 36f64.powi(6)) as u64;
    format!("{n:x}")
}

fn bump() {
    CHANGES.with(|c| c.set(c.get() + 1));
}

/// Counts the document's changes (called once when the runtime starts).
pub fn install() {
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        let on_change = Closure::<dyn FnMut()>::new(bump).into_js_value();
        let observer = super::dom::observe_all(&document, on_change.unchecked_ref());
        OBSERVER.with(|o| *o.borrow_mut() = observer);
        let options = web_sys::AddEventListenerOptions::new();
        options.set_capture(true);
        for event in ["input", "change", "scroll", "focusin", "toggle"] {
            let _ = document.add_event_listener_with_callback_and_add_event_listener_options(
                event,
                on_change.unchecked_ref(),
                &options,
            );
        }
    }
}

fn call(target: &JsValue, method: &str, args: &[JsValue]) -> Option<JsValue> {
    let f = Reflect::get(target, &method.into())
        .ok()?
        .dyn_into::<js_sys::Function>()
        .ok()?;
    let args: js_sys::Array = args.iter().collect();
    f.apply(target, &args).ok()
}

fn nodes_of(list: &JsValue) -> Vec<Node> {
    let length = Reflect::get(list, &intern("length").into())
        .ok()
        .and_then(|l| l.as_f64())
        .unwrap_or(0.0) as u32;
    (0..length)
        .filter_map(|i| Reflect::get_u32(list, i).ok())
        .filter(|n| n.is_object())
        .map(|n| n.unchecked_into::<Node>())
        .collect()
}

impl PageDom for WebDom {
    fn kids(&self, node: &Element) -> Vec<Kid<Element>> {
        let tag = node.local_name();
        if tag == "iframe" || tag == "frame" {
            return self
                .frame_root(node)
                .map(Kid::Element)
                .into_iter()
                .collect();
        }
        let list: JsValue = if let Some(shadow) = node.shadow_root() {
            shadow.child_nodes().into()
        } else if tag == "slot" {
            let options = Object::new();
            let _ = Reflect::set(&options, &"flatten".into(), &JsValue::TRUE);
            match call(node, "assignedNodes", &[options.into()]) {
                Some(assigned) if nodes_of(&assigned).is_empty() => node.child_nodes().into(),
                Some(assigned) => assigned,
                None => node.child_nodes().into(),
            }
        } else {
            node.child_nodes().into()
        };
        nodes_of(&list)
            .into_iter()
            .filter_map(|kid| match kid.node_type() {
                Node::ELEMENT_NODE => Some(Kid::Element(kid.unchecked_into())),
                Node::TEXT_NODE => kid.node_value().map(Kid::Text),
                _ => None,
            })
            .collect()
    }

    fn shown(&self, node: &Element) -> Shown {
        let element: &Visible = node.unchecked_ref();
        if VISIBILITY_TOO.with(|options| element.check_visibility(options)) {
            return Shown::Yes;
        }
        if element.check_visibility(&JsValue::UNDEFINED) {
            return Shown::Invisible;
        }
        // `display: contents` has no box of its own, yet its content shows.
        let contents = web_sys::window()
            .and_then(|w| w.get_computed_style(node).ok().flatten())
            .and_then(|style| style.get_property_value(intern("display")).ok())
            .is_some_and(|display| display == "contents");
        if contents { Shown::Yes } else { Shown::No }
    }

    fn by_id(&self, node: &Element, id: &str) -> Option<Element> {
        let root = node.get_root_node();
        call(&root, "getElementById", &[id.into()])
            .filter(|found| found.is_object())
            .map(JsCast::unchecked_into)
    }

    fn labels(&self, node: &Element) -> Vec<Element> {
        Reflect::get(node, &intern("labels").into())
            .ok()
            .filter(|l| l.is_object())
            .map(|l| {
                nodes_of(&l)
                    .into_iter()
                    .map(JsCast::unchecked_into)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn mark(&self, node: &Element) -> Option<u32> {
        MARKS
            .with(|marks| marks.get(node).as_f64())
            .map(|n| n as u32)
    }

    fn set_mark(&self, node: &Element, n: u32) {
        MARKS.with(|marks| {
            marks.set(node, &JsValue::from(n));
        });
    }

    fn location(&self) -> (String, String) {
        super::basics::location_and_title()
    }

    fn changes(&self) -> u64 {
        // Mutations not yet delivered to the observer count too.
        let pending = OBSERVER.with(|o| {
            o.borrow()
                .as_ref()
                .is_some_and(|observer| observer.take_records().length() > 0)
        });
        if pending {
            bump();
        }
        CHANGES.with(Cell::get)
    }

    fn child_frame(&self, node: &Element) -> Option<ChildFrame> {
        let tag = node.local_name();
        if (tag != "iframe" && tag != "frame") || self.frame_root(node).is_some() {
            return None;
        }
        // The resolved URL (`src` as a property), where the frame was sent.
        let src = Reflect::get(node, &"src".into())
            .ok()?
            .as_string()
            .filter(|src| src.starts_with("http://") || src.starts_with("https://"))?;
        let content = Reflect::get(node, &"contentWindow".into()).ok()?;
        let window = web_sys::window()?;
        let index = (0..window.length())
            .find(|&i| Object::is(&Reflect::get_u32(&window, i).unwrap_or_default(), &content))?;
        Some(ChildFrame { src, index })
    }

    fn frame_snapshot(
        &self,
        frame: ChildFrame,
        nth: u32,
        op: bridge::page_ops::WireOp,
        timeout_ms: u64,
    ) -> impl Future<Output = Option<serde_json::Value>> {
        super::basics::ask_frame(frame, nth, op, timeout_ms)
    }

    fn masked(&self, node: &Element) -> bool {
        web_sys::window()
            .and_then(|w| w.get_computed_style(node).ok().flatten())
            .and_then(|style| style.get_property_value("-webkit-text-security").ok())
            .is_some_and(|mask| !mask.is_empty() && mask != "none")
    }

    fn scroll_page(&self) {
        if let Some(window) = web_sys::window() {
            let height = window
                .inner_height()
                .ok()
                .and_then(|h| h.as_f64())
                .unwrap_or(600.0);
            window.scroll_by_with_x_and_y(0.0, height * 0.9);
        }
    }
}
