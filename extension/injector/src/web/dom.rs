//! [`Dom`] over the real page through web-sys. The input module's events and edits are performed by
//! [`super::input`]; values are set through the native prototype setters. `fetch` is the page's
//! own `fetch` (same origin, its cookies), aborted when dropped and read with a size cap.

use std::future::Future;
use std::rc::Rc;

use bridge::keys::Platform;
use bridge::upload::UploadFile;
use js_sys::{Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue, intern};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Document, Element, Event, EventInit, Headers, MutationObserver,
    MutationObserverInit, ReadableStream, ReadableStreamDefaultReader, RequestCache,
    RequestCredentials, RequestInit, RequestMode, Response,
};

use super::basics::reason;
use super::input::{self, Watch};
use crate::dom::{Dom, FetchFailure, HttpResponse, Leaving};
use crate::input::{Edit, Geometry, KeyEvent, MouseEvent, Point, TextEntry};

/// Input types whose value Enter commits with `change` (text-entry types).
const TEXT_INPUT_TYPES: &[&str] = &[
    "text", "search", "email", "url", "tel", "password", "number", "",
];

pub struct WebDom {
    document: Document,
    /// The call whose input goes through Chrome's debugger (trusted input), if this one does.
    trusted_call: Option<String>,
    /// The files the call carries.
    files: Rc<[UploadFile]>,
}

impl WebDom {
    pub fn new() -> Option<WebDom> {
        Some(WebDom {
            document: web_sys::window()?.document()?,
            trusted_call: None,
            files: Rc::new([]),
        })
    }

    /// The call carries these files (for its `upload` steps).
    pub fn with_files(self, files: Rc<[UploadFile]>) -> WebDom {
        WebDom { files, ..self }
    }

    /// Input of call `call` goes through Chrome's debugger (`None`: synthetic events).
    pub fn with_trusted_input(self, call: Option<String>) -> WebDom {
        WebDom {
            trusted_call: call,
            ..self
        }
    }
}

/// Calls the element's own method `name` (`click`, `focus`, ...). Through `Reflect` rather than
/// typed bindings: typed casts use `instanceof`, which fails for elements of an `<iframe>`.
fn call_method(node: &Element, name: &str, arg: &JsValue) {
    if let Ok(method) = Reflect::get(node, &name.into()).and_then(|m| m.dyn_into::<Function>()) {
        let _ = method.call1(node, arg);
    }
}

fn is_tag(node: &Element, tag: &str) -> bool {
    node.tag_name().eq_ignore_ascii_case(tag)
}

/// Calls the `value` setter of `constructor.prototype` on `node`: the browser's own setter,
/// whatever a framework defined on the element itself.
fn native_set_value(constructor: &str, node: &Element, value: &str) -> Result<(), JsValue> {
    let prototype = Reflect::get(&js_sys::global(), &constructor.into())
        .and_then(|c| Reflect::get(&c, &"prototype".into()))?;
    let descriptor = Reflect::get_own_property_descriptor(&prototype.into(), &"value".into())?;
    let setter: Function = Reflect::get(&descriptor, &"set".into())?.dyn_into()?;
    setter.call1(node, &value.into()).map(drop)
}

/// Calls `callback` on every change of `target`'s subtree (nodes, attributes, text).
pub(crate) fn observe_all(target: &web_sys::Node, callback: &Function) -> Option<MutationObserver> {
    let observer = MutationObserver::new(callback).ok()?;
    let options = MutationObserverInit::new();
    options.set_subtree(true);
    options.set_child_list(true);
    options.set_attributes(true);
    options.set_character_data(true);
    observer.observe_with_options(target, &options).ok()?;
    Some(observer)
}

fn network(error: JsValue) -> FetchFailure {
    FetchFailure::Network(reason(error))
}

/// Aborts its request when the `fetch` future is dropped before the body was read.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends a same-origin GET of `path` (which starts with one `/`) from this page: `mode:
/// same-origin` also refuses a redirect to another origin, `credentials: same-origin` sends the
/// page's cookies as its own requests do.
fn start_fetch(path: &str, accept: &str) -> Result<(Promise, AbortOnDrop), FetchFailure> {
    let window = web_sys::window().ok_or_else(|| FetchFailure::Network("no window".into()))?;
    let origin = window.location().origin().map_err(network)?;
    let controller = AbortController::new().map_err(network)?;
    let headers = Headers::new().map_err(network)?;
    headers.set("Accept", accept).map_err(network)?;
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_mode(RequestMode::SameOrigin);
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_cache(RequestCache::NoStore);
    init.set_headers(&headers);
    init.set_signal(Some(&controller.signal()));
    let promise = window.fetch_with_str_and_init(&format!("{origin}{path}"), &init);
    Ok((promise, AbortOnDrop(controller)))
}

/// The body, chunk by chunk, failing as soon as it grows past `max_bytes`.
async fn read_capped(stream: ReadableStream, max_bytes: usize) -> Result<Vec<u8>, FetchFailure> {
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let mut body = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(network)?;
        if Reflect::get(&chunk, &"done".into())
            .map_err(network)?
            .as_bool()
            .unwrap_or(true)
        {
            return Ok(body);
        }
        let bytes: js_sys::Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(network)?
            .unchecked_into();
        let start = body.len();
        let length = bytes.length() as usize;
        if start + length > max_bytes {
            return Err(FetchFailure::TooLarge);
        }
        body.resize(start + length, 0);
        bytes.copy_to(&mut body[start..]);
    }
}

impl Dom for WebDom {
    type Node = Element;
    type Watch = Watch;

    fn query(&self, scope: Option<&Element>, selector: &str) -> Result<Option<Element>, String> {
        match scope {
            Some(scope) => scope.query_selector(selector),
            None => self.document.query_selector(selector),
        }
        .map_err(reason)
    }

    fn query_all(&self, scope: Option<&Element>, selector: &str) -> Result<Vec<Element>, String> {
        let list = match scope {
            Some(scope) => scope.query_selector_all(selector),
            None => self.document.query_selector_all(selector),
        }
        .map_err(reason)?;
        Ok((0..list.length())
            .filter_map(|i| Some(list.item(i)?.unchecked_into::<Element>()))
            .collect())
    }

    fn root(&self) -> Element {
        self.document
            .document_element()
            .expect("a page has a document element")
    }

    fn same(&self, a: &Element, b: &Element) -> bool {
        a == b
    }

    fn text(&self, node: &Element) -> String {
        node.text_content().unwrap_or_default()
    }

    fn rendered_text(&self, node: &Element) -> String {
        // By property, not `instanceof HTMLElement`: an editor in a same-origin frame is of
        // another realm.
        js_sys::Reflect::get(node, &"innerText".into())
            .ok()
            .and_then(|text| text.as_string())
            .unwrap_or_else(|| self.text(node))
    }

    fn own_text(&self, node: &Element) -> String {
        let children = node.child_nodes();
        (0..children.length())
            .filter_map(|i| children.item(i))
            .filter(|child| child.node_type() == web_sys::Node::TEXT_NODE)
            .filter_map(|child| child.text_content())
            .collect()
    }

    fn value(&self, node: &Element) -> Option<String> {
        Reflect::get(node, &intern("value").into())
            .ok()?
            .as_string()
    }

    fn attr(&self, node: &Element, name: &str) -> Option<String> {
        // Interned: a snapshot asks each element for the same few names (our code's, or an
        // adapter's), and decoding each anew into a JS string cost ~0.6 ms an act on TodoMVC
        // (issue 32's profile, BENCHMARKS.md).
        node.get_attribute(intern(name))
    }

    fn prop(&self, node: &Element, name: &str) -> Value {
        let value = Reflect::get(node, &intern(name).into()).unwrap_or(JsValue::NULL);
        if let Some(b) = value.as_bool() {
            Value::Bool(b)
        } else if let Some(n) = value.as_f64() {
            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
        } else if let Some(s) = value.as_string() {
            Value::String(s)
        } else {
            Value::Null
        }
    }

    fn has_class(&self, node: &Element, name: &str) -> bool {
        node.class_list().contains(name)
    }

    fn is_visible(&self, node: &Element) -> bool {
        node.is_connected()
            && node.get_client_rects().length() > 0
            && web_sys::window()
                .and_then(|w| w.get_computed_style(node).ok().flatten())
                .is_none_or(|style| {
                    style.get_property_value("visibility").ok().as_deref() != Some("hidden")
                })
    }

    fn is_text_input(&self, node: &Element) -> bool {
        is_tag(node, "input")
            && TEXT_INPUT_TYPES.contains(
                &node
                    .get_attribute("type")
                    .unwrap_or_default()
                    .to_ascii_lowercase()
                    .as_str(),
            )
    }

    fn active_element(&self) -> Option<Element> {
        self.document.active_element()
    }

    fn scroll_into_view(&self, node: &Element) {
        let options = js_sys::Object::new();
        for (name, value) in [
            ("block", "center"),
            ("inline", "center"),
            ("behavior", "instant"),
        ] {
            let _ = Reflect::set(&options, &name.into(), &value.into());
        }
        call_method(node, "scrollIntoView", &options);
    }

    fn focus(&self, node: &Element) {
        call_method(node, "focus", &JsValue::UNDEFINED);
    }

    fn blur(&self, node: &Element) {
        let focused = node
            .owner_document()
            .and_then(|d| d.active_element())
            .is_some_and(|active| &active == node);
        if focused {
            call_method(node, "blur", &JsValue::UNDEFINED);
            return;
        }
        // Never focused (a page without the window's focus): the events a blur would fire.
        for (kind, bubbles) in [("blur", false), ("focusout", true)] {
            let init = EventInit::new();
            init.set_bubbles(bubbles);
            if let Ok(event) = Event::new_with_event_init_dict(kind, &init) {
                let _ = node.dispatch_event(&event);
            }
        }
    }

    fn options(&self, node: &Element) -> Option<Vec<(String, String)>> {
        if !is_tag(node, "select") {
            return None;
        }
        let list = node.query_selector_all("option").ok()?;
        Some(
            (0..list.length())
                .filter_map(|i| Some(list.item(i)?.unchecked_into::<Element>()))
                .map(|option| {
                    let value = Reflect::get(&option, &"value".into())
                        .ok()
                        .and_then(|v| v.as_string())
                        .unwrap_or_default();
                    let text = option.text_content().unwrap_or_default();
                    (value, text.trim().to_owned())
                })
                .collect(),
        )
    }

    fn set_selected_index(&self, node: &Element, index: usize) {
        let _ = Reflect::set(node, &"selectedIndex".into(), &(index as f64).into());
    }

    fn frame_root(&self, node: &Element) -> Option<Element> {
        let document = Reflect::get(node, &"contentDocument".into()).ok()?;
        // An <iframe>'s document is of the frame's realm: `instanceof Document` would say no.
        document
            .is_object()
            .then(|| document.unchecked_into::<Document>().document_element())?
    }

    fn dispatch_select_input(&self, node: &Element) {
        let init = EventInit::new();
        init.set_bubbles(true);
        init.set_composed(true);
        if let Ok(event) = Event::new_with_event_init_dict("input", &init) {
            let _ = node.dispatch_event(&event);
        }
    }

    fn submit_implicitly(&self, node: &Element) {
        // Through `Reflect` rather than typed bindings: typed casts use `instanceof`, which fails
        // for elements of an `<iframe>`.
        let Some(form) = Reflect::get(node, &"form".into())
            .ok()
            .filter(JsValue::is_object)
            .map(JsCast::unchecked_into::<Element>)
        else {
            return;
        };
        let controls = Reflect::get(&form, &"elements".into()).unwrap_or(JsValue::UNDEFINED);
        let count = Reflect::get(&controls, &"length".into())
            .ok()
            .and_then(|n| n.as_f64())
            .unwrap_or(0.0) as u32;
        let controls: Vec<Element> = (0..count)
            .filter_map(|i| Reflect::get_u32(&controls, i).ok())
            .filter(JsValue::is_object)
            .map(JsCast::unchecked_into::<Element>)
            .collect();
        let is_submit_button = |control: &Element| {
            let kind = control
                .get_attribute("type")
                .unwrap_or_default()
                .to_ascii_lowercase();
            (is_tag(control, "button") && (kind.is_empty() || kind == "submit"))
                || (is_tag(control, "input") && (kind == "submit" || kind == "image"))
        };
        match controls.iter().find(|control| is_submit_button(control)) {
            // The form's default button: the browser clicks it (not when it is disabled).
            Some(button) => {
                if !button.has_attribute("disabled") {
                    call_method(button, "click", &JsValue::UNDEFINED);
                }
            }
            // Without a submit button, only a form whose single text field this is submits.
            None => {
                if controls.iter().filter(|c| self.is_text_input(c)).count() == 1 {
                    call_method(&form, "requestSubmit", &JsValue::UNDEFINED);
                }
            }
        }
    }

    fn dispatch_change(&self, node: &Element) {
        let init = EventInit::new();
        init.set_bubbles(true);
        if let Ok(event) = Event::new_with_event_init_dict("change", &init) {
            let _ = node.dispatch_event(&event);
        }
    }

    fn parent(&self, node: &Element) -> Option<Element> {
        node.parent_element()
    }

    fn contains(&self, ancestor: &Element, node: &Element) -> bool {
        ancestor.contains(Some(node))
    }

    fn tag_name(&self, node: &Element) -> String {
        node.tag_name().to_ascii_lowercase()
    }

    fn is_connected(&self, node: &Element) -> bool {
        node.is_connected()
    }

    fn is_disabled(&self, node: &Element) -> bool {
        input::is_disabled(node)
    }

    fn geometry(&self, node: &Element) -> Geometry {
        input::geometry(node)
    }

    fn element_at(&self, node: &Element, point: Point) -> Option<Element> {
        input::element_at(node, point)
    }

    fn label_control(&self, label: &Element) -> Option<Element> {
        input::label_control(label)
    }

    fn has_focus(&self, node: &Element) -> bool {
        input::has_focus(node)
    }

    fn pointer_at(&self) -> Option<Element> {
        input::pointer_at()
    }

    fn set_pointer_at(&self, node: Option<Element>) {
        input::set_pointer_at(node);
    }

    fn platform(&self) -> Platform {
        input::platform()
    }

    fn dispatch_mouse(&self, node: &Element, event: &MouseEvent) -> bool {
        input::dispatch_mouse(node, event)
    }

    fn dispatch_key(&self, node: &Element, event: &KeyEvent) -> bool {
        input::dispatch_key(node, event)
    }

    fn text_entry(&self, node: &Element) -> Option<(TextEntry, Element)> {
        input::text_entry(node)
    }

    fn is_read_only(&self, node: &Element) -> bool {
        input::is_read_only(node)
    }

    fn before_input(&self, node: &Element, edit: &Edit) -> bool {
        input::before_input(node, edit)
    }

    fn text_input(&self, node: &Element, text: &str) -> bool {
        input::text_input(node, text)
    }

    fn input_event(&self, node: &Element, edit: &Edit) {
        input::after_input(node, edit);
    }

    fn set_value(&self, node: &Element, value: &str) {
        let constructor = if is_tag(node, "textarea") {
            "HTMLTextAreaElement"
        } else {
            "HTMLInputElement"
        };
        let _ = native_set_value(constructor, node, value);
    }

    fn select_all_contents(&self, host: &Element) {
        input::select_all_contents(host);
    }

    fn exec_edit(&self, node: &Element, edit: &Edit) -> bool {
        input::exec_edit(node, edit)
    }

    fn select_range(&self, field: &Element, entry: TextEntry, start: usize, end: usize) {
        input::select_range(field, entry, start, end);
    }

    fn selection_range(&self, field: &Element, entry: TextEntry) -> Option<(usize, usize)> {
        input::selection_range(field, entry)
    }

    fn dispatch_drag(&self, node: &Element, kind: crate::input::DragKind, at: Point) -> bool {
        input::dispatch_drag(node, kind, at)
    }

    fn paste(&self, node: &Element, text: &str) -> bool {
        input::paste(node, text)
    }

    fn watch(&self, node: &Element) -> Watch {
        input::watch(node)
    }

    fn saw_change(&self, watch: &Watch) -> bool {
        input::saw_change(watch)
    }

    fn microtask(&self) -> impl Future<Output = ()> {
        let resolved = Promise::resolve(&JsValue::UNDEFINED);
        async move {
            let _ = JsFuture::from(resolved).await;
        }
    }

    fn trusted_input(&self) -> bool {
        self.trusted_call.is_some()
    }

    fn top_point(&self, node: &Element, at: Point) -> Point {
        input::top_point(node, at)
    }

    fn perform_trusted(
        &self,
        commands: Vec<bridge::trusted_input::Command>,
    ) -> impl Future<Output = Result<(), bridge::WireError>> {
        let call = self.trusted_call.clone().unwrap_or_default();
        super::basics::trusted_input(call, commands)
    }

    fn fetch(
        &self,
        path: &str,
        accept: &str,
        max_bytes: usize,
    ) -> impl Future<Output = Result<HttpResponse, FetchFailure>> {
        let started = start_fetch(path, accept);
        async move {
            let (promise, _abort_if_dropped) = started?;
            let response: Response = JsFuture::from(promise)
                .await
                .map_err(network)?
                .unchecked_into();
            let headers = response.headers();
            let header = |name: &str| headers.get(name).ok().flatten().unwrap_or_default();
            if header("content-length")
                .trim()
                .parse::<usize>()
                .is_ok_and(|length| length > max_bytes)
            {
                return Err(FetchFailure::TooLarge);
            }
            let body = match response.body() {
                Some(stream) => read_capped(stream, max_bytes).await?,
                None => Vec::new(),
            };
            Ok(HttpResponse {
                status: response.status(),
                status_text: response.status_text(),
                content_type: header("content-type"),
                body,
            })
        }
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn call_files(&self) -> Rc<[UploadFile]> {
        self.files.clone()
    }

    fn set_input_files(&self, node: &Element, files: &[&UploadFile]) -> Result<usize, String> {
        super::files::set_input_files(node, files)
    }

    fn drop_files(&self, node: &Element, files: &[&UploadFile]) -> Result<bool, String> {
        super::files::drop_files(node, files)
    }

    fn answer_next_dialog(&self, answer: &bridge::dialog::DialogAnswer) {
        super::dialogs::plan(answer);
    }

    fn watch_leaving(&self) {
        super::leaving::watch();
    }

    fn leaving(&self) -> Leaving {
        super::leaving::leaving()
    }

    fn leaving_changed(&self, max_ms: f64) -> impl Future<Output = ()> {
        let changed = super::leaving::changed(max_ms);
        async move {
            let _ = JsFuture::from(changed).await;
        }
    }

    fn url(&self) -> String {
        web_sys::window()
            .and_then(|w| w.location().href().ok())
            .unwrap_or_default()
    }

    fn checkpoint(&self) -> impl Future<Output = ()> {
        // A zero-delay timer runs after the microtasks and the zero-delay timers the page's handlers
        // queued during the action (Vue 0.x unlocks its input binding in a `setTimeout(0)`), as the
        // page would have run them before a person's next input.
        let turn = super::leaving::turn_or_departure();
        async move {
            let _ = JsFuture::from(turn).await;
        }
    }

    fn settle(&self, max_ms: f64) -> impl Future<Output = ()> {
        let mut observer = None;
        let target = self.document.clone();
        let changed = Promise::new(&mut |resolve: Function, _reject| {
            observer = observe_all(&target, &resolve);
            super::basics::set_timeout(&resolve, max_ms);
        });
        async move {
            let _ = JsFuture::from(changed).await;
            if let Some(observer) = observer {
                observer.disconnect();
            }
        }
    }
}
