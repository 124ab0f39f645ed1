//! The browser side of [`crate::input`] for `WebDom` (`dom.rs`): it builds and dispatches the
//! events the input module decided (pointer, mouse, keyboard, `beforeinput`/`input`, `paste`), runs
//! the browser's editing commands, and answers its questions about the page (boxes, hit tests,
//! text entries). It decides nothing itself.
//!
//! Elements of a same-origin `<iframe>` are handled in their own document (hit tests, selection,
//! editing commands, the events' `view`); objects are reached through `Reflect` where a typed cast
//! would test `instanceof`, which fails across frames.

use std::cell::RefCell;

use bridge::keys::Platform;
use js_sys::{Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    ClipboardEvent, ClipboardEventInit, DataTransfer, Document, Element, InputEvent,
    InputEventInit, KeyboardEvent, KeyboardEventInit, MutationObserver, MutationObserverInit,
    PointerEvent, PointerEventInit, StaticRange, Window,
};

use crate::input::{Edit, Geometry, KeyEvent, MOUSE_POINTER_ID, MouseEvent, Point, TextEntry};

thread_local! {
    /// The element the synthetic pointer is over: the page's, across calls.
    static POINTER_AT: RefCell<Option<Element>> = const { RefCell::new(None) };
}

/// `<input>` types that hold no text (they are clicked or chosen, not filled).
const NOT_TEXT_INPUTS: &[&str] = &[
    "checkbox", "radio", "file", "button", "submit", "reset", "image", "hidden",
];

pub fn pointer_at() -> Option<Element> {
    POINTER_AT.with(|p| p.borrow().clone())
}

pub fn set_pointer_at(node: Option<Element>) {
    POINTER_AT.with(|p| *p.borrow_mut() = node);
}

fn document_of(node: &Element) -> Option<Document> {
    node.owner_document()
}

fn window_of(node: &Element) -> Option<Window> {
    document_of(node)?.default_view()
}

fn number(value: JsValue) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// A property of an object (`undefined` of anything else: `Reflect.get` would throw, and a caught
/// exception costs the runtime an externref slot for good).
fn get(target: &JsValue, name: &str) -> JsValue {
    if !target.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(target, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

fn is_tag(node: &Element, tag: &str) -> bool {
    node.tag_name().eq_ignore_ascii_case(tag)
}

pub fn geometry(node: &Element) -> Geometry {
    let rects = node.get_client_rects();
    let Some(rect) = (0..rects.length())
        .filter_map(|i| rects.get(i))
        .find(|r| r.width() >= 1.0 && r.height() >= 1.0)
    else {
        return Geometry::NoBox;
    };
    let (width, height) = window_of(node).map_or((0.0, 0.0), |w| {
        (
            number(w.inner_width().unwrap_or_default()),
            number(w.inner_height().unwrap_or_default()),
        )
    });
    let (left, right) = (rect.left().max(0.0), rect.right().min(width));
    let (top, bottom) = (rect.top().max(0.0), rect.bottom().min(height));
    let in_view = left < right && top < bottom;
    let (left, right, top, bottom) = if in_view {
        (left, right, top, bottom)
    } else {
        (rect.left(), rect.right(), rect.top(), rect.bottom())
    };
    Geometry::Box {
        centre: Point {
            x: (left + right) / 2.0,
            y: (top + bottom) / 2.0,
        },
        in_view,
    }
}

/// The element at `point` as `node`'s tree sees it: its shadow root's `elementFromPoint` for an
/// element in an open shadow root (the document's would answer the shadow host).
pub fn element_at(node: &Element, point: Point) -> Option<Element> {
    let root = node.get_root_node();
    if root.node_type() == web_sys::Node::DOCUMENT_FRAGMENT_NODE
        && let Ok(from_point) = get(&root, "elementFromPoint").dyn_into::<Function>()
    {
        let hit = from_point
            .call2(&root, &point.x.into(), &point.y.into())
            .ok()?;
        return hit.is_object().then(|| hit.unchecked_into());
    }
    document_of(node)?.element_from_point(point.x as f32, point.y as f32)
}

/// `at` in the top document's viewport: offset by each frame element the node's document is in
/// (its box and its border).
pub fn top_point(node: &Element, at: Point) -> Point {
    let mut point = at;
    let mut frame = window_of(node).map(|w| get(&w, "frameElement"));
    while let Some(element) = frame.filter(JsValue::is_object) {
        let element: Element = element.unchecked_into();
        let rect = element.get_bounding_client_rect();
        point.x += rect.left() + f64::from(element.client_left());
        point.y += rect.top() + f64::from(element.client_top());
        frame = window_of(&element).map(|w| get(&w, "frameElement"));
    }
    point
}

pub fn label_control(label: &Element) -> Option<Element> {
    if !is_tag(label, "label") {
        return None;
    }
    let control = get(label, "control");
    control
        .is_object()
        .then(|| control.unchecked_into::<Element>())
}

pub fn is_disabled(node: &Element) -> bool {
    node.matches(":disabled").unwrap_or(false)
        || node
            .closest("[aria-disabled=\"true\"]")
            .ok()
            .flatten()
            .is_some()
}

pub fn has_focus(node: &Element) -> bool {
    document_of(node)
        .and_then(|d| d.active_element())
        .is_some_and(|active| &active == node)
}

pub fn platform() -> Platform {
    let navigator = get(&js_sys::global(), "navigator");
    let platform = get(&get(&navigator, "userAgentData"), "platform")
        .as_string()
        .or_else(|| get(&navigator, "platform").as_string())
        .unwrap_or_default();
    if platform.starts_with("Mac") || platform.starts_with("macOS") || platform.starts_with("iP") {
        Platform::MacOs
    } else {
        Platform::Other
    }
}

pub fn dispatch_mouse(node: &Element, event: &MouseEvent) -> bool {
    let init = PointerEventInit::new();
    // Enter and leave events neither bubble nor can be cancelled, nor leave a shadow tree.
    init.set_bubbles(event.kind.bubbles());
    init.set_cancelable(event.kind.bubbles());
    init.set_composed(event.kind.bubbles());
    if let Some(window) = window_of(node) {
        init.set_view(Some(&window));
        let screen = |offset: Result<JsValue, JsValue>| number(offset.unwrap_or_default()) as i32;
        init.set_screen_x(event.at.x as i32 + screen(window.screen_x()));
        init.set_screen_y(event.at.y as i32 + screen(window.screen_y()));
    }
    init.set_client_x(event.at.x as i32);
    init.set_client_y(event.at.y as i32);
    init.set_button(event.button);
    init.set_buttons(event.buttons);
    init.set_detail(event.detail);
    let name = event.kind.name();
    let built = if event.kind.is_pointer_event() {
        init.set_pointer_id(MOUSE_POINTER_ID);
        init.set_pointer_type("mouse");
        init.set_is_primary(event.kind.is_primary());
        init.set_width(1);
        init.set_height(1);
        init.set_pressure(event.pressure());
        PointerEvent::new_with_event_init_dict(name, &init).map(JsCast::unchecked_into)
    } else {
        web_sys::MouseEvent::new_with_mouse_event_init_dict(name, init.unchecked_ref())
    };
    match built {
        Ok(e) => node.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    }
}

pub fn dispatch_key(node: &Element, event: &KeyEvent) -> bool {
    let init = KeyboardEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    if let Some(window) = window_of(node) {
        init.set_view(Some(&window));
    }
    init.set_key(&event.key);
    init.set_code(&event.code);
    init.set_key_code(event.key_code);
    init.set_which(event.key_code);
    init.set_char_code(event.char_code);
    init.set_location(event.location);
    init.set_shift_key(event.modifiers.shift);
    init.set_ctrl_key(event.modifiers.control);
    init.set_alt_key(event.modifiers.alt);
    init.set_meta_key(event.modifiers.meta);
    match KeyboardEvent::new_with_keyboard_event_init_dict(event.kind.name(), &init) {
        Ok(e) => node.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    }
}

fn entry_kind(node: &Element) -> Option<TextEntry> {
    if is_tag(node, "textarea") {
        return Some(TextEntry::Control);
    }
    if is_tag(node, "input") {
        let kind = node
            .get_attribute("type")
            .unwrap_or_default()
            .to_ascii_lowercase();
        return (!NOT_TEXT_INPUTS.contains(&kind.as_str())).then_some(TextEntry::Control);
    }
    if get(node, "editContext").is_object() {
        return Some(TextEntry::EditContext);
    }
    get(node, "isContentEditable")
        .as_bool()
        .unwrap_or(false)
        .then_some(TextEntry::ContentEditable)
}

/// The element itself, its editing host, or the first text entry inside it that a person could
/// type in (an editor's read-only helper textarea is not one).
pub fn text_entry(node: &Element) -> Option<(TextEntry, Element)> {
    if let Some(kind) = entry_kind(node) {
        let mut host = node.clone();
        if kind == TextEntry::ContentEditable {
            while let Some(parent) = host.parent_element() {
                if !get(&parent, "isContentEditable").as_bool().unwrap_or(false) {
                    break;
                }
                host = parent;
            }
        }
        return Some((kind, host));
    }
    let inside = node
        .query_selector_all("input, textarea, [contenteditable], [tabindex]")
        .ok()?;
    (0..inside.length())
        .filter_map(|i| inside.item(i))
        .map(JsCast::unchecked_into::<Element>)
        .filter(|el| !is_read_only(el) && !is_disabled(el))
        .find_map(|el| Some((entry_kind(&el)?, el)))
}

pub fn is_read_only(node: &Element) -> bool {
    get(node, "readOnly").as_bool().unwrap_or(false)
}

/// The selection of `node`'s document, as the `beforeinput`'s target range.
fn target_ranges(node: &Element) -> Array {
    let ranges = Array::new();
    if let Some(selection) = document_of(node).and_then(|d| d.get_selection().ok().flatten())
        && selection.range_count() > 0
        && let Ok(range) = selection.get_range_at(0)
        && let Ok(range) = StaticRange::new(range.unchecked_ref())
    {
        ranges.push(&range);
    }
    ranges
}

fn input_event(node: &Element, kind: &str, edit: &Edit, cancelable: bool) -> bool {
    let init = InputEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(cancelable);
    init.set_composed(true);
    init.set_input_type(edit.input_type());
    init.set_data(edit.data());
    if cancelable {
        init.set_target_ranges(&target_ranges(node));
    }
    match InputEvent::new_with_event_init_dict(kind, &init) {
        Ok(e) => node.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    }
}

pub fn before_input(node: &Element, edit: &Edit) -> bool {
    input_event(node, "beforeinput", edit, true)
}

/// Dispatches `textInput` (a `TextEvent`, which has no constructor: `createEvent` and
/// `initTextEvent`, as Chromium's own is made); `false` when a listener cancelled it.
pub fn text_input(node: &Element, text: &str) -> bool {
    let Some(document) = document_of(node) else {
        return true;
    };
    let Ok(event) = document.create_event("TextEvent") else {
        return true;
    };
    let init = Reflect::get(&event, &"initTextEvent".into())
        .and_then(|f| f.dyn_into::<Function>())
        .ok();
    let view: JsValue = window_of(node).map_or(JsValue::NULL, Into::into);
    let args = Array::of5(
        &"textInput".into(),
        &true.into(),
        &true.into(),
        &view,
        &text.into(),
    );
    if init.is_none_or(|init| init.apply(&event, &args).is_err()) {
        return true;
    }
    node.dispatch_event(&event).unwrap_or(true)
}

pub fn after_input(node: &Element, edit: &Edit) {
    input_event(node, "input", edit, false);
}

pub fn select_all_contents(host: &Element) {
    if let Some(selection) = document_of(host).and_then(|d| d.get_selection().ok().flatten()) {
        let _ = selection.select_all_children(host);
    }
}

pub fn exec_edit(node: &Element, edit: &Edit) -> bool {
    let Some(document) = document_of(node) else {
        return false;
    };
    let (command, value) = edit.command();
    Reflect::get(&document, &"execCommand".into())
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|exec| exec.call3(&document, &command.into(), &false.into(), &value.into()))
        .is_ok_and(|done| done.as_bool() == Some(true))
}

pub fn paste(node: &Element, text: &str) -> bool {
    let Ok(data) = DataTransfer::new() else {
        return true;
    };
    let _ = data.set_data("text/plain", text);
    let init = ClipboardEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    init.set_clipboard_data(Some(&data));
    match ClipboardEvent::new_with_event_init_dict("paste", &init) {
        Ok(e) => node.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    }
}

/// A `MutationObserver` of a document's text and structure (not attributes: focus alone changes
/// those), whose records collect in `seen` (`Array.prototype.push` is its callback: no closure to
/// keep alive or free).
pub struct Watch {
    observer: Option<MutationObserver>,
    seen: Array,
}

pub fn watch(node: &Element) -> Watch {
    let seen = Array::new();
    let push = Reflect::get(&Array::new(), &"push".into())
        .ok()
        .and_then(|p| p.dyn_into::<Function>().ok())
        .map(|push| push.bind0(&seen));
    let observer = push.and_then(|push| MutationObserver::new(&push).ok());
    if let (Some(observer), Some(root)) = (
        &observer,
        document_of(node).and_then(|d| d.document_element()),
    ) {
        let options = MutationObserverInit::new();
        options.set_subtree(true);
        options.set_child_list(true);
        options.set_character_data(true);
        let _ = observer.observe_with_options(&root, &options);
    }
    Watch { observer, seen }
}

pub fn saw_change(watch: &Watch) -> bool {
    let Some(observer) = &watch.observer else {
        // No observer could be made: do not claim the page ignored the edit.
        return true;
    };
    let pending = observer.take_records();
    for record in pending.iter() {
        watch.seen.push(&record);
    }
    watch.seen.length() > 0
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(observer) = &self.observer {
            observer.disconnect();
        }
    }
}

/// The text node holding UTF-16 offset `at` of `field`'s text content and the offset in it (the
/// last text node's end past the text; `field` itself, at 0, when it holds no text). At the
/// boundary of two text nodes (two paragraphs of an editor) a selection's start goes to the next
/// one (`forward`), so that replacing the selection keeps the line break; an end stays behind.
fn text_point(field: &Element, at: usize, forward: bool) -> (web_sys::Node, u32) {
    fn walk(
        node: &web_sys::Node,
        left: &mut usize,
        last: &mut Option<web_sys::Node>,
        forward: bool,
    ) -> Option<(web_sys::Node, u32)> {
        let kids = node.child_nodes();
        for i in 0..kids.length() {
            let Some(kid) = kids.item(i) else { continue };
            if kid.node_type() == web_sys::Node::TEXT_NODE {
                let len = kid.node_value().map_or(0, |t| t.encode_utf16().count());
                if len > 0 && (*left < len || (*left == len && !forward)) {
                    return Some((kid, *left as u32));
                }
                *left -= len.min(*left);
                if len > 0 {
                    *last = Some(kid);
                }
            } else if let Some(found) = walk(&kid, left, last, forward) {
                return Some(found);
            }
        }
        None
    }
    let mut left = at;
    let mut last = None;
    walk(field, &mut left, &mut last, forward).unwrap_or_else(|| match last {
        Some(text) => {
            let len = text.node_value().map_or(0, |t| t.encode_utf16().count());
            (text, len as u32)
        }
        None => (field.clone().into(), 0),
    })
}

pub fn select_range(field: &Element, entry: TextEntry, start: usize, end: usize) {
    match entry {
        TextEntry::Control => {
            if let Ok(set) = Reflect::get(field, &"setSelectionRange".into())
                .and_then(|f| f.dyn_into::<Function>())
            {
                let _ = set.call2(field, &(start as f64).into(), &(end as f64).into());
            }
        }
        TextEntry::ContentEditable | TextEntry::EditContext => {
            let Some(selection) = document_of(field).and_then(|d| d.get_selection().ok().flatten())
            else {
                return;
            };
            // A caret after a text stays right after it; a selection's start goes forward.
            let (from, from_at) = text_point(field, start, start != end);
            let (to, to_at) = text_point(field, end, false);
            let _ = selection.set_base_and_extent(&from, from_at, &to, to_at);
        }
    }
}

pub fn selection_range(field: &Element, entry: TextEntry) -> Option<(usize, usize)> {
    match entry {
        TextEntry::Control => {
            if !has_focus(field) {
                return None;
            }
            let start = get(field, "selectionStart").as_f64()?;
            let end = get(field, "selectionEnd").as_f64()?;
            Some((start as usize, end as usize))
        }
        TextEntry::ContentEditable | TextEntry::EditContext => {
            let document = document_of(field)?;
            let selection = document.get_selection().ok().flatten()?;
            if selection.range_count() == 0 {
                return None;
            }
            let range = selection.get_range_at(0).ok()?;
            let inside = |n: Option<web_sys::Node>| n.is_some_and(|n| field.contains(Some(&n)));
            if !inside(range.start_container().ok()) || !inside(range.end_container().ok()) {
                return None;
            }
            let offset = |container: web_sys::Node, at: u32| -> Option<usize> {
                let before = document.create_range().ok()?;
                before.select_node_contents(field).ok()?;
                before.set_end(&container, at).ok()?;
                Some(String::from(before.to_string()).encode_utf16().count())
            };
            let start = offset(range.start_container().ok()?, range.start_offset().ok()?)?;
            let end = offset(range.end_container().ok()?, range.end_offset().ok()?)?;
            Some((start, end))
        }
    }
}

thread_local! {
    /// The `DataTransfer` of the drag under way: made at `dragstart`, dropped at `dragend`.
    static DRAG_DATA: RefCell<Option<DataTransfer>> = const { RefCell::new(None) };
}

pub fn dispatch_drag(node: &Element, kind: crate::input::DragKind, at: Point) -> bool {
    use crate::input::DragKind;
    let data = DRAG_DATA.with(|d| {
        let mut d = d.borrow_mut();
        if kind == DragKind::Start || d.is_none() {
            *d = DataTransfer::new().ok();
        }
        d.clone()
    });
    let init = web_sys::DragEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(!matches!(kind, DragKind::Leave | DragKind::End));
    init.set_composed(true);
    init.set_client_x(at.x.round() as i32);
    init.set_client_y(at.y.round() as i32);
    init.set_buttons(if kind == DragKind::End { 0 } else { 1 });
    if let Some(view) = window_of(node) {
        init.set_view(Some(&view));
    }
    init.set_data_transfer(data.as_ref());
    let taken = match web_sys::DragEvent::new_with_event_init_dict(kind.name(), &init) {
        Ok(e) => node.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    };
    if kind == DragKind::End {
        DRAG_DATA.with(|d| *d.borrow_mut() = None);
    }
    taken
}
